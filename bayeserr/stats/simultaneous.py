"""Joint inference over a family of pairs: bootstrap draws of every pair's t
statistic at once, Romano–Wolf step-down adjusted p-values and simultaneous
(``max |t|``) intervals (``docs/methods.md`` §3.9).

The pairs of a leaderboard share questions and clusters, so their t statistics
are dependent; Holm and Bonferroni ignore that and, with few clusters, cannot
reach ``p < α / (number of pairs)`` at all.  Here the joint distribution of the
family's t statistics is simulated once and every adjustment is read from it:

* with clusters, the **wild cluster bootstrap applied jointly**: one vector of
  cluster weights ``v`` serves every pair (Rademacher, or Webb's six-point
  weights with few clusters; all vectors enumerated when there are few), with
  each pair's null imposed (restricted residuals, WCR: cluster sums
  ``U_c = D_c``)::

      t*(v) = Σ_c v_c U_c / sqrt( Σ_c q_c S*_c² ),  S*_c = v_c U_c − p_c Σ_k v_k U_k

  the CR2 t statistic of the bootstrap data (q_c = 1/(1 − p_c), p_c = n_c/n;
  the formula of :func:`bayeserr.stats.fewclusters.wild_cluster_bootstrap`);
* without clusters, a **parametric bootstrap**: model means
  ``Z ~ N(0, Σ)`` with ``Σ`` the estimated covariance of the means, and
  ``t*_k = (Z_a − Z_b) / sd(Z_a − Z_b)``.

Romano & Wolf (2005, *Econometrica* 73:1237; 2016, *Stat. Prob. Letters*
113:38) step-down: the hypotheses are one-sided and directional — "A > B" and
"B > A" for every pair — so that rejecting one is a claim about the order,
with the family-wise error (of any false claim) held at α, as the rank
intervals of Mogstad, Romano, Shaikh & Wilhelm (2024) require.  Ordered by
their statistic ``t_(1) ≥ t_(2) ≥ …``, hypothesis ``(j)`` gets::

    p_(j) = max_{i ≤ j}  share of draws with  max_{l ≥ i} t*_(l) ≥ t_(i)

A pair's adjusted p is that of the direction its estimate points to.  Pairs
with few clusters have heavy-tailed t statistics, so every t (observed and
bootstrap) is first put on a normal scale by its own df (:func:`to_z`).  The
simultaneous interval of pair k is ``d_k ± c_k · SE_k`` where ``c_k`` is the
``level`` quantile of ``max |z*|`` over the family, taken back to pair k's t
scale; since it comes from the same draws, an interval that excludes 0
belongs to a pair the step-down declares different.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from bayeserr.stats.fewclusters import _RADEMACHER, _WEBB, _choose_weights, _p_q

#: bootstrap draws when the weight vectors are not enumerated (and of the
#: parametric bootstrap); the Monte Carlo SE of a p-value near 0.05 is 0.003
DRAWS = 4999
#: weight vectors are enumerated (all of them, both signs) up to this many
ENUMERATE = 10_000
#: relative tolerance for ties of a bootstrap statistic with the observed one, in the
#: single precision the step-down runs in (the constant weight vectors reproduce it)
_TIE_RTOL32 = 1e-5
#: draws per block, so that the (draws × hypotheses) arrays stay in the cache between the
#: dozen elementwise passes over them: 2**17 cells (1 MiB of float64) rather than 4M (32 MiB)
#: cut the 1M-row report by 0.2 CPU s, on LiveBench too (the blocks' results are the same)
_BLOCK_CELLS = 2**17


@dataclass(frozen=True)
class JointDraws:
    """How the joint distribution was simulated."""

    method: str  #: "wild_cluster" or "gaussian"
    weights: str | None  #: "rademacher" / "webb" (wild), None (gaussian)
    draws: int  #: weight vectors (or normal draws) the p-values are shares of
    exact: bool  #: every weight vector enumerated
    min_p: float  #: the smallest adjusted p-value the draws can give

    def to_dict(self) -> dict:
        return {"method": self.method, "weights": self.weights, "draws": self.draws,
                "exact": self.exact, "min_p": self.min_p}


# --------------------------------------------------------------------------- #
# draws
# --------------------------------------------------------------------------- #
def _weights(C: int, scheme: str, draws: int, seed: int):
    """``(blocks, B, exact)``: ``blocks(step)`` iterates over the B weight vectors (each C
    long) in blocks of ``step``; ``exact``: they are all of them (both signs).  Drawn
    vectors come block by block from one generator started afresh on each pass — the
    bounded integers take one number of the stream each, so the blocks are the rows of one
    (B, C) draw (a test checks it) without its two B × C arrays (40 MB at 500 clusters)."""
    table = _RADEMACHER if scheme == "rademacher" else _WEBB
    k = len(table)
    if C * np.log(k) <= np.log(ENUMERATE) + 1e-12:
        idx = np.arange(k**C, dtype=np.int64)
        digits = (idx[:, None] // (k ** np.arange(C - 1, -1, -1, dtype=np.int64))) % k
        V = table[digits]
        return (lambda step: (V[i:i + step] for i in range(0, len(V), step))), len(V), True

    def drawn(step):
        rng = np.random.default_rng(seed)
        for start in range(0, draws, step):
            yield table[rng.integers(0, k, size=(min(step, draws - start), C))]

    return drawn, draws, False


@functools.lru_cache(maxsize=8)
def _triu(M: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(M, 1)``, built once per M (``column_differences`` runs per block)."""
    ta, tb = np.triu_indices(M, 1)
    ta.flags.writeable = tb.flags.writeable = False
    return ta, tb


