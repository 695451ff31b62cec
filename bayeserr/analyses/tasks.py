"""A multi-task leaderboard read over *tasks like these* (``docs/methods.md`` §3.15).

:func:`tasks_view` takes the data's tasks as a sample of tasks: each model's mean
over tasks (each task the same) with a t interval on T − 1 df (the formulas of
:mod:`bayeserr.stats.tasks`), the split of its task-to-task spread into between
and within tasks, every pair's difference and test, the ranking that follows
(rank intervals and the set tied with the best, :func:`bayeserr.stats.best.best_set`),
each model's rank *prediction* interval for a new task (conformal over the tasks),
its leave-one-task-out check, and (unless the Bayesian columns are off) the posterior
P(best over tasks like these) and rank credible intervals of the models × tasks model
(``models/task_effects.py``, §5.7).  Beside it, :func:`readings` gives one line per
reading of the same models — questions independent, questions clustered by task,
these tasks as fixed strata, tasks as a sample, a percentile bootstrap over tasks —
so a reader sees how much the choice of unit matters.

Only models with a score in every task are read over tasks (the estimand weighs
every task); the others are listed in ``left_out``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import pandas as pd

from bayeserr.analyses.suite import holm_finite, pairs_ranking, suite_view
from bayeserr.stats.tasks import competition_ranks, conformal_rank_interval, leave_one_task_out, task_sample
from bayeserr.stats.view import DataView

#: the fewest tasks the reading over tasks needs (t on T − 1 ≥ 2 df)
MIN_TASKS = 3
#: resamples of the percentile bootstrap over tasks (one reading line; seeded)
BOOTSTRAP_DRAWS = 2000


@dataclass(frozen=True)
class TaskModel:
    """One model read over tasks like these."""

    model: str
    mean: float            #: its mean over the tasks (each task the same)
    se: float
    ci: tuple
    between_sd: float      #: τ̂: the spread of its true task scores (T3)
    within_se: float       #: √v̄: the sampling SE of one task's mean, on average
    new_task: tuple        #: (T4): where its score on a new task of this kind would fall
    rank: int              #: by the mean over tasks (1 = best)
    rank_own: tuple        #: its own rank interval over tasks like these
    tied_with_best: bool
    p_is_best: float
    rank_new: tuple        #: its rank prediction interval for a new task (conformal)
    #: the Bayesian models × tasks model (models/task_effects.py): P(best over tasks like these),
    #: its mean rank and rank credible interval; None with --bayes off
    p_best_bayes: float | None = None
    rank_mean_bayes: float | None = None
    rank_credible: tuple | None = None

    def to_dict(self) -> dict:
        return {"model": self.model, "mean": self.mean, "se": self.se, "ci": list(self.ci),
                "between_sd": self.between_sd, "within_se": self.within_se, "new_task": list(self.new_task),
                "rank": self.rank, "rank_own": list(self.rank_own), "tied_with_best": self.tied_with_best,
                "p_is_best": self.p_is_best, "rank_new_task": list(self.rank_new),
                "p_best_bayes": self.p_best_bayes, "rank_mean_bayes": self.rank_mean_bayes,
                "rank_credible": None if self.rank_credible is None else list(self.rank_credible)}


@dataclass(frozen=True)
class TaskPair:
    """A − B over tasks like these (mean over tasks of the per-task differences)."""

    a: str
    b: str
    diff: float
    se: float
    df: float
    ci: tuple
    p_value: float
    p_holm: float
    between_sd: float
    within_se: float

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "diff": self.diff, "se": self.se, "df": self.df, "ci": list(self.ci),
                "p_value": self.p_value, "p_holm": self.p_holm, "between_sd": self.between_sd,
                "within_se": self.within_se}


@dataclass(frozen=True)
class Reading:
    """One reading of the leaderboard: what it generalises over and who is tied with #1."""

    key: str               #: questions | clusters | task_clusters | strata | sample | bootstrap
    unit: str              #: what the answer generalises over, in words
    method: str            #: how, in words
    tied: tuple            #: the models tied with #1 under it
    guarantee: bool        #: whether the set carries a confidence guarantee
    note: str = ""         #: where it comes from, or why it is not available (then ``tied`` is empty)

    def to_dict(self) -> dict:
        return {"reading": self.key, "generalises_over": self.unit, "method": self.method,
                "tied_with_best": list(self.tied), "guarantee": self.guarantee, "note": self.note or None}


