"""Pair posterior with a cluster random effect on the difference
(``bayeserr.models.paired_clustered``; SPEC §5.3, ``docs/methods.md`` §5.3).

What is checked, and with which tolerance:

* null calibration at SWE-bench's 12 repository sizes with 0/1 scores and a
  cluster effect on the difference (ICC of d ≈ 0.05 and ≈ 0.10, measured in
  the test): ``max(P, 1 − P) > 0.975`` fires in 5% of data sets within 3
  Monte Carlo SEs (4,000 replicates per setting, the pairs axis), while the
  Bayesian bootstrap over clusters on the same data sets fires in > 10%;
* calibration when the truth is drawn from the prior (C = 1, 2 and 12):
  coverage of the 95% interval and both 2.5% tails within 3 MC SEs;
* one and two clusters: never exactly 0 or 1 on realistic data, never
  P(A>B) = 1 together with P(tie) = 1;
* permutation of clusters or questions: bit-identical results;
* an independent brute-force computation (raw-data multivariate normal
  likelihood by ``numpy.linalg``, Gauss–Legendre over (log σ, ρ)): agreement
  to 1e-6 (1e-5 for the sd of Δ and the mean of τ); quadrature convergence
  against a 1,000-point grid: 1e-8;
* a PyMC NUTS fit of the same model (``mcmc`` marker): within 4 MC SEs.
"""

import dataclasses

import numpy as np
import pytest
from bayeserr.models import paired_clustered as pc
from scipy import optimize, special, stats

from bayeserr.stats.fewclusters import cluster_totals

SWE = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1])
SWE_CODES = np.repeat(np.arange(SWE.size), SWE)


def _mc_band(rate, target, reps, k=3.0):
    """|rate − target| within k binomial Monte Carlo SEs of the target."""
    se = np.sqrt(target * (1 - target) / reps)
    assert abs(rate - target) <= k * se, (rate, target, se)


def _binary_pairs(reps, su, rng, sizes=SWE, shift=0.0):
    """0/1 scores of two models on clustered questions.

    Question difficulty ``b_i ~ N(0.5, 1.5²)`` is shared; each cluster moves
    the two models' logits by ``± u_c / 2``, ``u_c ~ N(shift, su²)``.  With
    ``shift = 0`` the population difference is exactly 0 (u ↦ −u symmetry).
    Returns d (reps, n) and the cluster codes."""
    codes = np.repeat(np.arange(len(sizes)), sizes)
    n = codes.size
    b = rng.normal(0.5, 1.5, (reps, n))
    u = rng.normal(shift, su, (reps, len(sizes)))[:, codes]
    pa = special.expit(b + u / 2)
    pb = special.expit(b - u / 2)
    return (rng.random((reps, n)) < pa).astype(float) - (rng.random((reps, n)) < pb), codes


def _icc(d, codes):
    """Moment estimate of the ICC of d pooled over replicates whose true mean is 0:
    between-cluster variance from ȳ_c² − s_c²/n_c over clusters of ≥ 8 questions,
    over the total variance E[d²]."""
    tau2 = []
    for c in np.unique(codes):
        x = d[:, codes == c]
        if x.shape[1] >= 8:
            tau2.append(np.mean(x.mean(1) ** 2 - x.var(1, ddof=1) / x.shape[1]))
    return np.mean(tau2) / np.mean(d**2)


def _bootstrap_prob(d, codes, rng, draws=1000, chunk=500):
    """Bayesian bootstrap over clusters (Dirichlet(1,…,1) weights; §5.4), P(Δ > 0)
    with ties counted half, for each row of d."""
    D, n = cluster_totals(d, codes)
    out = np.empty(d.shape[0])
    for s in range(0, d.shape[0], chunk):
        g = rng.standard_exponential((min(chunk, d.shape[0] - s), draws, D.shape[1]))
        m = np.einsum("rdc,rc->rd", g, D[s:s + chunk]) / np.einsum("rdc,rc->rd", g, n[s:s + chunk])
        out[s:s + chunk] = (m > 0).mean(1) + 0.5 * (m == 0).mean(1)
    return out


