"""Few-cluster-valid inference on a mean: CR2, Bell–McCaffrey df, wild cluster bootstrap.

Pure NumPy/SciPy array functions (SPEC §2 (M4b), §3; ``docs/methods.md``
§2.4–§2.6, §3.3, §3.4).  The model is intercept-only: the estimand is the mean
of per-question values ``y_i`` — a model's scores ``s_i`` for its clustered
interval, or the paired differences ``d_i = s_A,i − s_B,i`` for the headline
test of a pair.  Every function works along the last axis and is vectorized
over any leading axes (models, pairs, simulation replicates).

Notation: ``n`` questions, clusters ``c = 1..C`` of ``n_c`` questions,
``p_c = n_c / n``, ``q_c = 1 / (1 − p_c)``, residuals ``e_i = y_i − ȳ`` and their
cluster sums ``S_c = Σ_{i∈c} e_i``.

* (M4) and CR1 (``docs/methods.md`` §2.4) live in :mod:`bayeserr.stats.estimators`.
* CR2, the bias-reduced linearization variance (Bell & McCaffrey 2002;
  Pustejovsky & Tipton 2018), for a mean (§2.5)::

      SE_cr2² = Σ_c q_c S_c² / n²                                     (M4b)

  For a column of ones the hat block is ``H_cc = (n_c/n) 11ᵀ`` and
  ``(I − H_cc)^(−1/2) 1 = q_c^(1/2) 1``, which gives the closed form above.
* Bell–McCaffrey degrees of freedom (§2.5; Imbens & Kolesár 2016, their
  "BM" df): ``df = (Σλ)² / Σλ²`` over the eigenvalues λ of the C×C matrix
  ``M = D − w wᵀ / n``, ``D = diag(n_c / (n² (1 − p_c)))``,
  ``w_c = n_c / (n sqrt(1 − p_c))``.  Since ``Σλ = tr M`` and
  ``Σλ² = ‖M‖_F²`` (M is symmetric), with ``M = (1/n)(diag(p q) − r rᵀ)``,
  ``r_c = p_c q_c^(1/2)``::

      tr M    = 1/n
      ‖M‖_F²  = (1/n²) [ Σ_c p_c² q_c² (1 − 2 p_c) + (Σ_c p_c² q_c)² ]
      df      = 1 / [ Σ_c p_c² q_c² (1 − 2 p_c) + (Σ_c p_c² q_c)² ]

  It depends on the cluster sizes only: equal sizes give ``C − 1``, one
  question per cluster gives ``n − 1``.
* Effective number of clusters (§2.6): ``C_eff = n² / Σ_c n_c²``.
* Headline test and interval (§3.3): ``t = (ȳ − μ0) / SE_cr2`` on Student t
  with the (fractional) BM df; interval ``ȳ ± t_df(1 − α/2) SE_cr2``.
* Second opinion (§3.4): the wild cluster restricted bootstrap-t (Cameron,
  Gelbach & Miller 2008) with Rademacher or Webb (2014) six-point weights,
  from cluster sums only, and its interval by test inversion.

Clusters are given by integer codes (``pandas.factorize`` output); a size of
zero in a ``sizes`` array means "cluster absent for this row" and is ignored
everywhere.  A single (present) cluster supports no cluster-level inference:
every clustered quantity is NaN there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.stats.distributions import t_ppf, t_sf
from bayeserr.stats.estimators import cluster_sums

WEIGHT_SCHEMES = ("auto", "rademacher", "webb")
VARIANCES = ("cr2", "cr1")

#: Rademacher weights are used by ``weights="auto"`` only from this many clusters on.
RADEMACHER_MIN_CLUSTERS = 10

#: Relative tolerance on t² when counting bootstrap draws with ``|t*| ≥ |t_obs|``,
#: so that exact ties (which the restricted bootstrap always produces, e.g. the
#: draws v = ±1) are counted despite rounding.
TIE_RTOL = 1e-9

_RADEMACHER = np.array([-1.0, 1.0])
_WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


# --------------------------------------------------------------------------- #
# cluster-size functions
# --------------------------------------------------------------------------- #
def _sizes(sizes) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=float)
    if np.any(sizes < 0):
        raise ValueError("cluster sizes must be non-negative (0 = cluster absent)")
    return sizes


def effective_clusters(sizes):
    """Effective number of clusters ``C_eff = n² / Σ_c n_c²`` (``docs/methods.md`` §2.6).

    ``sizes`` has shape ``(..., C)``; zeros (absent clusters) contribute
    nothing.  Equal sizes give C; one dominant cluster gives about 1.  NaN for a
    row with no questions.
    """
    sizes = _sizes(sizes)
    n = sizes.sum(axis=-1)
    ss = (sizes**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, n**2 / np.where(ss > 0, ss, 1.0), np.nan)


def shared_row(sizes):
    """``sizes[:1]`` when every row of a (rows, C) ``sizes`` is one row broadcast (stride 0:
    complete data, the same clusters for every pair), so that what depends on the sizes alone
    is computed once; else ``sizes``."""
    return sizes[:1] if sizes.ndim == 2 and len(sizes) and sizes.strides[0] == 0 else sizes


def _p_q(sizes):
    """``n``, ``p_c = n_c/n`` and ``q_c = 1/(1 − p_c)`` (q = NaN where p_c = 1)."""
    n = sizes.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, sizes / np.where(n > 0, n, 1.0), np.nan)
        q = np.where(p < 1, 1.0 / (1.0 - p), np.nan)
    return n[..., 0], p, q


def bm_df(sizes):
    """Bell–McCaffrey degrees of freedom of the CR2 t test of a mean (M4b; ``docs/methods.md`` §2.5).

    ``df = (Σλ)² / Σλ²`` over the eigenvalues of ``M = D − w wᵀ/n`` with
    ``D = diag(n_c/(n²(1 − p_c)))`` and ``w_c = n_c/(n sqrt(1 − p_c))``, in the
    closed form ``Σλ = tr M = 1/n``, ``Σλ² = ‖M‖_F²``, i.e.::

        df = 1 / [ Σ_c p_c² q_c² (1 − 2 p_c) + (Σ_c p_c² q_c)² ],  q_c = 1/(1 − p_c)

    (Bell & McCaffrey 2002; Imbens & Kolesár 2016; Pustejovsky & Tipton 2018).
    Along the last axis; zero sizes are ignored.  Equal sizes give exactly
    ``C − 1`` (up to rounding), singleton clusters ``n − 1``.  NaN when fewer
    than two clusters are present (a cluster holding every question, p_c = 1:
    not estimable).
    """
    sizes = _sizes(sizes)
    _, p, q = _p_q(sizes)
    c = np.count_nonzero(sizes, axis=-1)
    p2q = p * p * q
    with np.errstate(invalid="ignore"):
        denom = (p2q * q * (1.0 - 2.0 * p)).sum(axis=-1) + p2q.sum(axis=-1) ** 2
        return np.where((c >= 2) & (denom > 0), 1.0 / denom, np.nan)


def cr2_from_sums(S, sizes):
    """CR2 standard error of a mean from cluster sums of residuals (M4b; ``docs/methods.md`` §2.5).

    ``SE_cr2 = sqrt( Σ_c S_c² / (1 − p_c) ) / n`` with ``S_c = Σ_{i∈c} (y_i − ȳ)``,
    ``p_c = n_c / n``.  ``S`` and ``sizes`` have shape ``(..., C)`` (``sizes``
    may be a common ``(C,)``); absent clusters (size 0) must have ``S_c = 0``
    and are ignored.  NaN where fewer than two clusters are present.
    """
    S = np.asarray(S, dtype=float)
    sizes = _sizes(sizes)
    n, p, q = _p_q(sizes)
    c = np.count_nonzero(sizes, axis=-1)
    q = np.where(sizes > 0, q, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((S * S * q).sum(axis=-1)) / n
    return np.where(c >= 2, se, np.nan)


def cluster_totals(y, codes):
    """Cluster sums of the answered values and cluster sizes: ``(Y, sizes)``, each ``(..., C)``.

    ``y`` has shape ``(..., n)`` with NaN for "not answered"; ``codes`` is the
    ``(n,)`` integer cluster code of each question.  ``Y[..., c] = Σ_{i∈c} y_i``
    over answered questions and ``sizes[..., c]`` counts them: the input of
    :func:`wild_cluster_bootstrap` (``docs/methods.md`` §3.4).
    """
    y = np.asarray(y, dtype=float)
    codes = np.asarray(codes)
    answered = ~np.isnan(y)
    if answered.all():
        Y = cluster_sums(y, codes)
        return Y, np.broadcast_to(np.bincount(codes, minlength=Y.shape[-1]).astype(float), Y.shape).copy()
    return (cluster_sums(np.where(answered, y, 0.0), codes),
            cluster_sums(answered.astype(float), codes))


@dataclass(frozen=True)
class CR2Mean:
    """Per-row result of :func:`cr2_mean` (arrays over the leading axes)."""

    mean: np.ndarray
    se: np.ndarray                  # SE_cr2 (M4b)
    df: np.ndarray                  # Bell–McCaffrey df
    n_clusters: np.ndarray          # clusters with at least one answered question
    effective_clusters: np.ndarray  # n² / Σ n_c²
    n: np.ndarray                   # answered questions


def residual_cluster_sums(s, codes) -> tuple:
    """``(n, mean, e, S, sizes)`` per row of ``s`` (..., n) with NaN for "not answered": the
    answered count, the mean, the residuals ``e_i = s_i − s̄`` (0 where unanswered), each
    cluster's residual sum ``S_c`` and its answered size ``n_c`` (..., C) — the inputs of the
    CR2 variance (M4b) and of the suite's task moments (``docs/methods.md`` §2.5, §3.12)."""
    if not np.isnan(s).any():                      # common case: one size vector for all rows
        n = np.full(s.shape[:-1], s.shape[-1])
        mean = s.mean(axis=-1)
        e = s - mean[..., None]
        S = cluster_sums(e, codes)
        return n, mean, e, S, np.broadcast_to(np.bincount(codes, minlength=S.shape[-1]).astype(float), S.shape)
    answered = ~np.isnan(s)
    n = answered.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(answered, s, 0.0).sum(axis=-1) / np.where(n > 0, n, np.nan)
        e = np.where(answered, s - mean[..., None], 0.0)
    return n, mean, e, cluster_sums(e, codes), cluster_sums(answered.astype(float), codes)


