"""Hierarchical Beta–Binomial with cluster random effects (SPEC §5.2).

Model (two levels; groups are clusters, or questions when each question was
answered K > 1 times)::

    μ ~ Beta(1, 1)                     mean accuracy of a new group (the estimand)
    log κ ~ Normal(2.5, 1.5)           concentration; ICC of answers = 1/(1 + κ)
    θ_g ~ Beta(μκ, (1 − μ)κ)           group accuracy
    k_g ~ Binomial(N_g, θ_g)           right answers of N_g in group g

Why these priors: μ is uniform, as the conjugate model's default; κ is
weakly informative on the log scale: its central 95% (0.1 to 400) spans
intra-cluster correlations from 0.002 (clusters barely matter) to 0.9 (a
cluster is one observation), which covers every benchmark we know, while
keeping the posterior proper when there are few groups (the flat prior on
κ is not).  Change them with :class:`HierarchicalPrior`.

Two fits of the same model:

* :func:`fit_exact` — no sampler. With θ integrated out, ``k_g`` is
  Beta–Binomial and the posterior has only two parameters, so it is computed
  on a grid over ``(logit μ, log κ)``: a coarse pass finds the mass, a fine
  pass integrates it.  The log-gamma sums are grouped by count (see
  :func:`_rising_log_sum`), so the cost grows with the largest cluster
  size, not with the number of clusters.
* :func:`fit_mcmc` — PyMC NUTS on the same marginal likelihood (the cluster
  rates θ_g are then drawn from their conditional Beta posteriors), for
  checking the exact path and as the base of the three-level model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats


@dataclass(frozen=True)
class HierarchicalPrior:
    """Priors of μ and κ (see module docstring for the reasoning)."""

    mu_alpha: float = 1.0
    mu_beta: float = 1.0
    log_kappa_mean: float = 2.5
    log_kappa_sd: float = 1.5

    def log_density(self, logit_mu, log_kappa):
        """Log prior density on the ``(logit μ, log κ)`` scale (Jacobian included)."""
        mu = special.expit(logit_mu)
        log_mu = np.log(mu)
        log_1m = np.log1p(-mu)
        lp_mu = (self.mu_alpha * log_mu + self.mu_beta * log_1m
                 - special.betaln(self.mu_alpha, self.mu_beta))  # Beta pdf · μ(1 − μ)
        return lp_mu + stats.norm.logpdf(log_kappa, self.log_kappa_mean, self.log_kappa_sd)


@dataclass(frozen=True)
class HierarchicalPosterior:
    """Grid posterior of (μ, κ): marginal summaries of μ and draws on demand."""

    logit_mu: np.ndarray  #: grid (fine pass)
    log_kappa: np.ndarray
    weights: np.ndarray  #: normalized posterior mass, shape (len(logit_mu), len(log_kappa))
    n_groups: int
    n_answers: int

    @property
    def _mu_mass(self) -> np.ndarray:
        return self.weights.sum(axis=1)

    @property
    def mu_grid(self) -> np.ndarray:
        return special.expit(self.logit_mu)

    @property
    def mean(self) -> float:
        return float(np.sum(self._mu_mass * self.mu_grid))

    @property
    def sd(self) -> float:
        return float(np.sqrt(np.sum(self._mu_mass * (self.mu_grid - self.mean) ** 2)))

    def interval(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed interval of μ from the marginal CDF (linear interpolation
        between grid mid-points, on the logit scale)."""
        mass = self._mu_mass
        cdf = np.cumsum(mass) - mass / 2
        q = [(1 - level) / 2, (1 + level) / 2]
        return special.expit(np.interp(q, cdf, self.logit_mu))

    def hdi(self, level: float = 0.95) -> np.ndarray:
        """Highest-density interval of μ (density on the μ scale)."""
        mu = self.mu_grid
        density = self._mu_mass / (mu * (1 - mu))  # mass per logit step -> per μ
        order = np.argsort(density)[::-1]
        keep = order[: np.searchsorted(np.cumsum(self._mu_mass[order]), level) + 1]
        return np.array([mu[keep].min(), mu[keep].max()])

    def sample(self, draws: int = 4000, seed: int = 0) -> dict:
        """Draws of μ and κ: grid cells by mass, jittered uniformly within the cell."""
        rng = np.random.default_rng(seed)
        flat = rng.choice(self.weights.size, size=draws, p=self.weights.ravel())
        i, j = np.unravel_index(flat, self.weights.shape)
        dm = np.diff(self.logit_mu).mean()
        dk = np.diff(self.log_kappa).mean()
        lm = self.logit_mu[i] + rng.uniform(-dm / 2, dm / 2, draws)
        lk = self.log_kappa[j] + rng.uniform(-dk / 2, dk / 2, draws)
        return {"mu": special.expit(lm), "kappa": np.exp(lk)}

    def to_inference_data(self, draws: int = 4000, seed: int = 0):
        import arviz as az
        d = self.sample(draws, seed)
        post = {"mu": d["mu"][None], "kappa": d["kappa"][None], "icc": 1 / (1 + d["kappa"][None])}
        return az.from_dict(posterior=post, attrs={"model": "hierarchical_beta_binomial",
                                                   "method": "exact grid"})


