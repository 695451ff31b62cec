"""The sections of ``bayeserr report``, one registry: each :class:`Section` says how it is
computed, how it is laid out (neutral blocks for Markdown, HTML and LaTeX) and what it puts in
the JSON (``docs/methods.md`` §7; ``docs/development.md``, "A new report section").

One assembler (:func:`compute_sections`) walks the registry for every engine: a section
computes from a source — the per-question data of the memory engine
(:class:`ViewSource`) or the sufficient statistics of the stream and dask engines
(:class:`SufficientSource`).  A section that needs what the source does not hold returns
:class:`NotAvailable`, and that becomes the report's ``not_at_scale`` warning, with its
reason; a section with nothing to show returns ``None``.

Sections are computed in registration order (a section reads the results of those before
it; the warnings last, as they read every section), shown in the order of their
``position`` and written to the JSON in the order of their ``json_position``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable

import numpy as np

from bayeserr.base.registry import Registry
from bayeserr.registries import caveats as _caveats
from bayeserr.registries.options import Options
from bayeserr.reporting import document as doc
from bayeserr.reporting import tables


@dataclass(frozen=True)
class NotAvailable:
    """A section its source cannot compute (``what`` is missing because ``why``); the
    report's ``not_at_scale`` warning."""

    what: str
    why: str


@dataclass(frozen=True)
class Layout:
    """How the blocks are asked for: with figures, how many names a warning line lists,
    and whether the format is LaTeX (sections marked ``latex=False`` are left out)."""

    figures: bool = False
    warning_limit: int | None = doc.MAX_NAMES
    latex: bool = False


@dataclass(frozen=True)
class Section:
    """One section of the report.

    ``compute(source, done, options)``: the section's result, ``None`` (nothing to show) or
    :class:`NotAvailable`; ``done`` holds the results of the sections computed before.
    ``blocks(result, report, layout)``: its blocks (called when the result is neither);
    ``json(result, report)``: the keys it adds to the JSON report (called always).
    ``position``: a number, or a function of the result, placing it in the document;
    ``latex``: whether the LaTeX tables show it (blocks may also carry a LaTeX variant)."""

    key: str
    title: str
    compute: Callable[[Any, dict, Options], Any]
    blocks: Callable[[Any, Any, Layout], list] | None = None
    json: Callable[[Any, Any], dict] | None = None
    position: float | Callable[[Any], float] = 115
    json_position: float = 1000
    latex: bool = True
    json_keys: tuple = ()  #: the top-level JSON keys ``json`` writes (each in the shipped schema)
    last: bool = False  #: computed after every other section (it reads them all: the warnings)

    def place(self, result) -> float:
        return self.position(result) if callable(self.position) else self.position


#: the report's sections, in the order they are computed
SECTIONS = Registry("report section")
#: the JSON keys every report has before its sections' keys
HEAD_KEYS = ("schema", "level", "provenance", "columns", "rows")


def register(section: Section) -> Section:
    """Add a section (computed after those already registered)."""
    return SECTIONS.add(section.key, section)


# ------------------------------------------------------------------ sources
class ViewSource:
    """The memory engine's source: the per-question :class:`~bayeserr.stats.view.DataView`,
    with lm-eval's group structure and the judge results when the data have them."""

    per_question = True
    engine = "memory"

    def __init__(self, view, task_groups=None, judge=None):
        self.view, self.task_groups, self.judge = view, task_groups, judge
        self.clustered, self.rows = view.clustered, view.rows

    @property
    def models(self) -> tuple:
        """The models, best first once the models section has ranked them."""
        return self.view.models

    def check(self) -> None:
        from bayeserr.analyses.comparison import check_pair_memory
        check_pair_memory(len(self.view.models))  # fail at once, before any work, if the pairs cannot fit

    def rank(self, options: Options):
        """Scores best first (the view reordered so): ``(Scores, fits, notes)``."""
        from bayeserr.analyses.scoring import ranked_view
        scores, self.view, fits, notes = ranked_view(self.view, options, keep_fits=options.bayes.on)
        return scores, fits, tuple(notes)

    def pairs(self):
        return self.view

    def means(self, scores):
        return self.view

    @property
    def run_view(self):
        """The per-question runs the pass@k and pass^k sections read: the data."""
        return self.view


