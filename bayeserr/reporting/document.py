"""A report as a sequence of neutral blocks (headings, paragraphs, lists,
tables, figures) that each renderer writes out in its own syntax.

:mod:`bayeserr.reporting.sections` lays ``bayeserr report`` out from the blocks
of its sections here, once for Markdown, HTML and LaTeX; :func:`comparison_blocks`
lays out ``bayeserr compare``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from bayeserr.registries import caveats
from bayeserr.reporting import tables
from bayeserr.reporting.text import interval, number, pct, pval

MAX_NAMES = caveats.NAMES_SHOWN  #: models or pairs a warning line names before "… and N more"


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str
    role: str = "text"  #: text | note | rows | verdict
    user_text: bool = False  #: holds model names: renderers escape it as user text
    latex: bool = True  #: shown by the LaTeX tables (as a comment); False: said there otherwise


@dataclass(frozen=True)
class Bullets:
    items: tuple  #: (code or None, text)
    role: str = "warnings"


@dataclass(frozen=True)
class Fold:
    """Blocks shown under a title, folded where the format can (HTML ``<details>``)."""

    title: str
    blocks: tuple


def flatten(blocks) -> list:
    """``blocks`` with each :class:`Fold` as a level-3 heading and its blocks (Markdown)."""
    out = []
    for b in blocks:
        out += [Heading(b.title, 3), *flatten(b.blocks)] if isinstance(b, Fold) else [b]
    return out


@dataclass(frozen=True)
class Figure:
    kind: str  #: a key of bayeserr.renderers.plots.FIGURES
    svg: str | None = None  #: a figure drawn already (inline SVG), e.g. a watched run's sequence




def _reasons(dropped) -> str:
    return " (" + "; ".join(f"{d['count']} {_reason(d['reason'])}" for d in dropped) + ")" if dropped else ""


def _reason(reason: str) -> str:
    """A row-accounting reason in a sentence: "500 removed by --where x>1", not "500 --where x>1"
    (which reads as if those rows matched the filter)."""
    return f"removed by {reason}" if reason.startswith("--") else reason


def rows_text(rows) -> str:
    """The row accounting in one sentence (``rows`` as in the JSON report);
    with several inputs, a second sentence gives each input's."""
    text = (f"Rows read: {rows['read']}; used: {rows['used']}; dropped: {rows['read'] - rows['used']}"
            f"{_reasons(rows.get('dropped', []))}.")
    inputs = rows.get("inputs") or []
    if inputs:
        text += " By input: " + "; ".join(
            f"{i['input']}: read {i['read']}, used {i['used']}, dropped {i['read'] - i['used']}"
            f"{_reasons(i.get('dropped', []))}" for i in inputs) + "."
    notes = rows.get("notes") or []  # what the reader must know about how rows were read
    if notes:
        text += " " + " ".join(notes)
    return text


def warning_items(warnings, limit: int | None = MAX_NAMES) -> tuple:
    """``(code, text)``: one line per kind of warning, naming the models or
    pairs it concerns (at most ``limit`` names, then a count; ``None``: all)
    — :func:`bayeserr.registries.caveats.summary`.  Every warning is in the JSON."""
    grouped = defaultdict(list)
    for w in warnings:
        grouped[w.code].append(w)
    return tuple((code, caveats.summary(ws, limit)) for code, ws in grouped.items())


def warnings_blocks(warnings, limit=MAX_NAMES) -> list:
    if not warnings:
        return [Para("No warnings.")]
    return [Bullets(warning_items(warnings, limit))]


def bayes_note(settings, clustered: bool, sampled: bool = True, pairs: bool = True,
               skipped: bool = False) -> str:
    """Which Bayesian model produced the posterior columns (``sampled``: whether
    any model needed NUTS under ``--bayes mcmc``; ``skipped``: the three-level
    posterior was left out, warning ``not_computed``)."""
    from bayeserr.models.beta_binomial import prior_label
    hier = ("PyMC NUTS (three levels with clusters and K > 1)" if settings.mode == "mcmc" and sampled
            else "exact quadrature" + ("" if settings.mode != "mcmc" else
                                       " (no model needed a sampler: nothing was sampled)")
            + (" (left out where it has three levels and no table shows it: warning not_computed; "
               "--bayes full computes it)" if skipped else ""))
    model = ("normal model with a cluster random effect on the paired differences" if clustered else
             "Dirichlet 2×2 posterior (0/1, K = 1) or Bayesian bootstrap over questions")
    where = "in the JSON" if skipped else "all in the JSON"
    return (f"Bayesian intervals (--bayes {settings.mode}; {where}, and as columns with --methods all): "
            "Beta posterior with prior "
            f"{prior_label(settings.prior)}; hierarchical Beta–Binomial posterior of the mean by "
            f"{hier}; for fractional scores, the Bayesian bootstrap and, with clusters, the "
            "cluster-effect posterior (a cluster random effect on the mean, inside [0, 1])"
            + (f"; P(A > B) and P(tie) (|A − B| < {100 * settings.rope:g} pt) from the {model}." if pairs else "."))


ADJUST_NAMES = {"romano-wolf": "Romano–Wolf step-down", "holm": "Holm", "bh": "Benjamini–Hochberg",
                "none": "no adjustment"}


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


#: the adjusted intervals by adjustment, in words
INTERVAL_NAMES = {"romano-wolf": "simultaneous intervals (joint max |t|)",
                  "holm": "simultaneous intervals (Bonferroni)",
                  "bh": "false-coverage-rate intervals (Benjamini–Yekutieli)",
                  "none": "unadjusted intervals"}
#: adjustments that hold the family-wise error (their rank intervals are confidence intervals)
FWER = ("romano-wolf", "holm")


def family_text(fam: dict) -> str:
    """Which family the decisions cover and how its joint distribution was drawn."""
    if not fam:
        return ""
    size = plural(fam["size"], "pair")
    family = (("the only pair" if fam["size"] == 1 else f"all {size}") if fam["pairs"] == "all"
              else f"the {size} with {fam['pairs'][3:]}")
    j = fam["joint"]
    if j["method"] == "wild_cluster":
        drawn = (f"joint wild cluster bootstrap, {j['weights'].capitalize()} weights, {j['draws']:,} weight "
                 f"vectors ({'all of them' if j['exact'] else 'random'}; the smallest adjusted p they "
                 f"can give is {j['min_p']:.2g})")
    else:
        drawn = f"{j['draws']:,} joint normal draws of the pair statistics"
    rw = ("simultaneous intervals and p-values" if fam["adjust"] == "romano-wolf" else
          f"{INTERVAL_NAMES[fam['adjust']]}; the Romano–Wolf p (JSON)")
    m0 = fam.get("one_cluster_pairs") or 0
    floor = (f" {plural(m0, 'pair')}' questions lie in one cluster (tested by the paired z, with no wild "
             f"draws): the level is split, Holm over those at {m0}/{fam['size']} of α and Romano–Wolf over "
             f"the others at the rest." if m0 else "")
    return (f"{ADJUST_NAMES[fam['adjust']]} over {family} at {fam['level']:.0%} "
            f"({fam['n_different']:,} declared different); {rw} from {drawn}.{floor}")


