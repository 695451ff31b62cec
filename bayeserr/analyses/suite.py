"""Suite scores over several tasks, with tasks as fixed strata (``docs/methods.md`` §3.12).

:func:`suite` gives, for each weighting (``macro``: each task counts the
same; ``size``: each question counts the same; or the user's weights), every
model's suite score with its SE (S1), Satterthwaite–Bell–McCaffrey df (S2)
and t interval, and every pair's suite difference A − B (on the questions
both answered) with its two-sided t test and Holm-adjusted p over the pairs
of that weighting.  The formulas are in
:mod:`bayeserr.stats.suite`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError, describe
from bayeserr.base.registry import check_level
from bayeserr.stats.fewclusters import t_test
from bayeserr.stats.simultaneous import holm
from bayeserr.stats.suite import WEIGHTINGS, crossed_df, crossed_variance, suite_mean, task_weights
from bayeserr.stats.view import DataView

#: what each weighting estimates, for the reports
ESTIMANDS = {"macro": "each task weighs the same (1/T)",
             "size": "each task weighs its share of the suite's questions (the pooled mean when every model "
                     "answered every question)",
             "user": "the weights given (--task-weights)"}


@dataclass(frozen=True)
class SuiteScore:
    """One model's suite score under one weighting."""

    model: str
    weighting: str
    mean: float
    se: float
    df: float
    ci: tuple

    def to_dict(self) -> dict:
        return {"model": self.model, "weighting": self.weighting, "mean": self.mean, "se": self.se,
                "df": self.df, "ci": list(self.ci)}


@dataclass(frozen=True)
class SuiteDiff:
    """A − B under one weighting, on the questions both answered."""

    a: str
    b: str
    weighting: str
    diff: float
    se: float
    df: float
    ci: tuple
    p_value: float
    p_holm: float = float("nan")  #: Holm-adjusted over every pair of this weighting

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "weighting": self.weighting, "diff": self.diff, "se": self.se,
                "df": self.df, "ci": list(self.ci), "p_value": self.p_value, "p_holm": self.p_holm}


@dataclass(frozen=True)
class SuiteRank:
    """One model's place under the suite's headline weighting (``docs/methods.md`` §3.10, §3.12)."""

    model: str
    mean: float
    rank: int  #: by the suite score (1 = best)
    rank_own: tuple  #: (low, high): its own rank interval
    tied_with_best: bool  #: in the confidence set for the best model
    p_is_best: float

    def to_dict(self) -> dict:
        return {"model": self.model, "mean": self.mean, "rank": self.rank, "rank_own": list(self.rank_own),
                "tied_with_best": self.tied_with_best, "p_is_best": self.p_is_best}


@dataclass(frozen=True)
class Suite:
    """Suite scores and differences of every model and pair, per weighting."""

    tasks: tuple            #: task names, in order
    task_questions: tuple   #: questions per task
    weights: dict           #: weighting -> tuple of weights (size weights: of all questions)
    scores: tuple           #: SuiteScore, by weighting then model
    pairs: tuple            #: SuiteDiff, by weighting then pair
    level: float
    clusters: str           #: "within tasks", "across tasks", "none" or "are the tasks" (then not used)
    unanswered: dict = field(default_factory=dict)  #: model -> tasks it answered no question of
    #: the ranking under the headline weighting (models with a suite score, best first)
    ranking: tuple = ()
    #: the strata are the data's clusters (--clusters-as strata): the headline is the size weighting
    clusters_as_strata: bool = False

    @property
    def tied_with_best(self) -> list[str]:
        return [r.model for r in self.ranking if r.tied_with_best]

    def to_dict(self) -> dict:
        """The JSON ``suite`` block (schema ``bayeserr.report/2``, additive)."""
        return {"tasks": [{"task": t, "n_questions": n} for t, n in zip(self.tasks, self.task_questions)],
                "weightings": {w: {"weights": dict(zip(self.tasks, ws)), "estimand": ESTIMANDS[w]}
                               for w, ws in self.weights.items()},
                "level": self.level, "clusters": self.clusters,
                "models": [s.to_dict() for s in self.scores], "pairs": [p.to_dict() for p in self.pairs],
                "clusters_as_strata": self.clusters_as_strata,
                "ranking": None if not self.ranking else {
                    "weighting": self.headline, "level": self.level, "tied_with_best": self.tied_with_best,
                    "models": [r.to_dict() for r in self.ranking]}}

    def to_frame(self) -> pd.DataFrame:
        """One row per (weighting, model): mean, se, df, ci_low, ci_high."""
        rows = [{**{k: v for k, v in s.to_dict().items() if k != "ci"}, "ci_low": s.ci[0], "ci_high": s.ci[1]}
                for s in self.scores]
        return pd.DataFrame(rows)

    def of(self, weighting: str) -> list:
        return [s for s in self.scores if s.weighting == weighting]

    @property
    def headline(self) -> str:
        """The weighting the suite's comparisons are read under: the user's, else macro (clusters read
        as strata: size, the pooled mean)."""
        if self.clusters_as_strata:
            return "size"
        return "user" if "user" in self.weights else "macro"

    def pairs_of(self, weighting: str) -> list:
        return [p for p in self.pairs if p.weighting == weighting]