def column_differences(X, ia, ib):
    """``X[:, ia] − X[:, ib]``, (b, P): the pairs ``(ia, ib)`` of X's columns.

    Every pair in the order of ``np.triu_indices(M, 1)`` (a report's pairs) is written a
    model at a time, ``X[:, [a]] − X[:, a+1:]``, with no gathered copies: 3.5 ms against
    8.2 ms at 808 × 4,950 cells; other pairs through ``np.take`` (8× faster than
    ``X[:, ia]`` there).  The same subtractions either way."""
    M = X.shape[1]
    if len(ia) == M * (M - 1) // 2 and M > 1:
        ta, tb = _triu(M)
        if np.array_equal(ia, ta) and np.array_equal(ib, tb):
            out = np.empty((X.shape[0], len(ia)), X.dtype)
            pos = 0
            for a in range(M - 1):
                np.subtract(X[:, a:a + 1], X[:, a + 1:], out=out[:, pos:pos + M - 1 - a])
                pos += M - 1 - a
            return out
    return np.take(X, ia, axis=1) - np.take(X, ib, axis=1)


def _products(U, pq, V, parts=None):
    """``N = V Uᵀ`` and ``K = V (pq·U)ᵀ``, (B, P).  ``parts = (S, ia, ib, w)``: every row is
    ``U = S[ia] − S[ib]`` (per-model cluster sums S, M × C) and every row of ``pq`` is ``w``
    (one set of cluster sizes), so both products are differences of the M models'
    products — M columns multiplied instead of P = M(M − 1)/2 pairs (1M rows, 100 models,
    500 clusters: 0.25 instead of 1.2 CPU s; equal up to rounding, 1e-15 of the sums)."""
    if parts is None:
        return V @ U.T, V @ (pq * U).T
    S, ia, ib, w = parts
    return column_differences(V @ S.T, ia, ib), column_differences(V @ (w * S).T, ia, ib)


def _t_star(U, pq, qUU, s2, V, unit: bool = False, parts=None):
    """Bootstrap t of every row (P, C) for the weights V (B, C): (B, P).
    ``qUU``: ``q·U²`` (P, C), or with ``unit`` (the weights are ±1, Rademacher) the rows'
    constant ``Σ q U²`` (1, P), which then needs no product; ``parts``: as ``_products``."""
    N, K = _products(U, pq, V, parts)
    Q = qUU if unit else (V * V) @ qUU.T
    # N / sqrt(max(Q − 2NK + s2·N², 0)), the same operations in the same order, in place: two
    # (B, P) buffers instead of six (the 1M-row report's 4,999 × 4,950 draws: 0.33 → 0.2 CPU s)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.multiply(2, N)
        out *= K
        np.subtract(Q, out, out=out)
        square = np.multiply(s2, N)
        square *= N
        out += square
        np.maximum(out, 0.0, out=out)
        np.sqrt(out, out=out)
        return np.divide(N, out, out=out)