def _tie_zone_text(tz, level) -> str:
    out = []
    big, small = tz.get("largest_not_different"), tz.get("smallest_different")
    if big or small:
        parts = []
        if small:
            parts.append(f"the smallest gap declared different is {pct(small['diff'])} points "
                         f"({small['a']} vs {small['b']})")
        if big:
            parts.append(f"the largest gap not declared different is {pct(big['diff'])} points "
                         f"({big['a']} vs {big['b']})")
        out.append(f"In this report, {' and '.join(parts)}.")
    paired = (f" or {pct(tz['paired_median'])} paired (median over pairs)"
              if tz.get("paired_median") is not None else "")
    out.append(f"For one pair alone (no multiplicity), the {level:.0%} half-width of a difference is "
               f"{pct(tz['unpaired'])} points unpaired{paired}; with clusters, wider.")
    return " ".join(out)


def ranking_sentence(r) -> str:
    """The leaderboard's answer: the set tied with the best with its guarantee
    in words, the top-k set, what few clusters limit, and why the Bayesian
    P(best) may read differently (``docs/methods.md`` §3.10)."""
    return " ".join([ranking_answer(r), ranking_details(r)]).strip()


def ranking_answer(r, limit: int | None = None) -> str:
    """The set tied with the best and its guarantee, one sentence; when its
    names run over ``limit`` characters, their number (the table marks them)."""
    level, tied = f"{r.level:.0%}", r.tied_with_best
    count = f"{len(tied)} of {plural(len(r), 'model')}"
    names = ", ".join(tied)
    who = (f"{count}, marked in the table" if limit is not None and len(names) > limit
           else f"{names} ({count})")
    return f"Tied with the best at {level}: {who}; the best model is in this set with {level} confidence."


#: characters of names a sentence of the ranking lists; beyond, their number and the last one
LIST_NAMES = 200


def ranking_details(r) -> str:
    """What follows the answer: the top-k set, few clusters, the Bayesian P(best)."""
    k, level = r.top_k, f"{r.level:.0%}"
    out = []
    if 1 < k < len(r):  # k = 1 is the set above; every model is among the top M
        out.append(f"Top-{k} set (each model whose true rank is at most {k} is in it with {level} "
                   f"confidence): {_top_k_names(r)}.")
    few = few_clusters_text(r.best)
    if few:
        out.append(few)
    odd = [m for m in r if m.p_best is not None and m.tied_with_best and m.p_best < 1 - r.level]
    if odd:
        names = ", ".join(f"{m.model} ({m.p_best:.3f})" for m in odd[:3]) + (" …" if len(odd) > 3 else "")
        out.append(f"The posterior P(best) is below {1 - r.level:.2g} for {plural(len(odd), 'model')} of the set "
                   f"({names}): it reads each gap at face value under a flat prior with no adjustment for "
                   "the comparisons made, while the set keeps every model the data cannot rule out.")
    return " ".join(out)


def _top_k_names(r) -> str:
    """The top-k set in words: its names, or when long, the models from the best down to its
    lowest-scoring member with the exceptions named (or just their number)."""
    top = r.top_k_set
    names = ", ".join(top)
    if len(names) <= LIST_NAMES:
        return names
    members = [m for m in r if m.in_top_k]
    low = min(members, key=lambda m: m.mean)
    above = [m.model for m in r if m.mean >= low.mean and not m.in_top_k]
    if len(above) <= 3:
        but = f" except {', '.join(above)}" if above else ""
        return (f"{len(top)} of {plural(len(r), 'model')}: every model from the best down to {low.model} "
                f"({pct(low.mean)}){but}")
    return f"{len(top)} of {plural(len(r), 'model')} (the JSON's top_k_set lists them)"


def few_clusters_text(best: dict) -> str:
    """One sentence where few effective clusters limit what the ranking can
    say (Bell–McCaffrey df below 10), else ''."""
    df, c_eff = best.get("df"), best.get("effective_clusters")
    if df is None or c_eff is None or not df < 10:
        return ""
    return (f"The questions fall in about {c_eff:.1f} effective clusters (Bell–McCaffrey df {df:.1f}, the "
            "median over pairs): every comparison's noise is measured from that few clusters, which is why "
            "the intervals are wide; more clusters — not more questions from the same ones — would narrow "
            "them." + ("" if best.get("clusters_as_strata") else
                       " If these clusters are the whole population of interest (a benchmark's fixed "
                       "repositories), --clusters-as strata also ranks with them as fixed strata."))


#: characters of model names the ranking's LaTeX caption lists (beyond: their number; the caption
#: stays within three lines at the 345 pt text width)
CAPTION_NAMES = 90


def ranking_blocks(r, rep, layout) -> list:
    """The Ranking section: its table and answer (in LaTeX, the answer in the caption and the
    rest in the note under the table), how the decisions were made, the ranks figure."""
    table = tables.ranking_table(r)
    latex = replace(table, caption=f"{table.caption} {ranking_answer(r, limit=CAPTION_NAMES)}",
                    latex_notes=(ranking_details(r),))
    out = [Heading("Ranking"), replace(table, latex_variant=latex),
           Para(ranking_sentence(r), "verdict", user_text=True, latex=False),
           Para("Decisions: " + family_text(r.family), "note")]
    if layout.figures:
        out.append(Figure("ranks"))
    return out


def models_blocks(m, rep, layout) -> list:
    """The Models section: the table (letter groups as a column), whose scores these are
    when a judge scored them, which Bayesian model gave the posterior columns, the forest plot."""
    out = [Heading("Models"), tables.models_table(m.scores, rep.level, bayes=rep.bayes is not None,
                                                  methods=rep.methods or "recommended", groups=rep.groups,
                                                  groups_note=rep.groups_note)]
    if rep.judge is not None:
        out.append(Para(judge_pointer(rep.judge), "note", user_text=True, latex=False))
    if rep.bayes is not None:
        clustered = any(s.n_clusters is not None for s in m.scores)
        sampled = not any(w.code == "mcmc_not_needed" for w in rep.warnings)
        skipped = any(w.code == "not_computed" for w in rep.warnings)
        out.append(Para(bayes_note(rep.bayes, clustered, sampled, pairs=len(m.scores) > 1, skipped=skipped),
                        "note", latex=False))
    if layout.figures:
        out.append(Figure("forest"))
    return out