@dataclass(frozen=True)
class TasksAsSample:
    """The leaderboard over tasks like these, and the readings beside it."""

    tasks: tuple
    level: float
    models: tuple                    #: TaskModel, best first
    pairs: tuple                     #: TaskPair, every pair of the models read
    rank_level: float                #: the coverage the rank prediction intervals guarantee
    loto: tuple                      #: (coverage, cases, guarantee at T − 1 tasks): leave-one-task-out
    readings: tuple = ()             #: Reading, the chosen one first
    left_out: dict = field(default_factory=dict)  #: model -> tasks it has no score in
    headline: str = "strata"         #: the reading the user chose (--tasks-as)
    #: the models × tasks posterior's sampler: draws, largest R-hat, smallest bulk ESS (None: not run)
    bayes_fit: dict | None = None

    @property
    def df(self) -> float:
        return float(len(self.tasks) - 1)

    @property
    def tied_with_best(self) -> list[str]:
        return [m.model for m in self.models if m.tied_with_best]

    def to_dict(self) -> dict:
        """The JSON ``suite.over_tasks`` block (schema ``bayeserr.report/2``, additive)."""
        cov, cases, guarantee = self.loto
        return {"tasks": list(self.tasks), "df": self.df, "level": self.level, "headline": self.headline,
                "tied_with_best": self.tied_with_best, "models": [m.to_dict() for m in self.models],
                "pairs": [p.to_dict() for p in self.pairs], "rank_prediction_level": self.rank_level,
                "leave_one_task_out": {"coverage": cov, "cases": cases, "guarantee": guarantee},
                "readings": [r.to_dict() for r in self.readings],
                "left_out": {m: list(t) for m, t in self.left_out.items()}, "bayes_fit": self.bayes_fit}

    def to_frame(self) -> pd.DataFrame:
        """One row per model: mean, se, ci_low, ci_high, its own rank interval (rank_low,
        rank_high), the prediction intervals and, with the posterior, the rank credible interval."""
        rows = []
        for m in self.models:
            d = m.to_dict()
            rows.append({**{k: v for k, v in d.items() if not isinstance(v, list) and v is not None},
                         "ci_low": m.ci[0], "ci_high": m.ci[1], "rank_low": m.rank_own[0],
                         "rank_high": m.rank_own[1], "new_task_low": m.new_task[0],
                         "new_task_high": m.new_task[1], "rank_new_low": m.rank_new[0],
                         "rank_new_high": m.rank_new[1],
                         "rank_credible_low": None if m.rank_credible is None else m.rank_credible[0],
                         "rank_credible_high": None if m.rank_credible is None else m.rank_credible[1]})
        return pd.DataFrame(rows)


def task_values(y, task_codes, codes):
    """Per row of ``y``: each task's mean and its sampling variance — the model-based
    variance of (S2), ``s_t²(1 + ρ̂(m_t − 1))/n_t`` with the intra-cluster correlation pooled
    over the tasks (``docs/methods.md`` §3.12, §3.15), stable where a task's own CR2
    variance rests on two or three clusters or a handful of questions."""
    from bayeserr.stats.suite import suite_mean
    res = suite_mean(y, task_codes, codes, "macro")
    return res.task_mean, res.task_model_var


