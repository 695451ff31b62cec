"""The anytime-valid monitoring lab (``docs/methods.md`` §3.13; issue 27): how often a
95% confidence sequence ever excludes the truth when the user looks after every answer,
how often naive peeking at the fixed-n test does, and how many questions a sequence
needs to settle a real gap.

Each data set is one eval of a candidate A and a baseline B answering the same
:data:`N_MAX` questions one after another, with 0/1 answers.  On question i the models
disagree with probability :data:`DISAGREE`: A alone is right with probability
``(DISAGREE + δ_i)/2`` and B alone with ``(DISAGREE − δ_i)/2``; otherwise both are right
with probability ``q_i``, else both wrong.  So ``E[a_i − b_i] = δ_i`` and A's accuracy is
``(1 − DISAGREE) q_i + (DISAGREE + δ_i)/2``; at ``q_i =`` :data:`BOTH_RIGHT` and
``δ_i = 0`` both models score :data:`ACCURACY`.

Without clusters the questions are independent: ``q_i = BOTH_RIGHT``, ``δ_i = Δ``.  With
clusters (:data:`SIZES`: SWE-bench Verified's 12 repository sizes, each taken
:data:`REPEAT` times, 120 clusters of 5,000 questions) the clusters arrive in a random
order, whole, one after another, and each carries two effects, both normal with mean 0
and clipped symmetrically (so their means stay 0 and every rate stays valid): one on the
level, ``q_c = BOTH_RIGHT + w_c`` (sd :data:`TAU_LEVEL`), and one on the difference,
``δ_c = Δ + v_c`` (sd :data:`TAU_DIFF`).  The effects do not depend on the sizes or the
order, so the true A − B (the per-question mean over the population of clusters,
``E[S_c]/E[n_c]``, the cluster sequences' estimand) is exactly Δ and A's true mean is
exactly ``(1 − DISAGREE) BOTH_RIGHT + (DISAGREE + Δ)/2``.

Studies (:data:`STUDIES`), each on the same data sets for every procedure:

* ``"error"`` (Δ = 0): the share of data sets in which the 95% sequence of A − B, and of
  A's mean, **ever** excludes the true value over the looks at n = 10…5,000 (betting and
  asymptotic; per question without clusters, per cluster with them), and, beside it, the
  share in which the fixed-n 95% test checked after every :data:`PEEK_EVERY` questions
  (naive peeking, stop at the first rejection) ever rejects the true value: the paired z
  on the differences (SE (M1)) and the z on A's scores without clusters; with clusters
  the test the report runs, the CR2 SE with t on the Bell–McCaffrey df over the clusters
  begun so far, and the plain z that ignores the clusters.
* ``"saved"`` (Δ in :data:`GAPS`): the settle rule (stop when the sequence of A − B
  excludes 0) with at most 5,000 questions: the questions used (the budget when it never
  stops), the share stopped, the share stopped in the wrong direction, against the fixed-n
  paired design with 80% power at Δ (:func:`~bayeserr.stats.planning.n_required`, (M9),
  times the design effect of the clusters with them) and that design's simulated power.

Every sequence is the one ``bayeserr watch`` computes:
:func:`~bayeserr.stats.sequential.paired_cs` and
:func:`~bayeserr.stats.sequential.mean_cs` on each data set, with their defaults (the
cluster betting sequence with ``max_size`` the largest cluster of the benchmark, known
before the run), and the stopping rule is
:func:`~bayeserr.stats.sequential.first_exclusion`.  Replicates are simulated in blocks
of :data:`BLOCK`, each with its own seed ``(cell seed, block)``, so the result does not
depend on how many processes run them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.base.formats import number
from bayeserr.base.formats import percent as _percent
from bayeserr.lab.blocks import publisher
from bayeserr.lab.formats import findings_head, rate_cells
from bayeserr.lab.formats import missing as _missing
from bayeserr.lab.formats import nominal as _nominal
from bayeserr.lab.formats import pm as _pm
from bayeserr.lab.gate import SWEBENCH_SIZES

#: each of SWE-bench Verified's 12 repository sizes is taken this many times
REPEAT = 10
#: the clustered design: 120 clusters, 5,000 questions (SWE-bench's sizes ×10)
SIZES = tuple(s for s in SWEBENCH_SIZES for _ in range(REPEAT))
#: questions per data set (the largest n looked at)
N_MAX = sum(SIZES)
#: the first look counted (questions)
FIRST_LOOK = 10
#: naive peeking checks the fixed-n test after every this many questions
PEEK_EVERY = 10
#: both models' accuracy when they are equally good and at the mean level
ACCURACY = 0.7
#: share of questions on which the models disagree (pairs of similar models: 20–30%)
DISAGREE = 0.3
#: chance that both are right where they agree (so that each scores ACCURACY at Δ = 0)
BOTH_RIGHT = (ACCURACY - DISAGREE / 2) / (1 - DISAGREE)
#: sd of the cluster effect on the level (on the both-right rate, score units)
TAU_LEVEL = 0.1
#: sd of the cluster effect on A − B (score units)
TAU_DIFF = 0.05
#: true gaps A − B of the questions-saved study
GAPS = (0.05, 0.1, 0.2)
#: cluster structures: none, or SWE-bench's sizes ×10 in a random order
CLUSTERS = ("none", "swebench")
#: the two studies: error over every look at Δ = 0, and the questions a settled gap takes
STUDIES = ("error", "saved")
#: the sequences
METHODS = ("betting", "asymptotic")
#: level of the sequences and of the fixed-n tests
LEVEL = 0.95
#: power of the fixed-n design the sequences are compared with
POWER = 0.8
#: data sets per published cell of the error study: a Monte Carlo SE of at most 0.71 points for any rate
PUBLISHED_REPS = 5000
#: data sets per published cell of the questions-saved study
PUBLISHED_SAVED_REPS = 2000
#: data sets simulated (and held in memory) at once, with their own seed
BLOCK = 50
#: worker processes of the published run
JOBS = 2
#: a rate "clearly above" nominal: more than this many Monte Carlo SEs above it
CLEAR_SE = 3
#: markers around the section of docs/calibration.md
SECTION_START, SECTION_END = "<!-- sequential-lab:start -->", "<!-- sequential-lab:end -->"
#: the procedures of the error study, in the table's order
PROCEDURES = ("betting", "asymptotic", "peek", "peek_plain")
_NAMES = {"betting": "betting CS", "asymptotic": "asymptotic CS",
          "peek": "fixed-n test, peeking every 10", "peek_plain": "plain z, peeking every 10"}
#: prefixes (questions) on which a per-question sequence is computed in turn until it stops
#: (a sequence's first t looks depend on the first t answers only)
_PREFIXES = (250, 500, 1000, 2000)


# --------------------------------------------------------------------------- #
# the design
# --------------------------------------------------------------------------- #
def true_difference(gap: float) -> float:
    """The true A − B of a design: the gap itself."""
    return float(gap)


def true_mean(gap: float) -> float:
    """A's true mean score: ``(1 − DISAGREE) BOTH_RIGHT + (DISAGREE + Δ)/2``."""
    return (1 - DISAGREE) * BOTH_RIGHT + (DISAGREE + float(gap)) / 2