def wild_draws(D, sizes, *, level: float = 0.95, draws: int = DRAWS, seed: int = 0,
               weights: str = "auto", variance: str = "cr2", models=None):
    """Joint wild cluster bootstrap of P rows from their cluster sums.

    ``D`` (P, C): cluster sums of each row's values (a pair's differences);
    ``sizes`` (P, C): questions per cluster (0: absent).  ``models = (S, ia, ib)``
    (optional): ``D`` is ``S[ia] − S[ib]`` for per-model cluster sums ``S`` and every
    row of ``sizes`` is the same (complete data), which makes the products per model
    (``_products``).  Returns ``(blocks, info)``: ``blocks()`` yields (b, P) arrays of
    bootstrap t statistics under each row's null, over blocks of weight vectors shared by
    every row; rows with fewer than two clusters are NaN.
    """
    D = np.asarray(D, float)
    sizes = np.broadcast_to(np.asarray(sizes, float), D.shape)
    # complete data (``models``): every row has the same sizes, so the per-cluster
    # quantities are computed once, on one row (1M rows: 4,950 × 500 cells, 0.15 CPU s)
    one = sizes[:1] if models is not None else sizes
    present = one > 0
    D = D if present.all() else np.where(present, D, 0.0)  # no P × C copy when every cluster is present
    c_row = np.broadcast_to(present.sum(axis=1), D.shape[:1])
    n, p, q = _p_q(one)
    q = np.where(present, 1.0 if variance == "cr1" else q, 0.0)
    p = np.where(present, p, 0.0)
    s2 = (p * p * q).sum(axis=1)
    cols = np.flatnonzero(present.any(axis=0))
    valid = c_row >= 2
    scheme = _choose_weights(weights, int(c_row[valid].min()) if valid.any() else 2, level)
    weight_blocks, B, exact = _weights(len(cols), scheme, draws, seed)
    ties = 2 if scheme == "rademacher" else 6  # constant weight vectors reproduce |t|
    info = JointDraws("wild_cluster", scheme, B, exact, (ties / B) if exact else 1.0 / B)
    D = D if len(cols) == D.shape[1] else D[:, cols]
    pq, q = (p * q)[:, cols], q[:, cols]
    parts = None if models is None else (np.asarray(models[0], float)[:, cols], models[1], models[2], pq[0])
    bad = ~valid | ~np.isfinite(D).all(axis=1) | ~np.isfinite(q).all(axis=1)
    # a bad row's draws are NaN whatever its values: zeroing its non-finite entries (not
    # its whole row) leaves every other row's draws as they are
    D = np.where(bad[:, None], 0.0, D) if bad.any() else D
    pq, q = (np.where(np.isfinite(x), x, 0.0) for x in (pq, q))
    unit = scheme == "rademacher"
    qUU = q * D * D
    qUU = qUU.sum(axis=1)[None, :] if unit else qUU  # Σ q U², once for every block
    step = max(1, _BLOCK_CELLS // max(1, D.shape[0]))

    def blocks():
        for V in weight_blocks(step):
            r = _t_star(D, pq, qUU, s2, V, unit=unit, parts=parts)
            r[:, bad] = np.nan
            yield r

    return blocks, info


def psd_root(cov, order=None) -> tuple[np.ndarray, np.ndarray]:
    """``(R, back)``: a square root ``R Rᵀ`` of ``cov`` (non-finite entries 0, made
    symmetric, negative eigenvalues clipped to 0) in the models' ``order`` (a
    canonical order, e.g. by name), and the permutation back to the given order:
    ``(z @ R.T)[:, back]`` for standard normal ``z`` are draws of ``N(0, cov)`` that
    do not depend on the order the models come in."""
    cov = np.asarray(cov, float)
    cov = np.where(np.isfinite(cov), cov, 0.0)
    cov = (cov + cov.T) / 2
    order = np.arange(len(cov)) if order is None else np.asarray(order)
    val, vec = np.linalg.eigh(cov[np.ix_(order, order)])
    return vec * np.sqrt(np.clip(val, 0.0, None)), np.argsort(order)


def gaussian_draws(cov, ia, ib, *, draws: int = DRAWS, seed: int = 0, z=None, order=None):
    """Parametric bootstrap of the pairs ``(ia[k], ib[k])``: model means
    ``Z ~ N(0, cov)`` (``cov`` the M×M covariance of the means, made positive
    semi-definite by clipping negative eigenvalues) and
    ``t*_k = (Z_a − Z_b) / sd(Z_a − Z_b)``.  ``z``: the (draws, M) draws of Z
    to use instead (tests pass their own).  ``order``: a canonical order of
    the models (e.g. by name) in which Z is drawn, so that the draws of a
    pair do not depend on the order the models come in.  Same interface as
    :func:`wild_draws`."""
    cov = np.asarray(cov, float)
    root, back = psd_root(cov, order)
    c = (root @ root.T)[np.ix_(back, back)]
    sd = np.sqrt(np.maximum(c[ia, ia] + c[ib, ib] - 2 * c[ia, ib], 0.0))
    with np.errstate(divide="ignore"):
        inv = np.where(sd > 0, 1.0 / sd, np.nan)
    given = None if z is None else np.asarray(z, float)
    if given is not None:
        draws = len(given)
        sd = np.sqrt(np.maximum(cov[ia, ia] + cov[ib, ib] - 2 * cov[ia, ib], 0.0))
        with np.errstate(divide="ignore"):
            inv = np.where(sd > 0, 1.0 / sd, np.nan)
    info = JointDraws("gaussian", None, int(draws), False, 1.0 / draws)
    step = max(1, _BLOCK_CELLS // max(1, len(ia)))

    def blocks():
        rng = np.random.default_rng(seed)
        for start in range(0, draws, step):
            if given is not None:
                zb = given[start:start + step]
            else:
                zb = (rng.standard_normal((min(step, draws - start), len(root))) @ root.T)[:, back]
            yield column_differences(zb, ia, ib) * inv

    return blocks, info


# --------------------------------------------------------------------------- #
# balancing: every pair's t on one scale
# --------------------------------------------------------------------------- #
def to_z(t, df):
    """Wallace's (1959) normal equivalent of a t statistic on ``df`` degrees
    of freedom, ``sign(t) · (8ν + 1)/(8ν + 3) · sqrt(ν · ln(1 + t²/ν))``
    (identity for ν = ∞).

    Pairs with few clusters have heavy-tailed t statistics; on the raw t
    scale the maximum over a family would be decided by them alone.  Any
    increasing transform of each pair's statistic, applied to the observed
    and the bootstrap values alike, keeps the step-down valid (the bootstrap
    gives the joint distribution of whatever statistics are used); this one
    puts every pair on about the same scale (the 97.5% point of t on 3 df
    maps to 1.948), so each pair weighs about equally in the maximum.
    """
    t = np.asarray(t, float)
    df = np.broadcast_to(np.asarray(df, float), t.shape[-1:])
    finite = np.isfinite(df)
    if not finite.any():
        return t
    nu = np.where(finite, df, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        # sign(t) · c · sqrt(ν · log1p(t²/ν)), c = (8ν + 1)/(8ν + 3): the same products, in place
        z = t * t
        z /= nu
        np.log1p(z, out=z)
        z *= nu
        np.sqrt(z, out=z)
        z *= (8 * nu + 1) / (8 * nu + 3)
        np.copysign(z, t, out=z)
    return z if finite.all() else np.where(finite, z, t)


def from_z(z, df):
    """The t on ``df`` whose :func:`to_z` is ``z`` (z ≥ 0)."""
    z = np.asarray(z, float)
    df = np.asarray(df, float)
    nu = np.where(np.isfinite(df), df, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        w = z * (8 * nu + 3) / (8 * nu + 1)
        t = np.sqrt(nu * np.expm1(w * w / nu))
    return np.where(np.isfinite(df), t, z)


# --------------------------------------------------------------------------- #
# step-down and simultaneous intervals
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class FamilyResult:
    """Joint inference over one family of pairs (indices into the rows)."""

    rows: np.ndarray  #: the rows (pairs) of the family
    p_adjusted: np.ndarray  #: Romano–Wolf p of each row, in the direction of its estimate
    critical: float  #: the ``level`` quantile of ``max |z*|`` (:func:`to_z` scale)
    critical_t: np.ndarray  #: per row, that critical value on the row's t scale (interval: d ± c_t·SE)


class _Batch:
    """Running step-down counts of F families of equal size over blocks of
    draws, as (F, 2R) arrays (the two directions of each of R pairs).

    Hypotheses are kept in ascending order of their statistic, so that the
    maximum over the hypotheses at or below one's statistic (the step-down's
    "remaining" set) is a running maximum along the last axis."""

    def __init__(self, families, z, floor: float = 0.0):
        rows = [np.asarray(r, dtype=np.int64) for r in families]
        self.rows = [r[~np.isnan(z[r])] for r in rows]
        R = max((len(r) for r in self.rows), default=0)
        F, P = len(self.rows), len(z)
        pad = np.full((F, R), 2 * P, dtype=np.int64)  # 2P: a column of NaN draws (never counted)
        for f, r in enumerate(self.rows):
            pad[f, :len(r)] = r
        # hypothesis h < P: "row h: A > B" (statistic z); P + h: "row h: B > A" (statistic −z)
        both = np.concatenate([pad, np.where(pad < 2 * P, pad + P, pad)], axis=1)
        zz = np.concatenate([z, -z, [np.nan]])
        stat = np.where(np.isnan(zz[both]), -np.inf, zz[both])
        order = np.argsort(stat, axis=1, kind="stable")
        stat = np.take_along_axis(stat, order, axis=1)
        hyp = np.take_along_axis(both, order, axis=1)
        # hypotheses with a statistic ≤ floor are not counted: they only enter the running
        # maximum, through one reduction (their p is reported as 1).  floor 0: they are never
        # rejected anyway (p ≥ ½); a family whose p-values only decide (ranks) may set a
        # higher floor below which no hypothesis can be rejected (see joint_inference)
        self.split = int((stat <= floor).sum(axis=1).min()) if F else 0
        self.low, self.hyp, self.stat = hyp[:, :self.split], hyp[:, self.split:], stat[:, self.split:]
        finite = np.isfinite(self.stat)
        self.thresh = np.where(finite, self.stat - _TIE_RTOL32 * np.abs(np.where(finite, self.stat, 0.0)),
                               np.where(self.stat > 0, np.inf, np.nan)).astype(np.float32)
        self.count = np.zeros(self.stat.shape)
        self.maxima = []

    def add(self, both):
        """``both``: (b, 2P + 1) draws of the statistics, then their negatives, then NaN."""
        step = max(1, _BLOCK_CELLS // max(1, self.hyp.size + self.low.size))
        for lo in range(0, len(both), step):
            block = both[lo:lo + step]  # columns gathered by np.take (faster: column_differences)
            first = (np.fmax.reduce(np.take(block, self.low, axis=1), axis=-1) if self.split else
                     np.full((len(block), len(self.rows)), np.nan, np.float32))
            a = np.concatenate([first[..., None], np.take(block, self.hyp, axis=1)], axis=-1)  # (b, F, 1 + H)
            running = np.fmax.accumulate(a, axis=-1)                          # NaN skipped
            self.count += (running[..., 1:] >= self.thresh).sum(axis=0)
            # max |z*| over the family's rows is the running maximum's last value: its
            # hypotheses are both directions (z, −z) of those rows (no second gather); a copy,
            # as a view would keep every block's running maxima alive (100 MB at 1M rows)
            self.maxima.append(running[..., -1].copy())

    def results(self, n_rows: int, B: int, level: float, df) -> list:
        # step-down: p of the j-th largest = max over the larger ones (descending running max)
        p = np.maximum.accumulate((self.count / B)[:, ::-1], axis=1)[:, ::-1]
        p = np.concatenate([np.ones(self.low.shape), p], axis=1)
        hyp = np.concatenate([self.low, self.hyp], axis=1)
        maxima = np.concatenate(self.maxima) if self.maxima else np.empty((0, len(self.rows)))
        out = []
        for f, rows in enumerate(self.rows):
            # a pair's p is that of its estimate's direction (the smaller of its two)
            p_row = np.full(2 * n_rows + 1, np.inf)
            np.minimum.at(p_row, hyp[f], p[f])
            p_pair = np.minimum(p_row[rows], p_row[rows + n_rows])
            m = maxima[:, f]
            m = np.where(np.isnan(m), -np.inf, m)
            crit = float(np.quantile(m, level, method="higher")) if len(rows) else np.nan
            out.append(FamilyResult(rows, p_pair, crit, from_z(np.full(n_rows, crit), df)))
        return out


def joint_inference(t, df, blocks, B: int, families, level: float, decide_only=()) -> list[FamilyResult]:
    """Romano–Wolf adjusted p-values and simultaneous critical values of each
    family (a list of row-index arrays into ``t``), from one pass over the
    draws of ``blocks()`` (:func:`wild_draws` or :func:`gaussian_draws`).

    Statistics are compared on the :func:`to_z` scale of each row's ``df``
    (``inf``: as they are).  Both the step-down and the simultaneous critical
    value use the null-imposed draws, so a simultaneous interval that excludes
    0 always belongs to a pair the step-down declares different.  Rows with an
    undefined statistic (NaN) are left out of every family.  Identical
    families are computed once, and families of equal size together.

    ``decide_only``: positions of families whose adjusted p-values only need
    to say whether they are below ``1 − level`` (the rank intervals' families).
    A hypothesis whose statistic is below the one-sided normal quantile at
    ``4 (1 − level)`` (z < 0.84 at 95%) is then not counted and reported as 1
    — its adjusted p is at least its own marginal bootstrap share, about
    four times ``1 − level`` — while it still enters the maximum of the
    others.  Skipping can only lose a rejection, never add one, so the error
    rate holds whatever the bootstrap's shape.  At LiveBench's size this
    cuts the work of the 93 per-model families."""
    t = np.asarray(t, float)
    df = np.broadcast_to(np.asarray(df, float), t.shape)
    z = to_z(t, df)
    from scipy.special import ndtri
    floor_decide = float(-ndtri(min(4 * (1 - level), 0.5)))
    floors = [floor_decide if i in set(decide_only) else 0.0 for i in range(len(families))]
    keys = [(np.asarray(rows, dtype=np.int64).tobytes(), f) for rows, f in zip(families, floors)]
    unique = dict(zip(keys, families))
    by_size = {}
    for k, rows in unique.items():
        by_size.setdefault((len(rows), k[1]), []).append(k)
    batches = [(ks, _Batch([unique[k] for k in ks], z, floor)) for (_, floor), ks in by_size.items()]
    P = len(t)
    for restricted in blocks():
        both = np.empty((len(restricted), 2 * P + 1), np.float32)  # z, −z, NaN
        both[:, :P] = to_z(restricted, df)
        np.negative(both[:, :P], out=both[:, P:2 * P])
        both[:, 2 * P] = np.nan
        for _, batch in batches:
            batch.add(both)
    done = {}
    for ks, batch in batches:
        done.update(zip(ks, batch.results(len(t), B, level, df)))
    return [done[k] for k in keys]


# --------------------------------------------------------------------------- #
# Holm and Benjamini–Hochberg
# --------------------------------------------------------------------------- #
# By hand rather than statsmodels' multipletests: a report adjusts one family
# per model for the marginal rank intervals (93 at LiveBench's size), and
# multipletests runs gc.collect() on every call (20 ms each, 2 s in all).  The
# tests check both against multipletests.
def holm(p: np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values: the j-th smallest times
    (m − j + 1), made monotone, capped at 1."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.minimum(np.maximum.accumulate(p[order] * (m - np.arange(m))), 1.0)
    out = np.empty(m)
    out[order] = adj
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg (1995) step-up adjusted p-values: the j-th smallest
    times m / j, made monotone from the largest down, capped at 1."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out
