"""The arena ratings page in Markdown, LaTeX and HTML (the blocks come from
:mod:`bayeserr.reporting.arena`)."""

from __future__ import annotations

from bayeserr.reporting.arena import _neighbour_items, _ratings_table, ratings_blocks


def to_markdown(r) -> str:
    from bayeserr.renderers.markdown import render_blocks
    return render_blocks(ratings_blocks(r))


def to_latex(r) -> str:
    """The ratings table, then the rows, the neighbours the votes cannot order
    and every warning as comments."""
    from bayeserr.renderers.latex import render_blocks
    from bayeserr.reporting import document as doc
    blocks = [_ratings_table(r)]
    if r.rows is not None:
        blocks.append(doc.Para(doc.rows_text(r.rows.to_dict()), "rows"))
    if r.not_separable:
        blocks.append(doc.Bullets(_neighbour_items(r), "neighbours"))
    if r.warnings:
        blocks += doc.warnings_blocks(r.warnings)
    return render_blocks(blocks, f"bayeserr arena: {r.source}")


def to_html(r) -> str:
    """The page shows every warning (as the eval report's page does)."""
    from bayeserr.renderers.html import render_blocks
    return render_blocks(ratings_blocks(r), title=f"Arena ratings: {r.source}",
                         source=r.source)  # base name in the title and heading


# ------------------------------------------------------------------ judge-corrected ratings
def judge_ratings_blocks(j) -> list:
    """A :class:`~bayeserr.analyses.arena_judge.JudgeRatings` as neutral blocks: the
    corrected ratings with the human-only and judge-only fits beside them, the
    corrected win rates, λ and the items, the neighbours, warnings and rows
    (``docs/methods.md`` §5.5.1).  Model names go in text cells (escaped by every
    renderer)."""
    import numpy as np

    from bayeserr.reporting import document as doc
    from bayeserr.reporting.tables import Cell, Column, Table, text
    r = j.corrected
    df = j.to_frame()
    ci = f"{r.level:.0%} CI"
    cols = (Column("rank", "Rank"), Column("model", "Model", numeric=False), Column("rating", "Corrected"),
            Column("ci", ci, ci.replace("%", r"\%")), Column("ranks", "Rank interval"),
            Column("human", f"{j.human_label} only"), Column("human_ci", ci, ci.replace("%", r"\%")),
            Column("judge", f"{j.judge_label} only"), Column("labelled", "Labelled items"),
            Column("items", "Items"))
    rows = tuple((Cell("int", x["rank"]), text(x["model"]), Cell("num", x["rating"], digits=0),
                  Cell("range", (x["low"], x["high"]), digits=0), Cell("span", (x["rank_low"], x["rank_high"])),
                  Cell("num", x["human_only"], digits=0),
                  Cell("range", (x["human_only_low"], x["human_only_high"]), digits=0),
                  Cell("num", x["judge_only"], digits=0), Cell("int", x["n_labelled"]), Cell("int", x["n_items"]))
                 for _, x in df.iterrows())
    if j.n_unlabelled < 2:
        lam = "λ = 0: fewer than 2 unlabelled items, so the judge adds nothing"
    elif j.lam_tuned:
        lam = f"λ = {j.lam:.3f} (power-tuned{'' if j.lam_raw == j.lam else f', {j.lam_raw:.3f} before clipping'})"
    else:
        lam = f"λ = {j.lam:.3f} (fixed)"
    notes = (f"Bradley–Terry on the Elo scale for the {j.human_label} votes, the {j.judge_label} judge's verdicts "
             f"on all {j.n_labelled + j.n_unlabelled} items corrected with the {j.n_labelled} items that have "
             f"{j.human_label} votes (prediction-powered, PPI++; {lam}); {r.level:.0%} percentile intervals from "
             f"{r.bootstrap} bootstrap resamples of {'labelled and unlabelled items separately' if r.bootstrap_by == 'items' else 'clusters'}.",
             f"'{j.human_label} only': the labelled items alone. '{j.judge_label} only': the judge on every item; it "
             f"estimates the judge's ratings and does not estimate the {j.human_label} ratings.",
             "Votes on one item are averaged (a tie counts half): "
             f"{j.multiple_human_votes} items have several {j.human_label} votes, "
             f"{j.multiple_judge_votes} several {j.judge_label} verdicts.")
    table = Table("ratings", "Judge-corrected ratings", cols, rows, notes, " ".join(notes))
    out = [doc.Heading(f"Judge-corrected arena ratings: {j.source}", 1), table]
    if np.isfinite(j.effective_labels):
        out.append(doc.Para(f"The corrected intervals are as narrow as the {j.human_label}-only intervals would be "
                            f"with about {j.effective_labels:.0f} labelled items instead of {j.n_labelled} (median "
                            f"over models of n × (width {j.human_label} only / width corrected)²): the judge was "
                            f"worth about {j.effective_labels - j.n_labelled:.0f} labelled items."))
    wcols = (Column("model", "Model", numeric=False), Column("ppi", "Corrected win rate"),
             Column("ppi_ci", ci, ci.replace("%", r"\%")), Column("human", f"{j.human_label} only"),
             Column("judge", f"{j.judge_label} only"))
    wrows = tuple((text(x["model"]), Cell("pct", x["win_rate"]),
                   Cell("range", (100 * x["win_rate_low"], 100 * x["win_rate_high"]), digits=1),
                   Cell("pct", x["win_rate_human_only"]), Cell("pct", x["win_rate_judge_only"]))
                  for _, x in df.iterrows())
    out += [doc.Heading("Win rates"),
            Table("win_rates", "Win rates (share of items won, ties half)", wcols, wrows,
                  ("Per model, PPI++ for the mean (docs/methods.md §3.14) over its items.",))]
    out.append(doc.Heading("Neighbours the votes cannot order"))
    if r.not_separable:
        out.append(doc.Bullets(_neighbour_items(r), "neighbours"))
    else:
        out.append(doc.Para(f"Every neighbour is ordered with probability ≥ {(1 + r.level) / 2:.3f}."))
    out += [doc.Heading("Warnings"), *doc.warnings_blocks(j.warnings)]
    if j.rows is not None:
        out += [doc.Heading("Rows"), doc.Para(doc.rows_text(j.rows.to_dict()), "rows")]
    return out


def judge_to_markdown(j) -> str:
    from bayeserr.renderers.markdown import render_blocks
    return render_blocks(judge_ratings_blocks(j))


def judge_to_latex(j) -> str:
    from bayeserr.renderers.latex import render_blocks
    return render_blocks(judge_ratings_blocks(j), f"bayeserr arena: {j.source}")


def judge_to_html(j) -> str:
    from bayeserr.renderers.html import render_blocks
    return render_blocks(judge_ratings_blocks(j), title=f"Judge-corrected arena ratings: {j.source}",
                         source=j.source)
