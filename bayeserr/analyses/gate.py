"""A release gate: a one-sided test of A − B against a margin (``docs/methods.md`` §3.11).

``gate(ds, candidates, baseline, margin)`` asks, for each candidate A and the
baseline B, whether the data show that A − B clears the margin:

* **non-inferiority** (the default): ``H0: Δ ≤ −m`` against ``H1: Δ > −m``
  ("A is not worse than B by more than m");
* **superiority**: ``H0: Δ ≤ m`` against ``H1: Δ > m`` (m ≥ 0; m = 0 is "A is
  better than B").

Δ is the paired difference on the questions both answered, exactly as
:func:`~bayeserr.analyses.comparison.compare` computes it (§3.3, §3.8): the
CR2 SE of the differences with a t reference on the Bell–McCaffrey df when
there is a cluster column with at least two common clusters (``t_cr2_bm``),
else the paired SE (M7) with the normal (``z_paired``).  The gate's test of
one pair, at level ``L`` (α = 1 − L)::

    null  = −m (non-inferiority) or +m (superiority)
    t     = (Δ − null) / SE
    p     = P(T_df > t)                                  one-sided
    lower = Δ − t_df(L) · SE,   upper = Δ + t_df(L) · SE  one-sided bounds
    pass  ⇔  p < α  ⇔  lower > null

Where the Bell–McCaffrey df is below :data:`~bayeserr.analyses.comparison.WILD_DF`
(the report's threshold for its second opinion), the wild cluster
restricted bootstrap (§3.4) is run at the margin (``null=``): its p-value is
two-sided (``|t*| ≥ |t|``); the weights are symmetric (v and −v equally
likely) and ``t*(−v) = −t*(v)``, so ``P(t* ≥ t) = p/2`` when ``t > 0`` (the pass
side) and at least ``1 − p/2`` otherwise (``tests/analyses/test_gate.py`` checks it by
enumeration).  Its one-sided bound at ``L`` is the lower end of its inverted
interval at ``2L − 1``.  The gate then passes only if **both** the CR2 t test
and the bootstrap pass: the decision p is the larger of the two one-sided
p-values and the bound the smaller of the two bounds.  A pass the two
disagree on is fragile, and a release gate should not rest on it.

Without clusters and with 0/1 answers (one per question) the headline is not the z
but the score test of :mod:`bayeserr.stats.paired_margin` (``score_tango``: Nam's and
Tango's score statistic with the restricted MLE at the margin, skewness- and
continuity-corrected, (G1)–(G5) of §3.11), whose p-value and inverted bounds take the
place of the z test's: the paired z passed 5.2%–5.5% at the margin at n = 100 with 0/1
answers in the lab, the score test holds its level at n = 2–500.  Fractional scores keep
the z.

Every difference equal (SE 0, e.g. two identical runs): the t test would pass
any margin on any number of questions, so the exact zero-event bound of
:func:`zero_spread` decides instead (units: the questions, or with clusters
the effective number of clusters).

Several candidates: Holm (1979) over the candidates' decision p-values, so
the chance that *any* candidate passes falsely is at most α; the bound a
candidate's verdict reads is at Holm's level for its step,
``1 − α/(k − j)`` for the j-th smallest p (0-based) of k.

Beside the test, not part of the decision: the Bayesian ``P(Δ > null)`` from
the pair posterior the report uses in ``bayes="fast"``
(:mod:`bayeserr.bayes.pairs`): the cluster random-effect model with clusters
(its flat prior on Δ makes it shift-equivariant, so ``P(Δ > null | d) =
P(Δ > 0 | d − null)``), the Dirichlet 2×2 posterior for 0/1 answers with one
answer per question, else the Bayesian bootstrap of the questions.

"Too small to pass": for non-inferiority with m > 0, the chance of passing
if the true difference is 0, by the normal approximation with the test's
critical value and the observed SE, ``power = Φ(m/SE − t_df(L))``, and the
questions that would give :data:`~bayeserr.stats.onesided.POWER_TARGET` (80%) with differences spread
like these (the same SE·√n, the same df), ``n' = n ((t_df(L) + z_0.8) SE / m)²``;
without clusters that is (M9) with ``α = 2(1 − L)`` (:func:`bayeserr.stats.planning.n_required`).
The gate says so when the power is below :data:`TOO_SMALL_POWER`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bayeserr.analyses.gate_text import (  # noqa: F401 (points: the CLI's)
    MODE_WORD,
    check_notes,
    check_sentence,
    partial_sentence,
    partial_text,
    pct,
    points,
)
from bayeserr.base.errors import InputError, describe
from bayeserr.stats.onesided import (  # noqa: F401 (holm_levels, zero_spread: the gate's API too)
    POWER_TARGET,
    OneSided,
    WildOneSided,
    holm_levels,
    one_sided_t,
    power_at_zero,
    wild_one_sided,
    zero_spread,
)

#: the two questions a gate can ask
MODES = ("non-inferiority", "superiority")
#: power for which the gate computes the questions needed
#: below this chance of passing at a true difference of 0 the gate says the eval is too small
TOO_SMALL_POWER = 0.5


# ------------------------------------------------------------------ the tests, on arrays
@dataclass(frozen=True)
class Decision:
    """The gate's test of rows at one level (arrays): the headline t (or z, or the score
    test for 0/1 answers without clusters), the wild bootstrap where it applies (NaN
    elsewhere), and the combination the gate reads."""

    t: OneSided
    wild: WildOneSided | None
    wild_rows: np.ndarray  #: rows where the wild bootstrap applies
    p_value: np.ndarray  #: the decision p: max of the two where both apply
    lower: np.ndarray  #: the decision bound: min of the two lower bounds
    upper: np.ndarray  #: max of the two upper bounds
    score_rows: np.ndarray | None = None  #: rows decided by the score test (``score_tango``)


def decide(diff, se, df, null, level, D=None, sizes=None, *, seed: int = 0, n_eff=None,
           wild: bool = True, counts=None) -> Decision:
    """The gate's one-sided test of rows (vectorized: the gate calls it per candidate, the
    size simulation of ``tests/analyses/test_gate.py`` on all replicates at once).

    ``diff``, ``se``, ``df`` as :class:`~bayeserr.analyses.comparison.Comparison` gives them
    (``df = inf`` for the paired z); ``D`` and ``sizes`` the cluster sums and sizes of the
    differences (needed where ``df < WILD_DF``, for the wild bootstrap).  Rows with SE 0
    (every difference equal) use :func:`zero_spread` when ``n_eff`` is given.  ``wild=False``:
    the t test alone (suite differences, whose strata the wild bootstrap does not resample).

    Rows without clusters (``df = inf``) of 0/1 answers with some spread (SE > 0) are decided
    by the score test of :func:`bayeserr.stats.paired_margin.score_test` (its statistic, p and
    bounds replace the z test's): ``counts`` gives their discordant counts ``(b, c)`` (NaN on
    rows of fractional scores), ``False`` keeps the z on every row, and ``None`` (the default,
    for callers that pass only Δ̂, SE and n, like the lab) reads them off Δ̂, SE and
    ``n_eff`` = n where those are the moments of 0/1 answers
    (:func:`~bayeserr.stats.paired_margin.counts_from_moments`).  :func:`gate` always passes
    ``counts``; suite differences (``wild=False``) never take the score test."""
    # size: each statistic of the candidates is an array argument (vectorized over them)
    from bayeserr.analyses.comparison import WILD_DF
    diff, se = np.atleast_1d(np.asarray(diff, float)), np.atleast_1d(np.asarray(se, float))
    df = np.broadcast_to(np.asarray(df, float), diff.shape)
    t = one_sided_t(diff, se, df, null, level)
    zero = (se == 0) & np.isfinite(diff) if n_eff is not None else np.zeros(diff.shape, bool)
    if zero.any():
        z = zero_spread(diff, np.broadcast_to(np.asarray(n_eff, float), diff.shape), null, level)
        t = OneSided(*(np.where(zero, getattr(z, f), getattr(t, f))
                       for f in ("statistic", "p_value", "lower", "upper")))
    score = None if not wild else _score_rows(diff, se, df, null, level, n_eff, counts, zero)
    if score is not None:
        t = OneSided(*(np.where(score[0], getattr(score[1], f), getattr(t, f))
                       for f in ("statistic", "p_value", "lower", "upper")))
    rows = np.isfinite(df) & (df < WILD_DF) & ~zero & wild
    p, lower, upper = t.p_value.copy(), t.lower.copy(), t.upper.copy()
    wild = None
    if rows.any():
        if D is None or sizes is None:
            raise ValueError("the wild bootstrap needs the cluster sums D and sizes where df < WILD_DF")
        D = np.atleast_2d(np.asarray(D, float))
        sizes = np.asarray(sizes, float)
        sz = sizes if sizes.ndim == 1 else np.atleast_2d(sizes)[rows]
        null_rows = np.broadcast_to(np.asarray(null, float), diff.shape)[rows]
        wild = wild_one_sided(D[rows], sz, null_rows, level, seed=seed)
        p[rows] = np.fmax(p[rows], wild.p_value)
        lower[rows] = np.fmin(lower[rows], wild.lower)
        upper[rows] = np.fmax(upper[rows], wild.upper)
    return Decision(t, wild, rows, p, lower, upper,
                    np.zeros(diff.shape, bool) if score is None else score[0])


def _score_rows(diff, se, df, null, level, n_eff, counts, zero):
    """The score test (``score_tango``) on the rows it decides, as ``(rows, OneSided)``
    (NaN elsewhere): unclustered (``df = inf``) rows of 0/1 answers with SE > 0 (SE 0 is
    :func:`zero_spread`'s); ``None`` when there are none."""
    from bayeserr.stats.paired_margin import counts_from_moments, score_test
    if counts is False or n_eff is None:
        return None
    n = np.broadcast_to(np.asarray(n_eff, float), diff.shape)
    if counts is None:
        b, c = counts_from_moments(diff, se, n)
    else:
        b, c = (np.broadcast_to(np.asarray(x, float), diff.shape) for x in counts)
    on = np.isinf(df) & ~zero & (se > 0) & np.isfinite(b) & np.isfinite(c)
    if not on.any():
        return None
    null = np.broadcast_to(np.asarray(null, float), diff.shape)
    res = score_test(b[on], c[on], n[on], null[on], level)
    full = OneSided(*(np.full(diff.shape, np.nan) for _ in range(4)))
    for f in ("statistic", "p_value", "lower", "upper"):
        getattr(full, f)[on] = getattr(res, f)
    return on, full


# ------------------------------------------------------------------ results
#: why a check carries two p-values (the JSON's ``p_note``)
P_NOTE = ("p_decision is the p the verdict reads: with few clusters, the larger of the CR2 t-test's p "
          "(p_value) and the wild cluster bootstrap's (wild.p_value), because the t-test alone runs slightly "
          "liberal there; do not gate on p_value alone.")


@dataclass(frozen=True)
class GateCheck:
    """One candidate against the baseline (see the module docstring)."""

    candidate: str
    baseline: str
    passed: bool
    finding: str  #: "non-inferior" | "superior" | "not shown" | "worse"
    sentence: str
    n_questions: int
    n_only_candidate: int
    n_only_baseline: int
    mean_candidate: float
    mean_baseline: float
    diff: float  #: A − B, as compare gives it
    se: float  #: the headline SE (CR2 on d with clusters, else M7)
    test: str  #: "t_cr2_bm", "score_tango" (0/1 without clusters), "z_paired", "t_suite_macro"/"t_suite_size"
    df: float | None
    n_clusters: int | None
    effective_clusters: float | None
    statistic: float  #: (Δ − null)/SE; for score_tango the corrected score statistic S
    p_value: float  #: one-sided p of the headline test
    lower: float  #: its one-sided lower bound at the gate's level
    upper: float
    wild: dict | None  #: the one-sided wild bootstrap where df < WILD_DF
    p_decision: float  #: the p the verdict reads (max of t and wild where both apply)
    p_adjusted: float  #: Holm over the candidates (= p_decision for one candidate)
    bound_level: float  #: the level of ``bound`` (Holm's step level; the gate's level for one)
    bound: float  #: the lower bound the verdict reads, at ``bound_level``
    bound_upper: float  #: the matching upper bound, at ``bound_level``: below the null is "worse"
    prob: float | None  #: Bayesian P(A − B > null): not the decision
    prob_method: str | None
    power_at_zero: float | None  #: non-inferiority: chance to pass if the true difference is 0
    n_needed: float | None  #: questions for 80% power at a true difference of 0
    too_small: bool
    notes: tuple = field(default_factory=tuple)

    #: the JSON's first keys: the verdict and the p it reads, before the tests behind it
    FIRST = ("candidate", "passed", "finding", "sentence", "p_decision", "p_adjusted", "bound_level", "bound")

    def to_dict(self) -> dict:
        """JSON form: the decision's p (``p_decision``) comes before the headline test's own
        ``p_value``, with ``p_note`` saying why there are two (``docs/methods.md`` §3.11)."""
        from bayeserr.base.jsonable import to_jsonable
        keys = [k for k in self.FIRST if k in self.__dataclass_fields__]
        keys += [k for k in self.__dataclass_fields__ if k not in keys]
        d = {k: getattr(self, k) for k in keys}
        d["notes"] = list(self.notes)
        d["p_note"] = P_NOTE if self.wild is not None else None
        return to_jsonable(d)


@dataclass(frozen=True)
class GateResult:
    """The verdict of :func:`gate`: one :class:`GateCheck` per candidate."""

    checks: tuple
    baseline: str
    mode: str
    margin: float
    null: float  #: −margin (non-inferiority) or +margin (superiority)
    level: float
    adjust: str  #: "holm" over the candidates, or "none" for one
    seed: int = 0
    scope: str | None = None  #: what was gated when not every question pooled: "task NAME", "suite macro"
    #: partial runs (Inspect logs not 'success') the verdict rests on, used on request (--partial-runs include)
    partial_runs: tuple = ()

    @property
    def passed(self) -> bool:
        """Every candidate passed."""
        return all(c.passed for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 when every candidate passed, else 1 (bad input is 2, raised before a result exists)."""
        return 0 if self.passed else 1

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail"

    @property
    def sentence(self) -> str:
        """What the gate prints: one sentence per candidate, and with several a last line."""
        lines = [c.sentence for c in self.checks]
        if self.scope:  # two gate steps in one job summary must be told apart
            lines = [f"[{self.scope}] {line}" for line in lines]
        k = len(self.checks)
        if k > 1:
            n_pass = sum(c.passed for c in self.checks)
            lines.append(f"gate {self.verdict}: {n_pass} of {k} candidates {MODE_WORD[self.mode]} "
                         f"(Holm over {k} candidates, family-wise error {pct(1 - self.level)}).")
        if self.partial_runs:
            lines.append(partial_sentence(self.partial_runs))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.sentence

    def __getitem__(self, candidate) -> GateCheck:
        for c in self.checks:
            if c.candidate == str(candidate):
                return c
        from bayeserr.base.errors import suggest
        names = [c.candidate for c in self.checks]
        raise InputError(f"'{candidate}' is not a candidate of this gate.{suggest(str(candidate), names)} "
                         f"Candidates: {', '.join(names)}.")

    def to_dict(self) -> dict:
        """JSON form, schema ``bayeserr.gate/1``."""
        from bayeserr.base.jsonable import to_jsonable
        return to_jsonable({
            "schema": "bayeserr.gate/1", "verdict": self.verdict, "exit_code": self.exit_code,
            "mode": self.mode, "margin": self.margin, "null": self.null, "level": self.level,
            "baseline": self.baseline, "adjust": self.adjust, "seed": self.seed, "scope": self.scope,
            "sentence": self.sentence, "candidates": [c.to_dict() for c in self.checks],
            "partial_runs": [dict(r) for r in self.partial_runs]})

    def to_frame(self):
        """One row per candidate (NaN for missing numbers; the wild bootstrap's p and bound
        as ``wild_p`` and ``wild_lower``)."""
        import pandas as pd

        from bayeserr.base.results import frame_value
        rows = []
        for c in self.checks:
            d = c.to_dict()
            wild = d.pop("wild")
            d.pop("notes")
            d["wild_p"] = None if wild is None else wild["p_value"]
            d["wild_lower"] = None if wild is None else wild["lower"]
            rows.append({k: frame_value(v) for k, v in d.items()})
        return pd.DataFrame(rows)


# ------------------------------------------------------------------ the gate
def one_task(ds, task: str):
    """The questions of one task of a loaded dataset (an error naming the tasks present)."""
    from bayeserr.base.errors import suggest
    if "task" not in ds.coords:
        raise InputError("--task: the data have no task column (--task-col names it; eval logs: each "
                         "run's task).")
    tasks = sorted({str(t) for t in ds["task"].values})
    if str(task) not in tasks:
        raise InputError(f"--task: '{task}' is not a task of the data.{suggest(str(task), tasks)} "
                         f"Tasks: {', '.join(tasks[:20])}{' and more' if len(tasks) > 20 else ''}.")
    return ds.isel(question=(ds["task"].values.astype(str) == str(task)))


def gate(ds, candidates, baseline, margin, *, mode: str = "non-inferiority", suite: str | None = None,
         task: str | None = None, options=None, **kwargs) -> GateResult:
    """Gate each candidate against ``baseline``: a one-sided test of ``candidate − baseline``
    against the margin (see the module docstring; ``docs/methods.md`` §3.11).

    Parameters
    ----------
    ds
        A dataset from :func:`bayeserr.load` (or a long results DataFrame).
    candidates
        A model name, or a list of them (Holm over them).
    baseline
        The model the candidates are compared with.
    margin
        m ≥ 0 in score units (0.01 is one point).  Non-inferiority passes when the data
        show A − B > −m, superiority when they show A − B > m.
    mode
        ``"non-inferiority"`` or ``"superiority"``.
    suite
        ``"macro"`` or ``"size"``: gate the suite difference over the data's tasks
        (``docs/methods.md`` §3.12: tasks as fixed strata, CR2 within tasks,
        Satterthwaite-combined df) instead of the pooled one; no wild bootstrap and no
        Bayesian probability then.
    task
        Gate one task of the suite (its questions only); not with ``suite``.
    options, kwargs
        :class:`~bayeserr.registries.options.Options` fields: ``level`` (of the one-sided
        bound, above 0.5; default 0.95), ``on_unpaired``, ``seed`` (the wild bootstrap),
        ``bayes`` (``"fast"`` for the Bayesian probability beside the verdict, ``"off"``).

    Returns
    -------
    GateResult
        ``passed``, ``exit_code``, ``sentence`` and one check per candidate.
    """
    from bayeserr.analyses.comparison import compare, pair_names
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView, check_dataset, model_names
    options = Options.coerce(options, **kwargs)
    level = options.level
    if not level > 0.5:
        raise InputError(f"level must be above 0.5 for a one-sided gate (got {level:g}): it is the "
                         "confidence of the lower bound, e.g. 0.95.")
    if mode not in MODES:
        from bayeserr.base.errors import suggest
        raise InputError(f"mode must be one of {', '.join(MODES)} (got {describe(mode)})."
                         f"{suggest(str(mode), MODES)}")
    margin = _check_margin(margin)
    if options.bayes.mode == "mcmc":
        raise InputError("the gate's Bayesian probability uses the fast pair posterior; give bayes='fast' "
                         "or 'off' (run 'bayeserr compare --bayes mcmc' for the sampled one).")
    if candidates is None or (isinstance(candidates, (list, tuple)) and not candidates):
        raise InputError("name at least one candidate model (--candidate A).")
    cands = model_names([candidates] if isinstance(candidates, str) else candidates, "candidates",
                        "candidates=['A']")
    baseline = str(baseline)
    for c in cands:
        pair_names(c, baseline)  # one model twice: "name two different models"
    null = -margin if mode == "non-inferiority" else margin
    if task is not None and suite is not None:
        raise InputError("--task gates one task and --suite all of them: give one or the other.")
    ds = check_dataset(ds)
    partial = gated_partial_runs(ds, [*cands, baseline])
    if task is not None:
        ds = one_task(ds, task)
    view = DataView.from_dataset(ds).select([*cands, baseline])
    pair_options = Options(level=level, on_unpaired=options.on_unpaired, bayes="off", seed=options.seed,
                           adjust="none", cluster_correction=options.cluster_correction)
    comps = [compare(ds, c, baseline, options=pair_options) for c in cands]
    pieces = [_pair_arrays(view, c) for c in comps]
    if suite is not None:
        comps, pieces = _suite_pairs(view, comps, pieces, suite, level)
        options = Options.coerce(options, bayes="off")
    elif task is None and view.tasks is not None and len(np.unique(view.tasks)) > 1:
        n_tasks = len(np.unique(view.tasks))  # say which estimand is gated: the pooled one
        pieces = [(*pc[:2], [*pc[2], f"the data hold {n_tasks} tasks: this gates the pooled score (every "
                                     "question weighs the same); --suite macro gates the suite score (each "
                                     "task the same), --task NAME one task."]) for pc in pieces]
    # the decision p of each candidate at the gate's level, then Holm over the candidates
    wild = suite is None
    first = [decide(c.diff, c.se, _df(c), null, level, *pc[:2], seed=options.seed, n_eff=_n_eff(c), wild=wild,
                    counts=_counts(c)) for c, pc in zip(comps, pieces)]
    p_dec = np.array([float(d.p_value[0]) for d in first])
    if len(cands) > 1:
        p_adj, steps = holm_levels(p_dec, level)
        adjust = "holm"
    else:
        p_adj, steps, adjust = p_dec.copy(), np.array([level]), "none"
    alpha = 1.0 - level
    passed = p_adj < alpha
    stopped = _holm_stopped(p_dec, steps, passed)
    checks = []
    for k, (c, d0) in enumerate(zip(comps, first)):
        d = d0 if steps[k] == level else decide(c.diff, c.se, _df(c), null, steps[k], *pieces[k][:2],
                                                seed=options.seed, n_eff=_n_eff(c), wild=wild,
                                                counts=_counts(c))
        prob, method = (None, None) if not options.bayes.on else _probability(view, c, null, options.bayes)
        power, scale = ((None, None) if mode != "non-inferiority" else
                        power_at_zero(c.se, _df(c), margin, level))
        n_needed = None if scale is None else float(c.n_questions * scale)
        too_small = bool(power is not None and power < TOO_SMALL_POWER)
        checks.append(_check(c, d0, d, float(p_adj[k]), float(steps[k]), bool(passed[k]), null, mode,
                             margin, level, len(cands), prob, method, power, n_needed, too_small,
                             stopped[k], pieces[k][2]))
    scope = f"task {task}" if task is not None else f"suite {suite}" if suite is not None else None
    return GateResult(tuple(checks), baseline, mode, margin, null, level, adjust, options.seed, scope,
                      tuple(partial))


def gated_partial_runs(ds, models) -> list[dict]:
    """The partial runs of ``models`` in the data (Inspect logs whose status is not 'success'):
    refused unless the user asked for them (``partial_runs="include"``), since a run's first
    finished samples are not a sample of its task; returned to be named in every output."""
    from bayeserr.data.loading import partial_runs
    runs = [r for r in partial_runs(ds) if r["model"] in set(models)]
    unasked = [r for r in runs if not r.get("asked")]
    if unasked:
        raise InputError(f"{partial_text(unasked)}: a gate on the samples that finished first could pass on a "
                         "biased part of the task. Re-run it to completion, or pass --partial-runs include "
                         "(Python: partial_runs='include' in bayeserr.load) to gate on it anyway; the verdict "
                         "then names it.")
    return runs


def _suite_pairs(view, comps, pieces, weighting: str, level: float):
    """The candidates' comparisons with the suite difference in place of the pooled one
    (a t test on the Satterthwaite df, so no wild bootstrap arrays)."""
    from dataclasses import replace

    from bayeserr.analyses.suite import ESTIMANDS, suite_view
    from bayeserr.stats.suite import WEIGHTINGS
    if weighting not in WEIGHTINGS:
        raise InputError(f"suite must be one of {', '.join(WEIGHTINGS)} (got {describe(weighting)}).")
    s = suite_view(view, level)
    if s is None:
        raise InputError("--suite needs a task for each question and at least two tasks (a task column, "
                         "--task-col, or eval logs of several tasks); without them gate the pooled score.")
    diffs = {(p.a, p.b): p for p in s.pairs if p.weighting == weighting}
    means = {m.model: m.mean for m in s.of(weighting)}
    out_c, out_p = [], []
    for c, (_, _, notes) in zip(comps, pieces):
        sd = diffs[c.a, c.b]
        if not (np.isfinite(sd.diff) and np.isfinite(sd.se)):
            raise InputError(f"--suite {weighting}: the suite difference {c.a} − {c.b} is not estimable: a "
                             "task one of them did not answer, or a task with a single cluster or question. "
                             "Gate the tasks one by one (--task NAME), or leave such tasks out (--where).")
        out_c.append(replace(c, diff=sd.diff, se_paired=sd.se, se_clustered_paired=sd.se, df=sd.df,
                             test=f"t_suite_{weighting}", mean_a=means[c.a], mean_b=means[c.b]))
        how = ("clusters cross tasks, so the variance is the stacked regression's CR2 (S3) with its "
               "Bell–McCaffrey df" if s.clusters == "across tasks" else
               "tasks as fixed strata; the t test's df is the Satterthwaite combination of the tasks' df "
               "with model-based task variances")
        out_p.append((None, None, [*notes, f"suite score over {len(s.tasks)} tasks ({weighting}: "
                                               f"{ESTIMANDS[weighting]}); {how} (docs/methods.md §3.12)."]))
    return out_c, out_p


def _check_margin(margin) -> float:
    import numbers
    if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, numbers.Real):
        raise InputError(f"margin must be a number in score units (got {describe(margin)}); e.g. 0.01 "
                         "for one point.")
    margin = float(margin)
    if not (0 <= margin < 1):
        raise InputError(f"margin must be at least 0 and below 1, in score units (got {margin:g}); e.g. "
                         "0.01 for one point.")
    return margin


def _df(c) -> float:
    return float(c.df) if c.df is not None else math.inf


def _n_eff(c) -> float:
    """Independent units behind a pair whose differences are all equal (:func:`zero_spread`):
    the questions, or with a clustered headline the effective number of clusters."""
    if (c.test == "t_cr2_bm" or c.test.startswith("t_suite")) and c.effective_clusters is not None:
        return float(c.effective_clusters)  # a suite with clusters: its clusters, not its questions
    return float(c.n_questions)


def _counts(c):
    """The discordant counts ``(b, c)`` of an unclustered pair of 0/1 answers, one per
    question (the score test's input), else ``False`` (the z, CR2 t or suite t decides)."""
    if c.test == "z_paired" and c.mcnemar is not None:
        return float(c.mcnemar.n_a_only), float(c.mcnemar.n_b_only)
    return False


def _pair_arrays(view, c):
    """Cluster sums and sizes of the pair's differences on its common questions (only the
    clusters present, as the report passes them to the wild bootstrap), and the notes."""
    from bayeserr.stats.fewclusters import cluster_totals
    sub = view.select([c.a, c.b])
    both = sub.answered.all(axis=0)
    notes = []
    if c.n_only_a or c.n_only_b:
        notes.append(f"compared on the {c.n_questions} questions both answered: {c.n_only_a} answered "
                     f"only by '{c.a}' and {c.n_only_b} only by '{c.b}' were dropped (--on-unpaired drop).")
    if sub.codes is None:
        return None, None, notes
    if c.n_clusters is not None and c.n_clusters < 2:
        notes.append("the common questions fall in one cluster: the test without clusters treats its "
                     "questions as the whole population.")
        return None, None, notes
    d = (sub.s[0] - sub.s[1])[both]
    D, sizes = cluster_totals(d[None], sub.codes[both])
    cols = np.flatnonzero(sizes[0] > 0)
    return D[:, cols], sizes[0, cols], notes


def _probability(view, c, null: float, settings) -> tuple[float | None, str]:
    """Bayesian ``P(A − B > null)`` from the fast pair posterior of the report."""
    from bayeserr.bayes.pairs import pair_probabilities
    sub = view.select([c.a, c.b])
    both = sub.answered.all(axis=0)
    d = (sub.s[0] - sub.s[1])[both]
    if sub.codes is not None:
        from bayeserr.models.paired_clustered import pair_probabilities as clustered
        from bayeserr.stats.fewclusters import cluster_totals
        codes = sub.codes[both]
        D, sizes = cluster_totals(d[None], codes)
        Q, _ = cluster_totals((d * d)[None], codes)
        # the sums of d − null, from those of d (the model's own input: §5.3)
        post = clustered(D - null * sizes, sizes, settings.rope,
                         sum_sq=Q - 2.0 * null * D + null * null * sizes)
        ok = bool(post.estimable[0])
        return (float(post.prob_a_better[0]) if ok else None,
                "normal model with a cluster random effect on the difference (quadrature)"
                + ("" if ok else f"; not estimable: {post.reason[0]}"))
    if c.mcnemar is not None:
        mc = c.mcnemar
        from bayeserr.models.paired_dirichlet import prob_above
        return (prob_above(mc.n_a_only, mc.n_b_only, mc.n_both + mc.n_neither, null),
                "Dirichlet 2×2 posterior, Dirichlet(1,1,1,1) prior")
    else:
        from bayeserr.models.bayesian_bootstrap import bootstrap_means
        means = bootstrap_means(sub.s[:, both], None, settings.draws, settings.seed)
        delta = means[:, 0] - means[:, 1]
        method = "Bayesian bootstrap over questions"
    return float(pair_probabilities(delta - null, settings.rope)[0]), method


def _holm_stopped(p, steps, passed) -> list[bool]:
    """Candidates whose own step would pass but Holm stopped at an earlier one."""
    alpha_step = 1.0 - steps
    return [bool(not passed[k] and p[k] < alpha_step[k]) for k in range(len(p))]


def _check(c, d0, d, p_adj, step, passed, null, mode, margin, level, k, prob, method, power, n_needed,
           too_small, stopped, notes) -> GateCheck:
    """One candidate's verdict, with its sentence and notes (:mod:`bayeserr.analyses.gate_text`)."""
    # size: every argument of gate() checked in one place, before any work
    p_t = float(d0.t.p_value[0])
    wild = None
    if d0.wild is not None:
        w = d0.wild
        wild = {"p_value": float(w.p_value[0]), "p_two_sided": float(w.p_two_sided[0]),
                "lower": float(w.lower[0]), "upper": float(w.upper[0]), "weights": w.weights,
                "draws": w.draws, "exact": w.exact}
    # a difference of scores in [0, 1] lies in [−1, 1]: a bound beyond that says nothing more
    bound, bound_upper = max(float(d.lower[0]), -1.0), min(float(d.upper[0]), 1.0)
    word = MODE_WORD[mode]
    if passed:
        finding = word
    elif bound_upper < null:
        finding = "worse"
    else:
        finding = "not shown"
    score = d0.score_rows is not None and bool(d0.score_rows[0])
    notes = check_notes(c, wild, p_t, step, finding, too_small, stopped, notes, _n_eff(c))
    text = check_sentence(c, finding, mode, step, null, bound, bound_upper, p_t, wild, k, p_adj, prob, score,
                          too_small, n_needed, power)
    return GateCheck(
        candidate=c.a, baseline=c.b, passed=passed, finding=finding, sentence=text,
        n_questions=c.n_questions, n_only_candidate=c.n_only_a, n_only_baseline=c.n_only_b,
        mean_candidate=c.mean_a, mean_baseline=c.mean_b, diff=c.diff, se=c.se,
        test="score_tango" if score else c.test, df=c.df,
        n_clusters=c.n_clusters, effective_clusters=c.effective_clusters,
        statistic=float(d0.t.statistic[0]), p_value=p_t, lower=float(d0.t.lower[0]),
        upper=float(d0.t.upper[0]), wild=wild, p_decision=float(d0.p_value[0]), p_adjusted=p_adj,
        bound_level=step, bound=bound, bound_upper=bound_upper, prob=prob, prob_method=method,
        power_at_zero=power, n_needed=n_needed, too_small=too_small, notes=tuple(notes))
