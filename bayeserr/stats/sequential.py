"""Anytime-valid confidence sequences for a running eval (``docs/methods.md`` §3.13).

A confidence sequence (CS) is a sequence of intervals ``[L_t, U_t]``, one
after every answer, with ``P(∃ t: θ ∉ [L_t, U_t]) ≤ α``: the user may look
after every question and stop whenever a rule is met, and the interval at
the stopping time still covers with probability ``1 − α``.  Everything here is
a pure array function, vectorised over time: one call returns the whole
sequence ``t = 1..n``.

* :func:`betting_bounds` / :func:`betting_cs` — the hedged-capital betting CS
  for the mean of scores in [0, 1] (Waudby-Smith & Ramdas 2024, JRSS-B),
  (Q1)–(Q4); nonasymptotic.
* :func:`asymptotic_bounds` / :func:`asymptotic_cs` — the Gaussian-mixture
  asymptotic CS (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas 2024, Annals of
  Statistics), (Q5)–(Q6); valid as the number of answers grows, cheap.
* :func:`paired_cs` — A − B on shared questions, ``D ∈ [−1, 1]`` mapped to
  ``(D + 1)/2`` (Q7).
* :func:`cluster_betting_bounds`, :func:`cluster_asymptotic_bounds`,
  :func:`cluster_cs` — clusters as the sampling units, the per-question mean
  ``θ = E[S_c]/E[n_c]`` (Q8)–(Q10).
* :func:`first_exclusion`, :func:`first_width`, :func:`first_tie`,
  :func:`first_budget`, :func:`first_stop` — stopping rules (Q11).

Why not a library.  ``confseq`` (Howard & Waudby-Smith; 0.0.11, January 2023,
the last release) ships only a source distribution whose C++ part needs Boost
headers and CMake: ``pip install confseq`` fails to build on Python 3.12 (and
needs a compiler and Boost on 3.11).  ``expectation`` on the package index is
a 2020 placeholder (0.0.2, "Fugue data validation framework") for Python 3.11;
its 0.6 line needs Python ≥ 3.12, is GPL-3.0-only (bayeserr is MIT), pulls in
pydantic, plotly and matplotlib, and has no betting CS (its confidence sequence
is an empirical-Bernstein/gamma-exponential mixture).  The formulas are short;
they are written here and tested against a loop written straight from the
papers in ``tests/stats/test_sequential_stats.py``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError, describe

METHODS = ("betting", "asymptotic")

#: grid points of candidate means for the betting CS (step 1/2000 = 0.05 points)
DEFAULT_GRID = 2001
#: a comparison tolerance for the stopping rules: 0.52 − 0.48 is 0.04000000000000004
_TOL = 1e-12
#: elements of one (time × grid) block of the betting computation
_BLOCK = 1 << 20


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class ConfidenceSequence:
    """A confidence sequence: one interval after each look (§3.13).

    ``t`` is the number of questions seen at each look; ``units`` the number of
    sampling units seen (questions, or completed clusters for a cluster
    sequence, whose looks are the clusters' completions).
    """

    t: np.ndarray          #: questions seen at each look (1-based)
    estimate: np.ndarray   #: running point estimate (mean, difference or ratio)
    lower: np.ndarray      #: running lower bound (running maximum of the per-look bounds)
    upper: np.ndarray      #: running upper bound (running minimum)
    method: str            #: ``"betting"`` or ``"asymptotic"``
    level: float           #: 1 − α, time-uniform
    units: np.ndarray      #: sampling units seen at each look
    unit: str = "question"     #: ``"question"`` or ``"cluster"``
    estimand: str = "mean"     #: ``"mean"`` or ``"difference"``

    def __len__(self) -> int:
        return len(self.t)

    def to_dict(self) -> dict:
        return {"method": self.method, "level": self.level, "unit": self.unit,
                "estimand": self.estimand,
                "t": [int(v) for v in self.t], "units": [int(v) for v in self.units],
                "estimate": [float(v) for v in self.estimate],
                "lower": [float(v) for v in self.lower],
                "upper": [float(v) for v in self.upper]}

    def to_frame(self):
        """One row per look: ``t, units, estimate, lower, upper`` (method and
        level in ``DataFrame.attrs``)."""
        import pandas as pd

        frame = pd.DataFrame({"t": self.t, "units": self.units, "estimate": self.estimate,
                              "lower": self.lower, "upper": self.upper})
        frame.attrs.update(method=self.method, level=self.level, unit=self.unit,
                           estimand=self.estimand)
        return frame


@dataclass(frozen=True)
class Stop:
    """The first look at which a stopping rule holds (:func:`first_stop`)."""

    index: int     #: 0-based position in the sequence
    t: int         #: questions seen then
    rule: str      #: ``"exclude"``, ``"tie"``, ``"width"`` or ``"budget"``
    lower: float
    upper: float

    def to_dict(self) -> dict:
        return {"index": self.index, "t": self.t, "rule": self.rule,
                "lower": self.lower, "upper": self.upper}


# ------------------------------------------------------------------ checks
def _number(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number (got {describe(value)}).")
    return float(value)


def check_alpha(alpha) -> float:
    """``alpha`` as a float in (0, 1), else an :class:`~bayeserr.base.errors.InputError`."""
    return _open_unit("alpha", alpha, "alpha", "e.g. 0.05 for a 95% confidence sequence")


def _check_values(x, name: str, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """A 1-D (or, for simulations, (..., n)) float array of finite values in [low, high]."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers in [{low:g}, {high:g}] (got {describe(x)}).") from None
    if x.ndim == 0 or x.shape[-1] == 0:
        raise InputError(f"{name} must hold at least one value (got {describe(x)}).")
    bad = ~np.isfinite(x)
    if bad.any():
        where = np.flatnonzero(bad.reshape(-1))[:5]
        raise InputError(f"{name} must be finite numbers: NaN or infinity at position(s) "
                         f"{', '.join(str(int(i)) for i in where)}; drop unanswered questions first.")
    out = (x < low) | (x > high)
    if out.any():
        where = np.flatnonzero(out.reshape(-1))[:5]
        raise InputError(f"{name} must lie in [{low:g}, {high:g}]: {x.reshape(-1)[where[0]]:g} at position "
                         f"{int(where[0])}" + (f" (and {int(out.sum()) - 1} more)" if out.sum() > 1 else "")
                         + ".")
    return x