# --------------------------------------------------------------------------- #
# the measured problem: null data at SWE-bench sizes
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("su, icc_range", [(0.8, (0.035, 0.07)), (1.2, (0.08, 0.13))])
def test_null_false_positive_rate_swebench(su, icc_range):
    """4,000 null data sets (true difference 0) at SWE-bench's repository sizes:
    the model's two-sided 5% rule holds its level within 3 MC SEs (0.0103);
    the cluster bootstrap, on the same data, does not (> 10%)."""
    reps = 4000
    rng = np.random.default_rng(20240 + int(su * 10))
    d, codes = _binary_pairs(reps, su, rng)
    icc = _icc(d, codes)
    assert icc_range[0] < icc < icc_range[1], icc          # ICC of d: ≈ 0.05 / ≈ 0.10
    res = pc.from_arrays(d, codes, 0.01)
    assert res.estimable.all()
    p = res.prob_a_better
    fired = np.mean(np.maximum(p, 1 - p) > 0.975)
    _mc_band(fired, 0.05, reps)
    boot = _bootstrap_prob(d, codes, rng)
    fired_boot = np.mean(np.maximum(boot, 1 - boot) > 0.975)
    assert fired_boot > 0.10, fired_boot
    # the interval of Δ covers the true 0 at its nominal rate, too
    covered = np.mean((res.interval[:, 0] < 0) & (res.interval[:, 1] > 0))
    _mc_band(covered, 0.95, reps)


# --------------------------------------------------------------------------- #
# calibration when the truth is drawn from the prior
# --------------------------------------------------------------------------- #
def _draw_from_prior(reps, sizes, rng, delta):
    """(D, sizes, Q) of normal data from the model with (ρ, σ) from their priors."""
    nu0, s0 = pc.SIGMA_PRIOR
    rho = np.abs(stats.t.rvs(pc.PRIOR_DF, size=reps, random_state=rng)) * pc.PRIOR_SCALE
    sigma = np.sqrt(nu0 * s0**2 / rng.chisquare(nu0, reps))
    codes = np.repeat(np.arange(len(sizes)), sizes)
    dc = delta[:, None] + (rho * sigma)[:, None] * rng.standard_normal((reps, len(sizes)))
    d = dc[:, codes] + sigma[:, None] * rng.standard_normal((reps, codes.size))
    D, n = cluster_totals(d, codes)
    Q, _ = cluster_totals(d * d, codes)
    return D, n, Q


@pytest.mark.parametrize("sizes", [SWE, SWE[:2], SWE[:1]], ids=["C12", "C2", "C1"])
def test_calibration_truth_from_prior(sizes):
    """With (ρ, σ) drawn from the priors and any Δ (flat prior: location
    equivariance) the 95% interval covers Δ in 95% of data sets and each tail
    holds 2.5% (P(Δ > Δ_true | data) is uniform), within 3 MC SEs — also with
    one and two clusters, where the prior carries the between-cluster scale."""
    reps = 4000
    rng = np.random.default_rng(7 + len(sizes))
    delta = rng.uniform(-0.3, 0.3, reps)
    D, n, Q = _draw_from_prior(reps, sizes, rng, delta)
    res = pc.pair_probabilities(D, n, 0.01, sum_sq=Q)
    _mc_band(np.mean((res.interval[:, 0] < delta) & (delta < res.interval[:, 1])), 0.95, reps)
    # P(Δ > Δ_true | data): shift the data by Δ_true (another draw of the same model)
    shifted = pc.pair_probabilities(D - n * delta[:, None], n, 0.01,
                                    sum_sq=Q - 2 * delta[:, None] * D + n * delta[:, None] ** 2)
    pit = shifted.prob_a_better
    _mc_band(np.mean(pit > 0.975), 0.025, reps)
    _mc_band(np.mean(pit < 0.025), 0.025, reps)
    _mc_band(np.mean(pit > 0.5), 0.5, reps)