def pairs_blocks(comps, rep, layout) -> list:
    """The Pairwise comparisons section: the pairs ``--pairs`` selects (LaTeX: the headline
    columns only), which were left out, the pairs figure and the heatmap."""
    if not len(comps):
        return []
    out = [Heading("Pairwise comparisons"), *_pairs_table_blocks(comps, rep.scores, rep, "the ranking")]
    if layout.figures:
        out.append(Figure("pairs"))
        if rep.bayes is not None:
            out.append(Figure("heatmap"))
    return out


def _pairs_table_blocks(comps, scores, rep, ranking: str, main: bool = True) -> list:
    """A pairs table of the pairs the report's ``--pairs`` selects (with its LaTeX variant:
    the headline columns only) and the note on those left out (``ranking``: whose
    neighbours are shown)."""
    shown = tables.select_pairs(comps, scores, rep.pairs)
    adjust = comps.family.adjust if comps.family is not None else rep.adjust  # each task: Holm
    compact = tables.pairs_table(shown, rep.level, adjust, compact=True, family=comps.family)
    showing = showing_pairs(len(shown), len(comps), rep.pairs, ranking) if len(shown) < len(comps) else None
    if showing:  # LaTeX: under the table, where the reader of the paper sees it
        compact = replace(compact, latex_notes=(*compact.latex_notes, showing))
    out = [replace(tables.pairs_table(shown, rep.level, adjust, family=comps.family, main=main),
                   latex_variant=compact)]
    if showing:
        out.append(Para(showing, "note", user_text=True, latex=False))
    return out


def showing_pairs(shown: int, every: int, pairs: str, ranking: str) -> str:
    """Which pairs a table shows when it does not show them all (one sentence for every table)."""
    if str(pairs).startswith("vs="):
        return (f"Showing the {shown:,} pairs of the family ({pairs}), as does the JSON; "
                "--pairs all decides and prints every pair.")
    return (f"Showing {shown:,} of {every:,} pairs (neighbours in {ranking}); --pairs all prints every pair, "
            "and the JSON holds them all.")


def sensitivity_blocks(rows, rep, layout) -> list:
    sens = tables.sensitivity_table(rows, rep.level)
    return [] if sens is None else [Heading(sens.title, 3), sens]


def variance_blocks(scores, rep, layout) -> list:
    var = tables.variance_table(scores)
    return [] if var is None else [Heading(var.title, 3), var]


def posterior_figure_blocks(fits, rep, layout) -> list:
    return [Figure("posterior")] if layout.figures else []


def suite_section_blocks(suite, rep, layout) -> list:
    return suite_blocks(suite, rep.pairs)


def task_group_section_blocks(gs, rep, layout) -> list:
    return task_group_blocks(gs)


def judge_section_blocks(j, rep, layout) -> list:
    return judge_blocks(j, layout.figures)


def per_task_blocks(per_task, rep, layout) -> list:
    """After the suite-wide answers: each task alone, folded in HTML."""
    if not per_task:
        return []
    return [Heading("Each task alone"),
            *[task_fold(task, scores, comps, rep) for task, scores, comps in per_task]]


def pass_at_k_blocks(pass_at_k, rep, layout) -> list:
    out = []
    for k, (scores, comps) in pass_at_k.items():
        title = f"pass@{k} (unbiased estimator, per problem)"
        blocks = _scores_and_pairs(scores, comps, rep, f"the pass@{k} ranking")
        captioned = [replace(b, latex_variant=replace(b.latex_variant or b, caption=f"{title}. {b.caption}"))
                     if isinstance(b, tables.Table) else b for b in blocks]  # LaTeX has no heading
        out += [Heading(title), *captioned]
    return out


def tie_zone_blocks(tz, rep, layout) -> list:
    if len(rep.scores) < 2:  # one model: no pair, no tie zone
        return []
    return [Heading("Tie zone"), Para(_tie_zone_text(tz, rep.level), user_text=True)]


def warnings_section_blocks(warnings, rep, layout) -> list:
    return [Heading("Warnings"), *warnings_blocks(warnings, layout.warning_limit)]


def rows_blocks(rows, rep, layout) -> list:
    out = [Heading("Rows"), Para(rows_text(rows), "rows", user_text=True)]
    settings = settings_text(rep.provenance or {})
    if settings:
        out.append(Para(settings, "rows", user_text=True))
    return out


def _scores_and_pairs(scores, comps, rep, ranking: str) -> list:
    """A secondary models table and its pairs table (pass@k, each task of a suite), the
    pairs shown as the report's ``--pairs`` selects them; ``ranking``: whose neighbours
    the shown pairs are ("the pass@1 ranking")."""
    blocks = [tables.models_table(scores, rep.level, bayes=rep.bayes is not None, methods=rep.methods)]
    if len(comps):
        blocks += _pairs_table_blocks(comps, scores, rep, ranking, main=False)
    return blocks


def task_fold(task, scores, comps, rep) -> Fold:
    """One task's models table and pairs table, as the report's."""
    n = max(s.n_questions for s in scores)
    return Fold(f"Task {task}: {len(scores)} models, up to {n:,} questions",
                tuple(_scores_and_pairs(scores, comps, rep, "this task's ranking")))


