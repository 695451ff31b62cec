"""The distribution functions of :mod:`bayeserr.stats.distributions`
(``scipy.special``) against their ``scipy.stats`` counterparts."""

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats import distributions as d

rng = np.random.default_rng(5)
P = np.concatenate([rng.random(300), [1e-12, 1e-6, 0.5, 1 - 1e-9, 0.025, 0.975]])
DF = np.concatenate([rng.uniform(0.5, 300, 300), [1.0, 2.5, 1e4, 3.0, 14.0, 1.0]])


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_normal_and_t_quantiles():
    close(d.norm_ppf(P), stats.norm.ppf(P))
    close(d.norm_isf(P), stats.norm.isf(P))
    close(d.t_ppf(P, DF), stats.t.ppf(P, DF), 1e-10)
    close(d.t_isf(P, DF), stats.t.isf(P, DF), 1e-10)
    x = rng.normal(0, 5, P.size)
    close(d.t_sf(x, DF), stats.t.sf(x, DF))


def test_binomial():
    n = rng.integers(0, 400, 500)
    k = rng.integers(-3, 403, 500)
    for p in (0.5, 0.1, 0.93):
        close(d.binom_cdf(k, n, p), stats.binom.cdf(k, n, p))
        kk = np.clip(k, 0, n)
        close(d.binom_pmf(kk, n, p), stats.binom.pmf(kk, n, p), 1e-10)


def test_beta_quantiles():
    a, b = rng.uniform(0.3, 400, P.size), rng.uniform(0.3, 400, P.size)
    close(d.beta_ppf(P, a, b), stats.beta.ppf(P, a, b), 1e-10)
    close(d.beta_isf(P, a, b), stats.beta.isf(P, a, b), 1e-10)


@pytest.mark.parametrize("module", ["bayeserr.stats.fewclusters", "bayeserr.stats.pairs",
                                    "bayeserr.stats.exact", "bayeserr.models.beta_binomial",
                                    "bayeserr.models.paired_dirichlet"])
def test_report_modules_do_not_import_scipy_stats(module):
    import subprocess
    import sys
    code = f"import sys, {module}; print('scipy.stats' in sys.modules, 'statsmodels' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
