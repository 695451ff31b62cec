"""A watched run (:class:`~bayeserr.analyses.sequential.Watch`) as a figure and
an HTML page: the confidence sequence narrowing over the questions, the
stopping point marked, the rule's zone drawn (``docs/methods.md`` §3.13)."""

from __future__ import annotations

import numpy as np

from bayeserr.reporting import document as doc
from bayeserr.reporting.tables import Cell, Column, Table, text

#: rows of the page's table of looks (evenly spaced, the stop and the last look always in)
TABLE_LOOKS = 20


def figure(w):
    """The sequence (band), the running estimate (line), the value the rule
    tests (dashed), the tie zone or margin (shaded) and the stop (a marker)."""
    from bayeserr.base.formats import points
    from bayeserr.renderers.plots import _figure, short_names
    s = w.sequence
    fig = _figure(7.5, 3.8)
    ax = fig.add_subplot()
    t = np.asarray(s.t, dtype=float)
    ax.fill_between(t, 100 * s.lower, 100 * s.upper, step="post", color="#9ecae1", alpha=0.7,
                    label=f"{s.level:.0%} confidence sequence (valid at every look)")
    ax.step(t, 100 * s.estimate, where="post", color="#08519c", lw=1.2, label="running estimate")
    r = w.rules
    if w.b is not None:
        if r.tie is not None:
            ax.axhspan(-100 * r.tie, 100 * r.tie, color="#fdd0a2", alpha=0.5, label=f"tie zone ±{points(r.tie)}")
        if r.margin is not None:
            ax.axhline(-100 * r.margin, color="#d94801", ls="--", lw=1, label=f"margin −{points(r.margin)}")
        elif r.settle:
            ax.axhline(0, color="#525252", ls="--", lw=1, label="no difference (0)")
    if w.stop is not None:
        i = w.stop.index
        ax.axvline(t[i], color="#a50f15", lw=1)
        ax.plot([t[i]], [100 * s.estimate[i]], "o", color="#a50f15",
                label=f"stop after {int(t[i]):,} questions ({w.outcome})")
    names = short_names([n for n in (w.a, w.b) if n is not None], 40)
    what = f"{names[w.a]} − {names[w.b]}" if w.b is not None else names[w.a]
    ax.set_title(f"{what}: {'stop' if w.stop is not None else 'continue'}", fontsize=10)
    ax.set_xlabel("questions answered" + (" (a look per complete cluster)" if s.unit == "cluster" else ""))
    ax.set_ylabel("difference (points)" if w.b is not None else "score (%)")
    ax.set_xlim(0, max(t[-1], 1))
    lo = np.nanmin(s.lower[len(t) // 20:]) if len(t) > 20 else np.nanmin(s.lower)
    hi = np.nanmax(s.upper[len(t) // 20:]) if len(t) > 20 else np.nanmax(s.upper)
    pad = 0.05 * max(hi - lo, 0.02)
    ax.set_ylim(100 * (lo - pad), 100 * (hi + pad))  # the first looks are as wide as the scale: not drawn to it
    ax.grid(alpha=0.3)
    legend = ax.legend(fontsize=8, loc="upper right", frameon=False)
    _literal(ax, legend)
    return fig


def _literal(ax, legend) -> None:
    """Every text the figure draws is shown as written: model names are user text, and
    matplotlib would read ``$…$`` in them as mathtext (the $ signs vanish, the rest turns
    to math), as the other figures' tick labels do (``parse_math=False``)."""
    for t in [ax.title, ax.xaxis.label, ax.yaxis.label, *(legend.get_texts() if legend else ())]:
        t.set_parse_math(False)


def _looks(w) -> list[int]:
    n = len(w.sequence.t)
    idx = set(np.unique(np.linspace(0, n - 1, min(TABLE_LOOKS, n)).round().astype(int)).tolist())
    if w.stop is not None:
        idx.add(w.stop.index)
    return sorted(idx)


def looks_table(w) -> Table:
    """Selected looks: questions seen (and clusters), estimate, interval, width."""
    from bayeserr.base.formats import interval, points
    s = w.sequence
    cluster = s.unit == "cluster"
    signed = w.b is not None
    cols = [Column("t", "Questions"), *( [Column("units", "Clusters")] if cluster else []),
            Column("estimate", "Estimate"), Column("ci", f"{s.level:.0%} sequence"), Column("width", "Width"),
            Column("note", "", numeric=False)]
    rows = []
    for i in _looks(w):
        row = [Cell("int", int(s.t[i]))] + ([Cell("int", int(s.units[i]))] if cluster else [])
        # the sentence's format (points, a true minus, + on differences): one number, one look
        row += [text(points(s.estimate[i], signed=signed)), text(interval(s.lower[i], s.upper[i], signed=signed)),
                text(points(s.upper[i] - s.lower[i])),
                text("stop" if w.stop is not None and i == w.stop.index else "")]
        rows.append(tuple(row))
    return Table("looks", "Looks", tuple(cols), tuple(rows),
                 caption="The confidence sequence at selected looks.")


def blocks(w, source: str, figures: bool = True) -> list:
    """The page's blocks: the sentence, the notes, the figure, the looks."""
    from bayeserr.renderers.plots import svg
    out = [doc.Heading(f"bayeserr watch: {source}", 1), doc.Para(w.sentence)]
    out += [doc.Para(n, "note") for n in w.notes]
    s = w.sequence
    how = ("hedged-capital betting (Waudby-Smith & Ramdas 2024), valid at every sample size"
           if s.method == "betting" else
           "the asymptotic sequence (Waudby-Smith et al. 2024), valid as the number of answers grows")
    out.append(doc.Para(f"Method: {how}; {'clusters' if s.unit == 'cluster' else 'questions'} as the "
                        "sampling units, in the order they arrived. Looking after every answer does not "
                        "raise the error rate: that is what the sequence is for.", "note"))
    if figures:
        out.append(doc.Figure("sequence", svg(figure(w))))
    out += [doc.Heading("Looks"), looks_table(w)]
    return out


def render_html(w, source: str) -> str:
    from bayeserr.renderers.html import render_blocks
    return render_blocks(blocks(w, source), title=f"bayeserr watch: {source}", source=source)
