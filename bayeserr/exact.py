"""Exact and score intervals for 0/1 scores, through statsmodels (SPEC §2).

These assume independent questions with one answer each.  Under clustering
:func:`effective_n` gives the Korn–Graubard style effective sample size
``n / deff`` on which the ``*_clustered`` variants are computed.
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

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
    """
    low, high = proportion_confint(np.asarray(successes, float), np.asarray(n, float),
                                   alpha=1 - level, method=METHODS[method])
    return np.stack([np.asarray(low, float), np.asarray(high, float)], axis=-1)


def effective_n(n: int, deff: float) -> float:
    """Korn–Graubard effective sample size ``n / deff``.

    The design effect is floored at 1 (as Korn & Graubard 1998 do): a
    clustered design is never credited with more information than n
    independent questions.  NaN deff (all scores equal) gives ``n``.
    """
    if not np.isfinite(deff):
        return float(n)
    return float(n / max(deff, 1.0))