def _check_design(gap, clusters) -> None:
    if clusters not in CLUSTERS:
        raise InputError(f"clusters must be one of {', '.join(CLUSTERS)} (got {clusters!r}).")
    if not 0 <= gap < DISAGREE:
        raise InputError(f"the gap must lie in [0, {DISAGREE:g}), the models' disagreement rate (got {gap:g}).")


def _clip_bound_level() -> float:
    return min(BOTH_RIGHT, 1 - BOTH_RIGHT) - 1e-3


def _clip_bound_diff(gap: float) -> float:
    return DISAGREE - abs(gap) - 1e-3


@dataclass(frozen=True)
class Draws:
    """``reps`` data sets of a design: answers in arrival order and, with clusters, where
    each cluster sits in the stream."""

    a: np.ndarray                  #: (reps, n) 0/1 answers of A
    b: np.ndarray                  #: (reps, n) 0/1 answers of B
    codes: np.ndarray | None       #: (reps, n) each question's cluster (0…119), or None
    starts: np.ndarray | None      #: (reps, C) first question of the j-th cluster to arrive
    ends: np.ndarray | None        #: (reps, C) one past its last question


def draw(gap: float, clusters: str, reps: int, rng) -> Draws:
    """``reps`` data sets of the module docstring's model at true A − B ``gap``."""
    _check_design(gap, clusters)
    n = N_MAX
    u = rng.random((reps, n))
    if clusters == "none":
        q, delta = BOTH_RIGHT, float(gap)
        codes = starts = ends = None
    else:
        sizes = np.asarray(SIZES)
        C = len(sizes)
        order = np.argsort(rng.random((reps, C)), axis=1)            # a random order per data set
        in_order = sizes[order]
        ends = np.cumsum(in_order, axis=1)
        starts = ends - in_order
        codes = np.stack([np.repeat(order[r], in_order[r]) for r in range(reps)])
        bl, bd = _clip_bound_level(), _clip_bound_diff(gap)
        w = np.clip(rng.normal(0.0, TAU_LEVEL, (reps, C)), -bl, bl)
        v = np.clip(rng.normal(0.0, TAU_DIFF, (reps, C)), -bd, bd)
        q = BOTH_RIGHT + np.take_along_axis(w, codes, axis=1)
        delta = float(gap) + np.take_along_axis(v, codes, axis=1)
    a_only = u < (DISAGREE + delta) / 2
    b_only = ~a_only & (u < DISAGREE)
    both = (u >= DISAGREE) & (u < DISAGREE + (1 - DISAGREE) * q)
    return Draws((a_only | both).astype(float), (b_only | both).astype(float), codes, starts, ends)


def clipped_variance(tau: float, bound: float) -> float:
    """Variance of ``N(0, τ²)`` clipped to ``±bound``."""
    from scipy.stats import norm
    if tau == 0:
        return 0.0
    k = bound / tau
    return tau * tau * ((1 - 2 * norm.sf(k)) - 2 * k * norm.pdf(k)) + 2 * bound * bound * norm.sf(k)


def effective_size() -> float:
    """``m_eff = Σ n_c² / n`` of :data:`SIZES` (the Kish design effect's cluster size)."""
    s = np.asarray(SIZES, float)
    return float((s * s).sum() / s.sum())


def design_effect(gap: float, clusters: str) -> float:
    """Design effect of the mean difference: ``1 + (m_eff − 1) ICC`` with the ICC of the
    differences ``Var(v_c) / Var(a − b)``, ``Var(a − b) = DISAGREE − Δ²``
    (:func:`~bayeserr.stats.planning.design_effect_icc`); 1 without clusters."""
    from bayeserr.stats.planning import design_effect_icc
    if clusters == "none":
        return 1.0
    icc = clipped_variance(TAU_DIFF, _clip_bound_diff(gap)) / (DISAGREE - gap * gap)
    return design_effect_icc(effective_size(), icc)


