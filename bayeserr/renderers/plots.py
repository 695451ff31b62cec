"""Figures of a report.

Every function takes a :class:`~bayeserr.reporting.build.Report` and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so no global backend
is switched (figures show in Jupyter; a user's own ``plt`` keeps working).
:func:`save` writes a figure (svg, png, pdf); :func:`svg` returns it as
inline SVG text for the HTML report.  Model names are drawn as plain text
(never parsed as math), long ones cut with an ellipsis and kept distinct
(:func:`short_names`).  Method names, colours and order come from the
interval-method registry (:mod:`bayeserr.registries.methods`).

A figure that would show a subset says so on the figure (which, of how many,
how to see the rest); one with nothing to draw raises :class:`NothingToDraw`
(an :class:`~bayeserr.base.errors.InputError` naming the problem and the fix),
which :func:`figure` hands on as a :class:`Blank`: :func:`save` raises it
(``bayeserr plot`` exits 2, no file) and :func:`svg` writes a one-line note.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.base.registry import Registry
from bayeserr.registries.methods import INTERVALS, report_methods
from bayeserr.renderers import FIGURE_KINDS, FIGURE_SUFFIXES

#: the pairs figure draws at most this many pairs (beyond, the neighbours in the ranking)
MAX_PAIRS = 100
#: no figure is taller than this (inches): at 100 models rows get closer and
#: their labels smaller instead of the figure growing into a strip
MAX_HEIGHT = 14.0
#: the forest draws a few headline methods per model while models × methods
#: stays below this; beyond it, one interval per model (the recommended one)
FOREST_MAX_LINES = 64
#: fonts tried, in this order, for the characters of a name that the default font (DejaVu
#: Sans) lacks — Chinese, Japanese or Korean model and cluster names above all; matplotlib
#: falls back glyph by glyph through the list.  Only the installed ones are named
FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR",
                  "Source Han Sans", "Source Han Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
                  "Droid Sans Fallback", "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans",
                  "Arial Unicode MS", "Noto Sans", "Noto Emoji", "Symbola")
#: Chinese, Japanese and Korean characters (for the advice of :func:`missing_note`): CJK
#: radicals to the unified ideographs (kana, bopomofo, Hangul letters among them), Hangul
#: syllables and jamo, compatibility ideographs, full-width forms, the supplementary ideographs
_CJK = ((0x1100, 0x11FF), (0x2E80, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF),
        (0xFF00, 0xFFEF), (0x20000, 0x3FFFF))
_MISSING_GLYPH = re.compile(r"Glyph (\d+) .*missing from font")


@functools.cache
def _installed_fonts() -> frozenset:
    from matplotlib import font_manager
    return frozenset(f.name for f in font_manager.fontManager.ttflist)


def _font_family() -> list:
    """The user's ``font.family`` followed by the installed :data:`FALLBACK_FONTS`."""
    import matplotlib
    family = list(matplotlib.rcParams["font.family"])
    return family + [f for f in FALLBACK_FONTS if f in _installed_fonts() and f not in family]


@contextlib.contextmanager
def drawing(missing: set | None = None):
    """The settings every figure is built and drawn with: the fallback fonts and fixed SVG
    ids (the same report gives the same bytes).  Matplotlib's warning for each glyph no
    installed font has is not printed (dozens of lines for one name): the characters are
    added to ``missing`` instead, for one note (:func:`missing_note`); other warnings pass.
    Font matching's log lines (a fallback font with no "normal" weight: WenQuanYi Zen Hei's
    is 500) are not printed either."""
    import logging

    import matplotlib
    log = logging.getLogger("matplotlib.font_manager")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with matplotlib.rc_context({"svg.hashsalt": "bayeserr", "font.family": _font_family()}):
                yield
    finally:
        log.setLevel(level)
    for w in caught:
        glyph = _MISSING_GLYPH.match(str(w.message))
        if glyph is None:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif missing is not None:
            missing.add(chr(int(glyph.group(1))))


