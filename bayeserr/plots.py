"""Figures of a report (matplotlib; ArviZ for posterior densities).

Every function takes a :class:`~bayeserr.reporting.Report` and returns a
matplotlib Figure; :func:`save` writes it (svg, png, pdf) and :func:`svg`
returns it as inline SVG text for the HTML report.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from .exact import LABELS

FOREST_METHODS = ("clt", "clustered", "wilson", "clopper_pearson", "wilson_clustered",
                  "beta_posterior", "hierarchical_posterior")
COLORS = {"clt": "#1f77b4", "clustered": "#ff7f0e", "wilson": "#2ca02c", "clopper_pearson": "#98df8a",
          "wilson_clustered": "#17becf", "beta_posterior": "#d62728", "hierarchical_posterior": "#9467bd"}
MAX_PAIRS = 40
KINDS = ("forest", "pairs", "heatmap", "posterior")


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def forest(rep):
    """Per-model intervals by method, side by side (CLT, clustered, exact, posterior)."""
    plt = _plt()
    models = list(rep.scores)
    methods = [m for m in FOREST_METHODS if any(s.intervals.get(m) is not None for s in models)]
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(models) * max(1, len(methods) / 3) + 1.4))
    step = 0.8 / max(len(methods), 1)
    for i, s in enumerate(models):
        for j, method in enumerate(methods):
            ci = s.intervals.get(method)
            if ci is None:
                continue
            y = i + (j - (len(methods) - 1) / 2) * step
            ax.plot(100 * np.asarray(ci), [y, y], color=COLORS[method], lw=2.2,
                    label=LABELS[method] if i == 0 else None)
            ax.plot(100 * s.mean, y, "o", color=COLORS[method], ms=3)
    ax.set_yticks(range(len(models)), [s.model for s in models])
    ax.invert_yaxis()
    ax.set_xlabel(f"score (%) with {rep.level:.0%} intervals")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best", frameon=False)
    ax.set_title("Per-model intervals by method")
    fig.tight_layout()
    return fig


def _shown_pairs(rep):
    pairs = list(rep.comparisons)
    if len(pairs) <= MAX_PAIRS:
        return pairs, ""
    order = [s.model for s in rep.scores]
    neighbours = [c for c in pairs if abs(order.index(c.a) - order.index(c.b)) == 1]
    return neighbours[:MAX_PAIRS], " (neighbours in the ranking)"


def pairs(rep):
    """Pairwise differences with their intervals and the tie zone shaded."""
    plt = _plt()
    shown, note = _shown_pairs(rep)
    fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(shown) + 1.6))
    tz = rep.tie_zone.get("unpaired")
    if tz:
        ax.axvspan(-100 * tz, 100 * tz, color="0.9")
        note += f"; grey: unpaired tie zone ±{100 * tz:.1f}"
    ax.axvline(0, color="0.5", lw=1)
    for i, c in enumerate(shown):
        significant = c.ci[0] > 0 or c.ci[1] < 0
        color = "#1f77b4" if significant else "0.45"
        ax.plot(100 * np.asarray(c.ci), [i, i], color=color, lw=2.2)
        ax.plot(100 * c.diff, i, "o", color=color, ms=4)
    ax.set_yticks(range(len(shown)), [f"{c.a} − {c.b}" for c in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"difference (points), {rep.level:.0%} interval from the "
                  f"{'clustered ' if any(c.se_clustered_paired is not None for c in shown) else ''}paired SE")
    ax.set_title("Pairwise differences" + note, fontsize=10)
    fig.tight_layout()
    return fig


def heatmap(rep):
    """P(A > B) for every ordered pair (row model better than column model)."""
    plt = _plt()
    names = [s.model for s in rep.scores]
    idx = {m: i for i, m in enumerate(names)}
    mat = np.full((len(names), len(names)), np.nan)
    for c in rep.comparisons:
        if c.prob_a_better is not None:
            mat[idx[c.a], idx[c.b]] = c.prob_a_better
            mat[idx[c.b], idx[c.a]] = 1 - c.prob_a_better
    size = min(0.45 * len(names) + 2.5, 16)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="RdBu_r")
    ticks = range(len(names))
    ax.set_xticks(ticks, names, rotation=60, ha="right", fontsize=8 if len(names) < 30 else 5)
    ax.set_yticks(ticks, names, fontsize=8 if len(names) < 30 else 5)
    if len(names) <= 15:
        for i in ticks:
            for j in ticks:
                if np.isfinite(mat[i, j]):
                    ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(mat[i, j] - 0.5) > 0.35 else "black")
    fig.colorbar(im, ax=ax, label="P(row > column)", shrink=0.8)
    ax.set_title("Posterior probability that one model is better")
    fig.tight_layout()
    return fig


def posterior(rep, draws: int = 4000, seed: int = 0):
    """Posterior densities of each model's accuracy (ArviZ ``plot_density``)."""
    plt = _plt()
    from bayeserr.models.diagnostics import import_arviz
    az = import_arviz()
    fits = rep.posteriors or {}
    datasets, labels, var = [], [], None
    for s in rep.scores:
        fit = fits.get(s.model, {})
        kind = "hierarchical" if "hierarchical" in fit else ("beta" if "beta" in fit else None)
        if kind is None:
            continue
        post = fit[kind]
        idata = post.to_inference_data(draws=draws, seed=seed) if hasattr(post, "to_inference_data") else post
        name = "mu" if kind == "hierarchical" else "p"
        datasets.append(az.from_dict(posterior={"accuracy": 100 * idata.posterior[name].values}))
        labels.append(s.model)
        var = "accuracy"
    if not datasets:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.text(0.5, 0.5, "no posterior (--bayes off?)", ha="center", va="center")
        ax.axis("off")
        return fig
    axes = az.plot_density(datasets, data_labels=labels, var_names=[var], shade=0.1,
                           hdi_prob=rep.level, figsize=(7.5, 4))
    fig = np.asarray(axes).ravel()[0].figure
    ax = np.asarray(axes).ravel()[0]
    ax.set_title(f"Posterior of each model's accuracy (%), {rep.level:.0%} HDI")
    return fig


FIGURES = {"forest": forest, "pairs": pairs, "heatmap": heatmap, "posterior": posterior}


def figure(rep, kind: str):
    from .errors import InputError, suggest
    if kind not in FIGURES:
        raise InputError(f"unknown figure '{kind}'.{suggest(kind, FIGURES)} Kinds: {', '.join(FIGURES)}.")
    return FIGURES[kind](rep)


def save(fig, path) -> Path:
    from .errors import InputError
    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise InputError(f"{path}: write figures as .svg, .png or .pdf.")
    fig.savefig(path, dpi=150, bbox_inches="tight")
    _plt().close(fig)
    return path


def svg(fig) -> str:
    """The figure as inline SVG markup (no XML prolog), for self-contained HTML."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    _plt().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
