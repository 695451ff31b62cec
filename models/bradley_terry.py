"""Bayesian Bradley–Terry model for pairwise votes (SPEC §5.5).

Model::

    σ_s ~ HalfNormal(1)                     spread of strengths
    s_raw_i ~ Normal(0, σ_s);  s = s_raw − mean(s_raw)
    log-likelihood Σ_ij W_ij log σ(s_i − s_j)

with ``W`` the (half-)win matrix of :mod:`bayeserr.analyses.arena` (a tie is half a
win for each side, so the likelihood is written as a ``Potential`` rather
than a Binomial, which needs whole counts).  Estimand: the centred strengths
``s`` (Elo: ``400 s / ln 10 + 1000``).

Prior: a HalfNormal(1) scale lets strengths differ by a few units on the
logit scale (hundreds of Elo points) while pooling models with few votes
towards the middle, the Bayesian counterpart of the bootstrap's
uncertainty.  Set ``scale`` to change it.

Where the votes do not identify a rating (a model that won or lost every
vote; groups of models that never met) the posterior is finite only because
of the prior, so the Bayesian interval there reflects ``scale``, not data;
:func:`bayeserr.analyses.arena.rate` warns about those models and re-centres the
posterior draws on each group's identified core, like the bootstrap.
"""

from __future__ import annotations

import numpy as np


def build_pymc_model(wins: np.ndarray, scale: float = 1.0):
    from bayeserr.models import compat
    pm = compat.import_pymc()
    m = wins.shape[0]
    i, j = np.nonzero(wins)
    w = wins[i, j]
    with pm.Model(coords={"model": np.arange(m)}) as model:
        sigma = pm.HalfNormal("sigma", scale)
        raw = pm.Normal("raw", 0.0, 1.0, dims="model")
        s = pm.Deterministic("s", sigma * raw - (sigma * raw).mean(), dims="model")
        # log σ(x) = −log(1 + e^{−x}), stably
        pm.Potential("votes", -(w * pm.math.log1pexp(s[j] - s[i])).sum())
    return model


def fit_mcmc(wins: np.ndarray, *, scale: float = 1.0, draws: int = 1000, tune: int = 1000,
             chains: int = 2, seed: int = 0, progressbar: bool = False):
    """NUTS fit; returns the posterior (``arviz.InferenceData`` under ArviZ 0.x, an
    ``xarray.DataTree`` under ArviZ 1: :mod:`~bayeserr.models.compat`) with the
    centred strengths ``s``."""
    from bayeserr.models import nuts
    with build_pymc_model(wins, scale):
        return nuts.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                         progressbar=progressbar, compute_convergence_checks=False)