def suite_blocks(suite, pairs: str = "auto") -> list:
    """The suite section: the table and what each column estimates."""
    from bayeserr.analyses.suite import ESTIMANDS
    tasks = ", ".join(f"{t} ({n})" for t, n in zip(suite.tasks, suite.task_questions))
    clusters = {"within tasks": "each task's variance is clustered within the task (CR2)",
                "none": "questions are independent within each task",
                "are the tasks": "the clusters are the tasks themselves, so questions are independent "
                                 "within each task"}.get(suite.clusters, "")
    said = "; ".join(f"{w}: {ESTIMANDS[w]}" + (" (" + ", ".join(f"{t} {x:.2f}" for t, x in
                                                               zip(suite.tasks, suite.weights[w])) + ")"
                                               if w == "user" else "") for w in suite.weights)
    if suite.clusters == "across tasks":
        how = ("some clusters hold questions of several tasks, so the variance is the CR2 of the stacked "
               "regression with clusters crossing tasks, t on the Bell–McCaffrey df of the pooled clusters")
    else:
        how = (f"tasks are fixed strata: variance Σ w_t² Var_t, {clusters}, t with Satterthwaite-combined "
               "Bell–McCaffrey df")
    pooled = ("The models table treats the tasks as clusters, a sample of tasks like these; here they are "
              "fixed: these tasks, weighted so." if suite.clusters == "are the tasks" else
              "So its SE differs from the models table's, which treats the questions as one pool.")
    strata = [Para(STRATA_TEXT, "verdict")] if getattr(suite, "clusters_as_strata", False) else []
    order_by = {"user": "your weights'", "macro": "macro", "size": "size-weighted"}[suite.headline]
    return [Heading("Suite"), *strata, *suite_ranking_blocks(suite), tables.suite_table(suite),
            Para(f"Tasks (questions): {tasks}. Each suite score is a weighted mean of task means over these "
                 f"tasks ({said}); {how}. {pooled} Best first by the {order_by} score; intervals are cut to "
                 "[0, 1]."
                 + _not_estimable(suite)
                 + " The JSON's suite block holds every pair's suite difference under every weighting.",
                 "note", user_text=True), *suite_pair_blocks(suite, pairs)]


def suite_ranking_blocks(suite) -> list:
    """The suite's answer first: the ranking under its headline weighting and its sentence (in
    LaTeX, printed in the note under the table)."""
    table = tables.suite_ranking_table(suite)
    if table is None:
        return []
    text = suite_ranking_sentence(suite)
    strata = STRATA_TEXT if getattr(suite, "clusters_as_strata", False) else ""
    table = replace(table, latex_notes=tuple(t for t in (strata, text) if t))
    return [table, Para(text, "verdict", user_text=True)]


#: what --clusters-as strata means, said where its answer is
STRATA_TEXT = ("Clusters read as fixed strata (--clusters-as strata): the answer below holds for these clusters, "
               "weighted by their questions (the pooled mean, variance Σ w_c² Var_c with questions independent "
               "within each cluster), not for clusters like them; the other sections read the clusters as a "
               "sample (CR2).")


def suite_ranking_sentence(suite) -> str:
    """The set tied with the best under the suite's headline weighting, and what few df limit."""
    level, tied = f"{suite.level:.0%}", suite.tied_with_best
    name = tables.suite_weighting_name(suite)
    count = f"{len(tied)} of {plural(len(suite.ranking), 'model')}"
    who = f"{count}, marked in the table" if len(", ".join(tied)) > LIST_NAMES else f"{', '.join(tied)} ({count})"
    pairs = suite.pairs_of(suite.headline)
    dfs = [p.df for p in pairs if np.isfinite(p.df)]
    few = ""
    if dfs and float(np.median(dfs)) < 10:
        separated = sum(np.isfinite(p.p_holm) and p.p_holm < 1 - suite.level for p in pairs)
        few = (f" Its comparisons rest on few degrees of freedom (median df {float(np.median(dfs)):.1f}: few "
               "clusters or questions in the tasks that weigh most), which is why its intervals are wide"
               + (": no pair can be declared different under it." if separated == 0 else "."))
    return (f"Under {name}: tied with the best at {level}: {who}; the best model on these tasks, weighted so, "
            f"is in this set with {level} confidence. A rank interval holds for its row (the model's own "
            f"comparisons, both directions); §3.10 of the methods.{few}")


def _not_estimable(suite) -> str:
    """Why a suite score is "–": the tasks a model did not answer, tasks of one question."""
    if all(np.isfinite(x.se) for x in suite.scores):
        return ""
    single = [t for t, n in zip(suite.tasks, suite.task_questions) if n < 2]
    skipped = {m: ts for m, ts in getattr(suite, "unanswered", {}).items() if ts}
    why = []
    if single:
        why.append(f"task{'s' if len(single) > 1 else ''} with one question ({', '.join(single[:5])}"
                   f"{' …' if len(single) > 5 else ''}: no variance; leave it out with --where)")
    if skipped:
        items = [f"{m} skipped {', '.join(ts[:3])}{' …' if len(ts) > 3 else ''}" for m, ts in list(skipped.items())[:5]]
        why.append("tasks a model did not answer (" + "; ".join(items)
                   + (f"; {len(skipped) - 5} more models" if len(skipped) > 5 else "") + ")")
    return (" –: not estimable: " + "; ".join(why) + "." if why else
            " –: not estimable (a task with a single cluster).")


def suite_pair_blocks(suite, pairs: str = "auto") -> list:
    """The suite comparisons under the headline weighting (the user's, else macro), the pairs
    selected as the report's ``--pairs`` selects them."""
    w = suite.headline
    every = suite.pairs_of(w)
    if not every:
        return []
    shown = tables.suite_pairs(suite, w, pairs)
    family = sum(np.isfinite(p.p_holm) for p in every)
    name = tables.suite_weighting_name(suite)
    holm = (f"Holm over the {family:,} pair{'s' if family != 1 else ''} with a test, at {1 - suite.level:.0%}"
            if family else "no pair has a test (a suite score above is not estimable)")
    note = (f"Suite differences under {name}, on the questions both models answered, with the suite score's "
            f"variance (as above); {holm}.")
    if len(shown) < len(every):
        note += " " + showing_pairs(len(shown), len(every), pairs, "the suite ranking")
    note += (" These verdicts answer which model is better on these tasks, weighted so; the Pairwise "
             "comparisons below answer it for all questions pooled (each question equal), a different "
             "estimand, so the two can differ.")
    return [Heading("Suite comparisons", 3), tables.suite_pairs_table(suite, shown), Para(note, "note")]


def task_group_blocks(gs) -> list:
    """lm-eval's groups: the table and what it compares (groups not scored are named)."""
    shown = [g for g in gs.groups if g.scored]
    out = []
    if shown and gs.scores:
        out += [Heading("lm-eval groups", 3), tables.task_groups_table(gs)]
    text = ("Each group is scored as the suite of its leaf tasks under lm-eval's weighting (size: each "
            "question the same; macro: each task 1/T), which the reader takes as the one that gives "
            "lm-eval's published scores back. lm-eval's stderr pools the group's questions as one sample; "
            "bayeserr's SE treats the tasks as fixed strata (Σ w_t² Var_t, each task's variance clustered "
            "within it when the task holds several clusters), with Satterthwaite df.")
    unscored = [f"{g.group} (not in the data: {', '.join(g.missing[:5])}{' …' if len(g.missing) > 5 else ''})"
                for g in gs.groups if not g.scored]
    if unscored:
        text += " Not scored, since their score would not be lm-eval's: " + "; ".join(unscored) + "."
    unknown = [g.group for g in shown if g.weighting is None]
    if unknown:
        text += (" Weighting unknown (neither weighting gives the published scores back), so no score under "
                 "it: " + ", ".join(unknown) + "; the JSON has both the macro and the size scores.")
    return out + [Para(text, "note", user_text=True)] if (out or unscored) else []


