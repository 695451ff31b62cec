"""The distribution functions of :mod:`bayeserr.stats.distributions` (``scipy.stats``)
against closed forms computed here: the Cauchy and df = 2 laws of Student's t, the
binomial from ``math.comb``, the Beta quantiles of Beta(a, 1) and Beta(1, b); and the
modules of the report import ``scipy.stats`` and statsmodels only when first needed."""

import math

import numpy as np
import pytest

from bayeserr.stats import distributions as d

rng = np.random.default_rng(5)
P = np.concatenate([rng.random(300), [1e-12, 1e-6, 0.5, 1 - 1e-9, 0.025, 0.975]])


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_normal_quantiles_against_the_standard_library():
    from statistics import NormalDist
    inner = P[(P > 1e-9) & (P < 1 - 1e-9)]
    close(d.norm_ppf(inner), [NormalDist().inv_cdf(p) for p in inner], 1e-9)
    close(d.norm_isf(1e-12), -NormalDist().inv_cdf(1e-12), 1e-9)  # the upper tail without cancellation


def test_t_against_the_cauchy_and_df_2_closed_forms():
    x = rng.normal(0, 5, 400)
    close(d.t_sf(x, 1.0), 0.5 - np.arctan(x) / np.pi)  # df = 1: the Cauchy law
    close(d.t_sf(x, 2.0), 0.5 - x / (2 * np.sqrt(2 + x**2)))  # df = 2
    inner = P[(P > 1e-6) & (P < 1 - 1e-6)]
    close(d.t_ppf(inner, 1.0), np.tan(np.pi * (inner - 0.5)), 1e-8)
    close(d.t_isf(inner, 2.0), -(2 * inner - 1) * np.sqrt(2 / (4 * inner * (1 - inner))), 1e-8)


def test_binomial_against_math_comb():
    for n, p in ((0, 0.5), (1, 0.5), (17, 0.5), (60, 0.1), (200, 0.93)):
        pmf = np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])
        ks = np.arange(-2, n + 3)
        want_cdf = np.array([pmf[: max(k + 1, 0)].sum() for k in ks])
        close(d.binom_cdf(ks, n, p), np.minimum(want_cdf, 1.0), 1e-10)
        close(d.binom_pmf(np.arange(n + 1), n, p), pmf, 1e-10)


def test_beta_quantiles_against_the_one_parameter_closed_forms():
    a = rng.uniform(0.3, 400, P.size)
    close(d.beta_ppf(P, a, 1.0), P ** (1 / a), 1e-10)  # Beta(a, 1): F(x) = x^a
    close(d.beta_isf(P, 1.0, a), 1 - P ** (1 / a), 1e-10)  # Beta(1, b): P(X > x) = (1 − x)^b


@pytest.mark.parametrize("module", ["bayeserr.stats.fewclusters", "bayeserr.stats.pairs",
                                    "bayeserr.stats.exact", "bayeserr.stats.distributions",
                                    "bayeserr.models.beta_binomial", "bayeserr.models.paired_dirichlet"])
def test_report_modules_import_scipy_stats_and_statsmodels_only_when_first_needed(module):
    import subprocess
    import sys
    code = f"import sys, {module}; print('scipy.stats' in sys.modules, 'statsmodels' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
