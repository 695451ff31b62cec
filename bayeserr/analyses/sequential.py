"""Watching a running eval: a confidence sequence and a stopping rule (``docs/methods.md`` §3.13).

:func:`watch_scores` takes scores in the order they arrived (one model, or A
and B on the questions both answered, optionally with each question's
cluster), builds the anytime-valid confidence sequence of
:mod:`bayeserr.stats.sequential` and applies the user's stopping rules;
:func:`watch` does the same for a loaded dataset (questions in the order they
first appear in the input).  The result, :class:`Watch`, says ``stop`` or
``continue`` in one sentence.  Because the sequence is valid at every look at
once, a user (or ``bayeserr.integrations.inspect_stopping``) may check after
every answer and stop whenever a rule holds.

Rules (any number; the first to hold stops the run):

* ``settle`` (pairs; on unless a margin is given): A − B excludes 0;
* ``tie=z``: A − B lies inside [−z, z];
* ``margin=m``: non-inferiority of A against B: the sequence excludes −m
  (A − B > −m: not worse; A − B < −m: worse than allowed);
* ``width=w``: the quantity is known to ±w (upper − lower ≤ 2w);
* ``budget=n``: n questions were answered.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from bayeserr.analyses.watch_text import caution, waiting_sentence, watch_sentence
from bayeserr.base.errors import InputError, describe
from bayeserr.base.formats import interval, points  # noqa: F401 (also this module's API)
from bayeserr.registries.options import WATCH_SAMPLES
from bayeserr.stats import sequential as seq

#: fewer clusters than this and a cluster-level sequence rests on few units (§3.13)
FEW_CLUSTERS = 30
#: ``auto``: betting per question, asymptotic per cluster (a cluster-level betting
#: sequence cannot exclude a gap below 2·n_max·log(1/α)/n: see :func:`betting_floor`)
METHODS = ("auto",) + seq.METHODS


def resolve_method(method: str, clustered: bool) -> str:
    """``auto``: ``betting`` per question (valid at every n), ``asymptotic`` per cluster
    (the cluster-level betting sequence's capital grows too slowly to settle realistic gaps,
    docs/calibration.md); otherwise the method named."""
    if method not in METHODS:
        from bayeserr.base.errors import suggest
        raise InputError(f"method must be one of {', '.join(METHODS)}; got {describe(method)}."
                         f"{suggest(str(method), METHODS)}")
    if method == "auto":
        return "asymptotic" if clustered else "betting"
    return method


def betting_floor(n_questions: float, max_size: float, alpha: float) -> float:
    """The smallest observed gap a cluster-level betting sequence can exclude 0 at (§3.13):
    each cluster's bet is scaled by n_c/n_max, so log-capital ≤ n·gap/(2·n_max) and it
    reaches log(1/α) only when gap ≥ 2·n_max·log(1/α)/n."""
    return 2 * max_size * np.log(1 / alpha) / max(n_questions, 1)


@dataclass(frozen=True)
class Rules:
    """The stopping rules a watch applies (all optional; ``settle`` for pairs)."""

    settle: bool = True
    tie: float | None = None
    margin: float | None = None
    width: float | None = None
    budget: int | None = None

    def to_dict(self) -> dict:
        return {"settle": self.settle, "tie": self.tie, "margin": self.margin, "width": self.width,
                "budget": self.budget}

    def check(self, pair: bool) -> "Rules":
        for name in ("tie", "margin", "width"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not 0 < v < 1):
                raise InputError(f"--{name} must be a number in (0, 1) in score units (0.02 = two points); "
                                 f"got {describe(v)}.")
        if self.budget is not None and (isinstance(self.budget, bool) or not isinstance(self.budget, int)
                                        or self.budget < 1):
            raise InputError(f"--budget must be a whole number of questions ≥ 1; got {describe(self.budget)}.")
        if not pair and (self.tie is not None or self.margin is not None):
            raise InputError("--tie and --margin compare two models: give --pair A B (one model takes "
                             "--width or --budget).")
        if not pair and self.width is None and self.budget is None:
            raise InputError("one model has no gap to settle: give --width W (its mean known to ±W) "
                             "or --budget N.")
        return self


@dataclass(frozen=True)
class Watch:
    """A watched run's confidence sequence, the stop (if any) and the sentence."""

    a: str
    b: str | None
    sequence: seq.ConfidenceSequence
    rules: Rules
    stop: seq.Stop | None
    outcome: str          #: what the stop says: "better", "worse", "tie", "not worse", "worse than margin",
                          #: "known", "budget" or "" (continue)
    sentence: str
    notes: tuple = ()
    seed: int | None = None  #: the questions were replayed in a random order with this seed (``shuffle=``)
    order: tuple = ()        #: why the arrival order looks not random (clauses of the verdict's caution)
    #: partial runs (Inspect logs that ended 'error' or 'cancelled') the sequence read
    partial_runs: tuple = ()
    #: a stop on a partial run is taken (exit 0) only when partial runs were asked for
    partial_asked: bool = True
    #: every input is an Inspect log and none is still running: no more answers will come
    finished: bool = False
    #: (question, A's score, B's score) in the order the sequence took them: a later look must extend it
    history: tuple = ()

    @property
    def decision(self) -> str:
        return "continue" if self.stop is None else "stop"

    @property
    def exit_code(self) -> int:
        """0 stop (a rule holds, and not on a partial run unless asked for), 1 continue."""
        return 0 if self.stop is not None and (self.partial_asked or not self.partial_runs) else 1

    def unasked_partial(self) -> "Watch":
        """This look with its partial runs not asked for (``--partial-runs`` left at watch's
        default): a stop on them is said, not taken (exit 1)."""
        if not self.partial_runs:
            return self
        from bayeserr.analyses.watch_text import partial_block
        return dataclasses.replace(self, partial_asked=False, sentence=self.sentence.replace(
            partial_block(self.partial_runs, True, self.stop is not None),
            partial_block(self.partial_runs, False, self.stop is not None)))

    def to_dict(self) -> dict:
        s = self.sequence
        return {"schema": "bayeserr.watch/1", "a": self.a, "b": self.b, "decision": self.decision,
                "outcome": self.outcome or None, "sentence": self.sentence, "rules": self.rules.to_dict(),
                "method": s.method, "level": s.level, "unit": s.unit, "estimand": s.estimand,
                "n_questions": int(s.t[-1]), "n_units": int(s.units[-1]),
                "estimate": float(s.estimate[-1]), "lower": float(s.lower[-1]), "upper": float(s.upper[-1]),
                "stop": None if self.stop is None else self.stop.to_dict(), "notes": list(self.notes),
                "shuffle": self.seed, "order_warnings": list(self.order),
                "partial_runs": [dict(r) for r in self.partial_runs], "finished": self.finished,
                "stop_taken": self.stop is not None and self.exit_code == 0, "exit_code": self.exit_code,
                "sequence": s.to_dict()}

    def to_frame(self):
        return self.sequence.to_frame()


