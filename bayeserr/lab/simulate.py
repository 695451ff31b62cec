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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy import special, stats

from ..estimators import cluster_sums, normal_interval, se_bernoulli, se_clt, se_clustered, z_value


@dataclass(frozen=True)
class Design:
    """One cell of a simulation grid."""

    n: int = 100  #: questions
    accuracy: float = 0.7  #: true population accuracy μ (of model A)
    spread: float = 1.0  #: τ, sd of latent question difficulty
    cluster_size: int = 1  #: questions per cluster (1: no clusters)
    icc: float = 0.0  #: latent intra-cluster correlation
    k: int = 1  #: answers per question
    fractional: bool = False
    gap: float = 0.0  #: μ_A − μ_B for two-model designs
    rho: float = 0.5  #: latent correlation of the two models' difficulties

    @property
    def codes(self) -> np.ndarray | None:
        return None if self.cluster_size <= 1 else np.arange(self.n) // self.cluster_size

    @property
    def binary_k1(self) -> bool:
        return not self.fractional and self.k == 1

    def to_dict(self) -> dict:
        return asdict(self)


def _latent(design: Design, reps: int, rng) -> np.ndarray:
    """Standard-normal latent difficulties (reps × n) with the cluster ICC."""
    v = rng.standard_normal((reps, design.n))
    if design.codes is None or design.icc == 0:
        return v
    u = rng.standard_normal((reps, int(design.codes.max()) + 1))[:, design.codes]
    return math.sqrt(design.icc) * u + math.sqrt(1 - design.icc) * v


def _answers(design: Design, mu: float, z: np.ndarray, rng) -> np.ndarray:
    """Scores (reps × n × K): 0/1 answers, or the probabilities when fractional."""
    c = stats.norm.ppf(mu) * math.sqrt(1 + design.spread**2)
    x = special.ndtr(c - design.spread * z)
    if design.fractional:
        return x[..., None]
    return (rng.random(x.shape + (design.k,)) < x[..., None]).astype(float)


def simulate(design: Design, reps: int, seed: int = 0) -> np.ndarray:
    """Replicates of one model's eval: (reps × n × K) scores."""
    rng = np.random.default_rng(seed)
    return _answers(design, design.accuracy, _latent(design, reps, rng), rng)


def simulate_pair(design: Design, reps: int, seed: int = 0):
    """Replicates of models A (accuracy μ) and B (μ − gap) on the same questions."""
    rng = np.random.default_rng(seed)
    z_a = _latent(design, reps, rng)
    z_b = design.rho * z_a + math.sqrt(1 - design.rho**2) * _latent(design, reps, rng)
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
def _unit_totals(answers: np.ndarray, codes):
    """Right answers and answers per unit (cluster, else question): (reps × units)."""
    per_q = answers.sum(axis=2)
    n_q = np.full(per_q.shape, float(answers.shape[2]))
    if codes is None:
        return per_q, n_q
    return cluster_sums(per_q, codes), cluster_sums(n_q, codes)


def intervals(answers: np.ndarray, design: Design, level: float = 0.95, bb_draws: int = 1000,
              seed: int = 0) -> dict:
    """Every interval method of the registry (:mod:`bayeserr.methods`) that
    the lab measures, on every replicate: method -> (reps × 2).

    The replicates form one :class:`~bayeserr.view.ScoreBatch`, so each
    method runs exactly the code the report runs, vectorized over replicates.
    Methods that apply to no replicate are left out.
    """
    from ..bayes.settings import BayesSettings
    from ..methods import lab_methods
    from ..view import ScoreBatch
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


def decisions(a: np.ndarray, b: np.ndarray, design: Design, alpha: float = 0.05, seed: int = 0,
              draws: int = 1000) -> dict:
    """Per replicate: does each test declare a difference?

    Frequentist tests are two-sided at ``alpha`` (entry: +1 A better, −1 B
    better, 0 no decision).  The Bayesian rule is one-sided, as stated: it
    declares "A better" when ``P(A > B) > 0.95`` (Dirichlet 2×2 posterior
    for independent 0/1 questions, else the Bayesian bootstrap over
    clusters/questions), so its false-positive rate is also about 5%.
    """
    from bayeserr.models import paired_dirichlet
    from ..pairs import mcnemar_pvalues
    sa, sb = a.mean(axis=2), b.mean(axis=2)
    d = sa - sb
    diff = d.mean(axis=1)
    crit = z_value(1 - alpha)
    codes = design.codes

    def verdict(se):
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(se > 0, diff / se, 0.0)
        return np.sign(diff) * (np.abs(z) > crit)

    out = {"unpaired": verdict(np.sqrt(se_clt(sa) ** 2 + se_clt(sb) ** 2)), "paired": verdict(se_clt(d))}
    if codes is not None:
        out["clustered_paired"] = verdict(se_clustered(d, codes))
    if design.binary_k1:
        b_only = np.sum((sa == 1) & (sb == 0), axis=1)
        c_only = np.sum((sa == 0) & (sb == 1), axis=1)
        p_exact, _ = mcnemar_pvalues(b_only, c_only)
        out["mcnemar_exact"] = np.sign(b_only - c_only) * (p_exact < alpha)
    if design.binary_k1 and codes is None:
        prob = paired_dirichlet.prob_a_better(b_only, c_only, d.shape[1] - b_only - c_only)
    else:
        prob = _bootstrap_prob_a_better(a, b, codes, seed, draws)
    out["bayes_prob_095"] = (prob > 0.95).astype(float)
    return out


def _bootstrap_prob_a_better(a: np.ndarray, b: np.ndarray, codes, seed: int, draws: int) -> np.ndarray:
    """P(A − B > 0) by the Bayesian bootstrap over clusters (or questions) of
    the paired answer differences, for every replicate."""
    from bayeserr.models.bayesian_bootstrap import distinct_units, grouped_draws
    from ..bayes.pairs import pair_probabilities
    k_a, n_u = _unit_totals(a, codes)
    k_b, _ = _unit_totals(b, codes)
    values, mult = distinct_units(k_a - k_b, n_u)
    out = np.empty(a.shape[0])
    for sl, mean in grouped_draws(values, mult, draws, np.random.default_rng(seed)):
        out[sl] = pair_probabilities(mean.T, rope=0.0)[0]
    return out


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


# ---------------------------------------------------------------- grids
def grid(**axes) -> list[Design]:
    """All combinations of the given Design fields (each a list)."""
    import itertools
    keys = list(axes)
    return [Design(**dict(zip(keys, combo))) for combo in itertools.product(*(axes[k] for k in keys))]


def planned(design: Design, power: float = 0.8, alpha: float = 0.05) -> Design:
    """The design at the n that (M9) plans for ``power`` to detect its gap
    with a paired test, using the design's true ω² (0/1 answers, K = 1)."""
    from ..planning import n_required
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
    correlation ρ² (``design.rho``); ``accuracies`` maps model -> μ."""
    rng = np.random.default_rng(seed)
    shared = _latent(design, reps, rng)
    out = {}
    for name, mu in accuracies.items():
        z = design.rho * shared + math.sqrt(1 - design.rho**2) * _latent(design, reps, rng)
        out[name] = _answers(design, mu, z, rng)
    return out
