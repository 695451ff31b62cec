"""The confidence set for the best model and each model's own rank interval,
from one joint law of the studentized differences (``docs/methods.md`` §3.10).

**The set of models tied with the best** answers one question — *which model
is the best?* — with the family that question needs (Gupta 1965's subset
selection; the ``τ = 1`` set of Mogstad, Romano, Shaikh & Wilhelm 2024 built
from one-sided comparisons).  Candidate ``j`` is tested against the
hypothesis "j is the best", ``H_j: θ_j ≥ θ_k`` for every ``k``, with the
statistic ``max_k z_kj`` (``z_kj`` the one-sided normal equivalent of the
pair's own headline t of ``θ_k − θ_j``) and the critical value of that
maximum at the least favourable point of ``H_j`` (every ``θ_k = θ_j``).  The
set keeps every candidate not rejected.  Only the true best's test matters
for the guarantee, so *the best model is in the set with probability at least
``level``* — the M − 1 one-sided comparisons of one candidate are the whole
family, not the M(M − 1)/2 two-sided pairs of the table.

**A model's own rank interval** (marginal: it holds for that model) tests its
M − 1 pairs in both directions, 2(M − 1) one-sided hypotheses, by the
Romano–Wolf step-down over the same joint law; its lower bound counts the
models declared better, its upper bound ``M −`` the models declared worse
(Mogstad et al. 2024, Theorem 3.1).  A model in the set keeps rank 1 in its
interval (widened where the set's two-step test keeps a model the two-sided
step-down places lower; widening keeps the coverage), so the two never
contradict each other.

**The joint law** of the differences is the multivariate normal whose pair
variances are the pairs' question-level variances ``SE_kl²`` (M7): only its
correlations are used (each draw is standardized), and the clustered (CR2)
covariance of M means has rank below the number of clusters, so with five
clusters its correlations would make 24 comparisons behave like four and the
set too small.
By polarization ``Cov(d_kj, d_lj) = (SE_kj² + SE_lj² − SE_kl²)/2``,
so a covariance of the means with exactly those pair variances is the
double-centred ``Σ = −½ J V J`` (``V_kl = SE_kl²``, ``J = I − 11ᵀ/M``; classical
scaling), with negative eigenvalues clipped.  It needs the pairs' statistics
only, so every engine (memory, stream, dask) takes the same path; each pair's observed t on its
own Bell–McCaffrey df is put on the normal scale *exactly*
(``z = Φ⁻¹(F_t(t; ν))``), so that every pair keeps its own small-sample
reference while the dependence between pairs (they share the candidate and
the clusters) comes from the covariance — a Gaussian copula.  The best-set lab
(``bayeserr.lab.best``, ``docs/calibration.md``) compares it with the
joint wild cluster bootstrap, a shared-scale multivariate t and Bonferroni at
few, unequal clusters: the wild bootstrap's restricted draws put every
strongly different pair at its extreme at once when the clusters are few, so
its maximum is huge and its set holds most of the leaderboard.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: normal draws of the joint law; the Monte Carlo SE of a p near 0.05 is 0.003
DRAWS = 4999


def normal_equivalent(t, df):
    """``Φ⁻¹(F_t(t; ν))``: the standard normal quantile of a t statistic's own
    one-sided probability (``ν = ∞``: ``t`` itself); exact, elementwise."""
    from bayeserr.stats.distributions import norm_isf, t_sf
    t = np.asarray(t, float)
    df = np.broadcast_to(np.asarray(df, float), t.shape)
    finite = np.isfinite(df) & np.isfinite(t)
    out = np.array(t, dtype=float, copy=True)
    if finite.any():
        out[finite] = norm_isf(t_sf(t[finite], df[finite]))
    return out


def difference_draws(cov, *, draws: int = DRAWS, seed: int = 0, order=None) -> np.ndarray:
    """(draws, M) draws of the model means' joint normal law ``N(0, cov)``
    (``cov`` made positive semi-definite by clipping negative eigenvalues),
    drawn in ``order`` (a canonical order, e.g. by name) so that a model's
    draws do not depend on the order the models come in.  Each eigenvector's sign
    is fixed (its largest entry positive): LAPACK builds may return either sign,
    and the seeded draws — so the set's p-values — are then the same on every
    machine, not only equal in distribution."""
    from bayeserr.stats.simultaneous import psd_root
    root, back = psd_root(cov, order)
    big = np.abs(root).argmax(axis=0)
    root = root * np.where(root[big, np.arange(root.shape[1])] < 0, -1.0, 1.0)
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((int(draws), len(root))) @ root.T)[:, back]


def covariance_from_pairs(V) -> np.ndarray:
    """A covariance ``Σ`` of M means whose pair variances ``Σ_kk + Σ_ll − 2Σ_kl``
    are ``V_kl`` (the pairs' squared SEs): ``Σ = −½ J V J`` with
    ``J = I − 11ᵀ/M`` (module docstring).  A pair with no SE (fewer than two
    common questions) gets the mean of its two models' other pair variances."""
    V = np.array(V, dtype=float)
    m = len(V)
    np.fill_diagonal(V, 0.0)
    missing = ~np.isfinite(V)
    if missing.any():
        off = ~np.eye(m, dtype=bool) & ~missing
        with np.errstate(invalid="ignore"):
            row = np.array([V[k][off[k]].mean() if off[k].any() else 0.0 for k in range(m)])
        V = np.where(missing, (row[:, None] + row[None, :]) / 2, V)
    J = np.eye(m) - 1.0 / m
    return -0.5 * J @ V @ J  # made positive semi-definite where it is used (best_set)


def pair_inputs(m: int, i, j, t, df, var) -> tuple[np.ndarray, np.ndarray]:
    """``(V, z)`` for :func:`covariance_from_pairs` and :func:`best_set` from the
    pairs ``(i[k], j[k])`` of M models: ``t`` the t statistic of ``θ_i − θ_j`` on
    ``df`` (inf: a z), ``var`` the variance that sets the pair's correlations.
    ``z[i, j]`` is the normal equivalent of θ_i − θ_j, ``z[j, i]`` of θ_j − θ_i;
    NaN where a pair is absent."""
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    t, df = np.asarray(t, float), np.asarray(df, float)
    V = np.full((m, m), np.nan)
    z = np.full((m, m), np.nan)
    V[i, j] = V[j, i] = np.asarray(var, float)
    z[i, j] = normal_equivalent(t, df)
    z[j, i] = normal_equivalent(-t, df)
    return V, z


def nearest_psd(cov) -> np.ndarray:
    """``cov`` with its negative eigenvalues set to 0 (pairs compared on
    different question sets need not give a Euclidean set of variances); the
    draws and their standardization then use the same matrix."""
    cov = np.asarray(cov, float)
    cov = (cov + cov.T) / 2
    val, vec = np.linalg.eigh(cov)
    return (vec * np.clip(val, 0.0, None)) @ vec.T


#: a pair whose SD is below this fraction of the largest model SD has zero variance: the same
#: scores on every question (the eigenvalue clipping of :func:`nearest_psd` leaves ~1e-9 there,
#: and dividing by it made identical models' draws huge, so identical data got different verdicts)
ZERO_SD = 1e-6


def _standardized(Z, cov, j: int) -> np.ndarray:
    """``(Z_k − Z_j) / sd(θ_k − θ_j)`` for every k (draws × M); the candidate's
    own column and pairs of zero variance (below ``ZERO_SD`` of the scale) are ``−inf``
    (they never reach the max)."""
    sd = np.sqrt(np.maximum(np.diag(cov) + cov[j, j] - 2 * cov[:, j], 0.0))
    scale = np.sqrt(np.max(np.diag(cov), initial=0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (Z - Z[:, [j]]) / sd
    out[:, (sd <= ZERO_SD * scale) | ~np.isfinite(sd)] = -np.inf
    out[:, j] = -np.inf
    return out


@dataclass(frozen=True)
class BestSet:
    """The confidence set for the best model, the top-k set and the models' own rank intervals."""

    p_best: np.ndarray  #: per model, the p-value of "this model is the best" (in the set when > 1 − level)
    in_set: np.ndarray  #: per model, in the set for the best
    in_top_k: np.ndarray  #: per model, in the set for the top k
    rank_own: np.ndarray  #: (M, 2) each model's own (marginal) rank interval
    level: float
    top_k: int
    draws: int
    method: str  #: the joint law, in words

    def to_dict(self) -> dict:
        return {"method": self.method, "draws": self.draws, "level": self.level, "top_k": self.top_k}


def best_set(cov, z, *, level: float = 0.95, top_k: int = 1, draws: int = DRAWS, seed: int = 0,
             order=None, Z=None, shared_df: float | None = None, selection: bool = True) -> BestSet:
    """The ``level`` confidence set for the best of M models, the set for the
    top ``top_k`` and the models' own rank intervals (module docstring;
    ``docs/methods.md`` §3.10).

    ``cov``: (M, M) covariance of the model means (its correlations drive the
    joint law; :func:`covariance_from_pairs`); ``z``: (M, M) normal
    equivalents ``z[k, j]`` of the one-sided t statistics of ``θ_k − θ_j``
    (:func:`normal_equivalent`; antisymmetric, NaN where the pair has no
    test: it never counts for or against a model).
    ``Z``: (draws, M) draws of ``N(0, cov)`` to use (tests pass their own).
    ``shared_df``: the lab's alternative, a multivariate t (every draw divided by
    one ``sqrt(χ²_ν/ν)``); ``z`` are then the raw t statistics.
    ``selection``: the two-step critical value of Romano, Shaikh & Wolf (2014,
    *Econometrica* 82:1979) — a first step at ``β = α/10`` bounds every
    standardized gap ``δ_k = (θ_k − θ_j)/sd`` from above (``δ_k ≤ z_kj + c_β``
    for all k at once), comparisons with models clearly below j then enter the
    maximum shifted down by ``λ_k = min(0, z_kj + c_β)``, and the second step
    is at ``α − β``: ``p_j = β + P*(max_k (z*_k + λ_k) ≥ max_k z_kj)``.  Models
    far below a candidate no longer inflate its critical value.  ``False``: the
    least favourable point (every ``λ_k = 0``), the lab's comparison.

    The top-k set keeps model j unless its one-sided step-down over "k above j"
    at α declares k or more models better: each model whose true rank is at most
    k is in it with probability ≥ 1 − α (a marginal guarantee, as the models' own
    rank intervals give), and its lower rank bound is at most k.  A model in the
    set for the best gets rank 1 in its interval (widened if needed) and is in
    the top-k set.
    """
    cov = nearest_psd(np.where(np.isfinite(cov), cov, 0.0))  # the draws and their scale use one matrix
    z = np.asarray(z, float)
    m = len(cov)
    top_k = min(max(int(top_k), 1), m)
    Z = difference_draws(cov, draws=draws, seed=seed, order=order) if Z is None else np.asarray(Z, float)
    if shared_df is not None and np.isfinite(shared_df):
        rng = np.random.default_rng(seed + 1)
        Z = Z * np.sqrt(shared_df / rng.chisquare(shared_df, size=(len(Z), 1)))
    alpha = 1 - level
    p = np.ones(m)
    own = np.zeros((m, 2), int)
    top = np.ones(m, bool)
    for j in range(m):
        star = _standardized(Z, cov, j)
        obs = np.where(np.arange(m) == j, np.nan, z[:, j])
        usable = np.isfinite(star).any(axis=0) & ~np.isnan(obs)
        highest = np.max(obs, initial=-np.inf, where=usable)
        if highest > -np.inf:
            p[j] = _p_best(star[:, usable], obs[usable], highest, alpha / 10 if selection else 0.0)
        both = _step_down(np.concatenate([obs, -obs]), star, np.concatenate([usable, usable]), alpha,
                          mirrored=True)
        own[j] = (1 + both[:m].sum(), m - both[m:].sum())
        if top_k > 1:
            top[j] = _step_down(obs, star, usable, alpha).sum() < top_k
    in_set = p > alpha
    # one voice: a model in the set keeps rank 1 in its interval (widening a confidence interval
    # keeps its coverage); the top-k set holds the set for the best.  (A model in the top-k set
    # already has a lower bound ≤ k: its one-sided step-down rejects at least what the two-sided
    # one does among "k above j", docs/methods.md §3.10.)
    own[in_set, 0] = 1
    top |= in_set
    return BestSet(p, in_set, in_set if top_k == 1 else top, own, level, top_k, len(Z),
                   "each model's own one-sided comparisons; Gaussian copula of the pairs' headline t on "
                   "their own df, correlations from the question-level covariance")


def _p_best(star, obs, highest: float, beta: float) -> float:
    """p of "this candidate is the best": ``β + P*(max_k (z*_k + λ_k) ≥ max_k z_k)``
    with the first-step shifts ``λ_k = min(0, z_k + c_β)`` (:func:`best_set`);
    ``β = 0``: the least favourable point."""
    if beta <= 0:
        return float(np.mean(star.max(axis=1) >= highest))
    c_beta = np.quantile(-star.min(axis=1), 1 - beta)  # max(−star) without a copy of star
    shift = np.minimum(0.0, obs + c_beta)
    return float(min(1.0, beta + np.mean((star + shift).max(axis=1) >= highest)))


def _step_down(stat, draws, usable, alpha: float, mirrored: bool = False) -> np.ndarray:
    """Romano–Wolf step-down over one-sided hypotheses with statistics ``stat``
    and joint null draws ``draws`` (draws × hypotheses); ``usable``: the
    hypotheses tested.  ``mirrored``: the hypotheses are both directions, their
    draws ``draws`` then ``−draws`` (not built: the maximum over ``−draws`` is
    ``−min``).  Returns the rejected ones."""
    active = usable.copy()
    rejected = np.zeros(len(stat), bool)
    while active.any():
        crit = np.quantile(_active_max(draws, active, mirrored), 1 - alpha)
        new = active & (stat > crit)
        if not new.any():
            break
        rejected |= new
        active &= ~new
    return rejected


def _active_max(draws, active, mirrored: bool) -> np.ndarray:
    """Per draw, the maximum over the ``active`` hypotheses' draws (:func:`_step_down`)."""
    if not mirrored:
        return draws[:, active].max(axis=1)
    m = draws.shape[1]
    out = np.full(len(draws), -np.inf)
    if active[:m].any():
        out = np.maximum(out, draws[:, active[:m]].max(axis=1))
    if active[m:].any():
        out = np.maximum(out, -draws[:, active[m:]].min(axis=1))
    return out