def _outcome(rules: Rules, stop, pair: bool) -> str:
    if stop is None:
        return ""
    if stop.rule == "exclude":
        if rules.margin is not None:
            return "not worse" if stop.lower > -rules.margin else "worse than margin"
        return "better" if stop.lower > 0 else "worse"
    return {"tie": "tie", "width": "known", "budget": "budget"}[stop.rule]


#: the running estimate this far outside its sequence (a share of the sequence's width) after
#: DRIFT_AFTER questions says the answers are not exchangeable (easy questions first, drift)
DRIFT_GAP, DRIFT_AFTER = 0.25, 20


def _any_complete(clusters, expected_sizes) -> bool:
    labels, counts = np.unique(np.asarray(clusters), return_counts=True)  # labels as cluster_totals reads them
    if expected_sizes is None:
        return len(labels) > 0
    return any(expected_sizes.get(lab, math.inf) == c for lab, c in zip(labels.tolist(), counts.tolist()))


def _waiting(a, b, n, rules, method, level, clusters) -> "Watch":
    """A watch before any cluster is complete: continue, with an empty sequence."""
    s = seq.ConfidenceSequence(np.array([n]), np.array([np.nan]), np.array([-1.0 if b else 0.0]),
                               np.array([1.0]), method, level, np.array([0]), "cluster",
                               "difference" if b else "mean")
    k = len(np.unique(np.asarray(clusters).astype(str)))
    return Watch(a, b, s, rules, None, "", waiting_sentence(n, k), ())


