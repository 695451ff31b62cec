"""Simulation lab: evals with known truth, to measure what intervals and tests
really do (SPEC §7).

Generative model (vectorized over replicates; one seed fixes everything).
Question i of cluster c has a latent difficulty

    z_i = sqrt(icc) · u_c + sqrt(1 − icc) · v_i,      u, v ~ N(0, 1)

and model j answers it right with probability ``x_{j,i} = Φ(c_j − τ z_{j,i})``,
``c_j = Φ⁻¹(μ_j) sqrt(1 + τ²)``, so that the population accuracy is exactly
``μ_j`` whatever ``τ`` (the spread of question difficulty: 0 makes every
question equally hard).  Each of the K answers is ``Bernoulli(x_{j,i})``; with
``fractional=True`` the score is ``x_{j,i}`` itself (a next-token probability
or judge score, no answer noise).  ``icc`` is the intra-cluster correlation of
the latent difficulty.  For two models, the latent difficulties of A and B are
normal with correlation ``rho`` at both levels, so the models agree on which
questions are hard.

Clusters are either equal (``cluster_size`` questions each) or given
explicitly (``cluster_sizes``, e.g. a real benchmark's).  By default the two
models' latent difficulties are correlated at ``rho`` at both the cluster and
the question level, so the latent *difference* has the same ICC as the
level.  ``icc_diff`` sets the cluster effect on the difference on its own:
with cluster parts ``u_{A,c}, u_{B,c}`` correlated at ``ρ_c`` and question
parts correlated at ``ρ_q``,

    z_{j,i} = sqrt(icc) · u_{j,c} + sqrt(1 − icc) · v_{j,i}
    ρ_c = 1 − icc_diff (1 − ρ) / icc,   ρ_q = 1 − (1 − icc_diff)(1 − ρ) / (1 − icc)

so that the overall latent correlation stays ``ρ`` and the share of
``Var(z_A − z_B)`` that lies between clusters is ``icc_diff`` — a cluster
random effect ``u_{A,c} − u_{B,c}`` on the difference between the models
(one model relatively better on some clusters), on the latent scale.  Each
model's accuracy is unchanged.  :data:`PRESETS` holds the hard cluster
designs of SPEC §7 (few equal clusters, SWE-bench Verified's repository
sizes, one dominant cluster among many).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy import special, stats

from bayeserr.base.errors import InputError, describe
from bayeserr.base.registry import Registry, check_range
from bayeserr.stats.estimators import normal_interval, se_bernoulli
from bayeserr.stats.planning import check_number


def _check_field(name: str, value, low=None, high=None, **bounds):
    """One numeric field or argument of the lab: a number (not text, None or a
    bool: :func:`~bayeserr.stats.planning.check_number`) in the range
    (:func:`~bayeserr.base.registry.check_range`).  Returns the checked value."""
    check_number(name, value)
    return check_range(name, value, low, high, **bounds)


def check_run(design, reps, seed) -> tuple[int, int]:
    """The arguments of a simulation run: a :class:`Design`, ``reps`` ≥ 1
    replicates and a seed ≥ 0 (whole numbers).  Returns ``(reps, seed)``."""
    if not isinstance(design, Design):
        raise InputError(f"the simulation lab takes a Design, e.g. Design(n=200, accuracy=0.7) or "
                         f"preset('swebench'); got {describe(design)}.")
    reps = _check_field("reps (replicates)", reps, 1, integer=True)
    seed = _check_field("seed", seed, 0, integer=True)
    return reps, seed


@dataclass(frozen=True)
class Design:
    """One cell of a simulation grid."""

    n: int = 100  #: questions (set to sum(cluster_sizes) when those are given)
    accuracy: float = 0.7  #: true population accuracy μ (of model A)
    spread: float = 1.0  #: τ, sd of latent question difficulty
    cluster_size: int = 1  #: questions per cluster (1: no clusters)
    icc: float = 0.0  #: latent intra-cluster correlation
    k: int = 1  #: answers per question
    fractional: bool = False
    gap: float = 0.0  #: μ_A − μ_B for two-model designs
    rho: float = 0.5  #: latent correlation of the two models' difficulties
    cluster_sizes: tuple | None = None  #: explicit (unequal) cluster sizes, instead of cluster_size
    icc_diff: float | None = None  #: latent ICC of the A − B difference (None: the same as icc)
    name: str = ""  #: a label for tables (presets)

    def __post_init__(self):
        """Every field checked once (an :class:`InputError` naming the field,
        the allowed range and what was given)."""
        for name, low, high, bounds in (("n", 2, None, dict(integer=True)),  # an SE needs two questions
                                        ("accuracy", 0, 1, dict(low_open=True, high_open=True)),
                                        ("spread", 0, None, {}),
                                        ("cluster_size", 1, None, dict(integer=True)),
                                        ("icc", 0, 1, dict(high_open=True)),
                                        ("k", 1, None, dict(integer=True)),
                                        ("gap", -1, 1, dict(low_open=True, high_open=True)),
                                        ("rho", -1, 1, {})):
            _check_field(name, getattr(self, name), low, high, **bounds)
        if not 0 < self.accuracy - self.gap < 1:
            raise InputError(f"accuracy − gap = {self.accuracy - self.gap:g} is model B's accuracy and must "
                             f"lie in (0, 1) (accuracy {self.accuracy:g}, gap {self.gap:g}): choose a "
                             "gap that keeps it there.")
        if self.cluster_sizes is not None:
            bad = InputError("cluster_sizes takes the questions in each cluster as positive whole numbers, "
                             f"e.g. cluster_sizes=(231, 75, 44); got {describe(self.cluster_sizes)}.")
            if isinstance(self.cluster_sizes, (str, bytes)) or not hasattr(self.cluster_sizes, "__iter__"):
                raise bad
            sizes = tuple(self.cluster_sizes)
            if not sizes or any(isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer))
                                or m < 1 for m in sizes):
                raise bad
            if self.cluster_size != 1:
                raise InputError(f"give cluster_size (equal clusters) or cluster_sizes (unequal ones), not "
                                 f"both (got cluster_size={self.cluster_size!r}); drop cluster_size.")
            object.__setattr__(self, "cluster_sizes", tuple(int(m) for m in sizes))
            object.__setattr__(self, "n", sum(self.cluster_sizes))
        if self.cluster_sizes is None and self.cluster_size > 1 and self.n < 2 * self.cluster_size:
            raise InputError(f"n = {self.n} questions in clusters of {self.cluster_size} make fewer than two "
                             "clusters, and clustered inference needs at least two: give n at least "
                             f"{2 * self.cluster_size} or a smaller cluster size.")
        if self.icc_diff is not None:
            _check_field("icc_diff", self.icc_diff)
            self.level_correlations()  # validates

    @property
    def codes(self) -> np.ndarray | None:
        if self.cluster_sizes is not None:
            return np.repeat(np.arange(len(self.cluster_sizes)), self.cluster_sizes)
        return None if self.cluster_size <= 1 else np.arange(self.n) // self.cluster_size

    @property
    def sizes(self) -> np.ndarray | None:
        """Questions per cluster, or None without clusters."""
        codes = self.codes
        return None if codes is None else np.bincount(codes)

    @property
    def n_clusters(self) -> int | None:
        codes = self.codes
        return None if codes is None else int(codes.max()) + 1

    @property
    def binary_k1(self) -> bool:
        return not self.fractional and self.k == 1

    def level_correlations(self) -> tuple[float, float]:
        """(ρ_c, ρ_q): latent correlation of the two models' cluster parts and
        question parts (see the module docstring).  Without ``icc_diff`` both
        are ``rho``."""
        if self.icc_diff is None:
            return self.rho, self.rho
        if not 0 <= self.icc_diff < 1:
            raise InputError(f"icc_diff must be in [0, 1) (got {self.icc_diff})")
        between, within = self.icc_diff * (1 - self.rho), (1 - self.icc_diff) * (1 - self.rho)
        rho_c = 1.0 if between == 0 else (1 - between / self.icc if self.icc > 0 else -math.inf)
        rho_q = 1 - within / (1 - self.icc)
        if not (-1 <= rho_c <= 1 and -1 <= rho_q <= 1):
            raise InputError(f"icc_diff = {self.icc_diff:g} is not reachable with icc = {self.icc:g} and "
                             f"rho = {self.rho:g}: it needs icc ≥ icc_diff (1 − rho) / 2 "
                             f"= {between / 2:g} and 1 − icc ≥ (1 − icc_diff)(1 − rho) / 2.")
        return rho_c, rho_q

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cluster_sizes"] = compact_sizes(self.cluster_sizes)
        return d


def compact_sizes(sizes) -> str | None:
    """Cluster sizes as text, runs written ``size×count``: "231,75,22×2,1"."""
    if sizes is None:
        return None
    out, i = [], 0
    while i < len(sizes):
        j = i
        while j < len(sizes) and sizes[j] == sizes[i]:
            j += 1
        out.append(f"{sizes[i]}" + (f"×{j - i}" if j - i > 1 else ""))
        i = j
    return ",".join(out)


#: SWE-bench Verified: questions per source repository (500 questions, 12 repositories).
SWE_BENCH_VERIFIED_SIZES = (231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1)


def _split(total: int, parts: int) -> tuple:
    """``total`` questions in ``parts`` clusters as equal as can be (larger first)."""
    q, r = divmod(total, parts)
    return (q + 1,) * r + (q,) * (parts - r)


def _presets() -> dict:
    out = {f"equal_{c}": Design(n=600, cluster_size=600 // c, name=f"{c} equal clusters")
           for c in (2, 3, 5, 10, 20, 50, 200)}
    out["swebench"] = Design(cluster_sizes=SWE_BENCH_VERIFIED_SIZES, name="SWE-bench Verified sizes")
    out["dominant"] = Design(cluster_sizes=(500,) + _split(500, 199), name="1 dominant + 199 small")
    return out


#: Cluster structures of the few-cluster study (SPEC §7): equal sizes with C =
#: 2…200 (600 questions), SWE-bench Verified's repository sizes (500
#: questions, C = 12), and one cluster of half the questions among 199 small
#: ones (1,000 questions).  Only the cluster fields are set; see
#: :func:`fewcluster_designs` for the rest.
PRESETS = Registry("simulation preset (cluster structure)", None, _presets())


def preset(name: str, **fields) -> Design:
    """A preset cluster structure with other Design fields set; an unknown
    preset or field is an :class:`InputError` naming the choices."""
    from dataclasses import fields as design_fields

    from bayeserr.base.errors import suggest
    design = PRESETS.get_checked(name)
    known = [f.name for f in design_fields(Design)]
    for field in fields:
        if field not in known:
            raise InputError(f"preset: '{field}' is not a Design field.{suggest(field, known)} "
                             f"Fields: {', '.join(known)}.")
    return replace(design, **fields)


def _latent(design: Design, reps: int, rng) -> np.ndarray:
    """Standard-normal latent difficulties (reps × n) with the cluster ICC."""
    v = rng.standard_normal((reps, design.n))
    if design.codes is None or design.icc == 0:
        return v
    u = rng.standard_normal((reps, int(design.codes.max()) + 1))[:, design.codes]
    return math.sqrt(design.icc) * u + math.sqrt(1 - design.icc) * v


def _latent_pair(design: Design, reps: int, rng):
    """Latent difficulties of A and B with correlations ρ_c (cluster parts)
    and ρ_q (question parts): the ``icc_diff`` model of the module docstring."""
    rho_c, rho_q = design.level_correlations()

    def correlated(shape, r):
        x, y = rng.standard_normal(shape), rng.standard_normal(shape)
        return x, r * x + math.sqrt(max(1 - r * r, 0.0)) * y

    v_a, v_b = correlated((reps, design.n), rho_q)
    if design.codes is None or design.icc == 0:
        return v_a, v_b
    u_a, u_b = correlated((reps, design.n_clusters), rho_c)
    w, s = math.sqrt(design.icc), math.sqrt(1 - design.icc)
    return w * u_a[:, design.codes] + s * v_a, w * u_b[:, design.codes] + s * v_b


def _answers(design: Design, mu: float, z: np.ndarray, rng) -> np.ndarray:
    """Scores (reps × n × K): 0/1 answers, or the probabilities when fractional."""
    c = stats.norm.ppf(mu) * math.sqrt(1 + design.spread**2)
    x = special.ndtr(c - design.spread * z)
    if design.fractional:
        return x[..., None]
    return (rng.random(x.shape + (design.k,)) < x[..., None]).astype(float)


def simulate(design: Design, reps: int, seed: int = 0) -> np.ndarray:
    """Replicates of one model's eval: (reps × n × K) scores."""
    reps, seed = check_run(design, reps, seed)
    rng = np.random.default_rng(seed)
    return _answers(design, design.accuracy, _latent(design, reps, rng), rng)


