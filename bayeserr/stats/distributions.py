"""The few distribution functions a report needs, from ``scipy.special``.

Why not ``scipy.stats``: importing it costs about half a second of CPU (it
pulls in scipy.spatial, scipy.ndimage and every distribution), which every
report, and every command that imported it, would pay for a handful of
quantiles; ``scipy.special`` holds the same functions (the ones
``scipy.stats`` itself calls) and costs a quarter of that.  Each function
here is tested against its ``scipy.stats`` counterpart
(``tests/test_distributions.py``).
"""

from __future__ import annotations

import numpy as np
from scipy import special


def norm_ppf(p):
    """Φ⁻¹(p) (``scipy.stats.norm.ppf``)."""
    return special.ndtri(p)


def norm_isf(q):
    """Φ⁻¹(1 − q), computed without the cancellation of 1 − q (``scipy.stats.norm.isf``)."""
    return -special.ndtri(q)


def t_ppf(p, df):
    """Quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    return special.stdtrit(df, p)


def t_isf(q, df):
    """Upper quantile of Student's t, ``t_ppf(1 − q)`` without its cancellation (``scipy.stats.t.isf``)."""
    return -special.stdtrit(df, q)


def t_sf(x, df):
    """P(T > x) for Student's t (``scipy.stats.t.sf``), by symmetry from the lower tail."""
    return special.stdtr(df, -np.asarray(x, float))


def binom_cdf(k, n, p):
    """P(X ≤ k) for X ~ Binomial(n, p) (``scipy.stats.binom.cdf``); 0 below 0, 1 from n on."""
    k, n = np.floor(np.asarray(k, float)), np.asarray(n, float)
    inside = special.bdtr(np.clip(k, 0, None), n.astype(np.int64), p)  # bdtr takes a whole n
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, inside))


def binom_pmf(k, n, p):
    """P(X = k) for X ~ Binomial(n, p) (``scipy.stats.binom.pmf``), for whole k in [0, n]."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    log = (special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
           + special.xlogy(k, p) + special.xlog1py(n - k, -p))
    return np.where((k < 0) | (k > n), 0.0, np.exp(log))


def beta_ppf(q, a, b):
    """Quantile of Beta(a, b) (``scipy.stats.beta.ppf``)."""
    return special.betaincinv(a, b, q)


def beta_isf(q, a, b):
    """Upper quantile of Beta(a, b), ``beta_ppf(1 − q)``, as the lower one of Beta(b, a) (``scipy.stats.beta.isf``)."""
    return 1.0 - special.betaincinv(b, a, q)
