"""The faster default Bayesian columns (issue 23) give the numbers of the
slower code they replaced.

* The three-level grid posterior integrates each cluster likelihood on x
  lattices chosen per κ_q node (coarser where the likelihoods are wider),
  keeps the lines of a pass for the next, and integrates W's moments with
  the density: its integrals match a uniform trapezoid rule four times finer
  than the old single lattice (no recorded numbers: on EvalPerf, MathArena and
  SWE-bench the old and new intervals were measured side by side to differ by
  at most 7e-10).
* The two-level model's conditional cumulants of W are polynomials in μ on
  every κ line: they match the per-cell sums.
* Merging mixture components by counting gives np.unique's groups.
"""

from dataclasses import replace

import numpy as np
import pytest
from bayeserr.models import hierarchical, three_level
from scipy import special

from .test_three_level import _matharena, example40


def _fine_trapezoid(data, E, T, lk, factor=4):
    """log ∫ l_c(x) Normal(x; η, τ) dx by the trapezoid rule on [−15, 15] with a
    step ``factor`` times finer than the old single lattice (X_STEP × the
    binomial width), l_c constant beyond ±15: (patterns, L, columns)."""
    step = float(np.clip(three_level.X_STEP * data.sigma, 1e-3, 0.35)) / factor
    x = np.linspace(-15, 15, int(np.ceil(30 / step)) + 1)
    h = x[1] - x[0]
    ll = three_level._loglik(data, x, lk)  # (D, L, points)
    top = ll.max(axis=2, keepdims=True)
    f = np.exp(ll - top)
    out = np.empty((ll.shape[0], lk.size, E.shape[0]))
    for p in range(E.shape[0]):
        e = E[p] if E.shape[1] > 1 else np.full(lk.size, E[p, 0])
        d = (x[None, :] - e[:, None]) / T[p]
        w = h / (np.sqrt(2 * np.pi) * T[p]) * np.exp(-0.5 * d * d)  # (L, points)
        w[:, 0] = w[:, 0] / 2 + special.ndtr(d[:, 0])
        w[:, -1] = w[:, -1] / 2 + special.ndtr(-d[:, -1])
        out[:, :, p] = np.einsum("dlx,lx->dl", f, w)
    with np.errstate(divide="ignore"):  # nodes beyond every likelihood's reach: log 0
        return np.log(out) + top


def _evalperf_like(seed=0):
    """Two clusters of 30 and 80 questions, 100 samples each, question rates far
    apart (the cluster likelihoods several times wider than the binomial one
    at small κ_q: the case the coarser lattices are for)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat([0, 1], [30, 80])
    p = special.expit(np.where(codes == 0, 1.5, 0.5) + rng.normal(0, 2.0, codes.size))
    return rng.binomial(100, p), np.full(codes.size, 100), codes


@pytest.mark.parametrize("case", ["evalperf_like", "example40", "matharena"])
def test_lattice_integrals_match_a_finer_trapezoid(case):
    """Over κ_q from the prior box's low end to its high end and τ from the
    smallest the lattices take (¾ of the binomial width; below, the
    Gauss–Hermite sums are unchanged) to 1.2, with η around the clusters'
    rates (the normal within ±15, where l_c is taken as constant beyond):
    every log integral within 5e-8 of the uniform trapezoid four times finer
    than the old lattice, the lattices of one fit kept across the calls, as
    in a fit.  (The old single lattice is as far off: the log likelihoods
    carry ~1e-9 of rounding at large κ_q, and at τ = ¾ of the binomial width
    both take the same step, 2e-8 off for MathArena's skewed 4-answer
    likelihoods.)  Integrals more
    than e^25 below the largest of their pattern and κ_q are left out: they
    come from where l_c is near e^−40 of its maximum, which both the old and
    the new code take as 0 beyond a margin (``X_TRIM``)."""
    k, n, codes = {"evalperf_like": _evalperf_like(), "example40": example40(),
                   "matharena": _matharena("o3-mini (high)")}[case]
    data = three_level._prepare(k, n, codes)
    data = replace(data, lattice=three_level._Lattice(data))
    lk = np.linspace(-6.5, 11.5, 7)
    tau = np.unique(np.maximum([0.75 * data.sigma, 1.3 * data.sigma, 0.1, 0.4, 0.7, 1.2], 0.75 * data.sigma))
    eta = np.linspace(-1.0, 3.0, 9)
    T = np.repeat(tau, eta.size)
    for E in (np.tile(eta, tau.size)[:, None],  # the same η for every κ_q
              np.tile(eta, tau.size)[:, None] + np.linspace(-0.3, 0.3, lk.size)[None, :]):
        got, _, _ = three_level._integrals(data, E, T, lk)
        want = _fine_trapezoid(data, E, T, lk)
        kept = want > want.max(axis=2, keepdims=True) - 25
        assert kept.mean() > 0.3
        np.testing.assert_allclose(got[kept], want[kept], rtol=0, atol=5e-8)
    levels = [data.lattice.level(v) for v in lk.tolist()]
    if case == "evalperf_like":
        assert max(levels) >= 2  # wide likelihoods at small κ_q: at least 4 times coarser
        assert levels[-1] == 0  # at large κ_q, as sharp as the binomial width


def test_fits_do_not_depend_on_the_lattice_levels_or_the_moment_pass(monkeypatch):
    """The same fit (1) on the single finest lattice (every κ_q on level 0) and
    (2) with W's moments integrated in a final pass over the live nodes (as for
    more than ``MOMENT_PATTERNS`` patterns): the same grid, μ and W's
    quantiles within 1e-10."""
    k, n, codes = _evalperf_like(1)
    q = np.array([0.025, 0.5, 0.975])
    ref = three_level.fit_exact(k, n, codes)
    monkeypatch.setattr(three_level, "WIDTH_STEPS", 1e9)
    finest = three_level.fit_exact(k, n, codes)
    monkeypatch.undo()
    monkeypatch.setattr(three_level, "MOMENT_PATTERNS", 0)
    apart = three_level.fit_exact(k, n, codes)
    for other in (finest, apart):
        assert other.weights.shape == ref.weights.shape
        np.testing.assert_allclose(other.quantiles(q), ref.quantiles(q), rtol=0, atol=1e-10)
        np.testing.assert_allclose(other.weighted_mean_quantiles(q), ref.weighted_mean_quantiles(q),
                                   rtol=0, atol=1e-10)


def _cumulants_per_cell(logit_mu, log_kappa, k, n, weights=None):
    """The four Beta cumulant sums of W, cell by cell (the formulas of
    ``hierarchical.weighted_mean_cumulants``, written out directly)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    c = n if weights is None else np.asarray(weights, float)
    used = c > 0
    k, n, c = k[used], n[used], c[used] / c[used].sum()
    mu, kappa = special.expit(logit_mu)[:, None, None], np.exp(log_kappa)[None, :, None]
    a = mu * kappa + k
    b = special.expit(-logit_mu)[:, None, None] * kappa + (n - k)
    s = kappa + n
    k1 = a / s
    k2 = a * b / (s * s * (s + 1))
    k3 = 2 * (b - a) * a * b / (s ** 3 * (s + 1) * (s + 2))
    k4 = 6 * a * b * ((a - b) ** 2 * (s + 1) - a * b * (s + 2)) / (s ** 4 * (s + 1) ** 2 * (s + 2) * (s + 3))
    return [(x * c ** (j + 1)).sum(axis=2) for j, x in enumerate((k1, k2, k3, k4))]


