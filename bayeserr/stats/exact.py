"""Exact and score intervals for 0/1 scores (SPEC §2, ``docs/methods.md`` §2.8).

These assume independent questions with one answer each.  Under clustering
:func:`effective_n` gives Korn and Graubard's (1998) effective sample size —
``n / deff``, shrunk by their degrees-of-freedom factor when the design
effect rests on few clusters — on which the ``*_clustered`` variants are computed.

The four intervals are statsmodels' ``proportion_confint`` (imported when first
needed: it costs about 0.6 s of CPU with scipy.stats, which ``--help`` and ``power``
do not pay); ``tests/stats/test_exact.py`` checks them against the closed forms of §2.8.
"""

from __future__ import annotations

import numpy as np

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
    from statsmodels.stats.proportion import proportion_confint
    x, m = np.asarray(successes, float), np.asarray(n, float)
    low, high = proportion_confint(x, m, alpha=1 - level, method=METHODS[method])
    if method == "jeffreys":
        low = np.where(x == 0, 0.0, low)
        high = np.where(x == m, 1.0, high)
    return np.stack([np.asarray(low, float), np.asarray(high, float)], axis=-1)


def effective_n(n: int, deff: float, df: float | None = None, level: float = 0.95) -> float:
    """Korn and Graubard's (1998) effective sample size (``docs/methods.md`` §2.8)::

        n_eff = n / max(deff, 1) · (t_{n−1}(q) / t_df(q))²,   q = (1 + level)/2

    The design effect is floored at 1: a clustered design is never credited with
    more information than n independent questions.  ``df``: the degrees of freedom
    of the clustered variance (the Bell–McCaffrey df); the factor shrinks n_eff
    when they are few, as the t quantile of the CR2 interval widens it (with 2
    clusters, df ≈ 1: t_1 = 12.7 against about 2 for t_{n−1}), so an interval on
    n_eff is never narrower for the variance resting on fewer clusters.  ``None``
    or a df that is not finite and positive: no factor.  NaN deff (all scores
    equal) gives n before the factor.
    """
    out = float(n) if not np.isfinite(deff) else float(n / max(deff, 1.0))
    if df is not None and np.isfinite(df) and df > 0 and n > 1:
        from bayeserr.stats.distributions import t_ppf
        q = 0.5 + level / 2
        out *= min(1.0, float(t_ppf(q, n - 1)) / float(t_ppf(q, df))) ** 2
    return out


def bounded_mean_n(mean, se, n, df=None, level: float = 0.95) -> np.ndarray:
    """Effective sample size of a mean of values in [0, 1] (``docs/methods.md`` §6.2)::

        n* = m(1 − m) / SE² · (z_q / t_df(q))²,   q = (1 + level)/2

    — the number of independent 0/1 answers whose Bernoulli SE equals the mean's SE (Korn and
    Graubard 1998), shrunk by their degrees-of-freedom factor (``df``: n − 1 for the CLT SE, the
    Bell–McCaffrey df for CR2).  Wilson's interval on ``(m n*, n*)`` is then skewed towards the
    middle as a mean of bounded values is; where SE = 0 (every value the same) n* is ``n``.
    Arrays broadcast; ``df`` None: no factor.
    """
    from bayeserr.stats.distributions import t_ppf
    from bayeserr.stats.estimators import z_value
    mean, se, n = (np.asarray(x, float) for x in (mean, se, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(se > 0, mean * (1 - mean) / np.where(se > 0, se, 1.0) ** 2, n)
    out = np.where(mean * (1 - mean) > 0, out, n)
    if df is not None:
        df = np.broadcast_to(np.asarray(df, float), out.shape)
        ok = np.isfinite(df) & (df > 0)
        factor = np.ones(out.shape)
        if ok.any():
            factor[ok] = (z_value(level) / np.asarray(t_ppf(0.5 + level / 2, df[ok]), float)) ** 2
        out = out * factor
    return out