# --------------------------------------------------------------------------- #
# one and two clusters
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n_clusters", [1, 2])
def test_one_and_two_clusters_never_certain(n_clusters):
    """Realistic 0/1 data on SWE-bench's largest one or two repositories, true
    differences from 0 to large: every probability strictly inside (0, 1), and
    never P(A>B) = 1 together with P(tie) = 1; C = 1 is flagged not estimable.
    The cluster bootstrap on the same data returns exactly 0 or 1 with C = 1."""
    rng = np.random.default_rng(3 + n_clusters)
    rows = []
    for shift in (0.0, 0.5, 1.5, 3.0):
        d, codes = _binary_pairs(200, 0.8, rng, sizes=SWE[:n_clusters], shift=shift)
        rows.append(d)
    d = np.concatenate(rows)
    for rope in (0.01, 0.05):
        res = pc.from_arrays(d, codes, rope)
        for p in (res.prob_a_better, res.prob_b_better, res.prob_tie):
            assert np.all((p > 0) & (p < 1))
        assert not np.any((res.prob_a_better == 1) & (res.prob_tie == 1))
        assert np.all(np.isfinite(res.interval)) and np.all(res.interval[:, 0] < res.interval[:, 1])
        assert np.all(res.estimable == (n_clusters >= 2))
        assert np.all(res.n_clusters == n_clusters)
        if n_clusters == 1:
            assert set(res.reason) == {pc._REASON_ONE}
    if n_clusters == 1:
        boot = _bootstrap_prob(d[:50], codes, rng, draws=200)
        nonzero = d[:50].mean(1) != 0
        assert np.all(np.isin(boot[nonzero], (0.0, 1.0)))


def test_degenerate_two_clusters():
    """Two clusters of identical differences, or opposite ones: still inside (0, 1).
    Every difference 0: P(A>B) = ½ (to rounding), P(tie) high but below 1; clusters
    at +1 and −1: a very wide interval (the between-cluster spread is not
    mistaken for precision although there is no within-cluster spread)."""
    codes = np.repeat([0, 1], SWE[:2])
    cases = np.array([np.zeros(codes.size), np.ones(codes.size), np.full(codes.size, 0.005),
                      np.where(codes == 0, 1.0, -1.0), np.where(codes == 0, 1.0, 0.0)])
    res = pc.from_arrays(cases, codes, 0.01)
    for p in (res.prob_a_better, res.prob_b_better, res.prob_tie):
        assert np.all((p > 0) & (p < 1)), p
    assert abs(res.prob_a_better[0] - 0.5) < 1e-15 and abs(res.prob_b_better[0] - 0.5) < 1e-15
    assert 0.99 < res.prob_tie[0] < 1
    assert abs(res.prob_a_better[3] - 0.5) < 1e-3
    assert res.interval[3, 0] < -1 and res.interval[3, 1] > 1


# --------------------------------------------------------------------------- #
# permutations, symmetry, API
# --------------------------------------------------------------------------- #
def _fields(res):
    return {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}


def _assert_identical(a, b):
    for name, value in _fields(a).items():
        np.testing.assert_array_equal(value, _fields(b)[name], err_msg=name)


@pytest.mark.parametrize("fractional", [False, True])
def test_permutations_give_identical_results(fractional):
    """Permuting the clusters (columns, differently for every pair, with cluster
    codes relabelled) or the questions gives bit-identical output, for 0/1
    differences and for fractional ones with unanswered questions."""
    rng = np.random.default_rng(11)
    d, codes = _binary_pairs(60, 1.0, rng)
    if fractional:
        d = np.clip(d * rng.uniform(0.2, 1.0, d.shape) + rng.normal(0, 0.05, d.shape), -1, 1)
        d[rng.random(d.shape) < 0.1] = np.nan
    ref = pc.from_arrays(d, codes, 0.02)
    # questions in a random order, clusters relabelled
    perm = rng.permutation(codes.size)
    relabel = rng.permutation(SWE.size)
    _assert_identical(ref, pc.from_arrays(d[:, perm], relabel[codes[perm]], 0.02))
    # cluster columns permuted independently per pair
    D, n = cluster_totals(d, codes)
    Q, _ = cluster_totals(d * d, codes)
    base = pc.pair_probabilities(D, n, 0.02, sum_sq=Q)
    cols = np.argsort(rng.random(D.shape), axis=1)
    take = lambda a: np.take_along_axis(a, cols, axis=1)  # noqa: E731
    _assert_identical(base, pc.pair_probabilities(take(D), take(n), 0.02, sum_sq=take(Q)))
    # and the convenience path equals the array path
    for name in ("prob_a_better", "prob_tie", "interval"):
        np.testing.assert_allclose(getattr(ref, name), getattr(base, name), rtol=1e-12, atol=1e-15)


def test_swapping_models_mirrors_the_posterior():
    rng = np.random.default_rng(5)
    d, codes = _binary_pairs(50, 1.0, rng, shift=0.5)
    a, b = pc.from_arrays(d, codes, 0.01), pc.from_arrays(-d, codes, 0.01)
    np.testing.assert_allclose(a.prob_a_better, b.prob_b_better, rtol=1e-12)
    np.testing.assert_allclose(a.prob_tie, b.prob_tie, rtol=1e-12)
    np.testing.assert_allclose(a.interval, -b.interval[:, ::-1], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a.prob_a_better + a.prob_b_better, 1.0, rtol=1e-13)


