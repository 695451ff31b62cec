"""Layer 4, the Bayesian glue between the data and the models of
:mod:`bayeserr.models`.  May import: base, data, stats, models.

Split by job:

* :mod:`.settings` — the mode (``off``/``fast``/``mcmc``), priors and sampler
  settings, validated;
* :mod:`.fitting` — which model fits which data (two or three levels, NUTS
  or exact), with sampler output and diagnostics kept in their place;
* :mod:`.pairs` — posterior probabilities for pairs of models;
* :mod:`.saving` — writing posteriors to netCDF;
* :mod:`.priors` — the prior-sensitivity table (the score under other priors);
* :mod:`.sampling` — NUTS runs with their diagnostics and interrupt handling;
* :mod:`.densities` — each model's posterior density of its score, for the posterior figure.

Nothing here is imported by ``import bayeserr``; PyMC and ArviZ are imported
only inside the functions that sample or save.
"""

from bayeserr.bayes.settings import MODES, BayesSettings, parse_prior

__all__ = ["BayesSettings", "MODES", "parse_prior"]
