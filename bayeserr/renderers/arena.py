"""The arena ratings page in Markdown, LaTeX and HTML (the blocks come from
:mod:`bayeserr.reporting.arena`)."""

from __future__ import annotations

from bayeserr.reporting.arena import neighbour_blocks, ratings_blocks, ratings_table


def to_markdown(r) -> str:
    from bayeserr.renderers.markdown import render_blocks
    return render_blocks(ratings_blocks(r))


def to_latex(r) -> str:
    """The ratings table, then the rows, the neighbours the votes cannot order
    and every warning as comments."""
    from bayeserr.renderers.latex import render_blocks
    from bayeserr.reporting import document as doc
    blocks = [ratings_table(r)]
    if r.rows is not None:
        blocks.append(doc.Para(doc.rows_text(r.rows.to_dict()), "rows"))
    if r.not_separable:
        blocks += neighbour_blocks(r, latex=True)
    if r.warnings:
        blocks += doc.warnings_blocks(r.warnings)
    return render_blocks(blocks, f"bayeserr arena: {r.source}")


def _open_ratings(page: str) -> str:
    """``page`` with the ratings table shown open: the HTML renderer folds a table of more than
    ``COLLAPSE_ROWS`` rows behind "click to show" unless it is a report's main table, and the
    ratings table is the arena page's main table (the other tables stay folded)."""
    import re
    return re.sub(r'<details class="rows"><summary>[^<]*</summary>((?:(?!<details class="rows">).)*?'
                  r'<table id="t-ratings"[^>]*>.*?</table></div>)</details>', r"\1", page, count=1, flags=re.S)


def to_html(r) -> str:
    """The page shows every warning (as the eval report's page does)."""
    from bayeserr.renderers.html import render_blocks
    return _open_ratings(render_blocks(ratings_blocks(r), title=f"Arena ratings: {r.source}",
                                       source=r.source))  # base name in the title and heading


# ------------------------------------------------------------------ judge-corrected ratings
def judge_ratings_blocks(j, latex: bool = False) -> list:
    """A :class:`~bayeserr.analyses.arena_judge.JudgeRatings` as neutral blocks: the
    corrected ratings with the human-only and judge-only fits beside them, the
    corrected win rates, λ and the items, the neighbours, warnings and rows
    (``docs/methods.md`` §5.5.1).  Model names go in text cells (escaped by every
    renderer); ``latex``: the neighbours as a comment line, not a list."""
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
             f"{j.multiple_judge_votes} several {j.judge_label} verdicts.",
             f"Labels the judge was worth (first paragraph): n × median over models of (width {j.human_label} "
             "only / width corrected)², minus n.")
    table = Table("ratings", "Judge-corrected ratings", cols, rows, notes, " ".join(notes))
    out = [doc.Heading(f"Judge-corrected arena ratings: {j.source}", 1),
           doc.Para(judge_answer(j), "verdict", user_text=True), table]
    wcols = (Column("model", "Model", numeric=False), Column("ppi", "Corrected win rate"),
             Column("ppi_ci", ci, ci.replace("%", r"\%")), Column("human", f"{j.human_label} only"),
             Column("judge", f"{j.judge_label} only"))
    wrows = tuple((text(x["model"]), Cell("pct", x["win_rate"]),
                   Cell("range", tuple(100 * np.clip([x["win_rate_low"], x["win_rate_high"]], 0, 1)), digits=1),
                   Cell("pct", x["win_rate_human_only"]), Cell("pct", x["win_rate_judge_only"]))
                  for _, x in df.iterrows())
    out += [doc.Heading("Win rates"),
            Table("win_rates", "Win rates (share of items won, ties half)", wcols, wrows,
                  ("Per model, PPI++ for the mean (docs/methods.md §3.14) over its items; intervals are cut to "
                   "[0, 100] (a share cannot leave it; the JSON has the uncut bounds).",))]
    out += [doc.Heading("Neighbours the votes cannot order"), *neighbour_blocks(r, latex=latex)]
    out += [doc.Heading("Warnings"), *doc.warnings_blocks(j.warnings)]
    if j.rows is not None:
        out += [doc.Heading("Rows"), doc.Para(doc.rows_text(j.rows.to_dict()), "rows")]
    return out


