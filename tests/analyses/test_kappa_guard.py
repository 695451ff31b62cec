"""Issue 29 item 3: every Beta–Binomial log density is finite and right far
out in the κ tail (log κ = 20, 35, 49), on both PyMC lines.

PyMC's ``BetaBinomial`` log density is a difference of ``betaln`` terms of
size ~κ·log κ: at log κ = 49 it gave −483 (C backend) or +2·10⁸ (Numba)
where the truth is −347, and on a small data set 0.0 at log κ = 35 and 49
where the truth is −17.0.  The PyMC graphs now cap the likelihood's κ at e^20
(``compat.capped_kappa``), and the grid paths compute ``lnΓ(v + s) − lnΓ(s)``
by Stirling's series for large s (``hierarchical.log_rising``).

The reference is exact and independent of both: with a = μκ, b = (1 − μ)κ,

    log BB(k | n, a, b) = log C(n, k) + k log μ + (n − k) log(1 − μ)
                          + Σ_{j<k} log1p(j/a) + Σ_{j<n−k} log1p(j/b) − Σ_{j<n} log1p(j/κ)

(each ``lnΓ(v + s) − lnΓ(s) = v log s + Σ_{j<v} log1p(j/s)``), summed in
float64 with no cancellation; it is checked against ``scipy.stats.betabinom``
where that is accurate (small κ) and against the binomial limit at log κ = 49.
The tolerance, 1e-3 nats for the whole data set, is 10⁵ times smaller than
the errors it guards against.
"""

import math

import numpy as np
import pytest
from bayeserr.models import hierarchical, three_level
from scipy import special, stats

TAIL = (20.0, 35.0, 49.0)
TOL = 1e-3


def _ref_one(k: int, n: int, logit_p: float, log_kappa: float, coef: bool = True) -> float:
    """Exact log BB(k | n, pκ, (1 − p)κ), p = expit(logit_p) (see the module docstring)."""
    kappa = math.exp(log_kappa)
    log_p, log_q = -math.log1p(math.exp(-logit_p)), -math.log1p(math.exp(logit_p))
    a, b = math.exp(log_p + log_kappa), math.exp(log_q + log_kappa)
    out = (k * log_p + (n - k) * log_q
           + math.fsum(math.log1p(j / a) for j in range(k))
           + math.fsum(math.log1p(j / b) for j in range(n - k))
           - math.fsum(math.log1p(j / kappa) for j in range(n)))
    if coef:
        out += math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return out


def reference(k, n, logit_p, log_kappa, coef: bool = True) -> float:
    """Σ_g log BB(k_g | n_g, p_g κ_g, (1 − p_g) κ_g); logit_p, log_kappa scalars or one per group."""
    k, n = np.asarray(k, int), np.asarray(n, int)
    lp = np.broadcast_to(np.asarray(logit_p, float), k.shape)
    lk = np.broadcast_to(np.asarray(log_kappa, float), k.shape)
    return math.fsum(_ref_one(int(a), int(b), float(c), float(d), coef) for a, b, c, d in zip(k, n, lp, lk))


K = np.array([3, 7, 12, 0, 20, 41])
N = np.array([10, 10, 30, 5, 25, 60])


def test_the_reference_is_scipy_where_scipy_is_accurate_and_the_binomial_far_out():
    for lk in (-1.0, 2.0, 6.0, 10.0):
        mu = special.expit(0.3)
        want = stats.betabinom.logpmf(K, N, mu * np.exp(lk), (1 - mu) * np.exp(lk)).sum()
        assert reference(K, N, 0.3, lk) == pytest.approx(want, abs=1e-9)
    binom = stats.binom.logpmf(K, N, special.expit(0.3)).sum()  # −20.72
    assert reference(K, N, 0.3, 35.0) == pytest.approx(binom, abs=1e-9)
    assert reference(K, N, 0.3, 49.0) == pytest.approx(binom, abs=1e-12)


# ------------------------------------------------------------------ the grid paths (numpy)
def test_log_rising_is_exact_for_any_shift():
    """lnΓ(v + s) − lnΓ(s) against v log s + Σ log1p(j/s), across the Stirling threshold."""
    for s in (0.5, 3.0, 1e3, 9.9e5, 1e6, 2.5e6, math.exp(20), math.exp(35), math.exp(49)):
        for v in (0, 1, 2, 7, 40, 333, 1000):
            want = v * math.log(s) + math.fsum(math.log1p(j / s) for j in range(v))
            got = float(hierarchical.log_rising(v, s))
            # below 10⁶ the lnΓ difference has ~ε·lnΓ(s) ≈ 2e-9 of rounding; Stirling above is exact
            assert math.isfinite(got) and got == pytest.approx(want, rel=1e-13, abs=1e-8), (s, v, got, want)
    # below the threshold it is the gammaln difference the grids always used, bit for bit
    v, s = np.arange(60.0)[:, None], np.geomspace(0.1, 9e5, 40)[None, :]
    np.testing.assert_array_equal(hierarchical.log_rising(v, s), special.gammaln(v + s) - special.gammaln(s))


