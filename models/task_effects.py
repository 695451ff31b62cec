"""Models × tasks: the Bayesian leaderboard over tasks like these (``docs/methods.md`` §3.15, §5.7).

Model, for model j's observed mean ``ȳ_jt`` on task t with its sampling variance ``v_jt``
taken from the data (each task's CR2 variance)::

    ȳ_jt = μ_j + a_t + u_jt + e_jt,   e_jt ~ N(0, v_jt),   u_jt ~ N(0, τ_j²)
    μ_j, a_t flat;   τ_j² ~ InvGamma(2, b);   b ~ Gamma(1, rate = 1/B0)

``a_t`` is the task's difficulty (shared by the models), ``u_jt`` the model × task
interaction — what makes ranks move from task to task — with **its own SD for each model**
(a specialist's scores swing more than a generalist's; the models' SDs are pooled through
``b``, whose prior mean ``B0`` puts τ near 5 points), and ``μ_j`` the model's level over tasks
like these.  The ranking reads only the contrasts ``μ_j − μ_k``, which the flat priors leave
identified (the sampler centres ``a`` after each step, a move along the unidentified
direction ``(μ + c, a − c)`` that leaves the posterior of the contrasts unchanged).

Sampler (``u`` integrated out, so ``ȳ_jt ~ N(μ_j + a_t, τ_j² + v_jt)``), per iteration:

1. ``(μ, a) | τ``: normal — the weighted two-way least squares with weights
   ``1/(τ_j² + v_jt)`` and its covariance (exact block draw);
2. ``log τ_j | μ, a, b``: a random-walk Metropolis step for each model (step tuned in warm-up);
3. ``b | τ``: Gamma(1 + 2M, 1/B0 + Σ_j 1/τ_j²) (conjugate).

Four chains from dispersed starts; R-hat and the bulk ESS of every μ contrast come with the
result (:mod:`bayeserr.models.diagnostics` thresholds).  From the draws: P(best over tasks like
these), the mean rank and each model's rank credible interval.  The ``e_jt`` are taken as
independent across models; models answering the same questions are positively correlated
within a task, which this ignores (the contrasts' within-task noise is overstated: cautious).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: prior mean of b, the scale of the models' interaction variances (τ near 5 points)
B0 = 0.05 ** 2
CHAINS, WARMUP, DRAWS = 4, 500, 1000


@dataclass(frozen=True)
class TaskPosterior:
    """Posterior summaries of the models × tasks model (arrays over the M models)."""

    p_best: np.ndarray       #: P(μ_j is the largest)
    rank_mean: np.ndarray    #: posterior mean rank (1 = best)
    rank_low: np.ndarray     #: rank credible interval (equal tails, whole ranks)
    rank_high: np.ndarray
    tau: np.ndarray          #: posterior mean of each model's interaction SD τ_j
    rhat: float              #: the largest R-hat of the μ contrasts (rank-normalised, split)
    ess: float               #: the smallest bulk ESS of the μ contrasts
    draws: int


def _design(M: int, T: int) -> np.ndarray:
    """Rows (j, t) of the two-way model: μ_1…μ_M, then a_2…a_T (a_1 = 0)."""
    X = np.zeros((M * T, M + T - 1))
    j, t = np.divmod(np.arange(M * T), T)
    X[np.arange(M * T), j] = 1.0
    X[np.flatnonzero(t > 0), M + t[t > 0] - 1] = 1.0
    return X


def _draw_levels(X, y, v, tau2, rng, M: int, T: int) -> np.ndarray:
    """One draw of (μ, a) given τ² (step 1), a centred to mean 0."""
    w = 1.0 / (np.repeat(tau2, T) + v)
    A = (X.T * w) @ X
    chol = np.linalg.cholesky(A)
    beta = np.linalg.solve(A, (X.T * w) @ y)
    beta = beta + np.linalg.solve(chol.T, rng.standard_normal(len(beta)))
    a = np.concatenate([[0.0], beta[M:]])
    return np.concatenate([beta[:M] + a.mean(), a - a.mean()])


def _log_target(log_tau, r2, v, b):
    """log p(log τ_j | μ, a, b) per model: the likelihood of its residuals, InvGamma(2, b) on τ²
    and the Jacobian of log τ."""
    tau2 = np.exp(2 * log_tau)
    s = tau2[:, None] + v
    return -0.5 * (np.log(s) + r2 / s).sum(axis=1) - 3 * np.log(tau2) - b / tau2 + 2 * log_tau


def _chain(y, v, rng, warmup: int, draws: int):
    M, T = y.shape
    X = _design(M, T)
    flat_y, flat_v = y.reshape(-1), v.reshape(-1)
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + y.mean()
    log_tau = np.log(np.maximum(resid.std(axis=1), 0.005)) + rng.normal(0, 0.5, M)
    b, step = B0, np.full(M, 0.5)
    mus, taus = np.empty((draws, M)), np.empty((draws, M))
    accepted = np.zeros(M)
    for it in range(warmup + draws):
        levels = _draw_levels(X, flat_y, flat_v, np.exp(2 * log_tau), rng, M, T)
        r2 = (y - levels[:M, None] - levels[None, M:]) ** 2
        proposal = log_tau + step * rng.standard_normal(M)
        accept = np.log(rng.random(M)) < _log_target(proposal, r2, v, b) - _log_target(log_tau, r2, v, b)
        log_tau = np.where(accept, proposal, log_tau)
        b = rng.gamma(1 + 2 * M, 1.0 / (1.0 / B0 + np.exp(-2 * log_tau).sum()))
        if it < warmup:
            accepted += accept
            if (it + 1) % 50 == 0:  # aim at 30–50% acceptance
                rate = accepted / 50
                step = step * np.where(rate > 0.5, 1.5, np.where(rate < 0.25, 0.6, 1.0))
                accepted[:] = 0
        else:
            mus[it - warmup], taus[it - warmup] = levels[:M], np.exp(log_tau)
    return mus, taus


def posterior(means, var, level: float = 0.95, *, chains: int = CHAINS, warmup: int = WARMUP,
              draws: int = DRAWS, seed: int = 0) -> TaskPosterior:
    """The posterior of the models' levels over tasks like these from task means ``means``
    (M, T) and their sampling variances ``var`` (M, T) (module docstring)."""
    from bayeserr.models import compat
    az = compat.import_stats()  # R-hat and ESS from ArviZ (0.x: arviz; 1.x: arviz_stats)
    y = np.asarray(means, float)
    v = np.maximum(np.asarray(var, float), 1e-10)
    rngs = [np.random.default_rng([seed, c]) for c in range(chains)]
    runs = [_chain(y, v, rng, warmup, draws) for rng in rngs]
    mu = np.stack([r[0] for r in runs])                              # (chains, draws, M)
    contrasts = mu - mu.mean(axis=2, keepdims=True)
    flat = mu.reshape(-1, y.shape[0])
    ranks = 1 + (flat[:, None, :] > flat[:, :, None]).sum(axis=2)   # (draws, M)
    alpha = 1.0 - level
    return TaskPosterior(p_best=(ranks == 1).mean(axis=0), rank_mean=ranks.mean(axis=0),
                         rank_low=np.quantile(ranks, alpha / 2, axis=0, method="lower").astype(int),
                         rank_high=np.quantile(ranks, 1 - alpha / 2, axis=0, method="higher").astype(int),
                         tau=np.stack([r[1] for r in runs]).reshape(-1, y.shape[0]).mean(axis=0),
                         rhat=float(max(az.rhat(contrasts[..., j]) for j in range(y.shape[0]))),
                         ess=float(min(az.ess(contrasts[..., j], method="bulk") for j in range(y.shape[0]))),
                         draws=int(flat.shape[0]))