def _check_c(c) -> float:
    return _open_unit("c", c, "the bet truncation c", "the paper suggests 1/2 or 3/4")


def _open_unit(name: str, value, what: str, hint: str) -> float:
    """``value`` as a float strictly between 0 and 1, else an InputError naming ``what`` and ``hint``."""
    value = _number(name, value)
    if not 0 < value < 1:
        raise InputError(f"{what} must lie strictly between 0 and 1 (got {value:g}); {hint}.")
    return value


def _check_grid(grid) -> int:
    if isinstance(grid, (bool, np.bool_)) or not isinstance(grid, numbers.Integral) or grid < 3:
        raise InputError(f"grid must be a whole number of candidate means ≥ 3 (got {describe(grid)}); "
                         f"e.g. {DEFAULT_GRID}.")
    return int(grid)


def _check_positive(name: str, value) -> float:
    value = _number(name, value)
    if not (value > 0 and math.isfinite(value)):
        raise InputError(f"{name} must be a positive number (got {value:g}).")
    return value


# ------------------------------------------------------------------ betting
def _running_intersection(lower, upper):
    """Running max of ``lower`` and min of ``upper`` along the last axis; a crossing
    (an empty intersection, probability ≤ α) is shown as the point where they met."""
    lo = np.maximum.accumulate(lower, axis=-1)
    hi = np.minimum.accumulate(upper, axis=-1)
    crossed = lo > hi
    if crossed.any():
        mid = 0.5 * (lo + hi)
        lo, hi = np.where(crossed, mid, lo), np.where(crossed, mid, hi)
    return lo, hi


def predictable_lambda(x, alpha: float = 0.05, weights=None) -> np.ndarray:
    """The predictable plug-in bets ``λ_t`` of (Q2), along the last axis.

    ``λ_t = sqrt( 2 log(2/α) / (σ̂²_{t−1} t log(1 + t)) )`` with
    ``μ̂_t = (1/2 + Σ_{i≤t} w_i x_i)/(1 + Σ_{i≤t} w_i)``,
    ``σ̂²_t = (1/4 + Σ_{i≤t} w_i² (x_i − μ̂_i)²)/(t + 1)``, ``σ̂²_0 = 1/4``
    (Waudby-Smith & Ramdas 2024, the hedged capital's λ^PrPl±; ``w = 1`` there).
    ``λ_t`` uses ``x_1..x_{t−1}`` only.
    """
    x = np.asarray(x, dtype=float)
    w = np.ones_like(x) if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), x.shape)
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(w * x, axis=-1)) / (1.0 + np.cumsum(w, axis=-1))
    sig2 = (0.25 + np.cumsum((w * (x - mu)) ** 2, axis=-1)) / (t + 1.0)
    prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sig2[..., :-1]], axis=-1)
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (prev * t * np.log1p(t)))