def _lambda_words(j, s) -> str:
    """What λ amounted to, in words."""
    h = j.human_label
    if j.n_unlabelled < 2:
        return (f"λ = 0: fewer than 2 items lack {h} votes, so the judge adds nothing and the corrected ratings "
                f"are the {h}-only ones.")
    how = "power-tuned" if j.lam_tuned else "fixed"
    out = f"λ = {j.lam:.3f} ({how}; 0 uses the {h} votes alone, 1 the judge's verdicts at full weight)"
    if j.lam_negligible:
        out += (f" is about 0: the judge added nothing, and the corrected ratings are essentially the {h}-only "
                f"fit on the {j.n_labelled} labelled items.")
    elif s.labels_worth >= 1:
        out += (f": the judge was worth about {s.labels_worth:.0f} labelled items (the corrected intervals are as "
                f"narrow as {h}-only ones would be with about {s.effective_labels:.0f} labelled items instead of "
                f"{j.n_labelled}).")
    else:
        out += (f", but the judge added nothing measurable: the corrected intervals are no narrower than the "
                f"{h}-only ones on the {j.n_labelled} labelled items.")
    return out


def judge_answer(j) -> str:
    """The page's answer in one paragraph (:attr:`~bayeserr.analyses.arena_judge.JudgeRatings.summary`): the leader by the
    corrected ratings and its interval, the models tied with it (rank interval includes 1), the
    judge's own leader and its corrected rank, the judge-only ratings' distance from the
    human-only ones and what λ amounted to."""
    import numpy as np

    from bayeserr.reporting.document import some_names
    s, r, h = j.summary, j.corrected, j.human_label
    lo, hi = s.interval
    group = " (in the largest group of models that met)" if s.n_groups > 1 else ""
    out = (f"By the judge-corrected {h} ratings, {s.leader} leads{group} at {s.rating:.0f} Elo "
           f"({r.level:.0%} CI {lo:.0f}–{hi:.0f}).")
    if s.tied_with_best:
        k = len(s.tied_with_best)
        out += (f" The votes do not separate it from {some_names(s.tied_with_best, 12)}: {'their' if k > 1 else 'its'} "
                f"rank interval{'s include' if k > 1 else ' includes'} 1, so {'these are' if k > 1 else 'it is'} "
                "tied with the best.")
    elif len(j.models) > 1:
        out += " No other model's rank interval includes 1: it is the best."
    if s.judge_leader != s.leader:
        rl, rh = s.judge_leader_rank_interval
        out += (f" The {j.judge_label} judge alone would put {s.judge_leader} first; by the corrected ratings it is "
                f"number {s.judge_leader_rank} (rank interval {rl}–{rh}).")
    else:
        out += f" The {j.judge_label} judge alone would put it first too."
    if np.isfinite(s.judge_vs_human):
        out += (f" The {j.judge_label}-only ratings are {s.judge_vs_human:.0f} Elo from the {h}-only ones on "
                f"average (mean absolute difference over {s.n_compared} models).")
    return out + " " + _lambda_words(j, s)


def judge_to_markdown(j) -> str:
    from bayeserr.renderers.markdown import render_blocks
    return render_blocks(judge_ratings_blocks(j))


def judge_to_latex(j) -> str:
    from bayeserr.renderers.latex import render_blocks
    return render_blocks(judge_ratings_blocks(j, latex=True), f"bayeserr arena: {j.source}")


def judge_to_html(j) -> str:
    from bayeserr.renderers.html import render_blocks
    return _open_ratings(render_blocks(judge_ratings_blocks(j), title=f"Judge-corrected arena ratings: {j.source}",
                                       source=j.source))