def tasks_view(view: DataView, level: float = 0.95, *, codes=None, seed: int = 0,
               headline: str = "strata", bayes: bool = False) -> TasksAsSample | None:
    """The leaderboard of ``view`` over tasks like these (None with fewer than
    :data:`MIN_TASKS` tasks or two models with a score in every task); ``codes``: the
    cluster codes within tasks for each task's variance (None: questions independent)."""
    if view.tasks is None:
        return None
    tasks, task_codes = np.unique(view.tasks, return_inverse=True)
    if len(tasks) < MIN_TASKS:
        return None
    s = view.s
    means, var = task_values(s, task_codes, codes)
    complete = np.isfinite(means).all(axis=1)
    left_out = {m: tuple(str(t) for t, ok in zip(tasks, np.isfinite(means[j])) if not ok)
                for j, m in enumerate(view.models) if not complete[j]}
    keep = np.flatnonzero(complete)
    if len(keep) < 2:
        return None
    pairs = list(combinations(range(len(keep)), 2))
    ia, ib = keep[[a for a, _ in pairs]], keep[[b for _, b in pairs]]
    # each pair's task differences are the differences of the two task means (so the pair's mean
    # over tasks is exactly the difference of the models' means, and a task where the two share
    # no question still counts); their variance is the paired one where they share the task's
    # questions (the within-task split only), else the sum
    _, dv = task_values(s[ia] - s[ib], task_codes, codes)
    dm = means[ia] - means[ib]
    dv = np.where(np.isfinite(dv), dv, var[ia] + var[ib])
    return tasks_from_values([view.models[j] for j in keep], tuple(str(t) for t in tasks), means[keep], var[keep],
                             level, seed=seed, headline=headline, pair_values=(dm, dv), left_out=left_out,
                             bayes=bayes)


def tasks_from_values(names, tasks, means, var, level: float = 0.95, *, seed: int = 0, headline: str = "strata",
                      pair_values=None, left_out=None, bayes: bool = False) -> TasksAsSample:
    """The leaderboard over tasks like these from each model's task means ``means`` (M, T) and
    their sampling variances ``var`` (§3.15).  ``pair_values``: each pair's (means, variances)
    (P, T) of its differences on the questions both answered, pairs in ``combinations`` order
    (default: differences of the task means, their variances summed — the lab's, whose models
    answer every question); ``bayes``: add the models × tasks posterior (§5.7)."""
    pairs = list(combinations(range(len(names)), 2))
    ia, ib = [a for a, _ in pairs], [b for _, b in pairs]
    dm, dv = pair_values if pair_values is not None else (means[ia] - means[ib], var[ia] + var[ib])
    rows = task_sample(means, var, level)
    tp = _pairs(names, pairs, task_sample(dm, dv, level))
    rank, rank_own, in_set, p_best = pairs_ranking(
        rows.mean, [(a, b, p.diff, p.se, p.df) for (a, b), p in zip(pairs, tp)], level, seed, names)
    lo, hi, attained = conformal_rank_interval(competition_ranks(means), level)
    order = np.lexsort((np.arange(len(names)), -rows.mean))
    post = _posterior(means, var, level, seed) if bayes else None
    models = tuple(TaskModel(names[j], float(rows.mean[j]), float(rows.se[j]),
                             (float(max(rows.lower[j], 0.0)), float(min(rows.upper[j], 1.0))),
                             float(np.sqrt(rows.between[j])), float(np.sqrt(rows.within[j])),
                             (float(max(rows.new_lower[j], 0.0)), float(min(rows.new_upper[j], 1.0))),
                             int(rank[j]), tuple(int(v) for v in rank_own[j]), bool(in_set[j]),
                             float(p_best[j]), (int(lo[j]), int(hi[j])), *_bayes_of(post, j)) for j in order)
    fit = None if post is None else {"model": "models × tasks (models/task_effects.py)", "draws": post.draws,
                                     "r_hat": post.rhat, "ess_bulk": post.ess}
    return TasksAsSample(tuple(tasks), level, models, tuple(tp), attained, leave_one_task_out(means, level),
                         left_out=dict(left_out or {}), headline=headline, bayes_fit=fit)


