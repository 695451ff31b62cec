"""Hierarchical Beta–Binomial with cluster random effects (SPEC §5.2).

Model (two levels; groups are clusters, or questions when each question was
answered K > 1 times)::

    μ ~ Beta(1, 1)                     mean accuracy of a new group (the estimand)
    log κ ~ Normal(2.5, 1.5)           concentration; ICC of answers = 1/(1 + κ)
    θ_g ~ Beta(μκ, (1 − μ)κ)           group accuracy
    k_g ~ Binomial(N_g, θ_g)           right answers of N_g in group g

Why these priors: μ is uniform, as the conjugate model's default; κ is
weakly informative on the log scale: its central 95% (κ from 0.64 to 230)
spans intra-cluster correlations 1/(1 + κ) from 0.004 (clusters barely
matter) to 0.61 (a cluster is nearly one observation), while
keeping the posterior proper when there are few groups (the flat prior on
κ is not).  Change them with :class:`HierarchicalPrior`.

Two fits of the same model:

* :func:`fit_exact` (one data set) and :func:`batch_intervals` (many data
  sets at once) — no sampler.  With θ integrated out, ``k_g`` is
  Beta–Binomial and the posterior has only two parameters, so it is computed
  on a grid over ``(logit μ, log κ)``.  Both run the same code
  (``_grid_posteriors``): a coarse pass over the prior box finds the
  mass, zoom passes shrink the box to where the posterior exceeds 1e-9 of
  its maximum until that region spans several grid steps, and a fine pass
  integrates it (trapezoid in log κ; cubic-Hermite cumulative integral and
  inversion in logit μ, so quantiles are fourth-order accurate in the grid
  step), refined where an a-posteriori error estimate exceeds 4e-5 on μ.
  The batched form only lets data sets whose boxes are alike share one
  grid, at the finest step any of them needs.
  The log-gamma sums are grouped by count (see ``_rising_terms``),
  so the cost grows with the largest group size, not with the number of
  groups.
* :func:`fit_mcmc` — PyMC NUTS on the same marginal likelihood (the group
  rates θ_g are then drawn from their conditional Beta posteriors), for
  checking the exact path and as the base of the three-level model.

Besides μ (a new group's mean accuracy), :func:`weighted_mean_intervals` and
:meth:`HierarchicalPosterior.weighted_mean_interval` give the posterior of
the answer-weighted mean accuracy of the observed groups,
``Σ_g N_g θ_g / Σ_g N_g`` — the estimand of the plain score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

#: Cells below this fraction of the maximum posterior density are outside the box
#: (the mass they hold is far below TOLERANCE; tests/test_twins.py compares with a
#: quadrature over a wider box).
MASS_THRESHOLD = 1e-9
#: Default grids: coarse points per axis over the prior box; fine (logit μ, log κ)
#: points over the posterior's box.  Zoom passes use ``_zoom_shape(fine)``.
COARSE = 32
FINE = (96, 32)
#: A box is "resolved" when the mass region spans at least this many grid steps per axis.
RESOLVED_STEPS = 5
#: Data sets share a grid only if it needs at most this many times a single fine grid's points per axis.
SHARE_RATIO = 1.6
#: Target error of the grid on μ's quantiles and mean (a-posteriori estimate, see _refinement).
TOLERANCE = 4e-5
#: Largest change from dropping every other log-κ node that is accepted (see _refinement).
Y_HALF_TOLERANCE = 3e-3
#: Quantiles checked by the refinement (the requested ones are added).
CHECK_QUANTILES = (0.005, 0.025, 0.05, 0.1, 0.5, 0.9, 0.95, 0.975, 0.995)
#: W's conditional law is taken as its Edgeworth expansion when ``|skewness|`` and ``|excess kurtosis|`` are below this.
EDGEWORTH_MAX = 0.1
#: Mixture components of W closer than this × its SD in mean (and in log SD) are merged.
MERGE_WIDTH = 0.02
#: A fine grid whose outermost line holds more than this fraction of the largest line's mass is widened.
EDGE_MASS = 1e-7
#: Largest fine grid per axis after refinement.
MAX_POINTS = (1536, 320)


@dataclass(frozen=True)
class HierarchicalPrior:
    """Priors of μ and κ (see module docstring for the reasoning)."""

    mu_alpha: float = 1.0
    mu_beta: float = 1.0
    log_kappa_mean: float = 2.5
    log_kappa_sd: float = 1.5

    def log_density(self, logit_mu, log_kappa):
        """Log prior density on the ``(logit μ, log κ)`` scale (Jacobian included)."""
        logit_mu = np.asarray(logit_mu, float)
        log_mu = -np.logaddexp(0.0, -logit_mu)  # log μ, stable in both tails
        log_1m = -np.logaddexp(0.0, logit_mu)  # log(1 − μ)
        lp_mu = (self.mu_alpha * log_mu + self.mu_beta * log_1m
                 - special.betaln(self.mu_alpha, self.mu_beta))  # Beta pdf · μ(1 − μ)
        z = (np.asarray(log_kappa, float) - self.log_kappa_mean) / self.log_kappa_sd
        return lp_mu - 0.5 * z * z - np.log(self.log_kappa_sd * np.sqrt(2 * np.pi))

    def box(self) -> np.ndarray:
        """Integration box ``[[lo, hi] of logit μ, [lo, hi] of log κ]``: logit μ
        within ±12 (μ within 6e-6 of 0 or 1), log κ within 6 prior SDs."""
        return np.array([[-12.0, 12.0], [self.log_kappa_mean - 6 * self.log_kappa_sd,
                                         self.log_kappa_mean + 6 * self.log_kappa_sd]])


@dataclass(frozen=True)
class HierarchicalPosterior:
    """Grid posterior of (μ, κ): marginal summaries of μ and draws on demand.

    The grid is uniform on both axes; ``weights`` are the normalized node
    masses (trapezoid weights, which are uniform inside the box because the
    density is negligible at its edges).  ``k`` and ``n`` (the groups' right
    answers and answers, as given) are kept when the fit was made by
    :func:`fit_exact`, for :meth:`weighted_mean_interval`.
    """

    logit_mu: np.ndarray  #: grid (fine pass)
    log_kappa: np.ndarray
    weights: np.ndarray  #: normalized posterior mass, shape (len(logit_mu), len(log_kappa))
    n_groups: int
    n_answers: int
    k: np.ndarray | None = None
    n: np.ndarray | None = None

    @property
    def _mu_mass(self) -> np.ndarray:
        return self.weights.sum(axis=1)

    @property
    def mu_grid(self) -> np.ndarray:
        return special.expit(self.logit_mu)

    @property
    def mean(self) -> float:
        return float(np.sum(self._mu_mass * self.mu_grid))

    @property
    def sd(self) -> float:
        return float(np.sqrt(np.sum(self._mu_mass * (self.mu_grid - self.mean) ** 2)))

    def interval(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed interval of μ: quantiles of the marginal of logit μ from
        its cubic-Hermite cumulative integral (see ``_hermite_quantiles``)."""
        q = np.array([(1 - level) / 2, (1 + level) / 2])
        return special.expit(_hermite_quantiles(self.logit_mu, self._mu_mass[None], q)[0])

    def hdi(self, level: float = 0.95) -> np.ndarray:
        """Highest-density interval of μ (density on the μ scale)."""
        mu = self.mu_grid
        density = self._mu_mass / (mu * (1 - mu))  # mass per logit step -> per μ
        order = np.argsort(density)[::-1]
        keep = order[: np.searchsorted(np.cumsum(self._mu_mass[order]), level) + 1]
        return np.array([mu[keep].min(), mu[keep].max()])

    def sample(self, draws: int = 4000, seed: int = 0) -> dict:
        """Draws of μ and κ: grid cells by mass, jittered uniformly within the cell."""
        rng = np.random.default_rng(seed)
        flat = rng.choice(self.weights.size, size=draws, p=self.weights.ravel())
        i, j = np.unravel_index(flat, self.weights.shape)
        dm = np.diff(self.logit_mu).mean()
        dk = np.diff(self.log_kappa).mean()
        lm = self.logit_mu[i] + rng.uniform(-dm / 2, dm / 2, draws)
        lk = self.log_kappa[j] + rng.uniform(-dk / 2, dk / 2, draws)
        return {"mu": special.expit(lm), "kappa": np.exp(lk)}

    def weighted_mean_moments(self, weights=None) -> tuple[float, float]:
        """Posterior mean and SD of ``W = Σ_g N_g θ_g / Σ_g N_g`` (exact on the
        grid); ``weights`` as in :func:`weighted_mean_intervals`."""
        self._need_data()
        m, v = _weighted_mean_moments(self.logit_mu, self.log_kappa, self.k, self.n, weights)
        w = self.weights.ravel()
        mean = float(w @ m.ravel())
        return mean, float(np.sqrt(max(w @ (v.ravel() + m.ravel() ** 2) - mean ** 2, 0.0)))

    def weighted_mean_interval(self, level: float = 0.95, weights=None) -> np.ndarray:
        """Equal-tailed interval of ``W = Σ_g N_g θ_g / Σ_g N_g``, the estimand of
        the plain score (see :func:`weighted_mean_intervals` for the method)."""
        self._need_data()
        return _weighted_mean_quantiles(self.logit_mu, self.log_kappa, self.weights, self.k, self.n,
                                        np.array([(1 - level) / 2, (1 + level) / 2]), weights)

    def _need_data(self):
        if self.k is None or self.n is None:
            raise ValueError("this posterior was built without its data (k, n); refit with fit_exact")

    def to_inference_data(self, draws: int = 4000, seed: int = 0):
        from bayeserr.models import compat
        d = self.sample(draws, seed)
        post = {"mu": d["mu"][None], "kappa": d["kappa"][None], "icc": 1 / (1 + d["kappa"][None])}
        return compat.from_dict(post, attrs={"model": "hierarchical_beta_binomial", "method": "exact grid"})


