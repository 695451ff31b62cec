"""Figures of a report.

Every function takes a :class:`~bayeserr.reporting.build.Report` and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so no global backend
is switched (figures show in Jupyter; a user's own ``plt`` keeps working).
:func:`save` writes a figure (svg, png, pdf); :func:`svg` returns it as
inline SVG text for the HTML report.  Model names are drawn as plain text
(never parsed as math).  Method names, colours and order come from the
interval-method registry (:mod:`bayeserr.registries.methods`).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from bayeserr.base.registry import Registry
from bayeserr.registries.methods import INTERVALS, report_methods

MAX_PAIRS = 40
#: no figure is taller than this (inches): at 100 models rows get closer and
#: their labels smaller instead of the figure growing into a strip
MAX_HEIGHT = 14.0
#: the forest draws a few headline methods per model while models × methods
#: stays below this; beyond it, one interval per model (the recommended one)
FOREST_MAX_LINES = 64


def _figure(width: float, height: float):
    from matplotlib.figure import Figure
    _jupyter_display(Figure)
    return Figure(figsize=(width, min(height, MAX_HEIGHT)), layout="constrained")


def _jupyter_display(figure_type) -> None:
    """In a Jupyter kernel, let a returned Figure display as PNG.

    Jupyter learns to draw matplotlib figures only when its inline backend
    is loaded (``%matplotlib inline`` or importing pyplot); a figure built
    without pyplot would show as ``<Figure size …>`` text.  Registering a
    display formatter for the Figure type is all that is needed; the
    backend is left alone, and a format the user already set is kept.
    """
    import sys
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return
    ip = sys.modules["IPython"].get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return
    for formatter in ip.display_formatter.formatters.values():
        try:
            formatter.lookup_by_type(figure_type)
            return  # the user's (or the inline backend's) choice stands
        except KeyError:
            continue
    from IPython.core.pylabtools import select_figure_formats
    select_figure_formats(ip, {"png"})


def _label_size(rows: int, height: float, largest: float = 9.0) -> float:
    """A tick-label font size (pt) that lets ``rows`` labels share ``height`` inches."""
    per_row = 72 * max(height - 1.6, 1.0) / max(rows, 1)
    return float(np.clip(0.75 * per_row, 4.0, largest))


def _names(ax, axis: str, labels, **kw):
    """Tick labels as plain text (a name like ``$x$`` is not math)."""
    set_labels = ax.set_yticks if axis == "y" else ax.set_xticks
    from bayeserr.reporting.text import plain
    set_labels(range(len(labels)), [plain(s) for s in labels], parse_math=False, **kw)


def forest_methods(models) -> list:
    """The methods the forest draws: per family (clustered, normal, exact,
    Bayesian) the first in registry order that applies to some model, a
    cluster-aware one first when the data are clustered; at most four."""
    clustered = any(s.n_clusters is not None for s in models)
    picks = []
    for family in ("clustered", "normal", "exact", "bayes"):
        cands = [m for m in report_methods() if m.family == family
                 and any(s.intervals.get(m.key) is not None for s in models)]
        if clustered:
            cands.sort(key=lambda m: not m.cluster_aware)
        if cands:
            picks.append(cands[0].key)
    return picks


def _headline(s, picks) -> str | None:
    """One interval per model: the recommended one (as in the report's table)."""
    from bayeserr.registries import methods
    rec = getattr(methods, "recommended", None)
    if rec is not None:
        try:
            return rec(s)
        except StopIteration:
            pass
    return next((k for k in picks if s.intervals.get(k) is not None), None)


def forest(rep):
    """Per-model intervals: a few headline methods per model (clustered,
    CLT, exact, Bayesian) for up to a dozen or so models; with more, one
    interval per model, the recommended one, coloured by its method.  The
    height is bounded (:data:`MAX_HEIGHT`) and the legend sits above the
    plot, never on the data."""
    models = list(rep.scores)
    picks = forest_methods(models)
    per_model = len(picks) if len(models) * len(picks) <= FOREST_MAX_LINES else 1
    lines = [[k for k in picks if s.intervals.get(k) is not None] if per_model > 1
             else [k for k in [_headline(s, picks)] if k is not None] for s in models]
    height = 0.2 * per_model * len(models) + 0.12 * len(models) + 2.0
    fig = _figure(7.5, height)
    ax = fig.subplots()
    step = 0.8 / max(per_model, 1)
    used = []
    for i, (s, keys) in enumerate(zip(models, lines)):
        for j, key in enumerate(keys):
            ci = s.intervals.get(key)
            y = i + (j - (len(keys) - 1) / 2) * step if per_model > 1 else i
            method = INTERVALS[key]
            new = key not in used
            if new:
                used.append(key)
            ax.plot(100 * np.asarray(ci), [y, y], color=method.color,
                    lw=2.2 if per_model > 1 or len(models) <= 40 else 1.6,
                    label=method.label if new else None, solid_capstyle="butt")
            ax.plot(100 * s.mean, y, "o", color=method.color, ms=3 if len(models) <= 40 else 2)
    _names(ax, "y", [s.model for s in models], fontsize=_label_size(len(models), fig.get_figheight()))
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_xlabel(f"score (%) with {rep.level:.0%} intervals")
    ax.grid(axis="x", alpha=0.3)
    if per_model > 1:
        ax.grid(axis="y", alpha=0.15)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: list(INTERVALS).index(used[i]))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8,
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 4) or 1,
              frameon=False)
    fig.suptitle("Per-model intervals by method" if per_model > 1 else
                 "Per-model intervals (the recommended method for each model)", fontsize=11)
    return fig