def judge_blocks(j, figures: bool = False) -> list:
    """The Judge section: its answer, corrected human-scored means (and with ``figures`` the
    figure of them), the pairs, what each column is."""
    from bayeserr.analyses.judge import shown_pairs
    if not j.models:
        return [Heading("Judge"), Para("No model has a corrected interval; the reasons are in the Warnings.",
                                       "note")]
    worth = [f"{m.model}: {m.result.n_labelled} labels worth {m.result.effective_labels:.0f}"
             for m in j.models[:3] if np.isfinite(m.result.effective_labels)]
    how = ("clustered (CR2, t on the df of the PPI estimating equation)" if j.clustered
           else "t on Welch–Satterthwaite df")
    out = [Heading("Judge"), Para(judge_answer(j), "verdict", user_text=True), tables.judge_table(j),
           Para("The scores above are the judge's. Here the human-labelled answers correct them: "
                "Human-scored (PPI++) is the interval for the mean a human grader would give (prediction-powered "
                f"inference, power-tuned, {how}); Labelled only uses the labelled answers alone; Judge only is "
                "the judge's own mean over every answer, an interval for the judge-scored mean that does not "
                "cover the human mean when the judge is biased; Judge bias is mean(judge − human) on the "
                "labelled answers; Labels worth is the number of labels alone that would give the PPI++ "
                f"interval's precision ({'; '.join(worth)}). Agreement: Cohen's κ (0/1) or Krippendorff's α "
                "(interval) on the labelled answers. The labelled answers must be a random sample of the "
                "answers; intervals are cut to [0, 1] (differences to [−1, 1]).", "note", user_text=True)]
    if figures:
        out.append(Figure("judge"))
    rg = [m for m in j.models if m.rogan_gladen is not None and m.rogan_gladen.usable]
    if rg:
        out.append(Para("Rogan–Gladen (0/1 judge, from its sensitivity and specificity on the labelled answers): "
                        + "; ".join(f"{m.model} {pct(m.rogan_gladen.estimate)} "
                                    f"{interval((m.rogan_gladen.lower, m.rogan_gladen.upper))}" for m in rg[:10])
                        + (" …" if len(rg) > 10 else "") + " (the JSON has every model)"
                        + ("; clustered: CR2, t on the df of its three sets." if j.clustered
                           else "; delta method, normal quantile."), "note",
                        user_text=True))
    if j.pairs:
        shown = shown_pairs(j)
        note = ("A − B of human-scored means on the questions both answered (labelled where both are), "
                f"PPI++ on the paired differences; p (Holm) adjusts over the {len(j.pairs):,} corrected pairs, "
                "and the verdict follows it; Judge only: the judge's difference, and in parentheses the judge's "
                "own verdict (its test, Holm over the same pairs) where the labels change it.")
        if len(shown) < len(j.pairs):
            note += (f" Showing {len(shown):,} of {len(j.pairs):,} pairs (neighbours in the corrected ranking "
                     "and the pairs whose verdict the labels change); "
                     "the JSON holds them all.")
        out += [Heading("Judge-corrected comparisons", 3), tables.judge_pairs_table(j, shown), Para(note, "note")]
    return out  # the warnings are in the report's Warnings section (judge_labels)


def some_names(names, limit: int = MAX_NAMES) -> str:
    """``a, b and c`` (at most ``limit`` names, then ``and N more``)."""
    names = list(names)
    if len(names) > limit:
        return ", ".join(names[:limit]) + f" and {len(names) - limit:,} more"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def judge_pointer(j) -> str:
    """The note under the Models table of a judge-scored report: these are the judge's
    scores, and the human-scored leader in a few words."""
    out = ("These are the judge's scores, as every table but the Judge section: the Judge section gives the "
           "human-scored means, corrected with the human labels")
    s = j.summary
    if s is None or len(j.models) < 2:
        return out + "."
    tied = len(s.tied_with_best)
    return out + (f"; by them, {s.leader} leads" + (f", tied with {tied:,} other model{'s' if tied > 1 else ''}"
                                                   if tied else "") + ".")


def judge_answer(j) -> str:
    """The Judge section's answer in one voice: the human-scored leader, the models the labels
    cannot separate from it, the judge's own leader, and the verdicts the labels change
    (``docs/methods.md`` §3.14.8)."""
    from bayeserr.analyses.judge import MIN_LABELS
    s = j.summary
    best = j.models[0].result.ppi
    said = f"({pct(best.estimate)}, {j.level:.0%} CI {interval((best.lower, best.upper))})"
    if len(j.models) == 1:
        others = max(s.n_models - 1, 0)
        out = (f"Only {s.leader} has a corrected human-scored mean {said}"
               + (f"; the other {others:,} model{'s' if others != 1 else ''} have too few usable labels "
                  "(see the Warnings), so the labels cannot rank the models." if others else "."))
    else:
        out = f"Corrected by the human labels, {s.leader} has the highest human-scored mean {said}."
        if s.tied_with_best:
            out += (f" The labels do not separate it from {some_names(s.tied_with_best)} (Holm over the "
                    f"{s.n_pairs:,} corrected pairs): {'these are' if len(s.tied_with_best) > 1 else 'this is'} "
                    "tied with the best.")
        elif not s.not_compared:
            out += " It is ahead of every other model (Holm over the corrected pairs)."
        if s.not_compared and not s.n_pairs:
            out += (f" No two models have {MIN_LABELS} or more questions labelled for both, so the labels "
                    "cannot say which models are tied with it (compare models on the same questions, and "
                    "label the same questions for each).")
        elif s.not_compared:
            out += (f" It has no corrected comparison with {some_names(s.not_compared)}: fewer than {MIN_LABELS} "
                    "questions labelled for both.")
    if s.judge_leader != s.leader:
        out += f" The judge alone would rank {s.judge_leader} first; " + (
            f"by the human labels it is number {s.judge_leader_rank} of {len(j.models)}."
            if s.judge_leader_rank is not None else "it has no corrected mean.")
    whose = ("the judge's own verdict under the same rule (its paired test, Holm over the same pairs; the "
             "Pairwise section's verdicts on the judge's scores use the report's adjustment and can differ)")
    if s.changed:
        out += (f" Of the {s.n_pairs:,} corrected pairs, the labels change {len(s.changed):,} from {whose}; "
                "they are marked in the comparisons below.")
    elif s.n_pairs:
        out += f" On the {s.n_pairs:,} corrected pairs the labels change none from {whose}."
    return out