# ----------------------------------------------------------------- likelihood on a grid
#: shift above which :func:`log_rising` uses Stirling's series rather than lnΓ differences
STIRLING_SHIFT = 1e6


def log_rising(values, shift) -> np.ndarray:
    """``lnΓ(v + s) − lnΓ(s)`` (the log of the rising factorial ``s (s+1) … (s+v−1)``
    for integer v), elementwise, for ``v ≥ 0``, ``s > 0``, with full precision
    however large ``s`` is.

    Below :data:`STIRLING_SHIFT` it is the difference of ``gammaln`` (exactly as
    before; the error is ~ε·s·log s, a few 10⁻⁹ at most).  Above, where that
    difference would lose every digit (κ = e^49 in a Beta–Binomial: lnΓ ≈ 10²³),
    it is Stirling's form ``(s − ½) log1p(v/s) + v (log(s + v) − 1) + c(s + v) − c(s)``
    with ``c(x) = 1/(12x) − 1/(360x³)`` (the series' next term is < 10⁻³³ there)."""
    v, s = np.asarray(values, float), np.asarray(shift, float)
    if not s.size or s.max() < STIRLING_SHIFT:  # lnΓ(s) once per shift, as the callers did
        return special.gammaln(v + s) - special.gammaln(s)
    v, s = np.broadcast_arrays(v, s)
    big = s >= STIRLING_SHIFT
    out = np.empty(v.shape)
    small = ~big
    out[small] = special.gammaln(v[small] + s[small]) - special.gammaln(s[small])
    vb, sb = v[big], s[big]

    def c(x):
        return 1 / (12 * x) - 1 / (360 * x ** 3)
    out[big] = (sb - 0.5) * np.log1p(vb / sb) + vb * (np.log(sb + vb) - 1) + (c(sb + vb) - c(sb))
    return out


def _counts_above(values: np.ndarray, top: int) -> np.ndarray:
    """``above[..., j]`` = number of groups (last axis) with value > j, for j < top."""
    v = np.atleast_2d(values).astype(np.int64)
    rows = v.shape[0]
    counts = np.bincount((np.arange(rows)[:, None] * (top + 1) + v).ravel(),
                         minlength=rows * (top + 1)).reshape(rows, top + 1)
    above = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][:, 1:].astype(float)
    return above.reshape(np.shape(values)[:-1] + (top,))


def _rising_plan(values: np.ndarray):
    """How :func:`_rising_terms` evaluates ``values``: ``("none"|"counts"|"distinct",
    top, distinct values, inverse)``, and the height of its table."""
    v = np.atleast_2d(np.asarray(values, float))
    if v.size == 0 or not v.any():
        return ("none", 0, None, None), 0
    uniq, inv = np.unique(v, return_inverse=True)
    top = int(uniq[-1])
    if np.all(uniq == np.round(uniq)) and top <= 4 * uniq.size:
        return ("counts", top, uniq, inv), top
    return ("distinct", top, uniq, inv), uniq.size + 1


def _rising_terms(values: np.ndarray, shift: np.ndarray, plan=None):
    """Factors ``(left, right)`` with ``left @ right`` = ``Σ_g [lnΓ(v_rg + shift_p) − lnΓ(shift_p)]``
    for every row r of ``values`` (rows × groups) and grid point p.

    For integer ``v``, ``lnΓ(v + a) − lnΓ(a) = Σ_{j<v} log(a + j)``; grouping
    by j, each ``log(a + j)`` is weighted by the number of groups with
    ``v > j`` (:func:`_counts_above`), so all rows take one matrix product.
    When the largest value is more than 4 times the number of distinct values
    (or the values are not integers), one ``gammaln`` per distinct value
    is used instead.  Zero values contribute nothing, so empty groups drop out.
    """
    v = np.atleast_2d(np.asarray(values, float))
    shift = np.asarray(shift, float)
    kind, top, uniq, inv = (plan or _rising_plan(v))[0]
    if kind == "none":
        return np.zeros((v.shape[0], 0)), np.zeros((0, shift.size))
    if kind == "counts":
        return _counts_above(v, top), np.log(shift[None, :] + np.arange(top)[:, None])
    rows = v.shape[0]
    mult = np.bincount((np.arange(rows)[:, None] * uniq.size + inv.reshape(v.shape)).ravel(),
                       minlength=rows * uniq.size).reshape(rows, uniq.size).astype(float)
    return mult, log_rising(uniq[:, None], shift[None, :])


