"""Three-level hierarchical model: cluster → question → answer (SPEC §5.2).

For 0/1 answers with both clusters and K > 1 samples per question::

    μ ~ Beta(1, 1)                         mean accuracy of a new cluster (estimand)
    log κ_c ~ Normal(2.5, 1.5)             between-cluster concentration
    log κ_q ~ Normal(2.5, 1.5)             between-question concentration within a cluster
    φ_c ~ Beta(μ κ_c, (1 − μ) κ_c)         cluster accuracy
    k_i ~ BetaBinomial(K_i, φ_c κ_q, (1 − φ_c) κ_q)   right answers of question i in cluster c

The question rate θ_i ~ Beta(φ_c κ_q, (1 − φ_c) κ_q) is integrated out (the
Beta–Binomial line), which leaves NUTS with C + 3 parameters.  The priors are
those of :mod:`.hierarchical` for the same reasons, used at both levels; set
them with :class:`~.hierarchical.HierarchicalPrior`.
"""

from __future__ import annotations

import numpy as np

from .hierarchical import HierarchicalPrior


def build_pymc_model(k, n, cluster_codes, prior: HierarchicalPrior = HierarchicalPrior(),
                     clusters=None):
    import pymc as pm
    cluster_codes = np.asarray(cluster_codes, int)
    n_clusters = int(cluster_codes.max()) + 1
    coords = {"cluster": list(clusters) if clusters is not None else list(range(n_clusters)),
              "question": list(range(len(k)))}
    with pm.Model(coords=coords) as model:
        mu = pm.Beta("mu", prior.mu_alpha, prior.mu_beta)
        log_kc = pm.Normal("log_kappa_cluster", prior.log_kappa_mean, prior.log_kappa_sd)
        log_kq = pm.Normal("log_kappa_question", prior.log_kappa_mean, prior.log_kappa_sd)
        kc, kq = pm.math.exp(log_kc), pm.math.exp(log_kq)
        phi = pm.Beta("phi", mu * kc, (1 - mu) * kc, dims="cluster")
        p = phi[cluster_codes]
        pm.BetaBinomial("k", n=np.asarray(n, int), alpha=p * kq, beta=(1 - p) * kq,
                        observed=np.asarray(k, int), dims="question")
    return model


def fit_mcmc(k, n, cluster_codes, prior: HierarchicalPrior = HierarchicalPrior(), *, clusters=None,
             draws: int = 1000, tune: int = 1000, chains: int = 2, seed: int = 0,
             progressbar: bool = False):
    """NUTS fit; returns ``arviz.InferenceData`` (posterior of ``mu``, ``phi`` …)."""
    import pymc as pm
    with build_pymc_model(k, n, cluster_codes, prior, clusters):
        return pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                         progressbar=progressbar, compute_convergence_checks=False,
                         target_accept=0.9)
