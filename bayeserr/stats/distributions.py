"""The distribution functions of the report, from ``scipy.stats`` (the design's library
for distributions), imported where first needed so that ``import bayeserr``, ``--help``
and ``power`` do not pay for it (``scipy.stats`` costs about half a second of CPU to
import; the exact intervals import it with statsmodels in any report of 0/1 scores).

One name per function a formula needs, so each formula reads as its equation; each is
the ``scipy.stats`` method named in its docstring (``tests/stats/test_distributions.py``).
The normal quantile of the planning commands is :func:`bayeserr.stats.estimators.normal_quantile`
(the standard library's, so ``power`` starts in 0.2 s).
"""

from __future__ import annotations

import numpy as np


def _stats():
    from scipy import stats
    return stats


def norm_ppf(p):
    """Φ⁻¹(p) (``scipy.stats.norm.ppf``)."""
    return _stats().norm.ppf(p)


def norm_isf(q):
    """Φ⁻¹(1 − q), without the cancellation of 1 − q (``scipy.stats.norm.isf``)."""
    return _stats().norm.isf(q)


def t_ppf(p, df):
    """Quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    return _stats().t.ppf(p, df)


def t_isf(q, df):
    """Upper quantile of Student's t, ``t_ppf(1 − q)`` without its cancellation (``scipy.stats.t.isf``)."""
    return _stats().t.isf(q, df)


def t_sf(x, df):
    """P(T > x) for Student's t (``scipy.stats.t.sf``)."""
    return _stats().t.sf(np.asarray(x, float), df)


def binom_cdf(k, n, p):
    """P(X ≤ k) for X ~ Binomial(n, p) (``scipy.stats.binom.cdf``)."""
    return _stats().binom.cdf(k, n, p)


def binom_pmf(k, n, p):
    """P(X = k) for X ~ Binomial(n, p) (``scipy.stats.binom.pmf``)."""
    return _stats().binom.pmf(k, n, p)


def beta_ppf(q, a, b):
    """Quantile of Beta(a, b) (``scipy.stats.beta.ppf``)."""
    return _stats().beta.ppf(q, a, b)


def beta_isf(q, a, b):
    """Upper quantile of Beta(a, b), ``beta_ppf(1 − q)`` without its cancellation
    (``scipy.stats.beta.isf``)."""
    return _stats().beta.isf(q, a, b)
