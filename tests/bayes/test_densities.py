"""bayeserr.bayes.densities: the binned normal-mixture density against the exact mixture (scipy)."""

import numpy as np
from scipy import stats

from bayeserr.bayes.densities import kernel_density, normal_mixture


def test_normal_mixture_matches_the_exact_mixture():
    rng = np.random.default_rng(0)
    pi = rng.random(300)
    mean = rng.normal(0.6, 0.05, 300)
    var = rng.uniform(0.02, 0.04, 300) ** 2
    grid = np.linspace(0.3, 0.9, 601)
    exact = (pi[:, None] * stats.norm.pdf(grid[None, :], mean[:, None], np.sqrt(var)[:, None])).sum(0)
    got = normal_mixture(pi, mean, var, grid)
    got, exact = got / got.sum(), exact / exact.sum()
    assert np.abs(got - exact).max() < 0.02 * exact.max()   # binning error, well under a line width


def test_kernel_density_is_scipys_gaussian_kde_binned():
    d = np.random.default_rng(1).normal(0.1, 0.02, 4000)
    grid = np.linspace(0.0, 0.2, 801)
    step = grid[1] - grid[0]
    dens = kernel_density(d, grid)               # counts per grid cell, smoothed (shape, not scale)
    assert abs(dens.sum() - 4000) < 1e-6
    ref = stats.gaussian_kde(d)(grid)            # Scott's bandwidth, as the docstring says
    np.testing.assert_allclose(dens / (dens.sum() * step), ref, atol=0.01 * ref.max())
