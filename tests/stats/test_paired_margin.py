"""The score test of a paired difference of proportions against a margin
(``bayeserr.stats.paired_margin``; ``docs/methods.md`` §3.11, (G1)–(G5)) against
independent computations written here: the restricted MLE by numerical maximisation
of the multinomial likelihood, the statistic from it, McNemar's score statistic at
δ₀ = 0, the skewness from the trinomial's moments, the inverted bounds against a grid
search, and the test's size at the margin by exact enumeration of every table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special, stats

from bayeserr.stats import paired_margin as pm

#: (b, c, n, δ₀): tables and nulls in and at the edges of the parameter space
CASES = [(12, 20, 100, -0.02), (29, 28, 500, -0.01), (3, 9, 40, 0.05), (0, 7, 30, -0.05), (7, 0, 30, 0.05),
         (40, 25, 100, 0.1), (1, 1, 20, -0.3), (0, 0, 50, -0.02), (0, 0, 50, 0.02), (18, 2, 20, 0.5),
         (5, 5, 10, 0.0), (60, 61, 500, -0.2)]


def mle_by_optimizer(b, c, n, d0):
    """The MLE of (p₁₀, p₀₁) under p₁₀ − p₀₁ = δ₀: maximise the multinomial log-likelihood
    ``b log p₁₀ + c log p₀₁ + (n − b − c) log(1 − p₁₀ − p₀₁)`` over the one free parameter
    with a bounded scalar optimiser, then polish with a root finder on the score equation."""
    lo, hi = max(0.0, -d0), (1.0 - d0) / 2.0

    def nll(q):
        p10, p01 = q + d0, q
        return -(special.xlogy(b, p10) + special.xlogy(c, p01) + special.xlogy(n - b - c, 1 - p10 - p01))

    res = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14})
    q = res.x

    def dll(q):
        return b / (q + d0) + c / q - 2.0 * (n - b - c) / (1.0 - 2.0 * q - d0)

    eps = 1e-12
    if lo + eps < q < hi - eps and (c > 0 or d0 != 0):
        a, z = max(lo + eps, q - 1e-3), min(hi - eps, q + 1e-3)
        if np.sign(dll(a)) != np.sign(dll(z)):
            q = optimize.brentq(dll, a, z, xtol=1e-15)
    # an edge: the likelihood may be largest on the boundary of the feasible set
    ends = [x for x in (lo, hi) if np.isfinite(nll(x))]
    best = min([q, *ends], key=nll)
    return best + d0, best


@pytest.mark.parametrize("b, c, n, d0", CASES)
def test_restricted_mle_is_the_likelihoods_maximum(b, c, n, d0):
    p10, p01 = pm.restricted_mle(b, c, n, d0)
    r10, r01 = mle_by_optimizer(b, c, n, d0)
    assert float(p01) == pytest.approx(r01, abs=1e-8) and float(p10) == pytest.approx(r10, abs=1e-8)
    assert float(p10) - float(p01) == pytest.approx(d0, abs=1e-15)


@pytest.mark.parametrize("b, c, n, d0", CASES)
def test_score_statistic_from_the_numerical_mle(b, c, n, d0):
    """(G2) from the MLE found numerically: the variance of b − c under H0 is
    n (p₁₀ + p₀₁ − δ₀²) = n (2 p₀₁ + δ₀ (1 − δ₀))."""
    r10, r01 = mle_by_optimizer(b, c, n, d0)
    var = n * (r10 + r01 - d0 * d0)
    num = b - c - n * d0
    z = pm.score_statistic(b, c, n, d0)
    if var == 0:
        assert float(z) == (0.0 if num == 0 else np.sign(num) * np.inf)
    else:
        assert float(z) == pytest.approx(num / np.sqrt(var), abs=1e-8, rel=1e-8)


def test_delta_zero_is_mcnemars_score_statistic():
    rng = np.random.default_rng(3)
    n = rng.integers(10, 2000, size=200)
    b = rng.integers(0, n // 2)
    c = rng.integers(0, n - b)
    ok = b + c > 0
    z = pm.score_statistic(b, c, n, 0.0)
    assert np.allclose(z[ok], ((b - c) / np.sqrt(b + c))[ok], rtol=1e-12, atol=0)
    assert (z[~ok] == 0).all()
    # squared, it is McNemar's chi-square without correction (statsmodels)
    from statsmodels.stats.contingency_tables import mcnemar
    for bi, ci in ((12, 5), (40, 61), (3, 0)):
        chi2 = mcnemar([[50, bi], [ci, 50]], exact=False, correction=False).statistic
        assert float(pm.score_statistic(bi, ci, 200, 0.0)) ** 2 == pytest.approx(chi2, rel=1e-12)


@pytest.mark.parametrize("b, c, n, d0", [x for x in CASES if x[0] + x[1] > 0])
def test_skewness_is_the_trinomials(b, c, n, d0):
    """(G4): the skewness of b − c, Σ of n independent d ∈ {+1, −1, 0} with the restricted
    probabilities, from the moments of the distribution of d enumerated here."""
    r10, r01 = mle_by_optimizer(b, c, n, d0)
    values, probs = np.array([1.0, -1.0, 0.0]), np.array([r10, r01, 1 - r10 - r01])
    mean = probs @ values
    var, mu3 = probs @ (values - mean) ** 2, probs @ (values - mean) ** 3
    if var < 1e-14:
        return
    assert mean == pytest.approx(d0, abs=1e-12)
    assert float(pm.skewness(b, c, n, d0)) == pytest.approx(mu3 / var**1.5 / np.sqrt(n), rel=1e-6, abs=1e-8)


def test_corrections():
    """(G3): no correction reproduces (G2); the continuity correction moves b − c − nδ₀ half a
    step towards 0 (0 within half a step); the skewness correction solves
    Z_c = S + (γ/6)(S² − 1) and vanishes at δ₀ = 0 (a symmetric null)."""
    b, c, n = np.array([12, 30, 9, 40]), np.array([20, 28, 9, 25]), np.array([100, 500, 50, 100])
    for d0 in (-0.05, -0.01, 0.0, 0.03):
        plain = pm.score_statistic(b, c, n, d0)
        assert np.allclose(pm.corrected_statistic(b, c, n, d0, continuity=0, skew=False), plain, rtol=1e-14)
        zc = pm.corrected_statistic(b, c, n, d0, skew=False)
        T = b - c - n * d0
        with np.errstate(invalid="ignore", divide="ignore"):
            expect = np.where(np.abs(T) <= 0.5, 0.0, plain * (np.abs(T) - 0.5) / np.abs(T))
        assert np.allclose(zc, expect, rtol=1e-12, atol=1e-15)
        s = pm.corrected_statistic(b, c, n, d0)
        g = pm.skewness(b, c, n, d0) / 6
        live = zc != 0
        assert np.allclose((s + g * (s * s - 1))[live], zc[live], rtol=1e-10, atol=1e-12)
    at_zero = pm.corrected_statistic(b, c, n, 0.0)
    assert np.allclose(at_zero, pm.corrected_statistic(b, c, n, 0.0, skew=False), rtol=1e-14)


@pytest.mark.parametrize("level", [0.95, 0.975, 0.99])
def test_bounds_invert_the_test(level):
    """(G5): ``p < 1 − L ⇔ lower > δ₀`` and the upper bound mirrors it; checked on a grid of
    nulls against a direct scan, and ``upper(b, c) = −lower(c, b)``."""
    rng = np.random.default_rng(int(level * 1000))
    n = rng.integers(20, 600, size=25)
    b = rng.binomial(n, 0.12)
    c = rng.binomial(n - b, 0.1)
    res = pm.score_test(b, c, n, 0.0, level)
    z = stats.norm.ppf(level)
    grid = np.linspace(-0.6, 0.6, 2401)
    for i in range(len(n)):
        s = pm.corrected_statistic(b[i], c[i], n[i], grid)  # the test at every null of the grid
        passes = s > z
        assert passes[grid < res.lower[i] - 1e-9].all() and not passes[grid > res.lower[i] + 1e-9].any()
        below = s < -z
        assert below[grid > res.upper[i] + 1e-9].all() and not below[grid < res.upper[i] - 1e-9].any()
        nulls = grid[::60]
        p = pm.score_test(b[i], c[i], n[i], nulls, level).p_value
        assert ((p < 1 - level) == (res.lower[i] > nulls)).all()
    mirror = pm.score_test(c, b, n, 0.0, level)
    assert np.allclose(res.upper, -mirror.lower, atol=1e-12)
    assert (res.lower <= (b - c) / n).all() and (res.upper >= (b - c) / n).all()
    assert np.allclose(res.p_value, stats.norm.sf(res.statistic), rtol=1e-12)


def test_bounds_at_the_edges():
    """All questions only-B right: the lower bound is −1; no discordant question: the bounds
    straddle 0; all only-A right: the upper bound is 1."""
    r = pm.score_test([0, 0, 30], [30, 0, 0], [30, 30, 30], 0.0, 0.95)
    assert r.lower[0] == pytest.approx(-1.0, abs=1e-12) and r.upper[2] == pytest.approx(1.0, abs=1e-12)
    assert r.lower[1] < 0 < r.upper[1] and r.lower[1] == pytest.approx(-r.upper[1], abs=1e-12)


def test_counts_from_moments():
    rng = np.random.default_rng(8)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.8, 0.1], size=(50, 137))
    b, c = pm.counts_from_moments(d.mean(1), d.std(1, ddof=1) / np.sqrt(137), 137)
    assert (b == (d == 1).sum(1)).all() and (c == (d == -1).sum(1)).all()
    frac = rng.uniform(-1, 1, size=(5, 137))
    fb, fc = pm.counts_from_moments(frac.mean(1), frac.std(1, ddof=1) / np.sqrt(137), 137)
    assert np.isnan(fb).all() and np.isnan(fc).all()


def exact_size(n, disagree, d0, alpha, stat):
    """P(reject) at p₁₀ − p₀₁ = δ₀ (p₁₀ + p₀₁ = disagree), summed over every (b, c)."""
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = b + c <= n
    b, c = b[keep], c[keep]
    p10, p01 = (disagree + d0) / 2, (disagree - d0) / 2
    logp = (special.gammaln(n + 1) - special.gammaln(b + 1) - special.gammaln(c + 1)
            - special.gammaln(n - b - c + 1) + special.xlogy(b, p10) + special.xlogy(c, p01)
            + special.xlogy(n - b - c, 1 - disagree))
    return float(np.exp(logp)[stat(b, c, n, d0) > stats.norm.isf(alpha)].sum())


@pytest.mark.parametrize("n", [20, 50, 84, 100, 200])
def test_size_at_the_margin_by_enumeration(n):
    """The corrected test holds its level at the margin (exactly: every table enumerated),
    where the uncorrected score statistic and the paired z do not: n = 84 with 10%
    disagreement and superiority at 5 points is the worst cell of the plain score test's
    dense scan (docs/methods.md §3.11)."""
    worst = 0.0
    for disagree in (0.1, 0.2, 0.4):
        for d0 in (-0.05, -0.02, -0.01, 0.01, 0.02, 0.05):
            for alpha in (0.05, 0.025):
                worst = max(worst, exact_size(n, disagree, d0, alpha, pm.corrected_statistic) / alpha)
    assert worst <= 1.0, worst
    if n == 84:
        plain = exact_size(84, 0.1, 0.05, 0.05, pm.score_statistic)
        assert plain > 0.055  # the uncorrected statistic: 5.85%
