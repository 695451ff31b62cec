"""The arena ratings as neutral blocks (:mod:`bayeserr.reporting.document`):
the ratings table, the neighbours the votes cannot order, warnings and rows,
written out by the same renderers as the eval report.  ``r`` is always an
:class:`~bayeserr.analyses.arena.Ratings` (not imported here: that module
imports this one to display itself)."""

from __future__ import annotations



# ------------------------------------------------------------------ rendering
def _ratings_table(r):
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


def _neighbour_items(r) -> tuple:
    return tuple(("not_separable", f"{a} vs {b}: P({a} ahead) = {p:.2f}") for a, b, p in r.not_separable)


_SHORT = object()


def ratings_blocks(r, warning_limit=_SHORT) -> list:
    """The arena report as neutral blocks (:mod:`bayeserr.reporting.document`),
    written out by the same renderers as the eval report.  ``warning_limit``:
    warnings shown per code (default: as in the Markdown report; ``None``: all)."""
    from bayeserr.reporting import document as doc
    from bayeserr.reporting.tables import Cell, Column, Table, text
    limit = doc.MAX_NAMES if warning_limit is _SHORT else warning_limit
    out = [doc.Heading(f"Arena ratings: {r.source}", 1), _ratings_table(r),
           doc.Heading("Neighbours the votes cannot order")]
    if r.not_separable:
        cols = (Column("higher", "Higher", numeric=False), Column("lower", "Lower", numeric=False),
                Column("p", "P(higher ahead)"))
        rows = tuple((text(a), text(b), Cell("num", p, digits=2)) for a, b, p in r.not_separable)
        out.append(Table("neighbours", "Neighbours the votes cannot order", cols, rows))
    else:
        out.append(doc.Para(f"Every neighbour is ordered with probability ≥ {(1 + r.level) / 2:.3f}."))
    out += [doc.Heading("Warnings"), *doc.warnings_blocks(r.warnings, limit)]
    if r.rows is not None:
        out += [doc.Heading("Rows"), doc.Para(doc.rows_text(r.rows.to_dict()), "rows", user_text=True)]
    return out
