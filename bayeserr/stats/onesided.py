"""One-sided tests of a difference against a margin (``docs/methods.md`` §3.11): the t test,
the wild cluster bootstrap at the margin, the exact bound when every difference is equal,
Holm's levels over candidates and the power at a true difference of 0.  Pure functions of
arrays; the release gate (:mod:`bayeserr.analyses.gate`) combines them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: the power the gate's advice aims at (questions needed for it)
POWER_TARGET = 0.8


@dataclass(frozen=True)
class OneSided:
    """One-sided test of ``H1: estimate > null`` for rows of arrays."""

    statistic: np.ndarray
    p_value: np.ndarray
    lower: np.ndarray  #: one-sided lower bound at the level
    upper: np.ndarray  #: one-sided upper bound at the level


def one_sided_t(estimate, se, df, null, level) -> OneSided:
    """``t = (estimate − null)/se`` on Student t with ``df`` (``inf``: normal), one-sided
    ``p = P(T > t)`` and the one-sided bounds ``estimate ∓ t_df(level)·se``.

    SE = 0: t is ±inf (p 0 or 1) or 0 (p ½) and both bounds are the estimate,
    as :func:`bayeserr.stats.fewclusters.t_test` treats it.  NaN in gives NaN out.
    """
    from bayeserr.stats.distributions import t_ppf, t_sf
    est, se, df = (np.asarray(x, dtype=float) for x in (estimate, se, df))
    diff = est - np.asarray(null, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(se > 0, diff / np.where(se > 0, se, 1.0),
                        np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
        bad = np.isnan(se) | np.isnan(diff) | np.isnan(df) | (df <= 0)
        stat = np.where(bad, np.nan, stat)
        p = np.where(np.isposinf(stat), 0.0, np.where(np.isneginf(stat), 1.0,
                                                      t_sf(np.where(np.isfinite(stat), stat, 0.0), df)))
        p = np.where(np.isnan(stat), np.nan, p)
        half = np.where(se > 0, t_ppf(level, df) * se, 0.0)
        half = np.where(bad, np.nan, half)
    return OneSided(stat, p, est - half, est + half)


@dataclass(frozen=True)
class WildOneSided:
    """The wild cluster restricted bootstrap at the margin, one-sided (rows of arrays)."""

    p_value: np.ndarray  #: one-sided: the share of ``t* ≥ t`` (p/2 on the pass side)
    p_two_sided: np.ndarray  #: the bootstrap's own share of ``|t*| ≥ |t|``
    lower: np.ndarray  #: one-sided lower bound at the level (−inf where unbounded)
    upper: np.ndarray
    weights: str
    draws: int
    exact: bool


def wild_one_sided(D, sizes, null, level, *, seed: int = 0) -> WildOneSided:
    """One-sided wild cluster bootstrap of ``H1: mean > null`` from cluster sums ``D`` (P, C)
    and ``sizes`` (P, C) or (C,): :func:`~bayeserr.stats.fewclusters.wild_cluster_bootstrap`
    with ``null=`` the margin, at level ``2·level − 1`` (whose interval's ends are the
    one-sided bounds at ``level``); p halved on the pass side (the weights are symmetric)."""
    from bayeserr.stats.fewclusters import wild_cluster_bootstrap
    D = np.atleast_2d(np.asarray(D, dtype=float))
    sizes = np.asarray(sizes, dtype=float)
    res = wild_cluster_bootstrap(D, sizes, level=2.0 * level - 1.0, null=null, seed=seed)
    n = np.broadcast_to(sizes, D.shape).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        above = D.sum(axis=-1) / n > np.broadcast_to(np.asarray(null, float), (D.shape[0],))
    p_two = np.asarray(res.p_value, dtype=float)
    p = np.where(above, p_two / 2.0, 1.0 - p_two / 2.0)
    p = np.where(np.isnan(p_two), np.nan, p)
    return WildOneSided(p, p_two, res.ci[:, 0], res.ci[:, 1], res.weights, int(res.draws), bool(res.exact))


def zero_spread(value, n_eff, null, level) -> OneSided:
    """The one-sided test when every paired difference equals ``value`` (SE 0), where the
    t test would pass any margin on any number of questions.

    Exact and conservative: among ``n_eff`` independent questions none differed from
    ``value``, so the share π of questions that would differ is below
    ``π_L = 1 − α^(1/n_eff)`` at level L (the zero-event Clopper–Pearson bound), and as
    every difference lies in [−1, 1]::

        lower = value − (1 + value) π_L,   upper = value + (1 − value) π_L
        p     = (1 − π₀)^n_eff,  π₀ = (value − null)/(1 + value)   (1 when value ≤ null)

    (``p < α ⇔ lower > null``).  With clusters the gate passes the effective number of
    clusters ``n²/Σ n_c²`` as ``n_eff``: the sample size when every question of a cluster
    agrees (intra-cluster correlation 1), the worst case."""
    value, n_eff = np.asarray(value, float), np.asarray(n_eff, float)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        pi_l = 1.0 - alpha ** (1.0 / n_eff)
        pi_0 = (value - null) / (1.0 + value)
        p = np.where(value > null, (1.0 - np.clip(pi_0, 0.0, 1.0)) ** n_eff, 1.0)
        stat = np.where(value > null, np.inf, np.where(value < null, -np.inf, 0.0))
    return OneSided(stat, p, value - (1.0 + value) * pi_l, value + (1.0 - value) * pi_l)


def holm_levels(p, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm's adjusted p-values of ``p`` and, per row, the level of its step:
    ``1 − α/(k − j)`` for the j-th smallest p (0-based, ties in order)."""
    from bayeserr.stats.simultaneous import holm
    p = np.asarray(p, float)
    k = len(p)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    step = np.empty(k)
    step[order] = 1.0 - (1.0 - level) / (k - np.arange(k))
    return holm(np.where(np.isnan(p), 1.0, p)), step


def power_at_zero(se: float, df: float, margin: float, level: float) -> tuple[float | None, float | None]:
    """Chance of passing a non-inferiority gate when the true difference is 0, and the
    questions for :data:`~bayeserr.stats.onesided.POWER_TARGET`, as multiples of the current count: ``(power, scale)``
    with ``power = Φ(m/SE − t_df(level))`` and ``scale = ((t_df(level) + z_0.8)·SE/m)²``."""
    from bayeserr.stats.distributions import t_ppf
    from bayeserr.stats.estimators import normal_quantile
    if not (margin > 0 and math.isfinite(se) and se >= 0 and not math.isnan(df)):
        return None, None
    crit = float(t_ppf(level, df))
    if se == 0:  # every difference equal: the zero-spread bound, not this approximation
        return None, None
    z = margin / se - crit
    power = 0.5 * math.erfc(-z / math.sqrt(2.0))
    return power, ((crit + normal_quantile(POWER_TARGET)) * se / margin) ** 2
