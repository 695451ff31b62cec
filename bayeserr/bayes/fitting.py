"""Which Bayesian model fits which data, by NUTS (``docs/methods.md`` §5.2, §5.6).

0/1 answers grouped by cluster (or by question when K > 1) go to the
two-level hierarchical Beta–Binomial; with both clusters and K > 1, to the
three-level model (cluster → question → answer, non-centred).  Every fit
takes the sampler settings of :class:`~.settings.BayesSettings`
(``--chains``, ``--tune``, ``--draws``, ``--target-accept``); diagnostics
become caveats of the report naming the option to change, not warnings on
stderr.
"""

from __future__ import annotations

import numpy as np

from ..caveats import Caveat
from .sampling import sampling_output


def hierarchical_mcmc(k_q: np.ndarray, n_q: np.ndarray, codes: np.ndarray | None, settings, model: str):
    """NUTS fit of one model's right answers ``k_q`` of ``n_q`` per answered
    question; returns the ``InferenceData`` and the diagnostic caveats."""
    from bayeserr.models import diagnostics, hierarchical, three_level
    kw = settings.sampler()
    names = ["mu"]
    with sampling_output(settings.progress):
        if codes is not None and n_q.max() > 1:  # non-centred three-level model
            inv = np.unique(codes, return_inverse=True)[1]
            idata = three_level.fit_mcmc(k_q, n_q, inv, **kw)
            names = ["mu", "phi"]  # the score's estimand is a weighted mean of phi
        elif codes is not None:
            inv = np.unique(codes, return_inverse=True)[1]
            idata = hierarchical.fit_mcmc(np.bincount(inv, weights=k_q), np.bincount(inv, weights=n_q), **kw)
        else:
            idata = hierarchical.fit_mcmc(k_q, n_q.astype(float), **kw)
    diag = diagnostics.diagnose(idata, names)
    idata.attrs["diagnostics"] = str(diag)
    notes = [Caveat("mcmc_diagnostics", model, f"hierarchical model: {p}")
             for p in diagnostics.problems(diag)]
    return idata, notes


def no_sampler_note() -> Caveat:
    """``--bayes mcmc`` on data where no model needs NUTS: say that nothing was sampled."""
    return Caveat("mcmc_not_needed", None, "--bayes mcmc: no model needed a sampler (no 0/1 answers "
                  "with clusters or K > 1), so nothing was sampled: the Bayesian columns are the "
                  "closed forms and deterministic paths of --bayes fast.")


def weighted_mean_draws(idata, k, n, m, seed: int = 0) -> np.ndarray:
    """Draws of the question-weighted mean accuracy ``Σ m_g θ_g / Σ m_g`` of
    the observed groups from a NUTS fit (``docs/methods.md`` §5.2): the
    three-level model's cluster rates ``phi`` when present, else the group
    rates drawn from their conditional Betas given each (μ, κ) draw (θ is
    integrated out in the two-level model); seeded."""
    post = idata.posterior
    m = np.asarray(m, float)
    if "phi" in post:
        phi = post["phi"].values.reshape(-1, post["phi"].shape[-1])
        return phi @ m / m.sum()
    mu = post["mu"].values.ravel()[:, None]
    kappa = np.exp(post["log_kappa"].values.ravel())[:, None]
    rng = np.random.default_rng(seed)
    theta = rng.beta(mu * kappa + k, (1 - mu) * kappa + n - k)
    return theta @ m / m.sum()