def test_api_contract():
    rng = np.random.default_rng(2)
    d, codes = _binary_pairs(4, 1.0, rng)
    d[3] = np.nan                                     # a pair with no common question
    d[2, codes != 0] = np.nan                         # a pair with one common cluster
    res = pc.from_arrays(d, codes, 0.01)
    assert isinstance(res, pc.PairedClustered)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.mean = None
    for name in ("prob_a_better", "prob_b_better", "prob_tie", "mean", "sd", "estimable",
                 "tau_mean", "sigma_mean", "icc_mean", "n", "n_clusters", "reason"):
        assert getattr(res, name).shape == (4,), name
    assert res.interval.shape == (4, 2)
    assert list(res.estimable) == [True, True, False, False]
    assert list(res.reason) == ["", "", pc._REASON_ONE, pc._REASON_NONE]
    assert np.all(np.isnan(res.interval[3])) and np.isnan(res.prob_a_better[3])
    assert np.all(np.isfinite(res.interval[:3]))
    assert list(res.n_clusters) == [12, 12, 1, 0]
    # (C,) sizes broadcast; a wider level gives a wider interval; rope per pair
    D, n = cluster_totals(d[:2], codes)
    Q, _ = cluster_totals(d[:2] ** 2, codes)
    full = pc.pair_probabilities(D, n, [0.01, 0.05], sum_sq=Q)
    shared = pc.pair_probabilities(D, n[0], [0.01, 0.05], sum_sq=Q)
    _assert_identical(full, shared)
    wide = pc.pair_probabilities(D, n, [0.01, 0.05], sum_sq=Q, level=0.99)
    assert np.all(wide.interval[:, 0] < full.interval[:, 0])
    assert np.all(wide.interval[:, 1] > full.interval[:, 1])
    np.testing.assert_allclose(full.prob_tie[0], res.prob_tie[0], rtol=1e-12)
    assert full.prob_tie[1] > res.prob_tie[1]
    with pytest.raises(ValueError):
        pc.pair_probabilities(D, n[:, :3], 0.01)
    with pytest.raises(ValueError):
        pc.pair_probabilities(D, -n, 0.01)
    with pytest.raises(ValueError):
        pc.pair_probabilities(D, n, 0.01, sum_sq=np.zeros_like(D) - 1)
    with pytest.raises(ValueError):
        pc.from_arrays(d * 3, codes, 0.01)


def test_without_sum_sq_uses_cluster_means_only():
    """With one question per cluster the within-cluster sum of squares is 0 and
    ν' = ν0 + n − 1 = ν0 + C − 1, so sum_sq changes nothing (up to rounding); with larger
    clusters the cluster-means-only posterior is still proper and calibrated in
    shape (finite, inside (0, 1))."""
    rng = np.random.default_rng(9)
    d = rng.uniform(-1, 1, (20, 15))
    codes = np.arange(15)
    D, n = cluster_totals(d, codes)
    Q, _ = cluster_totals(d * d, codes)
    a, b = pc.pair_probabilities(D, n, 0.05, sum_sq=Q), pc.pair_probabilities(D, n, 0.05)
    for name in ("prob_a_better", "prob_tie", "interval", "mean", "sd"):      # W = 0 up to rounding
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-10, err_msg=name)
    d, codes = _binary_pairs(20, 1.0, rng)
    D, n = cluster_totals(d, codes)
    res = pc.pair_probabilities(D, n, 0.01)
    assert np.all((res.prob_a_better > 0) & (res.prob_a_better < 1)) and np.all(np.isfinite(res.interval))


# --------------------------------------------------------------------------- #
# numerics: an independent brute-force computation, quadrature convergence
# --------------------------------------------------------------------------- #
def _gauss(a, b, k):
    x, w = np.polynomial.legendre.leggauss(k)
    return (a + b) / 2 + (b - a) / 2 * x, (b - a) / 2 * w