def _log_capital_parts(x, w, lam, m, c):
    """``log K⁺_t(m)`` and ``log K⁻_t(m)`` (Q1), shape (..., n, len(m))."""
    with np.errstate(divide="ignore"):
        cap_plus = np.where(m > 0, c / np.where(m > 0, m, 1.0), np.inf)
        cap_minus = np.where(m < 1, c / np.where(m < 1, 1.0 - m, 1.0), np.inf)
    inc = w[..., None] * (x[..., None] - m)                   # w_i (x_i − m)
    lp = np.minimum(lam[..., None], cap_plus)
    lm = np.minimum(lam[..., None], cap_minus)
    return (np.cumsum(np.log1p(lp * inc), axis=-2),
            np.cumsum(np.log1p(-lm * inc), axis=-2))


def log_capital(x, m, alpha: float = 0.05, c: float = 0.5, weights=None) -> np.ndarray:
    """Log of the hedged capital ``K_t(m)`` of (Q1)–(Q3) for each candidate mean ``m``.

    ``x`` (..., n) values in [0, 1] in arrival order, ``m`` a number or (G,)
    candidate means in [0, 1], ``weights`` (..., n) in (0, 1] (None: 1; the
    cluster sequence's ``n_c / n_max``).  Returns (..., n, G) (or (..., n) for a
    scalar ``m``): ``log K_t(m)``, ``t = 1..n``.  ``m`` is excluded at ``t``
    when ``K_t(m) ≥ 1/α``.
    """
    alpha, c = check_alpha(alpha), _check_c(c)
    x = _check_values(x, "scores")
    w = np.ones_like(x) if weights is None else np.broadcast_to(
        _check_values(weights, "weights"), x.shape)
    scalar = np.ndim(m) == 0
    m = _check_values(np.atleast_1d(m), "candidate means m")
    lam = predictable_lambda(x, alpha, w)
    plus, minus = _log_capital_parts(x, w, lam, m, c)
    out = np.logaddexp(plus, minus) - math.log(2.0)
    return out[..., 0] if scalar else out