def _rising_log_sums(values: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``Σ_g [lnΓ(v_rg + shift_p) − lnΓ(shift_p)]``: (rows × points); see :func:`_rising_terms`."""
    left, right = _rising_terms(values, shift)
    return left @ right


def _rising_log_sum(values: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """One data set's :func:`_rising_log_sums` (kept for callers of the old name)."""
    return _rising_log_sums(np.ravel(values)[None], shift)[0]


def _log_posterior(k: np.ndarray, n: np.ndarray, logit_mu, log_kappa,
                   prior: HierarchicalPrior | None) -> np.ndarray:
    """Unnormalized log posterior (log likelihood without the prior when
    ``prior`` is None) of every row of ``k``, ``n`` (rows × groups) on the
    outer grid ``logit_mu × log_kappa``: shape (rows, len(logit_mu), len(log_kappa)).

    The likelihood is ``Σ_g log BetaBinomial(k_g | N_g, μκ, (1 − μ)κ)``
    without binomial coefficients, i.e. ``[lnΓ(k+a) − lnΓ(a)] + [lnΓ(N−k+b) −
    lnΓ(b)] − [lnΓ(N+κ) − lnΓ(κ)]`` with a = μκ, b = (1 − μ)κ; groups with
    N = 0 add 0.  All terms and the prior go through one matrix product.
    """
    logit_mu, log_kappa = np.asarray(logit_mu, float), np.asarray(log_kappa, float)
    plans = [_rising_plan(v) for v in (k, n - k, n)]
    block = max(1, 2 ** 22 // (log_kappa.size * (1 + sum(p[1] for p in plans))))
    if logit_mu.size > block:  # bound the memory of the log-gamma tables on very fine grids
        return np.concatenate([_log_posterior(k, n, logit_mu[i:i + block], log_kappa, prior)
                               for i in range(0, logit_mu.size, block)], axis=1)
    lm, lk = np.meshgrid(logit_mu, log_kappa, indexing="ij")
    kappa = np.exp(lk).ravel()
    a = special.expit(lm).ravel() * kappa
    b = special.expit(-lm).ravel() * kappa  # (1 − μ)κ without cancellation near μ = 1
    terms = [_rising_terms(k, a, plans[0]), _rising_terms(n - k, b, plans[1])]
    left_n, right_n = _rising_terms(n, np.exp(log_kappa), plans[2])  # depends on κ only
    by_kappa = -(left_n @ right_n)[:, None, :]
    if prior is not None:
        by_kappa = by_kappa + prior.log_density(logit_mu[:, None], log_kappa[None, :])[None]
    if k.shape[0] <= 16:  # few rows: the tables dominate, add small products
        out = terms[0][0] @ terms[0][1] + terms[1][0] @ terms[1][1]
    else:  # many rows: one product writes the (rows × points) output once
        out = np.concatenate([terms[0][0], terms[1][0]], axis=1) @ np.concatenate([terms[0][1], terms[1][1]])
    out = out.reshape((-1,) + lm.shape)
    out += by_kappa
    return out


def log_marginal_likelihood(k, n, logit_mu, log_kappa) -> np.ndarray:
    """``Σ_g log BetaBinomial(k_g | N_g, μκ, (1 − μ)κ)`` (binomial coefficients
    dropped) on the outer grid of ``logit_mu`` × ``log_kappa``.  With 2-D ``k``,
    ``n`` (data sets × groups) the result has a leading data-set axis."""
    k = np.asarray(k, float)
    rows = np.atleast_2d(k)
    ll = _log_posterior(rows, np.broadcast_to(np.asarray(n, float), k.shape).reshape(rows.shape),
                        logit_mu, log_kappa, None)
    return ll[0] if k.ndim == 1 else ll


# ----------------------------------------------------------------- grids shared by both paths
def _as_rows(k, n) -> tuple[np.ndarray, np.ndarray]:
    """``k`` and ``n`` as float (data sets × groups) arrays, checked.

    ``n`` may be one row shared by all data sets or one row per data set;
    groups with ``n = 0`` (and ``k = 0``) are allowed and ignored.
    """
    k = np.atleast_2d(np.asarray(k, float))
    n = np.asarray(n, float)
    if n.ndim > 2 or k.ndim > 2:
        raise ValueError("k and n must be 1-D (groups) or 2-D (data sets × groups)")
    try:
        n = np.broadcast_to(n, k.shape)
    except ValueError:
        raise ValueError(f"n of shape {n.shape} does not match k of shape {k.shape}") from None
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise ValueError("k and n must be finite")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= k <= n for every group")
    return k, n


def _distinct_rows(*arrays):
    """Data sets that are the same up to the order of their groups, computed once.

    ``arrays`` are (data sets × groups) arrays describing the groups (k, n
    and possibly weights).  Returns the distinct data sets (groups sorted
    within each) and, for every input row, the index of its distinct row.
    Replicates of a small design repeat often (two clusters of ten answers
    have at most 66 distinct outcomes), and the posterior does not depend on
    the order of the groups.
    """
    order = np.lexsort(arrays[::-1], axis=-1)
    rows = np.arange(arrays[0].shape[0])[:, None]
    canon = np.concatenate([a[rows, order] for a in arrays], axis=1)
    _, first, inverse = np.unique(canon, axis=0, return_index=True, return_inverse=True)
    return [a[first] for a in arrays], inverse.ravel()


def _zoom_shape(fine) -> tuple[int, int]:
    return max(2 * RESOLVED_STEPS, fine[0] // 3), max(2 * RESOLVED_STEPS, fine[1] // 2)


def _mass_boxes(logp: np.ndarray, lm: np.ndarray, lk: np.ndarray, bounds: np.ndarray):
    """Per row: the box of grid nodes above ``MASS_THRESHOLD`` of the maximum,
    one grid step wider on each side (within ``bounds``); whether that region
    spans at least ``RESOLVED_STEPS`` steps on both axes; whether it reaches
    an edge of the grid that is not a bound of the prior box; and the SD of
    the marginal of logit μ on this grid (NaN when under two grid steps).

    A region that reaches such an edge may continue beyond it (a coarser
    pass can miss a ridge narrower than its step, e.g. the large-κ ridge of
    a posterior with little overdispersion), so the box is then widened on
    that side by half its width and the row marked unresolved.
    """
    above = logp > logp.max(axis=(1, 2), keepdims=True) + np.log(MASS_THRESHOLD)
    boxes = np.empty((logp.shape[0], 2, 2))
    resolved = np.ones(logp.shape[0], bool)
    open_edge = np.zeros(logp.shape[0], bool)
    for axis, grid in ((0, lm), (1, lk)):
        hit = above.any(axis=2 - axis)
        first = np.argmax(hit, axis=1)
        last = grid.size - 1 - np.argmax(hit[:, ::-1], axis=1)
        step = grid[1] - grid[0]
        grow = np.maximum(step, (grid[last] - grid[first]) / 2)
        low = (first == 0) & (grid[0] > bounds[axis, 0] + 1e-9)
        high = (last == grid.size - 1) & (grid[-1] < bounds[axis, 1] - 1e-9)
        boxes[:, axis, 0] = np.maximum(grid[first] - np.where(low, grow, step), bounds[axis, 0])
        boxes[:, axis, 1] = np.minimum(grid[last] + np.where(high, grow, step), bounds[axis, 1])
        resolved &= last - first >= RESOLVED_STEPS
        open_edge |= low | high
    f = np.exp(logp - logp.max(axis=(1, 2), keepdims=True)).sum(axis=2)
    f /= f.sum(axis=1, keepdims=True)
    mean = f @ lm
    spread = np.sqrt(np.maximum(f @ lm ** 2 - mean ** 2, 0.0))
    spread[spread < 2 * (lm[1] - lm[0])] = np.nan  # not resolved by this grid
    return boxes, resolved & ~open_edge, open_edge, spread


def _shared_grids(boxes: np.ndarray, shape, max_rows: int):
    """Group rows whose boxes are alike and give each group one uniform grid.

    A group's grid covers the union of its rows' boxes with the finest step
    any row needs (its box width / (points − 1)), so every row is integrated
    at least as finely as alone; a row joins a group only if the grid then
    has at most ``SHARE_RATIO`` times ``shape`` points per axis.  Rows are
    visited sorted by box width (in bins of a factor 1.25) and then by box
    centre, so that neighbours need similar steps.  Yields ``(rows, logit μ
    grid, log κ grid)``.
    """
    lo, hi = boxes[..., 0], boxes[..., 1]
    width = hi - lo
    centre = (lo + hi) / 2
    size_bin = np.floor(np.log(width) / np.log(1.25))
    order = np.lexsort((centre[:, 1], centre[:, 0], size_bin[:, 0], size_bin[:, 1]))
    lo_l, hi_l, width_l = lo.tolist(), hi.tolist(), width.tolist()

    def grid(rows, g_lo, g_hi, g_width):
        axes = []
        for ax in (0, 1):
            step = g_width[ax] / (shape[ax] - 1)
            count = int(np.ceil((g_hi[ax] - g_lo[ax]) / step - 1e-9)) + 1
            axes.append(g_lo[ax] + step * np.arange(count))
        return np.array(rows), axes[0], axes[1]

    rows, g_lo, g_hi, g_width = [], None, None, None
    for r in order.tolist():
        r_lo, r_hi, r_w = lo_l[r], hi_l[r], width_l[r]
        if rows:
            n_lo = (min(g_lo[0], r_lo[0]), min(g_lo[1], r_lo[1]))
            n_hi = (max(g_hi[0], r_hi[0]), max(g_hi[1], r_hi[1]))
            n_w = (min(g_width[0], r_w[0]), min(g_width[1], r_w[1]))
            if (len(rows) < max_rows and n_hi[0] - n_lo[0] <= SHARE_RATIO * n_w[0]
                    and n_hi[1] - n_lo[1] <= SHARE_RATIO * n_w[1]):
                rows.append(r)
                g_lo, g_hi, g_width = n_lo, n_hi, n_w
                continue
            yield grid(rows, g_lo, g_hi, g_width)
        rows, g_lo, g_hi, g_width = [r], r_lo, r_hi, r_w
    if rows:
        yield grid(rows, g_lo, g_hi, g_width)


def _grid_posteriors(k: np.ndarray, n: np.ndarray, prior: HierarchicalPrior, coarse: int = COARSE,
                     fine=FINE, chunk: int = 250, quantiles=()):
    """The posterior of (logit μ, log κ) of every row of ``k``, ``n`` on a grid.

    1. coarse pass: ``coarse × coarse`` nodes over the prior box, one grid
       for all rows;
    2. zoom passes (at most 8): rows whose mass region (density above
       ``MASS_THRESHOLD`` of the maximum) spans fewer than
       ``RESOLVED_STEPS`` steps are re-gridded over their box with
       ``_zoom_shape(fine)`` nodes, until it does;
    3. fine pass: ``fine`` nodes over each row's box (rows with alike boxes
       share a grid, see :func:`_shared_grids`);
    4. refinement (at most 3 more rounds): rows whose a-posteriori error
       estimate (:func:`_refinement`) for μ's mean or its quantiles
       ``CHECK_QUANTILES`` ∪ ``quantiles`` exceeds ``TOLERANCE`` are redone
       on a finer grid; rows whose mass reaches an edge of the box (not a
       prior bound) get a wider box, located again by zoom passes.

    Yields ``(rows, logit μ grid, log κ grid, weights)`` with weights
    (len(rows) × grid) normalized per row, each row once.  The same function
    serves :func:`fit_exact` (one row), :func:`batch_intervals` and
    :func:`weighted_mean_intervals`.
    """
    bounds = prior.box()
    check = np.union1d(CHECK_QUANTILES, quantiles)
    rows_total = k.shape[0]
    boxes = np.empty((rows_total, 2, 2))
    resolved = np.empty(rows_total, bool)
    spread = np.empty(rows_total)
    lm, lk = np.linspace(*bounds[0], coarse), np.linspace(*bounds[1], coarse)
    for start in range(0, rows_total, chunk):
        sl = slice(start, start + chunk)
        boxes[sl], resolved[sl], _, spread[sl] = _mass_boxes(_log_posterior(k[sl], n[sl], lm, lk, prior),
                                                             lm, lk, bounds)
    zoom = _zoom_shape(fine)
    limit = np.maximum(MAX_POINTS, np.asarray(fine, int))
    shape = np.tile(np.asarray(fine, int), (rows_total, 1))
    todo = np.arange(rows_total)
    for round_ in range(4):
        last = round_ == 3
        for _ in range(8):  # zoom passes until every row's box is resolved
            active = todo[~resolved[todo]]
            if not active.size:
                break
            for rows, lm, lk in _shared_grids(boxes[active], zoom, chunk):
                idx = active[rows]
                boxes[idx], resolved[idx], _, spread[idx] = _mass_boxes(
                    _log_posterior(k[idx], n[idx], lm, lk, prior), lm, lk, bounds)
        if round_ == 0:
            # a box much wider than the marginal's SD (heavy tails: few groups) starts finer in logit μ
            shape[:, 0] = _start_points(fine[0], (boxes[:, 0, 1] - boxes[:, 0, 0]) / spread, limit[0])
        redo = []
        for group in np.unique(shape[todo], axis=0):
            members = todo[(shape[todo] == group).all(axis=1)]
            for rows, lm, lk in _shared_grids(boxes[members], tuple(group), chunk):
                idx = members[rows]
                logp = _log_posterior(k[idx], n[idx], lm, lk, prior)
                logp -= logp.max(axis=(1, 2), keepdims=True)
                w = np.exp(logp, out=logp)
                w /= w.sum(axis=(1, 2), keepdims=True)
                open_edge = _open_edges(w, lm, lk, bounds)
                if open_edge.any():
                    with np.errstate(divide="ignore"):
                        wider = _mass_boxes(np.log(w[open_edge]), lm, lk, bounds)[0]
                new_shape = np.minimum(group * _refinement(lm, lk, w, check), limit)
                again = ((new_shape > group).any(axis=1) | open_edge) & (not last)
                if (~again).any():
                    yield idx[~again], lm, lk, w[~again]
                if again.any():
                    shape[idx[again]] = new_shape[again]
                    if open_edge.any():  # mass at an open edge: widen the box, locate it again by zooming
                        boxes[idx[open_edge]], resolved[idx[open_edge]] = wider, False
                    redo.append(idx[again])
        if not redo:
            return
        todo = np.concatenate(redo)


def _start_points(points: int, width_in_sd: np.ndarray, limit: int) -> np.ndarray:
    """Logit-μ points of the first fine pass: ``points`` for a box about 13
    marginal SDs wide (a normal posterior's 1e-9 box), proportionally more
    for wider ones, in steps of 1.5× so that data sets can share grids."""
    ratio = np.nan_to_num(width_in_sd / 13.0, nan=1.0, posinf=8.0)
    factor = np.array([1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0])
    pick = factor[np.minimum(np.searchsorted(factor, ratio * 0.9), factor.size - 1)]
    return np.minimum(np.round(points * pick).astype(int), limit)


def _open_edges(w: np.ndarray, lm: np.ndarray, lk: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Rows whose marginal mass on an outermost grid line (that is not a
    bound of the prior box) exceeds ``EDGE_MASS`` of the largest line's:
    the posterior may continue beyond the box with non-negligible mass."""
    out = np.zeros(w.shape[0], bool)
    for axis, grid in ((0, lm), (1, lk)):
        line = w.sum(axis=2 - axis)
        top = line.max(axis=1)
        if grid[0] > bounds[axis, 0] + 1e-9:
            out |= line[:, 0] > EDGE_MASS * top
        if grid[-1] < bounds[axis, 1] - 1e-9:
            out |= line[:, -1] > EDGE_MASS * top
    return out


def _refinement(lm, lk, w, q) -> np.ndarray:
    """Per row, the factors (logit μ, log κ) by which the grid must be refined
    for the quantiles ``q`` and the mean of μ to be within ``TOLERANCE``.

    A-posteriori estimates from the same nodes: the logit-μ step's error is
    ``|Q(h) − Q(2h)| / 15`` (the Hermite quantile is fourth order; Q(2h) uses
    every other node), which sets the factor ``(error / TOLERANCE)^(1/4)``
    with a margin.  The log-κ integral is a trapezoid sum of a smooth
    function that vanishes at both ends of the box, whose error falls
    geometrically (roughly squares when the step halves), so its step is
    halved when dropping every other node moves a quantile or the mean by
    more than ``Y_HALF_TOLERANCE``: even if the error only squares when the
    step halves (an integrand analytic in a strip), the full step is then
    within ~1e-5.
    """
    def summaries(x, f):
        mean = (f * special.expit(x)).sum(axis=1) / f.sum(axis=1)
        return np.column_stack([special.expit(_hermite_quantiles(x, f, q)), mean])

    rows = w.shape[0]
    f = w.sum(axis=2)
    both = summaries(lm, np.concatenate([f, w[:, :, ::2].sum(axis=2)]))
    full, y_half = both[:rows], both[rows:]
    err_x = np.abs(full - summaries(lm[::2], f[:, ::2])).max(axis=1) / 15
    err_y_half = np.abs(full - y_half).max(axis=1)
    factor = np.ones((w.shape[0], 2), int)
    over = err_x > TOLERANCE
    factor[over, 0] = np.ceil(1.2 * (err_x[over] / TOLERANCE) ** 0.25).astype(int).clip(2, 8)
    factor[err_y_half > Y_HALF_TOLERANCE, 1] = 2
    return factor


def _hermite_quantiles(x: np.ndarray, f: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantiles ``q`` of the densities ``f`` (rows × nodes, any scale) known at
    the uniform nodes ``x``; returns (rows × len(q)).

    The cumulative integral uses the corrected trapezoid rule per cell,
    ``h(f_i + f_{i+1})/2 + h²(f'_i − f'_{i+1})/12`` (the integral of the cubic
    Hermite interpolant of f, f' by central differences), and each quantile
    solves the cubic Hermite interpolant of the CDF (slopes f) within its
    cell (safeguarded Newton).  Both are fourth order in the step, against
    second order for mid-point sums with linear interpolation.
    """
    f = np.atleast_2d(np.asarray(f, float))
    h = x[1] - x[0]
    d = np.empty_like(f)  # f' by central differences (one-sided at the ends, where f is negligible)
    d[:, 1:-1] = (f[:, 2:] - f[:, :-2]) / (2 * h)
    d[:, 0], d[:, -1] = (f[:, 1] - f[:, 0]) / h, (f[:, -1] - f[:, -2]) / h
    cell = np.maximum(h / 2 * (f[:, :-1] + f[:, 1:]) + h * h / 12 * (d[:, :-1] - d[:, 1:]), 0.0)
    cdf = np.concatenate([np.zeros((f.shape[0], 1)), np.cumsum(cell, axis=1)], axis=1)
    total = cdf[:, -1:]
    cdf, f = cdf / total, f / total
    q = np.asarray(q, float)
    idx = np.clip((cdf[:, :, None] <= q[None, None, :]).sum(axis=1) - 1, 0, x.size - 2)
    rows = np.arange(f.shape[0])[:, None]
    c0, c1 = cdf[rows, idx], cdf[rows, idx + 1]
    s0, s1 = h * f[rows, idx], h * f[rows, idx + 1]
    target = np.clip(q[None, :], c0, c1) - c0
    # F(c0 + t h) − c0 = t(s0 + t(A + tB)) on t ∈ [0, 1]: safeguarded Newton from the linear guess
    span = c1 - c0
    A, B = 3 * span - 2 * s0 - s1, -2 * span + s0 + s1
    t = np.where(span > 0, target / np.where(span > 0, span, 1.0), 0.5)
    lo, hi = np.zeros_like(t), np.ones_like(t)
    for _ in range(40):
        val = t * (s0 + t * (A + t * B)) - target
        if np.abs(val).max() <= 1e-14:
            break
        slope = s0 + t * (2 * A + 3 * t * B)
        below = val < 0
        lo, hi = np.where(below, t, lo), np.where(below, hi, t)
        step = t - val / np.where(slope > 0, slope, np.nan)  # NaN: bisect
        t = np.where((step >= lo) & (step <= hi), step, (lo + hi) / 2)
    return x[idx] + h * t


# ----------------------------------------------------------------- one data set
def fit_exact(k, n, prior: HierarchicalPrior = HierarchicalPrior(), *, coarse: int = COARSE,
              fine: tuple[int, int] = FINE) -> HierarchicalPosterior:
    """Posterior of (μ, κ) by deterministic quadrature (no sampler).

    ``k`` and ``n``: right answers and answers per group (groups with
    ``n = 0`` are ignored).  A coarse grid (``coarse`` points per axis) over
    logit μ ∈ [−12, 12], log κ ∈ [μ_κ − 6σ_κ, μ_κ + 6σ_κ] locates the mass,
    zoom passes shrink the box to the cells above 1e-9 of the maximum
    density, and a ``fine`` grid over that box, refined where needed, gives
    the posterior: mean and quantiles of μ within ~4e-5 of the converged
    quadrature (see ``_grid_posteriors``; :func:`batch_intervals` and
    :func:`weighted_mean_intervals` run the same code).
    """
    k, n = _as_rows(np.ravel(k), np.ravel(n))
    (_, lm, lk, w), = _grid_posteriors(k, n, prior, coarse, fine)
    return HierarchicalPosterior(lm, lk, w[0], int((n[0] > 0).sum()), int(n[0].sum()), k=k[0], n=n[0])


def build_pymc_model(k, n, prior: HierarchicalPrior = HierarchicalPrior()):
    """The same two-level model in PyMC, θ integrated out (Beta–Binomial likelihood)."""
    return build_pymc_models([(k, n)], prior)


def build_pymc_models(data, prior: HierarchicalPrior = HierarchicalPrior()):
    """Independent two-level models for several data sets ``[(k, n), …]`` in
    one PyMC model with a ``model`` dimension: one graph, compiled once, for
    every model of a report (the data sets' groups are stacked, each group
    pointing at its model's μ and κ)."""
    from bayeserr.models import compat
    pm = compat.import_pymc()
    k = np.concatenate([np.asarray(kk, float) for kk, _ in data]).astype(int)
    n = np.concatenate([np.asarray(nn, float) for _, nn in data]).astype(int)
    owner = np.repeat(np.arange(len(data)), [len(np.asarray(kk)) for kk, _ in data])
    with pm.Model(coords={"model": list(range(len(data))), "unit": list(range(len(k)))}) as model:
        mu = pm.Beta("mu", prior.mu_alpha, prior.mu_beta, dims="model")
        log_kappa = pm.Normal("log_kappa", prior.log_kappa_mean, prior.log_kappa_sd, dims="model")
        # κ and the ICC are added after sampling (_one_model): a Deterministic
        # costs a compiled function of its own, seconds on an empty compile cache.
        # The likelihood's κ is capped at e^20, where the Beta–Binomial is the
        # binomial and PyMC's betaln differences still hold their digits
        kappa = compat.capped_kappa(log_kappa)
        pm.BetaBinomial("k", n=n, alpha=(mu * kappa)[owner], beta=((1 - mu) * kappa)[owner],
                        observed=k, dims="unit")
    return model


def fit_mcmc(k, n, prior: HierarchicalPrior = HierarchicalPrior(), *, draws: int = 1000,
             tune: int = 1000, chains: int = 2, seed: int = 0, target_accept: float = 0.8,
             progressbar: bool = False, cores: int | None = None):
    """NUTS fit of the two-level model; returns the posterior (``arviz.InferenceData``,
    or ``xarray.DataTree`` under ArviZ 1: :mod:`~bayeserr.models.compat`)
    (``attrs["target_accept"]`` records the setting).

    Group rates ``theta`` are added to the posterior from their conditional
    ``Beta(μκ + k_g, (1 − μ)κ + N_g − k_g)`` given each draw of (μ, κ).
    """
    return fit_mcmc_many([(k, n)], prior, draws=draws, tune=tune, chains=chains, seed=seed,
                         target_accept=target_accept, progressbar=progressbar, cores=cores)[0]


def fit_mcmc_many(data, prior: HierarchicalPrior = HierarchicalPrior(), *, draws: int = 1000,
                  tune: int = 1000, chains: int = 2, seed: int = 0, target_accept: float = 0.8,
                  progressbar: bool = False, cores: int | None = None) -> list:
    """NUTS fits of several data sets ``[(k, n), …]`` from one sampler run
    (:func:`build_pymc_models`: one compilation); one posterior per
    data set, each as :func:`fit_mcmc` returns it (its sampler statistics
    are those of the joint run)."""
    from bayeserr.models import nuts
    with build_pymc_models(data, prior):
        joint = nuts.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, cores=cores,
                          target_accept=target_accept)
    rng = np.random.default_rng(seed)
    return [_one_model(joint, m, np.asarray(k, float), np.asarray(n, float), rng, target_accept)
            for m, (k, n) in enumerate(data)]


def _one_model(joint, m: int, k, n, rng, target_accept: float):
    """Model ``m``'s slice of a joint fit, with its group rates ``theta``."""
    from bayeserr.models import compat
    post = compat.posterior_dataset(joint)[["mu", "log_kappa"]].isel(model=m, drop=True)
    post["kappa"] = np.exp(post["log_kappa"])
    post["icc"] = 1 / (1 + post["kappa"])
    mu, kappa = post["mu"].values[..., None], post["kappa"].values[..., None]
    post["theta"] = (("chain", "draw", "group"), rng.beta(mu * kappa + k, (1 - mu) * kappa + (n - k)))
    return compat.from_datasets(post, compat.group(joint, "sample_stats"),
                                attrs={"target_accept": float(target_accept)})


# ----------------------------------------------------------------- many data sets at once
def batch_intervals(k, n, level: float = 0.95, prior: HierarchicalPrior = HierarchicalPrior(),
                    kappa_points: int | None = None, chunk: int = 250, *, coarse: int = COARSE,
                    fine: tuple[int, int] = FINE) -> np.ndarray:
    """Equal-tailed posterior intervals of μ for many data sets at once: (data sets × 2).

    ``k`` is (data sets × groups); ``n`` is one row of group sizes shared by
    all data sets or one row per data set (sizes may differ between rows;
    pad with ``n = 0``, ``k = 0``: empty groups are ignored).  Same model,
    prior and quadrature as :func:`fit_exact` — the same function computes
    both (``_grid_posteriors``) — so each row's interval agrees with
    ``fit_exact(k[r], n[r]).interval(level)`` to the quadrature error
    (< 1e-4, tests/test_twins.py).  ``kappa_points`` overrides ``fine[1]``;
    ``chunk`` bounds the rows evaluated together (memory).
    """
    k, n = _as_rows(k, n)
    if kappa_points is not None:
        fine = (fine[0], int(kappa_points))
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    (k, n), inverse = _distinct_rows(k, np.ascontiguousarray(n))
    out = np.empty((k.shape[0], 2))
    for rows, lm, _, w in _grid_posteriors(k, n, prior, coarse, fine, chunk, quantiles=q):
        out[rows] = special.expit(_hermite_quantiles(lm, w.sum(axis=2), q))
    return out[inverse]


# ----------------------------------------------------------------- answer-weighted mean of the groups
def weighted_mean_cumulants(logit_mu, log_kappa, k, n, weights=None, order: int = 4, cells=None):
    """The first ``order`` cumulants of ``W = Σ_g c_g θ_g`` given (μ, κ) and
    the data, each on the outer grid (len(logit_mu) × len(log_kappa)), or
    only at the grid ``cells`` = (row indices, column indices) when given.

    ``c_g = weights_g / Σ weights`` (default ``weights = n``: the
    answer-weighted mean); θ_g | μ, κ, data ~ Beta(a_g, b_g) independent, with
    a_g = μκ + k_g, b_g = (1 − μ)κ + N_g − k_g, s_g = a_g + b_g = κ + N_g.  The
    cumulants add: κ_j(W) = Σ_g c_g^j κ_j(θ_g), with the Beta's

        κ1 = a/s,   κ2 = ab / (s² (s + 1)),   κ3 = 2 (b − a) ab / (s³ (s + 1)(s + 2)),
        κ4 = 6 ab [(a − b)² (s + 1) − ab (s + 2)] / (s⁴ (s + 1)² (s + 2)(s + 3)).

    Groups with the same (k, N, c) are summed once; groups with c = 0 (by
    default those with N = 0) are left out.

    For fixed κ the denominators do not depend on μ and the numerators are
    polynomials in μ of degree j, so each cumulant of W is, on every κ line,
    a polynomial of degree j in μ whose coefficients are sums over the groups
    (``_cumulant_polynomials``): the sums over groups are made once per κ
    line, not once per grid cell, and each cell costs a Horner evaluation.
    The polynomials are expanded in μ for cells with μ ≤ ½ and in 1 − μ for
    the others, so that a and b near either end carry no cancellation beyond
    the one in the terms themselves (relative rounding ~1e-15 against the
    per-cell sums; tests/bayes/test_bayes_speed_equivalence.py).
    """
    k, n = np.asarray(k, float), np.asarray(n, float)
    c = n if weights is None else np.broadcast_to(np.asarray(weights, float), n.shape)
    used = c > 0
    triples, mult = np.unique(np.stack([k[used], n[used], c[used] / c[used].sum()], 1), axis=0,
                              return_counts=True)
    kg, ng, cg = triples.T
    logit_mu, log_kappa = np.asarray(logit_mu, float), np.asarray(log_kappa, float)
    if cells is None:
        rows, cols = (x.ravel() for x in np.meshgrid(np.arange(logit_mu.size), np.arange(log_kappa.size),
                                                    indexing="ij"))
    else:
        rows, cols = (np.asarray(x) for x in cells)
    lines, col = np.unique(cols, return_inverse=True)  # the κ lines that have cells
    col = col.ravel()
    coef = np.stack([mult * cg ** (j + 1) for j in range(order)])  # (order, groups)
    low = special.expit(logit_mu)[rows] <= 0.5
    t = np.where(low, special.expit(logit_mu)[rows], special.expit(-logit_mu)[rows])  # μ or 1 − μ
    out = [np.empty(rows.size) for _ in range(order)]
    for flip, sel in ((False, low), (True, ~low)):
        if not sel.any():
            continue
        polys = _cumulant_polynomials(kg, ng, np.exp(log_kappa[lines]), order, flip)
        ts, cs = t[sel], col[sel]
        for j, p in enumerate(polys):
            c_j = p @ coef[j]  # (degree + 1, lines): Σ_g c_g^(j+1) × the group's polynomial
            value = c_j[-1][cs]
            for d in range(c_j.shape[0] - 2, -1, -1):  # Horner
                value = value * ts + c_j[d][cs]
            out[j][sel] = value
    if cells is None:
        return [x.reshape(logit_mu.size, log_kappa.size) for x in out]
    return out


def _cumulant_polynomials(kg, ng, kappa, order: int, flip: bool) -> list:
    """Coefficients of the Beta cumulants of :func:`weighted_mean_cumulants`
    as polynomials in t = μ (or t = 1 − μ with ``flip``) on each κ line:
    ``order`` arrays (degree j + 1, len(kappa), groups), lowest degree first,
    the denominators included.  a = A0 + A1 t and b = B0 + B1 t."""
    kap = kappa[:, None]
    s = kap + ng  # (lines, groups)
    zero = np.zeros_like(s)
    if flip:  # a = (k + κ) − κ t, b = (N − k) + κ t
        A0, A1, B0, B1 = kg + kap, -kap + zero, ng - kg + zero, kap + zero
    else:  # a = k + κ t, b = (N − k + κ) − κ t
        A0, A1, B0, B1 = kg + zero, kap + zero, ng - kg + kap, -kap + zero
    ab = np.stack([A0 * B0, A0 * B1 + A1 * B0, A1 * B1])
    out = [np.stack([A0, A1]) / s]
    if order > 1:
        out.append(ab / (s * s * (s + 1)))
    if order > 2:
        d0, d1 = B0 - A0, B1 - A1  # b − a
        cubic = np.stack([d0 * ab[0], d0 * ab[1] + d1 * ab[0], d0 * ab[2] + d1 * ab[1], d1 * ab[2]])
        out.append(cubic * (2 / (s ** 3 * (s + 1) * (s + 2))))
        inner = np.stack([d0 * d0, 2 * d0 * d1, d1 * d1]) * (s + 1) - ab * (s + 2)  # (a − b)²(s + 1) − ab(s + 2)
        quartic = np.zeros((5,) + s.shape)
        for i in range(3):
            for m in range(3):
                quartic[i + m] += ab[i] * inner[m]
        out.append(quartic * (6 / (s ** 4 * (s + 1) ** 2 * (s + 2) * (s + 3))))
    return out[:order]


def _weighted_mean_moments(logit_mu, log_kappa, k, n, weights=None):
    """Conditional mean and variance of W on the grid (see :func:`weighted_mean_cumulants`)."""
    return tuple(weighted_mean_cumulants(logit_mu, log_kappa, k, n, weights, order=2))


def _pearson_type_one(mean, var, k3, k4):
    """Beta law on ``[lo, lo + width]`` with the given four cumulants (Pearson
    type I, the classical four-moment fit for sums of bounded variables):
    returns ``(p, q, lo, width)``.  With β1 = κ3²/κ2³ and β2 = 3 + κ4/κ2²,
    ``r = p + q = 6 (β2 − β1 − 1) / (6 + 3β1 − 2β2)``, ``p, q = r/2 ∓ r(r + 2)
    √β1 / (2 √(β1 (r + 2)² + 16 (r + 1)))`` (the smaller one on the side of
    the long tail) and ``width = √κ2 √(β1 (r + 2)² + 16 (r + 1)) / 2``.
    Where the cumulants fall outside type I's region (or so close to the
    normal that r overflows) the Beta on [0, 1] with the same mean and
    variance is used instead; with one group both give the group's exact
    Beta law.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b1 = k3 * k3 / var ** 3
        b2 = 3 + k4 / (var * var)
        den = 6 + 3 * b1 - 2 * b2
        r = 6 * (b2 - b1 - 1) / den
        root = np.sqrt(b1 * (r + 2) ** 2 + 16 * (r + 1))
        half = r * (r + 2) / 2 * np.sqrt(b1) / root
        p = np.where(k3 > 0, r / 2 - half, r / 2 + half)
        q = r - p
        width = np.sqrt(var) / 2 * root
        lo = mean - width * p / r
        ok = (den > 0) & (r > 0) & (r < 1e7) & (p > 0) & (q > 0) & np.isfinite(width) & (width > 0)
        size = mean * (1 - mean) / var - 1  # two-moment Beta: p + q (> 0 since Var W < E W (1 − E W))
    return (np.where(ok, p, mean * size), np.where(ok, q, (1 - mean) * size),
            np.where(ok, lo, 0.0), np.where(ok, width, 1.0))


def _merge_components(pi, m, v, k3, k4):
    """Merge mixture components (mass ``pi``, cumulants ``m, v, k3, k4``)
    whose means lie within ``MERGE_WIDTH`` × the mixture's SD of each other
    and whose SDs differ by less than a factor ``exp(MERGE_WIDTH)``,
    keeping each merged group's mass and first four moments exactly
    (moments about the group's mean).  The mixture's CDF changes only at
    second order in the bin width; the number of incomplete-Beta
    evaluations drops several-fold."""
    mean = pi @ m
    spread = np.sqrt(max(pi @ (v + m * m) - mean * mean, 1e-300))
    key_m = np.floor((m - mean) / (MERGE_WIDTH * spread)).astype(np.int64)
    key_s = np.floor(np.log(np.maximum(v, 1e-300)) / (2 * MERGE_WIDTH)).astype(np.int64)
    key = (key_m - key_m.min()) * (key_s.max() - key_s.min() + 1) + (key_s - key_s.min())
    top = int(key.max()) + 1
    if top <= 8 * key.size + 2 ** 20:  # the bins in key order by counting (the same groups as np.unique)
        rank = np.cumsum(np.bincount(key, minlength=top) > 0) - 1
        group = rank[key]
    else:
        group = np.unique(key, return_inverse=True)[1].ravel()
    count = int(group.max()) + 1
    if count == pi.size:
        return pi, m, v, k3, k4
    mass = np.bincount(group, pi, count)
    centre = np.bincount(group, pi * m, count) / mass
    d = m - centre[group]  # each component's mean about its group's mean
    d2 = d * d
    raw = [np.bincount(group, pi * x, count) / mass for x in (
        v + d2, k3 + (3 * v + d2) * d, k4 + 4 * k3 * d + 3 * v * v + (6 * v + d2) * d2)]
    m2, m3, m4 = raw  # central moments of each group (its mean is `centre`)
    return mass, centre, m2, m3, m4 - 3 * m2 * m2


def _weighted_mean_quantiles(logit_mu, log_kappa, mass, k, n, q, weights=None) -> np.ndarray:
    """Quantiles ``q`` of W = Σ c_g θ_g (see :func:`weighted_mean_cumulants`)
    from a grid posterior of (μ, κ) with node masses ``mass``.

    W's law is the grid mixture, over (μ, κ) with the posterior masses, of
    its conditional laws, each replaced by the four-moment Pearson type I
    law (:func:`_pearson_type_one`) — or, where the conditional law is
    nearly normal (|skewness| and |excess kurtosis| ≤ ``EDGEWORTH_MAX``,
    e.g. many groups), by its four-cumulant Edgeworth expansion, which is
    as accurate there and far cheaper than the incomplete Beta function.
    The mixture CDF is inverted by safeguarded Newton steps (the mixture
    density as slope) from the mixture's Cornish–Fisher quantiles.  Cells below 1e-13 of
    the largest cell's mass are dropped, and alike components merged
    (:func:`_merge_components`).
    """
    k, n = np.asarray(k, float), np.asarray(n, float)
    q = np.atleast_1d(np.asarray(q, float))
    if not np.any((n if weights is None else np.asarray(weights, float)) > 0):
        return np.full(q.shape, np.nan)
    pi = np.ravel(mass)
    keep = pi > 1e-13 * pi.max()  # the rest holds < 1e-13 × (cells) of the mass
    rows, cols = np.divmod(np.flatnonzero(keep), np.shape(mass)[1])
    pi = pi[keep] / pi[keep].sum()
    cum = weighted_mean_cumulants(logit_mu, log_kappa, k, n, weights, cells=(rows, cols))
    return _mixture_quantiles(pi, cum, q)


def _mixture_quantiles(pi, cumulants, q) -> np.ndarray:
    """Quantiles ``q`` of a mixture of laws on [0, 1] given by their masses
    ``pi`` and first four cumulants ``(m, v, k3, k4)``: alike components
    merged (:func:`_merge_components`), each replaced by its Pearson type I
    law or Edgeworth expansion, the mixture CDF inverted by safeguarded
    Newton steps (see :func:`_weighted_mean_quantiles`).  Shared with the
    three-level model (:mod:`.three_level`)."""
    q = np.atleast_1d(np.asarray(q, float))
    pi, m, v, k3, k4 = _merge_components(np.asarray(pi, float), *cumulants)
    sd = np.sqrt(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        g1, g2 = k3 / (v * sd), k4 / (v * v)
    normal = (np.abs(g1) <= EDGEWORTH_MAX) & (np.abs(g2) <= EDGEWORTH_MAX)
    pe, me, se, g1, g2 = (x[normal][:, None] for x in (pi, m, sd, g1, g2))
    pb = pi[~normal]
    p, b, lo, width = (x[:, None] for x in _pearson_type_one(m[~normal], v[~normal], k3[~normal], k4[~normal]))
    log_norm = special.betaln(p, b) + np.log(width)

    def cdf_and_density(x):
        z = (x[None, :] - me) / se
        z2 = z * z
        phi = np.exp(-z2 / 2) / np.sqrt(2 * np.pi)
        he2, he3, he4 = z2 - 1, z * (z2 - 3), z2 * (z2 - 6) + 3
        he5, he6 = z * (z2 * (z2 - 10) + 15), z2 * (z2 * (z2 - 15) + 45) - 15
        F = pe.T @ (special.ndtr(z) - phi * (g1 / 6 * he2 + g2 / 24 * he3 + g1 * g1 / 72 * he5))
        f = pe.T @ (phi / se * (1 + g1 / 6 * he3 + g2 / 24 * he4 + g1 * g1 / 72 * he6))
        if pb.size:
            t = np.clip((x[None, :] - lo) / width, 0.0, 1.0)
            F = F + pb @ special.betainc(p, b, t)
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                dens = np.exp((p - 1) * np.log(t) + (b - 1) * np.log1p(-t) - log_norm)
            f = f + pb @ np.where((t > 0) & (t < 1), dens, 0.0)
        return np.ravel(F), np.ravel(f)

    # start: Cornish–Fisher quantiles from the mixture's own four cumulants
    mean = pi @ m
    d = m - mean
    c2 = pi @ (v + d * d)
    c3 = pi @ (k3 + 3 * v * d + d ** 3)
    c4 = pi @ (k4 + 4 * k3 * d + 3 * v * v + 6 * v * d * d + d ** 4) - 3 * c2 * c2
    spread = np.sqrt(max(c2, 1e-300))
    s1, s2 = c3 / spread ** 3, c4 / spread ** 4
    z = special.ndtri(q)
    if abs(s1) < 1 and abs(s2) < 2:
        z = z + (z * z - 1) * s1 / 6 + (z ** 3 - 3 * z) * s2 / 24 - (2 * z ** 3 - 5 * z) * s1 * s1 / 36
    x = np.clip(mean + z * spread, 1e-12, 1 - 1e-12)
    left, right = np.zeros_like(x), np.ones_like(x)
    for _ in range(60):
        F, f = cdf_and_density(x)
        err = F - q
        below = err < 0
        left, right = np.where(below, x, left), np.where(below, right, x)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            step = x - err / np.where(f > 0, f, np.nan)
        if np.all(np.abs(step - x) < 1e-7):  # Newton: the error after this step is of order 1e-14
            return step
        x = np.where((step >= left) & (step <= right), step, (left + right) / 2)
    return x


def weighted_mean_intervals(k, n, level: float = 0.95, prior: HierarchicalPrior = HierarchicalPrior(),
                            chunk: int = 250, *, weights=None, coarse: int = COARSE,
                            fine: tuple[int, int] = FINE, return_mu: bool = False):
    """Equal-tailed posterior intervals of the answer-weighted mean accuracy of
    the observed groups, ``W = Σ_g N_g θ_g / Σ_g N_g``, for many data sets at
    once: (data sets × 2).  Inputs as :func:`batch_intervals` (2-D ``n``
    allowed, empty groups ignored); a data set without answers gives NaN.
    ``weights`` (same shape as ``n``) replaces the weights N_g, e.g. by the
    number of *questions* per group when questions were answered unequally
    often; groups with weight 0 are left out of W.

    W is the estimand of the plain score (the mean over these answers),
    whereas μ (:func:`batch_intervals`) is the mean accuracy of a new group.
    Given (μ, κ) and the data the θ_g are independent
    ``Beta(μκ + k_g, (1 − μ)κ + N_g − k_g)``, so W's conditional mean and
    variance — and third and fourth cumulants — are exact sums
    (``weighted_mean_cumulants``); W's posterior is the mixture, over
    the same (μ, κ) grid as the μ interval (``_grid_posteriors``), of
    laws matching those four cumulants: four-moment (Pearson type I) Beta
    laws (``_pearson_type_one``), or Edgeworth expansions where the
    conditional law is nearly normal (``_weighted_mean_quantiles``).
    This moment matching is the only approximation beyond the grid: exact
    with one group, and within ~1e-4 of exact conditional sampling on the
    small, skewed cases of tests/test_twins.py and on SWE-bench (matching
    two moments was off by up to 1.7e-3 there).
    Deterministic: no sampling, no seed.  With ``return_mu=True`` returns
    ``(W intervals, μ intervals)`` from the same grids — exactly
    :func:`batch_intervals`' μ intervals, without integrating twice.
    Cost: about 5–10 ms per data set beyond the grid, so thousands of data
    sets take tens of seconds.
    """
    k, n = _as_rows(k, n)
    if weights is not None:
        weights = np.broadcast_to(np.asarray(weights, float), k.shape)
        if np.any(weights < 0) or not np.all(np.isfinite(weights)):
            raise ValueError("weights must be finite and non-negative")
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    given = weights is not None
    (k, n, weights), inverse = _distinct_rows(k, np.ascontiguousarray(n),
                                              np.ascontiguousarray(weights if given else n))
    out, mu = np.empty((k.shape[0], 2)), np.empty((k.shape[0], 2))
    for rows, lm, lk, w in _grid_posteriors(k, n, prior, coarse, fine, chunk, quantiles=q):
        mu[rows] = special.expit(_hermite_quantiles(lm, w.sum(axis=2), q))
        for i, r in enumerate(rows):
            out[r] = _weighted_mean_quantiles(lm, lk, w[i], k[r], n[r], q, weights[r] if given else None)
    return (out[inverse], mu[inverse]) if return_mu else out[inverse]


# ----------------------------------------------------------------- moments of a new group's rate
#: points added between two nodes of the fitted grid when the posterior of E[θ^j] is read off it
MOMENT_UPSAMPLE = 4


def log_rate_moment(logit_mu, log_kappa, power: int) -> np.ndarray:
    """``log E[θ^j | μ, κ]`` for θ ~ Beta(μκ, (1 − μ)κ): ``Σ_{i<j} log((μκ + i)/(κ + i))``
    (the rising-factorial ratio ``B(a + j, b)/B(a, b)``; ``docs/methods.md`` §6.2), elementwise
    over broadcast ``logit_mu``, ``log_kappa``."""
    kappa = np.exp(np.asarray(log_kappa, float))
    a = special.expit(np.asarray(logit_mu, float)) * kappa
    out = np.zeros(np.broadcast(a, kappa).shape)
    for i in range(int(power)):
        out += np.log(a + i) - np.log(kappa + i)
    return out


def rate_moment_intervals(k, n, powers, level: float = 0.95, prior: HierarchicalPrior = HierarchicalPrior(),
                          chunk: int = 64, *, coarse: int = COARSE, fine: tuple[int, int] = FINE,
                          upsample: int = MOMENT_UPSAMPLE) -> np.ndarray:
    """Posterior mean and equal-tailed interval of ``E[θ^j | μ, κ]`` — the chance that j
    independent runs of a *new* group (task) all succeed, pass^j over tasks like these
    (§6.2) — for each data set (row of ``k``, ``n``: successes and runs per task) and each
    ``j`` in ``powers``: (data sets × powers × 3) = mean, lower, upper.

    The same model and grid as :func:`batch_intervals` (``_grid_posteriors`` finds each data
    set's posterior box); the posterior is evaluated again on that box with ``upsample`` times
    finer steps on both axes.  ``E[θ^j | μ, κ]`` increases with μ at fixed κ, so its CDF is
    ``Σ_κ mass(κ) · P(μ ≤ μ*(x, κ) | κ)``: per log-κ line a trapezoid cumulative mass in
    logit μ, interpolated linearly in the moment, summed over the lines and inverted by
    bisection (the quadrature of :func:`batch_intervals` in one dimension, ~1e-4 on the
    interval ends).  Tests compare it with :func:`batch_intervals` at j = 1 and with a
    brute-force quadrature over the prior box through ``scipy.stats.betabinom``.
    """
    k, n = _as_rows(k, n)
    powers = [int(j) for j in powers]
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    (k, n), inverse = _distinct_rows(k, np.ascontiguousarray(n))
    out = np.empty((k.shape[0], len(powers), 3))
    for rows, lm, lk, _ in _grid_posteriors(k, n, prior, coarse, fine, chunk, quantiles=q):
        lm_f = np.linspace(lm[0], lm[-1], (lm.size - 1) * upsample + 1)
        lk_f = np.linspace(lk[0], lk[-1], (lk.size - 1) * upsample + 1)
        logp = _log_posterior(k[rows], n[rows], lm_f, lk_f, prior)
        logp -= logp.max(axis=(1, 2), keepdims=True)
        w = np.exp(logp, out=logp)
        w /= w.sum(axis=(1, 2), keepdims=True)
        # cumulative mass along logit μ within each log-κ line (trapezoid), lines × nodes
        cum = np.concatenate([np.zeros(w.shape[:1] + (1,) + w.shape[2:]),
                              np.cumsum((w[:, 1:] + w[:, :-1]) / 2, axis=1)], axis=1)
        cum += w[:, :1] / 2  # the half cell below the first node
        for p, j in enumerate(powers):
            g = np.exp(log_rate_moment(lm_f[:, None], lk_f[None, :], j))  # nodes × lines, increasing down
            for i, r in enumerate(rows):
                out[r, p] = (float((w[i] * g).sum()), *_moment_quantiles(g, cum[i], q))
    return out[inverse]


def _moment_quantiles(g: np.ndarray, cum: np.ndarray, q: np.ndarray, points: int = 256) -> list:
    """Quantiles ``q`` of a quantity increasing down each column of ``g`` (logit μ × log κ
    nodes) whose cumulative posterior mass down each column is ``cum``: ``F(x) = Σ_lines
    interp(x, g_line, cum_line)`` on ``points`` values of x, the bracket of each quantile
    searched again on ``points`` values (three passes: the step shrinks to ~1e-7 of the
    range), then linear interpolation.  Lines holding less than 1e-12 of the mass are left
    out (they move F by less than that; two thirds of the lines, typically)."""
    keep = cum[-1] > 1e-12 * cum[-1].sum()
    g, cum = g[:, keep], cum[:, keep]

    def cdf(x):
        return sum(np.interp(x, g[:, c], cum[:, c], left=0.0, right=cum[-1, c]) for c in range(g.shape[1]))
    x = np.linspace(float(g.min()), float(g.max()), points)
    f_first = cdf(x)  # the first pass serves every quantile
    out = []
    for target in q:
        xs, f = x, f_first
        for step in range(3):
            i = int(np.clip(np.searchsorted(f, target), 1, points - 1))
            lo, hi = xs[i - 1], xs[i]
            if step < 2:
                xs = np.linspace(lo, hi, points)
                f = cdf(xs)
        span = f[i] - f[i - 1]
        out.append(lo + (hi - lo) * ((target - f[i - 1]) / span if span > 0 else 0.5))
    return out
