"""Bivariate latent model for a paired comparison (SPEC §5.3b; ``docs/methods.md`` §5.3, §5.6).

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
near-impossible.

Sampled in an exactly equivalent form (the same posterior of every quantity
above; ``docs/methods.md`` §5.6): the effects are split into their means over
the units and their deviations from them, ``v_i = v̄ + ṽ_i`` and
``u_c = ū + ũ_c``.  The likelihood sees β, v̄ and ū only through the intercept
``α = β + v̄ + ū``, so NUTS samples α, whose prior is
``N(0, 1.5² I + Σ_q/N + Σ_c/C)`` (N questions, C clusters: the three are
independent normals), and the deviations, non-centred through standard normals
that sum to zero; β, which the likelihood does not see beyond α, is drawn
afterwards from its exact conditional given α (a 2-D normal).  This removes
the ridge between β and the mean effects that made the direct form slow.

The intercepts themselves are sampled scaled, ``α_j = c_j α̃_j`` with
``c_j = sqrt(1 + π(σ_q,j² + σ_c,j²)/8)`` (σ_c when the questions fall in
several clusters): by the probit approximation the mean accuracy of model
j's questions is about ``expit(α_j / c_j)``, which at a low base rate the data
fix far better than α_j, so in α the posterior has a curved ridge (a larger
σ needs a lower α) and in α̃ much less of one.  α̃'s prior is α's normal
rescaled (the Jacobian is in the normal's scale), so prior and posterior are
unchanged (``docs/methods.md`` §5.6, where the measurements are); α_A and α_B
stay in the posterior as deterministics.  A fit that still fails the
diagnostics is run once more by ``bayeserr compare`` with twice the draws
(:func:`rerun_settings`).

Estimand: the population-averaged accuracy difference
``Δ = E[expit(β_A + u_A + v_A)] − E[expit(β_B + u_B + v_B)]`` over a new
cluster and question, computed for every posterior draw.  Each term is a
one-dimensional normal integral, as a new cluster's and a new question's
effects add to one normal ``N(0, σ_q,j² + σ_c,j²)``; it is integrated by the
trapezoid rule (:func:`population_difference`), not by random points, so Δ
has no simulation noise of its own.  Also reported: the
correlation of the question effects (how alike the two models' difficulties
are), ``P(Δ > 0)`` and ``P(|Δ| < rope)``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

#: nodes and weights of E[f(Z)], Z ~ N(0, 1): the trapezoid rule on [−12, 12] in steps of
#: 0.05 (481 nodes), within 5e-11 of adaptive quadrature for E[expit(μ + sZ)] with latent sds
#: s up to 20 (tested); 512 random points before moved P(A > B) by up to 0.1 between seeds
_Z = np.linspace(-12.0, 12.0, 481)
_W = np.exp(-0.5 * _Z**2) / np.sqrt(2 * np.pi) * (_Z[1] - _Z[0])
#: prior sd of β_j
BETA_SD = 1.5
#: NUTS target acceptance rate of a fit (``--target-accept`` sets another)
TARGET_ACCEPT = 0.9


def _zero_sum(pm, name, size):
    """``size`` standard normals conditioned to sum to zero, i.e. ``z − z̄`` for iid
    ``z ~ N(0, 1)`` (PyMC's ``ZeroSumNormal(1)``), from ``size − 1`` free standard normals
    through the orthonormal map PyMC's zero-sum transform uses (a Householder
    reflection; ``docs/methods.md`` §5.6).  Written out rather than as
    ``pm.ZeroSumNormal``: the same density in fewer graph nodes to compile."""
    import pytensor.tensor as pt
    x = pm.Normal(name, 0.0, 1.0, shape=size - 1)
    total, root = x.sum(), float(np.sqrt(size))
    shift = total / (root + size)
    return pt.concatenate([x, (shift - total / root)[None]]) - shift


def _pair_effects(pm, name, sd_scale, size):
    """Deviations (a, b) of the two models' correlated effects from their means over
    the ``size`` units, and the 2×2 covariance ``(Σ_AA, Σ_AB, Σ_BB)`` of one unit's
    effects.  ``ρ = 2r − 1`` with ``r ~ Beta(2, 2)`` (the LKJ(2) prior of a 2×2
    correlation); the effects come from standard normals z_0, z_1 (zero-sum: the
    deviations) through the symmetric square root of the correlation matrix,
    ``a = σ_A (c₊ z_0 + c₋ z_1)``, ``b = σ_B (c₊ z_0 − c₋ z_1)``, ``c± = sqrt((1 ± ρ)/2)``:
    z_0 moves both models alike, z_1 apart.  The Cholesky root
    (``b = σ_B (ρ z_0 + sqrt(1 − ρ²) z_1)``) gives the same prior and posterior but
    NUTS mixes ρ worse through it: on the question effects, where ρ is near 1 (two
    models find the same questions hard: SWE-bench's best pair, ρ ≈ 0.97), and, once
    the means are taken out, on the cluster effects too (``docs/methods.md`` §5.6).
    One unit: its effect is all mean (absorbed in α), no deviation."""
    sd = pm.HalfNormal(f"sd_{name}", sd_scale, dims="model")
    rho = pm.Deterministic(f"rho_{name}", 2 * pm.Beta(f"r_{name}", 2.0, 2.0) - 1)
    cov = (sd[0] ** 2, rho * sd[0] * sd[1], sd[1] ** 2)
    if size < 2:
        return 0.0, 0.0, cov
    z0, z1 = _zero_sum(pm, f"z0_{name}", size), _zero_sum(pm, f"z1_{name}", size)
    same, apart = pm.math.sqrt((1 + rho) / 2) * z0, pm.math.sqrt((1 - rho) / 2) * z1
    return sd[0] * (same + apart), sd[1] * (same - apart), cov


def _mean_cov(covs_and_sizes):
    """Covariance ``(S_AA, S_AB, S_BB)`` of the sum of the mean effects: Σ/size summed."""
    return tuple(sum(cov[i] / size for cov, size in covs_and_sizes) for i in range(3))


def probit_scale(var):
    """``c = sqrt(1 + π σ²/8)``: ``E[expit(α + σZ)] ≈ expit(α / c)`` (the probit
    approximation of the logistic-normal integral), so at a fixed mean accuracy α moves
    with σ about as ``c`` does (``docs/methods.md`` §5.6)."""
    return (1.0 + np.pi / 8.0 * var) ** 0.5


def _intercepts(pm, s, var_a, var_b):
    """The intercepts ``(α_A, α_B) ~ N2(0, M)``, ``M = BETA_SD² I + S`` (``s`` = ``(S_AA,
    S_AB, S_BB)``), sampled as ``α̃_j = α_j / c_j`` with ``c_j`` = :func:`probit_scale` of
    the latent variance ``var_j`` of model j's effects.  α_A ~ N(0, √M_AA) and α_B | α_A ~
    N(M_AB/M_AA · α_A, sd_B) become α̃_A ~ N(0, √M_AA / c_A) and α̃_B | α̃_A ~
    N(M_AB/M_AA · c_A α̃_A / c_B, sd_B / c_B): a linear change of each normal variable
    (c_j depends on the sds only, which are held fixed), whose Jacobian 1/c_j the
    normal's scale carries, so the prior and posterior are exactly those of α.  At a low
    base rate the data fix the mean accuracy, ≈ expit(α_j / c_j), far better than α_j,
    and a larger σ_j needs a more negative α_j: a curved ridge between α_j and σ_j that
    α̃_j mostly straightens (``docs/methods.md`` §5.6).  α_A, α_B stay in the posterior as
    deterministics."""
    s_aa, s_ab, s_bb = s
    c_a, c_b = probit_scale(var_a), probit_scale(var_b)
    m_aa = BETA_SD**2 + s_aa
    scaled_a = pm.Normal("alpha_a_scaled", 0.0, pm.math.sqrt(m_aa) / c_a)
    alpha_a = pm.Deterministic("alpha_a", c_a * scaled_a)
    sd_b = pm.math.sqrt(BETA_SD**2 + s_bb - s_ab**2 / m_aa)
    scaled_b = pm.Normal("alpha_b_scaled", s_ab / m_aa * alpha_a / c_b, sd_b / c_b)
    return alpha_a, pm.Deterministic("alpha_b", c_b * scaled_b)


def build_pymc_model(k, n, cluster_codes=None):
    """``k``, ``n``: arrays (2, questions) of right answers and answers.  The model is
    sampled in the form of the module docstring (α̃ = α/c and zero-sum deviations); β is not
    in it (see :func:`beta_draws`)."""
    from bayeserr.models import compat
    pm = compat.import_pymc()
    k, n = np.asarray(k, int), np.asarray(n, int)
    n_q = k.shape[1]
    with pm.Model(coords={"model": ["A", "B"]}) as m:
        va, vb, cov_q = _pair_effects(pm, "question", 1.5, n_q)
        parts = [(cov_q, n_q)]
        if cluster_codes is not None:
            codes = np.asarray(cluster_codes, int)
            n_c = int(np.max(codes)) + 1
            ua, ub, cov_c = _pair_effects(pm, "cluster", 1.0, n_c)
            parts.append((cov_c, n_c))
            if n_c > 1:
                va, vb = va + ua[codes], vb + ub[codes]
        # the spread of the effects the data see: questions, and clusters when there are several
        spread = [(cov, size) for cov, size in parts if size > 1]
        alpha_a, alpha_b = _intercepts(pm, _mean_cov(parts), sum(cov[0] for cov, _ in spread),
                                       sum(cov[2] for cov, _ in spread))
        pm.Binomial("k_a", n=n[0], logit_p=alpha_a + va, observed=k[0])
        pm.Binomial("k_b", n=n[1], logit_p=alpha_b + vb, observed=k[1])
    return m


def beta_draws(post, n_questions: int, n_clusters: int | None, rng) -> np.ndarray:
    """β (chain, draw, 2) from its conditional given the intercept: with
    ``α = β + e``, ``β ~ N(0, s² I)`` and ``e ~ N(0, S)`` independent (``s`` = BETA_SD,
    ``S = Σ_q/N + Σ_c/C``, the covariance of the mean effects), ``β | α ~ N(s² M⁻¹ α,
    s² M⁻¹ S)``, ``M = s² I + S`` (``docs/methods.md`` §5.6).  Exact, so the draws of
    (β, everything else) are draws of the model's posterior."""
    def cov(name):
        sd, rho = post[f"sd_{name}"].values, post[f"rho_{name}"].values
        return sd[..., 0] ** 2, rho * sd[..., 0] * sd[..., 1], sd[..., 1] ** 2

    parts = [(cov("question"), n_questions)] + ([(cov("cluster"), n_clusters)] if n_clusters else [])
    s_aa, s_ab, s_bb = _mean_cov(parts)
    s2 = BETA_SD**2
    m_aa, m_bb = s2 + s_aa, s2 + s_bb
    det_m, det_s = m_aa * m_bb - s_ab**2, s_aa * s_bb - s_ab**2
    a, b = post["alpha_a"].values, post["alpha_b"].values
    mean_a, mean_b = s2 * (m_bb * a - s_ab * b) / det_m, s2 * (m_aa * b - s_ab * a) / det_m
    # Cholesky root of the conditional covariance V = s² M⁻¹ S (det V = s⁴ det S / det M)
    v_aa = s2 * (det_s + s2 * s_aa) / det_m
    l_aa = np.sqrt(v_aa)
    l_ba = s2**2 * s_ab / det_m / l_aa
    l_bb = np.sqrt(np.maximum(s2**2 * det_s / (det_m * v_aa), 0.0))
    z = rng.standard_normal(a.shape + (2,))
    return np.stack([mean_a + l_aa * z[..., 0], mean_b + l_ba * z[..., 0] + l_bb * z[..., 1]], axis=-1)


#: a fit that fails the diagnostics of ``docs/methods.md`` §5.6 is run once more with this many
#: times the draws, and at this target acceptance if it diverged (:func:`rerun_settings`)
RERUN_DRAWS = 2
RERUN_TARGET_ACCEPT = 0.99


def rerun_settings(kw: dict, diverged: bool) -> dict:
    """The keyword arguments of :func:`fit_mcmc` for the one re-run of a fit with ``kw``
    that failed its diagnostics: twice the draws (the same tuning), and target acceptance
    0.99 (or the fit's own if higher) when the fit had divergent transitions.  Without
    divergences the target stays: on SWE-bench's pair of its two models near 10%, short of
    ESS only, 2,400 draws at 0.9 gave bulk ESS 692–702 in 15–16 s (seeds 0–2, PyMC 6),
    at 0.99 542–626 in 22–23 s (twice the leapfrog steps; ``docs/methods.md`` §5.6)."""
    target = kw.get("target_accept", TARGET_ACCEPT)
    if diverged:
        target = max(target, RERUN_TARGET_ACCEPT)
    return {**kw, "draws": RERUN_DRAWS * kw.get("draws", 1000), "target_accept": target}


def population_difference(idata, clustered: bool) -> np.ndarray:
    """Δ for every posterior draw (chain, draw): ``E[expit(β_j + u_j + v_j)]`` for each model,
    the new cluster's and question's effects one normal ``N(0, σ_q,j² + σ_c,j²)``, integrated
    on the fixed nodes ``_Z`` (``docs/methods.md`` §5.3)."""
    post = idata.posterior
    var = post["sd_question"].values ** 2
    if clustered:
        var = var + post["sd_cluster"].values ** 2
    eta = post["beta"].values[..., None] + np.sqrt(var)[..., None] * _Z  # (chain, draw, model, nodes)
    p = special.expit(eta) @ _W
    return p[..., 0] - p[..., 1]


def fit_mcmc(k, n, cluster_codes=None, *, draws: int = 1000, tune: int = 1000, chains: int = 2,
             seed: int = 0, target_accept: float = TARGET_ACCEPT, progressbar: bool = False, cores: int | None = None):
    """NUTS fit (``docs/methods.md`` §5.3, §5.6); the posterior gains ``beta`` (drawn from
    its conditional given the intercept, :func:`beta_draws`) and ``delta`` (the estimand)."""
    from bayeserr.models import compat, nuts
    with build_pymc_model(k, n, cluster_codes):
        idata = nuts.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, cores=cores,
                          target_accept=target_accept, own_init=True)
    idata.attrs["target_accept"] = float(target_accept)
    n_clusters = None if cluster_codes is None else int(np.max(cluster_codes)) + 1
    # its own stream (the seed's spawn key 1)
    rng = np.random.default_rng([seed, 1])
    compat.add_variable(idata, "beta", ("chain", "draw", "model"),
                        beta_draws(idata.posterior, np.shape(k)[1], n_clusters, rng))
    delta = population_difference(idata, cluster_codes is not None)
    compat.add_variable(idata, "delta", ("chain", "draw"), delta)
    return idata