@pytest.mark.parametrize("n", [np.array([10, 10, 12, 5, 8, 9]), N, np.array([1000, 3, 5, 12, 700])],
                         ids=["counts", "distinct", "distinct-large"])
def test_two_level_grid_likelihood_in_the_kappa_tail(n):
    """``log_marginal_likelihood`` (both of its evaluation plans: counts of small
    integers, and one lnΓ per distinct value when they are sparse) at log κ = 20, 35, 49."""
    k = np.minimum(K[:n.size], n)
    assert hierarchical._rising_plan(n)[0][0] == ("counts" if n.max() <= 12 else "distinct")
    logit_mu = np.array([-1.2, 0.3, 2.0])
    ll = hierarchical.log_marginal_likelihood(k, n, logit_mu, np.array(TAIL))
    assert ll.shape == (3, 3) and np.isfinite(ll).all()
    for i, lm in enumerate(logit_mu):
        for j, lk in enumerate(TAIL):
            assert ll[i, j] == pytest.approx(reference(k, n, lm, lk, coef=False), abs=TOL), (lm, lk)


@pytest.mark.parametrize("n_big", [20, 40], ids=["rising", "gamma"])
def test_three_level_grid_likelihood_in_the_kappa_tail(n_big):
    """``three_level._loglik`` (log l_c of every cluster pattern; both table kinds:
    K ≤ 32 and larger) at log κ_q = 20, 35, 49."""
    k = np.array([3, 7, 12, 0, 20, 1, 2])
    n = np.array([10, 10, n_big, 5, 25, 4, 3])
    codes = np.array([0, 0, 1, 1, 1, 2, 2])
    data = three_level._prepare(k, n, codes)
    x = np.array([-2.0, 0.4, 3.0])
    ll = three_level._loglik(data, x, np.array(TAIL))
    assert ll.shape == (data.k.shape[0], 3, 3) and np.isfinite(ll).all()
    for d in range(data.k.shape[0]):
        used = data.n[d] > 0
        for j, lk in enumerate(TAIL):
            for i, xi in enumerate(x):
                want = reference(data.k[d][used], data.n[d][used], xi, lk, coef=False)
                assert ll[d, j, i] == pytest.approx(want, abs=TOL), (d, lk, xi)


# ------------------------------------------------------------------ the PyMC graphs
def _logp_and_grad(model):
    """The observed variables' log density and the gradient of the model's log
    density, compiled by the installed PyMC (its default backend)."""
    logp = model.compile_logp(vars=model.observed_RVs, sum=True)
    dlogp = model.compile_dlogp()
    return logp, dlogp


@pytest.mark.mcmc
def test_two_level_graph_in_the_kappa_tail():
    """``hierarchical.build_pymc_models`` (two models in one graph): the Beta–Binomial
    term at log κ = 20, 35, 49 equals the exact value (within 1e-3 nats), and the
    gradient is finite."""
    other_k, other_n = np.array([1, 4, 9]), np.array([8, 8, 9])
    model = hierarchical.build_pymc_models([(K, N), (other_k, other_n)])
    logp, dlogp = _logp_and_grad(model)
    point = model.initial_point()
    logit_mu = np.array([0.3, -0.8])
    for lk in (2.0,) + TAIL:
        log_kappa = np.array([lk, 1.5])
        p = dict(point, mu_logodds__=logit_mu, log_kappa=log_kappa)
        want = reference(np.r_[K, other_k], np.r_[N, other_n], np.repeat(logit_mu, [K.size, other_k.size]),
                         np.repeat(log_kappa, [K.size, other_k.size]))
        got = float(logp(p))
        assert math.isfinite(got) and abs(got - want) < TOL, (lk, got, want)
        assert np.isfinite(dlogp(p)).all(), lk


@pytest.mark.mcmc
def test_three_level_graph_in_the_kappa_tail():
    """``three_level.build_pymc_models``: the Beta–Binomial term at log κ_q = 20, 35,
    49 equals the exact value for the cluster rates φ_c = expit(η + τ z_c), and the
    gradient is finite; the reported κ_q is not capped."""
    k = np.array([3, 7, 12, 0, 20, 1, 2])
    n = np.array([10, 10, 40, 5, 25, 4, 3])
    codes = np.array([0, 0, 1, 1, 1, 2, 2])
    model = three_level.build_pymc_models([(k, n, codes)])
    logp, dlogp = _logp_and_grad(model)
    eta, tau, z = 0.4, 0.7, np.array([-1.0, 0.2, 1.3])
    point = model.initial_point()
    for lk in (2.0,) + TAIL:
        p = dict(point, eta=np.array([eta]), tau_log__=np.array([math.log(tau)]), z=z,
                 log_kappa_question=np.array([lk]))
        want = reference(k, n, (eta + tau * z)[codes], lk)
        got = float(logp(p))
        assert math.isfinite(got) and abs(got - want) < TOL, (lk, got, want)
        assert np.isfinite(dlogp(p)).all(), lk
    kappa = model.compile_fn(model["kappa_question"], inputs=[model["log_kappa_question"]], point_fn=False)
    assert float(kappa(np.array([35.0]))[0]) == pytest.approx(math.exp(35.0))
