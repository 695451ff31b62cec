"""Bayesian paired comparison of two 0/1 models on independent questions (SPEC §5.3a).

Model: each question falls in one cell of the 2×2 table (both right, only A,
only B, both wrong) with probabilities ``π ~ Dirichlet(α, α, α, α)``; the
observed counts are multinomial.  Estimand ``Δ = π_A-only − π_B-only``, the
accuracy difference A − B on the question population.

Prior: ``α = 1`` (uniform on the simplex) by default; ``α = 0.5`` is the
Jeffreys choice; ``α → 0`` gives the Bayesian bootstrap of the differences.

Closed forms (no sampling).  Write ``t = π_A + π_B`` (discordant mass) and
``u = π_A / t``: then ``u ~ Beta(a, b)`` and ``t ~ Beta(a + b, r)`` are
independent (a, b, r the posterior parameters of the A-only, B-only and
concordant cells), and ``Δ = t (2u − 1)``.  Hence
``P(Δ > 0) = P(u > ½) = I_{½}(b, a)``, and ``P(|Δ| < rope)`` is a
one-dimensional integral over t, done on a fixed grid of t's quantiles.
Everything is vectorized over many tables at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from bayeserr.stats.distributions import beta_ppf

T_GRID = 512


def posterior_parameters(n_a_only, n_b_only, n_concordant, alpha: float = 1.0):
    a = np.asarray(n_a_only, float) + alpha
    b = np.asarray(n_b_only, float) + alpha
    r = np.asarray(n_concordant, float) + 2 * alpha
    return a, b, r


def prob_a_better(n_a_only, n_b_only, n_concordant, alpha: float = 1.0) -> np.ndarray:
    """``P(Δ > 0 | data) = I_{1/2}(b, a)`` for each table."""
    a, b, _ = posterior_parameters(n_a_only, n_b_only, n_concordant, alpha)
    return special.betainc(b, a, 0.5)


def prob_within(rope: float, n_a_only, n_b_only, n_concordant, alpha: float = 1.0) -> np.ndarray:
    """``P(|Δ| < rope | data)``: the mean over t-quantiles of
    ``P(½ − rope/2t < u < ½ + rope/2t)``."""
    a, b, r = (np.atleast_1d(x) for x in posterior_parameters(n_a_only, n_b_only, n_concordant, alpha))
    q = (np.arange(T_GRID) + 0.5) / T_GRID
    t = beta_ppf(q[None, :], (a + b)[:, None], r[:, None])
    half = rope / (2 * t)
    hi = special.betainc(a[:, None], b[:, None], np.clip(0.5 + half, 0, 1))
    lo = special.betainc(a[:, None], b[:, None], np.clip(0.5 - half, 0, 1))
    return (hi - lo).mean(axis=1)


def delta_moments(n_a_only, n_b_only, n_concordant, alpha: float = 1.0):
    """Exact posterior mean and sd of Δ from the Dirichlet moments."""
    a, b, r = posterior_parameters(n_a_only, n_b_only, n_concordant, alpha)
    total = a + b + r
    mean = (a - b) / total
    var = (a * (total - a) + b * (total - b) + 2 * a * b) / (total**2 * (total + 1))
    return mean, np.sqrt(var)


@dataclass(frozen=True)
class DirichletPaired:
    """Posterior of Δ = A − B for one 2×2 table."""

    n_a_only: int
    n_b_only: int
    n_concordant: int
    alpha: float
    rope: float

    @property
    def prob_a_better(self) -> float:
        return float(prob_a_better(self.n_a_only, self.n_b_only, self.n_concordant, self.alpha))

    @property
    def prob_tie(self) -> float:
        return float(prob_within(self.rope, self.n_a_only, self.n_b_only, self.n_concordant, self.alpha)[0])

    @property
    def moments(self) -> tuple[float, float]:
        m, s = delta_moments(self.n_a_only, self.n_b_only, self.n_concordant, self.alpha)
        return float(m), float(s)

    def sample(self, draws: int = 20000, seed: int = 0) -> np.ndarray:
        a, b, r = posterior_parameters(self.n_a_only, self.n_b_only, self.n_concordant, self.alpha)
        pi = np.random.default_rng(seed).dirichlet([float(a), float(b), float(r)], size=draws)
        return pi[:, 0] - pi[:, 1]

    def to_inference_data(self, draws: int = 4000, seed: int = 0):
        from bayeserr.models import compat
        return compat.from_dict({"delta": self.sample(draws, seed)[None]},
                                attrs={"model": "dirichlet_paired", "alpha": self.alpha})


def dirichlet_paired(n_a_only: int, n_b_only: int, n_concordant: int, *, alpha: float = 1.0,
                     rope: float = 0.01) -> DirichletPaired:
    return DirichletPaired(int(n_a_only), int(n_b_only), int(n_concordant), alpha, rope)


def prob_above(n_a_only, n_b_only, n_concordant, null: float) -> float:
    """``P(Δ > null)`` under the Dirichlet 2×2 posterior of the report
    (this module): with ``(π_A, π_B, π_rest) ~ Dir(a, b, r)``,
    ``T = π_A + π_B ~ Beta(a + b, r)`` and ``U = π_A/T ~ Beta(a, b)`` are independent and
    ``Δ = T(2U − 1)``, so ``P(Δ > null) = E_T[ I_{1 − x}(b, a) ]``, ``x = clip((1 + null/T)/2, 0, 1)``,
    averaged over the T quantile grid that module's ``prob_within`` uses; at null = 0 it is
    exactly its ``prob_a_better``, ``I_{1/2}(b, a)``."""
    a, b, r = (float(x) for x in posterior_parameters(n_a_only, n_b_only, n_concordant))
    if null == 0:
        return float(special.betainc(b, a, 0.5))
    q = (np.arange(T_GRID) + 0.5) / T_GRID
    t = beta_ppf(q, a + b, r)
    x = np.clip((1.0 + null / t) / 2.0, 0.0, 1.0)
    return float(special.betainc(b, a, 1.0 - x).mean())