class SufficientSource:
    """The stream and dask engines' source: an engine's
    :class:`~bayeserr.engines.stream.StreamResult` (sums per model, question and cluster)."""

    per_question = False

    def __init__(self, result, engine: str):
        self.result, self.engine, self.stats = result, engine, result.stats
        self.clustered, self.rows = result.stats.clusters is not None, result.rows
        self.missing: list = []  #: what the Bayesian columns could not take from the sums (NotAvailable)

    @property
    def models(self) -> tuple:
        """The models, best first once the models section has ranked them."""
        return self.stats.models

    def check(self) -> None:
        pass

    def rank(self, options: Options):
        from bayeserr.analyses.scoring import Scores, score_sufficient
        scores, batch = score_sufficient(self.stats, options, samples=self.result.samples)
        self.gap(batch.missing)
        order = sorted(range(len(scores)), key=lambda j: (-scores[j].mean, scores[j].model))
        self.stats = self.stats.select(order)
        fits = {scores[j].model: batch.fits.get(j, {}) for j in order} if options.bayes.on else None
        return Scores([scores[j] for j in order]), fits, tuple(batch.notes)

    def gap(self, missing) -> None:
        """Record Bayesian quantities the sums could not give (each named once in the warnings)."""
        for what in dict.fromkeys(missing):
            self.missing.append(NotAvailable(what, "it needs each question's scores, which the engine did not keep"))

    def pairs(self):
        from bayeserr.analyses.comparison import SufficientPairs
        return SufficientPairs(self.stats, self.gap)

    def means(self, scores):
        return _Means(self.stats.models, [m.mean for m in scores], self.stats)

    @cached_property
    def run_view(self):
        """The engine's run table (runs and successes per model and question) as a view, for the
        pass@k and pass^k sections (the same code as the memory engine's); ``None`` when it was
        not kept (scores not 0/1, or more cells than it keeps)."""
        from bayeserr.stats.view import DataView
        runs = self.stats.runs
        if runs is None:
            return None
        # questions in the order of their labels, as the memory engine's view holds them (then every
        # sum, and so every tie between models, is formed in the same order)
        order = np.argsort(runs[2].astype(str), kind="stable")
        n, c = (np.asarray(a, float)[:, order] for a in runs[:2])
        questions, codes = runs[2][order], None if runs[3] is None else runs[3][order]
        with np.errstate(invalid="ignore", divide="ignore"):
            answers = np.where(n > 0, c / n, np.nan)[..., None]
        clusters = None if codes is None else np.asarray(self.stats.clusters, dtype=object)
        return DataView(self.stats.models, answers, codes, questions, clusters, self.result.source,
                        self.result.columns, self.rows, {"n_samples": n, "n_correct": c})



class _Means:
    """What :func:`~bayeserr.analyses.ranking.rank_view` reads of a view: the
    models and their means (one 'question' holding the mean), and the sums
    behind the covariance of the means (the Bayesian ranks)."""

    def __init__(self, models, means, stats):
        self.models = tuple(models)
        self.s = np.asarray(means, float)[:, None]
        self.answered = np.ones(self.s.shape, bool)
        self.covariance_sums = stats.covariance_sums


@dataclass(frozen=True)
class ModelScores:
    """The models section: the scores best first, the posterior fits by model (kept for
    ``--save-posterior`` and the figures) and the notes of the Bayesian fits."""

    scores: Any  #: :class:`~bayeserr.analyses.scoring.Scores`
    fits: dict | None = None
    notes: tuple = ()