def _drift(s) -> int | None:
    """The questions seen when the running estimate first lay well outside the sequence, or
    None.  With exchangeable answers the estimate stays inside or near it (in a seeded check,
    1–2% of exchangeable streams crossed this line, the rare runs whose sequence had missed
    the truth, where refusing to stop is the safe side)."""
    out = np.maximum(s.lower - s.estimate, s.estimate - s.upper)
    far = (out > DRIFT_GAP * np.maximum(s.upper - s.lower, 1e-12)) & (np.asarray(s.t) >= DRIFT_AFTER)
    return int(s.t[int(np.argmax(far))]) if far.any() else None


def _outside(s) -> tuple | None:
    """``(first, last, looks)``: the questions seen at the first and last look (after
    :data:`DRIFT_AFTER` questions) where the running estimate lay outside its own sequence,
    and how many such looks; None if it never did.  The sequence is the running intersection
    of the per-look intervals, so an estimate that wanders out of it says the answers did not
    arrive in random order (sorted or grouped questions, a drifting model or grader); with a
    random order it happens in a few percent of runs (seeded check: 1–4% of exchangeable
    streams of 500 answers), those whose sequence had missed by chance."""
    t = np.asarray(s.t)
    out = (np.maximum(s.lower - s.estimate, s.estimate - s.upper) > 1e-9) & (t >= DRIFT_AFTER)
    if not out.any():
        return None
    hit = np.flatnonzero(out)
    return int(t[hit[0]]), int(t[hit[-1]]), int(hit.size)


#: the order checks look at no fewer units than this (sorted by chance: 2/8! = 0.005%)
ORDER_MIN = 8
#: a share of consecutive labels in ascending (or descending) order this high says "sorted"
#: (random order: a half, with a standard deviation of about 0.3/√n)
ORDER_SORTED = 0.9


def _natural_key(label) -> tuple:
    """A label's sort key with its digits as numbers ("q2" before "q10", "task/9" before "task/10")."""
    import re
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(label)) if p)


def sorted_share(labels) -> float:
    """The share of consecutive labels in ascending natural order (NaN below two labels)."""
    keys = [_natural_key(x) for x in labels]
    if len(keys) < 2:
        return float("nan")
    return sum(x < y for x, y in zip(keys, keys[1:])) / (len(keys) - 1)


