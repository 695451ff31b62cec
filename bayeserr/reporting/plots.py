"""Figures of a report.

Every function takes a :class:`~bayeserr.report.Report` and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so no global backend
is switched (figures show in Jupyter; a user's own ``plt`` keeps working).
:func:`save` writes a figure (svg, png, pdf); :func:`svg` returns it as
inline SVG text for the HTML report.  Model names are drawn as plain text
(never parsed as math).  Method names, colours and order come from the
interval-method registry (:mod:`bayeserr.methods`).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..methods import INTERVALS, report_methods
from ..registry import Registry

MAX_PAIRS = 40


def _figure(width: float, height: float):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, min(height, 60)))


def _names(ax, axis: str, labels, **kw):
    """Tick labels as plain text (a name like ``$x$`` is not math)."""
    set_labels = ax.set_yticks if axis == "y" else ax.set_xticks
    from .markdown import plain
    set_labels(range(len(labels)), [plain(s) for s in labels], parse_math=False, **kw)


def forest(rep):
    """Per-model intervals by method, side by side."""
    models = list(rep.scores)
    methods = [m.key for m in report_methods() if any(s.intervals.get(m.key) is not None for s in models)]
    fig = _figure(7.5, 0.55 * len(models) * max(1, len(methods) / 3) + 1.4)
    ax = fig.subplots()
    step = 0.8 / max(len(methods), 1)
    for i, s in enumerate(models):
        for j, key in enumerate(methods):
            ci = s.intervals.get(key)
            if ci is None:
                continue
            y = i + (j - (len(methods) - 1) / 2) * step
            method = INTERVALS[key]
            ax.plot(100 * np.asarray(ci), [y, y], color=method.color, lw=2.2,
                    label=method.label if i == 0 else None)
            ax.plot(100 * s.mean, y, "o", color=method.color, ms=3)
    _names(ax, "y", [s.model for s in models])
    ax.invert_yaxis()
    ax.set_xlabel(f"score (%) with {rep.level:.0%} intervals")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title("Per-model intervals by method")
    fig.tight_layout()
    return fig


def _shown_pairs(rep):
    pairs = list(rep.comparisons)
    if len(pairs) <= MAX_PAIRS:
        return pairs, ""
    order = {s.model: i for i, s in enumerate(rep.scores)}
    neighbours = [c for c in pairs if abs(order[c.a] - order[c.b]) == 1]
    return neighbours[:MAX_PAIRS], " (neighbours in the ranking)"


def pairs(rep):
    """Pairwise differences with their intervals and the tie zone shaded."""
    shown, note = _shown_pairs(rep)
    fig = _figure(7.5, 0.38 * len(shown) + 1.6)
    ax = fig.subplots()
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
    _names(ax, "y", [f"{c.a} − {c.b}" for c in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"difference (points), {rep.level:.0%} interval from the "
                  f"{'clustered ' if any(c.se_clustered_paired is not None for c in shown) else ''}paired SE")
    ax.set_title("Pairwise differences" + note, fontsize=10)
    fig.tight_layout()
    return fig


def heatmap(rep):
    """P(A > B) for every ordered pair (row model better than column model)."""
    names = [s.model for s in rep.scores]
    idx = {m: i for i, m in enumerate(names)}
    mat = np.full((len(names), len(names)), np.nan)
    for c in rep.comparisons:
        if c.prob_a_better is not None:
            mat[idx[c.a], idx[c.b]] = c.prob_a_better
            mat[idx[c.b], idx[c.a]] = 1 - c.prob_a_better
    size = min(0.45 * len(names) + 2.5, 16)
    fig = _figure(size + 1, size)
    ax = fig.subplots()
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="RdBu_r")
    font = 8 if len(names) < 30 else 5
    _names(ax, "x", names, rotation=60, ha="right", fontsize=font)
    _names(ax, "y", names, fontsize=font)
    if len(names) <= 15:
        for i in range(len(names)):
            for j in range(len(names)):
                if np.isfinite(mat[i, j]):
                    ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(mat[i, j] - 0.5) > 0.35 else "black")
    fig.colorbar(im, ax=ax, label="P(row > column)", shrink=0.8)
    ax.set_title("Posterior probability that one model is better")
    fig.tight_layout()
    return fig


def _posterior_draws(fit, draws: int, seed: int):
    kind = "hierarchical" if "hierarchical" in fit else ("beta" if "beta" in fit else None)
    if kind is None:
        return None
    post = fit[kind]
    idata = post.to_inference_data(draws=draws, seed=seed) if hasattr(post, "to_inference_data") else post
    return 100 * np.asarray(idata.posterior["mu" if kind == "hierarchical" else "p"].values).ravel()


def posterior(rep, draws: int = 4000, seed: int = 0):
    """Posterior density of each model's accuracy as a ridgeline, one labelled
    row per model, with the equal-tailed interval marked."""
    from scipy.stats import gaussian_kde
    fits = rep.posteriors or {}
    series = [(s.model, d) for s in rep.scores
              if (d := _posterior_draws(fits.get(s.model, {}), draws, seed)) is not None]
    if not series:
        fig = _figure(6, 2)
        ax = fig.subplots()
        ax.text(0.5, 0.5, "no posterior (--bayes off?)", ha="center", va="center")
        ax.axis("off")
        return fig
    fig = _figure(7.5, 0.45 * len(series) + 1.5)
    ax = fig.subplots()
    lo = min(np.quantile(d, 0.001) for _, d in series)
    hi = max(np.quantile(d, 0.999) for _, d in series)
    grid = np.linspace(lo, hi, 300)
    q = [(1 - rep.level) / 2, (1 + rep.level) / 2]
    for i, (_, d) in enumerate(series):
        dens = gaussian_kde(d)(grid) if np.ptp(d) > 0 else np.zeros_like(grid)
        dens = 0.8 * dens / dens.max() if dens.max() > 0 else dens
        ax.fill_between(grid, i, i - dens, color="#9467bd", alpha=0.35, lw=0)
        ax.plot(grid, i - dens, color="#5b3f8c", lw=0.8)
        a, b = np.quantile(d, q)
        ax.plot([a, b], [i + 0.05, i + 0.05], color="black", lw=1.6)
    _names(ax, "y", [m for m, _ in series], fontsize=8)
    ax.set_ylim(len(series) - 0.4, -1)
    ax.set_xlabel(f"accuracy (%); bar: {rep.level:.0%} equal-tailed interval")
    ax.set_title("Posterior of each model's accuracy")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


FIGURES = Registry("figure kind", "--kind", {"forest": forest, "pairs": pairs, "heatmap": heatmap,
                                              "posterior": posterior})
KINDS = tuple(FIGURES)
SUFFIXES = (".svg", ".png", ".pdf")


def figure(rep, kind: str):
    return FIGURES.get_checked(kind)(rep)


def save(fig, path) -> Path:
    """Write a figure (atomically; the suffix picks the format)."""
    from ..errors import InputError
    from ..output import write_atomic
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise InputError(f"{path}: write figures as .svg, .png or .pdf.")
    import matplotlib
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "bayeserr"}):
        fig.savefig(buf, format=path.suffix[1:].lower(), dpi=150, bbox_inches="tight",
                    metadata=_metadata(path.suffix.lower()))
    write_atomic(path, buf.getvalue())
    return path


def _metadata(suffix: str) -> dict:
    """No creation date in the file, so the same report gives the same bytes."""
    if suffix == ".svg":
        return {"Date": None}
    if suffix == ".pdf":
        return {"CreationDate": None}
    return {}


def svg(fig) -> str:
    """The figure as inline SVG markup (no XML prolog), for self-contained HTML."""
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "bayeserr"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]