def _shown_pairs(rep):
    pairs = list(rep.comparisons)
    if len(pairs) <= MAX_PAIRS:
        return pairs, ""
    order = {s.model: i for i, s in enumerate(rep.scores)}
    neighbours = [c for c in pairs if abs(order[c.a] - order[c.b]) == 1]
    shown = neighbours[:MAX_PAIRS]
    top = "" if len(shown) == len(neighbours) else f"the top {len(shown)} of "
    return shown, f" ({top}{len(neighbours)} neighbours in the ranking, of {len(pairs):,} pairs)"


#: colours of the report's decision: declared different / not
DIFFERENT, NOT_DIFFERENT = "#1f77b4", "0.55"


def pairs(rep):
    """Pairwise differences with their intervals adjusted over the family (as
    the p-values are; the pair's own where there is none), coloured by the
    report's decision."""
    shown, note = _shown_pairs(rep)
    fig = _figure(7.5, 0.3 * len(shown) + 1.8)
    ax = fig.subplots()
    ax.axvline(0, color="0.5", lw=1)
    adjusted = all(c.ci_adjusted is not None for c in shown)
    for i, c in enumerate(shown):
        color = DIFFERENT if c.different else NOT_DIFFERENT
        ci = c.ci_adjusted if adjusted else c.ci
        ax.plot(100 * np.asarray(ci), [i, i], color=color, lw=2.2)
        ax.plot(100 * c.diff, i, "o", color=color, ms=4)
    _names(ax, "y", [f"{c.a} − {c.b}" for c in shown],
           fontsize=_label_size(len(shown), fig.get_figheight(), 8))
    ax.set_ylim(len(shown) - 0.5, -0.5)
    kind = {"romano-wolf": "simultaneous", "holm": "simultaneous (Bonferroni)", "bh": "FCR-adjusted",
            "none": "unadjusted"}[rep.adjust]
    ax.set_xlabel(f"difference (points), {rep.level:.0%} {kind} interval" if adjusted else
                  f"difference (points), {rep.level:.0%} interval")
    adj = {"romano-wolf": "Romano–Wolf", "holm": "Holm", "bh": "BH", "none": "unadjusted"}[rep.adjust]
    ax.set_title(f"Pairwise differences{note}; blue: declared different ({adj})", fontsize=10, wrap=True)
    return fig