def _brute_force(d, codes, rope, level=0.95):
    """The posterior of Δ without any of the module's algebra: for each (σ, ρ)
    on a Gauss–Legendre grid (log σ: one panel; ρ: geometric panels to 8.4e5),
    the raw-data likelihood of each cluster's vector under
    N(Δ·1, σ²(I + ρ² 11ᵀ)) from numpy.linalg (slogdet, solve); Δ | σ, ρ is
    then normal (GLS), so the grid gives a normal mixture."""
    nu0, s0 = pc.SIGMA_PRIOR
    groups = [d[codes == c] for c in np.unique(codes)]
    sd0 = np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / (d.size - len(groups)))
    x, wx = _gauss(np.log(sd0) - 2.5, np.log(sd0) + 2.5, 120)
    edges = np.concatenate([[0.0], 0.05 * 2.0 ** np.arange(25)])
    panels = [_gauss(lo, hi, 40) for lo, hi in zip(edges[:-1], edges[1:])]
    rho = np.concatenate([p[0] for p in panels])
    wr = np.concatenate([p[1] for p in panels])
    sig = np.exp(x)[:, None]
    # priors: σ² ~ Scaled-Inv-χ²(ν0, s0²) as a density in log σ; ρ ~ half-t
    logp = (-nu0 * x - nu0 * s0**2 / (2 * np.exp(2 * x)))[:, None] \
        + stats.t.logpdf(rho / pc.PRIOR_SCALE, pc.PRIOR_DF)[None, :]
    a = b = c = logdet = 0.0
    for g in groups:
        m = g.size
        cov = (sig**2)[..., None, None] * (np.eye(m) + (rho**2)[None, :, None, None] * np.ones((m, m)))
        sign, ld = np.linalg.slogdet(cov)
        sol = np.linalg.solve(cov, np.broadcast_to(np.stack([g, np.ones(m)], -1), cov.shape[:-2] + (m, 2)))
        a = a + sol[..., 0] @ g
        b = b + sol[..., 1] @ g
        c = c + sol[..., 1].sum(-1)
        logdet = logdet + ld
    # ∫ exp(−(a − 2Δb + Δ²c)/2) dΔ = sqrt(2π/c) exp(−(a − b²/c)/2)
    logw = logp - 0.5 * logdet - 0.5 * np.log(c) - 0.5 * (a - b * b / c)
    logw = logw + np.log(wx)[:, None] + np.log(wr)[None, :]
    w = np.exp(logw - logw.max())
    w = (w / w.sum()).ravel()
    m, s = (b / c).ravel(), (1 / np.sqrt(c)).ravel()
    cdf = lambda t: np.sum(w * special.ndtr((t - m) / s))  # noqa: E731
    lo, hi = m.min() - 50 * s.max(), m.max() + 50 * s.max()
    q = [optimize.brentq(lambda t: cdf(t) - p, lo, hi, xtol=1e-14) for p in ((1 - level) / 2, (1 + level) / 2)]
    mean = np.sum(w * m)
    return {"mean": mean, "sd": np.sqrt(np.sum(w * (s**2 + (m - mean) ** 2))), "interval": np.array(q),
            "prob_a_better": 1 - cdf(0.0), "prob_tie": cdf(rope) - cdf(-rope),
            "sigma_mean": np.sum(w * np.repeat(np.exp(x), rho.size)),
            "tau_mean": np.sum(w * np.outer(np.exp(x), rho).ravel())}