def simulate_pair(design: Design, reps: int, seed: int = 0):
    """Replicates of models A (accuracy μ) and B (μ − gap) on the same questions."""
    reps, seed = check_run(design, reps, seed)
    rng = np.random.default_rng(seed)
    if design.icc_diff is None:
        z_a = _latent(design, reps, rng)
        z_b = design.rho * z_a + math.sqrt(1 - design.rho**2) * _latent(design, reps, rng)
    else:
        z_a, z_b = _latent_pair(design, reps, rng)
    return (_answers(design, design.accuracy, z_a, rng),
            _answers(design, design.accuracy - design.gap, z_b, rng))


def to_frame(answers_by_model: dict, design: Design, replicate: int = 0):
    """One replicate as a long results table that :func:`bayeserr.load` reads."""
    import pandas as pd
    rows = []
    for model, answers in answers_by_model.items():
        a = answers[replicate]
        q, s = np.meshgrid(np.arange(a.shape[0]), np.arange(a.shape[1]), indexing="ij")
        frame = {"model": model, "question_id": q.ravel(), "sample": s.ravel(), "score": a.ravel()}
        if design.codes is not None:
            frame["cluster_id"] = design.codes[q.ravel()]
        rows.append(pd.DataFrame(frame))
    return pd.concat(rows, ignore_index=True)


