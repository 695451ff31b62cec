"""All-pairs paired statistics in a few matrix products (SPEC §3, M5–M8).

For M models and n questions, a Python loop over the M(M−1)/2 pairs would
dominate a report on a large leaderboard (4,950 pairs for 100 models).  Every
paired quantity is instead a function of a handful of M×M moment matrices,
computed over the questions *both* models answered (NaN marks no answer):

* ``N = W Wᵀ`` (common questions), ``SA = X Wᵀ`` (A's sum over them),
  ``QA = X² Wᵀ`` and ``C = X Xᵀ``, with ``W`` the answered mask and ``X`` the
  centred scores (0 where unanswered; centring per model only guards against
  cancellation, every statistic below is shift-invariant or undoes it);
* variances and covariance over the common questions, and ``Var(d)`` from the
  same products (``QA + QAᵀ − 2C``, which is the SPEC §3 identity
  ``Var(d) = Var(s_A) + Var(s_B) − 2 Cov(s_A, s_B)``) for the paired SE (M7);
  sums of squares within rounding error of 0 are set to exactly 0, so a
  model that is constant on the common questions has an undefined (NaN)
  correlation and identical models a paired SE of exactly 0;
* for clusters, ``Σ_c (Σ_{i∈c} e_i)²`` of the pair differences from per-cluster
  products, then (M4) on the differences, which is (M8).

These are the same formulas as :func:`bayeserr.stats.estimators.se_clt` and
:func:`~bayeserr.stats.estimators.se_clustered` applied to ``d = s_A − s_B``; the
test-suite checks that they agree pair by pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.stats.distributions import binom_cdf, binom_pmf


@dataclass(frozen=True)
class PairMoments:
    """M×M matrices; entry ``[a, b]`` describes the pair (a, b) on their common questions."""

    n: np.ndarray  #: common questions
    only: np.ndarray  #: questions a answered and b did not
    mean: np.ndarray  #: a's mean over the common questions
    var: np.ndarray  #: a's variance (ddof 1) over the common questions; exactly 0 when a is constant there
    cov: np.ndarray  #: covariance of a and b (ddof 1); exactly 0 when either is constant
    var_d: np.ndarray  #: variance of d = s_a − s_b (ddof 1); exactly 0 when d is constant
    cluster_ss: np.ndarray | None  #: Σ_c (Σ_{i∈c} (d_i − d̄))²
    n_clusters: np.ndarray | None  #: clusters with at least one common question


#: Sums of squares at or below ``ROUNDING · n · ε`` times the raw second
#: moments they were computed from are indistinguishable from rounding
#: error (the bound of the moment expansion, see :func:`pair_moments`) and
#: are set to exactly 0.
ROUNDING = 8.0
_EPS = np.finfo(float).eps


def _masked_centered(s: np.ndarray):
    """Scores minus a per-model centre, 0 where unanswered; the answered mask.

    The centre is the model's mean rounded to a multiple of 2⁻¹⁰: close
    enough to the mean to guard against cancellation, and short enough that
    for 0/1 scores (and any score that is a multiple of 2⁻¹⁰) the products
    and sums of :func:`pair_moments` are exact in float64, so a constant
    model or two identical ones give exact zeros before any tolerance is
    applied (the tolerance there handles other scores, such as thirds).
    """
    w = ~np.isnan(s)
    with np.errstate(invalid="ignore"):
        centre = np.round(np.nanmean(s, axis=1, keepdims=True) * 1024.0) / 1024.0
    centre = np.nan_to_num(centre)
    x = np.where(w, s - centre, 0.0)
    return x, w.astype(float), centre[:, 0]


def _cluster_sums(x: np.ndarray, w: np.ndarray, codes: np.ndarray, dbar):
    """``Σ_c (Σ_{i∈c} (d_i − d̄))²`` for every pair, and clusters in common.

    With ``D_c = Σ_{i∈c} d_i`` and ``n_c`` the common questions in c, each
    cluster's residual sum ``D_c − n_c d̄`` is formed first and then
    squared, so no large terms cancel.  One pass over the clusters (a loop
    over clusters, never over pairs), each two small matrix products.
    """
    m = x.shape[0]
    ss, nc = np.zeros((m, m)), np.zeros((m, m))
    order = np.argsort(codes, kind="stable")
    xs, ws = x[:, order], w[:, order]
    bounds = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1, codes.size]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        xc, wc = xs[:, lo:hi], ws[:, lo:hi]
        p = xc @ wc.T  # p[a, b] = Σ_{i∈c} x_a,i w_b,i
        n_c = wc @ wc.T
        r = p - p.T - n_c * dbar
        ss += r * r
        nc += n_c > 0
    return ss, nc


def pair_moments(s: np.ndarray, codes: np.ndarray | None = None) -> PairMoments:
    """Moment matrices of every pair of rows of ``s`` (models × questions, NaN = no answer).

    Over the common questions S of a pair, with ``x`` the centred scores::

        SS_a  = Σ_S x_a² − (Σ_S x_a)² / n             (n − 1) Var(s_a)
        SP_ab = Σ_S x_a x_b − Σ_S x_a Σ_S x_b / n     (n − 1) Cov(s_a, s_b)
        SS_d  = Σ_S (x_a − x_b)² − (Σ_S (x_a − x_b))² / n     (n − 1) Var(d)

    each from a few M×M matrix products.  The subtractions cancel when a
    model is constant on S (or two models are identical there): the
    rounding error is then at most a small multiple of ``n ε`` times the
    raw second moment ``Σ_S x_a²`` (``Σ_S x_a² + Σ_S x_b²`` for ``SS_d``),
    so values at or below ``ROUNDING · n · ε`` times it are set to exactly
    0.  A zero variance zeroes the covariance (Cauchy–Schwarz), which makes
    the correlation undefined (NaN), and a zero ``Var(d)`` zeroes the
    cluster sums of d; when moreover the mean gap is within rounding of 0
    (the models agree on every common question), both means are set to
    their average, so the gap is exactly 0.  For 0/1 scores these zeros
    are exact before the tolerance (see ``_masked_centered``).

    The tolerance only affects sums of squares that are themselves at the
    rounding level: for scores in [0, 1] it is at most
    ``2 · ROUNDING · n² · ε`` in absolute terms (4e-7 at n = 10,000, against
    ≈ 1 for two 0/1 models that differ on a single question).
    """
    x, w, centre = _masked_centered(s)
    from bayeserr.stats.sufficient import pair_sums
    pm, dbar = moments_from_sums(*pair_sums(x, w), centre)
    if codes is not None:
        cluster_ss, n_clusters = _cluster_sums(x, w, codes, dbar)
        pm = with_cluster_sums(pm, cluster_ss, n_clusters)
    return pm


def moments_from_sums(n, sa, qa, c, centre):
    """:class:`PairMoments` (without the cluster part) and the mean gaps ``d̄``
    from the M×M sums over common questions of the centred scores ``x = s − centre``:
    ``n = Σ w_a w_b``, ``sa = Σ x_a w_b``, ``qa = Σ x_a² w_b``, ``c = Σ x_a x_b``
    (see :func:`pair_moments`; the sufficient statistics of
    :mod:`bayeserr.stats.sufficient` give the same sums for any engine)."""
    centre = np.asarray(centre, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        tol = ROUNDING * _EPS * n
        mean_c = sa / n
        ss = qa - sa * mean_c
        ss = np.where(ss > tol * qa, ss, 0.0)
        sp = c - sa * sa.T / n
        zero = (ss == 0) | (ss.T == 0)
        sp = np.where(zero, 0.0, np.clip(sp, -np.sqrt(ss * ss.T), np.sqrt(ss * ss.T)))
        dsum = sa - sa.T
        raw_d = qa + qa.T
        ss_d = raw_d - 2 * c - dsum * dsum / n
        ss_d = np.where(ss_d > tol * raw_d, ss_d, 0.0)
        defined = n >= 2
        var = np.where(defined, ss / (n - 1), np.nan)
        cov = np.where(defined, sp / (n - 1), np.nan)
        var_d = np.where(defined, ss_d / (n - 1), np.nan)
        dbar = dsum / n
        mean = mean_c + centre[:, None]
        # d constant and within rounding of 0: the two models agree on every
        # common question, so their means there are one number (exactly)
        tie = (ss_d == 0) & (np.abs(mean - mean.T) <= ROUNDING * _EPS * (np.sqrt(2 * n * raw_d) + 1))
        mean = np.where(tie, (mean + mean.T) / 2, mean)
    answered = np.diag(n)
    return PairMoments(n=n, only=answered[:, None] - n, mean=mean, var=var, cov=cov, var_d=var_d,
                       cluster_ss=None, n_clusters=None), dbar


def with_cluster_sums(pm: PairMoments, cluster_ss, n_clusters) -> PairMoments:
    """``pm`` with ``Σ_c (Σ_{i∈c} (d_i − d̄))²`` and the clusters in common; the
    cluster sums of a constant d are exactly 0."""
    from dataclasses import replace
    return replace(pm, cluster_ss=np.where(pm.var_d == 0, 0.0, cluster_ss), n_clusters=n_clusters)


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
    """Pearson correlation of the two models' per-question scores, per pair.

    NaN (JSON ``null``) where either model is constant on the common
    questions: the correlation is then undefined, not 0.  Exactly 1 where
    the difference is constant (``B = A − c`` on every common question).
    Within [−1, 1].
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        prod = pm.var * pm.var.T
        r = np.where(prod > 0, pm.cov / np.sqrt(prod), np.nan)
        r = np.where((prod > 0) & (pm.var_d == 0), 1.0, r)
    return np.clip(r, -1.0, 1.0)


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

    The rule ``statsmodels.stats.contingency_tables.mcnemar(exact=True)`` wraps
    (``min(1, 2·F(min(b, c); b + c, ½))`` with ``scipy.stats.binom``, checked equal to it
    in the tests), evaluated over every pair at once: ``mcnemar`` takes one table per
    call, 0.09 ms each (measured), 0.4 s for the 4,950 pairs of 100 models.  The mid-p
    value subtracts the point probability of the observed statistic: ``2·F(min) − f(min)``
    (Fagerland et al. 2013).
    """
    b = np.asarray(n_a_only)
    c = np.asarray(n_b_only)
    small, total = np.minimum(b, c), b + c
    cdf = binom_cdf(small, total, 0.5)
    exact = np.minimum(1.0, 2.0 * cdf)
    mid = np.minimum(1.0, 2.0 * cdf - binom_pmf(small, total, 0.5))
    return exact, mid


PAIR_CHUNK = 256


#: largest models² × clusters of per-cluster cross products computed at once (8 bytes each)
CROSS_CELLS = 25_000_000


def _cross_products(blocks, m: int, ia, ib) -> np.ndarray:
    """(C, P): ``Σ_{i∈c} s_a,i s_b,i`` of every pair ``(ia, ib)``, cluster by cluster from
    its M×M product ``blk @ blk.T`` (one buffer): 20 MB for 100 models and 500 clusters,
    not an (M, M, C) array and its transpose (80 MB, 0.18 CPU s of first-touch page
    faults against 0.03)."""
    out = np.empty((len(blocks), len(ia)))
    G = np.empty((m, m))
    flat = np.asarray(ia) * m + np.asarray(ib)
    for c, blk in enumerate(blocks):
        np.matmul(blk, blk.T, out=G)
        np.take(G.ravel(), flat, out=out[c])
    return out


def pair_cluster_totals(view, ia, ib, chunk: int = PAIR_CHUNK):
    """Cluster sums of d = s_a − s_b, each pair's total of d² (added in an order that does not
    depend on the cluster numbering: :func:`~bayeserr.stats.bayes_sums.total_of_squares`), and
    the common cluster sizes, of every pair ``(ia[k], ib[k])``, in chunks of pairs: yields
    ``(slice, D, T, sizes)``.

    With complete data every sum comes from per-model cluster sums and one
    M×M product per cluster (no pairs × questions array); otherwise the
    differences of each chunk of pairs are formed directly.
    """
    from bayeserr.stats.bayes_sums import total_of_squares
    from bayeserr.stats.estimators import cluster_sums
    from bayeserr.stats.fewclusters import cluster_totals
    codes = view.codes
    if view.answered.all():
        s = view.s
        S, SS = cluster_sums(s, codes), cluster_sums(s * s, codes)
        sizes_c = np.bincount(codes, minlength=S.shape[1]).astype(float)
        order = np.argsort(codes, kind="stable")
        bounds = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1, codes.size]
        blocks = [s[:, order[lo:hi]] for lo, hi in zip(bounds[:-1], bounds[1:])]
        m = s.shape[0]
        # Σ_{i∈c} s_a,i s_b,i: all pairs at once from M×M products when they fit in memory
        # the M×M products where M² × C fits (the rule that chose them before; with fractional
        # scores the two ways round differently, so the choice keeps a report's numbers)
        products = _cross_products(blocks, m, ia, ib) if m * m * len(blocks) <= CROSS_CELLS else None
        for start in range(0, len(ia), chunk):
            sl = slice(start, start + chunk)
            a, b = ia[sl], ib[sl]
            cross = (products[:, sl].T if products is not None else
                     np.stack([np.einsum("pi,pi->p", blk[a], blk[b]) for blk in blocks], axis=-1))
            yield sl, S[a] - S[b], total_of_squares(SS[a] + SS[b] - 2 * cross), np.broadcast_to(sizes_c, (len(a), len(sizes_c)))
        return
    for start in range(0, len(ia), chunk):
        sl = slice(start, start + chunk)
        d = view.s[ia[sl]] - view.s[ib[sl]]
        D, sizes = cluster_totals(d, codes)
        Q, _ = cluster_totals(d * d, codes)
        yield sl, D, total_of_squares(Q), sizes