@pytest.mark.parametrize("seed, sizes", [(11, (8, 5, 4, 3)), (12, (6, 2)), (13, (9,)), (14, (3, 3, 1, 1, 2))])
def test_against_brute_force(seed, sizes):
    """P(A>B), P(tie) and the 95% interval agree with the independent
    brute-force computation to 1e-6 (absolute), the posterior means of Δ and σ
    to 1e-6 and the posterior sd of Δ and mean of τ to 1e-5 (relative)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    d = np.clip(rng.normal(rng.normal(0.1, 0.2, len(sizes))[codes], 0.4), -1, 1)
    ref = _brute_force(d, codes, 0.05)
    res = pc.from_arrays(d[None], codes, 0.05)
    for name in ("prob_a_better", "prob_tie"):
        assert abs(getattr(res, name)[0] - ref[name]) < 1e-6, name
    np.testing.assert_allclose(res.interval[0], ref["interval"], atol=1e-6)
    for name in ("mean", "sigma_mean"):
        np.testing.assert_allclose(getattr(res, name)[0], ref[name], rtol=1e-6, err_msg=name)
    # sd and E[τ] weigh the heavy prior tail of ρ (both grids truncate it) and E[τ]
    # has an O(h⁴) end correction: 1e-5
    for name in ("sd", "tau_mean"):
        np.testing.assert_allclose(getattr(res, name)[0], ref[name], rtol=1e-5, err_msg=name)


def test_quadrature_converged(monkeypatch):
    """The default grids against much finer ones on varied data (12 SWE-bench
    clusters with 0/1 and fractional scores, 500 clusters, one and two
    clusters): probabilities, interval ends and the mean to 1e-8 (absolute); the
    small tail P(B>A), the sd and the mean ICC to 1e-6 and the mean of τ to
    1e-5 (relative: these weigh the heavy prior tail of ρ, cut at RHO_RANGE)."""
    rng = np.random.default_rng(21)
    cases = [_binary_pairs(40, 1.0, rng), _binary_pairs(40, 0.0, rng),
             _binary_pairs(20, 1.0, rng, sizes=SWE[:1]), _binary_pairs(20, 2.0, rng, sizes=SWE[:2])]
    sizes = rng.integers(1, 20, 500)
    codes = np.repeat(np.arange(500), sizes)
    cases.append((np.clip(rng.normal(rng.normal(0, 0.05, (10, 500))[:, codes], 0.5), -1, 1), codes))
    d, codes = _binary_pairs(20, 1.0, rng)
    cases.append((np.clip(d * 0.7 + rng.normal(0, 0.1, d.shape), -1, 1), codes))
    default = [pc.from_arrays(d, c, 0.02) for d, c in cases]
    monkeypatch.setattr(pc, "COARSE", 400)
    monkeypatch.setattr(pc, "FINE", 1000)
    monkeypatch.setattr(pc, "LOG_MASS_RANGE", 60.0)
    fine = [pc.from_arrays(d, c, 0.02) for d, c in cases]
    for a, b in zip(default, fine):
        for name in ("prob_a_better", "prob_tie", "interval", "mean"):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=1e-8, err_msg=name)
        for name, rtol in (("prob_b_better", 1e-6), ("sd", 1e-6), ("icc_mean", 1e-6), ("tau_mean", 1e-5)):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=rtol, err_msg=name)


# --------------------------------------------------------------------------- #
# PyMC NUTS on the same model
# --------------------------------------------------------------------------- #
@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")
def test_agrees_with_nuts():
    """NUTS on the raw-data model (non-centred cluster effects) against the
    quadrature: posterior mean of Δ within 4 MC SEs (az.mcse); P(Δ > 0) and the
    2.5%/97.5% quantiles within 4 MC SEs."""
    pm = pytest.importorskip("pymc")
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(31)
    sizes = (12, 8, 6, 4, 3)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    d = np.clip(rng.normal(rng.normal(0.1, 0.15, len(sizes))[codes], 0.4), -1, 1)
    nu0, s0 = pc.SIGMA_PRIOR
    with pm.Model():
        rho = pm.HalfStudentT("rho", nu=pc.PRIOR_DF, sigma=pc.PRIOR_SCALE)
        sig2 = pm.InverseGamma("sig2", alpha=nu0 / 2, beta=nu0 * s0**2 / 2)
        sigma = pm.math.sqrt(sig2)
        delta = pm.Flat("delta")
        z = pm.Normal("z", 0.0, 1.0, shape=len(sizes))
        pm.Normal("d", mu=(delta + rho * sigma * z)[codes], sigma=sigma, observed=d)
        idata = pm.sample(draws=2000, tune=1500, chains=2, random_seed=5, progressbar=False,
                          target_accept=0.95, compute_convergence_checks=False)
    draws = idata.posterior["delta"].values.ravel()
    res = pc.from_arrays(d[None], codes, 0.05)
    mcse_mean = float(az.mcse(idata, var_names=["delta"])["delta"])
    assert abs(draws.mean() - res.mean[0]) < 4 * mcse_mean
    ess = float(az.ess(idata, var_names=["delta"])["delta"])
    p = res.prob_a_better[0]
    assert abs(np.mean(draws > 0) - p) < 4 * np.sqrt(p * (1 - p) / ess)
    for q, end in zip((0.025, 0.975), res.interval[0]):
        se = float(az.mcse(idata, var_names=["delta"], method="quantile", prob=q)["delta"])
        assert abs(np.quantile(draws, q) - end) < 4 * se, (q, end)