@pytest.mark.parametrize("seed", range(6))
def test_weighted_mean_cumulants_as_polynomials_match_the_cell_sums(seed):
    """Groups of 0–60 answers, rates anywhere (all right or all wrong too),
    answer or other weights, μ within 6e-6 of 0 and 1 and κ up to e^11.5:
    within 1e-12 relative (the third and fourth cumulants relative to the
    variance's powers, as they may vanish)."""
    rng = np.random.default_rng(seed)
    G = int(rng.integers(1, 400))
    n = rng.integers(0, 60, G).astype(float)
    n[0] = max(n[0], 1)
    p = [rng.uniform(), 0.0, 1.0][seed % 3]
    k = rng.binomial(n.astype(int), p).astype(float)
    w = None if seed % 2 else rng.uniform(0, 3, G)
    lm, lk = np.linspace(-12, 12, 61), np.linspace(-6.5, 11.5, 19)
    got = hierarchical.weighted_mean_cumulants(lm, lk, k, n, w)
    want = _cumulants_per_cell(lm, lk, k, n, w)
    for j, (g, x) in enumerate(zip(got, want)):
        scale = np.abs(x) if j == 0 else np.maximum(np.abs(x), want[1] ** ((j + 1) / 2))
        assert np.max(np.abs(g - x) / scale) < 1e-12, j
    rows, cols = rng.integers(0, lm.size, 50), rng.integers(0, lk.size, 50)
    cells = hierarchical.weighted_mean_cumulants(lm, lk, k, n, w, cells=(rows, cols))
    for j, (g, x) in enumerate(zip(cells, want)):
        x = x[rows, cols]
        scale = np.abs(x) if j == 0 else np.maximum(np.abs(x), want[1][rows, cols] ** ((j + 1) / 2))
        assert np.max(np.abs(g - x) / scale) < 1e-12, j


def test_merged_components_are_np_unique_groups():
    """Components binned by mean and log SD: the groups formed by counting are
    np.unique's, merged with the same mass and moments."""
    rng = np.random.default_rng(3)
    size = 5000
    pi = rng.dirichlet(np.ones(size))
    m = rng.beta(5, 2, size)
    v = np.exp(rng.normal(-8, 1, size))
    k3, k4 = rng.normal(0, 1e-6, size), rng.normal(0, 1e-8, size)
    got = hierarchical._merge_components(pi, m, v, k3, k4)
    mean = pi @ m
    spread = np.sqrt(pi @ (v + m * m) - mean * mean)
    key_m = np.floor((m - mean) / (hierarchical.MERGE_WIDTH * spread)).astype(np.int64)
    key_s = np.floor(np.log(v) / (2 * hierarchical.MERGE_WIDTH)).astype(np.int64)
    _, group = np.unique(np.stack([key_m, key_s], 1), axis=0, return_inverse=True)
    group = group.ravel()
    mass = np.bincount(group, pi)
    centre = np.bincount(group, pi * m) / mass
    assert got[0].size == mass.size < size
    np.testing.assert_allclose(got[0], mass, rtol=1e-13)
    np.testing.assert_allclose(got[1], centre, rtol=1e-13)
    d = m - centre[group]
    np.testing.assert_allclose(got[2], np.bincount(group, pi * (v + d * d)) / mass, rtol=1e-10)