def _counts_above(values: np.ndarray, top: int) -> np.ndarray:
    """``above[..., j]`` = number of groups (last axis) with value > j, for j < top."""
    v = np.atleast_2d(values).astype(np.int64)
    rows = v.shape[0]
    counts = np.bincount((np.arange(rows)[:, None] * (top + 1) + v).ravel(),
                         minlength=rows * (top + 1)).reshape(rows, top + 1)
    above = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][:, 1:].astype(float)
    return above.reshape(np.shape(values)[:-1] + (top,))


def _rising_log_sum(values: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``Σ_g [gammaln(v_g + shift) − gammaln(shift)]`` for every grid point.

    For integer ``v``, ``gammaln(v + a) − gammaln(a) = Σ_{j<v} log(a + j)``;
    grouping by j, each ``log(a + j)`` is weighted by the number of groups with
    ``v > j``.  With small counts this needs far fewer (and cheaper) function
    evaluations than one ``gammaln`` per distinct value; with large counts the
    distinct-value form is used instead.
    """
    uniq, inv = np.unique(values, return_inverse=True)
    weight = np.bincount(inv).astype(float)
    top = int(uniq.max())
    if top <= 4 * uniq.size:
        return _counts_above(values, top) @ np.log(shift[None, :] + np.arange(top)[:, None])
    return weight @ (special.gammaln(uniq[:, None] + shift[None, :]) - special.gammaln(shift)[None, :])


def log_marginal_likelihood(k, n, logit_mu, log_kappa) -> np.ndarray:
    """``Σ_g log BetaBinomial(k_g | N_g, μκ, (1 − μ)κ)`` (binomial coefficients
    dropped) on the outer grid of ``logit_mu`` × ``log_kappa``."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    lm, lk = np.meshgrid(logit_mu, log_kappa, indexing="ij")
    mu, kappa = special.expit(lm).ravel(), np.exp(lk).ravel()
    a, b = mu * kappa, (1 - mu) * kappa
    # log BB(k | N, a, b) + const = [lnΓ(k+a) − lnΓ(a)] + [lnΓ(N−k+b) − lnΓ(b)] − [lnΓ(N+κ) − lnΓ(κ)]
    ll = _rising_log_sum(k, a) + _rising_log_sum(n - k, b) - _rising_log_sum(n, kappa)
    return ll.reshape(lm.shape)


def _normalized(logp):
    w = np.exp(logp - logp.max())
    return w / w.sum()


def fit_exact(k, n, prior: HierarchicalPrior = HierarchicalPrior(), *, coarse: int = 40,
              fine: tuple[int, int] = (120, 48)) -> HierarchicalPosterior:
    """Posterior of (μ, κ) by deterministic quadrature (no sampler).

    ``k`` and ``n``: right answers and answers per group.  A coarse grid over
    logit μ ∈ [−12, 12], log κ ∈ [μ_κ − 6σ_κ, μ_κ + 6σ_κ] locates the cells
    holding all but 1e-12 of the mass; a fine grid over that box (one coarse
    cell wider on each side) gives the posterior.
    """
    k, n = np.asarray(k, float), np.asarray(n, float)
    lo_k, hi_k = prior.log_kappa_mean - 6 * prior.log_kappa_sd, prior.log_kappa_mean + 6 * prior.log_kappa_sd
    box = [(-12.0, 12.0), (lo_k, hi_k)]
    for size in ((coarse, coarse), fine):
        lm = np.linspace(*box[0], size[0])
        lk = np.linspace(*box[1], size[1])
        logp = log_marginal_likelihood(k, n, lm, lk) + prior.log_density(lm[:, None], lk[None, :])
        w = _normalized(logp)
        if size == fine:
            break
        keep = np.argwhere(w > 1e-12 * w.max())
        step = (lm[1] - lm[0], lk[1] - lk[0])
        box = [(lm[keep[:, 0].min()] - step[0], lm[keep[:, 0].max()] + step[0]),
               (lk[keep[:, 1].min()] - step[1], lk[keep[:, 1].max()] + step[1])]
    return HierarchicalPosterior(lm, lk, w, int(k.size), int(n.sum()))


def build_pymc_model(k, n, prior: HierarchicalPrior = HierarchicalPrior(), groups=None):
    """The same two-level model in PyMC, θ integrated out (Beta–Binomial likelihood)."""
    import pymc as pm
    coords = {"group": list(groups) if groups is not None else list(range(len(k)))}
    with pm.Model(coords=coords) as model:
        mu = pm.Beta("mu", prior.mu_alpha, prior.mu_beta)
        log_kappa = pm.Normal("log_kappa", prior.log_kappa_mean, prior.log_kappa_sd)
        kappa = pm.Deterministic("kappa", pm.math.exp(log_kappa))
        pm.Deterministic("icc", 1 / (1 + kappa))
        pm.BetaBinomial("k", n=np.asarray(n, int), alpha=mu * kappa, beta=(1 - mu) * kappa,
                        observed=np.asarray(k, int), dims="group")
    return model


def fit_mcmc(k, n, prior: HierarchicalPrior = HierarchicalPrior(), *, groups=None, draws: int = 1000,
             tune: int = 1000, chains: int = 2, seed: int = 0, progressbar: bool = False):
    """NUTS fit of the two-level model; returns ``arviz.InferenceData``.

    Group rates ``theta`` are added to the posterior from their conditional
    ``Beta(μκ + k_g, (1 − μ)κ + N_g − k_g)`` given each draw of (μ, κ).
    """
    import pymc as pm
    model = build_pymc_model(k, n, prior, groups)
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False)
    post = idata.posterior
    rng = np.random.default_rng(seed)
    mu, kappa = post["mu"].values[..., None], post["kappa"].values[..., None]
    k, n = np.asarray(k, float), np.asarray(n, float)
    theta = rng.beta(mu * kappa + k, (1 - mu) * kappa + n - k)
    post["theta"] = (("chain", "draw", "group"), theta)
    return idata