@dataclass(frozen=True)
class LetterGroups:
    """Compact letter groups by model, or why they are not shown."""

    groups: dict | None
    note: str | None


def compute_sections(source, options: Options, sections=None) -> dict:
    """Every section's result from ``source`` (:class:`ViewSource` or
    :class:`SufficientSource`), in registration order: ``key -> result``."""
    done = {}
    for section in sorted((SECTIONS if sections is None else sections).values(), key=lambda s: s.last):
        done[section.key] = section.compute(source, done, options)
    return done


# ------------------------------------------------------------------ computations
def _bayes(src, done, o):
    return o.bayes if o.bayes.on else None


def _models(src, done, o):
    scores, fits, notes = src.rank(o)
    return ModelScores(scores, fits, notes)


def _pairs(src, done, o):
    from bayeserr.analyses.comparison import Comparisons, compare_view
    scores = done["models"].scores
    return compare_view(src.pairs(), o, ranking=True) if len(scores) > 1 else Comparisons()


def _ranking(src, done, o):
    from bayeserr.analyses.ranking import rank_view
    scores = done["models"].scores
    return rank_view(src.means(scores), done["pairs"], o) if len(scores) > 1 else None


#: letter groups are replaced by a sentence when a model would carry more letters than this
MAX_LETTERS_PER_MODEL = 4


def _letter_groups(src, done, o) -> LetterGroups:
    """Letter groups from the report's decisions, or why they are not shown:
    they need every pair decided (the all-pairs family), and they carry no
    information when one group holds every model or a model needs many letters."""
    scores, comps = done["models"].scores, done["pairs"]
    if not len(comps):
        return LetterGroups(None, None)
    if comps.family is not None and comps.family.family != "all":
        return LetterGroups(None, f"Letter groups need every pair decided; this report's family is the pairs "
                                  f"with {comps.family.family[3:]} (--pairs {comps.family.family}).")
    from bayeserr.stats.ranking import differs_matrix, letters_needed, report_groups
    names = [m.model for m in scores]
    at_least = letters_needed(differs_matrix(names, comps))
    if at_least > MAX_LETTERS_PER_MODEL:  # cannot be read: not built (docs/methods.md §7.1)
        return LetterGroups(None, f"Letter groups are not shown: a model would carry at least {at_least} "
                                  "letters, which cannot be read; the rank intervals and the pair verdicts say "
                                  "the same more plainly.")
    groups, complete = report_groups(names, comps)
    if not complete:
        return LetterGroups(None, "Letter groups are not shown: the pairs declared different and not different "
                                  "overlap in too many ways (more than 52 groups); the ranking and the verdicts "
                                  "say which models can be told apart.")
    if not any(c.different for c in comps):
        return LetterGroups(None, "Letter groups are not shown: no pair is declared different, so every model "
                                  "would share one letter.")
    most = max(len(v) for v in groups.values())
    if most > MAX_LETTERS_PER_MODEL:
        return LetterGroups(None, f"Letter groups are not shown: a model would carry {most} letters, which "
                                  "cannot be read; the rank intervals and the pair verdicts say the same more "
                                  "plainly.")
    return LetterGroups(groups, None)


def _prior_sensitivity(src, done, o):
    bayes = done["bayes"]
    if bayes is None or isinstance(bayes, NotAvailable) or not o.prior_sensitivity:
        return ()
    from bayeserr.bayes.priors import prior_sensitivity
    return tuple(prior_sensitivity(done["models"].scores, level=o.level))


#: why an engine from sums has no pass@k or pass^k (it keeps each question's run counts up to
#: bayeserr.stats.bayes_sums.RUN_CELLS model × question cells)
RUNS_NOT_KEPT = "computed from each question's runs, which the engine keeps only up to 16.8 million model × question cells"


def _refuse_fractional_pass_hat_k():
    from bayeserr.base.errors import InputError
    raise InputError("--pass-hat-k needs 0/1 results per run (or n_samples and n_correct columns); these scores "
                     "are fractional. Drop --pass-hat-k.")