# ---------------------------------------------------------------- true values
def true_omega2(design: Design) -> float:
    """ω² = Var(d) of the per-question difference for a 0/1, K = 1 pair design.

    ``P(both right)`` is a bivariate normal probability: the latent scores
    ``τ z_j + e_j`` have correlation ``τ² ρ / (1 + τ²)``.
    """
    mu_a, mu_b = design.accuracy, design.accuracy - design.gap
    r = design.spread**2 * design.rho / (1 + design.spread**2)
    both = stats.multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf(
        [stats.norm.ppf(mu_a), stats.norm.ppf(mu_b)])
    cov = both - mu_a * mu_b
    return mu_a * (1 - mu_a) + mu_b * (1 - mu_b) - 2 * cov


def binary_correlation(design: Design) -> float:
    """Correlation of the two models' 0/1 answers to a question (K = 1)."""
    mu_a, mu_b = design.accuracy, design.accuracy - design.gap
    var_a, var_b = mu_a * (1 - mu_a), mu_b * (1 - mu_b)
    cov = (var_a + var_b - true_omega2(design)) / 2
    return cov / math.sqrt(var_a * var_b)


def rho_for_binary_correlation(design: Design, target: float) -> float:
    """The latent ρ that gives 0/1 answers the correlation ``target``."""
    from scipy.optimize import brentq
    return brentq(lambda r: binary_correlation(replace(design, rho=r)) - target, 0.0, 0.999999)


