"""pass^k per question (``docs/methods.md`` §6.2) against exact rational arithmetic, direct
enumeration of run subsets, and the run-to-run variance against its exact expectation."""

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats

import bayeserr
from bayeserr.stats import passk
from bayeserr.stats.passk import pass_at_k, pass_hat_k, pass_hat_k_run_variance

EPS = Fraction(np.finfo(float).eps)


@pytest.mark.parametrize("n", [1, 2, 4, 7, 50, 200])
@pytest.mark.parametrize("k", [1, 2, 4, 10, 50])
def test_pass_hat_k_against_exact_rational_arithmetic(n, k):
    """Every c: exactly 0 below k, exactly 1 at c = n, elsewhere within (n − c + 2) ε of C(c, k)/C(n, k)."""
    if k > n:
        return
    c = np.arange(n + 1)
    got = pass_hat_k(np.full(n + 1, n), c, k)
    assert np.all(got[c < k] == 0.0) and got[n] == 1.0
    for ci in range(n + 1):
        exact = Fraction(comb(ci, k), comb(n, k))
        assert abs(Fraction(float(got[ci])) - exact) <= (n - ci + 2) * EPS * max(exact, Fraction(1, 10**300))


def test_pass_hat_k_is_the_share_of_k_subsets_of_runs_all_right():
    """Direct enumeration: over every set of k of the n runs, the share that are all right."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(1, 9))
        runs = rng.integers(0, 2, n)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(runs, k))
            share = sum(all(s) for s in subsets) / len(subsets)
            assert pass_hat_k([n], [runs.sum()], k)[0] == pytest.approx(share, abs=1e-14)


def test_pass_hat_k_and_pass_at_k_are_one_formula_mirrored():
    """pass@k of the failures is 1 − pass^k of the successes: C(n − c, k)/C(n, k) both ways."""
    n = np.array([5, 20, 20, 100, 7, 100])
    c = np.array([0, 3, 20, 60, 4, 100])
    for k in (1, 3, 5):
        assert np.allclose(pass_hat_k(n, c, k), 1 - pass_at_k(n, n - c, k), atol=1e-15)


def test_log_gamma_fallback_agrees_with_the_product(monkeypatch):
    n = np.array([50, 100, 100, 73])
    c = np.array([30, 99, 64, 10])
    product = pass_hat_k(n, c, 5)
    monkeypatch.setattr(passk, "PRODUCT_BUDGET", 0)
    assert np.allclose(pass_hat_k(n, c, 5), product, rtol=1e-12, atol=0)


@pytest.mark.parametrize("n,k", [(2, 1), (4, 1), (4, 2), (9, 3), (12, 6)])
def test_run_variance_is_unbiased_by_exact_expectation(n, k):
    """E[U² − C(c, 2k)/C(n, 2k) | θ] = Var(U | θ), summed exactly over c ~ Binomial(n, θ)."""
    c = np.arange(n + 1)
    u = pass_hat_k(np.full(n + 1, n), c, k)
    w = pass_hat_k_run_variance(np.full(n + 1, n), c, k)
    for theta in (0.05, 0.3, 0.5, 0.77, 0.99):
        pmf = stats.binom.pmf(c, n, theta)
        var = pmf @ u**2 - (pmf @ u) ** 2
        assert pmf @ u == pytest.approx(theta**k, rel=1e-12)
        assert pmf @ w == pytest.approx(var, rel=1e-9, abs=1e-15)


def test_run_variance_at_k_one_is_the_question_term_of_the_k_split():
    n, c = np.array([4, 4, 10, 3]), np.array([0, 2, 7, 1])
    p = c / n
    assert np.allclose(pass_hat_k_run_variance(n, c, 1), p * (1 - p) / (n - 1))
    assert np.isnan(pass_hat_k_run_variance(np.array([3]), np.array([1]), 2)).all()  # needs 2k = 4 runs


@pytest.mark.parametrize("bad,match", [(dict(n=[5], c=[6], k=1), "between 0 and"),
                                       (dict(n=[3], c=[1], k=4), "at least 4 samples"),
                                       (dict(n=[5], c=[1], k=0), "whole k"),
                                       (dict(n=[5], c=[1.5], k=1), "whole numbers")])
def test_bad_counts_are_refused(bad, match):
    with pytest.raises(bayeserr.InputError, match=match):
        pass_hat_k(np.array(bad["n"]), np.array(bad["c"]), bad["k"])


def test_bounded_mean_effective_size_by_hand():
    from bayeserr.stats.exact import bounded_mean_n
    m, se, n = np.array([0.3, 0.9, 0.0, 0.5]), np.array([0.05, 0.02, 0.0, 0.0]), np.array([40, 40, 40, 40])
    got = bounded_mean_n(m, se, n, df=np.array([39, 5.5, 39, 39]), level=0.9)
    z, t = stats.norm.ppf(0.95), stats.t.ppf(0.95, [39, 5.5, 39, 39])
    want = np.array([0.21 / 0.0025, 0.09 / 0.0004, 40, 40]) * (z / t) ** 2
    assert np.allclose(got, want, rtol=1e-12)
    assert np.allclose(bounded_mean_n(m[:2], se[:2], n[:2]), [0.21 / 0.0025, 0.09 / 0.0004])  # no df: no factor