def _betting_row(x, w, lam, m, c, threshold):
    """Grid indices of the smallest and largest candidate mean not yet excluded at
    each look of one stream (−1 where none is left).

    A candidate is dropped for good at its first exclusion, so later looks only
    evaluate the survivors: time runs in blocks whose length grows as the
    candidates thin out (work ≈ Σ_t survivors_t, not n · grid).
    """
    n, grid = len(x), len(m)
    first = np.full(n, -1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    alive = np.arange(grid)
    carry_p = np.zeros(grid)
    carry_m = np.zeros(grid)
    t0, block = 0, 32
    while t0 < n and alive.size:
        t1 = min(n, t0 + block)
        plus, minus = _log_capital_parts(x[t0:t1], w[t0:t1], lam[t0:t1], m[alive], c)
        plus += carry_p[alive]
        minus += carry_m[alive]
        ok = ~np.logical_or.accumulate((np.logaddexp(plus, minus) - math.log(2.0)) >= threshold, axis=0)
        has = ok.any(axis=1)
        lo = np.argmax(ok, axis=1)
        hi = ok.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
        first[t0:t1] = np.where(has, alive[lo], -1)
        last[t0:t1] = np.where(has, alive[hi], -1)
        keep = ok[-1]
        carry_p[alive[keep]] = plus[-1, keep]
        carry_m[alive[keep]] = minus[-1, keep]
        alive = alive[keep]
        t0 = t1
        block = max(16, min(2 * block, _BLOCK // max(1, alive.size)))
    return first, last


def _betting_core(x, w, alpha, c, grid):
    """Lower and upper bounds of the running intersection on a grid (Q4), (..., n)."""
    m = np.linspace(0.0, 1.0, grid)
    lam = predictable_lambda(x, alpha, w)
    threshold = -math.log(alpha)
    lead = x.shape[:-1]
    n = x.shape[-1]
    xs, ws, ls = x.reshape(-1, n), w.reshape(-1, n), lam.reshape(-1, n)
    lower, upper = np.zeros(xs.shape), np.ones(xs.shape)
    for r in range(xs.shape[0]):
        first, last = _betting_row(xs[r], ws[r], ls[r], m, c, threshold)
        # the surviving candidates' hull, rounded outward to the next grid point (a bound lies
        # between grid points); once no grid point survives (probability ≤ α), the last hull stays
        empty = first < 0
        lo = np.where(empty, 0.0, m[np.clip(first - 1, 0, grid - 1)])
        hi = np.where(empty, 1.0, m[np.clip(last + 1, 0, grid - 1)])
        if empty.any() and not empty.all():
            k = int(np.argmax(empty))
            if k > 0:
                lo[k:], hi[k:] = lo[k - 1], hi[k - 1]
        lower[r], upper[r] = lo, hi
    return lower.reshape(lead + (n,)), upper.reshape(lead + (n,))


def betting_bounds(x, alpha: float = 0.05, c: float = 0.5, grid: int = DEFAULT_GRID, weights=None):
    """The hedged-capital betting CS (Q1)–(Q4) for the mean of ``x`` in [0, 1].

    ``x`` (..., n) in arrival order.  Returns ``(estimate, lower, upper)``, each
    (..., n): the running (weighted) mean ``Σ w x / Σ w`` and the running
    intersection of ``{m : K_t(m) < 1/α}``, evaluated on ``grid`` equally spaced
    candidate means in [0, 1] and rounded outward to the next grid point.  A
    look whose set holds no grid point is ``[0, 1]`` before the intersection.
    Cost O(n · grid).
    """
    alpha, c, grid = check_alpha(alpha), _check_c(c), _check_grid(grid)
    x = _check_values(x, "scores")
    w = np.ones_like(x) if weights is None else np.broadcast_to(
        _check_values(weights, "weights"), x.shape).astype(float)
    if weights is not None and (w <= 0).any():
        raise InputError("weights must be positive (a cluster's size over the largest size).")
    lower, upper = _betting_core(x, w, alpha, c, grid)
    estimate = np.cumsum(w * x, axis=-1) / np.cumsum(w, axis=-1)
    return estimate, lower, upper


# ------------------------------------------------------------------ asymptotic
def rho_for(t_opt: float, alpha: float = 0.05, variance: float = 0.25) -> float:
    """The mixture parameter ρ of (Q6) that makes (Q5) tightest at ``t_opt`` looks
    for data of variance ``variance``.

    ``ρ = sqrt( (−2 log α + log(−2 log α + 1)) / (t_opt · variance) )``: the
    paper's ρ for unit variance at ``t*``, applied to the intrinsic time
    ``t* σ²`` (the boundary depends on ``t``, ``σ̂`` and ``ρ`` through ``t σ̂² ρ²``).
    """
    alpha = check_alpha(alpha)
    t_opt, variance = _check_positive("t_opt", t_opt), _check_positive("variance", variance)
    a = -2.0 * math.log(alpha)
    return math.sqrt((a + math.log(a + 1.0)) / (t_opt * variance))


def _gm_half_width(t, var, rho, alpha):
    """(Q5): ``sqrt( 2(tρ²σ̂² + 1)/(t²ρ²) · log( sqrt(tρ²σ̂² + 1)/α ) )``."""
    v = t * rho * rho * var + 1.0
    return np.sqrt(2.0 * v / (t * t * rho * rho) * (0.5 * np.log(v) - math.log(alpha)))


def _running_var(x, var0):
    """``(v₀ + Σ_{i≤t} (x_i − x̄_t)²)/(t + 1)`` along the last axis (shifted sums)."""
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    y = x - x[..., :1]
    s1, s2 = np.cumsum(y, axis=-1), np.cumsum(y * y, axis=-1)
    ss = np.maximum(s2 - s1 * s1 / t, 0.0)
    return (var0 + ss) / (t + 1.0)


def asymptotic_bounds(x, alpha: float = 0.05, t_opt: float = 500, variance: float = 0.25,
                      bounds: tuple[float, float] = (0.0, 1.0), var0: float | None = None):
    """The Gaussian-mixture asymptotic CS (Q5)–(Q6) for the mean of ``x``.

    ``x`` (..., n) in ``bounds`` (the parameter's range; the intervals are cut to
    it), arrival order.  ``ρ = rho_for(t_opt, alpha, variance)``; ``σ̂²_t`` is the
    running variance with one pseudo-observation of variance ``var0`` (default
    ``variance``), so the first looks are defined and a run of equal scores does
    not give a zero-width interval.  Returns ``(estimate, lower, upper)`` with the
    running intersection.
    """
    alpha = check_alpha(alpha)
    lo_b, hi_b = bounds
    x = _check_values(x, "scores", lo_b, hi_b)
    rho = rho_for(t_opt, alpha, variance)
    var0 = variance if var0 is None else _check_positive("var0", var0)
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mean = np.cumsum(x, axis=-1) / t
    half = _gm_half_width(t, _running_var(x, var0), rho, alpha)
    lower, upper = _running_intersection(np.clip(mean - half, lo_b, hi_b), np.clip(mean + half, lo_b, hi_b))
    return mean, lower, upper


# ------------------------------------------------------------------ clusters
def cluster_totals(scores, clusters, expected_sizes=None):
    """Group a stream of question scores into completed clusters.

    ``scores`` (n,) in arrival order, ``clusters`` (n,) labels.  A cluster's
    look is the arrival of its last question so far; with ``expected_sizes``
    (a mapping label → number of questions) a cluster with fewer answers than
    expected is still open and left out.  Returns ``(sums, sizes, t)`` in
    order of completion, ``t`` the questions seen (1-based) when each cluster
    completed.
    """
    scores = _check_values(scores, "scores")
    labels = np.asarray(clusters)
    if scores.ndim != 1 or labels.shape != scores.shape:
        raise InputError(f"scores and clusters must be 1-D and of the same length "
                         f"(got {scores.shape} and {labels.shape}).")
    uniq, codes = np.unique(labels, return_inverse=True)
    sums = np.bincount(codes, weights=scores, minlength=len(uniq))
    sizes = np.bincount(codes, minlength=len(uniq))
    last = np.zeros(len(uniq), dtype=np.int64)
    np.maximum.at(last, codes, np.arange(len(scores)))
    keep = np.ones(len(uniq), dtype=bool)
    if expected_sizes is not None:
        for j, lab in enumerate(uniq.tolist()):
            if lab not in expected_sizes:
                raise InputError(f"cluster {lab!r} has no expected size; give every cluster's size.")
            if sizes[j] > expected_sizes[lab]:
                raise InputError(f"cluster {lab!r} has {sizes[j]} answers but an expected size of "
                                 f"{expected_sizes[lab]}.")
            keep[j] = sizes[j] == expected_sizes[lab]
    order = np.argsort(last[keep], kind="stable")
    return sums[keep][order], sizes[keep][order].astype(float), last[keep][order] + 1


def _check_clusters(sums, sizes, low: float = 0.0):
    sizes = np.asarray(sizes, dtype=float)
    if sizes.ndim == 0 or sizes.shape[-1] == 0 or not np.all(np.isfinite(sizes)) or (sizes < 1).any():
        raise InputError(f"cluster sizes must be numbers of questions ≥ 1 (got {describe(sizes)}).")
    sums = np.asarray(sums, dtype=float)
    if sums.shape != sizes.shape:
        raise InputError(f"cluster sums and sizes must have the same shape (got {sums.shape} and {sizes.shape}).")
    if not np.all(np.isfinite(sums)):
        raise InputError("cluster sums must be finite numbers (NaN or infinity found).")
    scale = low if low < 0 else 0.0
    bad = (sums < scale * sizes - 1e-9) | (sums > sizes + 1e-9)
    if bad.any():
        j = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InputError(f"a cluster's total score must lie between {scale:g}·size and its size "
                         f"(cluster {j}: total {sums.reshape(-1)[j]:g}, size {sizes.reshape(-1)[j]:g}).")
    return sums, sizes


def cluster_betting_bounds(sums, sizes, alpha: float = 0.05, max_size=None, c: float = 0.5,
                           grid: int = DEFAULT_GRID):
    """Betting CS for the per-question mean ``θ = E[S_c]/E[n_c]`` (Q8)–(Q9).

    ``sums`` (..., C) cluster totals ``S_c ∈ [0, n_c]`` and ``sizes`` (..., C)
    ``n_c`` in arrival order.  Bets on ``x_c = S_c/n_c`` with weight
    ``w_c = n_c/n_max``, so the increment ``w_c (x_c − m) = (S_c − m n_c)/n_max``
    has mean 0 at ``m = θ``.  ``max_size`` is ``n_max``, a bound on every
    cluster's size fixed before the run (default: the largest of ``sizes``, which
    is right when ``sizes`` lists every cluster of the benchmark).  Returns
    ``(estimate, lower, upper)`` with ``estimate = Σ S / Σ n``.
    """
    sums, sizes = _check_clusters(sums, sizes)
    n_max = float(np.max(sizes)) if max_size is None else _check_positive("max_size", max_size)
    if (sizes > n_max).any():
        raise InputError(f"max_size {n_max:g} is smaller than a cluster's size {float(sizes.max()):g}.")
    x = np.clip(sums / sizes, 0.0, 1.0)
    _, lower, upper = betting_bounds(x, alpha, c, grid, weights=sizes / n_max)
    return np.cumsum(sums, axis=-1) / np.cumsum(sizes, axis=-1), lower, upper


def cluster_asymptotic_bounds(sums, sizes, alpha: float = 0.05, t_opt: float = 50,
                              variance: float = 0.25, var0: float | None = None,
                              bounds: tuple[float, float] = (0.0, 1.0)):
    """Asymptotic CS for ``θ = E[S_c]/E[n_c]`` by the ratio linearisation (Q10).

    After ``k`` clusters, ``θ̂_k = Σ S_c / Σ n_c`` and
    ``z_c = (S_c − θ̂_k n_c)/n̄_k``; the half-width is (Q5) with ``t = k`` and
    ``σ̂²_k = (v₀ + Σ_{c≤k} z_c²)/(k + 1)``, ``ρ = rho_for(t_opt, alpha, variance)``
    with ``t_opt`` in clusters.  Asymptotic in the number of clusters: with a
    dozen clusters prefer :func:`cluster_betting_bounds`.
    """
    alpha = check_alpha(alpha)
    sums, sizes = _check_clusters(sums, sizes, low=bounds[0])
    rho = rho_for(t_opt, alpha, variance)
    var0 = variance if var0 is None else _check_positive("var0", var0)
    k = np.arange(1, sums.shape[-1] + 1, dtype=float)
    S, N = np.cumsum(sums, axis=-1), np.cumsum(sizes, axis=-1)
    theta = S / N
    nbar = N / k
    # Σ_{c≤k} (S_c − θ̂_k n_c)² = ΣS² − 2θ̂ ΣSn + θ̂² Σn²  (θ̂ is a ratio of bounded sums: no cancellation worth fearing)
    ss = (np.cumsum(sums * sums, axis=-1) - 2 * theta * np.cumsum(sums * sizes, axis=-1)
          + theta * theta * np.cumsum(sizes * sizes, axis=-1))
    var = (var0 + np.maximum(ss, 0.0) / (nbar * nbar)) / (k + 1.0)
    half = _gm_half_width(k, var, rho, alpha)
    lo, hi = bounds
    lower, upper = _running_intersection(np.clip(theta - half, lo, hi), np.clip(theta + half, lo, hi))
    return theta, lower, upper


# ------------------------------------------------------------------ results from scores
def _method(method: str) -> str:
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)} (got {method!r}).")
    return method


def _one_stream(scores) -> np.ndarray:
    """``scores`` checked as one stream (1-D) of values in [0, 1]."""
    x = _check_values(scores, "scores")
    if x.ndim != 1:
        raise InputError(f"scores must be one stream (1-D), got shape {x.shape}.")
    return x


def betting_cs(scores, alpha: float = 0.05, c: float = 0.5, grid: int = DEFAULT_GRID) -> ConfidenceSequence:
    """:func:`betting_bounds` of one stream of scores in [0, 1], as a :class:`ConfidenceSequence`."""
    x = _one_stream(scores)
    est, lo, hi = betting_bounds(x, alpha, c, grid)
    t = np.arange(1, len(x) + 1)
    return ConfidenceSequence(t, est, lo, hi, "betting", 1 - alpha, t)


def asymptotic_cs(scores, alpha: float = 0.05, t_opt: float = 500, variance: float = 0.25) -> ConfidenceSequence:
    """:func:`asymptotic_bounds` of one stream of scores in [0, 1], as a :class:`ConfidenceSequence`."""
    x = _one_stream(scores)
    est, lo, hi = asymptotic_bounds(x, alpha, t_opt, variance)
    t = np.arange(1, len(x) + 1)
    return ConfidenceSequence(t, est, lo, hi, "asymptotic", 1 - alpha, t)


def cluster_cs(scores, clusters, method: str = "betting", alpha: float = 0.05, expected_sizes=None,
               max_size=None, estimand: str = "mean", **options) -> ConfidenceSequence:
    """A cluster-level sequence from a stream of question scores (Q8)–(Q10).

    Questions are grouped by :func:`cluster_totals`; there is one look per
    completed cluster.  ``max_size`` (betting) defaults to the largest expected
    size, else the largest completed cluster.  ``options`` go to
    :func:`cluster_betting_bounds` (``c``, ``grid``) or
    :func:`cluster_asymptotic_bounds` (``t_opt`` in clusters, ``variance``).
    """
    _method(method)
    alpha = check_alpha(alpha)
    sums, sizes, t = cluster_totals(scores, clusters, expected_sizes)
    if len(sums) == 0:
        raise InputError("no cluster is complete yet: a cluster sequence needs at least one whole cluster.")
    if max_size is None and expected_sizes:
        max_size = max(expected_sizes.values())
    if method == "betting":
        est, lo, hi = cluster_betting_bounds(sums, sizes, alpha, max_size, **options)
    else:
        est, lo, hi = cluster_asymptotic_bounds(sums, sizes, alpha, **options)
    return ConfidenceSequence(t, est, lo, hi, method, 1 - alpha, np.arange(1, len(sums) + 1), "cluster",
                              estimand)


def mean_cs(scores, method: str = "betting", alpha: float = 0.05, clusters=None, **options) -> ConfidenceSequence:
    """The mean score's confidence sequence: per question, or per cluster with ``clusters``."""
    if clusters is not None:
        return cluster_cs(scores, clusters, method, alpha, **options)
    if _method(method) == "betting":
        return betting_cs(scores, alpha, **options)
    return asymptotic_cs(scores, alpha, **options)


def paired_cs(a, b, method: str = "betting", alpha: float = 0.05, clusters=None, **options) -> ConfidenceSequence:
    """A − B on the questions both answered, in arrival order (Q7).

    ``D = a − b ∈ [−1, 1]``.  Betting: the CS of ``(D + 1)/2 ∈ [0, 1]`` mapped
    back by ``δ = 2m − 1`` (with clusters: cluster totals ``(Σ D + n_c)/2``).
    Asymptotic: (Q5) on ``D`` directly, cut to [−1, 1] (``variance`` is then
    the planned variance of ``D``).
    """
    _method(method)
    alpha = check_alpha(alpha)
    a, b = _check_values(a, "scores of A"), _check_values(b, "scores of B")
    if a.ndim != 1 or a.shape != b.shape:
        raise InputError(f"A and B must be scores of the same questions in the same order "
                         f"(got {a.size} and {b.size} values).")
    d = a - b
    if clusters is not None:
        expected = options.pop("expected_sizes", None)
        if method == "betting" and options.get("max_size") is None and expected:
            options["max_size"] = max(expected.values())  # fixed before the run, as in cluster_cs
        sums, sizes, t = cluster_totals((d + 1) / 2, clusters, expected)
        if len(sums) == 0:
            raise InputError("no cluster is complete yet: a cluster sequence needs at least one whole cluster.")
        units, unit = np.arange(1, len(sums) + 1), "cluster"
        if method == "betting":
            est, lo, hi = cluster_betting_bounds(sums, sizes, alpha, **options)
        else:
            sums_d = 2 * sums - sizes                      # Σ D per cluster
            est, lo, hi = cluster_asymptotic_bounds(sums_d, sizes, alpha, bounds=(-1.0, 1.0), **options)
            return ConfidenceSequence(t, est, lo, hi, method, 1 - alpha, units, unit, "difference")
    else:
        t = units = np.arange(1, len(d) + 1)
        unit = "question"
        if method == "asymptotic":
            est, lo, hi = asymptotic_bounds(d, alpha, bounds=(-1.0, 1.0), **options)
            return ConfidenceSequence(t, est, lo, hi, method, 1 - alpha, units, unit, "difference")
        est, lo, hi = betting_bounds((d + 1) / 2, alpha, **options)
    return ConfidenceSequence(t, 2 * est - 1, 2 * lo - 1, 2 * hi - 1, method, 1 - alpha, units, unit,
                              "difference")


# ------------------------------------------------------------------ stopping rules
def _bounds(lower, upper):
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if lower.ndim != 1 or lower.shape != upper.shape:
        raise InputError(f"lower and upper must be 1-D sequences of the same length "
                         f"(got shapes {lower.shape} and {upper.shape}).")
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise InputError("lower and upper must be finite numbers (NaN or infinity found).")
    if (lower > upper + _TOL).any():
        raise InputError("a lower bound lies above its upper bound.")
    return lower, upper


def _at(hit: np.ndarray, t):
    """The ``t`` of the first True of ``hit`` (``t`` default 1..n), or None."""
    if not hit.any():
        return None
    i = int(np.argmax(hit))
    return i + 1 if t is None else int(np.asarray(t)[i])


def first_exclusion(lower, upper, value: float = 0.0, t=None):
    """First look at which the sequence excludes ``value``: ``lower > value`` or
    ``upper < value`` (a bound equal to ``value`` still includes it).  Returns
    ``t`` of that look (``t`` default ``1..n``) or None."""
    lower, upper = _bounds(lower, upper)
    value = _number("value", value)
    return _at((lower > value) | (upper < value), t)


def first_width(lower, upper, width: float, t=None):
    """First look at which the quantity is known to ±``width``: the whole interval
    fits in ``[c − width, c + width]`` for its midpoint ``c``, i.e.
    ``upper − lower ≤ 2·width``.  Returns ``t`` or None."""
    lower, upper = _bounds(lower, upper)
    width = _check_positive("width", width)
    return _at(upper - lower <= 2 * width + _TOL, t)


def first_inside(lower, upper, low: float, high: float, t=None):
    """First look at which the interval lies inside ``[low, high]`` (closed)."""
    lower, upper = _bounds(lower, upper)
    low, high = _number("low", low), _number("high", high)
    if not low < high:
        raise InputError(f"the zone must have low < high (got [{low:g}, {high:g}]).")
    return _at((lower >= low - _TOL) & (upper <= high + _TOL), t)


def first_tie(lower, upper, margin: float, t=None):
    """First look at which A − B is settled as a tie: the interval lies inside the
    tie zone ``[−margin, margin]``.  Returns ``t`` or None."""
    margin = _check_positive("margin", margin)
    return first_inside(lower, upper, -margin, margin, t)


def first_budget(t, budget: float, at=None):
    """First look at which ``t`` (questions seen) reaches ``budget``: returns that
    ``t`` (or ``at`` of that look when given), or None."""
    budget = _check_positive("budget", budget)
    t = np.asarray(t)
    return _at(t >= budget, t if at is None else at)


def first_stop(lower, upper, t=None, exclude: float | None = None, width: float | None = None,
               tie: float | None = None, budget: float | None = None) -> Stop | None:
    """The first look at which any requested rule holds, as a :class:`Stop`.

    Rules: ``exclude`` (the interval excludes this value, e.g. 0 for A − B),
    ``tie`` (inside ±tie), ``width`` (known to ±width), ``budget`` (``t`` reaches
    it).  When several hold at the same look the rule named is the first of
    exclude, tie, width, budget.  None when no rule holds (continue).
    """
    lower, upper = _bounds(lower, upper)
    tt = np.arange(1, len(lower) + 1) if t is None else np.asarray(t)
    if tt.shape != lower.shape:
        raise InputError(f"t must have one entry per look ({len(lower)}), got shape {tt.shape}.")
    idx = np.arange(len(lower))
    rules = (("exclude", exclude, lambda v: first_exclusion(lower, upper, v, idx)),
             ("tie", tie, lambda v: first_tie(lower, upper, v, idx)),
             ("width", width, lambda v: first_width(lower, upper, v, idx)),
             ("budget", budget, lambda v: first_budget(tt, v, idx)))
    found = [(i, rule) for rule, value, fn in rules if value is not None
             for i in [fn(value)] if i is not None]
    if not found:
        return None
    i, rule = min(found, key=lambda f: f[0])  # min keeps the first of equal looks: the order above
    return Stop(i, int(tt[i]), rule, float(lower[i]), float(upper[i]))