def settings_text(prov: dict) -> str:
    """Which configuration files set defaults of this report, and which were found but not trusted."""
    used = [c["path"] for c in prov.get("config", [])]
    ignored = [f"{c['path']} ({c['why']})" for c in prov.get("config_ignored", [])]
    text = f"Settings from: {', '.join(used)} (flags override them; bayeserr config lists them)." if used else ""
    if ignored:
        text += (" " if text else "") + f"Ignored, not trusted: {'; '.join(ignored)}."
    return text


def _posterior_table(post, level: float) -> tables.Table:
    rows = []
    for name, s in post.summary.items():
        scale = 100 if name == "delta" else 1
        digits = 1 if name == "delta" else 2  # a correlation to one decimal reads "1.0 (sd 0.0)"
        rows.append((tables.text(name + (" (points)" if name == "delta" else "")),
                     tables.Cell("num", scale * s["mean"], digits=digits),
                     tables.Cell("num", scale * s["sd"], digits=digits),
                     tables.Cell("range", (scale * s["eti"][0], scale * s["eti"][1]), digits=2),
                     tables.Cell("range", (scale * s["hdi"][0], scale * s["hdi"][1]), digits=2)))
    cols = (tables.Column("var", "", numeric=False), tables.Column("mean", "mean"),
            tables.Column("sd", "sd"), tables.Column("eti", f"{level:.0%} equal-tailed"),
            tables.Column("hdi", f"{level:.0%} HDI"))
    if not any(np.isfinite(s["hdi"]).all() for s in post.summary.values()):
        # a posterior by quadrature has no draws to take an HDI from: no column of dashes
        cols, rows = cols[:-1], [r[:-1] for r in rows]
    return tables.Table("posterior", f"Posterior ({post.method})", cols, tuple(rows))


#: ``PairPosterior.method`` of compare's NUTS fit (:func:`bayeserr.bayes.pairs.pair_posterior`)
LATENT_METHOD = "bivariate latent model"
LATENT_ESTIMAND = ("delta is the latent model's estimand: the difference in mean accuracy on a new question "
                   "(from a new cluster, with clusters), not on these questions, so its mean can differ from "
                   "the observed difference; rho_question and rho_cluster are how alike the two models' "
                   "question and cluster effects are (docs/methods.md §5.3).")


def diagnostics_text(d: dict) -> str:
    """The NUTS fit's diagnostics in one sentence: how it was run (``d['sampler']``), the
    worst values, and whether they pass the thresholds of ``docs/methods.md`` §5.6."""
    from bayeserr.models.diagnostics import ESS_MIN, RHAT_MAX, problems
    s = d.get("sampler") or {}
    run = []
    if s.get("chains") and s.get("draws"):
        run.append(f"{int(s['chains'])} chains × {int(s['draws']):,} draws")
        if s.get("tune") is not None:
            run[-1] += f" after {int(s['tune']):,} tuning steps"
    if s.get("target_accept") is not None:
        run.append(f"target acceptance {float(s['target_accept']):g}")
    verdict = ("fails the thresholds (warning mcmc_diagnostics): the posterior may not be trustworthy"
               if problems(d) else f"within the thresholds (R-hat ≤ {RHAT_MAX}, ESS ≥ {ESS_MIN}, no divergence)")
    how = f" ({', '.join(run)})" if run else ""
    return (f"Diagnostics{how}: max R-hat {d['r_hat']:.3f}, "
            f"min ESS bulk {d['ess_bulk']:.0f}, tail {d['ess_tail']:.0f}, divergences {d['divergences']}; "
            f"{verdict}.")


def report_verdict_text(v, level: float) -> str:
    """The report's verdict on a pair, for ``compare`` (one voice with the report)."""
    fam = v.family
    which = f"{ADJUST_NAMES[fam['adjust']]} over all {fam['size']:,} pairs of {v.n_models} models"
    ci = ("" if v.ci_adjusted is None else
          f"; {'simultaneous ' if fam['adjust'] in FWER else 'adjusted '}{level:.0%} CI {interval(v.ci_adjusted, 2)}")
    return (f"Verdict in the report of all {v.n_models} models (default options): "
            f"{'different' if v.different else 'not different'} ({which} at {level:.0%}: adjusted "
            f"p = {pval(v.p_adjusted)}{ci}).")


