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

import sys

import numpy as np

from bayeserr.base.caveat import Caveat
from bayeserr.bayes.sampling import sampling_output


def hierarchical_mcmc_many(items, settings) -> list:
    """NUTS fits of several models ``[(name, k_q, n_q, codes), …]``: every
    three-level model (clusters and more than one answer per question) in one
    sampler run, every two-level model (units: clusters, else questions) in
    another, so a report compiles at most two graphs however many models it
    has.  Returns ``[(InferenceData, caveats), …]`` in the order given."""
    from bayeserr.models import diagnostics, hierarchical, three_level
    kw = settings.sampler()
    three, two = [], []
    # models in the order of their names in the joint graphs (a model's draws depend on its place there), so
    # the same data give the same draws whatever order the rows came in
    for i in sorted(range(len(items)), key=lambda i: str(items[i][0])):
        _, k_q, n_q, codes = items[i]
        # questions in a canonical order (cluster, answers, right answers): the sampler then gets the
        # same arrays whatever order an engine holds the questions in (memory: by label; the stream
        # engines: their count table), so the same seed gives the same draws
        order = np.lexsort((k_q, n_q) if codes is None else (k_q, n_q, codes))
        k_q, n_q, codes = k_q[order], n_q[order], None if codes is None else codes[order]
        if codes is not None and n_q.max() > 1:  # non-centred three-level model
            three.append((i, (k_q, n_q, np.unique(codes, return_inverse=True)[1])))
        elif codes is not None:
            inv = np.unique(codes, return_inverse=True)[1]
            two.append((i, (np.bincount(inv, weights=k_q), np.bincount(inv, weights=n_q))))
        else:
            two.append((i, (k_q, np.asarray(n_q, float))))
    fits = {}
    with sampling_output(settings.progress):
        for group, fit, kind in ((three, three_level.fit_mcmc_many, "three-level"),
                                 (two, hierarchical.fit_mcmc_many, "two-level")):
            if group:
                if settings.progress:  # compilation prints nothing and can take half a minute
                    print(f"Compiling the {kind} model of {len(group)} model(s) in one graph (PyTensor "
                          "caches it: the first run on a machine takes longest)...", file=sys.stderr)
                fits.update(zip([i for i, _ in group], fit([d for _, d in group], **kw)))
    out = []
    for i, (name, *_rest) in enumerate(items):
        idata = fits[i]
        names = ["mu", "phi"] if "phi" in idata.posterior else ["mu"]  # W is a weighted mean of phi
        diag = diagnostics.diagnose(idata, names)
        idata.attrs["diagnostics"] = str(diag)
        out.append((idata, [Caveat("mcmc_diagnostics", name, f"hierarchical model: {p}")
                            for p in diagnostics.problems(diag)]))
    return out


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
    order = np.lexsort((m, n, k))  # the groups in a canonical order: the same draws from any engine
    k, n, m = np.asarray(k, float)[order], np.asarray(n, float)[order], m[order]
    rng = np.random.default_rng(seed)
    theta = rng.beta(mu * kappa + k, (1 - mu) * kappa + n - k)
    return theta @ m / m.sum()
