"""Exact and score intervals for 0/1 scores (SPEC §2, ``docs/methods.md`` §2.8).

These assume independent questions with one answer each.  Under clustering
:func:`effective_n` gives the Korn–Graubard style effective sample size
``n / deff`` on which the ``*_clustered`` variants are computed.

The four intervals are statsmodels' ``proportion_confint`` methods, written
out here in a few lines each: importing ``statsmodels.stats.proportion``
costs over a second of CPU (it imports scipy.stats and statsmodels' own
tools), which every report of 0/1 scores would pay for four closed-form
intervals.  ``tests/test_exact.py`` checks every one against statsmodels.
"""

from __future__ import annotations

import numpy as np

from bayeserr.stats.distributions import beta_isf, beta_ppf, norm_isf

#: report key -> statsmodels ``method`` name
METHODS = {
    "wilson": "wilson",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
    "agresti_coull": "agresti_coull",
}
LABELS = {
    "clt": "CLT (M3)",
    "clustered": "Clustered (M4)",
    "wilson": "Wilson",
    "clopper_pearson": "Clopper–Pearson",
    "jeffreys": "Jeffreys",
    "agresti_coull": "Agresti–Coull",
    "wilson_clustered": "Wilson, n_eff",
    "clopper_pearson_clustered": "Clopper–Pearson, n_eff",
    "beta_posterior": "Beta posterior",
    "hierarchical_posterior": "Hierarchical posterior",
}


def proportion_interval(successes, n, level: float, method: str) -> np.ndarray:
    """Interval for a proportion by a named method (keys of :data:`METHODS`).

    ``successes`` and ``n`` may be arrays (one interval per element) and may
    be fractional, as they are on the effective sample size.

    Jeffreys (``method="jeffreys"``) is the equal-tailed interval of the
    ``Beta(x + ½, n − x + ½)`` posterior, except at the edges, where Brown,
    Cai & DasGupta (2001) set the lower end to 0 when ``x = 0`` and
    the upper end to 1 when ``x = n``: statsmodels returns the plain
    quantiles there (e.g. ``[0.883, 0.999976]`` for 20/20), an interval
    that excludes the observed proportion.
    """
    x, m = np.asarray(successes, float), np.asarray(n, float)
    low, high = _INTERVALS[method](x, m, 1 - level)
    if method == "jeffreys":
        low = np.where(x == 0, 0.0, low)
        high = np.where(x == m, 1.0, high)
    return np.stack([np.asarray(low, float), np.asarray(high, float)], axis=-1)


def _wilson(x, n, alpha):
    """Wilson's score interval: (q + z²/2n ± z √(q(1−q)/n + z²/4n²)) / (1 + z²/n)."""
    z2 = norm_isf(alpha / 2) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        q = x / n
        centre = (q + z2 / (2 * n)) / (1 + z2 / n)
        half = np.sqrt(z2) / (1 + z2 / n) * np.sqrt(q * (1 - q) / n + z2 / (4 * n**2))
    # inside [0, 1] in exact arithmetic; clipped against floating-point error, as statsmodels does
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _clopper_pearson(x, n, alpha):
    """Clopper–Pearson: the α/2 quantile of Beta(x, n − x + 1) and the 1 − α/2 one of
    Beta(x + 1, n − x); 0 at x = 0 and 1 at x = n."""
    with np.errstate(invalid="ignore"):
        low = np.where(x > 0, beta_ppf(alpha / 2, np.where(x > 0, x, 1.0), n - x + 1), 0.0)
        high = np.where(x < n, beta_isf(alpha / 2, x + 1, np.where(x < n, n - x, 1.0)), 1.0)
    return low, high


def _jeffreys(x, n, alpha):
    """Jeffreys: the equal-tailed interval of Beta(x + ½, n − x + ½)."""
    return beta_ppf(alpha / 2, x + 0.5, n - x + 0.5), beta_isf(alpha / 2, x + 0.5, n - x + 0.5)


def _agresti_coull(x, n, alpha):
    """Agresti–Coull: the Wald interval on ñ = n + z², p̃ = (x + z²/2)/ñ."""
    z = norm_isf(alpha / 2)
    n_c = n + z**2
    q_c = (x + z**2 / 2) / n_c
    half = z * np.sqrt(q_c * (1 - q_c) / n_c)
    return np.clip(q_c - half, 0.0, 1.0), np.clip(q_c + half, 0.0, 1.0)  # clipped, as statsmodels does


_INTERVALS = {"wilson": _wilson, "clopper_pearson": _clopper_pearson, "jeffreys": _jeffreys,
              "agresti_coull": _agresti_coull}


def effective_n(n: int, deff: float) -> float:
    """Korn–Graubard effective sample size ``n / deff``.

    The design effect is floored at 1 (as Korn & Graubard 1998 do): a
    clustered design is never credited with more information than n
    independent questions.  NaN deff (all scores equal) gives ``n``.
    """
    if not np.isfinite(deff):
        return float(n)
    return float(n / max(deff, 1.0))
