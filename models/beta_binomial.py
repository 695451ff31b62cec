"""Conjugate Beta–Binomial posterior of a 0/1 score (SPEC §5.1).

Model: independent questions, ``k`` right of ``n``; prior ``p ~ Beta(a, b)``;
posterior ``Beta(a + k, b + n − k)`` in closed form (no sampling).

Estimand: the model's accuracy on the population of questions the eval was
drawn from (the same super-population mean as the CLT interval's).

Priors: ``uniform`` = Beta(1, 1) (default: every accuracy equally likely a
priori, posterior mean (k + 1)/(n + 2)); ``jeffreys`` = Beta(½, ½) (invariant
to reparameterization; its equal-tailed interval is the Jeffreys interval of
the frequentist table); or any ``Beta(a, b)`` as a tuple ``(a, b)``, e.g. an
earlier checkpoint's posterior.  Use it only for 0/1 scores with independent
questions and one answer each; clusters or K > 1 call for the hierarchical
model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.stats.distributions import beta_ppf

PRIORS = {"uniform": (1.0, 1.0), "jeffreys": (0.5, 0.5)}


def prior_parameters(prior) -> tuple[float, float]:
    """``(a, b)`` of a named prior or of an explicit pair."""
    if isinstance(prior, str):
        if prior not in PRIORS:
            from bayeserr.base.errors import InputError, suggest
            raise InputError(f"unknown prior '{prior}'.{suggest(prior, PRIORS)} Use one of "
                             f"{', '.join(PRIORS)} or a pair (a, b).")
        return PRIORS[prior]
    a, b = (float(v) for v in prior)
    if a <= 0 or b <= 0:
        from bayeserr.base.errors import InputError
        raise InputError(f"Beta prior parameters must be positive (got a={a}, b={b}).")
    return a, b


def prior_label(prior) -> str:
    a, b = prior_parameters(prior)
    return f"Beta({a:g}, {b:g})"


@dataclass(frozen=True)
class BetaPosterior:
    """``Beta(alpha, beta)`` posterior of an accuracy."""

    alpha: float
    beta: float
    prior: tuple[float, float]

    @property
    def dist(self):
        """The posterior as a frozen ``scipy.stats.beta`` (imported here: a report needs only its quantiles)."""
        from scipy import stats
        return stats.beta(self.alpha, self.beta)

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    @property
    def sd(self) -> float:
        return float(self.dist.std())

    def interval(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed interval (scipy Beta quantiles)."""
        return np.array(self.dist.ppf([(1 - level) / 2, (1 + level) / 2]))

    def hdi(self, level: float = 0.95) -> np.ndarray:
        """Highest-density interval: the shortest interval holding ``level``.

        Solved exactly on the Beta quantile function (arviz's ``hdi`` works on
        draws; here the closed form is available).
        """
        d = self.dist
        if self.alpha <= 1 and self.beta > 1:
            return np.array([0.0, d.ppf(level)])
        if self.beta <= 1 and self.alpha > 1:
            return np.array([d.ppf(1 - level), 1.0])
        from scipy import optimize
        width = lambda lo: d.ppf(lo + level) - d.ppf(lo)  # noqa: E731
        res = optimize.minimize_scalar(width, bounds=(0, 1 - level), method="bounded",
                                       options={"xatol": 1e-10})
        return np.array([d.ppf(res.x), d.ppf(res.x + level)])

    def to_inference_data(self, draws: int = 4000, seed: int = 0):
        """Posterior draws (one chain) as a posterior object of the installed ArviZ
        (:mod:`~bayeserr.models.compat`)."""
        from bayeserr.models import compat
        rng = np.random.default_rng(seed)
        return compat.from_dict({"p": rng.beta(self.alpha, self.beta, (1, draws))},
                                attrs={"model": "beta_binomial", "prior": prior_label(self.prior)})


def beta_posterior(k: float, n: float, prior="uniform") -> BetaPosterior:
    """Posterior ``Beta(a + k, b + n − k)`` after k successes in n questions."""
    a, b = prior_parameters(prior)
    return BetaPosterior(a + k, b + n - k, (a, b))


def beta_intervals(k, n, level: float = 0.95, prior="uniform") -> np.ndarray:
    """Equal-tailed posterior intervals for arrays of ``k`` and ``n`` (vectorized)."""
    a, b = prior_parameters(prior)
    k, n = np.asarray(k, float), np.asarray(n, float)
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    return beta_ppf(q, (a + k)[..., None], (b + n - k)[..., None])