def _pass_at_k(src, done, o):
    """Per-problem pass@k scored and compared like any other score (§6)."""
    if not o.pass_k:
        return None
    if src.run_view is None:
        if not src.stats.zero_one.all():  # as the memory engine says it
            from bayeserr.base.errors import InputError
            raise InputError("pass@k needs 0/1 answers per sample, or n_samples and n_correct columns.")
        return NotAvailable("pass@k", RUNS_NOT_KEPT)
    from bayeserr.analyses.comparison import Comparisons, compare_view
    from bayeserr.analyses.scoring import ranked_view
    from bayeserr.stats.passk import pass_at_k
    # the report's settings, but no posteriors kept: pass@k values are fractional scores with one
    # value per problem, so the Bayesian intervals are the cheap ones (bootstrap, cluster effect)
    pk_options = replace(o, prior_sensitivity=False)
    view = src.run_view
    n, c = view.pass_counts()
    have = n > 0
    out = {}
    for k in o.pass_k:
        values = np.full(n.shape, np.nan)
        values[have] = pass_at_k(n[have], c[have], int(k))
        scores, pk_view, _, _ = ranked_view(view.with_scores(values), pk_options)
        comps = compare_view(pk_view, pk_options) if len(scores) > 1 else Comparisons()
        out[int(k)] = (scores, comps)
    return out


def _reliability(src, done, o):
    """pass^k over repeated runs (§6.2): when asked for, or when every question was run twice or
    more; a warning when some questions were run once."""
    view = src.run_view
    if view is None and not src.stats.zero_one.all():  # fractional scores: as the memory engine
        return _refuse_fractional_pass_hat_k() if o.pass_hat_k else None
    if view is None:  # an engine that did not keep the runs: named when the section was asked for or due
        return (NotAvailable("the reliability section (pass^k)", RUNS_NOT_KEPT)
                if o.pass_hat_k or src.result.samples else None)
    from bayeserr.analyses.reliability import Skipped, once_run, reliability_view, run_counts, runs_of
    runs = runs_of(view)
    if not o.pass_hat_k and runs != "all":
        if runs == "some":
            return Skipped(f"the reliability section (pass^k) is not shown: pass^k needs every question run at "
                           f"least twice, and {once_run(view, run_counts(view)[0])}. Drop them "
                           f"({'--where' if src.per_question else 'when writing the Parquet files'}) to see it.")
        return None
    if runs == "none" and not (view.zero_one.all() or "n_samples" in view.extra):
        _refuse_fractional_pass_hat_k()
    return reliability_view(view, o, o.pass_hat_k)


def _reliability_json(result):
    from bayeserr.analyses.reliability import Skipped
    return None if isinstance(result, Skipped) else result.to_dict()


def _suite(src, done, o):
    """The Suite section: the data's tasks, or the clusters read as fixed strata (``--clusters-as``)."""
    if not src.per_question:
        return (NotAvailable("the suite and per-task tables",
                             "they need the sums of each task, which the engine does not keep")
                if src.result.tasks else None)
    from bayeserr.analyses.suite import strata_suite, suite_view
    if o.cluster_reading == "strata":
        return strata_suite(src.view, o.level)
    return suite_view(src.view, o.level, o.task_weights)