def fixed_n(gap: float, clusters: str, level: float = LEVEL, power: float = POWER) -> int:
    """Questions of the fixed-n paired design with ``power`` at ``gap``: (M9),
    :func:`~bayeserr.stats.planning.n_required` with ``ω² = DISAGREE − Δ²`` (the variance
    of a − b), times :func:`design_effect`, rounded up."""
    from bayeserr.stats.planning import n_required
    n = n_required(gap, DISAGREE - gap * gap, alpha=1 - level, power=power, deff=design_effect(gap, clusters))
    return math.ceil(n - 1e-9)


# --------------------------------------------------------------------------- #
# the procedures on one block
# --------------------------------------------------------------------------- #
def _options(method: str, clusters: bool) -> dict:
    return {"max_size": max(SIZES)} if clusters and method == "betting" else {}


def sequence(a, b, codes, method: str, estimand: str, alpha: float = 1 - LEVEL):
    """The sequence ``bayeserr watch`` computes for one data set: A − B
    (:func:`~bayeserr.stats.sequential.paired_cs`) or A's mean
    (:func:`~bayeserr.stats.sequential.mean_cs`), per cluster when ``codes`` is given."""
    from bayeserr.stats import sequential as seq
    opts = _options(method, codes is not None)
    if estimand == "difference":
        return seq.paired_cs(a, b, method, alpha, clusters=codes, **opts)
    return seq.mean_cs(a, method, alpha, clusters=codes, **opts)


def fixed_n_test(x, truth: float, looks, starts=None, ends=None, level: float = LEVEL):
    """The fixed-n two-sided test of ``mean = truth`` on the first t questions of each
    row of ``x`` (reps × n), at every t of ``looks``: ``(reject, half_width)``, each
    (reps × looks).

    Without ``starts``/``ends``: the z test with the SE (M1), ``sd(ddof 1)/√t``
    (:func:`~bayeserr.stats.estimators.se_clt` of the first t values).  With them (each
    cluster's place in the row, (reps × C)): the CR2 SE over the clusters begun by t
    (:func:`~bayeserr.stats.fewclusters.cr2_from_sums`) with t on the Bell–McCaffrey df
    (:func:`~bayeserr.stats.fewclusters.bm_df`); no test where fewer than two clusters have
    begun.  An SE of 0 rejects any mean other than ``truth``.
    """
    from scipy.stats import norm
    from scipy.stats import t as student
    x = np.asarray(x, float)
    looks = np.asarray(looks, dtype=np.int64)
    tt = looks.astype(float)
    if starts is None:
        c1 = np.cumsum(x, axis=-1)[:, looks - 1]
        c2 = np.cumsum(x * x, axis=-1)[:, looks - 1]
        mean = c1 / tt
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.maximum(c2 - tt * mean * mean, 0.0) / (tt - 1)
        se = np.sqrt(var / tt)
        crit = norm.isf((1 - level) / 2)
    else:
        from bayeserr.stats.fewclusters import bm_df, cr2_from_sums
        reps = x.shape[0]
        prefix = np.concatenate([np.zeros((reps, 1)), np.cumsum(x, axis=-1)], axis=-1)
        e = np.minimum(np.asarray(ends)[:, None, :], looks[None, :, None])
        s = np.minimum(np.asarray(starts)[:, None, :], looks[None, :, None])
        sizes = (e - s).astype(float)
        shape = e.shape
        sums = (np.take_along_axis(prefix, e.reshape(reps, -1), axis=1)
                - np.take_along_axis(prefix, s.reshape(reps, -1), axis=1)).reshape(shape)
        mean = sums.sum(axis=-1) / tt
        with np.errstate(invalid="ignore", divide="ignore"):
            se = cr2_from_sums(sums - sizes * mean[..., None], sizes)
            crit = student.isf((1 - level) / 2, bm_df(sizes))
    with np.errstate(invalid="ignore"):
        half = crit * se
        reject = np.abs(mean - truth) > half + 1e-12       # NaN (too few clusters): no test
    return reject, half


def _seed(cell_seed: int, block: int):
    return np.random.default_rng([int(cell_seed), int(block)])


def error_block(clusters: str, reps: int, cell_seed: int, block: int, level: float = LEVEL) -> dict:
    """One block of the error study (Δ = 0): per data set, whether each procedure ever
    excludes (rejects) the true A − B and A's true mean, and its half-width at n = 5,000."""
    from bayeserr.stats.sequential import first_exclusion
    d = draw(0.0, clusters, reps, _seed(cell_seed, block))
    alpha = 1 - level
    truth = {"difference": true_difference(0.0), "mean": true_mean(0.0)}
    out = {}
    for estimand in ("difference", "mean"):
        for method in METHODS:
            ever, half = np.zeros(reps, bool), np.zeros(reps)
            for r in range(reps):
                s = sequence(d.a[r], d.b[r], None if d.codes is None else d.codes[r], method, estimand, alpha)
                # the running intersection keeps an exclusion: "ever over t = 10…5,000" is "at any look"
                ever[r] = first_exclusion(s.lower, s.upper, truth[estimand]) is not None
                half[r] = (s.upper[-1] - s.lower[-1]) / 2
            out[f"{estimand}/{method}/ever"], out[f"{estimand}/{method}/half"] = ever, half
        x = d.a - d.b if estimand == "difference" else d.a
        looks = np.arange(PEEK_EVERY, N_MAX + 1, PEEK_EVERY)
        tests = {"peek": (d.starts, d.ends)} if clusters != "none" else {}
        tests["peek_plain" if clusters != "none" else "peek"] = (None, None)
        for name, (st, en) in tests.items():
            reject, half = fixed_n_test(x, truth[estimand], looks, st, en, level)
            out[f"{estimand}/{name}/ever"] = reject.any(axis=1)
            out[f"{estimand}/{name}/half"] = half[:, -1]
    return out