def comparison_blocks(rep) -> list:
    """Layout of ``bayeserr compare`` (a :class:`~bayeserr.reporting.build.ComparisonReport`)."""
    c, T, cell = rep.comparison, tables, tables.Cell
    facts = [f"{c.a}: {pct(c.mean_a)}; {c.b}: {pct(c.mean_b)}; difference {pct(c.diff)} points "
             f"on {c.n_questions} common questions"]
    if c.n_only_a or c.n_only_b:
        facts.append(f"dropped (--on-unpaired drop): {c.n_only_a} answered only by {c.a}, "
                     f"{c.n_only_b} only by {c.b}")
    facts.append(f"each model's score and {rep.level:.0%} interval, as the report gives them (all its "
                 "questions): " + "; ".join(f"{s.model} {pct(s.mean)} {interval(s.recommended.interval)} "
                                            f"({s.recommended.label})" for s in rep.scores))
    rho = "–" if c.correlation is None or c.correlation != c.correlation else f"{c.correlation:.3f}"
    facts.append(f"correlation of per-question scores ρ = {rho}")
    se_rows = [(T.text("Unpaired (M5/M6)"), T.pct(c.se_unpaired, 2)),
               (T.text("Paired (M7)"), T.pct(c.se_paired, 2))]
    if c.n_clusters is not None:
        se_rows += [(T.text(f"Clustered paired, CR2 (M4b on d; C = {c.n_clusters}, C_eff = "
                            f"{'–' if c.effective_clusters is None else f'{c.effective_clusters:.1f}'})"),
                     T.pct(c.se_clustered_paired, 2)),
                    (T.text(f"Clustered paired (M8, {c.cluster_correction}; reference)"),
                     T.pct(c.se_clustered_paired_paper, 2))]
    se_table = T.Table("se", "Standard errors", (T.Column("what", "Standard error of A − B", numeric=False),
                                                 T.Column("points", "points")), tuple(se_rows))
    if c.test == "t_cr2_bm":
        head = (f"Headline (CR2 t-test, Bell–McCaffrey df {c.df:.1f}): {c.level:.0%} CI "
                f"{interval(c.ci, 2)}, t = {number(c.statistic)}, p = {pval(c.p_value)}")
    else:
        head = (f"Headline (paired z-test, M7): {c.level:.0%} CI {interval(c.ci, 2)}, "
                f"z = {number(c.statistic)}, p = {pval(c.p_value)}")
    out = [Heading(f"{c.a} − {c.b}", 1), Bullets(tuple((None, f) for f in facts), "facts")]
    if rep.verdict is not None:
        out.append(Para(report_verdict_text(rep.verdict, c.level), "verdict", user_text=True))
        head = "This pair alone (its own test, no adjustment for the other pairs). " + head
    out += [se_table, Para(head)]
    wb = c.wild_bootstrap
    if wb is not None:
        ci = "unbounded" if wb.ci is None else interval(wb.ci, 2)
        out.append(Para(f"Wild cluster bootstrap ({wb.weights.capitalize()} weights, {wb.draws} "
                        f"{'enumerated' if wb.exact else 'random'} draws): p = {pval(wb.p_value)}, "
                        f"{c.level:.0%} CI {ci}"))
    if c.mcnemar is not None:
        mc = c.mcnemar
        out += [T.Table("mcnemar", "McNemar", (T.Column("row", "", numeric=False),
                                               T.Column("right", f"{c.b} right"), T.Column("wrong", f"{c.b} wrong")),
                        ((T.text(f"{c.a} right"), cell("int", mc.n_both), cell("int", mc.n_a_only)),
                         (T.text(f"{c.a} wrong"), cell("int", mc.n_b_only), cell("int", mc.n_neither)))),
                Para(f"McNemar exact p = {pval(mc.p_value)}, mid-p = {pval(mc.p_mid)}")]
    post = rep.posterior
    if post is not None and not np.isfinite(post.prob_a_better):  # nothing to show but the reason
        out += [Heading("Posterior"), Para(f"Not shown: {post.method}.")]
    elif post is not None:
        out += [Heading(f"Posterior ({post.method})"), _posterior_table(post, rep.level),
                Para(f"P(A > B) = {post.prob_a_better:.3f}; P(|A − B| < {100 * post.rope:g} pt) = "
                     f"{post.prob_tie:.3f}")]
        if post.method.startswith(LATENT_METHOD):
            out.append(Para(LATENT_ESTIMAND))
        if post.diagnostics:
            out.append(Para(diagnostics_text(post.diagnostics)))
    out += [Heading("Warnings"), *warnings_blocks(rep.warnings), Heading("Rows"),
            Para(rows_text(rep.rows), "rows", user_text=True)]
    settings = settings_text(getattr(rep, "settings", None) or {})
    if settings:
        out.append(Para(settings, "rows", user_text=True))
    return out


def over_tasks_blocks(res, rep, layout) -> list:
    """The leaderboard over tasks like these (``docs/methods.md`` §3.15): its answer in one
    sentence, the table, what the new-task intervals guarantee and the readings beside it."""
    from bayeserr.base.formats import some
    T, level = len(res.tasks), f"{res.level:.0%}"
    tied = res.tied_with_best
    read = plural(len(res.models), "model") + (f" with a score in every task ({len(res.left_out)} left out, "
                                                "named below)" if res.left_out else "")
    who = (f"{some(tied, 8)} ({len(tied)} of {read})" if len(tied) > 1
           else f"{tied[0]} alone (of {read})" if tied else "no model")
    lead = (" The Ranking section answers over questions and the Suite section for these tasks; the last "
            "table sets the readings side by side." if res.headline == "sample" else
            " The Suite section answers for these tasks; this one for tasks like them (--tasks-as sample puts "
            "it first).")
    said = (f"Over tasks like these — the {T} tasks read as a sample of tasks, each model's mean over tasks "
            f"with every task the same, t on {T - 1} df: {who} {'is' if len(tied) == 1 else 'are'} tied with "
            f"the best at {level}.{lead}")
    cov, cases, guarantee = res.loto
    short = ""
    if res.rank_level < res.level - 1e-9:
        short = (f"; a {level} interval needs at least {math.ceil(2 / (1 - res.level)) - 1} tasks, so the "
                 f"interval shown is the narrowest these {T} give")
    note = (f"Rank in a new task: a new task of this kind, scored as these were, puts the model in this rank "
            f"range with probability at least {res.rank_level:.1%} (conformal over the {T} tasks' ranks{short}). "
            f"Leave-one-task-out on these data: {cov:.1%} of {cases:,} held-out ranks fell inside (guarantee "
            f"{guarantee:.1%} with {T - 1} tasks). Between-task SD: how far a model's true score moves from "
            "task to task (more tasks shrink its share of the uncertainty); within-task SE: the noise of one "
            "task's mean from its questions (more questions per task shrink only that).")
    if res.bayes_fit is not None:
        fit = res.bayes_fit
        note += (" P(best), Bayes and the rank credible interval: the models × tasks model (task difficulty and "
                 "a model × task effect with each model's own SD, task means' noise from their questions; "
                 f"methods §5.7), {fit['draws']:,} draws, R-hat {fit['r_hat']:.3f}, bulk ESS {fit['ess_bulk']:,.0f}"
                 + (" — below the thresholds (R-hat ≤ 1.01, ESS ≥ 400): read it with care." if
                    fit["r_hat"] > 1.01 or fit["ess_bulk"] < 400 else "."))
    if res.left_out:
        T = len(res.tasks)
        note += (" Not read over tasks (no score in every task): "
                 + some([f"{m} (no score in {', '.join(t)})" if len(t) <= 3 else f"{m} (a score in {T - len(t)} "
                         f"of {T} tasks)" for m, t in res.left_out.items()], 20, "; ") + ".")
    table = replace(tables.tasks_table(res), latex_notes=(said, note))  # LaTeX prints them under the table
    return [Heading("Over tasks like these"), Para(said, "verdict", user_text=True, latex=False), table,
            Para(note, "note", user_text=True, latex=False), Heading("How far the answer generalises", 3),
            tables.readings_table(res)]


# ------------------------------------------------------------------ reliability over repeated runs (§6.2)
#: order changes and flaky questions the text formats list (the JSON holds them all)
REVERSALS_SHOWN, FLAKY_SHOWN = 20, 10


