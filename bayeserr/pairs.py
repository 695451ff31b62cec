"""All-pairs paired statistics in a few matrix products (SPEC §3, M5–M8).

For M models and n questions, a Python loop over the M(M−1)/2 pairs would
dominate a report on a large leaderboard (4,950 pairs for 100 models).  Every
paired quantity is instead a function of a handful of M×M moment matrices,
computed over the questions *both* models answered (NaN marks no answer):

* ``N = W Wᵀ`` (common questions), ``SA = X Wᵀ`` (A's sum over them),
  ``QA = X² Wᵀ`` and ``C = X Xᵀ``, with ``W`` the answered mask and ``X`` the
  centred scores (0 where unanswered; centring per model only guards against
  cancellation, every statistic below is shift-invariant or undoes it);
* variances and covariance over the common questions, and the SPEC §3 identity
  ``Var(d) = Var(s_A) + Var(s_B) − 2 Cov(s_A, s_B)`` for the paired SE (M7);
* for clusters, ``Σ_c (Σ_{i∈c} e_i)²`` of the pair differences from per-cluster
  products, then (M4) on the differences, which is (M8).

These are the same formulas as :func:`bayeserr.estimators.se_clt` and
:func:`~bayeserr.estimators.se_clustered` applied to ``d = s_A − s_B``; the
test-suite checks that they agree pair by pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PairMoments:
    """M×M matrices; entry ``[a, b]`` describes the pair (a, b) on their common questions."""

    n: np.ndarray  #: common questions
    only: np.ndarray  #: questions a answered and b did not
    mean: np.ndarray  #: a's mean over the common questions
    var: np.ndarray  #: a's variance (ddof 1) over the common questions
    cov: np.ndarray  #: covariance of a and b (ddof 1)
    var_d: np.ndarray  #: variance of d = s_a − s_b (ddof 1)
    cluster_ss: np.ndarray | None  #: Σ_c (Σ_{i∈c} (d_i − d̄))²
    n_clusters: np.ndarray | None  #: clusters with at least one common question


def _masked_centered(s: np.ndarray):
    w = ~np.isnan(s)
    with np.errstate(invalid="ignore"):
        centre = np.nanmean(s, axis=1, keepdims=True)
    x = np.where(w, s - centre, 0.0)
    return x, w.astype(float), centre[:, 0]


def _cluster_sums(x: np.ndarray, w: np.ndarray, codes: np.ndarray, dbar):
    """``Σ_c (Σ_{i∈c} (d_i − d̄))²`` for every pair, and clusters in common.

    With ``D_c = Σ_{i∈c} d_i`` and ``n_c`` the common questions in c:
    ``Σ_c (D_c − n_c d̄)² = Σ D_c² − 2 d̄ Σ n_c D_c + d̄² Σ n_c²``.
    """
    m = x.shape[0]
    t1, t2, t3, nc = (np.zeros((m, m)) for _ in range(4))
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    for idx in np.split(order, bounds):
        xc, wc = x[:, idx], w[:, idx]
        p = xc @ wc.T  # p[a, b] = Σ_{i∈c} x_a,i w_b,i
        d_c = p - p.T
        n_c = wc @ wc.T
        t1 += d_c**2
        t2 += n_c * d_c
        t3 += n_c**2
        nc += n_c > 0
    return t1 - 2 * dbar * t2 + dbar**2 * t3, nc


def pair_moments(s: np.ndarray, codes: np.ndarray | None = None) -> PairMoments:
    """Moment matrices of every pair of rows of ``s`` (models × questions, NaN = no answer)."""
    x, w, centre = _masked_centered(s)
    n = w @ w.T
    sa = x @ w.T
    qa = (x * x) @ w.T
    c = x @ x.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_c = sa / n
        var = (qa - sa * mean_c) / (n - 1)
        cov = (c - sa * sa.T / n) / (n - 1)
        var_d = np.maximum(var + var.T - 2 * cov, 0.0)
        dbar = mean_c - mean_c.T
    cluster_ss = n_clusters = None
    if codes is not None:
        cluster_ss, n_clusters = _cluster_sums(x, w, codes, dbar)
    answered = w.sum(axis=1)
    return PairMoments(n=n, only=answered[:, None] - n, mean=mean_c + centre[:, None], var=var,
                       cov=cov, var_d=var_d, cluster_ss=cluster_ss, n_clusters=n_clusters)


def paired_standard_errors(pm: PairMoments, correction: str = "paper"):
    """(M5/M6) unpaired, (M7) paired and (M8) clustered paired SEs of every pair."""
    n = pm.n
    with np.errstate(invalid="ignore", divide="ignore"):
        se_unpaired = np.sqrt((pm.var + pm.var.T) / n)
        se_paired = np.sqrt(pm.var_d / n)
        se_cl = None
        if pm.cluster_ss is not None:
            if correction == "paper":
                sum_e2 = (n - 1) * pm.var_d
                se_cl = np.sqrt(np.maximum(pm.var_d / n + (pm.cluster_ss - sum_e2) / n**2, 0.0))
            elif correction == "cr1":
                c = pm.n_clusters
                se_cl = np.sqrt(np.where(c > 1, c / (c - 1), np.nan) * pm.cluster_ss / n**2)
            else:
                raise ValueError(f"unknown cluster_correction {correction!r}")
    return se_unpaired, se_paired, se_cl


def correlation(pm: PairMoments) -> np.ndarray:
    """Pearson correlation of the two models' per-question scores, per pair."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return pm.cov / np.sqrt(pm.var * pm.var.T)


def discordant_counts(y: np.ndarray):
    """McNemar's discordant cells for every pair of 0/1 rows (NaN = no answer).

    ``only[a, b]`` counts questions a got right and b wrong, among those both
    answered; ``only.T`` is the other cell.
    """
    w = (~np.isnan(y)).astype(float)
    y0 = np.nan_to_num(y)
    only = y0 @ w.T - y0 @ y0.T
    return np.rint(only).astype(np.int64)


def mcnemar_pvalues(n_a_only, n_b_only):
    """McNemar exact and mid-p values, vectorized over tables.

    Same rule as ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``
    (``min(1, 2·F(min(b, c); b + c, ½))``, checked equal in the tests), which
    takes one table per call; here ``scipy.stats.binom`` evaluates every pair
    at once.  The mid-p value subtracts the point probability of the
    observed statistic: ``2·F(min) − f(min)`` (Fagerland et al. 2013).
    """
    b = np.asarray(n_a_only)
    c = np.asarray(n_b_only)
    small, total = np.minimum(b, c), b + c
    exact = np.minimum(1.0, 2.0 * stats.binom.cdf(small, total, 0.5))
    mid = np.minimum(1.0, 2.0 * stats.binom.cdf(small, total, 0.5) - stats.binom.pmf(small, total, 0.5))
    return exact, mid