# ----------------------------------------------------------------- many data sets at once
def _batch_grid(k: np.ndarray, n: np.ndarray, dense: int = 400) -> np.ndarray:
    """Logit-μ grid for many data sets: a coarse pass over [−9, 9] joined to
    a dense pass over the span where any data set's posterior can lie
    (pooled rate ± 8 SEs of the group rates; the SE is floored at the
    binomial one and at what one success in every group would give)."""
    total = n.sum(-1)
    rate = k.sum(-1) / total
    groups = k.shape[-1]
    se = np.maximum.reduce([np.std(k / n, axis=-1) / np.sqrt(groups),
                            np.sqrt(rate * (1 - rate) / total), np.broadcast_to(1 / total, rate.shape)])
    lo = special.logit(np.clip((rate - 8 * se).min(), 1e-4, 1 - 1e-4))
    hi = special.logit(np.clip((rate + 8 * se).max(), 1e-4, 1 - 1e-4))
    return np.unique(np.r_[np.linspace(-9, 9, 61), np.linspace(lo, hi, dense)])


def batch_intervals(k, n, level: float = 0.95, prior: HierarchicalPrior = HierarchicalPrior(),
                    kappa_points: int = 40, chunk: int = 250) -> np.ndarray:
    """Equal-tailed posterior intervals of μ for many data sets at once.

    ``k`` and ``n`` are (data sets × groups) integer arrays (``n`` may be one
    row shared by all).  Same model and prior as :func:`fit_exact`, on one
    shared non-uniform grid (cell widths weight each point); used by the
    simulation lab, where thousands of replicates must be fitted without a
    Python loop over them.
    """
    k = np.atleast_2d(np.asarray(k, float))
    n = np.broadcast_to(np.asarray(n, float), k.shape)
    lm = _batch_grid(k, n)
    lk = np.linspace(prior.log_kappa_mean - 6 * prior.log_kappa_sd,
                     prior.log_kappa_mean + 6 * prior.log_kappa_sd, kappa_points)
    width = np.gradient(lm)
    g_mu, g_k = np.meshgrid(lm, lk, indexing="ij")
    mu, kappa = special.expit(g_mu).ravel(), np.exp(g_k).ravel()
    a, b = mu * kappa, (1 - mu) * kappa
    top = int(n.max())
    j = np.arange(top)[:, None]
    log_a, log_b, log_k = np.log(a + j), np.log(b + j), np.log(kappa + j)
    log_prior = prior.log_density(g_mu, g_k).ravel() + np.log(np.repeat(width, lk.size))
    out = np.empty((k.shape[0], 2))
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    for start in range(0, k.shape[0], chunk):
        sl = slice(start, start + chunk)
        ll = (_counts_above(k[sl], top) @ log_a + _counts_above(n[sl] - k[sl], top) @ log_b
              - _counts_above(n[sl], top) @ log_k)
        logp = ll + log_prior
        w = np.exp(logp - logp.max(axis=1, keepdims=True)).reshape(-1, lm.size, lk.size).sum(axis=2)
        cdf = np.cumsum(w, axis=1)
        cdf = (cdf - w / 2) / cdf[:, -1:]
        out[sl] = special.expit(_interp_rows(q, cdf, lm))
    return out


def _interp_rows(q: np.ndarray, cdf: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.interp(q, cdf[r], x)`` for every row r, vectorized."""
    idx = np.clip((cdf[:, :, None] < q[None, None, :]).sum(axis=1), 1, x.size - 1)  # (rows, len(q))
    rows = np.arange(cdf.shape[0])[:, None]
    c0, c1 = cdf[rows, idx - 1], cdf[rows, idx]
    t = np.clip((q[None, :] - c0) / np.where(c1 > c0, c1 - c0, 1.0), 0, 1)
    return x[idx - 1] + t * (x[idx] - x[idx - 1])
