"""The report's tables as neutral data: columns, rows of typed cells, notes.

Which columns a table has (clustered or not, which interval methods apply,
Holm or BH, McNemar, Bayesian columns) is decided here once; the Markdown,
HTML and LaTeX renderers only write cells out in their own syntax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bayeserr.registries.methods import INTERVALS, report_methods
from bayeserr.registries.options import SIDE_COLUMNS, method_shown


@dataclass(frozen=True)
class Cell:
    """One value and how to show it.

    ``kind``: ``text``, ``pct`` (a proportion shown in points), ``pct_se``
    (a proportion with its SE), ``interval``, ``p`` (a p-value), ``num``,
    ``int``, ``pair`` (model names "A − B"), ``pvalues`` (two p-values, the
    second in parentheses), ``range`` (two raw numbers ``[a, b]``), ``span``
    (two whole numbers ``a–b``).
    """

    kind: str
    value: object
    se: object = None
    digits: int = 1

    @property
    def missing(self) -> bool:
        v = self.value
        return v is None or (isinstance(v, float) and not math.isfinite(v))


@dataclass(frozen=True)
class Column:
    key: str
    head: str  #: plain text (Markdown, HTML)
    latex: str | None = None  #: LaTeX source; default: the escaped head
    mark: bool = False  #: flagged "assumes independent questions"
    numeric: bool = True


@dataclass(frozen=True)
class Table:
    key: str  #: models, pairs, variance, sensitivity
    title: str
    columns: tuple
    rows: tuple  #: tuples of Cell
    notes: tuple = ()  #: sentences printed under the table
    caption: str = ""  #: LaTeX caption (plain text; the renderer escapes it)
    sort_keys: dict = field(default_factory=dict)
    latex_notes: tuple = ()  #: sentences of the LaTeX note under the table, before the column meanings
    latex_variant: Table | None = None  #: what the LaTeX tables print instead (e.g. fewer columns)


def text(v) -> Cell:
    return Cell("text", v)


def pct(v, digits: int = 1) -> Cell:
    return Cell("pct", v, digits=digits)


def _interval_of(score, key: str):
    """A model's interval of method ``key``: from its ``intervals``, or its own field for the
    side columns (``hierarchical_mu``)."""
    return getattr(score, key) if key in SIDE_COLUMNS else score.intervals.get(key)


def _interval_keys(scores, bayes: bool, methods="all") -> list[str]:
    named = [INTERVALS[k] for k in SIDE_COLUMNS if methods not in ("all", "recommended") and k in methods]
    return [m.key for m in report_methods(bayes) + named
            if method_shown(methods, m.key) and any(_interval_of(s, m.key) is not None for s in scores)]


def models_table(scores, level: float, *, bayes: bool = True, methods="all", groups=None,
                 groups_note: str | None = None) -> Table:
    """Per-model table: score with its headline SE, n, clusters, K, the
    recommended interval (:func:`bayeserr.registries.methods.recommended`) and one column
    per interval method asked for (``methods``: "recommended" for none,
    "all", or keys) that applies to some model; ``groups`` adds the letter
    groups (:mod:`bayeserr.stats.ranking`), and ``groups_note`` says, first
    among the notes, why they are not shown when they are not."""
    scores = list(scores)
    clustered = any(s.n_clusters is not None for s in scores)
    keys = _interval_keys(scores, bayes, methods)
    detail = methods != "recommended"
    mark = clustered and any(s.binary for s in scores)
    cols = [Column("model", "Model", numeric=False)]
    if groups is not None:
        cols.append(Column("group", "Group", "Group", numeric=False))
    cols += [Column("score", "Score (SE)", "Score"), Column("n", "n", "$n$")]
    if clustered:
        cols += [Column("C", "C", "$C$"), Column("c_eff", "C_eff", r"$C_{\mathrm{eff}}$"),
                 Column("df", "df", "df")]
        if detail:
            cols += [Column("se_clt", "SE CLT", "SE (CLT)"), Column("deff", "deff", "Design effect")]
    cols.append(Column("K", "K", "$K$"))
    cols += [Column("recommended", f"{level:.0%} interval", f"{level:.0%} interval".replace("%", r"\%")),
             Column("method", "Method", "Method", numeric=False)]
    corr = next((s.cluster_correction for s in scores if s.cluster_correction), "paper")
    # the reference clustered column is the paper's (M4) or, with --cluster-correction cr1, CR1: its head says which
    head = {k: INTERVALS["clustered_cr1" if k == "clustered_paper" and corr == "cr1" else k] for k in keys}
    cols += [Column(k, head[k].label, head[k].latex, mark=mark and not INTERVALS[k].cluster_aware)
             for k in keys]
    rows = []
    for s in scores:
        se = s.se_clustered if s.se_clustered is not None else s.se_clt
        row = [text(s.model)]
        if groups is not None:
            row.append(text(groups.get(s.model, "")))
        row += [Cell("pct_se", s.mean, se), Cell("int", s.n_questions)]
        if clustered:
            row += [Cell("int", s.n_clusters), Cell("num", s.effective_clusters, digits=1),
                    Cell("num", s.df, digits=1)]
            if detail:
                row += [pct(s.se_clt), Cell("num", s.design_effect, digits=2)]
        row.append(Cell("num", s.k_samples, digits=2 if s.k_samples != int(s.k_samples) else 0))
        rec = s.recommended
        row += [Cell("interval", rec.interval), text(rec.label)]
        row += [Cell("interval", _interval_of(s, k)) for k in keys]
        rows.append(tuple(row))
    notes = [groups_note] if groups_note and groups is None else []
    lead = len(notes)  # the notes before the table's own first one
    notes += [f"Scores and intervals in percentage points; {level:.0%} intervals. The interval "
             "column shows the method recommended for each model's data (clusters: CR2 with t, or "
             "where that leaves [0, 1] Clopper–Pearson on n_eff for 0/1 scores and the "
             "cluster-effect posterior for fractional ones or K > 1; 0/1 scores: Wilson; small "
             "fractional or K > 1 sets: Bayesian; else CLT; never outside [0, 1]"
             + ("; 'cut to [0, 1]': no interval that stays inside [0, 1] by construction applies "
                "(with --bayes off none is computed), so the method's is cut to [0, 1], which keeps its "
                "coverage"
                if any(s.recommended.cut for s in scores) else "") + "); "
             + ("every other method follows." if methods == "all" else
                "--methods all shows every method.")]
    missing = [k for k in (methods if isinstance(methods, (tuple, list)) else ()) if k not in keys]
    if missing:  # asked for, applies to no model here: say so rather than drop the column silently
        notes.append("Not shown, as they apply to no model here: " + "; ".join(
            f"{INTERVALS[k].label} (--methods {k}: {INTERVALS[k].applies}"
            + (", with --bayes fast or mcmc" if INTERVALS[k].bayes and not bayes else "") + ")"
            for k in missing) + ".")
    if groups is not None:
        notes.append("Group: models sharing a letter cannot be told apart at this level after "
                     "the multiplicity adjustment.")
    se_name = "CLT SE"
    if clustered:
        se_name = "clustered SE (CR2)"
        reference = (f" {head_of_reference(corr)}: the {'paper’s (M4)' if corr == 'paper' else 'CR1'} SE "
                     "with a normal quantile, shown for reference; too narrow when df is small."
                     if "clustered_paper" in keys else "")  # only when its column is shown
        notes.append("Clustered (CR2, t): CR2 standard error with a t quantile on the "
                     "Bell–McCaffrey df, valid with few or unequal clusters; C_eff = n²/Σn_c² is "
                     "the effective number of clusters." + reference)
        if mark and any(c.mark for c in cols):  # only where a column carries the †
            notes.append("† assumes independent questions (not cluster-aware).")
    notes += [f"{INTERVALS[k].label}: {INTERVALS[k].meaning[:1].lower()}{INTERVALS[k].meaning[1:]}"
              for k in keys if k in SIDE_COLUMNS]  # another estimand than the score's: say which
    one_cluster = clustered and any(s.se_clustered is None for s in scores)
    notes.insert(lead + 1, f"SE in parentheses: the {se_name}"
                 + (", or the CLT SE for a model whose questions lie in one cluster." if one_cluster else "."))
    caption = (f"Scores (%) with the {se_name} in parentheses; n questions"
               + (", C clusters" if clustered else "") + f"; {level:.0%} intervals by method.")
    if any(s.k_samples > 1 for s in scores):
        caption += " Scores average the answers to each question; standard errors are over questions."
    return Table("models", "Models", tuple(cols), tuple(rows), tuple(notes), caption)


def select_pairs(comps, scores, which: str = "auto", *, for_json: bool = False) -> list:
    """The comparisons to show: ``all``; ``adjacent`` (neighbours in the
    ranking); ``vs=MODEL`` (every pair with MODEL); ``auto``: all in JSON and
    up to 45 pairs, else adjacent."""
    comps = list(comps)
    if for_json and not str(which).startswith("vs="):
        which = "all"  # the JSON holds every pair of the family
    if which == "auto":
        which = "all" if len(comps) <= 45 else "adjacent"
    if which == "all":
        return comps
    if which == "adjacent":
        rank = {s.model: i for i, s in enumerate(scores)}
        return [c for c in comps if abs(rank[c.a] - rank[c.b]) == 1]
    base = which.split("=", 1)[1]
    if base not in {s.model for s in scores}:
        from bayeserr.base.errors import InputError, suggest
        raise InputError(f"--pairs {which}: '{base}' is not a model of the report."
                         f"{suggest(base, [s.model for s in scores])}")
    return [c for c in comps if base in (c.a, c.b)]


#: head and note of the adjusted-interval column by adjustment
ADJUSTED_CI_HEADS = {"romano-wolf": "Simultaneous CI", "holm": "Simultaneous CI", "bh": "FCR-adjusted CI"}
ADJUSTED_CI_NOTES = {
    "romano-wolf": "Simultaneous CI: holds for every pair of the family at once (max |t| over the family "
                   "from the joint bootstrap).",
    "holm": "Simultaneous CI: Bonferroni over the family (Holm's first step); holds for every pair at once.",
    "bh": "FCR-adjusted CI: Benjamini–Yekutieli intervals at R·α/m (R pairs declared of m), which control "
          "the false coverage rate among the pairs declared."}
#: head of the adjusted-p column by adjustment
ADJUST_HEADS = {"romano-wolf": "RW p", "holm": "Holm p", "bh": "BH p", "none": "p (unadjusted)"}


#: the pair table's reference clustered SE column per --cluster-correction: head, LaTeX head, what it is
_PAIR_REFERENCE = {"paper": ("SE paper (M8)", "Paper's clustered SE", "the paper's clustered paired SE (M8)"),
                   "cr1": ("SE CR1", "CR1 SE", "the CR1 clustered paired SE (Inspect AI, statsmodels)")}


def head_of_reference(corr: str) -> str:
    """The label of the reference clustered interval (the paper's (M4) or CR1, per --cluster-correction)."""
    return INTERVALS["clustered_cr1" if corr == "cr1" else "clustered_paper"].label


def pairs_table(comps, level: float, adjust: str = "romano-wolf", *, compact: bool = False,
                family=None, main: bool = True) -> Table:
    """Pairwise table.  ``compact`` (LaTeX): the headline columns only;
    ``family``: the :class:`~bayeserr.analyses.families.Decisions` the verdicts come from
    (default: that of ``comps``)."""
    family = family if family is not None else getattr(comps, "family", None)
    comps = list(comps)
    clustered = any(c.se_clustered_paired is not None for c in comps)
    mcnemar = not compact and any(c.mcnemar is not None for c in comps)
    bayes = any(c.prob_a_better is not None for c in comps)
    corr = next((c.cluster_correction for c in comps if c.cluster_correction), "paper")
    adj = ADJUST_HEADS[adjust]
    adj_latex = adj.replace(" p", " $p$")
    ci_head = f"{level:.0%} CI"
    if compact:
        cols = [Column("pair", "A − B", "$A - B$", numeric=False), Column("diff", "Diff", "Diff."),
                Column("se", "SE clustered paired" if clustered else "SE paired",
                       "Clustered paired SE" if clustered else "Paired SE")]
    else:
        cols = [Column("pair", "A − B", "$A - B$", numeric=False), Column("n", "n", "$n$"),
                Column("diff", "Diff", "Diff."), Column("se_unpaired", "SE unpaired", "Unpaired SE"),
                Column("se_paired", "SE paired", "Paired SE")]
        if clustered:
            cols += [Column("se_clustered", "SE CR2", "CR2 SE"),
                     Column("se_paper", *_PAIR_REFERENCE[corr][:2])]
    if clustered:
        cols.append(Column("df", "df", "df"))
    cols += [Column("ci", ci_head, ci_head.replace("%", r"\%"))]
    adjusted = not compact and adjust != "none" and any(c.ci_adjusted is not None for c in comps)
    if adjusted:
        head = ADJUSTED_CI_HEADS[adjust]
        cols.append(Column("ci_adj", head, head))
    cols += [Column("rho", "ρ", r"$\rho$"), Column("p", "p", "$p$"), Column("p_adj", adj, adj_latex),
             Column("verdict", "Verdict", "Verdict", numeric=False)]
    wild = not compact and any(c.wild_bootstrap is not None and c.wild_bootstrap.p_value is not None
                               for c in comps)  # no column of dashes
    if wild:
        cols.append(Column("wild", "Wild bootstrap p", "Wild bootstrap $p$"))
    if mcnemar:
        cols.append(Column("mcnemar", "McNemar p (mid-p)", "McNemar $p$ (mid-$p$)"))
    if bayes:
        cols.append(Column("p_better", "P(A > B)", r"$P(A>B)$"))
        if not compact:
            cols.append(Column("p_tie", "P(tie)", r"$P(\mathrm{tie})$"))
    rows = []
    for c in comps:
        row = [Cell("pair", (c.a, c.b))]
        if compact:
            row += [pct(c.diff), pct(c.se)]
        else:
            row += [Cell("int", c.n_questions), pct(c.diff), pct(c.se_unpaired), pct(c.se_paired)]
            if clustered:
                row += [pct(c.se_clustered_paired), pct(c.se_clustered_paired_paper)]
        if clustered:
            row.append(Cell("num", c.df, digits=1))
        row.append(Cell("interval", c.ci))
        if adjusted:
            row.append(Cell("interval", c.ci_adjusted))
        row += [Cell("num", c.correlation, digits=2), Cell("p", c.p_value), Cell("p", c.p_adjusted),
                text(verdict(c))]
        if wild:
            row.append(Cell("p", None if c.wild_bootstrap is None else c.wild_bootstrap.p_value))
        if mcnemar:
            row.append(Cell("pvalues", None if c.mcnemar is None else (c.mcnemar.p_value, c.mcnemar.p_mid)))
        if bayes:
            row.append(Cell("num", c.prob_a_better, digits=3))
            if not compact:
                row.append(Cell("num", c.prob_tie, digits=3))
        rows.append(tuple(row))
    basis = ("CR2 SE of the paired differences with t on the Bell–McCaffrey df (df column)"
             if clustered else "paired SE (M7) with z")
    single = clustered and any(c.test == "z_paired" for c in comps)
    if single:  # a pair whose common questions lie in one cluster has no CR2 SE
        basis += "; a pair whose common questions lie in one cluster (df –), the paired SE (M7) with z"
    use = ("; the letter groups (when shown), the simultaneous rank intervals, the tie-zone sentence, the "
           "pairs figure and the heatmap's marks use it (the set tied with the best and each model's own "
           "rank interval use the model's own comparisons, a smaller family)" if main else "")
    notes = [f"Differences in points; CI and p use the {basis}, one pair at a time. Verdict: "
             f"one decision per pair, from the {adj} (adjusted over {family_size(family)}){use}."]
    if adjusted:
        notes.append(ADJUSTED_CI_NOTES[adjust] + " One that excludes 0 is always a pair declared different.")
    if clustered and not compact:
        notes.append(f"{_PAIR_REFERENCE[corr][0]} is {_PAIR_REFERENCE[corr][2]}, shown for reference "
                     "(--cluster-correction picks it; the CI and p always use CR2); with few effective "
                     "clusters a z-test on it rejects far too often.")
    if wild:
        notes.append("Wild bootstrap p: wild cluster restricted bootstrap-t, a second opinion "
                     "computed where df < 10.")
    if mcnemar and clustered:
        notes.append("McNemar assumes independent questions: with clusters it is a reference, "
                     "not a check of the headline.")
    notes = tuple(notes)
    caption = f"Pairwise differences in points; {adj} adjusts over {family_size(family)}."
    basis_note = (f"The {basis} gives the interval and the two-sided p; ρ is the correlation of "
                  "per-question scores.")
    return Table("pairs", "Pairwise comparisons", tuple(cols), tuple(rows), notes, caption,
                 latex_notes=(basis_note,))


def verdict(c) -> str:
    """The decision of one comparison, in words."""
    if not c.different:
        return "not different"
    return f"{c.a} higher" if c.diff > 0 else f"{c.b} higher"


def family_size(fam) -> str:
    """The family in words: "all 300 pairs", "the 24 pairs with MODEL"."""
    if fam is None:
        return "the pairs shown"
    n = len(fam.rows)
    if fam.family == "all":
        return "the only pair" if n == 1 else f"all {n:,} pairs"
    return f"the {n:,} pair{'' if n == 1 else 's'} with {fam.family[3:]}"


def ranking_table(ranking) -> Table:
    """One row per model: rank by the estimate, one rank interval (the model's
    own by default; ``--rank-intervals`` shows the simultaneous one or both),
    membership of the confidence set for the best, and the Bayesian ranks."""
    bayes = any(r.p_best is not None for r in ranking)
    show = getattr(ranking, "show", "own")
    # the model first: a table split into blocks (LaTeX, narrow pages) repeats its first column
    cols = [Column("model", "Model", numeric=False), Column("rank", "Rank"), Column("rank_score", "Score")]
    if show in ("own", "both"):
        cols.append(Column("rank_own", "Rank interval", "Rank interval"))
    if show in ("simultaneous", "both"):
        cols.append(Column("rank_all", "Ranks, all models", "Ranks (all)"))
    cols.append(Column("tied_best", "Tied with best", "Tied with best", numeric=False))
    if bayes:
        cols += [Column("p_best", "P(best)", r"$P(\mathrm{best})$"),
                 Column("rank_expected", "E[rank]", r"$E[\mathrm{rank}]$"),
                 Column("rank_credible", "Rank CrI", "Rank CrI")]
    rows = []
    for r in ranking:
        row = [text(r.model), Cell("int", r.rank), pct(r.mean)]
        if show in ("own", "both"):
            row.append(Cell("span", r.rank_marginal))
        if show in ("simultaneous", "both"):
            row.append(Cell("span", r.rank_simultaneous))
        row.append(text("yes" if r.tied_with_best else ""))
        if bayes:
            row += [Cell("num", r.p_best, digits=3), Cell("num", r.expected_rank, digits=1),
                    Cell("span", r.rank_credible)]
        rows.append(tuple(row))
    notes = [ranking_note(ranking, show)]
    if bayes:
        notes.append(f"P(best), expected rank and the {ranking.level:.0%} rank credible interval come "
                     f"from joint posterior draws of the scores ({ranking.bayes}); they carry no "
                     "multiplicity adjustment and answer a different question than the set.")
    caption = f"Ranks and the set tied with the best ({ranking.level:.0%})" + (
        "; posterior ranks." if bayes else ".")
    return Table("ranking", "Ranking", tuple(cols), tuple(rows), tuple(notes), caption)


def ranking_note(ranking, show: str) -> str:
    """What the Ranking table's intervals and its 'Tied with best' column promise."""
    level = f"{ranking.level:.0%}"
    fam = ranking.family
    size = fam.get("size", 0)
    which = (("the only pair" if size == 1 else f"all {size:,} pairs") if fam.get("pairs", "all") == "all" else
             f"the {size:,} pairs with {fam['pairs'][3:]}")
    confidence = fam.get("adjust") in ("romano-wolf", "holm")
    own = (f"A model's rank interval counts the models declared better and worse than it in its own "
           f"comparisons, both directions at once (Mogstad, Romano, Shaikh & Wilhelm 2024); it holds at "
           f"{level} for that model.")
    simultaneous = (f"'Ranks, all models' uses the decisions of the pairs table ({which}) and "
                    + ("holds for every model at once." if confidence else
                       "is descriptive with this adjustment, not a confidence interval."))
    tied = (f"Tied with best: the best model is in this set with {level} confidence; a model leaves it "
            "when one of its own one-sided comparisons shows another model better (a smaller question "
            "than its rank interval, so a model can leave the set while its interval still starts at 1). "
            "A model can stay in the set while another with the same or a higher score leaves it when "
            "its comparisons are noisier (fewer shared questions, more variation between clusters).")
    parts = ["Rank 1 is the best."] + ([own] if show in ("own", "both") else [])
    parts += [simultaneous] if show in ("simultaneous", "both") else []
    return " ".join(parts + [tied])


def variance_table(scores) -> Table | None:
    rows = [(text(m.model), Cell("num", m.variance.between_questions, digits=4),
             Cell("num", m.variance.within_questions, digits=4),
             Cell("int", m.variance.k_recommended))
            for m in scores if m.variance is not None]
    if not rows:
        return None
    cols = (Column("model", "Model", numeric=False), Column("between", "Var(x) between"),
            Column("within", "E[σ²] within"),
            Column("k_rec", "K where more samples stop paying off"))
    return Table("variance", "Variance within and between questions (K > 1)", cols, tuple(rows),
                 caption="Variance of per-question scores between and within questions.")


def sensitivity_table(rows, level: float) -> Table | None:
    if not rows:
        return None
    priors = [k for k in rows[0] if k != "model"]
    cols = (Column("model", "Model", numeric=False),
            *[Column(p, f"{p} {level:.0%}") for p in priors])
    body = tuple((text(r["model"]), *[Cell("interval", r[p]) for p in priors]) for r in rows)
    return Table("sensitivity", "Prior sensitivity (Beta posterior)", cols, body,
                 caption="Beta posterior intervals under several priors.")


def suite_table(suite) -> Table:
    """Each model's suite score and interval under each weighting (``docs/methods.md`` §3.12)."""
    heads = {"macro": "Macro (tasks equal)", "size": "Size-weighted (questions equal)", "user": "Your weights"}
    weightings = list(suite.weights)
    by = {(s.model, s.weighting): s for s in suite.scores}
    models = sorted(dict.fromkeys(s.model for s in suite.scores),  # best macro score first, "–" last
                    key=lambda m: (-by[m, suite.headline].mean if math.isfinite(by[m, suite.headline].mean)
                                   else math.inf))
    cols = [Column("model", "Model", numeric=False)]
    for w in weightings:
        cols += [Column(f"{w}", heads[w]), Column(f"{w}_ci", f"{suite.level:.0%} interval"),
                 Column(f"{w}_df", "df")]
    rows = tuple((text(m), *[c for w in weightings for c in (Cell("pct_se", by[m, w].mean, by[m, w].se),
                                                             Cell("interval", by[m, w].ci),
                                                             Cell("num", by[m, w].df, digits=1))])
                 for m in models)
    return Table("suite", f"Suite of {len(suite.tasks)} tasks", tuple(cols), rows,
                 caption="Suite scores: weighted means of task means, tasks as fixed strata.")


def suite_weighting_name(suite) -> str:
    """The headline weighting of a suite, in words."""
    if getattr(suite, "clusters_as_strata", False):
        return "the clusters as fixed strata, questions equal"
    return {"user": "your weights", "macro": "macro weights (tasks equal)",
            "size": "size weights (questions equal)"}[suite.headline]


def suite_ranking_table(suite) -> Table | None:
    """The ranking under the suite's headline weighting: own rank interval and the set tied
    with the best (``docs/methods.md`` §3.10, §3.12)."""
    if not suite.ranking:
        return None
    cols = (Column("model", "Model", numeric=False), Column("rank", "Rank"), Column("rank_score", "Suite score"),
            Column("rank_own", "Rank interval"), Column("tied_best", "Tied with best", numeric=False))
    rows = tuple((text(r.model), Cell("int", r.rank), pct(r.mean), Cell("span", r.rank_own),
                  text("yes" if r.tied_with_best else "")) for r in suite.ranking)
    name = suite_weighting_name(suite)
    return Table("suite_ranking", f"Suite ranking ({name})", cols, rows,
                 caption=f"Ranks by the suite score under {name}, {suite.level:.0%} rank intervals and the set "
                         "tied with the best; tasks as fixed strata.")


def suite_order(suite, weighting: str) -> list:
    """Models best first by their suite score under ``weighting`` ("–" last)."""
    by = {s.model: s.mean for s in suite.of(weighting)}
    return sorted(by, key=lambda m: -by[m] if math.isfinite(by[m]) else math.inf)


def suite_pairs(suite, weighting: str, which: str = "auto") -> list:
    """The suite differences to show under ``weighting``, as ``--pairs`` selects
    (:func:`select_pairs`): ``all``; ``vs=MODEL``; ``adjacent`` (neighbours in that
    weighting's ranking); ``auto``: every pair up to 45, else adjacent."""
    pairs = suite.pairs_of(weighting)
    if str(which).startswith("vs="):
        base = str(which)[3:]
        return [p for p in pairs if base in (p.a, p.b)]
    if which == "all" or (which == "auto" and len(pairs) <= 45):
        return pairs
    rank = {m: i for i, m in enumerate(suite_order(suite, weighting))}
    return [p for p in pairs if abs(rank[p.a] - rank[p.b]) == 1]


def suite_pairs_table(suite, pairs) -> Table:
    """Suite differences A − B (the better of the two first), their interval and
    Holm-adjusted p over every pair of the weighting (``docs/methods.md`` §3.12)."""
    level = suite.level
    cols = (Column("pair", "A − B", "$A - B$", numeric=False), Column("diff", "Diff"), Column("df", "df"),
            Column("ci", f"{level:.0%} CI", f"{level:.0%} CI".replace("%", r"\%")), Column("p", "p", "$p$"),
            Column("p_adj", "Holm p", "Holm $p$"), Column("verdict", "Verdict", numeric=False))
    rank = {m: i for i, m in enumerate(suite_order(suite, pairs[0].weighting))} if pairs else {}
    rows = []
    for p in sorted(pairs, key=lambda p: (min(rank[p.a], rank[p.b]), max(rank[p.a], rank[p.b]))):
        a, b, d, ci = p.a, p.b, p.diff, p.ci
        if rank[b] < rank[a]:  # the better first, so every shown difference reads "how far ahead"
            a, b, d, ci = b, a, -d, (-ci[1], -ci[0])
        shown = math.isfinite(p.p_holm) and p.p_holm < 1 - level
        verdict = ("–" if not math.isfinite(p.p_value) else  # no test: not "not different"
                   (f"{a} higher" if d > 0 else f"{b} higher") if shown else "not different")
        rows.append((Cell("pair", (a, b)), Cell("pct_se", d, p.se), Cell("num", p.df, digits=1),
                     Cell("interval", ci), Cell("p", p.p_value), Cell("p", p.p_holm), text(verdict)))
    return Table("suite_pairs", "Suite comparisons", cols, tuple(rows),
                 caption="Suite differences A − B (better first), tasks as fixed strata; Holm over the pairs.")


def task_groups_table(gs) -> Table:
    """lm-eval's groups: its published score and stderr beside bayeserr's score of the same
    group under the same weighting, with the stratified SE (``docs/methods.md`` §3.12)."""
    level = gs.level
    cols = (Column("group", "Group", numeric=False), Column("model", "Model", numeric=False),
            Column("weighting", "Weighting", numeric=False),
            Column("published", "lm-eval score (stderr)"), Column("mean", "bayeserr score (SE)"),
            Column("ci", f"{level:.0%} interval", f"{level:.0%} interval".replace("%", r"\%")),
            Column("df", "df"), Column("agree", "Same score", numeric=False))
    rows = []
    for g in gs.groups:
        for s in gs.of(g.group):
            agree = "–" if s.agree is None else ("yes" if s.agree else f"no ({100 * s.diff:+.2f})")
            rows.append((text(g.group), text(s.model), text(s.weighting or "unknown"),
                         Cell("pct_se", s.published, s.published_stderr) if s.published is not None
                         else text("–"),
                         Cell("pct_se", s.mean, s.se), Cell("interval", s.ci), Cell("num", s.df, digits=1),
                         text(agree)))
    return Table("task_groups", "lm-eval groups", cols, tuple(rows),
                 caption="lm-eval's group scores with its pooled stderr, and bayeserr's score of the same "
                         "group (tasks as fixed strata).")


def _cut(iv, low: float) -> tuple:
    """An interval cut to what the quantity can be: [0, 1] for a mean, [−1, 1] for a difference."""
    return (min(max(iv.lower, low), 1.0), min(max(iv.upper, low), 1.0))


def judge_table(j) -> Table:
    """Judge-scored models corrected by the human labels (``docs/methods.md`` §3.14): the
    human-scored mean by PPI++ (the headline), the labelled subset alone, the judge alone,
    the judge's bias, the labels the judge was worth and the agreement."""
    level = j.level
    ci = f"{level:.0%} CI"
    cols = (Column("model", "Model", numeric=False), Column("labels", "Labels"),
            Column("ppi", "Human-scored (PPI++)"), Column("ppi_ci", ci, ci.replace("%", r"\%")),
            Column("classical", "Labelled only"), Column("classical_ci", ci, ci.replace("%", r"\%")),
            Column("judge", "Judge only"), Column("bias", "Judge bias"),
            Column("worth", "Labels worth"), Column("agreement", "Agreement", numeric=False))
    rows = []
    for m in j.models:
        r = m.result
        a = m.agreement
        agree = ("–" if a is None else
                 f"κ {a.kappa:.2f}" if hasattr(a, "kappa") else f"α {a.alpha:.2f}")
        rows.append((text(m.model), Cell("int", r.n_labelled),
                     Cell("pct_se", r.ppi.estimate, r.ppi.se), Cell("interval", _cut(r.ppi, 0.0)),
                     Cell("pct_se", r.classical.estimate, r.classical.se),
                     Cell("interval", _cut(r.classical, 0.0)),
                     Cell("pct_se", r.judge_only.estimate, r.judge_only.se),
                     Cell("pct_se", r.bias.estimate, r.bias.se), Cell("num", r.effective_labels, digits=0),
                     text(agree)))
    return Table("judge", "Judge corrected by human labels", cols, tuple(rows),
                 caption="Human-scored means from the judge's scores corrected by the human-labelled "
                         "subset (PPI++), beside the labelled subset alone and the judge alone.")


def judge_pairs_table(j, pairs) -> Table:
    """A − B of human-scored means (PPI++ on the paired differences), the better first."""
    level = j.level
    cols = (Column("pair", "A − B", "$A - B$", numeric=False), Column("labels", "Labels"),
            Column("diff", "Diff (PPI++)"),
            Column("ci", f"{level:.0%} CI", f"{level:.0%} CI".replace("%", r"\%")),
            Column("p", "p", "$p$"), Column("p_holm", "p (Holm)", "$p$ (Holm)"),
            Column("judge", "Judge only"), Column("verdict", "Verdict", numeric=False))
    said = {"a": lambda p: f"{p.a} higher", "b": lambda p: f"{p.b} higher", "tie": lambda p: "not different"}
    rows = []
    for p in pairs:
        r = p.result
        corrected, judged = p.verdict(level), p.verdict(level, judge=True)
        verdict = said[corrected](p) + ("" if judged == corrected else f" (judge alone: {said[judged](p)})")
        rows.append((Cell("pair", (p.a, p.b)), Cell("int", r.n_labelled),
                     Cell("pct_se", r.ppi.estimate, r.ppi.se),
                     Cell("interval", _cut(r.ppi, -1.0)), Cell("p", p.p_value), Cell("p", p.p_holm),
                     Cell("pct", r.judge_only.estimate), text(verdict)))
    return Table("judge_pairs", "Judge-corrected comparisons", cols, tuple(rows),
                 caption="A − B of human-scored means (PPI++ on the paired differences), Holm over the pairs.")


def tasks_table(res) -> Table:
    """The leaderboard over tasks like these (``docs/methods.md`` §3.15): each model's mean over
    tasks with its t interval on T − 1 df, the between- and within-task spread, its rank, own
    rank interval, the set tied with the best and its rank prediction interval for a new task."""
    level = f"{res.level:.0%}"
    cols = (Column("model", "Model", numeric=False), Column("rank", "Rank"),
            Column("task_mean", "Mean over tasks"), Column("task_ci", f"{level} CI", level.replace("%", r"\%") + " CI"),
            Column("between_sd", "Between-task SD"), Column("within_se", "Within-task SE"),
            Column("rank_own", "Rank interval"), Column("tied_best", "Tied with best", numeric=False),
            Column("rank_new", "Rank in a new task"))
    rows = tuple((text(m.model), Cell("int", m.rank), pct(m.mean), Cell("interval", m.ci), pct(m.between_sd),
                  pct(m.within_se), Cell("span", m.rank_own), text("yes" if m.tied_with_best else ""),
                  Cell("span", m.rank_new)) for m in res.models)
    if any(m.p_best_bayes is not None for m in res.models):  # the models × tasks posterior (§5.7)
        cols += (Column("p_best", "P(best), Bayes", r"$P(\mathrm{best})$"),
                 Column("rank_credible", "Rank credible interval", "Rank CrI"))
        rows = tuple((*row, Cell("num", m.p_best_bayes, digits=3), Cell("span", m.rank_credible))
                     for row, m in zip(rows, res.models))
    return Table("over_tasks", "Over tasks like these", cols, rows,
                 caption=f"Means over the {len(res.tasks)} tasks read as a sample of tasks like them: t on "
                         f"{len(res.tasks) - 1} df, {level} rank intervals, the set tied with the best, and each "
                         f"model's rank prediction interval for a new task ({res.rank_level:.1%}).")


def readings_table(res) -> Table:
    """One line per reading of the same models: what it generalises over, how, and how many
    are tied with #1 (the chosen reading first)."""
    from bayeserr.base.formats import some
    n = len(res.models)
    cols = (Column("reading", "Generalises over", numeric=False),
            Column("reading_method", "Method", numeric=False),
            Column("tied_count", "Tied with #1"), Column("tied_names", "Which", numeric=False))

    def which(r) -> str:
        if not r.tied and r.note:
            return r.note
        return some(r.tied, 12) + (f" ({r.note})" if r.note else "")
    rows = tuple((text(r.unit + (" (chosen)" if i == 0 else "")), text(r.method + ("" if r.guarantee else
                                                                                   "; no guarantee")),
                  text("–" if not r.tied and r.note else f"{len(r.tied)} of {n}"), text(which(r)))
                 for i, r in enumerate(res.readings))
    return Table("readings", "How far the answer generalises", cols, rows,
                 caption=f"The models tied with #1 at {res.level:.0%} under each reading of the same {n} models.")


# ------------------------------------------------------------------ reliability over repeated runs (§6.2)
def pass_hat_k_table(res) -> Table:
    """pass^k of each model: at the largest k its interval, rank interval and the set tied with the
    best (and the Beta–Binomial posterior when computed, left empty where it misses the estimate),
    then the smaller k (the answer's columns first, so a wide table scrolls past the detail)."""
    K, level = res.compare_k, f"{res.level:.0%}"
    ranks = {r.model: r for r in res.ranking} if res.ranking is not None else {}
    by_model = {}
    for r in res.rows:
        by_model.setdefault(r.model, {})[r.k] = r
    bayes = any(r.bayes is not None for r in res.rows)
    cols = (Column("model", "Model", numeric=False), Column(f"pass_hat_{K}", f"pass^{K}", f"pass$^{{{K}}}$"),
            Column("ci", f"{level} interval", f"{level.replace('%', chr(92) + '%')} interval"))
    if ranks:
        cols += (Column("rank_own", "Rank interval"), Column("tied_best", "Tied with best", numeric=False))
    if bayes:
        cols += (Column("bayes", "New question, Beta–Binomial", "Beta--Binomial"),)
    others = [k for k in res.ks if k != K]
    cols += tuple(Column(f"pass_hat_{k}", f"pass^{k}", f"pass$^{{{k}}}$") for k in others)
    rows = []
    for model, at in by_model.items():
        row = (text(model), pct(at[K].estimate), Cell("interval", at[K].ci))
        if ranks:
            rank = ranks[model]
            row += (Cell("span", rank.rank_marginal), text("yes" if rank.tied_with_best else ""))
        if bayes:
            row += (Cell("interval", None if at[K].bayes is None or at[K].bayes_misfit else at[K].bayes),)
        rows.append(row + tuple(pct(at[k].estimate) for k in others))
    return Table("pass_hat_k", "pass^k by model", cols, tuple(rows),
                 caption=f"pass^k (all k runs of a question succeed), unbiased per question and averaged over the "
                         f"{res.n_questions:,} questions, in points; at k = {K} the {level} interval, the rank "
                         "interval and the set tied with the best.")


def reversals_table(reversals, level: float) -> Table:
    """Pairs that change order from pass@1 to pass^k: whether the pass^k verdict declares the
    new order, the test of the change in the gap, then both gaps."""
    K = reversals[0].k
    cols = (Column("ahead", "Ahead at pass@1", numeric=False), Column("behind", f"Ahead at pass^{K}", numeric=False),
            Column("confirmed", f"Declared ahead at pass^{K}", numeric=False),
            Column("p_k", f"p at pass^{K} (adj.)"), Column("change", "Change in gap (SE)"),
            Column("change_df", "df"), Column("change_p", "p of the change (Holm)"),
            Column("significant", "Change significant", numeric=False),
            Column("diff_1", "Gap at pass@1"), Column("diff_k", f"Gap at pass^{K}"))
    rows = tuple((text(r.a), text(r.b), text("yes" if r.confirmed else ""), Cell("p", r.p_k),
                  Cell("pct_se", r.change, se=r.change_se), Cell("num", r.change_df, digits=1),
                  Cell("p", r.change_p_holm), text("yes" if r.significant else ""), pct(r.diff_1), pct(r.diff_k))
                 for r in reversals)
    return Table("reversals", f"Order changes from pass@1 to pass^{K}", cols, rows,
                 caption=f"Pairs ahead at pass@1 and behind at pass^{K}: whether the pass^{K} pair's verdict "
                         f"(the report's adjustment) declares the new order; the change in the gap (points, A − B) "
                         f"tested per question, Holm over these pairs at {level:.0%}.")


def noise_ks(res) -> list[int]:
    """The k of the noise table: 1 and the largest k shown with 2k runs of every question."""
    return sorted({1, max((k for k in res.ks if 2 * k <= res.runs), default=1)})


def run_noise_table(res) -> Table:
    """Where each model's pass^k uncertainty comes from: the spread between questions and the
    run-to-run noise of each question's estimate (:func:`noise_ks`)."""
    ks = noise_ks(res)
    cols = (Column("model", "Model", numeric=False), Column("k", "k"),
            Column("between_sd", "Between-question SD"), Column("run_se", "Run-to-run SE"),
            Column("run_share", "Run noise share of the variance"))
    rows = tuple((text(r.model), Cell("int", r.k), pct(r.between_sd), pct(r.run_se, 2), pct(r.run_share))
                 for r in res.rows if r.k in ks)
    return Table("run_noise", "Where the noise comes from", cols, rows,
                 caption="Between-question SD: how far the questions' true pass^k spread (more questions shrink "
                         "its part); run-to-run SE: the part of the SE that more runs per question would shrink.")


def flaky_table(flaky, models_shown: int = 6) -> Table:
    """The questions whose runs disagree the most, with each model's right runs of its runs."""
    cols = (Column("question", "Question", numeric=False), Column("run_variance", "Run-to-run variance"),
            Column("models_split", "Models whose runs disagree"), Column("counts", "Right / runs", numeric=False))

    def counts(f) -> str:
        split = [(m, c, n) for m, c, n in f.counts if 0 < c < n]  # the models whose runs disagree
        shown = "; ".join(f"{m} {c}/{n}" for m, c, n in split[:models_shown])
        more = len(split) - models_shown
        agree = len(f.counts) - len(split)
        return (shown + (f"; and {more} more" if more > 0 else "")
                + (f" (runs agree for {agree} other model{'s' if agree > 1 else ''})" if agree else ""))
    rows = tuple((text(f.question), Cell("num", f.run_variance, digits=3), Cell("int", f.models_split),
                  text(counts(f))) for f in flaky)
    return Table("flaky", "Flaky questions", cols, rows,
                 caption="Questions whose runs disagree the most: mean over the models of p̂(1 − p̂)·n/(n − 1).")