def missing_note(missing) -> str | None:
    """One sentence on the characters a figure drew as boxes (no installed font has them)."""
    if not missing:
        return None
    chars = sorted(missing)
    shown = " ".join(chars[:12]) + (" …" if len(chars) > 12 else "")
    cjk = [any(lo <= ord(c) <= hi for lo, hi in _CJK) for c in chars]
    fonts = (["for Chinese, Japanese or Korean: Noto Sans CJK"] if any(cjk) else []) + (
        # matplotlib draws no colour (bitmap) emoji font: Noto Color Emoji would not do
        ["for emoji and other symbols: Noto Emoji or Symbola, black and white"] if not all(cjk) else [])
    return (f"{len(chars)} character{'s' if len(chars) > 1 else ''} of the names ({shown}) "
            f"{'are' if len(chars) > 1 else 'is'} drawn as boxes in the figure: no installed font has "
            f"{'them' if len(chars) > 1 else 'it'}. Install a font that does ({'; '.join(fonts)}) and "
            f"draw it again; the tables show the names as they are.")


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


#: tick labels are cut to this many characters (distinct, with an ellipsis): full names are in the
#: tables; a rotated label's memory grows with the square of its length (1,000 characters: 1.2 GB)
MAX_LABEL = 60


def _names(ax, axis: str, names, after=None, **kw):
    """Tick labels as plain text (a name like ``$x$`` is not math): the names
    cut to at most :data:`MAX_LABEL` characters, distinct (:func:`short_names`,
    the same cut in every figure), each followed by ``after[i]`` if given."""
    set_labels = ax.set_yticks if axis == "y" else ax.set_xticks
    short = short_names(names, MAX_LABEL)
    labels = [short[n] + (after[i] if after is not None else "") for i, n in enumerate(names)]
    set_labels(range(len(names)), labels, parse_math=False, **kw)


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
    tied = set() if rep.ranking is None else set(rep.ranking.tied_with_best)
    for i, s in enumerate(models):  # the set tied with the best: a band behind its rows
        if s.model in tied:
            ax.axhspan(i - 0.5, i + 0.5, color=DIFFERENT, alpha=0.1, lw=0)
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
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    if tied:
        from matplotlib.patches import Patch
        handles.append(Patch(color=DIFFERENT, alpha=0.1))
        labels.append(f"tied with the best ({rep.ranking.level:.0%})")
    ax.legend(handles, labels, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=min(len(labels), 4) or 1, frameon=False)
    fig.suptitle("Per-model intervals by method" if per_model > 1 else
                 "Per-model intervals (the recommended method for each model)", fontsize=11)
    return fig


def _pair_set(rep):
    """``(table, note_words)``: the pairs of the report's table (``--pairs``,
    as :func:`~bayeserr.reporting.tables.select_pairs` picks them) and how to
    name them."""
    from bayeserr.reporting.tables import select_pairs
    which = str(getattr(rep, "pairs", "auto") or "auto")
    table = select_pairs(rep.comparisons, rep.scores, which)
    if which.startswith("vs="):
        model = short_names([which[3:]], MAX_LABEL)[which[3:]]
        return table, f"pairs with {model} (--pairs vs={model})"
    if len(table) == len(rep.comparisons):
        return table, "pairs"
    return table, "neighbours in the ranking"


def _shown_pairs(rep):
    """``(pairs drawn, note)``: the pairs of the report's table, at most
    :data:`MAX_PAIRS` of them (beyond, the neighbours in the ranking, or the
    first :data:`MAX_PAIRS` in ranking order); ``note`` says on the figure
    which pairs these are, of how many, and how to see the others."""
    total = len(rep.comparisons)
    table, words = _pair_set(rep)
    shown, base = table, len(table)
    if base > MAX_PAIRS:
        if words == "pairs":
            order = {s.model: i for i, s in enumerate(rep.scores)}
            neighbours = [c for c in table if abs(order[c.a] - order[c.b]) == 1]
            if neighbours:
                shown, words, base = neighbours, "neighbours in the ranking", len(neighbours)
        shown = shown[:MAX_PAIRS]
    n = len(shown)
    if n == total:
        return shown, (f"All {total} pairs." if total > 1 else "The one pair.")
    what = f"the {n} {words}" if n == base else f"the first {n} of the {base} {words} (ranking order)"
    if words.startswith("pairs with"):  # the family is MODEL's pairs: the table and JSON hold those
        note = f"Drawn: {what}, the family adjusted over (as in the table and the JSON)."
        return shown, note + (f" --pairs all draws all {total} pairs." if total <= MAX_PAIRS else "")
    if total <= MAX_PAIRS:
        others = [f"--pairs all draws all {total}"]
    else:
        others = [f"--pairs vs=MODEL draws MODEL's {len(rep.scores) - 1} pairs (adjusted over those)"] \
            if len(rep.scores) - 1 <= MAX_PAIRS else []
        others.append("every pair is in the JSON (--format json) and in the pairs table with --pairs all")
    hint = "; ".join(others)
    return shown, f"Drawn: {what}, of {total:,} pairs{_uncompared_neighbours(rep, words)}. {hint[0].upper()}{hint[1:]}."


