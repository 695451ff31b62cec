"""Bayesian bootstrap for fractional scores and paired differences (SPEC §5.4).

Model (Rubin 1981): the population of questions (or of clusters) is a
discrete distribution on the observed units with weights
``w ~ Dirichlet(1, …, 1)``; the posterior of the mean score is the law of the
weighted mean ``Σ w_u S_u / Σ w_u N_u`` (S_u the sum of the unit's
per-question scores, N_u its number of questions; with one question per unit
this is ``Σ w_i s_i``).  Estimand: the population mean score, or, applied to
both models with the *same* weights, the paired difference A − B.

No prior to tune: it is the non-informative limit of a Dirichlet process.
Resampling clusters instead of questions keeps questions that share a passage
together, like the clustered SE.  Weights are drawn in chunks, so memory stays
``chunk × units`` whatever the number of draws.
"""

from __future__ import annotations

import numpy as np

CHUNK = 512


def unit_totals(s: np.ndarray, codes: np.ndarray | None):
    """Per-unit score sums ``S`` (units × models) and question counts ``N``.

    ``s`` is (models × questions) with NaN where unanswered; a unit is a
    cluster when ``codes`` are given, else a question.
    """
    from bayeserr.estimators import cluster_sums
    answered = ~np.isnan(s)
    x = np.where(answered, s, 0.0)
    if codes is None:
        return x.T, answered.T.astype(float)
    return cluster_sums(x, codes).T, cluster_sums(answered.astype(float), codes).T


def weighted_means(sums: np.ndarray, counts: np.ndarray, draws: int = 4000, seed: int = 0,
                   progress=None) -> np.ndarray:
    """Posterior draws (draws × models) of each model's mean score.

    All models share each draw's weights, so differences of columns are
    draws of the paired differences.  ``progress(done, total)`` is called
    after each chunk when given.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((draws, sums.shape[1]))
    for start in range(0, draws, CHUNK):
        size = min(CHUNK, draws - start)
        w = rng.standard_exponential((size, sums.shape[0]))  # Dirichlet(1) up to normalization
        out[start:start + size] = (w @ sums) / (w @ counts)
        if progress is not None:
            progress(start + size, draws)
    return out


def bootstrap_means(s: np.ndarray, codes: np.ndarray | None = None, draws: int = 4000,
                    seed: int = 0) -> np.ndarray:
    """Draws of the mean of each row of ``s`` (models × questions), over
    questions or, with ``codes``, over clusters."""
    sums, counts = unit_totals(s, codes)
    return weighted_means(sums, counts, draws, seed)


def to_inference_data(means: np.ndarray, models):
    """Draws (draws × models) as ``arviz.InferenceData`` with a ``model`` dim."""
    import arviz as az
    return az.from_dict(posterior={"mean": means[None]}, coords={"model": list(models)},
                        dims={"mean": ["model"]}, attrs={"model": "bayesian_bootstrap"})


def distinct_units(unit_sums: np.ndarray, unit_counts: np.ndarray):
    """Distinct ``(sum, count)`` unit values and their multiplicity in each data set.

    Returns ``values`` (V × 2) and ``mult`` (data sets × V).  Integer-valued
    inputs (answer counts) are keyed as single integers, which is much faster
    than finding unique rows.
    """
    sums, counts = np.asarray(unit_sums, float), np.asarray(unit_counts, float)
    if np.all(sums == np.round(sums)) and np.all(counts == np.round(counts)):
        lo, width = int(sums.min()), int(counts.max()) + 1
        key = ((sums - lo) * width + counts).astype(np.int64)
        uniq, inverse = np.unique(key, return_inverse=True)
        values = np.stack([uniq // width + lo, uniq % width], axis=1).astype(float)
    else:
        values, inverse = np.unique(np.stack([sums, counts], -1).reshape(-1, 2), axis=0,
                                    return_inverse=True)
    inverse = inverse.reshape(sums.shape)
    mult = np.zeros((sums.shape[0], values.shape[0]))
    np.add.at(mult, (np.repeat(np.arange(sums.shape[0]), sums.shape[1]), inverse.ravel()), 1.0)
    return values, mult


def grouped_draws(values: np.ndarray, mult: np.ndarray, draws: int, rng, chunk: int = 200):
    """Posterior draws of the ratio mean, chunk by chunk: yields (slice, draws array).

    The Dirichlet(1, …, 1) weights of units with the same value aggregate
    exactly to Gamma(multiplicity) weights on the distinct values, so each
    draw costs one Gamma variate per distinct value instead of one per unit.
    """
    for start in range(0, mult.shape[0], chunk):
        m = mult[start:start + chunk]
        g = rng.standard_gamma(np.broadcast_to(m[:, None, :], (m.shape[0], draws, m.shape[1])))
        yield slice(start, start + m.shape[0]), (g @ values[:, 0]) / (g @ values[:, 1])


def grouped_intervals(unit_sums: np.ndarray, unit_counts: np.ndarray, level: float = 0.95,
                      draws: int = 1000, seed: int = 0) -> np.ndarray:
    """Bayesian bootstrap intervals of the ratio mean for many data sets at once
    (data sets × units inputs).  For 0/1 answers without clusters this is the
    Beta(k, n − k) posterior."""
    values, mult = distinct_units(unit_sums, unit_counts)
    out = np.empty((mult.shape[0], 2))
    q = [(1 - level) / 2, (1 + level) / 2]
    for sl, means in grouped_draws(values, mult, draws, np.random.default_rng(seed)):
        out[sl] = np.quantile(means, q, axis=1).T
    return out