def _posterior(means, var, level, seed):
    from bayeserr.models.task_effects import posterior
    ok = np.isfinite(var)
    var = np.where(ok, var, np.nanmean(np.where(ok, var, np.nan)) if ok.any() else 0.0)  # a one-question task
    return posterior(means, var, level, seed=seed)


def _bayes_of(post, j) -> tuple:
    if post is None:
        return None, None, None
    return (float(post.p_best[j]), float(post.rank_mean[j]), (int(post.rank_low[j]), int(post.rank_high[j])))


def _pairs(names, pairs, prs) -> list[TaskPair]:
    """Each pair's test over tasks (t on T − 1 df), Holm over the pairs."""
    from bayeserr.stats.fewclusters import t_test
    tt = t_test(prs.mean, prs.se, prs.df, 0.5)  # the p-value (the interval comes from task_sample)
    p = np.asarray(tt.p_value, dtype=float)
    p_holm = holm_finite(p)
    return [TaskPair(names[a], names[b], float(prs.mean[k]), float(prs.se[k]), prs.df,
                     (float(max(prs.lower[k], -1.0)), float(min(prs.upper[k], 1.0))), float(p[k]),
                     float(p_holm[k]), float(np.sqrt(prs.between[k])), float(np.sqrt(prs.within[k])))
            for k, (a, b) in enumerate(pairs)]


#: what each reading generalises over and how it is computed, for the report's lines
READINGS = {
    "ranking": ("questions like these (the Ranking section)", "the report's ranking: its pairs' headline tests"),
    "questions": ("questions like these, each independent", "paired z on the pooled questions"),
    "clusters": ("clusters of questions like these", "CR2 with the data's clusters, Bell–McCaffrey df"),
    "task_clusters": ("tasks like these, as clusters of a pooled score",
                      "CR2 with the tasks as clusters, Bell–McCaffrey df"),
    "strata": ("these tasks, as fixed strata", "suite t test, tasks as strata"),
    "strata_se": ("these tasks, as fixed strata", "z on the tasks' SEs, the models' errors taken as independent"),
    "sample": ("tasks like these, as a random sample", "t on T − 1 df over the task means (random effects)"),
    "bootstrap": ("tasks like these, by resampling them", "percentile bootstrap over tasks, one pair at a time"),
}


def readings(view: DataView, sample: TasksAsSample, suite, level: float, seed: int = 0, ranking=None) -> tuple:
    """One :class:`Reading` per way of reading the leaderboard of ``sample``'s models (the
    chosen one, ``sample.headline``, first): who is tied with #1 when the answer generalises
    over questions, clusters, tasks as clusters of a pooled score, these tasks (``suite``'s
    ranking), tasks like these, or a percentile bootstrap over tasks (no guarantee).
    ``ranking``: the report's Ranking section, quoted as its own line (its set, restricted to
    these models) so the table and the section say the same; the lines it already is (the
    data's clusters, or none) are then not recomputed."""
    from bayeserr.stats.fewclusters import cr2_mean
    names = [m.model for m in sample.models]
    rows = np.array([view.position[m] for m in names])
    s = view.s[rows]
    _, task_codes = np.unique(view.tasks, return_inverse=True)
    pairs = list(combinations(range(len(names)), 2))
    d = s[[a for a, _ in pairs]] - s[[b for _, b in pairs]]
    pooled = np.nanmean(s, axis=1)
    out, notes, units = {}, {}, {}
    clusters_are_tasks = view.codes is not None and _same_partition(view.codes, task_codes)
    if ranking is not None and len(ranking):
        out["ranking"] = tuple(m for m in ranking.tied_with_best if m in set(names))
        units["ranking"] = ("questions like these" if view.codes is None else
                            "tasks like these, as clusters of a pooled score" if clusters_are_tasks else
                            "clusters of questions like these") + " (the Ranking section)"
        if len(ranking) > len(names):
            notes["ranking"] = f"its set over all {len(ranking)} models, here the {len(names)} read over tasks"
    if ranking is None or view.codes is not None:
        out["questions"] = _tied(pooled, pairs, *_iid(d), level, seed, names)
    if view.codes is not None and not clusters_are_tasks and ranking is None:
        c = cr2_mean(d, view.codes)
        out["clusters"] = _tied(pooled, pairs, c.mean, c.se, c.df, level, seed, names)
    if ranking is None or not clusters_are_tasks:
        c = cr2_mean(d, task_codes)
        out["task_clusters"] = _tied(pooled, pairs, c.mean, c.se, c.df, level, seed, names)
    if suite is not None and suite.ranking:
        out["strata"] = tuple(r.model for r in suite.ranking if r.tied_with_best and r.model in names)
    else:
        out["strata"] = ()
        notes["strata"] = ("not available: the suite has no ranking (a task of one question, or one cluster, "
                           "has no variance of its own)")
    out["sample"] = tuple(sample.tied_with_best)
    from bayeserr.stats.suite import suite_mean
    out["bootstrap"] = _bootstrap_tied(suite_mean(s, task_codes, None, "macro").task_mean, names, level, seed)
    return _ordered(out, sample.headline, notes, units)


