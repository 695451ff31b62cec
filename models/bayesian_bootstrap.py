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
together, like the clustered SE.

One way to draw, for every path.  The weighted mean depends on the weights
only through their sums over units with the same values, and by the
aggregation property of the Dirichlet those sums are independent
``Gamma(multiplicity)`` variates (up to the common normalization).  So
every path first reduces the units to their distinct values in sorted
order (:func:`canonical_units` for one data set with any number of models,
:func:`distinct_units` for many single-model data sets), then draws one
Gamma variate per distinct value with :func:`dirichlet_weights`.  Hence:

* the draws do not depend on the order of the units (nor on units without
  answers, which are dropped);
* :func:`weighted_means` / :func:`bootstrap_means` and
  :func:`grouped_draws` / :func:`grouped_intervals` give identical draws for
  a data set passed alone with the same seed (in a batch, later data sets
  continue the random stream, so they agree in distribution);
* the cost grows with the number of distinct values, not of units.

Weights are drawn in chunks, so memory stays ``chunk × values`` whatever the
number of draws.
"""

from __future__ import annotations

import numpy as np

CHUNK = 512


def unit_totals(s: np.ndarray, codes: np.ndarray | None):
    """Per-unit score sums ``S`` (units × models) and question counts ``N``.

    ``s`` is (models × questions) with NaN where unanswered; a unit is a
    cluster when ``codes`` are given, else a question.
    """
    from bayeserr.stats.estimators import cluster_sums
    answered = ~np.isnan(s)
    x = np.where(answered, s, 0.0)
    if codes is None:
        return x.T, answered.T.astype(float)
    return cluster_sums(x, codes).T, cluster_sums(answered.astype(float), codes).T


def dirichlet_weights(mult: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Unnormalized Dirichlet(1, …, 1) unit weights, summed over units with
    the same value: ``Gamma(multiplicity)`` variates, one per distinct value.

    ``mult`` is (…, values); returns (…, draws, values), filled in C order
    from ``rng``.  A multiplicity of 0 gives weight 0 and uses no random
    numbers, so a value absent from a data set does not shift the stream.
    This is the only place where bootstrap weights are drawn.
    """
    mult = np.asarray(mult, float)
    shape = mult.shape[:-1] + (draws, mult.shape[-1])
    if np.all(mult == 1):  # Gamma(1) is the exponential: the same variates, drawn faster
        return rng.standard_exponential(shape)
    return rng.standard_gamma(np.broadcast_to(mult[..., None, :], shape))


def canonical_units(sums: np.ndarray, counts: np.ndarray, mult=None):
    """Distinct unit rows of one data set, sorted, with their multiplicities.

    ``sums`` and ``counts`` are (units × models); ``mult`` (units,), when given,
    says how many units each row stands for (a unit multiset, as the stream
    engine keeps it: ``docs/methods.md`` §7.3).  Returns ``sums`` and
    ``counts`` of the distinct rows of ``[sums | counts]`` in lexicographic
    order (values × models) and ``mult`` (values,).  Units without answers
    from any model (all counts 0) are dropped: they carry no weight in any
    mean.  With one model the order is that of :func:`distinct_units`.
    """
    sums = np.atleast_2d(np.asarray(sums, float).T).T
    counts = np.atleast_2d(np.asarray(counts, float).T).T
    keep = np.any(counts != 0, axis=1)
    models = sums.shape[1]
    values, inverse = np.unique(np.concatenate([sums[keep], counts[keep]], axis=1), axis=0,
                                return_inverse=True)
    weights = None if mult is None else np.asarray(mult, float)[keep]
    total = np.bincount(inverse.ravel(), weights=weights, minlength=len(values)).astype(float)
    return values[:, :models], values[:, models:], total


def weighted_means(sums: np.ndarray, counts: np.ndarray, draws: int = 4000, seed: int = 0,
                   progress=None, mult=None) -> np.ndarray:
    """Posterior draws (draws × models) of each model's mean score.

    ``sums`` and ``counts`` are (units × models), e.g. from
    :func:`unit_totals`.  All models share each draw's weights, so
    differences of columns are draws of the paired differences.  The draws
    do not depend on the order of the units (:func:`canonical_units`).
    ``progress(done, total)`` is called after each chunk when given; ``mult``:
    the units each row stands for (:func:`canonical_units`).
    """
    values_s, values_n, mult = canonical_units(sums, counts, mult)
    rng = np.random.default_rng(seed)
    out = np.empty((draws, values_s.shape[1]))
    for start in range(0, draws, CHUNK):
        size = min(CHUNK, draws - start)
        w = dirichlet_weights(mult, size, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + size] = (w @ values_s) / (w @ values_n)
        if progress is not None:
            progress(start + size, draws)
    return out


def bootstrap_means(s: np.ndarray, codes: np.ndarray | None = None, draws: int = 4000,
                    seed: int = 0, mult=None) -> np.ndarray:
    """Draws of the mean of each row of ``s`` (models × questions), over
    questions or, with ``codes``, over clusters; ``mult`` (questions,): how many
    questions each column stands for (a unit multiset, without ``codes``)."""
    sums, counts = unit_totals(s, codes)
    return weighted_means(sums, counts, draws, seed, mult=mult)


def to_inference_data(means: np.ndarray, models):
    """Draws (draws × models) as a posterior object (:mod:`~bayeserr.models.compat`) with a ``model`` dim."""
    from bayeserr.models import compat
    return compat.from_dict({"mean": means[None]}, coords={"model": list(models)},
                            dims={"mean": ["model"]}, attrs={"model": "bayesian_bootstrap"})


def distinct_units(unit_sums: np.ndarray, unit_counts: np.ndarray):
    """Distinct ``(sum, count)`` unit values and their multiplicity in each data set.

    Returns ``values`` (V × 2, sorted by sum, then count) and ``mult``
    (data sets × V).  Units with count 0 (no answers) get multiplicity 0.
    Integer-valued inputs (answer counts) are keyed as single integers,
    which is much faster than finding unique rows.
    """
    sums, counts = np.atleast_2d(np.asarray(unit_sums, float)), np.atleast_2d(np.asarray(unit_counts, float))
    counts = np.broadcast_to(counts, sums.shape)
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
    mult[:, values[:, 1] == 0] = 0.0
    return values, mult


def grouped_draws(values: np.ndarray, mult: np.ndarray, draws: int, rng, chunk: int = 200):
    """Posterior draws of the ratio mean, chunk by chunk: yields (slice, draws array).

    ``values`` and ``mult`` as from :func:`distinct_units`; each data set's
    weights come from :func:`dirichlet_weights` (one Gamma variate per
    distinct value present), data set after data set from ``rng`` (a
    Generator or a seed).  A data set passed alone gets exactly the draws of
    :func:`weighted_means` with the same seed.
    """
    rng = np.random.default_rng(rng)
    for start in range(0, mult.shape[0], chunk):
        m = mult[start:start + chunk]
        g = dirichlet_weights(m, draws, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
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
