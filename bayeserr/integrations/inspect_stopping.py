"""Inspect AI early stopping: end a running task once its answer is known.

Install with ``pip install "bayeserr[inspect]"`` (``import bayeserr`` never
imports this module).  Give a task the manager and it stops by itself::

    from inspect_ai import Task
    from bayeserr.integrations.inspect_stopping import sequential_stopping

    # one model: stop once its mean score is known to ±2 points (or after 2,000 questions)
    Task(..., early_stopping=sequential_stopping(width=0.02, budget=2000))

    # a candidate against a baseline's existing log of the same task:
    # stop once the candidate is known to be better or worse (the default rule) ...
    Task(..., early_stopping=sequential_stopping(baseline="logs/baseline.eval"))
    # ... or known not to be worse by more than 1 point (non-inferiority)
    Task(..., early_stopping=sequential_stopping(baseline="logs/baseline.eval", margin=0.01))

After every answer the manager updates an anytime-valid confidence sequence
(:mod:`bayeserr.stats.sequential`, ``docs/methods.md`` §3.13) and applies the
rules of :func:`bayeserr.analyses.sequential.watch_scores`; because the
sequence holds at every look at once, checking after every answer keeps the
error rate at ``1 − level``.  Once a rule holds, every sample Inspect has not
started yet is skipped (an ``EarlyStop`` whose reason is the verdict); samples
already running finish normally.  The log records why: ``results.early_stopping``
holds this manager's name (:data:`MANAGER`), the samples skipped and, as its
``metadata``, the verdict (:meth:`SequentialStopping.summary`).

**Choices, and why.**

* *The stream.*  Questions enter the sequence in the order they finish.  The
  sequence assumes that order is random: shuffle the dataset
  (``json_dataset(..., shuffle=True)``, ``inspect eval --sample-shuffle``);
  the log's metadata says when it was not.  Questions that take longer when
  answered wrongly bend the order a little when many samples run at once.
* *Epochs.*  Inspect runs every sample's first epoch before any second one,
  so a question's mean over all its epochs would arrive only in the last
  epoch.  The sequence uses each question's **first epoch** only: its score
  has the same expectation as the mean over epochs, so the sequence estimates
  the same quantity (with a little more noise).  Once a rule holds, the later
  epochs are skipped too; if none held during the first epoch, the later
  epochs run as planned.
* *A baseline.*  ``baseline`` is the baseline's Inspect log (a file, or a
  folder holding one run of the task), read by bayeserr's Inspect reader
  (:func:`bayeserr.data.readers.inspect_logs.read_inspect`); its score for a question is
  the mean over its epochs.  A − B is taken on the questions both answered,
  in the order the candidate finishes them; the candidate's other questions
  run but do not enter the sequence.
* *Scores* are mapped as the reader maps them
  (:func:`bayeserr.data.readers.values.inspect_value_to_float`: C = 1, I = 0,
  P = 0.5, N = 0, yes/true = 1, no/false = 0, numbers) and must lie in
  [0, 1]; unscored (NaN) and failed samples are left out.
* *Clusters* (``cluster=`` a sample-metadata field, dotted paths allowed):
  clusters are the sampling units and a cluster enters the sequence when its
  last question (of those that enter the sequence) is answered, so an
  unfinished cluster waits.  The sequence assumes the clusters **finish in
  random order**: arrange the dataset cluster by cluster with the clusters
  shuffled (shuffling questions makes large clusters finish last).
* *Cost.*  Each check recomputes the whole sequence (vectorised; tens of
  milliseconds at a few thousand answers with ``method="betting"``, under a
  millisecond with ``"asymptotic"``).  By default the manager checks after
  every answer up to 200 and then whenever the answers have grown by 0.5%
  (``check_every=``); the first look at which a rule held is found exactly
  whenever the check runs, so a check skipped only delays the stop.
* One manager runs one task at a time: ``eval(task, model=[a, b])`` runs
  tasks side by side, which the protocol cannot tell apart (give each model
  its own ``Task``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

try:
    from inspect_ai.util import EarlyStop
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "bayeserr.integrations.inspect_stopping needs Inspect AI, which the core install does not include: "
        f'pip install "bayeserr[inspect]" (import failed: {exc})') from exc

from bayeserr.analyses.sequential import METHODS, Rules, Watch, watch_scores
from bayeserr.base.errors import InputError, describe, suggest
from bayeserr.data.readers import id_text, inspect_value_to_float
from bayeserr.integrations.inspect_metrics import _lookup  # the metrics' dotted metadata lookup

__all__ = ["MANAGER", "SequentialStopping", "sequential_stopping"]

#: The manager's name, written by Inspect to the log's ``results.early_stopping.manager``.
MANAGER = "bayeserr/sequential_stopping"
#: Schema of the metadata :meth:`SequentialStopping.complete_task` returns.
SCHEMA = "bayeserr.inspect_stopping/1"
#: With ``check_every=None``: check after every answer up to this many ...
EVERY_ANSWER_UP_TO = 200
#: ... then whenever the answers have grown by this fraction.
CHECK_GROWTH = 0.005
#: The metadata's ``order`` lists at most this many sample ids (the order they entered the sequence).
MAX_ORDER = 20_000

_EPOCHS = ("first epoch only: each question enters the sequence with the score of its first epoch "
           "(same expectation as its mean over epochs); later epochs are skipped once a rule holds")


def _score(value, where: str) -> float:
    """A score in [0, 1] (NaN: unscored), mapped as bayeserr's Inspect reader maps it."""
    x = inspect_value_to_float(value, where)
    if not math.isnan(x) and not 0.0 <= x <= 1.0:
        raise InputError(f"{where}: score {x:g} lies outside [0, 1]; the confidence sequence needs scores "
                         "in [0, 1]. Rescale the scorer's values, or pick another scorer= .")
    return x


