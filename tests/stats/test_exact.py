"""The four exact and score intervals of :mod:`bayeserr.stats.exact` (statsmodels'
``proportion_confint``) against their closed forms written out here (``docs/methods.md``
§2.8: Wilson's score interval, the Beta quantiles of Clopper–Pearson and Jeffreys, the
Agresti–Coull adjusted Wald interval), on whole and fractional counts (the effective
sample size makes them fractional), at the edges 0/n and n/n, and at several levels."""

from statistics import NormalDist

import numpy as np
import pytest
from scipy.special import betaincinv

from bayeserr.stats.exact import METHODS, proportion_interval

rng = np.random.default_rng(11)
N = np.concatenate([np.arange(1, 41), rng.uniform(1.5, 600, 60)])
X = np.concatenate([rng.integers(0, np.arange(1, 41) + 1), rng.uniform(0, 1, 60) * N[40:]])
X[:10], X[10:20] = 0, N[10:20]  # the edges 0/n and n/n


def _closed_form(x, n, level, method):
    z = NormalDist().inv_cdf(0.5 + level / 2)
    a = (1 - level) / 2
    q = x / n
    if method == "wilson":
        centre = (q + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(q * (1 - q) / n + z**2 / (4 * n**2))
        return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    if method == "clopper_pearson":
        with np.errstate(invalid="ignore"):
            low = np.where(x > 0, betaincinv(np.where(x > 0, x, 1), n - x + 1, a), 0.0)
            high = np.where(x < n, 1 - betaincinv(np.where(x < n, n - x, 1), x + 1, a), 1.0)
        return low, high
    if method == "jeffreys":  # with Brown, Cai & DasGupta's edges (see proportion_interval)
        low, high = betaincinv(x + 0.5, n - x + 0.5, a), 1 - betaincinv(n - x + 0.5, x + 0.5, a)
        return np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)
    n_c = n + z**2
    q_c = (x + z**2 / 2) / n_c
    half = z * np.sqrt(q_c * (1 - q_c) / n_c)
    return np.clip(q_c - half, 0, 1), np.clip(q_c + half, 0, 1)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_matches_the_closed_forms(method, level):
    ours = proportion_interval(X, N, level, method)
    low, high = _closed_form(X, N, level, method)
    np.testing.assert_allclose(ours[:, 0], low, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours[:, 1], high, rtol=1e-9, atol=1e-12)


def test_clopper_pearson_edges_and_a_worked_example():
    """0/20 → [0, 0.1684]; 20/20 → [0.8316, 1] (the rule of three's exact version)."""
    iv = proportion_interval([0, 20, 7], [20, 20, 20], 0.95, "clopper_pearson")
    assert iv[0, 0] == 0 and iv[1, 1] == 1
    assert iv[0, 1] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-12)
    assert iv[1, 0] == pytest.approx(0.025 ** (1 / 20), abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("n, cluster_size", [(40, 20), (60, 20), (100, 20), (200, 50)])
def test_n_eff_intervals_hold_their_level_with_few_clusters(n, cluster_size):
    """Korn–Graubard's df factor (docs/methods.md §2.8): with 2–5 clusters and accuracies of
    0.8–0.95, Clopper–Pearson and Wilson on n_eff cover at least 95% (2.6 MC SEs of slack), and
    never leave [0, 1]."""
    from bayeserr.lab import simulate as sim
    for p in (0.8, 0.9, 0.95):
        design = sim.Design(n=n, accuracy=p, cluster_size=cluster_size, icc=0.3)
        cells = {c.method: c for c in sim.coverage(design, 1000, seed=11)}
        for method in ("clopper_pearson_clustered", "wilson_clustered"):
            cov = cells[method].coverage
            assert cov >= 0.95 - 2.6 * (0.95 * 0.05 / 1000) ** 0.5, (n, p, method, cov)
            assert cells[method].mean_width <= 1.0 + 1e-12
