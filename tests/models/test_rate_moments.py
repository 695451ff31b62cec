"""The Beta–Binomial posterior of a new question's pass^k, E[θ^k | μ, κ] (``docs/methods.md`` §6.2),
against scipy's Beta moments, the μ interval of the same model, and a brute-force quadrature."""

import numpy as np
import pytest
from scipy import special, stats

from bayeserr.models.hierarchical import (HierarchicalPrior, batch_intervals, log_rate_moment,
                                          rate_moment_intervals)

#: τ-bench airline's gpt-4o: right runs of 4 per task (14 none, 12 one, 10 two, 4 three, 10 all)
TAU_C = np.repeat([0, 1, 2, 3, 4], [14, 12, 10, 4, 10])
TAU_N = np.full(50, 4)


def test_rate_moment_is_the_beta_moment():
    assert np.exp(log_rate_moment(0.4, 1.1, 3)) == pytest.approx(
        stats.beta.moment(3, special.expit(0.4) * np.exp(1.1), special.expit(-0.4) * np.exp(1.1)), rel=1e-10)
    lm, lk = np.linspace(-4, 4, 7)[:, None], np.linspace(-2, 6, 5)[None, :]
    mu, kappa = special.expit(lm), np.exp(lk)
    for j in (1, 2, 5, 20):
        a, b = mu * kappa, (1 - mu) * kappa
        want = np.exp(special.betaln(a + j, b) - special.betaln(a, b))  # B(a + j, b)/B(a, b)
        assert np.allclose(np.exp(log_rate_moment(lm, lk, j)), want, rtol=1e-12)


def test_power_one_is_the_mu_interval_of_the_same_model():
    rng = np.random.default_rng(0)
    for c, n in ((TAU_C, TAU_N), (rng.binomial(10, rng.beta(2, 3, 30)), np.full(30, 10)),
                 (np.array([0, 0, 1, 0, 3]), np.array([3, 3, 3, 3, 3]))):
        got = rate_moment_intervals(c, n, [1])[0, 0]
        assert np.allclose(got[1:], batch_intervals(c[None], n[None])[0], atol=2e-4)


def _brute_force(c, n, j, level=0.95, prior=HierarchicalPrior()):
    """Posterior of E[θ^j] on a 1600 × 800 grid over the whole prior box, through scipy's
    Beta–Binomial pmf and the prior's densities (no code shared with the library's grid)."""
    lm = np.linspace(-8, 8, 1600)
    lk = np.linspace(prior.log_kappa_mean - 6 * prior.log_kappa_sd, prior.log_kappa_mean + 6 * prior.log_kappa_sd, 800)
    LM, LK = np.meshgrid(lm, lk, indexing="ij")
    mu, kappa = special.expit(LM), np.exp(LK)
    logp = sum(stats.betabinom.logpmf(ci, ni, mu * kappa, (1 - mu) * kappa) for ci, ni in zip(c, n))
    logp += np.log(mu * (1 - mu)) + stats.norm.logpdf(LK, prior.log_kappa_mean, prior.log_kappa_sd)
    w = np.exp(logp - logp.max()).ravel()
    w /= w.sum()
    a, b = mu * kappa, (1 - mu) * kappa
    g = np.exp(special.betaln(a + j, b) - special.betaln(a, b)).ravel()
    order = np.argsort(g)
    cdf = np.cumsum(w[order]) - w[order] / 2
    return w @ g, *np.interp([(1 - level) / 2, (1 + level) / 2], cdf, g[order])


@pytest.mark.parametrize("j", [1, 2, 4])
def test_against_brute_force_quadrature_on_tau_bench(j):
    got = rate_moment_intervals(TAU_C, TAU_N, [j])[0, 0]
    assert np.allclose(got, _brute_force(TAU_C, TAU_N, j), atol=1.5e-3)


def test_many_data_sets_at_once_match_one_at_a_time():
    rng = np.random.default_rng(5)
    c = rng.binomial(8, rng.beta(1, 1, (3, 25)))
    n = np.full((3, 25), 8)
    both = rate_moment_intervals(c, n, [1, 3, 8])
    for r in range(3):
        assert np.allclose(both[r], rate_moment_intervals(c[r], n[r], [1, 3, 8])[0], atol=2e-5)  # shared grids