def reliability_sentence(res) -> str:
    """The section's answer: how reliability falls with k and, for several models, who leads by
    pass^k, how many pairs reorder from pass@1, how many of those the pass^k verdicts declare, and
    whether the pass@1 leader's fall is real."""
    from bayeserr.base.formats import some
    K, level = res.compare_k, f"{res.level:.0%}"
    first = {r.model: r for r in res.rows if r.k == res.ks[0]}
    last = {r.model: r for r in res.rows if r.k == K}
    if len(last) == 1:
        (m, r), = last.items()
        r1 = first[m]
        return (f"{m}: pass^{res.ks[0]} {pct(r1.estimate)} {interval(r1.ci)}, pass^{K} {pct(r.estimate)} "
                f"{interval(r.ci)} over {plural(r.n_questions, 'question')} run {res.runs} times or more ({level} "
                "intervals, points): the chance that a new question like these succeeds in every one of "
                f"{K} runs.")
    tied = res.ranking.tied_with_best if res.ranking is not None else []
    said = (f"By pass^{K} (every one of {K} runs right), {some(tied, 8)} "
            f"{'is' if len(tied) == 1 else 'are'} tied with the best at {level}" if tied else
            f"By pass^{K}, no model is tied with the best")
    moved = list(res.reversals)
    if moved:
        declared = sum(r.confirmed for r in moved)
        sig = sum(r.significant for r in moved)
        said += (f"; {plural(len(moved), 'pair')} of {res.n_pairs:,} {'changes' if len(moved) == 1 else 'change'} "
                 f"order from pass@1 to pass^{K}: the pass^{K} verdicts declare the new order for {declared:,}, and "
                 f"the change in the gap is significant for {sig:,} (Holm, {1 - res.level:.0%} family-wise).")
    else:
        said += f"; no pair changes order from pass@1 to pass^{K}."
    if res.ks[0] == 1 and res.ranking is not None:
        leader = max(res.models, key=lambda m: (first[m].estimate, m))
        rank = res.ranking[leader]
        if rank.rank != 1:
            fell = [r for r in moved if r.a == leader and r.confirmed]
            said += (f" {leader}, first by pass@1, is #{rank.rank} by pass^{K} (rank interval "
                     f"{rank.rank_marginal[0]}–{rank.rank_marginal[1]}; {'tied' if rank.tied_with_best else 'not tied'} "
                     "with the best)" + (f"; {some([r.b for r in fell], 4)} {'is' if len(fell) == 1 else 'are'} "
                                         f"declared ahead of it at pass^{K}." if fell else
                                         f"; no model is declared ahead of it at pass^{K}."))
    return said


def reliability_blocks(res, rep, layout) -> list:
    """pass^k by model with its answer, the pairs at the largest k, the order changes from
    pass@1, where the noise comes from and the flaky questions (nothing when the section was
    skipped: its warning says why)."""
    from bayeserr.analyses.reliability import Skipped
    if isinstance(res, Skipped):
        return []
    K = res.compare_k
    said = reliability_sentence(res)
    how = "the CR2 SE with t on the Bell–McCaffrey df" if res.clustered else "the CLT SE with n − 1 df"
    note = ("pass^k: the chance that k runs of a question all succeed, estimated per question without bias as "
            "C(c, k)/C(n, k) (c right of n runs) and averaged over the questions; the interval is for a new "
            "question like these. Interval: Wilson's on the effective size n* = m(1 − m)/SE² from "
            f"{how}, which held its level in every cell of the lab (20–200 questions, 2–16 runs, near 0 and 1; "
            "methods §6.2, Calibration); the report's rule for fractional scores did not in 14 of 54, and is "
            "in the JSON as ci_rule. pass^1 is the Models table's score; its interval there may be the "
            "hierarchical posterior, which is for these questions' own rates. Rank intervals and pairs: the "
            "report's own, on the per-question values."
            + (" New question, Beta–Binomial: the posterior of E[θ^k] with θ, a question's success rate, Beta "
               "across questions (methods §6.2); empty where it misses the estimate (see Warnings)."
               if any(r.bayes is not None for r in res.rows) else "")
            + "".join(" " + n for n in res.notes))
    table = replace(tables.pass_hat_k_table(res), latex_notes=(said, note))
    out = [Heading("Reliability over repeated runs (pass^k)"), Para(said, "verdict", user_text=True, latex=False),
           table, Para(note, "note", user_text=True, latex=False)]
    shown = res.reversals[:REVERSALS_SHOWN]
    cut = (f"Showing {len(shown)} of {len(res.reversals)} pairs that change order (those the pass^{K} verdicts "
           "declare first, then the smallest p of the change); the JSON holds them all."
           if len(shown) < len(res.reversals) else None)
    if layout.latex:  # a paper's tables: pass^k by model and the order changes (the rest in the JSON)
        if not res.reversals:
            return out
        rev = tables.reversals_table(shown, res.level)
        rest = ("The pairs at pass^{K}, where the noise comes from and the flaky questions are in the HTML and "
                "Markdown reports and the JSON.").replace("{K}", str(K))
        return out + [replace(rev, latex_notes=tuple(x for x in (cut, rest) if x))]
    if res.comparisons is not None and len(res.comparisons):
        out.append(Fold(f"pass^{K}: the pairs",
                        tuple(_pairs_table_blocks(res.comparisons, res.scores, rep, f"the pass^{K} ranking",
                                                  main=False))))
    if res.reversals:
        out += [Heading(f"Order changes from pass@1 to pass^{K}", 3), tables.reversals_table(shown, res.level)]
        if cut:
            out.append(Para(cut, "note"))
    out += [Heading("Where the noise comes from", 3), tables.run_noise_table(res)]
    ks = tables.noise_ks(res)
    left = [k for k in res.ks if k not in ks]
    out.append(Para(f"Points. Shown for k = {' and '.join(map(str, ks))}" + (
        f"; k = {', '.join(map(str, left))} in the JSON (the run-to-run part of pass^k needs 2k runs of every "
        f"question: {res.runs} here, so k up to {res.runs // 2})" if left else "")
        + ". The variance table of the Models section says how many runs stop paying off for pass@1.", "note"))
    if res.flaky:
        shown_f = res.flaky[:FLAKY_SHOWN]
        out += [Heading("Flaky questions", 3), tables.flaky_table(shown_f),
                Para(f"{plural(len(res.flaky), 'question')} of {res.n_questions:,} "
                     f"{'has' if len(res.flaky) == 1 else 'have'} runs that disagree for some model"
                     + (f"; the {len(shown_f)} shown disagree the most, the JSON lists them all." if
                        len(shown_f) < len(res.flaky) else "."), "note")]
    return out
