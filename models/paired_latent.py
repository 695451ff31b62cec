"""Bivariate latent model for a paired comparison (SPEC §5.3b).

For 0/1 answers of models A and B on the same questions, with clusters and/or
K samples per question::

    logit p_{j,i} = β_j + u_{c(i), j} + v_{i, j}           j ∈ {A, B}
    v_i ~ MvNormal(0, Σ_q)       correlated question effects of the two models
    u_c ~ MvNormal(0, Σ_c)       correlated cluster effects (when clustered)
    k_{j,i} ~ Binomial(K_{j,i}, p_{j,i})

Priors: ``β_j ~ Normal(0, 1.5)`` (accuracies from about 5% to 95% a priori);
each Σ as sds ``~ HalfNormal(1.5)`` (questions; 1.0 for clusters) and a
correlation ``ρ = 2r − 1``, ``r ~ Beta(2, 2)``, which is the LKJ(η = 2) prior
of a 2×2 correlation: it mildly favours moderate correlations over ±1.  A
latent sd of 1.5 on the logit scale allows questions from near-certain to
near-impossible.  Effects are non-centred (``v = sd · z``) for NUTS.

Estimand: the population-averaged accuracy difference
``Δ = E[expit(β_A + u_A + v_A)] − E[expit(β_B + u_B + v_B)]`` over a new
cluster and question, computed for every posterior draw with a fixed set of
standard-normal points (common random numbers).  Also reported: the
correlation of the question effects (how alike the two models' difficulties
are), ``P(Δ > 0)`` and ``P(|Δ| < rope)``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

N_POINTS = 512


def _pair_effects(pm, name, sd_scale, index, dim, symmetric: bool = False):
    """Correlated effects (a, b) of the two models for each unit of ``dim``,
    ``ρ = 2r − 1`` with ``r ~ Beta(2, 2)`` (the LKJ(2) prior of a 2×2
    correlation), from standard normals z_0, z_1 through a square root of
    the correlation matrix:

    * Cholesky: ``a = σ_A z_0``, ``b = σ_B (ρ z_0 + sqrt(1 − ρ²) z_1)``;
    * ``symmetric``: ``a = σ_A (c₊ z_0 + c₋ z_1)``, ``b = σ_B (c₊ z_0 − c₋ z_1)``,
      ``c± = sqrt((1 ± ρ)/2)``: z_0 moves both models alike, z_1 apart.

    Both give the same prior (and posterior) of (a, b); the symmetric root is
    what NUTS mixes better on the question effects, where ρ is near 1 (two
    models find the same questions hard: SWE-bench's best pair, ρ ≈ 0.97),
    and the Cholesky one on the few cluster effects (``docs/methods.md`` §5.6)."""
    sd = pm.HalfNormal(f"sd_{name}", sd_scale, dims="model")
    rho = pm.Deterministic(f"rho_{name}", 2 * pm.Beta(f"r_{name}", 2.0, 2.0) - 1)
    z0 = pm.Normal(f"z0_{name}", 0.0, 1.0, dims=dim)
    z1 = pm.Normal(f"z1_{name}", 0.0, 1.0, dims=dim)
    if symmetric:
        same, apart = pm.math.sqrt((1 + rho) / 2) * z0, pm.math.sqrt((1 - rho) / 2) * z1
        a, b = sd[0] * (same + apart), sd[1] * (same - apart)
    else:
        a = sd[0] * z0
        b = sd[1] * (rho * z0 + pm.math.sqrt(1 - rho**2) * z1)
    if index is not None:
        a, b = a[index], b[index]
    return a, b


def build_pymc_model(k, n, cluster_codes=None):
    """``k``, ``n``: arrays (2, questions) of right answers and answers."""
    from bayeserr.models import compat
    pm = compat.import_pymc()
    k, n = np.asarray(k, int), np.asarray(n, int)
    coords = {"model": ["A", "B"], "question": np.arange(k.shape[1])}
    if cluster_codes is not None:
        coords["cluster"] = np.arange(int(np.max(cluster_codes)) + 1)
    with pm.Model(coords=coords) as m:
        beta = pm.Normal("beta", 0.0, 1.5, dims="model")
        va, vb = _pair_effects(pm, "question", 1.5, None, "question", symmetric=True)
        eta_a, eta_b = beta[0] + va, beta[1] + vb
        if cluster_codes is not None:
            ua, ub = _pair_effects(pm, "cluster", 1.0, np.asarray(cluster_codes, int), "cluster")
            eta_a, eta_b = eta_a + ua, eta_b + ub
        pm.Binomial("k_a", n=n[0], logit_p=eta_a, observed=k[0], dims="question")
        pm.Binomial("k_b", n=n[1], logit_p=eta_b, observed=k[1], dims="question")
    return m


def _effect_draws(post, name, z):
    """Effects of both models at fixed standard-normal points z (points × 2),
    for every posterior draw: (chain, draw, points, 2)."""
    sd = post[f"sd_{name}"].values[:, :, None, :]
    rho = post[f"rho_{name}"].values[:, :, None]
    a = sd[..., 0] * z[:, 0]
    b = sd[..., 1] * (rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1])
    return np.stack([a, b], axis=-1)


def population_difference(idata, clustered: bool, seed: int = 0) -> np.ndarray:
    """Δ for every posterior draw (chain, draw), by averaging over fixed normal points."""
    rng = np.random.default_rng(seed)
    post = idata.posterior
    effects = _effect_draws(post, "question", rng.standard_normal((N_POINTS, 2)))
    if clustered:
        effects = effects + _effect_draws(post, "cluster", rng.standard_normal((N_POINTS, 2)))
    p = special.expit(post["beta"].values[:, :, None, :] + effects).mean(axis=2)
    return p[..., 0] - p[..., 1]


def fit_mcmc(k, n, cluster_codes=None, *, draws: int = 1000, tune: int = 1000, chains: int = 2,
             seed: int = 0, target_accept: float = 0.95, progressbar: bool = False, cores: int | None = None):
    """NUTS fit; the posterior gains ``delta`` (the estimand) and accuracies ``p_A``, ``p_B``."""
    from bayeserr.models import compat, nuts
    with build_pymc_model(k, n, cluster_codes):
        idata = nuts.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, cores=cores,
                          target_accept=target_accept)
    idata.attrs["target_accept"] = float(target_accept)
    delta = population_difference(idata, cluster_codes is not None, seed)
    compat.add_variable(idata, "delta", ("chain", "draw"), delta)
    return idata