def cr2_mean(s, codes) -> CR2Mean:
    """Mean, CR2 SE, Bell–McCaffrey df and cluster counts per row (M4b; ``docs/methods.md`` §2.5, §2.6, §3.3).

    ``s`` has shape ``(..., n)``; NaN means "not answered" and is ignored, so
    ``n`` and ``n_c`` count answered questions of that row only.  ``codes`` is
    the ``(n,)`` integer cluster code of each question.  Applied to a model's
    scores it gives the clustered interval of §2 (M4b); applied to paired
    differences ``d_i`` it gives the headline pair test of §3.  Rows with fewer
    than two answered clusters get NaN SE and df.
    """
    s = np.asarray(s, dtype=float)
    codes = np.asarray(codes)
    if codes.shape != s.shape[-1:]:
        raise ValueError(f"codes must have shape ({s.shape[-1]},), got {codes.shape}")
    n, mean, _, S, sizes = residual_cluster_sums(s, codes)
    return CR2Mean(mean=mean, se=cr2_from_sums(S, sizes), df=bm_df(sizes),
                   n_clusters=np.count_nonzero(sizes, axis=-1),
                   effective_clusters=effective_clusters(sizes), n=n)


# --------------------------------------------------------------------------- #
# t test
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class TTest:
    """Result of :func:`t_test`: statistic, two-sided p-value, interval ``(..., 2)``."""

    statistic: np.ndarray
    p_value: np.ndarray
    ci: np.ndarray