def settle(a, b, codes, method: str, alpha: float = 1 - LEVEL) -> tuple[int, int]:
    """The settle rule on one data set: the questions seen when the sequence of A − B first
    excludes 0 (0: never), and the side (+1: A better, −1: B better, 0: never).  Without
    clusters the sequence is computed on growing prefixes until it stops (its first t looks
    depend on the first t answers only)."""
    from bayeserr.stats.sequential import first_exclusion
    n = len(a)
    prefixes = [m for m in _PREFIXES if m < n] + [n] if codes is None else [n]
    for m in prefixes:
        s = sequence(a[:m], b[:m], None if codes is None else codes[:m], method, "difference", alpha)
        i = first_exclusion(s.lower, s.upper, 0.0)
        if i is not None:
            return int(s.t[i - 1]), (1 if s.lower[i - 1] > 0 else -1)
    return 0, 0


def saved_block(gap: float, clusters: str, reps: int, cell_seed: int, block: int,
                level: float = LEVEL) -> dict:
    """One block of the questions-saved study at true A − B ``gap``: per data set and
    sequence, the questions at which the settle rule stopped (0: not by 5,000) and its
    side; and whether the fixed-n design (:func:`fixed_n` questions) rejects 0 on the
    right side (paired z; CR2 t on the BM df with clusters)."""
    d = draw(gap, clusters, reps, _seed(cell_seed, block))
    alpha = 1 - level
    out = {}
    for method in METHODS:
        stop, side = np.zeros(reps, np.int64), np.zeros(reps, np.int64)
        for r in range(reps):
            stop[r], side[r] = settle(d.a[r], d.b[r], None if d.codes is None else d.codes[r], method, alpha)
        out[f"{method}/stop"], out[f"{method}/side"] = stop, side
    n = fixed_n(gap, clusters, level)
    if n <= N_MAX:
        x = d.a - d.b
        reject, _ = fixed_n_test(x, 0.0, [n], d.starts, d.ends, level)
        mean = x[:, :n].mean(axis=1)
        out["fixed/power"] = reject[:, 0] & (mean > 0)
    else:
        out["fixed/power"] = np.full(reps, np.nan)
    out["fixed/clusters"] = (np.zeros(reps) if d.starts is None
                             else (d.starts < min(n, N_MAX)).sum(axis=1).astype(float))
    return out


# --------------------------------------------------------------------------- #
# cells, running
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Cell:
    """One cell of the lab: a study, a cluster structure and the true A − B."""

    study: str = "error"
    clusters: str = "none"
    gap: float = 0.0

    def __post_init__(self):
        if self.study not in STUDIES:
            raise InputError(f"study must be one of {', '.join(STUDIES)} (got {self.study!r}).")
        _check_design(self.gap, self.clusters)
        if (self.study == "error") != (self.gap == 0):
            raise InputError("the error study runs at a true gap of 0, the questions-saved study at a gap > 0.")


def cells(clusters=CLUSTERS, gaps=GAPS) -> list[Cell]:
    """The published grid: the error study for each cluster structure, then the
    questions-saved study for each gap and structure."""
    return ([Cell("error", c, 0.0) for c in clusters]
            + [Cell("saved", c, float(g)) for g in gaps for c in clusters])


def _block(task):
    """Run one block (module level, so a worker process can run it)."""
    cell, k, cell_seed, block, level = task
    if cell.study == "error":
        return error_block(cell.clusters, k, cell_seed, block, level)
    return saved_block(cell.gap, cell.clusters, k, cell_seed, block, level)


def _se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / reps)


def _summary(cell: Cell, res: dict, reps: int, seed: int, level: float) -> list[dict]:
    base = {"study": cell.study, "clusters": cell.clusters, "gap": cell.gap,
            "n_clusters": 0 if cell.clusters == "none" else len(SIZES), "n_max": N_MAX, "level": level,
            "reps": reps, "seed": seed}
    rows = []
    if cell.study == "error":
        for estimand in ("difference", "mean"):
            truth = true_difference(0.0) if estimand == "difference" else true_mean(0.0)
            for proc in PROCEDURES:
                key = f"{estimand}/{proc}/ever"
                if key not in res:
                    continue
                rate = float(res[key].mean())
                rows.append({**base, "estimand": estimand, "procedure": proc, "truth": truth,
                             "rate": rate, "rate_se": _se(rate, reps),
                             "half_width": float(np.nanmean(res[f"{estimand}/{proc}/half"]))})
        return rows
    n = fixed_n(cell.gap, cell.clusters, level)
    power = res["fixed/power"].astype(float)
    fp = float(np.mean(power)) if n <= N_MAX else math.nan
    for method in METHODS:
        stop, side = res[f"{method}/stop"], res[f"{method}/side"]
        used = np.where(stop > 0, stop, N_MAX).astype(float)
        stopped, wrong = float((stop > 0).mean()), float((side < 0).mean())
        rows.append({**base, "estimand": "difference", "procedure": method, "truth": true_difference(cell.gap),
                     "mean_n": float(used.mean()), "mean_n_se": float(used.std(ddof=1) / math.sqrt(reps)),
                     "median_n": float(np.median(used)), "stopped": stopped, "stopped_se": _se(stopped, reps),
                     "wrong": wrong, "wrong_se": _se(wrong, reps), "fixed_n": n,
                     "design_effect": design_effect(cell.gap, cell.clusters),
                     "fixed_clusters": (float(res["fixed/clusters"].mean()) if cell.clusters != "none"
                                        else math.nan),
                     "fixed_power": fp, "fixed_power_se": _se(fp, reps) if n <= N_MAX else math.nan})
    return rows


