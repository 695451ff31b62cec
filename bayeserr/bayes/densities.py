"""The posterior density of each model's score, for the posterior figure
(:func:`bayeserr.renderers.plots.posterior`): computed here from the fits the report kept,
so the renderer draws densities and computes none (``docs/methods.md`` §5).

:func:`score_density` gives, for one model, the column whose interval the density belongs
to (``hierarchical_posterior`` or ``beta_posterior``) and a function of an even grid on the
accuracy scale, or the reason there is none."""

from __future__ import annotations

import numpy as np


def normal_mixture(pi, mean, var, grid) -> np.ndarray:
    """Density on the even ``grid`` of the mixture of normal laws (masses
    ``pi``, means, variances): components binned by SD (25 log-spaced bins)
    and by mean (the grid's cells), each SD bin's histogram convolved with
    its normal kernel.  Linear in the components, deterministic; components
    narrower than a grid step are drawn a step wide."""
    pi, mean, var = (np.ravel(np.asarray(x, float)) for x in (pi, mean, var))
    keep = np.isfinite(pi) & np.isfinite(mean) & np.isfinite(var) & (pi > 1e-12 * np.nanmax(pi))
    pi, mean, sd = pi[keep], mean[keep], np.sqrt(np.maximum(var[keep], 0.0))
    step = grid[1] - grid[0]
    sd = np.maximum(sd, step / 2)
    edges = np.concatenate([grid - step / 2, [grid[-1] + step / 2]])
    sd_bin = np.minimum((np.log(sd / sd.min()) / max(np.log(sd.max() / sd.min()), 1e-12) * 24).astype(int), 23)
    out = np.zeros(len(grid))
    for b in np.unique(sd_bin):
        sel = sd_bin == b
        s = np.sqrt(np.average(sd[sel] ** 2, weights=pi[sel])) / step  # in grid steps
        counts = np.histogram(mean[sel], edges, weights=pi[sel])[0]
        half = min(int(np.ceil(5 * s)), 4 * len(grid))
        kernel = np.exp(-0.5 * (np.arange(-half, half + 1) / s) ** 2)
        out += np.convolve(counts, kernel / kernel.sum())[half: half + len(grid)]
    return out


def smooth(values, sd: float) -> np.ndarray:
    """``values`` convolved with a normal kernel of ``sd`` grid steps."""
    if not sd > 0.5:
        return values
    half = int(np.ceil(4 * sd))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) / sd) ** 2)
    return np.convolve(values, kernel / kernel.sum())[half: half + len(values)]


def kernel_density(d, grid):
    """Gaussian kernel density of draws ``d`` on an even ``grid`` (Scott's
    bandwidth, as scipy's gaussian_kde), binned: linear in the number of
    draws, so a ridgeline of 100 models takes a fraction of a second."""
    sd = np.std(d, ddof=1)
    if not np.isfinite(sd) or sd <= 0:
        return np.zeros_like(grid)
    bw = sd * len(d) ** (-1 / 5)
    step = grid[1] - grid[0]
    edges = np.concatenate([grid - step / 2, [grid[-1] + step / 2]])
    counts = np.histogram(d, edges)[0].astype(float)
    half = int(np.ceil(4 * bw / step))
    kernel = np.exp(-0.5 * (np.arange(-half, half + 1) * step / bw) ** 2)
    return np.convolve(counts, kernel / kernel.sum())[half: half + len(grid)]


def _hierarchical(s, post):
    """The posterior of the score's estimand W = Σ m_g θ_g / Σ m_g (the
    'Hierarchical posterior' column, not μ) from a saved fit, or a reason.  A two-level grid
    posterior is weighted as the table's interval was: by questions per group, or one per
    group, whichever gives that interval back."""
    if hasattr(post, "posterior"):  # InferenceData (--bayes mcmc)
        p = post.posterior
        if "theta" in p and s.n_clusters is None:  # groups = answered questions, one question each
            w = np.asarray(p["theta"].values).reshape(-1, p["theta"].shape[-1]).mean(axis=1)
            return "hierarchical_posterior", lambda grid: kernel_density(w, grid)
        return "mcmc"
    if hasattr(post, "cumulants"):  # three-level grid posterior (clusters and K > 1)
        from bayeserr.models import three_level

        def density(grid):
            pi, cum = three_level.w_mixture(post.weights, post.cumulants, post.tau)
            # the grid mixture is lumpy on the density scale (its CDF is not): smooth by
            # 1/30 of the interval's width, which widens it by well under 1%
            a, b = s.intervals["hierarchical_posterior"]
            return smooth(normal_mixture(pi, cum[0], cum[1], grid), (b - a) / 30 / (grid[1] - grid[0]))
        return "hierarchical_posterior", density
    if getattr(post, "k", None) is None:
        return "none"
    # two-level grid posterior; W's weights: questions per group (clusters, one answer per
    # question: the answers; questions answered K times: one each), the one that gives the table's
    # interval
    table = s.intervals.get("hierarchical_posterior")
    weights = next((w for w in (post.n, np.ones_like(post.n)) if table is not None and np.allclose(
        post.weighted_mean_interval(s.level, weights=w), table, atol=1e-6)), None)
    if weights is None:
        return "none"

    def density(grid):
        from bayeserr.models import hierarchical
        pi = np.ravel(post.weights)
        rows, cols = np.divmod(np.flatnonzero(pi > 1e-12 * pi.max()), post.weights.shape[1])
        m, v = hierarchical.weighted_mean_cumulants(post.logit_mu, post.log_kappa, post.k, post.n, weights,
                                                     order=2, cells=(rows, cols))[:2]
        return normal_mixture(post.weights[rows, cols], m, v, grid)
    return "hierarchical_posterior", density


def score_density(s, fits):
    """``(column key, density of a grid)`` of one model's score (``s``, a per-model result)
    from its kept ``fits``, or the reason it has none: ``"fractional"`` (its Bayesian
    intervals come without a density), ``"mcmc"`` (a NUTS fit with clusters keeps no cluster
    sizes to weight the score by) or ``"none"``."""
    if fits.get("hierarchical") is not None and s.intervals.get("hierarchical_posterior") is not None:
        return _hierarchical(s, fits["hierarchical"])
    beta = fits.get("beta")
    if beta is not None and hasattr(beta, "alpha") and s.intervals.get("beta_posterior") is not None:
        from scipy import stats
        return "beta_posterior", lambda grid: np.nan_to_num(stats.beta.pdf(np.clip(grid, 1e-9, 1 - 1e-9),
                                                                          beta.alpha, beta.beta), posinf=0.0)
    return "none" if s.binary else "fractional"
