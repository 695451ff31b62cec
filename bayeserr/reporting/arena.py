"""The arena ratings as neutral blocks (:mod:`bayeserr.reporting.document`):
the ratings table, the neighbours the votes cannot order, warnings and rows,
written out by the same renderers as the eval report.  ``r`` is always an
:class:`~bayeserr.analyses.arena.Ratings` (not imported here: that module
imports this one to display itself)."""

from __future__ import annotations


# ------------------------------------------------------------------ rendering
def ratings_table(r):
    from bayeserr.reporting.tables import Cell, Column, Table, text
    df = r.to_frame()
    bayes = r.bayes_interval is not None
    grouped = r.n_groups > 1
    cols = [Column("group", "Group")] if grouped else []
    cols += [Column("rank", "Rank"), Column("model", "Model", numeric=False), Column("rating", "Rating"),
             Column("ci", f"{r.level:.0%} CI", f"{r.level:.0%} CI".replace("%", r"\%"))]
    if bayes:
        cols.append(Column("bayes", "Bayesian CI"))
    cols += [Column("ranks", "Rank interval"), Column("votes", "Votes")]
    rows = []
    for _, x in df.iterrows():
        row = [Cell("int", x["group"])] if grouped else []
        row += [Cell("int", x["rank"]), text(x["model"]), Cell("num", x["rating"], digits=0),
                Cell("range", (x["low"], x["high"]), digits=0)]
        if bayes:
            row.append(Cell("range", (x["bayes_low"], x["bayes_high"]), digits=0))
        row += [Cell("span", (x["rank_low"], x["rank_high"])), Cell("int", x["n_votes"])]
        rows.append(tuple(row))
    method = (f"Bradley–Terry MLE on the Elo scale (R = 400 s / ln 10 + 1000; ties count half a win "
              f"each); {r.level:.0%} percentile intervals from {r.bootstrap} bootstrap resamples of "
              f"{r.bootstrap_by}.")
    notes = [method]
    if grouped:
        notes.append(f"The votes form {r.n_groups} groups that never met: ratings and ranks are comparable "
                     "only within a group (see Warnings).")
    if r.identified is not None and not r.identified.all():
        lost = [r.models[i] for i in r.order() if not r.identified[i]]
        notes.append(f"Not identified by the votes (rating set by the ridge; see Warnings): "
                     f"{', '.join(lost)}.")
    return Table("ratings", "Ratings", tuple(cols), tuple(rows), tuple(notes), " ".join(notes))


#: lines of neighbours the votes cannot order shown before "… and N more" (the JSON has every pair)
NEIGHBOUR_LINES = 12


def _runs(r) -> list:
    """``r.not_separable`` as runs of neighbours: a run is a chain A–B, B–C, … of pairs
    next to each other in the ranking that the resamples do not order."""
    runs = []
    for a, b, p in r.not_separable:
        if runs and runs[-1][-1][1] == a:
            runs[-1].append((a, b, p))
        else:
            runs.append([(a, b, p)])
    return runs


def neighbour_lines(r, limit: int | None = NEIGHBOUR_LINES) -> tuple:
    """The neighbours the votes cannot order, one line per run of neighbours (a run of one
    pair: "A vs B: P(A ahead) = 0.60"; longer: the ranks, the first and last model and the
    range of P), at most ``limit`` lines then a count (``None``: all).  The one way the arena
    pages (with and without a judge, every format) list them."""
    frame = r.to_frame().set_index("model")
    grouped = r.n_groups > 1
    lines = []
    for run in _runs(r):
        if len(run) == 1:
            a, b, p = run[0]
            lines.append(f"{a} vs {b}: P({a} ahead) = {p:.2f}")
            continue
        first, last = run[0][0], run[-1][1]
        ps = [p for _, _, p in run]
        where = f"group {frame.loc[first, 'group']}, " if grouped else ""
        lines.append(f"{where}ranks {frame.loc[first, 'rank']}–{frame.loc[last, 'rank']}, {first} down to {last} "
                     f"({len(run) + 1} models): none of the {len(run)} neighbouring pairs is ordered "
                     f"(P(higher ahead) {min(ps):.2f}–{max(ps):.2f})")
    if limit is not None and len(lines) > limit:
        more = len(lines) - limit
        lines = lines[:limit] + [f"… and {more} more run{'s' if more > 1 else ''} of neighbours (the JSON has "
                                 f"every pair)"]
    return tuple(lines)


def neighbour_blocks(r, latex: bool = False) -> list:
    """The "Neighbours the votes cannot order" section's body (:func:`neighbour_lines`); a
    sentence when every neighbour is ordered.  ``latex``: as comment lines."""
    from bayeserr.reporting import document as doc
    if not r.not_separable:
        return [doc.Para(f"Every neighbour is ordered with probability ≥ {(1 + r.level) / 2:.3f}.", "note")]
    lines = neighbour_lines(r)
    if latex:
        return [doc.Para("Neighbours the votes cannot order: " + "; ".join(lines) + ".", "note", user_text=True)]
    k = len(r.not_separable)
    head = (f"{k} pair{'s' if k > 1 else ''} of neighbours in the ranking {'are' if k > 1 else 'is'} ordered by "
            f"fewer than {(1 + r.level) / 2:.1%} of the bootstrap resamples:")
    return [doc.Para(head), doc.Bullets(tuple((None, t) for t in lines), "neighbours")]


_SHORT = object()


def ratings_blocks(r, warning_limit=_SHORT) -> list:
    """The arena report as neutral blocks (:mod:`bayeserr.reporting.document`),
    written out by the same renderers as the eval report.  ``warning_limit``:
    warnings shown per code (default: as in the Markdown report; ``None``: all)."""
    from bayeserr.reporting import document as doc
    limit = doc.MAX_NAMES if warning_limit is _SHORT else warning_limit
    out = [doc.Heading(f"Arena ratings: {r.source}", 1), ratings_table(r),
           doc.Heading("Neighbours the votes cannot order"), *neighbour_blocks(r)]
    out += [doc.Heading("Warnings"), *doc.warnings_blocks(r.warnings, limit)]
    if r.rows is not None:
        out += [doc.Heading("Rows"), doc.Para(doc.rows_text(r.rows.to_dict()), "rows", user_text=True)]
    return out