def _count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise InputError(f"{name} must be a whole number ≥ {low} (got {value!r}).")
    return int(value)


def run_sequential(reps: int, seed: int = 0, *, saved_reps: int | None = None, grid=None, jobs: int = 1,
                   level: float = LEVEL, progress=None):
    """Every cell of ``grid`` (default :func:`cells`) as a DataFrame (one row per cell ×
    procedure): ``reps`` data sets per cell of the error study, ``saved_reps`` (default
    ``reps``) per cell of the questions-saved study.  Cell i has the seed ``seed + 1000 i``
    and its block j the generator ``default_rng([seed + 1000 i, j])``; ``jobs`` worker
    processes run the blocks (1: in this process) and give the same numbers.
    ``progress(k)`` is called as each block of k data sets finishes."""
    import pandas as pd
    reps = _count("reps", reps, 2)
    saved_reps = reps if saved_reps is None else _count("saved_reps", saved_reps, 2)
    jobs = _count("jobs", jobs, 1)
    grid = cells() if grid is None else list(grid)
    counts = [reps if cell.study == "error" else saved_reps for cell in grid]
    tasks = []
    for i, cell in enumerate(grid):
        for j, start in enumerate(range(0, counts[i], BLOCK)):
            tasks.append((i, (cell, min(BLOCK, counts[i] - start), seed + 1000 * i, j, level)))
    from bayeserr.lab.blocks import run_blocks
    if jobs != 1:  # the expensive cells (per-question betting on 5,000 answers) first: workers finish together
        tasks = sorted(tasks, key=lambda kt: (kt[1][0].clusters != "none", kt[1][0].study != "error"))
    results = run_blocks(_block, tasks, jobs, progress)
    rows = []
    for i, cell in enumerate(grid):
        blocks = [results[(i, j)] for j in range(len(range(0, counts[i], BLOCK)))]
        res = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
        rows += _summary(cell, res, counts[i], seed + 1000 * i, level)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# the published section
# --------------------------------------------------------------------------- #
def _pm2(rate: float, se: float) -> str:
    return f"{100 * rate:.2f} ± {100 * se:.2f}"


def _n(x: float) -> str:
    return f"{x:,.0f}"


def clearly_above(rate, reps, alpha: float = 1 - LEVEL):
    """More than :data:`CLEAR_SE` Monte Carlo SEs (of a rate of ``alpha``) above ``alpha``."""
    return rate > alpha + CLEAR_SE * np.sqrt(alpha * (1 - alpha) / reps)


def _structure(clusters: str) -> str:
    return "none" if clusters == "none" else f"SWE-bench ×{REPEAT} ({len(SIZES)})"


def _quantity(estimand: str, truth: float) -> str:
    return f"A − B (true {truth:g})" if estimand == "difference" else f"A's mean (true {truth:g})"


def _errors(df):
    return df[df.study == "error"]


def _saved(df):
    return df[df.study == "saved"]


def error_table(df) -> list[str]:
    """Ever excludes / ever rejects the true value (%, ± one MC SE), one line per quantity and design."""
    err = _errors(df)
    lines = ["| quantity | clusters | " + " | ".join(_NAMES[p] for p in PROCEDURES) + " |",
             "|---|---|" + "---|" * len(PROCEDURES)]
    for (estimand, clusters), g in err.groupby(["estimand", "clusters"], sort=False):
        by = {r["procedure"]: r for _, r in g.iterrows()}
        cells_ = rate_cells(by, PROCEDURES, "rate", lambda p, r: clearly_above(r["rate"], r["reps"], 1 - r["level"]))
        lines.append(f"| {_quantity(estimand, g['truth'].iloc[0])} | {_structure(clusters)} | "
                     + " | ".join(cells_) + " |")
    return lines


def width_table(df) -> list[str]:
    """Mean half-width at n = 5,000 (points) of each procedure: the price of looking at every answer."""
    err = _errors(df)
    lines = ["| quantity | clusters | " + " | ".join(_NAMES[p].split(",")[0] for p in PROCEDURES) + " |",
             "|---|---|" + "---|" * len(PROCEDURES)]
    for (estimand, clusters), g in err.groupby(["estimand", "clusters"], sort=False):
        by = {r["procedure"]: r for _, r in g.iterrows()}
        cells_ = ["–" if p not in by or _missing(by[p]["half_width"]) else f"{100 * by[p]['half_width']:.2f}"
                  for p in PROCEDURES]
        lines.append(f"| {_quantity(estimand, g['truth'].iloc[0])} | {_structure(clusters)} | "
                     + " | ".join(cells_) + " |")
    return lines