def ranks(rep):
    """Rank intervals, models sorted by score: the interval for all models at
    once (light), for each model alone (dark), the rank of the estimate (dot);
    models tied with the best in blue."""
    r = rep.ranking
    m = len(r)
    fig = _figure(7.5, 0.22 * m + 1.9)
    ax = fig.subplots()
    for i, row in enumerate(r):
        color = DIFFERENT if row.tied_with_best else NOT_DIFFERENT
        lo, hi = row.rank_simultaneous
        ax.plot([lo - 0.3, hi + 0.3], [i, i], color=color, lw=6 if m <= 40 else 3, alpha=0.3,
                solid_capstyle="butt", label="all models at once" if i == 0 else None)
        lo, hi = row.rank_marginal
        ax.plot([lo - 0.3, hi + 0.3], [i, i], color=color, lw=2.2 if m <= 40 else 1.4,
                solid_capstyle="butt", label="this model alone" if i == 0 else None)
        ax.plot(row.rank, i, "o", color="black", ms=3 if m <= 40 else 2,
                label="rank of the score" if i == 0 else None)
    _names(ax, "y", [f"{row.model} ({100 * row.mean:.1f})" for row in r],
           fontsize=_label_size(m, fig.get_figheight()))
    ax.set_ylim(m - 0.5, -0.5)
    ax.set_xlim(0.3, m + 0.7)
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlabel(f"rank (1 = best), {r.level:.0%} rank intervals; blue: tied with the best")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    fig.suptitle("Rank intervals", fontsize=11)
    return fig


def heatmap(rep):
    """P(A > B) for every ordered pair (row model better than column model).
    The side grows with the number of models up to :data:`MAX_HEIGHT`; tick
    labels shrink with the cells (at 100 models, about 6 pt)."""
    names = [s.model for s in rep.scores]
    n = len(names)
    idx = {m: i for i, m in enumerate(names)}
    mat = np.full((n, n), np.nan)
    for c in rep.comparisons:
        if c.prob_a_better is not None:
            mat[idx[c.a], idx[c.b]] = c.prob_a_better
            mat[idx[c.b], idx[c.a]] = 1 - c.prob_a_better
    side = float(np.clip(0.3 * n + 3, 5, MAX_HEIGHT))
    fig = _figure(side + 1, side)
    ax = fig.subplots()
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="RdBu_r")
    font = float(np.clip(0.75 * 72 * (side - 3) / max(n, 1), 4, 8))
    _names(ax, "x", names, rotation=60 if n <= 30 else 90, ha="right" if n <= 30 else "center",
           rotation_mode="anchor" if n <= 30 else "default", fontsize=font)
    _names(ax, "y", names, fontsize=font)
    different = np.zeros((n, n), bool)
    for c in rep.comparisons:
        different[idx[c.a], idx[c.b]] = different[idx[c.b], idx[c.a]] = c.different
    if n <= 15:
        for i in range(n):
            for j in range(n):
                if np.isfinite(mat[i, j]):
                    ax.text(j, i, f"{mat[i, j]:.2f}" + ("*" if different[i, j] else ""), ha="center",
                            va="center", fontsize=7,
                            color="white" if abs(mat[i, j] - 0.5) > 0.35 else "black")
    else:  # a white dot with a dark rim shows on red, blue and white cells alike
        i, j = np.nonzero(different)
        cell = 72 * side / max(n, 1)  # points per cell
        ax.plot(j, i, "o", color="white", markeredgecolor="black", markeredgewidth=0.4,
                ms=float(np.clip(0.45 * cell, 1.5, 5)), ls="none")
    fig.colorbar(im, ax=ax, label="P(row > column)", shrink=0.6)
    ax.set_title("Posterior probability that one model is better; "
                 + ("*" if n <= 15 else "dot") + ": declared different", fontsize=10)
    return fig


def _posterior_draws(fit, draws: int, seed: int):
    """Draws of a model's accuracy (points) from its saved fit: the grid
    posterior and the Beta posterior draw directly (the same draws as their
    ``to_inference_data``, without importing arviz); MCMC fits are
    ``InferenceData`` already."""
    kind = "hierarchical" if "hierarchical" in fit else ("beta" if "beta" in fit else None)
    if kind is None:
        return None
    post = fit[kind]
    if hasattr(post, "posterior"):  # InferenceData (MCMC)
        return 100 * np.asarray(post.posterior["mu" if kind == "hierarchical" else "p"].values).ravel()
    if kind == "hierarchical" and hasattr(post, "sample"):
        return 100 * np.asarray(post.sample(draws, seed)["mu"]).ravel()
    if kind == "beta" and hasattr(post, "alpha") and hasattr(post, "beta"):
        return 100 * np.random.default_rng(seed).beta(post.alpha, post.beta, (1, draws)).ravel()
    idata = post.to_inference_data(draws=draws, seed=seed) if hasattr(post, "to_inference_data") else post
    return 100 * np.asarray(idata.posterior["mu" if kind == "hierarchical" else "p"].values).ravel()


