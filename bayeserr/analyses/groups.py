"""lm-evaluation-harness task groups scored by bayeserr, beside lm-eval's own numbers
(``docs/methods.md`` §3.12).

lm-eval reports a group (``mmlu`` over ``mmlu_stem``, ``mmlu_humanities``, …)
as a mean of its *leaf* tasks' scores, size-weighted (``weight_by_size``,
mmlu's choice) or plain, with a "pooled" stderr that treats the group as one
sample.  :func:`group_scores` scores every group the data hold whole as a
suite over its leaf tasks (:func:`bayeserr.analyses.suite.suite_view` on the
group's questions): under lm-eval's weighting, and under both ``macro`` (each
task 1/T) and ``size`` (each question the same), each with the stratified
SE, df and t interval of §3.12, beside lm-eval's published score and stderr
and whether the scores agree (they do, to rounding, when the same questions
and metric were used).  The groups come from :func:`bayeserr.data.loading.task_groups`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from bayeserr.analyses.suite import SuiteScore, suite_view
from bayeserr.base.errors import InputError, describe
from bayeserr.base.registry import check_level
from bayeserr.stats.fewclusters import t_test
from bayeserr.stats.suite import suite_mean
from bayeserr.stats.view import DataView

#: bayeserr's group score and lm-eval's published one "agree" within this (absolute)
AGREE_TOL = 1e-9
WEIGHTINGS = ("macro", "size")


@dataclass(frozen=True)
class GroupInfo:
    """One lm-eval group: its tasks, how lm-eval aggregates it, and whether it was scored."""

    group: str
    tasks: tuple             #: leaf tasks (nested groups flattened), as lm-eval aggregates them
    children: tuple          #: direct children (tasks or groups), for showing the tree
    task_questions: tuple    #: questions of each leaf task in the data (0: missing)
    metric: str | None       #: lm-eval's ``"metric,filter"`` key the tasks were read with
    weighting: str | None    #: lm-eval's: "size" (weight_by_size), "macro", or None (unknown)
    weighting_from: str      #: how the weighting is known
    missing: tuple           #: leaf tasks not in the data: the group is then not scored
    clusters: str | None     #: as :attr:`bayeserr.analyses.suite.Suite.clusters` (None: not scored)

    @property
    def scored(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict:
        return {"group": self.group, "tasks": [{"task": t, "n_questions": n}
                                               for t, n in zip(self.tasks, self.task_questions)],
                "children": list(self.children), "metric": self.metric, "weighting": self.weighting,
                "weighting_from": self.weighting_from, "missing": list(self.missing),
                "clusters": self.clusters}


@dataclass(frozen=True)
class GroupScore:
    """One model's score of one group: bayeserr's (lm-eval's weighting, macro, size) and lm-eval's."""

    group: str
    model: str
    weighting: str | None    #: lm-eval's weighting, that of ``mean`` (None: unknown, ``mean`` NaN)
    mean: float
    se: float
    df: float
    ci: tuple
    macro: SuiteScore        #: each leaf task 1/T
    size: SuiteScore         #: each question the same (the pooled mean)
    n_questions: int         #: questions of the group the model answered
    published: float | None  #: lm-eval's group score (None: none published for this model)
    published_stderr: float | None  #: lm-eval's pooled stderr (None: "N/A" or none)
    published_n: int | None  #: lm-eval's question count of the group
    published_file: str | None  #: the results file it came from
    same_run: bool | None    #: that file is of the run whose samples were read
    diff: float | None       #: ``mean − published``
    agree: bool | None       #: ``|diff| ≤`` :data:`AGREE_TOL` (None: nothing to compare)

    def to_dict(self) -> dict:
        return {"group": self.group, "model": self.model, "weighting": self.weighting, "mean": self.mean,
                "se": self.se, "df": self.df, "ci": list(self.ci),
                "macro": _brief(self.macro), "size": _brief(self.size), "n_questions": self.n_questions,
                "published": None if self.published is None else {
                    "score": self.published, "stderr": self.published_stderr, "n": self.published_n,
                    "file": self.published_file, "same_run": self.same_run},
                "diff": self.diff, "agree": self.agree}

    def row(self) -> dict:
        out = {"group": self.group, "model": self.model, "weighting": self.weighting, "mean": self.mean,
               "se": self.se, "df": self.df, "ci_low": self.ci[0], "ci_high": self.ci[1]}
        for w in WEIGHTINGS:
            s = getattr(self, w)
            out |= {f"{w}_mean": s.mean, f"{w}_se": s.se, f"{w}_df": s.df, f"{w}_ci_low": s.ci[0],
                    f"{w}_ci_high": s.ci[1]}
        return out | {"n_questions": self.n_questions, "published": self.published,
                      "published_stderr": self.published_stderr, "published_n": self.published_n,
                      "diff": self.diff, "agree": self.agree}


def _brief(s: SuiteScore) -> dict:
    return {"mean": s.mean, "se": s.se, "df": s.df, "ci": list(s.ci)}


@dataclass(frozen=True)
class GroupScores:
    """Every lm-eval group of the data: :class:`GroupInfo` and, for those scored, each model's
    :class:`GroupScore`."""

    groups: tuple            #: GroupInfo, in the order of the results files
    scores: tuple            #: GroupScore, by group then model
    level: float

    def of(self, group: str) -> list:
        return [s for s in self.scores if s.group == group]

    def to_dict(self) -> dict:
        return {"level": self.level, "agree_tol": AGREE_TOL,
                "groups": [g.to_dict() | {"models": [s.to_dict() for s in self.of(g.group)]}
                           for g in self.groups]}

    def to_frame(self) -> pd.DataFrame:
        """One row per (group, model): bayeserr's score under lm-eval's weighting (mean, se, df,
        ci_low, ci_high), the ``macro_*`` and ``size_*`` scores, and lm-eval's published score,
        stderr and question count, the difference and whether they agree."""
        return pd.DataFrame([s.row() for s in self.scores],
                            columns=None if self.scores else ["group", "model", "weighting", "mean"])


def _group_dict(groups) -> dict:
    """The groups as a dict: a dict (``task_groups(ds)``), its JSON text, or a loaded dataset."""
    if groups is None:
        return {}
    if isinstance(groups, xr.Dataset):
        from bayeserr.data.loading import task_groups
        return task_groups(groups)
    if isinstance(groups, (str, bytes)):
        try:
            groups = json.loads(groups)
        except ValueError:
            raise InputError("groups: not the JSON text of ds.attrs['task_groups'].") from None
    if not isinstance(groups, dict):
        raise InputError("groups takes the dict of bayeserr.data.loading.task_groups(ds); got "
                         f"{describe(groups)}.")
    return groups


def _score(view: DataView, level: float):
    """``({weighting: [SuiteScore per model]}, clusters)`` of a view of one or more tasks."""
    suite = suite_view(view, level)
    if suite is not None:
        return {w: suite.of(w) for w in WEIGHTINGS}, suite.clusters
    # one task: the suite is the task's mean (S1 with T = 1), clustered within it when the
    # clusters are not the task itself (lm-eval's rows are clustered by task)
    codes = view.codes if view.codes is not None and np.unique(view.codes).size > 1 else None
    how = "within tasks" if codes is not None else "none" if view.codes is None else "are the tasks"
    res = suite_mean(view.s, np.zeros(view.s.shape[1], dtype=np.int64), codes, "macro")
    ci = np.clip(t_test(res.mean, res.se, res.df, level).ci, 0.0, 1.0)
    out = {w: [SuiteScore(m, w, float(res.mean[j]), float(res.se[j]), float(res.df[j]),
                          (float(ci[j, 0]), float(ci[j, 1]))) for j, m in enumerate(view.models)]
           for w in WEIGHTINGS}
    return out, how


def _opt(value, kind):
    try:
        return None if value is None else kind(value)
    except (TypeError, ValueError):
        return None


def group_scores(view: DataView, groups, level: float = 0.95) -> GroupScores:
    """Each lm-eval group's score per model, by bayeserr and by lm-eval (``docs/methods.md`` §3.12).

    ``view``: the data (:meth:`DataView.from_dataset`); ``groups``: the task groups,
    ``bayeserr.data.loading.task_groups(ds)`` (or that JSON text, or the dataset).  A group
    is scored when every one of its leaf tasks is in the view: as the suite of those tasks
    (:func:`bayeserr.analyses.suite.suite_view` on their questions; one task: its mean),
    under ``macro`` and ``size`` weights and under lm-eval's weighting (``weighting``; NaN
    when unknown), beside lm-eval's published score and stderr; ``agree`` says whether the
    scores match to :data:`AGREE_TOL`.  A group with tasks missing is listed, not scored.
    """
    level = check_level(level)
    groups = _group_dict(groups)
    tasks_of = np.asarray(view.tasks) if view.tasks is not None else np.array([], dtype=str)
    sizes = pd.Series(tasks_of).value_counts().to_dict() if len(tasks_of) else {}
    infos, scores = [], []
    for name, e in groups.items():
        if not isinstance(e, dict) or not isinstance(e.get("tasks"), list) or not e["tasks"]:
            continue
        tasks = tuple(str(t) for t in e["tasks"])
        missing = tuple(t for t in tasks if t not in sizes)
        weighting = e.get("weighting") if e.get("weighting") in WEIGHTINGS else None
        info = {"group": str(name), "tasks": tasks,
                "children": tuple(str(c) for c in e.get("children") or tasks),
                "task_questions": tuple(int(sizes.get(t, 0)) for t in tasks),
                "metric": e.get("metric"), "weighting": weighting,
                "weighting_from": str(e.get("weighting_from") or ""), "missing": missing}
        if missing:
            infos.append(GroupInfo(**info, clusters=None))
            continue
        sub = view.questions_where(np.isin(tasks_of, tasks))
        by_weighting, clusters = _score(sub, level)
        infos.append(GroupInfo(**info, clusters=clusters))
        answered = (~np.isnan(sub.s)).sum(axis=1)
        published = e.get("published") if isinstance(e.get("published"), dict) else {}
        for j, model in enumerate(sub.models):
            macro, size = by_weighting["macro"][j], by_weighting["size"][j]
            main = {"macro": macro, "size": size}.get(weighting)
            mean, se, dof, ci = ((main.mean, main.se, main.df, main.ci) if main is not None
                                 else (np.nan, np.nan, np.nan, (np.nan, np.nan)))
            pub = published.get(model) if isinstance(published.get(model), dict) else {}
            score = _opt(pub.get("score"), float)
            diff = mean - score if score is not None and np.isfinite(mean) else None
            scores.append(GroupScore(
                str(name), model, weighting, mean, se, dof, ci, macro, size, int(answered[j]), score,
                _opt(pub.get("stderr"), float), _opt(pub.get("n"), int), pub.get("file"),
                pub.get("same_run") if score is not None else None,
                diff, None if diff is None else bool(abs(diff) <= AGREE_TOL)))
    return GroupScores(tuple(infos), tuple(scores), level)