def saved_table(df) -> list[str]:
    """The questions-saved table: one line per gap, design and sequence."""
    head = ("| true A − B | clusters | sequence | questions used, mean ± MC SE | median | stopped by "
            f"{_n(N_MAX)} (%) | stopped the wrong way (%) | saved vs all {_n(N_MAX)}, mean | fixed-n design, "
            f"{round(100 * POWER):d}% power: questions | its power, simulated (%) | saved vs the fixed-n "
            "design, mean |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in _saved(df).iterrows():
        power = "–" if _missing(r["fixed_power"]) else _pm(r["fixed_power"], r["fixed_power_se"])
        lines.append(f"| {r['gap']:g} | {_structure(r['clusters'])} | {r['procedure']} | "
                     f"{_n(r['mean_n'])} ± {_n(r['mean_n_se'])} | {_n(r['median_n'])} | "
                     f"{_pm(r['stopped'], r['stopped_se'])} | {_pm2(r['wrong'], r['wrong_se'])} | "
                     f"{_signed_n(r['n_max'] - r['mean_n'])} | {_n(r['fixed_n'])} | {power} | "
                     f"{_signed_n(r['fixed_n'] - r['mean_n'])} |")
    return lines


def _signed_n(x: float) -> str:
    return number(x, 0, signed=True, grouped=True)


def _where(r) -> str:
    what = "no clusters" if r["clusters"] == "none" else f"SWE-bench's clusters ×{REPEAT}"
    return f"{'A − B' if r['estimand'] == 'difference' else 'the mean'}, {r['procedure']}, {what}"


def _what(estimand: str) -> str:
    return "A − B" if estimand == "difference" else "A's mean"


def error_findings(df) -> list[str]:
    """The error study's conclusions, every number computed from ``df``."""
    err = _errors(df)
    if not len(err):
        return []
    alpha = 1 - float(err["level"].iloc[0])
    out = []
    cs = err[err.procedure.isin(METHODS)]
    worst = cs.loc[cs["rate"].idxmax()]
    text = (f"- **The sequences hold their error over every look.** Over {len(cs)} cells (A − B and A's mean; "
            "betting and asymptotic; without and with clusters) the 95% sequence ever excluded the true value "
            f"between n = {FIRST_LOOK} and {_n(N_MAX)} in {_percent(cs['rate'].min())}–{_percent(cs['rate'].max())} of "
            f"data sets (nominal at most {_nominal(alpha)}; the highest, {_where(worst)}: "
            f"{_pm(worst['rate'], worst['rate_se'])}%).")
    for m in METHODS:
        g = cs[cs.procedure == m]
        if len(g):
            text += f" {m.capitalize()}: {_percent(g['rate'].min())}–{_percent(g['rate'].max())}."
    cl = cs[cs.clusters != "none"]
    if len(cl):
        text += (f" With clusters the cluster-level sequences are conservative here: "
                 f"{_percent(cl['rate'].min())}–{_percent(cl['rate'].max())}.")
    above = cs[clearly_above(cs["rate"], cs["reps"], alpha)]
    if len(above):
        text += (f" **Above nominal** (more than {CLEAR_SE} Monte Carlo SEs over {_nominal(alpha)}): "
                 + "; ".join(f"{_where(r)}: {_pm(r['rate'], r['rate_se'])}%" for _, r in above.iterrows()) + ".")
    else:
        text += f" None is more than {CLEAR_SE} Monte Carlo SEs above {_nominal(alpha)}."
    out.append(text)
    peek = err[err.procedure == "peek"]
    if len(peek):
        parts = []
        for _, r in peek.iterrows():
            what = "no clusters, z" if r["clusters"] == "none" else "SWE-bench's clusters, CR2 t"
            parts.append(f"{_what(r['estimand'])} ({what}): {_pm(r['rate'], r['rate_se'])}%")
        lo, hi = peek["rate"].min(), peek["rate"].max()
        text = (f"- **Naive peeking does not.** Checking the fixed-n 95% test after every {PEEK_EVERY} questions "
                f"({N_MAX // PEEK_EVERY} looks) and stopping at the first rejection rejected the true value in "
                + "; ".join(parts)
                + f": {lo / alpha:.1f} to {hi / alpha:.1f} times the nominal {_nominal(alpha)}")
        plain = err[err.procedure == "peek_plain"]
        if len(plain):
            text += ("; the plain z that also ignores the clusters, "
                     + " and ".join(f"{_pm(r['rate'], r['rate_se'])}% ({_what(r['estimand'])})"
                                    for _, r in plain.iterrows()))
        out.append(text + ".")
    parts = []
    for (estimand, clusters), g in err.groupby(["estimand", "clusters"], sort=False):
        by = {r["procedure"]: r["half_width"] for _, r in g.iterrows()}
        if all(p in by for p in ("betting", "asymptotic", "peek")):
            what = "no clusters" if clusters == "none" else "clusters"
            parts.append(f"{_what(estimand)}, {what}: betting {100 * by['betting']:.1f}, asymptotic "
                         f"{100 * by['asymptotic']:.1f}, fixed-n {100 * by['peek']:.1f}")
    if parts:
        out.append(f"- **The price of looking at every answer** is width: the mean half-width at "
                   f"n = {_n(N_MAX)}, in points: " + "; ".join(parts) + ".")
    return out


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _points(gap: float) -> str:
    return f"{round(100 * gap, 6):g}"


def saved_findings(df) -> list[str]:
    """The questions-saved study's conclusions, every number computed from ``df``."""
    sv = _saved(df)
    if not len(sv):
        return []
    out = []
    for clusters, g in sv.groupby("clusters", sort=False):
        gaps = sorted(set(g["gap"]))
        head = ("**Without clusters**" if clusters == "none"
                else f"**With SWE-bench's clusters ×{REPEAT}** (a look as each cluster completes)")
        by = {m: g[g.procedure == m].sort_values("gap") for m in METHODS if (g.procedure == m).any()}
        parts, never = [], []
        for m, r in by.items():
            if (r["stopped"] == 0).all():
                never.append(m)
                continue
            parts.append(f"after {_and(_n(x) for x in r['mean_n'])} questions on average with the {m} sequence "
                         f"(medians {_and(_n(x) for x in r['median_n'])}; stopped by {_n(N_MAX)} in "
                         f"{_and(_percent(x) for x in r['stopped'])})")
        text = f"- {head}, at true gaps of {_and(_points(x) for x in gaps)} points the settle rule stopped "
        text += " and ".join(parts)
        if never:
            text += ("; " if parts else "") + f"the {_and(never)} sequence never stopped at any of them"
        text += f". A run that never stops counts {_n(N_MAX)}." if parts else "."
        fixed = by[next(iter(by))].sort_values("gap")
        seen = [r for r in by.values() if (r["stopped"] > 0).any()]
        more = bool(seen) and all((r["mean_n"].to_numpy() > r["fixed_n"].to_numpy()).all() for r in seen)
        text += (f" The fixed-n paired design with {round(100 * POWER):d}% power at the very gap needs "
                 f"{_and(_n(x) for x in fixed['fixed_n'])} questions"
                 + (f" (design effect {fixed['design_effect'].min():.2f}–{fixed['design_effect'].max():.2f}; "
                    f"{_and(f'{x:.1f}' for x in fixed['fixed_clusters'])} clusters begun on average)"
                    if clusters != "none" else "")
                 + (", fewer than the sequences needed on average at every gap (the price of being free to stop "
                    "at any look), but it must know the gap in advance" if more
                    else ", and it must know the gap in advance")
                 + f"; its test reached {_and(_percent(x) for x in fixed['fixed_power'])} power on the same data "
                   "sets.")
        smallest = fixed.iloc[0]
        later = {m: rows[rows["gap"] > smallest["gap"]] for m, rows in by.items() if m not in never}
        later = {m: rows for m, rows in later.items() if len(rows)}
        if later:
            text += (f" Planned for the smallest gap, {_points(smallest['gap'])} points, a fixed-n design spends "
                     f"{_n(smallest['fixed_n'])} questions whatever the truth, while on average the "
                     + "; the ".join(f"{m} sequence stops after "
                                     + _and(f"{_n(r['mean_n'])} at {_points(r['gap'])} points"
                                            for _, r in rows.iterrows())
                                     for m, rows in later.items())
                     + ".")
        out.append(text)
    slow = sv[(sv["stopped"] < 0.5) & ~((sv.clusters != "none") & (sv.procedure == "betting"))]
    if len(slow):
        out.append("- **Not settled within the budget:** "
                   + "; ".join(f"gap {_points(r['gap'])} points, {r['procedure']}, "
                               f"{'no clusters' if r['clusters'] == 'none' else 'clusters'}: stopped by "
                               f"{_n(N_MAX)} in {_percent(r['stopped'])}" for _, r in slow.iterrows()) + ".")
    stuck = sv[(sv.clusters != "none") & (sv.procedure == "betting")]
    if len(stuck):
        alpha = 1 - float(stuck["level"].iloc[0])
        need = 2 * max(SIZES) * math.log(1 / alpha) / N_MAX
        text = ("- **Why the cluster-level betting sequence settles so little.** It bets once per cluster, on "
                f"(S_c − m n_c)/n_max with n_max = {max(SIZES)}, the largest cluster (so the bet is valid for any "
                "size), and at δ = 0 its bet is at most c/m = 1. As log(1 + y) ≤ y, the log-capital of the bet on "
                "A > B is at most Σ_c max(D_c, 0)/(2 n_max), D_c being cluster c's total A − B: about "
                "n · gap/(2 n_max) after n questions. Excluding 0 needs a log-capital of log(1/α) = "
                f"{math.log(1 / alpha):.2f}, out of reach below a gap of about 2 n_max log(1/α)/n = "
                f"{100 * need:.1f} points at n = {_n(N_MAX)}, however many clusters there are (its half-width at "
                f"n = {_n(N_MAX)} is in the table above).")
        asy = _errors(df)
        asy = asy[(asy.clusters != "none") & (asy.procedure == "asymptotic")]
        settled = sv[(sv.clusters != "none") & (sv.procedure == "asymptotic")].sort_values("gap")
        if len(asy) and len(settled):
            held = not clearly_above(asy["rate"], asy["reps"], alpha).any()
            text += (" The cluster-level asymptotic sequence (`bayeserr watch --method asymptotic`), whose "
                     "guarantee holds as the number of clusters grows, "
                     + ("held its error here" if held else "did **not** hold its error here")
                     + f" ({_percent(asy['rate'].min())}–{_percent(asy['rate'].max())} at a true gap of 0) and settled "
                     + _and(f"{_percent(r['stopped'])} (at {_points(r['gap'])} points)" for _, r in settled.iterrows())
                     + " of data sets.")
        out.append(text)
    wrong = sv[sv["wrong"] > 0]
    if not len(wrong):
        out.append(f"- **No sequence stopped in the wrong direction** in any of the {int(sv['reps'].sum()):,} "
                   f"runs ({len(sv)} cells).")
    else:
        out.append("- **Stopped in the wrong direction** (B declared better): "
                   + "; ".join(f"{round(r['wrong'] * r['reps']):,} of {int(r['reps']):,} data sets at "
                               f"{_points(r['gap'])} points ({r['procedure']}, "
                               f"{'no clusters' if r['clusters'] == 'none' else 'clusters'})"
                               for _, r in wrong.iterrows())
                   + f"; none in the other {len(sv) - len(wrong)} cells.")
    return out


def sequential_section(df, command: str) -> list[str]:
    """The section of ``docs/calibration.md`` as Markdown lines, between
    :data:`SECTION_START` and :data:`SECTION_END`."""
    first = df.iloc[0]
    level = float(first["level"])
    reps = int(_errors(df)["reps"].min()) if len(_errors(df)) else int(df["reps"].min())
    saved_reps = int(_saved(df)["reps"].min()) if len(_saved(df)) else 0
    alpha = 1 - level
    sizes_text = ", ".join(str(s) for s in SWEBENCH_SIZES)
    gaps = sorted({float(g) for g in _saved(df)["gap"]})
    lines = [
        SECTION_START,
        "## Anytime-valid confidence sequences: error over every look, and questions saved",
        "",
        "Does `bayeserr watch` keep its promise when the user looks after every answer "
        "(`bayeserr.lab.sequential`; `docs/methods.md` §3.13)? Each data set is one eval of a candidate A and "
        f"a baseline B answering the same {_n(N_MAX)} questions one after another, with 0/1 answers: the models "
        f"disagree on {_nominal(DISAGREE)} of questions, A alone is right on (disagreement + δ)/2 of them and B "
        f"alone on (disagreement − δ)/2, and where they agree both are right with probability {BOTH_RIGHT:.3f}, so "
        f"each scores {ACCURACY:g} when δ = 0. With clusters, SWE-bench Verified's {len(SWEBENCH_SIZES)} repository "
        f"sizes ({sizes_text}) each taken {REPEAT} times: {len(SIZES)} clusters, {_n(N_MAX)} questions, arriving "
        "whole in a random order in each data set; each cluster moves the both-right rate by an effect of sd "
        f"{TAU_LEVEL:g} and δ by one of sd {TAU_DIFF:g} (normal, clipped symmetrically), so the true A − B and "
        "A's true mean over the population of clusters are exact. The sequences are the ones `bayeserr watch` "
        f"computes (`paired_cs`, `mean_cs`, level {_nominal(level)}, their defaults): per question without "
        "clusters, per cluster with them (a look as each cluster completes; the betting sequence's largest "
        f"cluster size, {max(SIZES)}, fixed before the run). Their intervals are running intersections, so a "
        "value once excluded stays excluded: \"ever excludes over n = "
        f"{FIRST_LOOK}…{_n(N_MAX)}\" is the same as at the last look. Naive peeking: the fixed-n "
        f"{_nominal(level)} test after every {PEEK_EVERY} questions, stopping at the first rejection: the z test "
        "with the SE (M1) on the differences (on A's scores for the mean); with clusters the test the report "
        "runs, the CR2 SE with t on the Bell–McCaffrey df over the clusters begun so far (no test while only one "
        "has), and the plain z that ignores the clusters. The questions-saved study runs the settle rule (stop "
        f"when the sequence of A − B excludes 0) at true gaps of {', '.join(f'{g:g}' for g in gaps)} with at "
        f"most {_n(N_MAX)} questions (a run that never stops counts {_n(N_MAX)}), against the fixed-n paired "
        f"design with {round(100 * POWER):d}% power at the gap: (M9), `n_required` with ω² = disagreement − gap², "
        f"times the design effect 1 + (m_eff − 1)·ICC with clusters (m_eff = Σn_c²/n = {effective_size():.1f}, the "
        "ICC of the differences from the clipped effect), whose test (z, or CR2 t) is also run on the first n "
        f"questions of the same data sets. {reps:,} data sets per cell of the error study"
        + (f" and {saved_reps:,} per cell of the questions-saved study" if saved_reps else "")
        + f", ± one Monte Carlo SE (±{100 * math.sqrt(alpha * (1 - alpha) / reps):.2f} points for a rate near "
        f"{_nominal(alpha)}, ±{100 * math.sqrt(0.25 / reps):.2f} near 50%); a rate in **bold** is more than "
        f"{CLEAR_SE} SEs above {_nominal(alpha)}.",
        *findings_head(command, [*error_findings(df), *saved_findings(df)]),
        "",
        f"### Ever excludes the true value, n = {FIRST_LOOK}…{_n(N_MAX)} (%, nominal at most {_nominal(alpha)})",
        "",
        *error_table(df),
        "",
        f"### Mean half-width at n = {_n(N_MAX)} (points)",
        "",
        *width_table(df),
        "",
        f"### Questions to settle a true gap (stop when A − B's sequence excludes 0; at most {_n(N_MAX)})",
        "",
        *saved_table(df),
        SECTION_END,
    ]
    return lines


publish_sequential = publisher('calibration_sequential.csv', sequential_section, SECTION_START, SECTION_END)