def _ordered(tied: dict, headline: str, notes=None, units=None) -> tuple:
    """The readings as :class:`Reading` rows, the chosen one first (``units``: a reading's
    own wording of what it generalises over, where it depends on the data)."""
    notes, units = notes or {}, units or {}
    first = headline if headline in tied else "sample"
    keys = [first] + [k for k in tied if k != first]
    return tuple(Reading(k, units.get(k, READINGS[k][0]), READINGS[k][1], tied[k], k != "bootstrap",
                         notes.get(k, "")) for k in keys)


def _iid(d):
    """Each pair's mean difference, its paired SE (M7) and an infinite df (a z)."""
    from bayeserr.stats.estimators import se_clt
    return np.nanmean(d, axis=1), se_clt(d), np.full(len(d), np.inf)


def _same_partition(a, b) -> bool:
    """Whether two labellings of the questions group them the same way."""
    pairs = np.unique(np.stack([np.asarray(a), np.asarray(b)]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def _tied(means, pairs, diff, se, df, level, seed, names) -> tuple:
    """The models tied with #1 under pairs' t tests (:func:`pairs_ranking`)."""
    _, _, in_set, _ = pairs_ranking(means, [(a, b, diff[k], se[k], df[k]) for k, (a, b) in enumerate(pairs)],
                                    level, seed, names)
    order = np.lexsort((np.arange(len(names)), -np.asarray(means)))
    return tuple(names[j] for j in order if in_set[j])


def _bootstrap_tied(means, names, level, seed) -> tuple:
    """The percentile bootstrap over tasks the leaderboard trackers use: tasks resampled
    with replacement, the macro means of the task means ``means`` (M, T) recomputed; a
    model is tied with the observed #1 when the percentile interval of #1 − it covers 0
    (one pair at a time, no guarantee)."""
    T = means.shape[1]
    idx = np.random.default_rng(seed).integers(0, T, size=(BOOTSTRAP_DRAWS, T))
    boot = means[:, idx].mean(axis=2)                                         # (M, B)
    macro = means.mean(axis=1)
    lead = int(np.argmax(macro))
    gap = boot[lead][None, :] - boot
    low = np.quantile(gap, (1 - level) / 2, axis=1)
    order = np.lexsort((np.arange(len(names)), -macro))
    return tuple(names[j] for j in order if j == lead or low[j] <= 0)


def over_tasks_view(view: DataView, suite, level: float, seed: int = 0, headline: str = "strata",
                    bayes: bool = False, ranking=None) -> TasksAsSample | None:
    """:func:`tasks_view` with each task's variance under the suite's cluster rule (clusters
    within tasks; none when the clusters are the tasks) and the :func:`readings` beside it
    (``suite``: the Suite section's result, for the strata line); None as tasks_view."""
    from bayeserr.analyses.suite import cluster_rule
    if view.tasks is None:
        return None
    codes, how = cluster_rule(view, np.unique(view.tasks, return_inverse=True)[1])
    res = tasks_view(view, level, codes=codes if how in ("within tasks", "across tasks") else None, seed=seed,
                     headline=headline, bayes=bayes)
    return None if res is None else replace(res, readings=readings(view, res, suite, level, seed, ranking))


def over_tasks(ds, *, level: float = 0.95, seed: int = 0, bayes: bool = False) -> TasksAsSample:
    """The leaderboard of a loaded dataset with a ``task`` coordinate over tasks like these
    (``docs/methods.md`` §3.15), with the readings beside it; ``bayes=True`` adds the models ×
    tasks posterior (a sampler: seconds).  Raises :class:`~bayeserr.base.errors.InputError`
    with fewer than three tasks or two models with a score in every task, saying which."""
    from bayeserr.base.errors import InputError
    from bayeserr.base.registry import check_level
    level = check_level(level)
    view = DataView.from_dataset(ds)
    res = over_tasks_view(view, suite_view(view, level), level, seed, bayes=bayes)
    if res is None:
        raise InputError(not_available(view) + " Load with task_col='COLUMN' (eval logs: each run's task).")
    return res


def not_available(view: DataView) -> str:
    """Why the data cannot be read over tasks (a sentence naming the condition that fails)."""
    if view.tasks is None:
        return "A leaderboard over tasks needs a task for each question; the data have none."
    T = len(np.unique(view.tasks))
    if T < MIN_TASKS:
        return f"A leaderboard over tasks needs at least {MIN_TASKS} tasks; the data have {T}."
    return ("A leaderboard over tasks needs two models with a score in every task; the data have "
            "fewer (a model with no answered question in a task has no score there).")


def over_tasks_summary(summary, *, level: float = 0.95, seed: int = 0, bayes: bool = False) -> TasksAsSample:
    """The leaderboard over tasks like these from a task × model summary table
    (:func:`bayeserr.data.summaries.load_task_summary`: each task's score and SE, no
    per-question data; §3.15).  The readings that need the questions are not available:
    these tasks (fixed strata, a z test on Σ_t V_t/T² with each model's errors taken as
    independent), tasks like these, and the bootstrap over tasks.  Models without a score
    in every task are left out and listed."""
    from bayeserr.base.errors import InputError
    from bayeserr.base.registry import check_level
    level = check_level(level)
    complete = np.isfinite(summary.means).all(axis=1)
    left_out = {m: tuple(t for t, ok in zip(summary.tasks, np.isfinite(summary.means[j])) if not ok)
                for j, m in enumerate(summary.models) if not complete[j]}
    if len(summary.tasks) < MIN_TASKS or complete.sum() < 2:
        raise InputError(f"{summary.source}: a leaderboard over tasks needs at least {MIN_TASKS} tasks and two "
                         f"models with a score in every task (the table has {len(summary.tasks)} tasks and "
                         f"{int(complete.sum())} such models).")
    names = [m for j, m in enumerate(summary.models) if complete[j]]
    means, var = summary.means[complete], summary.var[complete]
    res = tasks_from_values(names, summary.tasks, means, var, level, seed=seed, headline="sample",
                            left_out=left_out, bayes=bayes)
    pairs = list(combinations(range(len(names)), 2))
    T = len(summary.tasks)
    diff = np.array([(means[a] - means[b]).mean() for a, b in pairs])
    se = np.array([np.sqrt((var[a] + var[b]).sum()) / T for a, b in pairs])
    tied = {"sample": tuple(res.tied_with_best),
            "strata_se": _tied(means.mean(axis=1), pairs, diff, se, np.full(len(pairs), np.inf), level, seed,
                               names),
            "bootstrap": _bootstrap_tied(means, names, level, seed)}
    return replace(res, readings=_ordered(tied, "sample"))
