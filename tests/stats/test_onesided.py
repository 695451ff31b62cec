"""bayeserr.stats.onesided (the gate's formulas, docs/methods.md §3.11) against scipy.stats and
hand formulas."""

import math

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats.onesided import POWER_TARGET, holm_levels, one_sided_t, power_at_zero, zero_spread


@pytest.mark.parametrize("df", [3.7, 12.0, np.inf])
def test_one_sided_t_matches_scipy(df):
    est, se, null, level = np.array([0.03, -0.01, 0.0]), np.array([0.02, 0.015, 0.01]), -0.02, 0.95
    res = one_sided_t(est, se, df, null, level)
    t = (est - null) / se
    ref = stats.norm if np.isinf(df) else stats.t(df)
    np.testing.assert_allclose(res.statistic, t, rtol=1e-12)
    np.testing.assert_allclose(res.p_value, ref.sf(t), rtol=1e-9)
    np.testing.assert_allclose(res.lower, est - ref.ppf(level) * se, rtol=1e-9)
    np.testing.assert_allclose(res.upper, est + ref.ppf(level) * se, rtol=1e-9)
    # pass ⇔ p < α ⇔ lower bound above the null
    assert np.array_equal(res.p_value < 1 - level, res.lower > null)


def test_one_sided_t_zero_se_and_nan():
    res = one_sided_t([0.1, -0.1, 0.0, np.nan], [0.0, 0.0, 0.0, 0.1], 10.0, 0.0, 0.95)
    assert list(res.p_value[:3]) == [0.0, 1.0, 0.5]
    assert np.isnan(res.p_value[3])
    np.testing.assert_array_equal(res.lower[:3], [0.1, -0.1, 0.0])


def test_zero_spread_is_the_exact_zero_event_bound():
    # every difference 0 over n independent units: P(no disagreement | π) = (1 − π)^n, so the
    # one-sided bound on π at level L solves (1 − π)^n = 1 − L, and A − B ≥ −π
    n, level = 40, 0.95
    res = zero_spread(0.0, n, -0.02, level)
    pi_l = 1 - (1 - level) ** (1 / n)
    np.testing.assert_allclose(res.lower, -pi_l, rtol=1e-9)
    np.testing.assert_allclose(res.p_value, (1 - 0.02) ** n, rtol=1e-9)


def test_holm_levels():
    p = np.array([0.04, 0.001, np.nan, 0.02])
    adj, step = holm_levels(p, 0.95)
    np.testing.assert_allclose(step[[1, 3, 0, 2]], 1 - 0.05 / np.array([4, 3, 2, 1]))
    np.testing.assert_allclose(adj[[1, 3, 0]], [0.004, 0.06, 0.08])


def test_power_at_zero_by_hand():
    se, df, m, level = 0.01, 30.0, 0.02, 0.95
    power, scale = power_at_zero(se, df, m, level)
    crit = stats.t.ppf(level, df)
    assert power == pytest.approx(stats.norm.cdf(m / se - crit), rel=1e-12)
    assert scale == pytest.approx(((crit + stats.norm.ppf(POWER_TARGET)) * se / m) ** 2, rel=1e-9)
    assert power_at_zero(0.0, df, m, level) == (None, None)
    assert power_at_zero(math.nan, df, m, level) == (None, None)