def order_findings(questions, clusters=None, cluster_units: bool = False) -> list[tuple[str, str]]:
    """What says the questions (or clusters) did not arrive in random order, as
    ``(clause, detail)`` pairs (the clause for the verdict, the detail for the note):
    question ids sorted (ascending or descending) in a sequence of questions, each
    cluster's questions arriving together in a sequence of questions, or the clusters
    sorted by name in a sequence of clusters (whose questions' order within a cluster
    does not matter).  Sorted ids are a random order only when the ids were drawn at
    random (hashes), so this is a warning, not a refusal (§3.13)."""
    def is_sorted(labels) -> bool:
        share = sorted_share(labels) if len(labels) >= ORDER_MIN else 0.5
        return share >= ORDER_SORTED or share <= 1 - ORDER_SORTED

    def example(labels) -> str:
        return f"{labels[0]}, {labels[1]}, … {labels[-1]}"
    found = []
    questions = [str(q) for q in questions]
    labels = None if clusters is None else [str(c) for c in clusters]
    if cluster_units and labels is not None:
        first = list(dict.fromkeys(labels))
        if is_sorted(first):
            found.append(("the clusters arrived sorted by name", f"the clusters arrived sorted by name "
                          f"({example(first)})"))
        return found
    if is_sorted(questions):
        found.append(("the questions arrived sorted by id", f"the questions arrived sorted by id "
                      f"({example(questions)})"))
    if labels:
        k = len(set(labels))
        runs = 1 + sum(x != y for x, y in zip(labels, labels[1:]))
        if k >= 2 and len(labels) >= max(ORDER_MIN, 2 * k) and runs <= 1.1 * k:
            found.append(("the questions arrived cluster by cluster", f"the questions arrived cluster by "
                          f"cluster ({k:,} clusters in {runs:,} runs)"))
    return found


def watch_scores(a_scores, b_scores=None, clusters=None, *, a: str = "A", b: str | None = None,
                 rules: Rules = Rules(), level: float = 0.95, method: str = "auto",
                 expected_sizes=None, max_size=None, order=(), seed: int | None = None) -> Watch:
    """The watch of scores in arrival order: ``a_scores`` alone (one model) or
    with ``b_scores`` (A − B on the same questions), per question or per
    cluster (``clusters``: each question's cluster; ``expected_sizes``: each
    cluster's number of questions, so that an unfinished cluster waits;
    ``max_size``: the largest cluster's size for the betting sequence, fixed
    before the run — default the largest expected size).  ``order``: clauses
    saying the arrival order looks not random (:func:`order_findings`), which
    the verdict repeats; ``seed``: the scores were put in a random order with
    this seed (the verdict says so)."""
    # size: the public API's keyword options, each documented above
    pair = b_scores is not None
    if pair and b is None:
        b = "B"
    rules = rules.check(pair)
    method = resolve_method(method, clusters is not None)
    alpha = 1 - level
    opts = {}
    if clusters is not None and expected_sizes is not None:
        opts["expected_sizes"] = expected_sizes
    if clusters is not None and max_size is not None and method == "betting":
        opts["max_size"] = max_size  # the largest cluster, fixed before the run
    if clusters is not None and not _any_complete(clusters, expected_sizes):
        return _waiting(a, b if pair else None, len(np.asarray(a_scores)), rules, method, level, clusters)
    if pair:
        s = seq.paired_cs(a_scores, b_scores, method, alpha, clusters, **opts)
    else:
        s = seq.mean_cs(a_scores, method, alpha, clusters, **opts)
    exclude = (-rules.margin if rules.margin is not None else (0.0 if rules.settle else None)) if pair else None
    stop = seq.first_stop(s.lower, s.upper, s.t, exclude=exclude, width=rules.width, tie=rules.tie,
                          budget=rules.budget)
    notes = []
    drift = _drift(s)
    outside = _outside(s)
    if drift is not None:  # the assumption failed: no stop can be trusted
        stop = None
        notes.append(f"The running estimate left its own confidence sequence after {drift:,} questions: the "
                     "answers are not in random order (easy questions first, a drifting model or grader), so "
                     "the sequence's guarantee does not hold and no stop is called. Shuffle the questions "
                     "(by cluster, with clusters) before the run.")
    elif outside is not None:
        first, last, looks = outside
        notes.append(f"The running estimate lay outside its own confidence sequence at {looks:,} look"
                     f"{'s' if looks != 1 else ''} (after {first:,}" + (f" to {last:,}" if last != first else "")
                     + " questions). With answers in random order that happens in a few percent of runs; "
                     "more often it says the order is not random (sorted or grouped questions, a drifting "
                     "model or grader). Shuffle the questions (by cluster, with clusters) before the run.")
    outcome = _outcome(rules, stop, pair)
    findings = list(order)
    if outside is not None:
        findings.append(f"the running estimate left its own sequence after {outside[0]:,} questions"
                        + (" (so no stop is called)" if drift is not None else ""))
    if s.unit == "cluster":
        notes.append("Clusters are the sampling units: the sequence assumes they arrive in random order "
                     "(shuffle the dataset by cluster when you control the run).")
        if method == "betting":
            n_max = max_size or (max(expected_sizes.values()) if expected_sizes else
                                 float(np.bincount(np.unique(np.asarray(clusters), return_inverse=True)[1]).max()))
            n_all = sum(expected_sizes.values()) if expected_sizes else len(np.asarray(clusters))
            floor = betting_floor(n_all, n_max, alpha)
            notes.append(f"A cluster-level betting sequence cannot exclude a gap smaller than about "
                         f"{100 * min(floor, 2):.0f} points here (2·n_max·log(1/α)/n with a largest cluster of "
                         f"{n_max:.0f} of {n_all:,} questions); --method asymptotic settles realistic gaps "
                         "(docs/methods.md §3.13).")
        elif s.units[-1] < FEW_CLUSTERS:
            notes.append(f"Only {int(s.units[-1])} complete clusters: the asymptotic sequence rests on the "
                         "number of clusters growing; read it as approximate.")
    return Watch(a, b if pair else None, s, rules, stop, outcome,
                 watch_sentence(a, b if pair else None, s, rules, stop, outcome, seed) + caution(findings),
                 tuple(notes), seed, tuple(findings))