def t_test(estimate, se, df, level, null=0.0) -> TTest:
    """Two-sided t test and interval ``estimate ± t_df(1 − α/2)·se`` (``docs/methods.md`` §2.5, §3.3).

    ``statistic = (estimate − null)/se`` referred to Student t with ``df``
    degrees of freedom (fractional allowed; ``df = inf`` is the normal, i.e. a
    z test), ``p = 2·P(T_df > |statistic|)``.  All arguments broadcast.

    SE = 0 (every cluster sum of residuals is zero): the statistic is 0 and
    p = 1 when ``estimate == null``, ±inf (the sign of ``estimate − null``) and
    p = 0 otherwise; the interval is the single point ``[estimate, estimate]``.
    NaN in any input gives NaN.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level}); use e.g. 0.95.")
    est = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    df = np.asarray(df, dtype=float)
    diff = est - np.asarray(null, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(se > 0, diff / np.where(se > 0, se, 1.0),
                        np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
        stat = np.where(np.isnan(se) | np.isnan(diff) | np.isnan(df) | (df <= 0), np.nan, stat)
        p = 2.0 * t_sf(np.abs(stat), df)
        crit = t_ppf(0.5 + level / 2, df)
        half = np.where(se == 0, 0.0, crit * se)
        half = np.where(np.isnan(stat), np.nan, half)
    return TTest(statistic=stat, p_value=np.minimum(p, 1.0),
                 ci=np.stack(np.broadcast_arrays(est - half, est + half), axis=-1))


# --------------------------------------------------------------------------- #
# wild cluster restricted bootstrap
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class WildBootstrap:
    """Result of :func:`wild_cluster_bootstrap`.

    ``p_value`` (P,), ``ci`` (P, 2) (±inf where the test never rejects on that
    side), ``weights`` the scheme used, ``draws`` the number of weight vectors
    the p-value is a share of (2^C or 6^C when ``exact``), ``exact`` whether
    all weight vectors were enumerated.
    """

    p_value: np.ndarray
    ci: np.ndarray
    weights: str
    draws: int
    exact: bool


def _choose_weights(weights: str, c_min: int, level: float) -> str:
    """Weight rule of ``weights="auto"`` (``docs/methods.md`` §3.4).

    Rademacher weights give at most 2^(C−1) distinct |t*| and can never give
    p < 2/2^C (the draws v = ±1 reproduce |t_obs|); with few clusters the
    bootstrap distribution is too coarse near the 5% point.  Following Webb
    (2014) and the usual guidance (Rademacher from about 10 clusters), "auto"
    uses Rademacher iff ``C ≥ 10`` and the smallest attainable Rademacher
    p-value 2/2^C is at most a fifth of ``1 − level``; otherwise Webb's
    six-point weights.  C is the smallest number of present clusters over the
    rows (one scheme for all rows).
    """
    if weights not in WEIGHT_SCHEMES:
        raise ValueError(f"weights must be one of {WEIGHT_SCHEMES}, got {weights!r}")
    if weights != "auto":
        return weights
    alpha = 1.0 - level
    if c_min >= RADEMACHER_MIN_CLUSTERS and 2.0 ** (1 - c_min) <= alpha / 5:
        return "rademacher"
    return "webb"


def _weight_codes(scheme: str, cols: np.ndarray, width: int, draws: int, seed):
    """Integer codes (B, c) into the value table, ``exact`` flag and the reported count.

    ``cols`` are the c columns (of ``width`` input columns) present in some row.
    When the number of weight vectors K (2^c or 6^c) is at most ``draws``, all
    of them are enumerated — only the half with a positive first weight, since
    v and −v give the same |t*| (the share is unchanged).  Otherwise ``draws``
    vectors over all ``width`` input columns are drawn i.i.d. with
    ``numpy.random.default_rng(seed)`` and the present columns kept, so that a
    row's draws do not depend on which other rows are in the call.  (The
    report passes each pattern of present clusters alone, with only those
    columns, so that a pair's draws do not depend on the file's other
    clusters either.)
    """
    c = len(cols)
    k = 2 if scheme == "rademacher" else 6
    if c * np.log(k) <= np.log(draws) + 1e-12 and k**c <= draws:
        half = k**c // 2
        idx = np.arange(half, dtype=np.int64)
        digits = (idx[:, None] // (k ** np.arange(c - 1, -1, -1, dtype=np.int64))) % k
        # the first digit runs over 0..k/2−1; shift it to the positive half of the table
        digits[:, 0] += k // 2
        return digits.astype(np.int8), True, k**c
    rng = np.random.default_rng(seed)
    return rng.integers(0, k, size=(draws, width), dtype=np.int8)[:, cols], False, draws


def wild_cluster_bootstrap(D, sizes, *, level=0.95, draws=9999, seed=0, weights="auto",
                           null=0.0, variance="cr2", interval=True,
                           max_bytes=256 * 2**20) -> WildBootstrap:
    """Wild cluster restricted bootstrap-t of ``H0: mean = null`` and its inverted interval
    (``docs/methods.md`` §3.4; Cameron, Gelbach & Miller 2008; Webb 2014).

    ``D`` (P, C): cluster sums of the raw values (e.g. ``d_i``, not residuals)
    for P rows at once; ``sizes`` (P, C) or (C,): answered questions per
    cluster (0 = absent; ``D`` must then be 0 there).  For each row, with
    ``U_c = D_c − null·n_c`` (restricted residual sums) and weights ``v_c``,
    the bootstrap cluster sums are ``null·n_c + v_c U_c``; the bootstrap mean is
    ``null + Σ v_c U_c / n``, its residual sums ``S*_c = v_c U_c − p_c Σ_k v_k U_k``
    and::

        t*   = Σ_c v_c U_c / sqrt( Σ_c q_c S*_c² )        (= (ȳ* − null)/SE_cr2(y*))
        t    = (ȳ − null) / SE_cr2(y)
        p    = share of weight vectors with |t*| ≥ |t|

    (``variance="cr1"`` sets q_c = 1: the CR1 t of e.g. ``wildboottest`` and
    ``boottest``, whose constant factor cancels.)  Ties count, with a relative
    tolerance :data:`TIE_RTOL` on t².  All sums over clusters are matrix
    products of the (P, C) inputs with the (C, B) weights, so the work is
    O(P·C·B) once and O(P·B) per candidate null.

    Weights: see ``_choose_weights`` for ``"auto"`` (Rademacher from 10
    clusters, Webb six-point below; one scheme for all rows, chosen on the
    smallest number of clusters of a row).  All weight vectors are enumerated
    when their number (2^C or 6^C, C = clusters present in any row) is at
    most ``draws`` (``exact=True``); otherwise ``draws`` vectors are drawn
    from ``numpy.random.default_rng(seed)`` (p = share over those draws; the
    data's own draw is not added).  The same vectors serve every row and every
    candidate null, and a row's draws do not depend on the other rows.

    Interval (``interval=True``): the set of nulls not rejected at
    ``1 − level``, by test inversion.  On each side of ȳ the distance of the
    candidate null is doubled from 2·SE until the bootstrap p falls below
    ``1 − level``, then bisected (vectorized over rows and both sides) until
    the bracket is narrower than 1e-6·SE (SE of the chosen variance); the
    endpoint returned is the outermost candidate found not rejected.  The
    p-value is a step function of the null and can jump up at a cluster mean
    ``D_c/n_c`` (there ``U_c = 0`` and every flip of ``v_c`` ties): a cluster
    mean inside the final bracket that is not rejected becomes the endpoint,
    so that "null outside the interval" and "p(null) < 1 − level" agree (e.g.
    at 0 for 0/1 scores).  The p-value need not be monotone; the endpoint is
    the first crossing found this way.  A side where p stays at or above
    ``1 − level`` as the null goes to infinity (the share of weight vectors
    constant over the clusters, e.g. 1/6 for Webb weights with C = 2) is ±inf.

    Memory: the (rows × draws) coefficient arrays are built for blocks of
    rows of at most about ``max_bytes``, and the search runs on cache-sized
    sub-blocks; the results do not depend on the blocking.  Rows with fewer
    than two present clusters, or non-finite input, give NaN.  ``null`` may be
    a scalar or a (P,) array.  Cost: O(P·C·B) for the products, O(P·B) per
    candidate null (about 25 candidates for an interval).
    """
    # size: one algorithm (weights enumerated or drawn, restricted null, inverted interval) on shared arrays
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level}); use e.g. 0.95.")
    if variance not in VARIANCES:
        raise ValueError(f"variance must be one of {VARIANCES}, got {variance!r}")
    draws = int(draws)
    if draws < 1:
        raise ValueError("draws must be a positive integer")
    D = np.asarray(D, dtype=float)
    if D.ndim == 1:
        D = D[None, :]
    if D.ndim != 2:
        raise ValueError(f"D must have shape (P, C), got {D.shape}")
    P = D.shape[0]
    sizes = _sizes(sizes)
    if sizes.ndim == 1:
        sizes = sizes[None, :]
    if sizes.shape[-1] != D.shape[-1] or sizes.shape[0] not in (1, P):
        raise ValueError(f"sizes must have shape ({P}, {D.shape[1]}) or ({D.shape[1]},), got {sizes.shape}")
    if sizes.shape[0] == P and P > 1 and np.all(sizes == sizes[:1]):
        sizes = sizes[:1]                       # common design: share the size products
    null = np.broadcast_to(np.asarray(null, dtype=float), (P,))
    alpha = 1.0 - level

    present = sizes > 0
    D = np.where(present, D, 0.0)
    c_row = np.broadcast_to(np.count_nonzero(present, axis=-1), (P,))
    valid = (c_row >= 2) & np.all(np.isfinite(D), axis=-1) & np.isfinite(null)

    p_out = np.full(P, np.nan)
    ci_out = np.full((P, 2), np.nan)
    if not valid.any():
        return WildBootstrap(p_value=p_out, ci=ci_out, weights="none", draws=0, exact=False)

    # columns present in some valid row; one weight scheme for all rows
    rows_sizes = sizes if sizes.shape[0] == 1 else sizes[valid]
    cols = np.flatnonzero((rows_sizes > 0).any(axis=0))
    width = D.shape[1]
    D, sizes = D[:, cols], sizes[:, cols]
    scheme = _choose_weights(weights, int(c_row[valid].min()), level)
    codes, exact, reported = _weight_codes(scheme, cols, width, draws, seed)
    table = _RADEMACHER if scheme == "rademacher" else _WEBB
    B, C = codes.shape
    unit = scheme == "rademacher"              # v² = 1: squared-weight products are row constants

    # per-row quantities that do not depend on the draws
    # (invalid rows may give NaN here; they are never used)
    with np.errstate(invalid="ignore", divide="ignore"):
        n, p, q = _p_q(sizes)
        q = np.where(sizes > 0, 1.0 if variance == "cr1" else q, 0.0)
        n = np.broadcast_to(n, (P,))
        ybar = D.sum(axis=-1) / n
        S = D - sizes * ybar[:, None]                  # residual sums S_c
        s_obs = (q * S * S).sum(axis=-1)               # n²·SE² of the data
        s2 = np.broadcast_to((p * p * q).sum(axis=-1), (P,))
        scale = np.sqrt(s_obs) / n                     # SE (CR1: without its constant factor)
    # distances from ȳ are searched in units of the SE (of 1 when the SE is 0)
    scale = np.where(scale > 0, scale, 1.0)

    # Sums over clusters with the weights are matrix products X @ V.T (or X @ (V²).T),
    # formed in chunks of draws so that the (B, C) weight matrix in float64 stays small.
    chunk = int(max(1, min(B, (max_bytes // 8) // max(1, 8 * C))))

    def products(X, square=False):
        out = np.empty((X.shape[0], B))
        for j in range(0, B, chunk):
            v = table[codes[j:j + chunk]]
            out[:, j:j + chunk] = X @ (v * v if square else v).T
        return out

    # Coefficients of the bootstrap statistic as functions of δ = null − ȳ
    # (U_c = S_c − δ n_c):  N = Σ v U = a1 − δ a2,  K = Σ v p q U = b1 − δ b2,
    # Q = Σ v² q U² = c1 − 2δ c2 + δ² c3, and n²·SE*² = Q − 2 N K + s2 N².
    pq = p * q
    present = (sizes > 0).astype(float)
    common = sizes.shape[0] == 1
    shared = {}
    if common:
        shared["a2"], shared["b2"] = products(sizes), products(pq * sizes)
        shared["c3"] = (q * sizes * sizes).sum(-1)[:, None] if unit else products(q * sizes * sizes, True)
        shared["const"] = _constant_draws(products(present), products(present, True), present)
        shared["p_inf"] = shared["const"].mean(axis=-1)
    n_store = 2 + (0 if unit else 2) + (0 if common else (4 if unit else 5))
    outer = int(max(1, min(P, max_bytes // (max(n_store, 1) * B * 8))))
    inner = int(max(1, _INNER_ELEMENTS // B))

    valid_idx = np.flatnonzero(valid)
    for start in range(0, len(valid_idx), outer):
        rows = valid_idx[start:start + outer]
        Sb = S[rows]
        sz = sizes if common else sizes[rows]
        qb = q if common else q[rows]
        pqb = pq if common else pq[rows]
        coef = {"a1": products(Sb), "b1": products(pqb * Sb)}
        if unit:
            coef["c1"] = (qb * Sb * Sb).sum(-1)[:, None]
            coef["c2"] = (qb * Sb * sz).sum(-1)[:, None]
        else:
            coef["c1"] = products(qb * Sb * Sb, True)
            coef["c2"] = products(qb * Sb * sz, True)
        if common:
            coef.update(shared)
        else:
            coef["a2"], coef["b2"] = products(sz), products(pqb * sz)
            coef["c3"] = (qb * sz * sz).sum(-1)[:, None] if unit else products(qb * sz * sz, True)
            pr = present[rows]
            coef["const"] = _constant_draws(products(pr), products(pr, True), pr)
            coef["p_inf"] = coef["const"].mean(axis=-1)
        coef["s_obs"] = s_obs[rows][:, None]
        coef["s2"] = s2[rows][:, None]
        coef["n"] = n[rows][:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            m_c = np.where(sz > 0, D[rows] / np.where(sz > 0, sz, 1.0), np.nan)  # cluster means
        coef["m_c"] = np.broadcast_to(m_c, (len(rows), C))
        for j in range(0, len(rows), inner):
            sub = {k: (v[j:j + inner] if v.shape[0] > 1 else v) for k, v in coef.items()}
            r = rows[j:j + inner]
            p_out[r], ci = _solve_block(sub, null[r] - ybar[r], ybar[r], scale[r], alpha, B, interval)
            if interval:
                ci_out[r] = ci
    return WildBootstrap(p_value=p_out, ci=ci_out, weights=scheme, draws=int(reported), exact=bool(exact))


#: target number of (row, draw) elements per array in the inner evaluation loop: cache-sized, and
#: small enough that glibc serves its temporaries from the heap, not one mmap each (2**15 paged
#: them in and out: a 30-model, 8-cluster report took 3.0 s of system time, 0.3 s at 2**14)
_INNER_ELEMENTS = 2**14
#: bisection stops when the bracket is narrower than this many standard errors
_CI_TOL = 1e-6


def _constant_draws(m1, m2, present):
    """Which weight vectors are constant on each row's present clusters: (rows, B).

    ``m1 = V·present``, ``m2 = V²·present``; by Cauchy–Schwarz
    ``(Σ v)² = C_r Σ v²`` iff v is constant there (the weights are a few
    exact values, so the test is exact up to rounding).  Such a draw
    reproduces the data's |t| exactly at every null (the null cancels from
    the residuals: t* = ±t), so it is counted as a tie by construction rather
    than through a tolerance, which the cancellation in the cluster-sum
    products can beat (EvalPerf: two cluster means 0.31448 and 0.31438,
    t = 7,249).  As the null goes to ±inf the restricted bootstrap t* stays
    finite except for these draws, so their share is the limit of the p-value.
    """
    cnt = present.sum(axis=-1)[:, None]
    return np.abs(m2 * cnt - m1 * m1) <= 1e-9 * m2 * cnt


def _share(c, delta, B):
    """Bootstrap p at nulls ȳ + δ for the rows of ``c``; δ has shape (..., r).

    ``|t*| ≥ |t|`` with ``t*² = N²/(Q − 2NK + s2 N²)`` and ``t² = (nδ)²/s_obs``
    is tested without division as ``N (N (s_obs − τ s2) + 2 τ K) ≥ τ Q`` with
    ``τ = (nδ)² (1 − TIE_RTOL)``.
    """
    d = np.asarray(delta, dtype=float)[..., None]
    tau = (c["n"] * d) ** 2 * (1.0 - TIE_RTOL)
    N = c["a1"] - d * c["a2"]
    K = c["b1"] - d * c["b2"]
    K *= 2.0 * tau
    lhs = N * (c["s_obs"] - tau * c["s2"])
    lhs += K
    lhs *= N
    Q = c["c1"] - 2.0 * d * c["c2"] + d * d * c["c3"]
    Q *= tau
    return np.count_nonzero((lhs >= Q) | c["const"], axis=-1) / B


def _solve_block(c, delta0, ybar, sc, alpha, B, interval):
    """p-value at δ0 and (if ``interval``) the inverted interval for one block of rows."""
    p = _share(c, delta0, B)
    if not interval:
        return p, None
    r = len(ybar)
    side = np.array([-1.0, 1.0])[:, None]
    lo = np.zeros((2, r))                        # distances (in SEs) known not rejected
    hi = np.full((2, r), 2.0)
    unbounded = np.broadcast_to(c["p_inf"] >= alpha, (2, r)).copy()
    found = unbounded.copy()
    for _ in range(64):                          # expansion: double until rejected
        rejected = (_share(c, side * hi * sc, B) < alpha) & ~found
        found |= rejected
        if found.all():
            break
        lo = np.where(found, lo, hi)
        hi = np.where(found, hi, 2.0 * hi)
    unbounded |= ~found
    for _ in range(200):                         # bisection: lo not rejected, hi rejected
        active = ~unbounded & (hi - lo > _CI_TOL)
        if not active.any():
            break
        mid = 0.5 * (lo + hi)
        ok = _share(c, side * mid * sc, B) >= alpha
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    end = ybar + np.where(unbounded, np.inf, lo) * side * sc
    # The p-value can jump up at a cluster mean m_c = D_c/n_c: there U_c = 0 and
    # every flip of v_c ties with the data.  If such a point lies in the final
    # bracket and is not rejected it is the endpoint, so that "null outside the
    # interval" and "p(null) < 1 − level" agree (e.g. at 0 for 0/1 differences).
    m_c = c["m_c"]
    d_c = m_c - ybar[:, None]                                # δ of each cluster mean
    with np.errstate(invalid="ignore"):
        x_c = side[:, :, None] * d_c[None] / sc[None, :, None]  # (2, r, C) in SEs
        inside = (x_c >= lo[..., None]) & (x_c <= hi[..., None]) & ~unbounded[..., None]
    has = inside.any(axis=-1)
    if has.any():
        pick = np.argmax(np.where(inside, x_c, -np.inf), axis=-1)[..., None]   # outermost
        cand = np.take_along_axis(np.broadcast_to(d_c, (2,) + d_c.shape), pick, -1)[..., 0]
        cand = np.where(has, cand, side * lo * sc)
        take = has & (_share(c, cand, B) >= alpha)
        m_pick = np.take_along_axis(np.broadcast_to(m_c, (2,) + m_c.shape), pick, -1)[..., 0]
        end = np.where(take, m_pick, end)
    return p, end.T
