"""bayeserr.models.task_effects (the models × tasks posterior, docs/methods.md §5.7) against a
brute-force computation: with two models the posterior of μ_1 − μ_2 reduces to the task
differences d_t ~ N(δ, τ_1² + τ_2² + V_t), so P(δ > 0) is a two-dimensional integral over
(τ_1, τ_2) (δ and the hyperprior's scale b integrated in closed form), done on a fine grid."""

import numpy as np
import pytest
from scipy import stats

from bayeserr.models.task_effects import B0, posterior


def _brute_p(y, v) -> float:
    d, V = y[0] - y[1], v[0] + v[1]
    lt = np.linspace(np.log(1e-4), np.log(2.0), 1200)
    t1, t2 = np.meshgrid(np.exp(lt), np.exp(lt), indexing="ij")
    w = 1 / ((t1 ** 2 + t2 ** 2)[..., None] + V)
    dh = (w * d).sum(-1) / w.sum(-1)
    # δ flat, integrated: the restricted likelihood; τ_j² ~ InvGamma(2, b), b ~ Gamma(1, 1/B0)
    # integrated: p(τ_1, τ_2) ∝ Π τ_j^(−5) (Σ τ_j^(−2) + 1/B0)^(−5); the grid is in log τ
    loglik = -0.5 * np.log(w.sum(-1)) + 0.5 * np.log(w).sum(-1) - 0.5 * (w * (d - dh[..., None]) ** 2).sum(-1)
    logprior = -5 * np.log(t1 * t2) - 5 * np.log(t1 ** -2 + t2 ** -2 + 1 / B0) + np.log(t1 * t2)
    p = np.exp(loglik + logprior - (loglik + logprior).max())
    return float((p * stats.norm.cdf(dh * np.sqrt(w.sum(-1)))).sum() / p.sum())


@pytest.mark.parametrize("seed, T", [(3, 4), (6, 12)])
def test_two_models_match_the_brute_force_integral(seed, T):
    rng = np.random.default_rng(seed)
    y = np.vstack([0.6 + rng.normal(0, 0.05, T), 0.57 + rng.normal(0, 0.08, T)])
    v = rng.uniform(0.001, 0.004, (2, T))
    post = posterior(y, v, draws=4000, seed=1)
    want = _brute_p(y, v)
    assert post.rhat < 1.01 and post.ess > 2000
    # 16,000 nearly independent draws: the MC SE of a probability is at most 0.004
    assert abs(post.p_best[0] - want) < 0.015, (post.p_best[0], want)
    assert post.p_best.sum() == pytest.approx(1.0)


def test_ranks_and_their_intervals_are_consistent():
    rng = np.random.default_rng(0)
    M, T = 6, 10
    y = np.linspace(0.7, 0.45, M)[:, None] + rng.normal(0, 0.04, (1, T)) + rng.normal(0, 0.02, (M, T))
    post = posterior(y, np.full((M, T), 0.001), seed=2)
    assert np.all(post.rank_low <= np.round(post.rank_mean)) and np.all(np.round(post.rank_mean) <= post.rank_high)
    assert post.rank_low[0] == 1 and np.argmax(post.p_best) == 0 and post.rank_high[-1] == M
    assert np.all(post.tau > 0)
