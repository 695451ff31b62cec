"""The four exact and score intervals of :mod:`bayeserr.stats.exact`, written
out in closed form, against statsmodels' ``proportion_confint`` (the
independent computation), on whole and fractional counts (the effective
sample size makes them fractional), at the edges 0/n and n/n, and at several
levels."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from bayeserr.stats.exact import METHODS, proportion_interval

rng = np.random.default_rng(11)
N = np.concatenate([np.arange(1, 41), rng.uniform(1.5, 600, 60)])
X = np.concatenate([rng.integers(0, np.arange(1, 41) + 1), rng.uniform(0, 1, 60) * N[40:]])
X[:10], X[10:20] = 0, N[10:20]  # the edges 0/n and n/n


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_matches_statsmodels(method, level):
    ours = proportion_interval(X, N, level, method)
    low, high = proportion_confint(X, N, alpha=1 - level, method=METHODS[method])
    low, high = np.asarray(low, float), np.asarray(high, float)
    if method == "jeffreys":  # Brown, Cai & DasGupta's edges (see proportion_interval)
        low, high = np.where(X == 0, 0.0, low), np.where(X == N, 1.0, high)
    np.testing.assert_allclose(ours[:, 0], low, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours[:, 1], high, rtol=1e-9, atol=1e-12)


def test_clopper_pearson_edges_and_a_worked_example():
    """0/20 → [0, 0.1684]; 20/20 → [0.8316, 1] (the rule of three's exact version)."""
    iv = proportion_interval([0, 20, 7], [20, 20, 20], 0.95, "clopper_pearson")
    assert iv[0, 0] == 0 and iv[1, 1] == 1
    assert iv[0, 1] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-12)
    assert iv[1, 0] == pytest.approx(0.025 ** (1 / 20), abs=1e-12)