# ---------------------------------------------------------------- intervals
def intervals(answers: np.ndarray, design: Design, level: float = 0.95, bb_draws: int = 1000,
              seed: int = 0) -> dict:
    """Every interval method of the registry (:mod:`bayeserr.registries.methods`) that
    the lab measures, on every replicate: method -> (reps × 2).

    The replicates form one :class:`~bayeserr.stats.view.ScoreBatch`, so each
    method runs exactly the code the report runs, vectorized over replicates.
    Methods that apply to no replicate are left out.
    """
    from bayeserr.bayes.settings import BayesSettings
    from bayeserr.registries.methods import lab_methods
    from bayeserr.stats.view import ScoreBatch
    batch = ScoreBatch(answers.mean(axis=2), answers, design.codes,
                       bayes=BayesSettings(draws=bb_draws, seed=seed))
    out = {}
    for method in lab_methods():
        iv = method(batch, level)
        if np.isfinite(iv).any():
            out[method.key] = iv
    return out


@dataclass(frozen=True)
class CoverageCell:
    design: Design
    method: str
    reps: int  #: replicates with an interval (a method may be undefined, e.g. CR1 with one cluster)
    coverage: float
    mc_se: float  #: Monte Carlo SE of the coverage, sqrt(c(1 − c)/R)
    mean_width: float
    level: float

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.design.to_dict().items() if k not in ("gap", "rho")}
        return {**d, "method": self.method, "reps": self.reps, "level": self.level,
                "coverage": self.coverage, "mc_se": self.mc_se, "mean_width": self.mean_width}