def _seed(value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"shuffle must be a whole number ≥ 0 (the seed of the random order); "
                         f"got {describe(value)}.")
    return int(value)


def _shuffled(n: int, clusters, seed: int) -> np.ndarray:
    """A random order of ``n`` questions drawn with ``seed``: with ``clusters``, the clusters
    in random order and each cluster's questions together, in random order."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    if clusters is None:
        return perm
    names, inverse = np.unique(np.asarray(clusters)[perm], return_inverse=True)
    rank = rng.permutation(len(names))[inverse]  # each cluster's place in the new order
    return perm[np.argsort(rank, kind="stable")]


#: how a question answered several times (Inspect epochs, repeated samples) enters the sequence
SAMPLES = tuple(WATCH_SAMPLES)


def _sample_order(labels) -> list[int]:
    """Indices of the sample labels in their natural order (numbers as numbers: epoch 2 before 10)."""
    text = [str(x) for x in labels]
    try:
        keys = [(0, float(x), x) for x in text]
    except ValueError:
        keys = [(1, 0.0, x) for x in text]
    return sorted(range(len(text)), key=lambda i: keys[i])


def _first_sample(cube):
    """``(model, question)``: the score of each question's first sample present (NaN if none)."""
    out = np.full(cube.shape[:2], np.nan)
    for k in range(cube.shape[2] - 1, -1, -1):  # the last written wins: the first sample is written last
        x = cube[:, :, k]
        out = np.where(np.isnan(x), out, x)
    return out


def _in_progress_notes(ds) -> tuple:
    """The reader's notes on Inspect runs still in progress (read from their journal)."""
    import json

    from bayeserr.data.readers import IN_PROGRESS_NOTE
    rows = ds.attrs.get("rows")
    try:
        rows = json.loads(rows) if isinstance(rows, str) else rows
    except ValueError:
        return ()
    notes = rows.get("notes") if isinstance(rows, dict) else None
    return tuple(n for n in notes or () if isinstance(n, str) and IN_PROGRESS_NOTE in n)


def _history(questions, ya, yb, keep) -> tuple:
    """(question, A's score, B's score or None) in the sequence's order."""
    yb = [None] * len(ya) if yb is None else yb[keep].tolist()
    return tuple(zip(questions.tolist(), ya.tolist(), yb))