def _uncompared_neighbours(rep, words: str) -> str:
    """A clause on the neighbours in the ranking that are no pair of the report (fewer than
    two common questions: warning ``pair_not_comparable``), so that "the 89 neighbours" of 93
    models is not read as a silent cut; "" when there are none or other pairs are drawn."""
    if words != "neighbours in the ranking":
        return ""
    order = {s.model: i for i, s in enumerate(rep.scores)}
    skipped = sum(1 for a, b, *_ in getattr(rep.comparisons, "skipped", ())
                  if a in order and b in order and abs(order[a] - order[b]) == 1)
    if not skipped:
        return ""
    return (f" ({skipped} neighbouring pair{'s share' if skipped > 1 else ' shares'} fewer than two "
            f"questions: not compared)")


#: colours of the report's decision: declared different / not
DIFFERENT, NOT_DIFFERENT = "#1f77b4", "0.55"
#: the labels of the pairs figure take at most this share of its width
LABEL_SHARE = 0.42


def _shorten(name: str, limit: int) -> str:
    """``name`` cut to ``limit`` characters by an ellipsis in the middle (the
    start and the end, where versions and dates sit, are kept)."""
    if len(name) <= limit:
        return name
    head = max(limit // 2, 1)
    tail = max(limit - 1 - head, 0)
    return name[:head] + "…" + (name[len(name) - tail:] if tail else "")


def short_names(names, limit: int) -> dict:
    """``{name: label}``: each name (as plain text) cut to at most ``limit``
    characters with an ellipsis (``_shorten``), the labels kept distinct
    without growing: names whose cuts meet are cut shorter and tagged with
    the start of a hash of the name (" #3fa2", the same wherever that name is
    cut), so a label is at most ``limit`` characters (6 and the tag when
    ``limit`` is below 12) and the work is linear in the names' length."""
    from bayeserr.reporting.text import plain
    limit = max(int(limit), 4)
    full = {n: plain(n) for n in dict.fromkeys(names)}
    label = {n: _shorten(full[n], limit) for n in full}
    owners = {}
    for n, s in label.items():
        owners.setdefault(s, []).append(n)
    used = set(label.values())
    for s, group in owners.items():
        if len(group) < 2:
            continue
        # a name shown in full keeps its label (the first such); the others are tagged
        keep = next((n for n in group if full[n] == s), None)
        tagged = [n for n in group if n != keep]
        if keep is None:
            used.discard(s)
        for digits in range(4, 33, 2):
            new = {n: _tagged(full[n], _tag(n, digits), limit) for n in tagged}
            if len(set(new.values())) == len(new) and not used & set(new.values()):
                break
        label.update(new)
        used |= set(new.values())
    return label


def _tag(name, digits: int) -> str:
    """The first ``digits`` hex digits of a hash of ``name``: the same for a name in every figure."""
    import hashlib
    return hashlib.blake2b(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:digits]


def _tagged(name: str, tag: str, limit: int) -> str:
    """``name`` cut (``_shorten``) to leave room for " #tag" within ``limit``
    characters (or within 6 characters and the tag, when ``limit`` is smaller)."""
    suffix = f" #{tag}"
    return _shorten(name, max(limit - len(suffix), 6)) + suffix


@functools.cache
def _char_width(char: str) -> float:
    """Advance width of ``char`` at 100 pt in the default font (points)."""
    import warnings

    from matplotlib.font_manager import FontProperties
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a glyph the font lacks is drawn as a box
        return float(_renderer().get_text_width_height_descent(char, FontProperties(size=100),
                                                               ismath=False)[0])


@functools.cache
def _renderer():
    from matplotlib.backends.backend_agg import RendererAgg
    return RendererAgg(10, 10, 72)


def _text_width(text: str, fontsize: float) -> float:
    """Width of ``text`` in points (the sum of its characters' advances)."""
    return fontsize / 100 * sum(_char_width(c) for c in text)


def fitted_names(names, labels, fontsize: float, budget: float) -> dict:
    """:func:`short_names` at the longest cut, at most :data:`MAX_LABEL` (the
    cut of every figure), whose tick labels (``labels(short)``: the labels
    built from a ``{name: short}`` map) are all at most ``budget`` points wide
    at ``fontsize``; names are never cut below 6 characters."""
    names = list(dict.fromkeys(names))

    def fits(short):
        return max((_text_width(t, fontsize) for t in labels(short)), default=0.0) <= budget
    longest = min(max((len(n) for n in names), default=6), MAX_LABEL)
    best = short_names(names, longest)
    if fits(best):
        return best
    lo, hi, best = 6, longest - 1, short_names(names, 6)
    while lo <= hi:
        mid = (lo + hi) // 2
        short = short_names(names, mid)
        if fits(short):
            best, lo = short, mid + 1
        else:
            hi = mid - 1
    return best


def pairs(rep):
    """Pairwise differences A − B with their intervals adjusted over the family
    (as the p-values are; the pair's own where there is none), coloured by the
    report's decision (legend above the plot).  The pairs are those of the
    report's pairs table, at most :data:`MAX_PAIRS`; the figure says which
    pairs it draws and how to see the others.  Long model names are cut with
    an ellipsis (kept distinct), so the plot keeps most of the width."""
    from matplotlib.lines import Line2D

    from bayeserr.reporting.text import plain
    if not len(rep.comparisons):
        raise NothingToDraw("there are no pairs to compare (one model)",
                            "draw --kind forest, or give two models or more", "pairs")
    shown, note = _shown_pairs(rep)
    height = min(0.3 * len(shown) + 2.6, MAX_HEIGHT)
    font = _label_size(len(shown), height - 0.8, 8)
    # "A −" over "B" where a row has room for two lines, else "A − B" on one
    two_lines = 72 * (height - 2.2) / len(shown) >= 2.6 * font
    sep = " −\n" if two_lines else " − "

    def lines(short):
        return [part for c in shown for part in f"{short[c.a]}{sep}{short[c.b]}".split("\n")]
    full = max(_text_width(t, font) for t in lines({m: plain(m) for c in shown for m in (c.a, c.b)}))
    width = float(np.clip(full / (LABEL_SHARE * 72), 7.5, 9.0))  # wider, up to 9 in, for long names
    fig = _figure(width, height)
    ax = fig.subplots()
    ax.axvline(0, color="0.5", lw=1)
    adjusted = all(c.ci_adjusted is not None for c in shown)
    for i, c in enumerate(shown):
        color = DIFFERENT if c.different else NOT_DIFFERENT
        ci = c.ci_adjusted if adjusted else c.ci
        ax.plot(100 * np.asarray(ci), [i, i], color=color, lw=2.2)
        ax.plot(100 * c.diff, i, "o", color=color, ms=4)
    label = fitted_names([m for c in shown for m in (c.a, c.b)], lines, font, LABEL_SHARE * width * 72)
    ax.set_yticks(range(len(shown)), [f"{label[c.a]}{sep}{label[c.b]}" for c in shown], parse_math=False,
                  fontsize=font, linespacing=1.0)
    ax.set_ylim(len(shown) - 0.5, -0.5)
    kind = {"romano-wolf": "simultaneous", "holm": "simultaneous (Bonferroni)", "bh": "FCR-adjusted",
            "none": "unadjusted"}[rep.adjust]
    ax.set_xlabel(f"difference A − B (points), {rep.level:.0%} {kind} interval" if adjusted else
                  f"difference A − B (points), {rep.level:.0%} interval")
    ax.grid(axis="x", alpha=0.3)
    adj = {"romano-wolf": "Romano–Wolf", "holm": "Holm", "bh": "BH", "none": "unadjusted p"}[rep.adjust]
    handles = [Line2D([], [], color=DIFFERENT, lw=2.2, marker="o", ms=4,
                      label=f"declared different ({adj}, {rep.level:.0%})"),
               Line2D([], [], color=NOT_DIFFERENT, lw=2.2, marker="o", ms=4, label="not declared different"),
               Line2D([], [], color="0.5", lw=1, label="no difference (0)")]
    ax.legend(handles=handles, fontsize=7.5, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2,
              frameon=False, handlelength=1.6, columnspacing=1.2)
    fig.suptitle("Pairwise differences A − B (dot: the difference)\n" + _wrap(note, width), fontsize=9)
    return fig


def _wrap(text: str, width: float, fontsize: float = 9) -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, max(int(width * 72 / (0.55 * fontsize)), 20)))