def coverage(design: Design, reps: int, level: float = 0.95, seed: int = 0) -> list[CoverageCell]:
    """Empirical coverage of the true accuracy by every applicable method."""
    ivs = intervals(simulate(design, reps, seed), design, level, seed=seed + 1)
    truth = design.accuracy
    cells = []
    for method, iv in ivs.items():
        lo, hi = iv[:, 0], iv[:, 1]
        ok = np.isfinite(lo) & np.isfinite(hi)
        if not ok.any():
            continue
        lo, hi = lo[ok], hi[ok]
        c = float(np.mean((lo <= truth) & (truth <= hi)))
        cells.append(CoverageCell(design, method, int(ok.sum()), c,
                                  math.sqrt(max(c * (1 - c), 1e-12) / ok.sum()), float(np.mean(hi - lo)), level))
    return cells


# ---------------------------------------------------------------- tests of A − B
def pair_batch(a: np.ndarray, b: np.ndarray, design: Design, seed: int = 0, draws: int = 1000,
               wild_draws: int = 999):
    """The replicates of a pair as a :class:`~bayeserr.registries.pairtests.PairBatch`
    (the region of practical equivalence is the report's default)."""
    from bayeserr.registries.pairtests import PairBatch
    return PairBatch(a, b, design.codes, binary=design.binary_k1, seed=seed, draws=draws,
                     wild_draws=wild_draws)


def decisions(a: np.ndarray, b: np.ndarray, design: Design, alpha: float = 0.05, seed: int = 0,
              draws: int = 1000, wild_draws: int = 999, batch=None) -> dict:
    """Per replicate: does each test of the registry (:mod:`bayeserr.registries.pairtests`)
    declare a difference?  test -> (reps,) with +1 A better, −1 B better, 0
    no decision.

    Frequentist tests are two-sided at ``alpha``.  The Bayesian rules use
    ``P(A > B)`` as the report computes it: with clusters the model with a
    cluster random effect on the difference (``models/paired_clustered.py``),
    without them the Dirichlet 2×2 posterior for 0/1 answers (K = 1), else
    the Bayesian bootstrap over questions (``draws`` draws).
    ``bayes_prob_095`` is one-sided ("A better" when P > 0.95, false-positive
    rate about 5%); ``bayes_prob_0975`` (no clusters) and
    ``bayes_cluster_0975`` (clusters) are two-sided (a difference when
    max(P, 1 − P) > 0.975); ``bayes_bootstrap_0975`` is the same rule with
    the old Bayesian bootstrap over clusters, kept for contrast.
    The wild cluster bootstrap uses ``wild_draws`` weight vectors (all of
    them when there are fewer patterns).  Tests that do not apply to the
    design (clustered tests without clusters, McNemar without 0/1 answers)
    are left out.
    """
    from bayeserr.registries.pairtests import TESTS
    batch = batch or pair_batch(a, b, design, seed, draws, wild_draws)
    return {t.key: t.decide(batch, alpha) for t in TESTS.values() if t.applies(batch)}


def pair_intervals(a: np.ndarray, b: np.ndarray, design: Design, level: float = 0.95, seed: int = 0,
                   draws: int = 1000, wild_draws: int = 999, batch=None, skip=()) -> dict:
    """Every interval for A − B that goes with a test of the registry, on every
    replicate: test -> (reps × 2).  ``skip``: tests whose interval is not
    wanted (the wild bootstrap's, found by test inversion, is the costly one)."""
    from bayeserr.registries.pairtests import TESTS
    batch = batch or pair_batch(a, b, design, seed, draws, wild_draws)
    return {t.key: t.interval(batch, level) for t in TESTS.values()
            if t.interval is not None and t.key not in skip and t.applies(batch)}


@dataclass(frozen=True)
class RateCell:
    design: Design
    test: str
    reps: int
    rate: float  #: share of replicates declaring a difference (FPR at gap 0, power otherwise)
    mc_se: float
    alpha: float

    def to_dict(self) -> dict:
        return {**self.design.to_dict(), "test": self.test, "reps": self.reps, "alpha": self.alpha,
                "rate": self.rate, "mc_se": self.mc_se}


def error_rates(design: Design, reps: int, alpha: float = 0.05, seed: int = 0) -> list[RateCell]:
    """False-positive rate (gap 0: any declared difference) or detection rate
    (gap > 0: "A better" declared) of every applicable test."""
    a, b = simulate_pair(design, reps, seed)
    out = []
    for test, verdict in decisions(a, b, design, alpha, seed + 1).items():
        hit = verdict != 0 if design.gap == 0 else verdict > 0
        r = float(np.mean(hit))
        out.append(RateCell(design, test, reps, r, math.sqrt(max(r * (1 - r), 1e-12) / reps), alpha))
    return out