def _over_tasks(src, done, o):
    """The leaderboard over tasks like these, with the readings beside it (§3.15): three tasks
    or more, the tasks not the clusters read as strata; with --bayes mcmc also the models × tasks
    posterior (a sampler, so not under --bayes fast)."""
    suite = done["suite"]
    if not src.per_question:
        return (NotAvailable("the leaderboard over tasks", "it needs each task's scores, which the engine does "
                             "not keep") if src.result.tasks else None)
    from bayeserr.analyses.tasks import not_available, over_tasks_view
    res = None
    if suite is not None and not suite.clusters_as_strata:
        res = over_tasks_view(src.view, suite, o.level, o.seed, o.task_reading, bayes=o.bayes.mode == "mcmc",
                              ranking=done["ranking"])
    if res is None and o.task_reading == "sample":
        from bayeserr.base.errors import InputError
        why = ("--clusters-as strata reads the clusters as the tasks of a suite." if o.cluster_reading == "strata"
               else not_available(src.view))
        raise InputError(f"--tasks-as sample reads the tasks as a sample of tasks. {why} Drop --tasks-as, or give "
                         "the tasks (a task column, --task-col; eval logs: each run's task).")
    return res


def _per_task(src, done, o) -> tuple:
    """Each task's scores and comparisons, as the report's (the models with two answered
    questions in the task; the closed-form Bayesian intervals of --bayes fast even under
    mcmc, so a suite of T tasks does not sample T more times)."""
    if not src.per_question or done["suite"] is None or src.view.tasks is None:
        return ()
    from bayeserr.analyses.comparison import Comparisons, compare_view
    from bayeserr.analyses.scoring import ranked_view
    view = src.view
    bayes = o.bayes if o.bayes.mode != "mcmc" else replace(o.bayes, mode="fast")
    # Holm without joint draws, and no wild-bootstrap second opinion: T tasks would otherwise
    # cost T reports (the suite's own numbers and the main tables keep the full treatment)
    task_options = replace(o, bayes=bayes, prior_sensitivity=False, pass_k=(), adjust="holm")
    out = []
    for task in sorted(set(view.tasks)):
        sub = view.questions_where(view.tasks == task)
        keep = [m for m, k in zip(sub.models, sub.answered.sum(axis=1)) if k >= 2]
        if not keep:  # a task of one question: no model has a standard error there
            continue
        scores, sub, _, _ = ranked_view(sub.select(keep), task_options)
        comps = (compare_view(sub, task_options, second_opinion=False, joint=False) if len(scores) > 1
                 else Comparisons())
        out.append((str(task), scores, comps))
    return tuple(out)


def _task_groups(src, done, o):
    if not src.per_question or not src.task_groups:
        return None
    from bayeserr.analyses.groups import group_scores
    return group_scores(src.view, src.task_groups, o.level)


def _judge(src, done, o):
    return src.judge if src.per_question else None


def _tie_zone(src, done, o) -> dict:
    """Unpaired tie zone at the pooled mean score and median n; paired: the
    median over pairs of ``z · sd(d)/√n`` (§3.7) — both for one pair alone.
    From the report's decisions: the largest gap not declared different and
    the smallest declared different (the resolution the report achieved)."""
    from bayeserr.stats.estimators import z_value
    from bayeserr.stats.planning import tie_zone
    scores, comps, level = done["models"].scores, done["pairs"], o.level
    p = float(np.mean([m.mean for m in scores]))
    n = float(np.median([m.n_questions for m in scores]))
    paired = [c.se_paired for c in comps if math.isfinite(c.se_paired)]
    fam = comps.family
    members = comps if fam is None else [comps[int(k)] for k in fam.rows]
    same = [c for c in members if not c.different and math.isfinite(c.diff)]
    apart = [c for c in members if c.different]

    def gap(cs, pick):
        if not cs:
            return None
        c = pick(cs, key=lambda c: (abs(c.diff), c.a, c.b))
        return {"a": c.a, "b": c.b, "diff": abs(c.diff)}

    return {"unpaired": tie_zone(p, n, level),
            "paired_median": float(z_value(level) * np.median(paired)) if paired else None,
            "largest_not_different": gap(same, max), "smallest_different": gap(apart, min)}