def _fraction(name: str, value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InputError(f"sequential_stopping: {name}= must be a number in (0, 1) in score units "
                         f"(0.02 = two points); got {describe(value)}.")
    return float(value)


class SequentialStopping:
    """Inspect's ``EarlyStopping`` protocol driven by a confidence sequence.

    Create it with :func:`sequential_stopping` (same arguments) and pass it as
    ``Task(..., early_stopping=...)``.  Inspect calls :meth:`start_task`, then
    :meth:`schedule_sample` before each sample and :meth:`complete_sample`
    after each, and :meth:`complete_task` at the end; the methods do no I/O
    apart from reading the baseline log in :meth:`start_task` and never wait,
    so each runs as one step of Inspect's event loop.
    """

    def __init__(self, *, baseline=None, scorer: str | None = None, cluster: str | None = None,
                 settle: bool = True, tie: float | None = None, margin: float | None = None,
                 width: float | None = None, budget: int | None = None, level: float = 0.95,
                 method: str = "auto", baseline_model: str | None = None,
                 baseline_scorer: str | None = None, check_every: int | None = None):
        # size: the public API's keyword options, each documented above
        self.pair = baseline is not None
        tie, margin, width = _fraction("tie", tie), _fraction("margin", margin), _fraction("width", width)
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise InputError(f"sequential_stopping: budget= must be a whole number of questions ≥ 1; "
                             f"got {describe(budget)}.")
        if not isinstance(settle, bool):
            raise InputError(f"sequential_stopping: settle= must be True or False; got {describe(settle)}.")
        if not self.pair and (tie is not None or margin is not None):
            raise InputError("sequential_stopping: tie= and margin= compare a candidate with a baseline: "
                             "give baseline= (the baseline's Inspect log); one model takes width= or "
                             "budget=.")
        if not self.pair and width is None and budget is None:
            raise InputError("sequential_stopping: one model has no gap to settle: give width= (its mean "
                             "known to ±width) or budget=, or baseline= to compare with a baseline's log.")
        if self.pair and not settle and margin is None and tie is None and width is None and budget is None:
            raise InputError("sequential_stopping: settle=False leaves no rule: give margin=, tie=, width= "
                             "or budget=.")
        self.rules = Rules(settle=settle, tie=tie, margin=margin, width=width, budget=budget).check(self.pair)
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
            raise InputError(f"sequential_stopping: level= must be a number in (0, 1), e.g. 0.95; "
                             f"got {describe(level)}.")
        self.level = float(level)
        if method not in METHODS:
            raise InputError(f"sequential_stopping: method= must be one of {', '.join(METHODS)}; got "
                             f"{describe(method)}.{suggest(str(method), METHODS)}")
        self.method = method
        for name, value in (("scorer", scorer), ("cluster", cluster), ("baseline_model", baseline_model),
                            ("baseline_scorer", baseline_scorer)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InputError(f"sequential_stopping: {name}= must be a name (text); "
                                 f"got {describe(value)}.")
        self.scorer, self.cluster, self.baseline_model = scorer, cluster, baseline_model
        if baseline_scorer is not None and (baseline is None or isinstance(baseline, Mapping)):
            raise InputError("sequential_stopping: baseline_scorer= names the scorer of the baseline's Inspect "
                             "log; give baseline= as the path of that log (a mapping already holds the "
                             "baseline's scores).")
        self.baseline_scorer = baseline_scorer
        if check_every is not None and (isinstance(check_every, bool) or not isinstance(check_every, int)
                                        or check_every < 1):
            raise InputError(f"sequential_stopping: check_every= must be a whole number of answers ≥ 1 "
                             f"(or None: automatic); got {describe(check_every)}.")
        self.check_every = check_every
        self._given: dict[str, float] | None = None
        self._path: str | None = None
        if isinstance(baseline, Mapping):
            if not baseline:
                raise InputError("sequential_stopping: baseline= is an empty mapping; give "
                                 "{sample id: score} or the path of the baseline's Inspect log.")
            given = {}
            for sid, value in baseline.items():
                key = id_text(sid)
                if key is None:
                    raise InputError(f"sequential_stopping: baseline= has the sample id {describe(sid)}; "
                                     "ids are numbers or text.")
                given[key] = _score(value, f"baseline= sample {sid}")
            self._given = {k: v for k, v in given.items() if not math.isnan(v)}  # unscored: left out
        elif isinstance(baseline, (str, os.PathLike)):
            self._path = os.fspath(baseline)
            if not os.path.exists(self._path):
                raise InputError(f"sequential_stopping: baseline={self._path!r} does not exist; give the "
                                 "baseline's Inspect log (.eval or .json) or a folder holding it.")
        elif baseline is not None:
            raise InputError(f"sequential_stopping: baseline= must be the path of the baseline's Inspect log "
                             f"(or a folder), or a mapping {{sample id: score}}; got {describe(baseline)}.")
        self._running: tuple[str, str] | None = None
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self.task: str | None = None
        self.model: str | None = None
        self._planned = 0
        self._epochs = 1
        self._ids: set[str] = set()
        self._cluster_of: dict[str, str] = {}
        self._expected: dict[str, int] = {}
        self._done: dict[str, int] = {}
        self._base: dict[str, float] = {}
        self._base_info: dict = {}
        self._a: list[float] = []
        self._b: list[float] = []
        self._labels: list[str] = []
        self._seen: set[str] = set()
        self._order: list[str] = []
        self._scorer: str | None = self.scorer
        self._checked = 0
        self._watch: Watch | None = None
        self._stopped: Watch | None = None
        self._stopped_after: int | None = None
        self._early_stops = 0
        self._left_out = {"later_epochs": 0, "not_in_baseline": 0, "unscored": 0, "no_score": 0,
                          "repeated": 0, "unknown_sample": 0}
        self._notes: list[str] = []
        self._names = ("A", None)

    @property
    def stopped(self) -> bool:
        """Whether a rule has held (every sample not yet started is skipped)."""
        return self._stopped is not None

    @property
    def watch(self) -> Watch | None:
        """The watch at the last check (:class:`bayeserr.analyses.sequential.Watch`), or None."""
        return self._stopped or self._watch

    # ------------------------------------------------------------------ the protocol
    async def start_task(self, task, samples, epochs: int) -> str:
        """Register the task about to run: its samples (ids, clusters) and, with a
        baseline, the baseline's scores on the same questions.  Returns :data:`MANAGER`."""
        return self.begin(task, samples, epochs)

    async def schedule_sample(self, id, epoch: int) -> EarlyStop | None:
        """``EarlyStop`` (the verdict as its reason) once a rule holds, else None."""
        return self.schedule(id, epoch)

    async def complete_sample(self, id, epoch: int, scores) -> None:
        """Add a finished sample's score to the sequence and check the rules."""
        self.add(id, epoch, scores)

    async def complete_task(self) -> dict:
        """The verdict for the log (:meth:`summary`); the manager is then free for another run."""
        out = self.summary()
        self._running = None
        return out

    # ------------------------------------------------------------------ the same, plain functions
    def begin(self, task, samples, epochs: int) -> str:
        """:meth:`start_task` without ``await``."""
        name, model = str(getattr(task, "task", "") or "task"), str(getattr(task, "model", "") or "model")
        if self._running is not None and self._running != (name, model):
            raise InputError(
                f"sequential_stopping: this manager is already watching task '{self._running[0]}' with "
                f"{self._running[1]}, and Inspect started '{name}' with {model} beside it. One manager "
                "watches one run at a time (the protocol does not say which run a sample belongs to): give "
                "each model its own Task with its own sequential_stopping(...), or run them one after the "
                "other (max_tasks=1).")
        try:
            return self._begin(task, samples, epochs, name, model)
        except BaseException:
            self._running = None  # this run did not start: the manager is free again
            raise

    def _begin(self, task, samples, epochs: int, name: str, model: str) -> str:
        self._reset()  # a new run, or a retry of the same one
        self._running = (name, model)
        self.task, self.model = name, model
        self._names = (model, None)
        self._epochs = int(epochs)
        declared = [s.name for s in (getattr(task, "scorers", None) or [])]
        if self.scorer is not None and declared and self.scorer not in declared:
            raise InputError(f"sequential_stopping: task '{name}' has no scorer '{self.scorer}'."
                             f"{suggest(self.scorer, declared)} Its scorers: {', '.join(declared)}.")
        if self._scorer is None and declared:
            self._scorer = declared[0]
            if len(declared) > 1:
                self._notes.append(f"Scorer '{declared[0]}', the first of {', '.join(declared)}; choose "
                                   "another with scorer=.")
        ids = []
        for sample in samples:
            sid = id_text(getattr(sample, "id", None))
            if sid is None:
                raise InputError(f"sequential_stopping: a sample of task '{name}' has no id; give every "
                                 "sample an id (Inspect numbers them when none has one).")
            ids.append(sid)
        if not ids:
            raise InputError(f"sequential_stopping: task '{name}' has no samples to run.")
        self._ids = set(ids)
        self._planned = len(ids) * self._epochs
        if self.pair:
            self._load_baseline(name, ids)
        use = [i for i in ids if i in self._base] if self.pair else ids
        if self.cluster is not None:
            for sample, sid in zip(samples, ids):
                label = id_text(_lookup(getattr(sample, "metadata", None), self.cluster))
                if label is None:
                    raise InputError(f"sequential_stopping: sample {sample.id} of task '{name}' has no "
                                     f"metadata field '{self.cluster}' (or it is empty); every sample needs "
                                     f"its cluster id for cluster='{self.cluster}'.")
                self._cluster_of[sid] = label
            for sid in use:
                label = self._cluster_of[sid]
                self._expected[label] = self._expected.get(label, 0) + 1
            self._notes.append(
                f"Clusters ('{self.cluster}', {len(self._expected)} of them) are the sampling units: the "
                "sequence assumes they finish in random order (arrange the dataset cluster by cluster, "
                "clusters shuffled).")
        dataset = getattr(task, "dataset", None)
        config = getattr(task, "config", None)
        shuffled = bool(getattr(dataset, "shuffled", False)) or bool(getattr(config, "sample_shuffle", None))
        if not shuffled and self.cluster is None:
            self._notes.append("The dataset was not shuffled: the sequence assumes the questions arrive in "
                               "random order (json_dataset(..., shuffle=True) or inspect eval "
                               "--sample-shuffle).")
        if self._epochs > 1:
            self._notes.append(f"Epochs: {self._epochs}; {_EPOCHS}.")
        return MANAGER

    def _load_baseline(self, task: str, ids: list[str]) -> None:
        if self._given is not None:
            self._base = {i: self._given[i] for i in ids if i in self._given}
            self._base_info = {"source": "mapping", "questions": len(self._given)}
            label = "the baseline"
            self._names = (self.model, "baseline")
            count = len(self._given)
            where = f"baseline= (a mapping of {count} sample id{'s' if count != 1 else ''})"
        else:
            frame = self._baseline_frame(task)
            base_task = str(frame["task"].iloc[0])
            base_model = str(frame["model"].iloc[0])
            per_question = frame.groupby("question_id", sort=False)["score"].mean()
            from bayeserr.data.readers.values import question_key  # the reader's question ids: "<task>/<id>"
            self._base = {i: float(per_question[k]) for i in ids
                          if (k := question_key(base_task, i)) in per_question.index}
            self._base_info.update({"source": self._path, "task": base_task, "model": base_model,
                                    "questions": int(per_question.size)})
            label = f"task '{base_task}' with {base_model}"
            a, b = self.model, base_model
            self._names = (f"{a} (candidate)", f"{b} (baseline)") if a == b else (a, b)
            where = f"the baseline {self._path} ({label}, {per_question.size} questions)"
        self._base_info["shared"] = len(self._base)
        if not self._base:
            example = ids[:3]
            raise InputError(f"sequential_stopping: {where} shares no sample id with task '{task}' "
                             f"({len(ids)} samples, ids such as {', '.join(example)}). The baseline must be "
                             "a run of the same task (same sample ids).")
        if len(self._base) < len(ids):
            self._notes.append(f"{len(ids) - len(self._base)} of the task's {len(ids)} samples are not in "
                               "the baseline: they run but do not enter the comparison.")

    def _baseline_file(self, task: str) -> str:
        """The baseline log to read: the file given, or, for a folder, its one finished,
        scored run of ``task`` (the task this manager watches), read from the logs' headers.
        None of them, or several, is an error saying which runs the folder holds and the fix;
        a folder whose every usable log is one run of another task is that run (the same
        questions under another task name: compared on the ids they share, with a note)."""
        from pathlib import Path

        from inspect_ai.log import read_eval_log

        from bayeserr.data.readers.runs import json_kind, log_files
        root = Path(self._path)
        if not root.is_dir():
            return self._path
        runs = []  # (file, task, model, status, scored, samples, created)
        unreadable = []
        for f in log_files(root, ("*.eval", "*.json")):
            if f.suffix == ".json" and json_kind(f) is not None:
                continue  # a manifest, bayeserr's own output: not a log
            try:
                h = read_eval_log(str(f), header_only=True)
            except Exception:  # noqa: BLE001 - not a log, or a damaged one: named below if nothing else fits
                unreadable.append(f.relative_to(root).as_posix())
                continue
            results = h.results
            scored = results is not None and any(getattr(x, "name", None) for x in (results.scores or []))
            runs.append(_BaselineRun(f.relative_to(root).as_posix(), str(h.eval.task), str(h.eval.model),
                                  str(h.status), scored, int(results.completed_samples) if results else 0,
                                  str(h.eval.created)))
        mine = [r for r in runs if r.task == task]
        usable = [r for r in mine if r.status == "success" and r.scored]
        left = [r for r in mine if r not in usable]
        where = f"the baseline folder {self._path}"
        fix = (f"Give baseline= the log of the run to compare with (a file), or a folder holding that one "
               f"finished, scored run of task '{task}'.")
        if self.baseline_model is not None and usable:
            models = sorted({r.model for r in usable})
            usable = [r for r in usable if r.model == self.baseline_model]
            if not usable:
                raise InputError(f"sequential_stopping: {where} has no run of task '{task}' by "
                                 f"baseline_model='{self.baseline_model}'.{suggest(self.baseline_model, models)} "
                                 f"Its runs of the task are by: {', '.join(models)}.")
        if len(usable) == 1:
            (run,) = usable
            others = [r for r in runs if r is not run]
            if others or unreadable:
                out = [_run_text(r) for r in others] + [f"{u} (not an Inspect log)" for u in unreadable]
                self._notes.append(f"The baseline folder {self._path} holds {len(runs) + len(unreadable)} logs: "
                                   f"the run of task '{task}' used is {run.file} ({run.model}, {run.samples} "
                                   f"samples); left out: {_listed(out)}.")
            return str(root / run.file)
        if len(usable) > 1:
            models = sorted({r.model for r in usable})
            if len(models) > 1:
                raise InputError(f"sequential_stopping: {where} holds runs of task '{task}' by {len(models)} "
                                 f"models ({', '.join(models)}); give one log file, or name the baseline with "
                                 "baseline_model=.")
            latest = max(usable, key=lambda r: r.created)
            raise InputError(f"sequential_stopping: {where} holds {len(usable)} finished, scored runs of task "
                             f"'{task}' by {models[0]}: {_listed([_run_text(r) for r in usable])}. Which one is "
                             f"the baseline is yours to say: give its log as baseline= (the latest is "
                             f"{root / latest.file}), or move the others out of the folder.")
        if mine:
            raise InputError(f"sequential_stopping: {where} has no finished, scored run of task '{task}': "
                             f"{_listed([_run_text(r) for r in left])}. Score it (inspect score), or run the "
                             f"baseline to the end. {fix}")
        tasks = sorted({r.task for r in runs if r.status == "success" and r.scored})
        if len(tasks) == 1 and sum(r.task == tasks[0] and r.status == "success" and r.scored for r in runs) == 1:
            return str(root / next(r.file for r in runs if r.task == tasks[0] and r.status == "success"
                                   and r.scored))  # one run of another task: its ids are compared (a note)
        found = sorted({r.task for r in runs})
        counts = [f"'{t}' ({sum(r.task == t for r in runs)} log{'s' if sum(r.task == t for r in runs) != 1 else ''})"
                  for t in found]
        held = f"its logs are runs of {', '.join(counts)}" if found else "it holds no Inspect log it can read"
        raise InputError(f"sequential_stopping: {where} holds no run of task '{task}', the task this manager "
                         f"watches: {held}.{suggest(task, found)} {fix}")

    def _baseline_frame(self, task: str):
        from bayeserr.data.readers import read_inspect
        wanted = self.baseline_scorer or self._scorer
        path = self._baseline_file(task)
        self._base_info["file"] = path
        try:
            frame, _ = read_inspect(path, scorer=wanted, cluster_from_log=False)
        except InputError as exc:
            if wanted is None or "has no score from scorer" not in str(exc):
                raise
            self._no_baseline_scorer(wanted, exc, path)
        scorers = frame.attrs.get("scorers") or [None]
        self._base_info["scorer"] = wanted or scorers[0]
        if wanted is not None and wanted != self._scorer:
            self._notes.append(f"The baseline's scorer is '{wanted}' (baseline_scorer=), this run's "
                               f"'{self._scorer}'.")
        tasks = sorted(set(frame["task"].astype(str)))
        if task in tasks:
            frame = frame[frame["task"] == task]
        elif len(tasks) == 1:
            self._notes.append(f"The baseline's task is '{tasks[0]}', this run's '{task}': compared on the "
                               "sample ids they share.")
        else:
            raise InputError(f"sequential_stopping: the baseline {self._path} has no run of task '{task}' "
                             f"(its tasks: {', '.join(tasks)}).{suggest(task, tasks)}")
        models = sorted(set(frame["model"].astype(str)))
        if self.baseline_model is not None:
            if self.baseline_model not in models:
                raise InputError(f"sequential_stopping: the baseline {self._path} has no run of "
                                 f"baseline_model='{self.baseline_model}'."
                                 f"{suggest(self.baseline_model, models)} Its models: {', '.join(models)}.")
            frame = frame[frame["model"] == self.baseline_model]
        elif len(models) > 1:
            raise InputError(f"sequential_stopping: the baseline {self._path} holds runs of task '{task}' by "
                             f"{len(models)} models ({', '.join(models)}); give one log file, or name the "
                             "baseline with baseline_model=.")
        return frame

    def _no_baseline_scorer(self, wanted: str, exc: InputError, path: str):
        """Raise: the baseline's log (``path``) has no score from ``wanted`` (or not on every
        sample), naming the scorers it has and the fix."""
        from bayeserr.data.readers import read_inspect
        try:
            seen = read_inspect(path, cluster_from_log=False)[0].attrs.get("scorers", [])
        except InputError:
            seen = []
        has = f" Its scorers: {', '.join(seen)}." if seen else ""
        if self.baseline_scorer is not None:
            raise InputError(f"sequential_stopping: the baseline {path} has no score from "
                             f"baseline_scorer='{wanted}' on every sample.{suggest(wanted, seen)}{has} Name "
                             "one of its scorers with baseline_scorer=.") from None
        which = ("name the one to compare with baseline_scorer=" if len(seen) != 1 else
                 f"if '{seen[0]}' scores the same thing, give baseline_scorer='{seen[0]}'")
        raise InputError(f"sequential_stopping: the baseline {path} has no score from '{wanted}', the "
                         f"scorer this run watches.{has} The two logs were scored differently: {which} "
                         "(or watch another of this run's scorers with scorer=). "
                         f"[{str(exc)[:300]}]") from None

    def schedule(self, id, epoch: int) -> EarlyStop | None:
        """:meth:`schedule_sample` without ``await``."""
        if self._stopped is None:
            return None
        self._early_stops += 1
        w = self._stopped
        return EarlyStop(id=id, epoch=epoch, reason=w.sentence,
                         metadata={"manager": MANAGER, "outcome": w.outcome, "rule": w.stop.rule,
                                   "questions": w.stop.t, "stopped_after": self._stopped_after})

    def add(self, id, epoch: int, scores) -> None:
        """:meth:`complete_sample` without ``await``."""
        if self._running is None:
            raise InputError("sequential_stopping: complete_sample before start_task; Inspect registers the "
                             "task first.")
        sid = id_text(id)
        if epoch != 1:
            self._left_out["later_epochs"] += 1
            return
        if sid not in self._ids:
            self._left_out["unknown_sample"] += 1
            return
        if sid in self._seen:
            self._left_out["repeated"] += 1  # a requeued sample: its first score stays
            return
        if self.pair and sid not in self._base:
            self._left_out["not_in_baseline"] += 1
            return
        self._seen.add(sid)
        if not scores:  # failed: no score
            self._left_out["no_score"] += 1
            self._drop_from_cluster(sid)
            return
        names = list(scores)
        if self._scorer is None:
            self._scorer = names[0]
            if len(names) > 1:
                self._notes.append(f"Scorer '{names[0]}', the first of {', '.join(names)}; choose another "
                                   "with scorer=.")
        if self._scorer not in scores:
            raise InputError(f"sequential_stopping: sample {id} has no score from scorer '{self._scorer}'."
                             f"{suggest(self._scorer, names)} Its scorers: {', '.join(names)}.")
        sample_score = scores[self._scorer]
        score = getattr(sample_score, "score", sample_score)
        value = getattr(score, "value", score)
        x = _score(value, f"sequential_stopping: sample {id}, scorer '{self._scorer}'")
        if math.isnan(x):  # Score.unscored()
            self._left_out["unscored"] += 1
            self._drop_from_cluster(sid)
            return
        self._a.append(x)
        if len(self._order) < MAX_ORDER:
            self._order.append(sid)
        if self.pair:
            self._b.append(self._base[sid])
        if self.cluster is not None:
            label = self._cluster_of[sid]
            self._labels.append(label)
            self._done[label] = self._done.get(label, 0) + 1
        if self._stopped is None and self._due():
            self._check()

    def _drop_from_cluster(self, sid: str) -> None:
        """A question that will never have a score: its cluster no longer waits for it."""
        if self.cluster is None:
            return
        label = self._cluster_of[sid]
        self._expected[label] -= 1
        if self._expected[label] == 0:
            del self._expected[label]
        elif self._stopped is None and self._done.get(label, 0) == self._expected[label] and self._a:
            self._check()

    def _due(self) -> bool:
        n = len(self._a)
        every = self.check_every or (1 if n <= EVERY_ANSWER_UP_TO else max(1, int(n * CHECK_GROWTH)))
        return n - self._checked >= every

    def _compute(self) -> Watch | None:
        """The watch of every answer so far, or None while nothing can be computed."""
        if not self._a:
            return None
        clusters = expected = None
        if self.cluster is not None:
            # every cluster's expected size, fixed at the start (the betting sequence's largest size)
            expected = dict(self._expected)
            if not any(self._done.get(k, 0) == v for k, v in expected.items()):
                return None  # no cluster is complete yet
            clusters = self._labels
        a, b = self._names
        return watch_scores(self._a, self._b if self.pair else None, clusters, a=a, b=b, rules=self.rules,
                            level=self.level, method=self.method, expected_sizes=expected)

    def _check(self) -> None:
        self._checked = len(self._a)
        watch = self._compute()
        if watch is None:
            return
        self._watch = watch
        if watch.stop is not None:
            self._stopped = watch
            self._stopped_after = len(self._a)

    # ------------------------------------------------------------------ the verdict
    def summary(self) -> dict:
        """The verdict as JSON values, what :meth:`complete_task` gives Inspect for the log.

        The watch's ``to_dict()`` (:class:`~bayeserr.analyses.sequential.Watch`)
        without the sequence arrays: ``decision`` (``"stop"`` or
        ``"continue"``), ``outcome``, ``sentence``, ``rules``, ``method``,
        ``level``, the ``stop`` (the first look at which a rule held:
        questions ``t``, rule, bounds), and ``estimate`` / ``lower`` / ``upper``
        after every answer received (the sequence is valid there too: the
        samples still running when the rule held are included).  Then
        ``settled`` (False when the run ended before any rule held),
        ``stopped_after`` (answers received when the stop was decided),
        ``order`` (the sample ids in the order they entered the sequence, at
        most ``MAX_ORDER``: ``bayeserr watch`` takes the log's questions in
        this order, so that it stops where the manager did),
        ``samples`` (planned, entered, skipped by the stop, left out and why),
        ``scorer``, ``cluster``, ``epochs``, ``baseline`` and ``notes``.
        """
        watch = self._compute() if self._a else None
        stopped = self._stopped
        if watch is not None and stopped is not None and watch.stop != stopped.stop:
            watch = stopped  # cannot differ (a look never changes once made); kept safe
        if watch is None:
            what = "no complete cluster" if self._a else "no answer"
            out = {"schema": SCHEMA, "decision": "continue", "outcome": None, "settled": False,
                   "sentence": f"continue: {what} yet to build the confidence sequence on.",
                   "rules": self.rules.to_dict(), "method": self.method, "level": self.level,
                   "a": self._names[0], "b": self._names[1] if self.pair else None, "stop": None}
        else:
            out = {"schema": SCHEMA, **{k: v for k, v in watch.to_dict().items()
                                        if k not in ("schema", "sequence")}}
            out["settled"] = watch.stop is not None and watch.outcome != "budget"
        out.update({
            "manager": MANAGER, "task": self.task, "model": self.model,
            "stopped_after": self._stopped_after,
            "samples": {"planned": self._planned, "entered": len(self._a),
                        "skipped_by_stop": self._early_stops, **self._left_out},
            "order": list(self._order),
            "scorer": self._scorer, "cluster": self.cluster, "epochs": self._epochs,
            "epoch_rule": _EPOCHS, "baseline": dict(self._base_info) if self.pair else None,
            "check_every": self.check_every or f"every answer up to {EVERY_ANSWER_UP_TO}, then every "
                                               f"{CHECK_GROWTH:.1%} more",
        })
        out["notes"] = list(dict.fromkeys(list(out.get("notes") or []) + self._notes))
        for key in ("estimate", "lower", "upper"):
            if key in out and not math.isfinite(out[key]):
                out[key] = None
        return out


@dataclass(frozen=True)
class _BaselineRun:
    """One log of a baseline folder, from its header."""

    file: str
    task: str
    model: str
    status: str
    scored: bool
    samples: int
    created: str


def _run_text(r: _BaselineRun) -> str:
    why = ("" if r.status == "success" and r.scored else
           f", {r.status}" if r.status != "success" else ", unscored: no scorer's results")
    return f"{r.file} (task '{r.task}', {r.model}, {r.samples} sample{'s' if r.samples != 1 else ''}{why})"


def _listed(items, limit: int = 8) -> str:
    shown = list(items)[:limit]
    more = len(items) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def sequential_stopping(*, baseline=None, scorer: str | None = None, cluster: str | None = None,
                        settle: bool = True, tie: float | None = None, margin: float | None = None,
                        width: float | None = None, budget: int | None = None, level: float = 0.95,
                        method: str = "auto", baseline_model: str | None = None,
                        baseline_scorer: str | None = None, check_every: int | None = None) -> SequentialStopping:
    """An early-stopping manager for ``Task(..., early_stopping=...)``: stop the run
    once a rule holds on an anytime-valid confidence sequence.

    Parameters
    ----------
    baseline
        None (one model), or the baseline's Inspect log of the same task (a
        ``.eval`` or ``.json`` file, or a folder holding one run of the
        task), or a mapping ``{sample id: score}``.  With a baseline the
        sequence is for A − B (candidate − baseline) on the questions both
        answered.
    scorer
        The scorer whose score is watched (default: the task's first).
    cluster
        Sample-metadata field of the clusters (dotted paths reach into nested
        metadata); the sequence is then per cluster.
    settle
        With a baseline and no ``margin``: stop once A − B excludes 0
        (better or worse).
    tie
        Stop once A − B lies inside [−tie, tie] (score units: 0.01 is one
        point).
    margin
        Non-inferiority: stop once A − B excludes −margin (not worse, or
        worse than the margin); replaces ``settle``.
    width
        Stop once the quantity is known to ±width.
    budget
        Stop after this many questions entered the sequence (not settled).
    level
        Confidence level of the sequence, valid at every look at once.
    method
        ``"auto"`` (default: betting per question, asymptotic with ``cluster``,
        whose cluster-level betting sequence rarely settles a realistic gap),
        ``"betting"`` (exact for scores in [0, 1]) or ``"asymptotic"``
        (faster, valid as the answers grow).
    baseline_model
        The baseline's model, when the baseline folder holds runs of the task
        by several models.
    baseline_scorer
        The scorer of the baseline's log to compare with (default: the one
        this run watches, ``scorer``), when the baseline was scored under
        another name (``match`` against ``model_graded_qa``, or the same
        scorer renamed).  A baseline without the scorer is an error naming
        its scorers.
    check_every
        Check the rules after this many new answers (None: after every answer
        up to 200, then every 0.5% more).

    Returns
    -------
    SequentialStopping
        The manager.  Bad arguments are an
        :class:`~bayeserr.base.errors.InputError` at once; a baseline with no
        sample id in common with the task, or a scorer the task does not
        have, when the task starts.
    """
    # size: the public API's keyword options, each documented above
    return SequentialStopping(baseline=baseline, scorer=scorer, cluster=cluster, settle=settle, tie=tie,
                              margin=margin, width=width, budget=budget, level=level, method=method,
                              baseline_model=baseline_model, baseline_scorer=baseline_scorer,
                              check_every=check_every)