@dataclass(frozen=True)
class PairCell:
    """One test on one pair design: its decision rate and, where the test has
    an interval, how often that interval covers the true gap."""

    design: Design
    test: str
    reps: int
    rate: float  #: share declaring a difference (gap 0: false-positive rate; else "A better")
    rate_se: float  #: Monte Carlo SE of the rate, sqrt(r(1 − r)/R)
    coverage: float  #: share of intervals containing the true gap μ_A − μ_B (NaN: no interval)
    coverage_se: float
    mean_width: float  #: inf when some interval is unbounded (possible for the wild bootstrap)
    design_effect: float  #: Var(d̄) over replicates / mean SE_paired²: how much clustering inflates Var(d̄)
    alpha: float

    def to_dict(self) -> dict:
        from bayeserr.stats.fewclusters import bm_df, effective_clusters
        sizes = self.design.sizes
        c_eff, df = (None, None) if sizes is None else (float(effective_clusters(sizes)), float(bm_df(sizes)))
        return {**self.design.to_dict(), "clusters": self.design.n_clusters, "effective_clusters": c_eff,
                "bm_df": df, "test": self.test,
                "reps": self.reps, "alpha": self.alpha, "rate": self.rate, "rate_se": self.rate_se,
                "coverage": self.coverage, "coverage_se": self.coverage_se, "mean_width": self.mean_width,
                "design_effect": self.design_effect}


def _rate_se(r: float, reps: int) -> float:
    return math.sqrt(max(r * (1 - r), 1e-12) / reps)


def pair_calibration(design: Design, reps: int, alpha: float = 0.05, seed: int = 0, wild_draws: int = 999,
                     wild_interval: bool = True) -> list[PairCell]:
    """Decision rate and interval coverage of every test of A − B on one
    simulation of ``design`` (the few-cluster study, SPEC §7).

    At ``gap = 0`` the rate is the false-positive rate (any declared
    difference); otherwise the detection rate ("A better" declared).
    Coverage is of the true gap by the nominal ``1 − alpha`` interval of each
    test that has one (at gap 0 it equals one minus the false-positive rate
    for the z and t tests).  ``wild_interval=False`` skips the wild
    bootstrap's interval (test inversion: about 25 bootstrap evaluations).
    """
    a, b = simulate_pair(design, reps, seed)
    batch = pair_batch(a, b, design, seed + 1, wild_draws=wild_draws)
    verdicts = decisions(a, b, design, alpha, batch=batch)
    ivs = pair_intervals(a, b, design, 1 - alpha, batch=batch, skip=() if wild_interval else ("wild_bootstrap",))
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = float(np.var(batch.diff, ddof=1) / np.mean(batch.se_paired ** 2))
    out = []
    for test, verdict in verdicts.items():
        hit = verdict != 0 if design.gap == 0 else verdict > 0
        r = float(np.mean(hit))
        cov = cov_se = width = math.nan
        if test in ivs:
            lo, hi = ivs[test][:, 0], ivs[test][:, 1]
            ok = ~(np.isnan(lo) | np.isnan(hi))
            if ok.any():
                cov = float(np.mean((lo[ok] <= design.gap) & (design.gap <= hi[ok])))
                cov_se = _rate_se(cov, int(ok.sum()))
                width = float(np.mean(hi[ok] - lo[ok]))
        out.append(PairCell(design, test, reps, r, _rate_se(r, reps), cov, cov_se, width, deff, alpha))
    return out


def fewcluster_designs(presets=None, icc_diffs=(0.0, 0.02, 0.05, 0.1), gap: float = 0.0,
                       accuracy: float = 0.6, icc: float = 0.2, rho: float = 0.7, spread: float = 1.0):
    """The few-cluster grid: every preset (default all of :data:`PRESETS`) ×
    cluster effect on the difference ``icc_diff``, two 0/1 models of accuracy
    ``accuracy`` and ``accuracy − gap`` with level ICC ``icc`` and latent
    correlation ``rho``."""
    names = list(PRESETS) if presets is None else list(presets)
    return [preset(p, accuracy=accuracy, gap=gap, icc=icc, rho=rho, spread=spread, icc_diff=float(v))
            for p in names for v in icc_diffs]