def _warnings(src, done, o) -> tuple:
    """Every caveat of the report: look-alike names, each model's and pair's, the fits'
    notes, an early-stopped log, the exact intervals under clusters, a family that cannot
    decide, each section not available from this source (the advice once, on the last) and
    the judge's label warnings."""
    from bayeserr.analyses.comparison import pair_caveats
    scores, comps = done["models"].scores, done["pairs"]
    warnings = _caveats.look_alike_names(src.models) + [w for m in scores for w in m.caveats]
    warnings += pair_caveats(comps, src.clustered) + list(done["models"].notes)
    warnings += _caveats.early_stopped(src.rows)  # a log stopped by a sequential rule
    if src.clustered and any(m.binary for m in scores):
        warnings.append(_caveats.Caveat(
            "exact_not_cluster_aware", None, "Wilson, Clopper–Pearson, Jeffreys and Agresti–Coull (in the "
            "JSON, and as columns with --methods all) assume independent questions; with clusters read "
            "their 'n_eff' versions."))
    if comps.family is not None and comps.family.draws.min_p >= 1 - o.level:
        warnings.append(_caveats.family_cannot_decide(comps.family.to_dict()))
    missing = [r for r in done.values() if isinstance(r, NotAvailable)] + list(getattr(src, "missing", ()))
    warnings += [not_at_scale(missing, src.engine)] if missing else []
    reliability = done.get("reliability")
    warnings += list(getattr(reliability, "caveats", ()))  # pass^k: not shown, misfit, few clusters
    judge = done.get("judge")
    if judge is not None and judge.warnings:  # in the Warnings section and the JSON's warnings, as every caveat
        warnings += [_caveats.Caveat("judge_labels", None, w) for w in judge.warnings]
    return tuple(warnings)


def not_at_scale(missing, engine: str) -> _caveats.Caveat:
    """What a report from sufficient statistics leaves out and why (``missing``: the
    :class:`NotAvailable` items), in one warning with what to run instead."""
    items = "; ".join(f"{m.what} — {m.why}" for m in missing)
    return _caveats.Caveat("not_at_scale", None, f"Not available with --engine {engine}: {items}. Run --engine "
                           f"memory on the data, or on a sample of its questions, for {'it' if len(missing) == 1 else 'them'}.")


# ------------------------------------------------------------------ JSON
def _models_json(result, rep) -> dict:
    groups = rep.groups
    return {"models": [{**m.to_dict(), "group": None if groups is None else groups.get(m.model)}
                       for m in result.scores]}


def _pairs_json(comps, rep) -> dict:
    return {"comparisons": [c.to_dict() for c in tables.select_pairs(comps, rep.scores, rep.pairs, for_json=True)],
            "adjustment": None if comps.family is None else comps.family.to_dict()}


def _key(key: str, always: bool = False, to_json=lambda r: r.to_dict()):
    """The JSON of a section under its key (``always``: ``null`` when there is nothing)."""
    def write(result, rep) -> dict:
        if not _shown(result) or (isinstance(result, tuple) and not result):
            return {key: None} if always else {}
        return {key: to_json(result)}
    return write


def _pass_at_k_json(result) -> dict:
    return {str(k): {"models": s.to_dict(), "comparisons": c.to_dict()} for k, (s, c) in result.items()}


def _per_task_json(result) -> list:
    return [{"task": t, "models": s.to_dict(), "comparisons": c.to_dict()} for t, s, c in result]


# ------------------------------------------------------------------ registry
def _suite_position(suite) -> float:
    """The weighting the user asked for answers first; the pooled view second."""
    return 15 if suite is not None and suite.headline != "macro" else 25