def _check_weights(weights, tasks) -> dict:
    """``{"macro", "size"}`` plus, if given, the user's ``{task: weight}`` as ``"user"``."""
    out = {}
    if weights is None:
        return out
    if not isinstance(weights, dict):
        raise InputError(f"task weights take a dict {{task: weight}}; got {describe(weights)}.")
    unknown = [t for t in weights if str(t) not in tasks]
    if unknown:
        raise InputError(f"task weights name tasks not in the data: {', '.join(map(str, unknown))}. "
                         f"Tasks: {', '.join(tasks)}.")
    values = []
    for t in tasks:
        w = weights.get(t, 0.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not np.isfinite(w) or w < 0:
            raise InputError(f"task weight of '{t}' must be a number ≥ 0; got {describe(w)}.")
        values.append(float(w))
    if sum(values) <= 0:
        raise InputError("task weights are all 0; give at least one task a positive weight.")
    out["user"] = np.array(values)
    return out


def cluster_rule(view: DataView, task_codes: np.ndarray) -> tuple:
    """Cluster codes for the suite variance and how they are used: ``within tasks``
    (S1, S2), ``across tasks`` (a cluster in two tasks: S3 with the Bell–McCaffrey df
    of :func:`~bayeserr.stats.suite.crossed_df`), ``none``, or ``are the tasks`` (not used)."""
    if view.codes is None:
        return None, "none"
    per_task = [np.unique(view.codes[task_codes == t]).size for t in range(task_codes.max() + 1)]
    if max(per_task) == 1 and np.unique(view.codes).size == len(per_task):  # lm-eval: clustered by task
        return None, "are the tasks"
    tasks_of_cluster = np.zeros(view.codes.max() + 1, dtype=int)
    np.add.at(tasks_of_cluster, np.unique(np.stack([view.codes, task_codes]), axis=1)[0], 1)
    return view.codes, "across tasks" if (tasks_of_cluster > 1).any() else "within tasks"


def suite_rows(y, task_codes, codes, how: str, w):
    """Suite mean, SE and df of each row of ``y`` under the cluster rule ``how``."""
    res = suite_mean(y, task_codes, codes if how == "within tasks" else None, w)
    if how != "across tasks":
        return res.mean, res.se, res.df
    from bayeserr.stats.estimators import cluster_sums
    var = crossed_variance(y, task_codes, codes, res.weights)
    dof = crossed_df(y, task_codes, codes, res.weights)
    sizes = cluster_sums((~np.isnan(y)).astype(float), codes)
    ok = np.isfinite(res.mean) & (np.count_nonzero(sizes, axis=-1) >= 2)
    return (res.mean, np.where(ok, np.sqrt(var), np.nan), np.where(ok, dof, np.nan))


def holm_finite(p: np.ndarray) -> np.ndarray:
    """Holm over the pairs with a p-value (a pair with none is not in the family: NaN)."""
    out = np.full(len(p), np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = holm(p[ok])
    return out


def strata_suite(view: DataView, level: float = 0.95) -> Suite:
    """The clusters read as fixed strata (``--clusters-as strata``; ``docs/methods.md`` §3.10):
    the suite whose tasks are the clusters, led by the size weighting — the pooled mean, its
    variance Σ w_c² Var_c over these clusters (questions independent within each), so the
    answer holds for these clusters, not for clusters like them."""
    if view.codes is None:
        raise InputError("--clusters-as strata needs clusters (a cluster column, or --cluster-col).")
    if view.tasks is not None:
        raise InputError("--clusters-as strata reads the clusters as the tasks of a suite, but the data "
                         "already have tasks; drop --task-col (or the task column), or --clusters-as.")
    labels = np.asarray(view.clusters, dtype=object)[view.codes].astype(str)
    sizes = np.bincount(view.codes, minlength=len(view.clusters))
    single = sizes[view.codes] < 2
    if single.any():  # a stratum of one question has no variance: such clusters are pooled
        labels = np.where(single, COLLAPSED, labels)
        if single.sum() < 2:  # one question alone: pooled with the smallest other cluster
            others = np.flatnonzero(sizes >= 2)
            smallest = view.clusters[others[np.argmin(sizes[others])]]
            labels = np.where(single | (labels == str(smallest)), COLLAPSED, labels)
    strata = replace(view, tasks=labels, codes=None, clusters=None)  # questions independent within each
    return suite_view(strata, level, strata=True)


#: the stratum of the clusters of one question, with the smallest other cluster when only one question
#: is left (collapsed strata, as survey practice does)
COLLAPSED = "(small clusters, pooled)"


def suite_view(view: DataView, level: float = 0.95, weights=None, strata: bool = False) -> Suite | None:
    """The suite of ``view`` (None when it has fewer than two tasks); ``strata``: its tasks are
    the data's clusters (:func:`strata_suite`), ranked under the size weighting."""
    if view.tasks is None or len(np.unique(view.tasks)) < 2:
        if weights:
            raise InputError("task weights need a task for each question and at least two tasks; the data "
                             f"have {'no task column' if view.tasks is None else 'one task'} "
                             "(--task-col names it; eval logs: each run's task).")
        return None
    tasks, task_codes = np.unique(view.tasks, return_inverse=True)
    tasks = tuple(str(t) for t in tasks)
    weightings = {w: w for w in WEIGHTINGS} | _check_weights(weights, tasks)
    codes, how = cluster_rule(view, task_codes)
    s = view.s
    names = view.models
    pairs = list(combinations(range(len(names)), 2))
    d = (s[[a for a, _ in pairs]] - s[[b for _, b in pairs]]) if pairs else np.empty((0, s.shape[1]))
    # size weights are the tasks' shares of the suite's questions, for every model alike: a model
    # that skipped a task has no suite score (the estimand weighs every task), as under macro
    weightings["size"] = np.bincount(task_codes) / len(task_codes)
    scores, diffs, used = [], [], {}
    for label, w in weightings.items():
        w = np.asarray(w, dtype=float) if not isinstance(w, str) else w
        mean, se, dof = suite_rows(s, task_codes, codes, how, w)
        used[label] = tuple(float(x) for x in task_weights(w, np.bincount(task_codes)))
        ci = np.clip(t_test(mean, se, dof, level).ci, 0.0, 1.0)  # a mean of scores in [0, 1]
        scores += [SuiteScore(m, label, float(mean[j]), float(se[j]), float(dof[j]),
                              (float(ci[j, 0]), float(ci[j, 1]))) for j, m in enumerate(names)]
        if pairs:
            pm, pse, pdf = suite_rows(d, task_codes, codes, how, w)
            tt = t_test(pm, pse, pdf, level)
            pci = np.clip(tt.ci, -1.0, 1.0)
            p_holm = holm_finite(tt.p_value)
            diffs += [SuiteDiff(names[a], names[b], label, float(pm[k]), float(pse[k]), float(pdf[k]),
                                (float(pci[k, 0]), float(pci[k, 1])), float(tt.p_value[k]), float(p_holm[k]))
                      for k, (a, b) in enumerate(pairs)]
    answered = np.stack([(~np.isnan(s[:, task_codes == t])).any(axis=1) for t in range(len(tasks))], axis=1)
    unanswered = {m: tuple(t for t, a in zip(tasks, answered[j]) if not a) for j, m in enumerate(names)}
    out = Suite(tasks, tuple(int(n) for n in np.bincount(task_codes)), used, tuple(scores), tuple(diffs),
                level, how, {m: ts for m, ts in unanswered.items() if ts}, clusters_as_strata=strata)
    return replace(out, ranking=suite_ranking(out))


def suite_ranking(suite: Suite, seed: int = 0) -> tuple:
    """Own rank intervals and the set tied with the best under the suite's headline
    weighting, from its pairs' t on their df (:func:`pairs_ranking`).  Models without a
    suite score are left out; fewer than two with one: no ranking."""
    w = suite.headline
    scores = [x for x in suite.of(w) if np.isfinite(x.mean)]
    if len(scores) < 2:
        return ()
    names = [x.model for x in scores]
    pos = {m: i for i, m in enumerate(names)}
    means = np.array([x.mean for x in scores])
    pairs = [(pos[p.a], pos[p.b], p.diff, p.se, p.df) for p in suite.pairs_of(w) if p.a in pos and p.b in pos]
    rank, rank_own, in_set, p_best = pairs_ranking(means, pairs, suite.level, seed, names)
    order = np.lexsort((np.arange(len(names)), -means))
    return tuple(SuiteRank(names[j], float(means[j]), int(rank[j]), tuple(int(v) for v in rank_own[j]),
                           bool(in_set[j]), float(p_best[j])) for j in order)


def pairs_ranking(means, pairs, level: float, seed: int, names) -> tuple:
    """``(rank, rank_own, in_set, p_best)`` of M models from their means and their pairs'
    ``(i, j, diff, se, df)`` (t on df; ``docs/methods.md`` §3.10): the rank by the mean
    (equal means to rounding tie), each model's own rank interval and the ``level`` set
    tied with the best (:func:`bayeserr.stats.best.best_set`; the pairs' variances set the
    joint law; a pair without a positive SE is left out).  ``names`` order the draws."""
    from bayeserr.stats.best import best_set, covariance_from_pairs, pair_inputs
    means = np.asarray(means, dtype=float)
    m = len(means)
    pairs = [p for p in pairs if np.isfinite(p[3]) and p[3] > 0]
    V, z = pair_inputs(m, [p[0] for p in pairs], [p[1] for p in pairs], [p[2] / p[3] for p in pairs],
                       [p[4] if np.isfinite(p[4]) else np.inf for p in pairs], [p[3] * p[3] for p in pairs])
    best = best_set(covariance_from_pairs(V), z, level=level, seed=seed,
                    order=np.argsort(np.asarray(names, dtype=object)))
    rank = 1 + (means[None, :] > means[:, None] + 1e-12).sum(axis=1)  # equal scores (to rounding) tie
    return rank, best.rank_own, best.in_set, best.p_best


def suite(ds, *, weights=None, level: float = 0.95) -> Suite:
    """Suite scores of a loaded dataset with a ``task`` coordinate (``docs/methods.md`` §3.12).

    ``weights``: optional ``{task: weight}`` (normalised; tasks not named get 0)
    added as the ``user`` weighting beside ``macro`` and ``size``.  Raises
    :class:`~bayeserr.base.errors.InputError` when the data have fewer than
    two tasks.
    """
    view = DataView.from_dataset(ds)
    out = suite_view(view, check_level(level), weights)
    if out is None:
        raise InputError("suite scores need a task for each question and at least two tasks: load with "
                         "task_col='COLUMN' (eval logs: each run's task).")
    return out