# ---------------------------------------------------------------- the Bayesian pair model, truth from its prior
#: Bins of P(A > B) for the calibration of the Bayesian pair model (the outer
#: two are the two-sided 0.975 rule's decisions).
PRIOR_BINS = (0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1.0)


def draw_pair_prior(design: Design, reps: int, rng, delta_range: float = 0.1):
    """Data sets drawn from the pair model with a cluster random effect on
    the difference (``models/paired_clustered.py``, §5.3) with the truth from
    the model's own prior, on the design's cluster sizes:

        ρ ~ Half-t_ν(0, s) (PRIOR_DF, PRIOR_SCALE),  σ² ~ Scaled-Inv-χ²(ν0, s0²) (SIGMA_PRIOR),
        Δ ~ Uniform(−delta_range, delta_range),  Δ_c ~ N(Δ, ρ²σ²),  d_i ~ N(Δ_c, σ²).

    Δ has a flat prior in the model; a uniform stands in for it (see
    :func:`pair_prior_calibration`).  Returns ``(Δ, D, Q)``: the true Δ
    (reps,) and the cluster sums of d and of d² (reps, C).
    """
    from bayeserr.models import paired_clustered as pc
    from bayeserr.stats.estimators import cluster_sums
    codes = design.codes
    if codes is None:
        raise InputError("the Bayesian pair model's prior calibration needs clusters: give the design "
                         "cluster_size > 1 or cluster_sizes, e.g. preset('swebench').")
    nu0, s0 = pc.SIGMA_PRIOR
    rho = np.abs(stats.t.rvs(pc.PRIOR_DF, size=reps, random_state=rng)) * pc.PRIOR_SCALE
    sigma = np.sqrt(nu0 * s0**2 / rng.chisquare(nu0, reps))
    delta = rng.uniform(-delta_range, delta_range, reps)
    delta_c = delta[:, None] + (rho * sigma)[:, None] * rng.standard_normal((reps, design.n_clusters))
    d = delta_c[:, codes] + sigma[:, None] * rng.standard_normal((reps, design.n))
    return delta, cluster_sums(d, codes), cluster_sums(d * d, codes)


@dataclass(frozen=True)
class PriorCell:
    """The Bayesian pair model on data drawn from its own prior: one bin of
    P(A > B) of one design, with the design's interval coverage repeated on
    every bin's row."""

    design: Design
    reps: int
    level: float
    coverage: float  #: share of credible intervals containing the true Δ (all replicates)
    coverage_se: float
    below: float  #: share of replicates whose interval lies above Δ (Δ below it): nominal (1 − level)/2
    above: float  #: share whose interval lies below Δ
    kept: int  #: replicates whose posterior has ≥ keep_mass inside ±delta_range (those binned)
    delta_range: float
    bin_lo: float
    bin_hi: float
    count: int  #: kept replicates with P(A > B) in [bin_lo, bin_hi)
    mean_p: float  #: their mean P(A > B)
    freq: float  #: the share of them whose true Δ > 0: ≈ mean_p when P(A > B) is calibrated
    freq_se: float  #: Monte Carlo SE of freq, sqrt(m(1 − m)/count) with m = mean_p

    def to_dict(self) -> dict:
        from bayeserr.stats.fewclusters import effective_clusters
        d = {k: self.design.to_dict()[k] for k in ("name", "n", "cluster_sizes", "cluster_size")}
        return {**d, "clusters": self.design.n_clusters,
                "effective_clusters": float(effective_clusters(self.design.sizes)),
                "reps": self.reps, "level": self.level, "coverage": self.coverage,
                "coverage_se": self.coverage_se, "below": self.below, "above": self.above,
                "kept": self.kept, "delta_range": self.delta_range, "bin_lo": self.bin_lo,
                "bin_hi": self.bin_hi, "count": self.count, "mean_p": self.mean_p, "freq": self.freq,
                "freq_se": self.freq_se}