def ranks(rep):
    """Rank intervals, models sorted by score: the interval for all models at
    once (light), for each model alone (dark), the rank of the estimate (dot);
    models in the set tied with the best in blue."""
    r = rep.ranking
    if r is None or not len(r):
        raise NothingToDraw("a ranking needs two models or more", "draw --kind forest", "ranks")
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
    _names(ax, "y", [row.model for row in r], after=[f" ({100 * row.mean:.1f})" for row in r],
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
    if not np.isfinite(mat).any():
        if not len(rep.comparisons):
            raise NothingToDraw("there are no pairs to compare (one model)", "draw --kind forest", "heatmap")
        raise NothingToDraw("no pair has P(A > B)" + (", which comes with the Bayesian columns; the report was "
                                                      "built with --bayes off" if rep.bayes is None else ""),
                            "run with --bayes fast (the default)" if rep.bayes is None else
                            "draw --kind pairs", "heatmap")
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
    title = ("Colour: posterior probability that the row model is better (no adjustment for the pairs "
             "made)\n" + ("*" if n <= 15 else "dot") + ": declared different by the report's family of pairs")
    blank = int((~np.isfinite(mat[~np.eye(n, dtype=bool)])).sum()) // 2
    if blank:  # else a white row reads as P = 0.5 (white is the colour map's middle)
        title += (f"\nwhite off the diagonal: no P(A > B) ({blank:,} "
                  f"pair{'' if blank == 1 else 's'}, e.g. common questions in one cluster)")
    if n <= 30:
        fig.colorbar(im, ax=ax, label="P(row > column), posterior", shrink=0.6)
        ax.set_title(title, fontsize=9)
    else:  # a wide figure scrolls sideways in a page: the colour bar goes on top, where it is seen
        fig.colorbar(im, ax=ax, label="P(row > column), posterior", location="top", shrink=0.4,
                     fraction=0.03, pad=0.02, aspect=30)
        fig.suptitle(title, fontsize=9)
    return fig


class NothingToDraw(InputError):
    """A figure with nothing to draw: ``problem`` and ``fix`` (the message
    names both)."""

    def __init__(self, problem: str, fix: str, kind: str = ""):
        self.problem, self.fix = problem, fix
        where = f"--kind {kind}: " if kind else ""
        super().__init__(f"{where}nothing to draw: {problem}. Fix: {fix}.")


@dataclass(frozen=True)
class Blank:
    """What :func:`figure` gives for a figure with nothing to draw: :func:`save`
    raises its error (no file is written) and :func:`svg` gives a one-line
    note in its place (the HTML report)."""

    error: NothingToDraw


@dataclass(frozen=True)
class _Ridge:
    """How one model's posterior of its score is drawn: ``density(grid)`` on
    the accuracy scale; ``key``: the report's interval column it belongs to."""

    model: str
    key: str  #: "hierarchical_posterior" or "beta_posterior"
    density: object


#: why a model's posterior is not drawn, by reason (after "N models have" / "all N have")
_NOT_DRAWN = {
    "fractional": "fractional scores, whose Bayesian intervals (Bayesian bootstrap, cluster-effect "
                  "posterior) come without a posterior density",
    "mcmc": "a --bayes mcmc fit with clusters, which keeps no cluster sizes to weight the score by",
    "none": "no posterior kept",
}


def _ridge(s, fits):
    """One model's ridge (:class:`_Ridge`), or the key of why it has none
    (:func:`bayeserr.bayes.densities.score_density`)."""
    from bayeserr.bayes.densities import score_density
    found = score_density(s, fits)
    return _Ridge(s.model, *found) if isinstance(found, tuple) else found


def _not_drawn_text(missing: dict, total: int) -> str:
    """"90 models have fractional scores, whose …" (models named when few)."""
    parts = []
    for why, models in missing.items():
        n = len(models)
        who = (f"all {n}" if n == total and n > 2 else "both" if n == total == 2 else
               f"{n} model{'s' if n > 1 else ''}")
        names = (f" ({', '.join(short_names(models, MAX_LABEL).values())})" if n <= 3 and n < total
                 else "")
        parts.append(f"{who}{names} {'have' if n > 1 else 'has'} {_NOT_DRAWN[why]}")
    return "; ".join(parts)


def posterior(rep, draws: int = 4000, seed: int = 0):
    """Posterior density of each model's score — the question-weighted mean
    accuracy on these questions, the estimand of the table's Score — as a
    ridgeline: the hierarchical posterior (the 'Hierarchical posterior'
    column; not μ, the mean of a new cluster) or, for independent 0/1
    answers, the Beta posterior; each row with that column's interval, the
    table's score and the table's recommended interval.  Models without a
    posterior density (fractional scores) are left out and the figure says
    so; with none to draw it raises :class:`NothingToDraw` (an InputError).
    Height bounded (:data:`MAX_HEIGHT`).  ``draws`` and ``seed`` are unused
    (the grid posteriors are drawn exactly; kept for old callers)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from bayeserr.registries.methods import recommendation
    if rep.bayes is None:
        raise NothingToDraw("the report was built with --bayes off, so it has no posteriors",
                            "run with --bayes fast (the default)", "posterior")
    fits = rep.posteriors or {}
    ridges, missing = [], {}
    for s in rep.scores:
        r = _ridge(s, fits.get(s.model) or {})
        if isinstance(r, _Ridge):
            ridges.append(r)
        else:
            missing.setdefault(r, []).append(s.model)
    total = len(rep.scores)
    if not ridges:
        problem = ("no model has a posterior density: " if total > 1 else
                   "the model has no posterior density: ") + _not_drawn_text(missing, total)
        fix = ("run with --bayes fast" if set(missing) == {"mcmc"} else
               "draw --kind forest (every model's interval); the posterior figure needs 0/1 answers "
               "or n_correct/n_samples counts")
        raise NothingToDraw(problem, fix, "posterior")
    scores = {s.model: s for s in rep.scores}
    rows = [scores[r.model] for r in ridges]
    recs = [recommendation(s) for s in rows]
    ends = np.array([[*s.intervals[r.key], *rec.interval, s.mean] for s, r, rec in zip(rows, ridges, recs)])
    width = np.maximum(ends[:, 1] - ends[:, 0], 0.01)
    lo = max(float(np.min(np.minimum(ends.min(axis=1), ends[:, 0] - 0.6 * width))), 0.0)
    hi = min(float(np.max(np.maximum(ends.max(axis=1), ends[:, 1] + 0.6 * width))), 1.0)
    grid = np.linspace(lo, hi, 600)
    notes = []
    if missing:
        notes.append(f"Drawn: {len(ridges)} of {total} models. Not drawn: {_not_drawn_text(missing, total)}; "
                     "--kind forest shows every model.")
    keys = {r.key for r in ridges}
    clustered = any(s.n_clusters is not None and s.n_clusters >= 2 for s in rows)
    text_width = 7.5
    extra = 0.25 * len(_wrap(" ".join(notes), text_width, 8).splitlines()) if notes else 0.0
    fig = _figure(text_width, 0.45 * len(ridges) + 2.4 + extra)
    ax = fig.subplots()
    for i, (s, r, rec) in enumerate(zip(rows, ridges, recs)):
        dens = r.density(grid)
        dens = 0.7 * dens / dens.max() if np.isfinite(dens).all() and dens.max() > 0 else np.zeros_like(grid)
        keep = np.flatnonzero(dens > 1e-3)  # the flat tails add nothing but path points
        sl = slice(max(keep[0] - 1, 0), keep[-1] + 2) if keep.size else slice(0, len(grid))
        x = 100 * grid[sl]
        ax.fill_between(x, i, i - dens[sl], color="#9467bd", alpha=0.35, lw=0)
        ax.plot(x, i - dens[sl], color="#5b3f8c", lw=0.8)
        a, b = s.intervals[r.key]
        ax.plot([100 * a, 100 * b], [i + 0.06, i + 0.06], color="black", lw=1.6, solid_capstyle="butt")
        ra, rb = rec.interval
        ax.plot([100 * ra, 100 * rb], [i + 0.2, i + 0.2], color="#ff7f0e", lw=1.0, solid_capstyle="butt")
        ax.plot(100 * s.mean, i + 0.06, "D", color="white", markeredgecolor="black", ms=3.5, mew=0.8)
    font = _label_size(len(ridges), fig.get_figheight() - 1.0, 8)
    _names(ax, "y", [s.model for s in rows], fontsize=font)  # cut as in every figure (MAX_LABEL)
    ax.set_ylim(len(ridges) - 0.5, -0.9)
    ax.set_xlabel("score (%): mean accuracy on these questions")
    ax.grid(axis="x", alpha=0.3)
    column = " or ".join(INTERVALS[k].label for k in ("hierarchical_posterior", "beta_posterior") if k in keys)
    methods = sorted({rec.label for rec in recs})
    handles = [Patch(color="#9467bd", alpha=0.35, label="posterior density of the score"),
               Line2D([], [], color="black", lw=1.6, label=f"its {rep.level:.0%} interval ({column} column)"),
               Line2D([], [], color="white", marker="D", markeredgecolor="black", ms=3.5, mew=0.8, lw=0,
                      label="the table's score"),
               Line2D([], [], color="#ff7f0e", lw=1.0, label=f"the table's {rep.level:.0%} interval ("
                      + (methods[0] if len(methods) == 1 else "its Method column") + ")")]
    ax.legend(handles=handles, fontsize=7.5, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2,
              frameon=False, handlelength=1.6, columnspacing=1.2)
    what = ("hierarchical Beta–Binomial posterior" if keys == {"hierarchical_posterior"} else
            "Beta posterior (independent 0/1 answers)" if keys == {"beta_posterior"} else
            "hierarchical or Beta posterior")
    lines = [f"Posterior of each model's score (mean accuracy on these questions): {what}."]
    if "hierarchical_posterior" in keys:
        lines.append("Not μ, the mean accuracy of a new " + ("cluster" if clustered else "question") + ".")
    if clustered and any(INTERVALS[rec.key].family == "clustered" or rec.key == "cluster_effect_posterior"
                         for rec in recs):
        lines.append("The table's clustered interval also treats the clusters as a sample of many, "
                     "so it is usually wider.")
    fig.suptitle(_wrap(" ".join(lines), text_width, 9) + ("\n" + _wrap(" ".join(notes), text_width, 8)
                                                          if notes else ""), fontsize=8.5)
    return fig


def judge(rep):
    """Judge-scored reports: per model (corrected ranking order) the human-scored PPI++
    interval, the labelled-only interval beside it and the judge-only mean, so the judge's
    bias and what the labels bought are seen at once (``docs/methods.md`` §3.14)."""
    j = getattr(rep, "judge", None)
    if j is None or not j.models:
        raise NothingToDraw("no model has a corrected human-scored interval (no human labels, or too few)",
                            "load human labels with --human-col, --labels or --human-scorer", "judge")
    models = list(j.models)
    n = len(models)
    fig = _figure(7.5, 0.26 * n + 2.2)
    ax = fig.subplots()
    off = 0.18 if n <= 40 else 0.0
    for i, m in enumerate(models):
        r = m.result
        ax.plot(100 * np.array([r.ppi.lower, r.ppi.upper]), [i - off / 2] * 2, color="#1f77b4", lw=2.4,
                solid_capstyle="butt", label="human-scored (PPI++)" if i == 0 else None)
        ax.plot(100 * r.ppi.estimate, i - off / 2, "o", color="#1f77b4", ms=3.5)
        ax.plot(100 * np.array([r.classical.lower, r.classical.upper]), [i + off / 2] * 2, color="#9ecae1",
                lw=1.6, solid_capstyle="butt", label="labelled answers only" if i == 0 else None)
        ax.plot(100 * r.judge_only.estimate, i, "x", color="#d62728", ms=5, mew=1.5,
                label="judge only (not the human mean)" if i == 0 else None)
    _names(ax, "y", [m.model for m in models], after=[f"  ({m.result.n_labelled})" for m in models],
           fontsize=_label_size(n, fig.get_figheight()))
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel(f"score (%) with {j.level:.0%} intervals; (n) human labels per model")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    fig.suptitle("Human-scored means from the judge corrected by the labels", fontsize=11)
    return fig


FIGURES = Registry("figure kind", "--kind", {"forest": forest, "ranks": ranks, "pairs": pairs,
                                              "heatmap": heatmap, "posterior": posterior, "judge": judge})
KINDS = tuple(FIGURES)
SUFFIXES = FIGURE_SUFFIXES
if KINDS != FIGURE_KINDS:  # the command line's list (bayeserr.renderers) must name every figure
    raise ImportError(f"bayeserr.renderers.FIGURE_KINDS {FIGURE_KINDS} != plots.FIGURES {KINDS}")


def figure(rep, kind: str):
    """The figure ``kind`` of a report, or a :class:`Blank` when it has nothing
    to draw (:func:`save` raises its :class:`NothingToDraw`, :func:`svg`
    writes its reason; the figure functions themselves raise it)."""
    try:
        with drawing():  # the names' Text objects take their fonts when made
            return FIGURES.get_checked(kind)(rep)
    except NothingToDraw as e:
        return Blank(e)


def save(fig, path, notes: list | None = None) -> Path:
    """Write a figure (atomically; the suffix picks the format).  A
    :class:`Blank` raises its :class:`NothingToDraw` (an InputError) and
    writes nothing.  ``notes``: a list that gets the note on characters drawn
    as boxes (:func:`missing_note`), if any."""
    from bayeserr.base.output import write_atomic
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise InputError(f"{path}: write figures as .svg, .png or .pdf.")
    if isinstance(fig, Blank):
        raise fig.error
    buf, missing = io.BytesIO(), set()
    with drawing(missing):
        fig.savefig(buf, format=path.suffix[1:].lower(), dpi=150, bbox_inches="tight",
                    metadata=_metadata(path.suffix.lower()))
    write_atomic(path, buf.getvalue())
    if notes is not None and missing:
        notes.append(missing_note(missing))
    return path


def _metadata(suffix: str) -> dict:
    """No creation date in the file, so the same report gives the same bytes."""
    if suffix == ".svg":
        return {"Date": None}
    if suffix == ".pdf":
        return {"CreationDate": None}
    return {}


def svg(fig, shown: set | None = None) -> str:
    """The figure as inline SVG markup (no XML prolog), for self-contained HTML,
    followed by the note on characters drawn as boxes, if any (:func:`missing_note`)
    and not in ``shown`` (the notes of the page's earlier figures: a page says it
    once); for a :class:`Blank`, a one-line note saying why there is no figure."""
    import html
    if isinstance(fig, Blank):
        return f'<p class="note">No figure: {html.escape(fig.error.problem)}.</p>'
    buf, missing = io.StringIO(), set()
    with drawing(missing):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    note = missing_note(missing)
    if note is not None and shown is not None:
        if note in shown:
            note = None
        else:
            shown.add(note)
    return text[text.index("<svg"):] + (f'<p class="note">{html.escape(note)}</p>' if note else "")
