"""Bayesian settings: the mode, the prior and the sampler (``docs/methods.md`` §5).

Modes (``--bayes``):

* ``off`` — no Bayesian columns.
* ``fast`` (default) — closed forms and deterministic paths only, no
  sampler: conjugate Beta posterior (0/1, K = 1); exact hierarchical
  posterior by quadrature; for pairs the Dirichlet 2×2 posterior (0/1, K = 1,
  no clusters) or the Bayesian bootstrap of the paired difference.  A report
  whose tables do not show the three-level posterior (clusters and K > 1)
  leaves it out (``only_shown``; ``docs/methods.md`` §5.2, "What a report
  computes"), and says so.
* ``full`` — as ``fast``, every posterior computed whether shown or not.
* ``mcmc`` — as ``fast``, but the hierarchical posterior comes from PyMC NUTS
  (three levels when the data have both clusters and K > 1), with R-hat,
  ESS and divergence checks.

Sampler settings (``--chains``, ``--tune``, ``--draws``, ``--target-accept``)
reach every NUTS fit; the diagnostic caveats name the one to change.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bayeserr.base.errors import InputError
from bayeserr.base.registry import Registry, check_range

MODES = Registry("Bayesian mode", "--bayes", {
    "off": "no Bayesian columns",
    "fast": "closed forms and exact quadrature, no sampler (a report computes what it shows)",
    "full": "as fast, every posterior computed, shown or not (the three-level one too)",
    "mcmc": "as fast, with the hierarchical posterior from PyMC NUTS",
})


def parse_prior(text):
    """``uniform``, ``jeffreys``, ``a,b`` (a Beta(a, b) prior) or a pair of numbers."""
    from bayeserr.models.beta_binomial import PRIORS
    if isinstance(text, (tuple, list)):
        values = tuple(text)
    elif "," in str(text):
        values = tuple(v.strip() for v in str(text).split(","))
    else:
        if text not in PRIORS:
            from bayeserr.base.errors import suggest
            raise InputError(f"--prior '{text}' is not a known prior.{suggest(text, PRIORS)} Use "
                             f"{', '.join(PRIORS)} or two numbers a,b for Beta(a, b).")
        return text
    try:
        a, b = (float(v) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"--prior '{text}': write two positive numbers as a,b (e.g. 2,2).") from None
    if not (a > 0 and b > 0) or a == float("inf") or b == float("inf"):
        raise InputError(f"--prior '{text}': Beta(a, b) needs two positive, finite numbers a,b.")
    return (a, b)


@dataclass(frozen=True)
class BayesSettings:
    mode: str = "fast"
    rope: float = 0.01  #: half-width of the region of practical equivalence (1 point)
    prior: object = "uniform"  #: Beta prior of the conjugate model
    draws: int = 4000  #: Bayesian bootstrap draws
    seed: int = 0
    #: NUTS draws and tuning steps per chain (``--draws``, ``--tune``): 1,200 after 600, not 1,000
    #: after 1,000 — the same time on the SWE-bench pair (``docs/methods.md`` §5.6), and its
    #: default run passes R-hat, ESS and divergences on both PyMC lines (ESS 338 → 465 on PyMC 6)
    mcmc_draws: int = 1200
    mcmc_tune: int = 600
    chains: int = 2  #: ``--chains``
    #: NUTS target acceptance rate in (0, 1) (``--target-accept``); None: each model's
    #: default (two-level 0.8, paired latent 0.9, three-level 0.95)
    target_accept: float | None = None
    progress: bool = False
    #: ``fast`` in a report whose tables and figures do not show the three-level
    #: hierarchical posterior: leave it out (a ``not_computed`` warning says so)
    only_shown: bool = False

    def __post_init__(self):
        MODES.check(self.mode)
        check_range("--rope", self.rope, 0, 1, high_open=True)
        object.__setattr__(self, "prior", parse_prior(self.prior))
        for name, option, low in (("draws", "draws", 1), ("mcmc_draws", "--draws", 1),
                                  ("mcmc_tune", "--tune", 0), ("chains", "--chains", 1),
                                  ("seed", "--seed", 0)):
            object.__setattr__(self, name, check_range(option, getattr(self, name), low, integer=True))
        if self.target_accept is not None:
            object.__setattr__(self, "target_accept", check_range("--target-accept", self.target_accept,
                                                                  0, 1, low_open=True, high_open=True))

    def sampler(self) -> dict:
        """Keyword arguments of every ``fit_mcmc``."""
        import os
        # chains in parallel on every core (PyMC's default counts half the cores, taking the
        # rest for hyper-threads: one process on a 2-core machine)
        kw = dict(draws=self.mcmc_draws, tune=self.mcmc_tune, chains=self.chains, seed=self.seed,
                  progressbar=self.progress, cores=max(1, min(self.chains, os.cpu_count() or 1)))
        if self.target_accept is not None:
            kw["target_accept"] = self.target_accept
        return kw

    @property
    def on(self) -> bool:
        return self.mode != "off"

    @property
    def default_sampler(self) -> bool:
        """No sampler option of the user's own (``--draws``, ``--tune``, ``--chains``,
        ``--target-accept`` at their defaults): the paired model may then re-run a fit that
        fails its diagnostics (``docs/methods.md`` §5.6); with options of the user's own it
        runs as told, and the warning names the option to raise."""
        fields = {f.name: f.default for f in dataclasses.fields(self)}
        return all(getattr(self, name) == fields[name]
                   for name in ("mcmc_draws", "mcmc_tune", "chains", "target_accept"))

    @property
    def skips_three_level(self) -> bool:
        """The three-level grid posterior is left out: ``fast`` in a report that does not show it."""
        return self.mode == "fast" and self.only_shown

    @classmethod
    def coerce(cls, value) -> "BayesSettings":
        """A settings object from a mode name, ``None`` (the default) or settings."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls(mode=value)
        raise InputError("bayes must be 'off', 'fast', 'full', 'mcmc' or a BayesSettings object "
                         f"(got {value!r}).")