def pair_prior_calibration(design: Design, reps: int, seed: int = 0, level: float = 0.95,
                           delta_range: float = 0.1, keep_mass: float = 0.999,
                           bins=PRIOR_BINS) -> list[PriorCell]:
    """Calibration of the Bayesian pair model when the truth is drawn from its
    prior (:func:`draw_pair_prior`), fitted by the function the report uses
    (:func:`bayeserr.models.paired_clustered.pair_probabilities` on the
    cluster sums of d and d²).

    *Coverage* of the equal-tailed credible interval of Δ, over all
    replicates: exact whatever the distribution of Δ, because the posterior
    of Δ − Δ_true does not depend on Δ_true under the flat prior (the model's
    docstring).  *Calibration of P(A > B)*: replicates binned by P(A > B),
    and in each bin the share whose true Δ is positive.  That needs a proper
    prior for Δ: with Δ ~ Uniform(±delta_range) the exact posterior is the
    model's (flat-prior) posterior cut to ±delta_range, so on the replicates
    whose model posterior puts at least ``keep_mass`` inside ±delta_range
    (a condition on the data alone, so the binned shares stay calibrated)
    the two P(A > B) differ by at most ``1 − keep_mass``; only those are
    binned.  One row per bin.
    """
    from bayeserr.models import paired_clustered as pc
    rng = np.random.default_rng(seed)
    delta, D, Q = draw_pair_prior(design, reps, rng, delta_range)
    # the rope is ±delta_range: prob_tie is then the posterior mass inside the prior's range
    post = pc.pair_probabilities(D, design.sizes, delta_range, sum_sq=Q, level=level)
    lo, hi = post.interval[:, 0], post.interval[:, 1]
    cov = float(np.mean((lo <= delta) & (delta <= hi)))
    below, above = float(np.mean(delta < lo)), float(np.mean(delta > hi))
    keep = post.prob_tie >= keep_mass
    p, truth = post.prob_a_better[keep], delta[keep] > 0
    cells = []
    edges = np.asarray(bins, float)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
    for k in range(len(edges) - 1):
        sel = which == k
        m = int(sel.sum())
        mean_p = float(p[sel].mean()) if m else math.nan
        freq = float(truth[sel].mean()) if m else math.nan
        se = math.sqrt(max(mean_p * (1 - mean_p), 1e-12) / m) if m else math.nan
        cells.append(PriorCell(design, reps, level, cov, _rate_se(cov, reps), below, above, int(keep.sum()),
                               delta_range, float(edges[k]), float(edges[k + 1]), m, mean_p, freq, se))
    return cells


# ---------------------------------------------------------------- grids
def grid(**axes) -> list[Design]:
    """All combinations of the given Design fields (each a list)."""
    import itertools
    keys = list(axes)
    return [Design(**dict(zip(keys, combo))) for combo in itertools.product(*(axes[k] for k in keys))]


def planned(design: Design, power: float = 0.8, alpha: float = 0.05) -> Design:
    """The design at the n that (M9) plans for ``power`` to detect its gap
    with a paired test, using the design's true ω² (0/1 answers, K = 1)."""
    from bayeserr.stats.planning import n_required
    n = math.ceil(n_required(design.gap, true_omega2(design), alpha=alpha, power=power))
    return replace(design, n=n)


def prior_coverage(n: int, reps: int, level: float = 0.95, prior=(1.0, 1.0), seed: int = 0) -> dict:
    """Coverage when the true accuracy is itself drawn from the Beta prior
    (independent 0/1 questions): the Bayesian calibration check."""
    from bayeserr.models.beta_binomial import beta_intervals
    rng = np.random.default_rng(seed)
    p = rng.beta(*prior, reps)
    k = rng.binomial(n, p)
    mean = k / n
    ivs = {"clt": normal_interval(mean, se_bernoulli(mean, n) * math.sqrt(n / (n - 1)), level),
           "beta_posterior": beta_intervals(k, n, level, prior)}
    return {m: float(np.mean((iv[:, 0] <= p) & (p <= iv[:, 1]))) for m, iv in ivs.items()}


def simulate_models(design: Design, accuracies: dict, reps: int = 1, seed: int = 0) -> dict:
    """Many models on the same questions: each model's latent difficulty is
    ``ρ · (shared) + sqrt(1 − ρ²) · (own)``, so every pair has latent
    correlation ρ² (``design.rho``) at both levels (``icc_diff`` is not used
    here); ``accuracies`` maps model -> μ."""
    reps, seed = check_run(design, reps, seed)
    for name, mu in accuracies.items():
        _check_field(f"the accuracy of {name!r}", mu, 0, 1, low_open=True, high_open=True)
    rng = np.random.default_rng(seed)
    shared = _latent(design, reps, rng)
    out = {}
    for name, mu in accuracies.items():
        z = design.rho * shared + math.sqrt(1 - design.rho**2) * _latent(design, reps, rng)
        out[name] = _answers(design, mu, z, rng)
    return out