def _with_partial_runs(w: Watch, ds, models) -> Watch:
    """The watch with the partial runs of ``models`` it read, named in its sentence."""
    from bayeserr.analyses.watch_text import partial_block
    from bayeserr.data.loading import partial_runs
    runs = tuple(r for r in partial_runs(ds) if r["model"] in set(models))
    if not runs:
        return w
    asked = all(r.get("asked") for r in runs)
    w = dataclasses.replace(w, partial_runs=runs, partial_asked=asked)
    return dataclasses.replace(w, sentence=w.sentence + " " + partial_block(runs, asked, w.stop is not None))


def watch(ds, a: str, b: str | None = None, *, width: float | None = None, tie: float | None = None,
          margin: float | None = None, budget: int | None = None, rules: Rules | None = None,
          level: float = 0.95, method: str = "auto", clusters: bool = True, samples: str = "first",
          shuffle: int | None = None) -> Watch:
    """Is a running eval settled yet? (``bayeserr.sequential``; ``docs/methods.md`` §3.13.)

    The anytime-valid confidence sequence of ``a``'s mean score, or of A − B
    on the questions both answered when ``b`` is given, with the questions in
    the order they first appear in the data (a growing log: the order they
    were answered), per cluster when the data have clusters (``clusters``).
    A question ``a`` answered several times (Inspect epochs, repeated
    samples) enters with the score of its first sample (``samples="first"``,
    the default: Inspect runs every first epoch before any second, so a mean
    over epochs would change questions already in the sequence as later
    epochs arrive; the first has the same expectation, and it is what the
    Inspect early-stopping manager uses) or its mean over samples
    (``"mean"``: for finished data, or samples written together); ``b``, the
    baseline, always enters with its mean over samples, as in the manager
    (a baseline is a finished run).  Stopping rules: for a pair,
    A − B excludes 0 unless ``margin`` is given (non-inferiority: the
    sequence excludes −margin); ``tie`` (inside ±tie), ``width`` (known to
    ±width), ``budget`` (questions); or all of them as ``rules``.
    ``method``: ``auto`` (betting per question, asymptotic per cluster), ``betting``
    (valid at every sample size) or ``asymptotic`` (valid as the units grow).

    The sequence assumes the answers arrive in random order.  Question ids
    that arrive sorted, clusters that arrive one after another (a sequence of
    questions) or sorted by name (a sequence of clusters), and a running
    estimate that leaves its own sequence are said in a note and in the
    verdict.  ``shuffle=SEED`` replays a *finished* file in a random order
    drawn with that seed (clusters shuffled, each cluster's questions together
    and shuffled, when the sequence is per cluster): a simulation of watching
    the run, not a look at a live one (a growing file is read in its order).

    Example::

        w = bayeserr.sequential(ds, "new", "prod", margin=0.01)
        w.decision, w.sentence      # "stop" / "continue", one sentence
    """
    # size: the public API's keyword options; its steps (read, order, look, decide) are commented
    from bayeserr.base.registry import check_level
    from bayeserr.stats.view import check_dataset
    ds = check_dataset(ds)
    level = check_level(level)
    if rules is None:
        rules = Rules(settle=margin is None, tie=tie, margin=margin, width=width, budget=budget)
    elif any(v is not None for v in (width, tie, margin, budget)):
        raise InputError("give the stopping rules either as rules=Rules(...) or as width=, tie=, margin=, "
                         "budget=, not both.")
    if not isinstance(a, str) or (b is not None and not isinstance(b, str)):
        raise InputError(f"models are named by text; got {describe(a)}"
                         f"{'' if b is None else ' and ' + describe(b)}.")
    # the dataset keeps the input's order of questions (DataView sorts them by label)
    names = [str(m) for m in ds["model"].values]
    for m in [a] + ([b] if b is not None else []):
        if m not in names:
            from bayeserr.base.errors import suggest
            raise InputError(f"model '{m}' is not in the data.{suggest(m, names)}")
    if b is not None and b == a:
        raise InputError(f"--pair names '{a}' twice; give two different models.")
    if samples not in SAMPLES:
        from bayeserr.base.errors import suggest
        raise InputError(f"samples must be one of {', '.join(SAMPLES)}; got {describe(samples)}."
                         f"{suggest(str(samples), SAMPLES)}")
    cube = np.asarray(ds["score"].values, dtype=float)
    repeated = False
    if cube.ndim == 3:
        cube = cube[:, :, _sample_order(ds["sample"].values)] if "sample" in ds.coords else cube
        repeated = bool((np.sum(~np.isnan(cube[names.index(a)]), axis=-1) > 1).any())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an unanswered question: the mean of none, NaN
            per_question = np.nanmean(cube, axis=-1)
        if samples == "first":  # the watched model's first sample; a baseline's mean (a finished run)
            per_question[names.index(a)] = _first_sample(cube)[names.index(a)]
    else:
        per_question = cube
    ya = per_question[names.index(a)]
    keep = ~np.isnan(ya)
    yb = None
    if b is not None:
        yb = per_question[names.index(b)]
        keep &= ~np.isnan(yb)
    if not keep.any():
        raise InputError(f"no question answered by {'both ' + a + ' and ' + b if b else a} yet.")
    labels = expected = None
    questions = np.asarray(ds["question"].values).astype(str)
    every = np.asarray(ds["cluster"].values).astype(str) if "cluster" in ds.coords else None
    by_cluster = bool(clusters) and every is not None
    if shuffle is not None:
        seed = _seed(shuffle)
        perm = _shuffled(len(questions), every if by_cluster else None, seed)
        ya, keep, questions = ya[perm], keep[perm], questions[perm]
        yb = None if yb is None else yb[perm]
        every = None if every is None else every[perm]
        order = ()
    else:
        seed = None
        found = order_findings(questions[keep], None if every is None else every[keep], by_cluster)
        order, details = tuple(c for c, _ in found), [d for _, d in found]
    if by_cluster:
        labels = every[keep]
        # a cluster is complete once the watched model(s) answered every question the data hold of it
        # (any model's): with a complete baseline, the cluster's full size
        names_, counts = np.unique(every, return_counts=True)
        expected = dict(zip(names_.tolist(), counts.tolist()))
    w = watch_scores(ya[keep], None if yb is None else yb[keep], labels, a=a, b=b, rules=rules,
                     level=level, method=method, expected_sizes=expected, order=order, seed=seed)
    if order:
        w = dataclasses.replace(w, notes=(
            f"The order looks not random: {'; '.join(details)}. The sequence's guarantee needs the answers "
            "in random order (exchangeable); a results file sorted by id (by repository, by topic) is "
            "not. A live run: shuffle the dataset before it starts. A finished file: --shuffle SEED "
            "(shuffle=SEED) replays it in a random order, a simulation of watching it.",) + w.notes)
    if seed is not None:
        w = dataclasses.replace(w, notes=w.notes + (
            f"Questions replayed in a random order (seed {seed}"
            + (", clusters shuffled, each cluster's questions together" if by_cluster else "")
            + "): a simulation of watching the finished run; another seed takes another path and may "
              "stop elsewhere.",))
    running = _in_progress_notes(ds)
    w = dataclasses.replace(w, notes=running + w.notes, history=_history(questions[keep], ya[keep], yb, keep),
                            finished=ds.attrs.get("readers") == ["inspect"] and not running)
    w = _with_partial_runs(w, ds, [a] + ([b] if b is not None else []))
    if repeated:
        how = ("its first sample (Inspect: its first epoch; later ones would change questions already in "
               "the sequence as they arrive; --samples mean averages them); a baseline with its mean"
               if samples == "first" else
               "its mean over samples (--samples mean: a question's later samples change its score after "
               "it entered the sequence; for finished data, or samples written together)")
        w = dataclasses.replace(w, notes=w.notes + (f"Questions {a} answered several times enter the "
                                                    f"sequence with {how}.",))
    return w