for _section in (
    Section("bayes", "Bayesian columns", _bayes),  # shown under the models table
    Section("models", "Models", _models, doc.models_blocks, _models_json, position=10, json_position=10,
            json_keys=("models",)),
    Section("pairs", "Pairwise comparisons", _pairs, doc.pairs_blocks, _pairs_json, position=70,
            json_position=20, json_keys=("comparisons", "adjustment")),
    Section("ranking", "Ranking", _ranking, doc.ranking_blocks, _key("ranking", always=True), position=20,
            json_position=30, json_keys=("ranking",)),
    Section("letter_groups", "Letter groups", _letter_groups),  # a column of the models table
    Section("prior_sensitivity", "Prior sensitivity", _prior_sensitivity, doc.sensitivity_blocks, position=50,
            latex=False),
    Section("pass_at_k", "pass@k", _pass_at_k, doc.pass_at_k_blocks, _key("pass_at_k", True, _pass_at_k_json),
            position=100, json_position=60, json_keys=("pass_at_k",)),
    Section("reliability", "Reliability over repeated runs", _reliability, doc.reliability_blocks,
            _key("reliability", True, _reliability_json), position=85, json_position=65,
            json_keys=("reliability",)),
    Section("suite", "Suite", _suite, doc.suite_section_blocks, _key("suite"), position=_suite_position,
            json_position=70, json_keys=("suite",)),
    Section("over_tasks", "Over tasks like these", _over_tasks, doc.over_tasks_blocks, _key("over_tasks"),
            position=lambda r: 15 if r is not None and r.headline == "sample" else 26, json_position=75,
            json_keys=("over_tasks",)),
    Section("per_task", "Each task alone", _per_task, doc.per_task_blocks, _key("per_task", to_json=_per_task_json),
            position=90, json_position=80, json_keys=("per_task",)),
    Section("task_groups", "lm-eval groups", _task_groups, doc.task_group_section_blocks, _key("task_groups"),
            position=30, json_position=90, json_keys=("task_groups",)),
    Section("judge", "Judge", _judge, doc.judge_section_blocks, _key("judge"), position=40, json_position=100,
            json_keys=("judge",)),
    Section("variance", "Variance components", lambda src, done, o: done["models"].scores, doc.variance_blocks,
            position=60, latex=False),
    Section("posteriors", "Posterior figure", lambda src, done, o: done["models"].fits or None,
            doc.posterior_figure_blocks, position=80, latex=False),
    Section("tie_zone", "Tie zone", _tie_zone, doc.tie_zone_blocks, _key("tie_zone", to_json=dict),
            position=110, json_position=40, latex=False, json_keys=("tie_zone",)),
    Section("warnings", "Warnings", _warnings, doc.warnings_section_blocks,
            lambda w, rep: {"warnings": [x.to_dict() for x in w]}, position=120, json_position=50,
            json_keys=("warnings",), last=True),
    Section("rows", "Rows", lambda src, done, o: src.rows, doc.rows_blocks, position=130),
):
    register(_section)


# ------------------------------------------------------------------ the walks
def _shown(result) -> bool:
    return result is not None and not isinstance(result, NotAvailable)


def report_blocks(rep, figures: bool = False, warning_limit=doc.MAX_NAMES, latex: bool = False) -> list:
    """The layout of a report: its title, then each section's blocks in the order of their
    positions (``latex``: the sections the LaTeX tables show)."""
    layout = Layout(figures, warning_limit, latex)
    out = [doc.Heading(f"bayeserr report: {rep.source}", 1)]
    present = [(s, rep.sections.get(s.key)) for s in SECTIONS.values()]
    present = [(s, r) for s, r in present if s.blocks is not None and _shown(r) and (s.latex or not latex)]
    for section, result in sorted(present, key=lambda sr: sr[0].place(sr[1])):  # stable: ties keep the registry order
        out += section.blocks(result, rep, layout)
    return out


def report_json(rep) -> dict:
    """The sections' keys of the JSON report, in the order of their JSON positions."""
    out = {}
    for section in sorted((s for s in SECTIONS.values() if s.json is not None), key=lambda s: s.json_position):
        result = rep.sections.get(section.key)
        # a section its engine could not compute writes what a section with nothing to show writes
        # (its reason is in the warnings), so a section's json never sees NotAvailable
        out.update(section.json(None if isinstance(result, NotAvailable) else result, rep))
    return out