def _density(d, grid):
    """Gaussian kernel density of draws ``d`` on an even ``grid`` (Scott's
    bandwidth, as scipy's gaussian_kde), binned: linear in the number of
    draws, so a ridgeline of 100 models takes a fraction of a second."""
    sd = np.std(d, ddof=1)
    if not np.isfinite(sd) or sd <= 0:
        return np.zeros_like(grid)
    bw = sd * len(d) ** (-1 / 5)
    step = grid[1] - grid[0]
    edges = np.concatenate([grid - step / 2, [grid[-1] + step / 2]])
    counts = np.histogram(d, edges)[0].astype(float)
    half = int(np.ceil(4 * bw / step))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) * step / bw) ** 2)
    return np.convolve(counts, kernel / kernel.sum())[half: half + len(grid)]


def posterior(rep, draws: int = 4000, seed: int = 0):
    """Posterior density of each model's accuracy as a ridgeline, one labelled
    row per model, with the equal-tailed interval marked.  Height bounded
    (:data:`MAX_HEIGHT`): with many models the ridges overlap more and the
    labels get smaller."""
    fits = rep.posteriors or {}
    series = [(s.model, d) for s in rep.scores
              if (d := _posterior_draws(fits.get(s.model, {}), draws, seed)) is not None]
    if not series:
        fig = _figure(6, 2)
        ax = fig.subplots()
        why = ("--bayes off" if rep.bayes is None else
               "these models' Bayesian columns are intervals without stored draws "
               "(fractional scores: Bayesian bootstrap, cluster-effect posterior)")
        ax.text(0.5, 0.5, f"no posterior to draw: {why}", ha="center", va="center", wrap=True)
        ax.axis("off")
        return fig
    fig = _figure(7.5, 0.45 * len(series) + 1.5)
    ax = fig.subplots()
    lo = min(np.quantile(d, 0.001) for _, d in series)
    hi = max(np.quantile(d, 0.999) for _, d in series)
    grid = np.linspace(lo, hi, 400)
    q = [(1 - rep.level) / 2, (1 + rep.level) / 2]
    for i, (_, d) in enumerate(series):
        dens = _density(d, grid)
        dens = 0.8 * dens / dens.max() if dens.max() > 0 else dens
        keep = np.flatnonzero(dens > 1e-3)  # the flat tails add nothing but path points
        sl = slice(max(keep[0] - 1, 0), keep[-1] + 2) if keep.size else slice(0, len(grid))
        ax.fill_between(grid[sl], i, i - dens[sl], color="#9467bd", alpha=0.35, lw=0)
        ax.plot(grid[sl], i - dens[sl], color="#5b3f8c", lw=0.8)
        a, b = np.quantile(d, q)
        ax.plot([a, b], [i + 0.05, i + 0.05], color="black", lw=1.6)
    _names(ax, "y", [m for m, _ in series], fontsize=_label_size(len(series), fig.get_figheight(), 8))
    ax.set_ylim(len(series) - 0.4, -1)
    ax.set_xlabel(f"accuracy (%); bar: {rep.level:.0%} equal-tailed interval")
    ax.set_title("Posterior of each model's accuracy")
    ax.grid(axis="x", alpha=0.3)
    return fig


FIGURES = Registry("figure kind", "--kind", {"forest": forest, "ranks": ranks, "pairs": pairs,
                                              "heatmap": heatmap, "posterior": posterior})
KINDS = tuple(FIGURES)
SUFFIXES = (".svg", ".png", ".pdf")


def figure(rep, kind: str):
    return FIGURES.get_checked(kind)(rep)


def save(fig, path) -> Path:
    """Write a figure (atomically; the suffix picks the format)."""
    from bayeserr.base.errors import InputError
    from bayeserr.base.output import write_atomic
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
