"""The cross-fitted λ of PPI++ ((J2x), docs/methods.md §3.14.1): against a loop over
the leave-one-out folds written out from the formula, with explicit CR2 matrices
with clusters, its invariances and edge cases, and a seeded simulation of the
small-sample bias and coverage it fixes."""

import math

import numpy as np
import pytest
from scipy import stats

from bayeserr.base.errors import InputError
from bayeserr.stats.ppi import ppi_arrays, ppi_mean, ppi_paired

from ..stats.test_ppi_stats import _brute_force_cr2, cov, judged, mean, t_crit, var


def _crossfit_by_loop(human, judge, clip=True):
    """θ̂ = mean_i [Y_i + λ_{−i}(mean_U(f̃) − f_i)], λ_{−i} = Cov_{L∖i}(Y, f) /
    ((1 + n/N) Var_{L∪U}(f)), one labelled question left out at a time; the variance
    at the folds' λ: λ̄² s²_U/N + s²_L(ψ)/n over the terms ψ_i averaged in θ̂,
    Welch–Satterthwaite df."""
    idx = [i for i, h in enumerate(human) if not math.isnan(h)]
    Y = [human[i] for i in idx]
    F = [judge[i] for i in idx]
    Ft = [f for h, f in zip(human, judge) if math.isnan(h)]
    n, N = len(Y), len(Ft)
    pooled = var(list(judge))
    lams, raw = [], []
    for k in range(n):
        Yo = [y for j, y in enumerate(Y) if j != k]
        Fo = [f for j, f in enumerate(F) if j != k]
        lam = cov(Yo, Fo) / ((1 + n / N) * pooled) if len(Yo) >= 2 else 0.0
        raw.append(lam)
        lams.append(min(max(lam, 0.0), 1.0) if clip else lam)
    psi = [Y[k] + lams[k] * (mean(Ft) - F[k]) for k in range(n)]
    theta, lbar = mean(psi), mean(lams)
    v_u, v_l = lbar**2 * var(Ft) / N, var(psi) / n
    df = (v_u + v_l) ** 2 / (v_u**2 / (N - 1) + v_l**2 / (n - 1))
    return theta, math.sqrt(v_u + v_l), df, lbar, mean(raw), np.array(lams), idx


@pytest.mark.parametrize("seed, n, level", [(1, 60, 0.95), (2, 12, 0.9), (3, 200, 0.95)])
def test_crossfit_against_a_loop_over_the_folds(seed, n, level):
    human, judge, _, _ = judged(seed=seed, n=n)
    theta, se, df, lbar, raw, _, _ = _crossfit_by_loop(human, judge)
    r = ppi_mean(human, judge, level=level)
    assert r.lam_fit == "crossfit" and r.to_dict()["lam_fit"] == "crossfit"
    assert r.ppi.estimate == pytest.approx(theta, rel=1e-12)
    assert r.ppi.se == pytest.approx(se, rel=1e-12)
    assert r.ppi.df == pytest.approx(df, rel=1e-10)
    assert (r.lam, r.lam_raw) == pytest.approx((lbar, raw), rel=1e-12)
    half = t_crit(level, df) * se
    assert (r.ppi.lower, r.ppi.upper) == pytest.approx((theta - half, theta + half), rel=1e-10)
    z = ppi_mean(human, judge, level=level, reference="z")
    assert z.ppi.estimate == r.ppi.estimate and z.ppi.upper - z.ppi.estimate == pytest.approx(
        stats.norm.ppf(0.5 + level / 2) * se, rel=1e-10)


def test_crossfit_differs_from_the_plugin_by_its_bias_term():
    """Unclipped, the mean of the λ_{−i} is the plug-in λ̂ exactly, and the estimates
    differ by Σ e_i g_i² / ((n − 1)(n − 2)(1 + n/N) Var(f)) (docs §3.14.1)."""
    human, judge, _, _ = judged(seed=4, n=40)
    cf, pl = ppi_mean(human, judge, clip=False), ppi_mean(human, judge, clip=False, lam_fit="plugin")
    assert cf.lam == pytest.approx(pl.lam, rel=1e-12) and pl.lam_fit == "plugin"
    lab = ~np.isnan(human)
    e, g = human[lab] - human[lab].mean(), judge[lab] - judge[lab].mean()
    n, N = lab.sum(), (~lab).sum()
    shift = (e * g * g).sum() / ((n - 1) * (n - 2) * (1 + n / N) * judge.var(ddof=1))
    assert cf.ppi.estimate - pl.ppi.estimate == pytest.approx(shift, rel=1e-9)


@pytest.mark.parametrize("seed", [5, 6])
def test_clustered_crossfit_against_explicit_cr2_matrices(seed):
    human, judge, _, codes = judged(seed=seed, q=90, n=30, clusters=7)
    theta, _, _, lbar, _, lams, idx = _crossfit_by_loop(human, judge)
    each = np.zeros(len(human))
    each[idx] = lams
    r = ppi_mean(human, judge, codes)
    V, df, trace, s2u, s2l = _brute_force_cr2(human, judge, codes, lbar, each)
    assert r.ppi.estimate == pytest.approx(theta, rel=1e-12)
    assert r.ppi.se == pytest.approx(math.sqrt(V), rel=1e-10)
    assert r.ppi.df == pytest.approx(df, rel=1e-10)
    assert trace == pytest.approx(lbar**2 * s2u / r.n_unlabelled + s2l / r.n_labelled, rel=1e-10)


def test_singleton_clusters_reproduce_the_unclustered_crossfit():
    human, judge, _, _ = judged(seed=7, q=200, n=40)
    a, b = ppi_mean(human, judge), ppi_mean(human, judge, np.arange(200))
    for k in ("estimate", "se", "df"):
        assert getattr(b.ppi, k) == pytest.approx(getattr(a.ppi, k), rel=1e-9)


def test_crossfit_is_invariant_to_order_shift_and_scale():
    human, judge, _, codes = judged(seed=8, q=300, n=50, clusters=9)
    base = ppi_mean(human, judge, codes).to_dict()
    perm = np.random.default_rng(0).permutation(len(human))
    moved = ppi_mean(human[perm], judge[perm], codes[perm]).to_dict()
    shifted = ppi_mean(human, judge + 3.0, codes)                   # λ sees only deviations
    for k in ("estimate", "se", "df", "lower", "upper"):
        assert moved["ppi"][k] == pytest.approx(base["ppi"][k], rel=1e-12)
        assert getattr(shifted.ppi, k) == pytest.approx(base["ppi"][k], rel=1e-9)
    # a judge on another scale: λ scales inversely when not clipped, the estimate stays
    a, b = ppi_mean(human, judge, clip=False), ppi_mean(human, 10 * judge, clip=False)
    assert b.ppi.estimate == pytest.approx(a.ppi.estimate, rel=1e-12)
    assert b.lam == pytest.approx(a.lam / 10, rel=1e-12) and b.ppi.se == pytest.approx(a.ppi.se, rel=1e-12)
    c = ppi_mean(human + 1.0, judge)                                # the human scale moves the estimate
    assert c.ppi.estimate == pytest.approx(ppi_mean(human, judge).ppi.estimate + 1.0, rel=1e-12)


def test_crossfit_edge_cases():
    human, judge, y, _ = judged(seed=9, q=100, n=2)
    two = ppi_mean(human, judge)                 # two labels: no covariance without one of them, λ_{−i} = 0
    assert two.lam == 0.0 and two.ppi.estimate == pytest.approx(two.classical.estimate, rel=1e-12)
    human3, judge3, _, _ = judged(seed=9, q=100, n=3)
    three = ppi_mean(human3, judge3)
    assert three.ppi.estimate == pytest.approx(_crossfit_by_loop(human3, judge3)[0], rel=1e-12)
    # every λ_{−i} clipped at 1: the PPI estimator (λ = 1) exactly
    rng = np.random.default_rng(10)
    yy = rng.beta(2, 2, 600)
    ff = 0.5 + 0.3 * (yy - 0.5) + rng.normal(0, 0.03, 600)    # a compressed judge: λ* ≈ 3
    hh = np.where(np.arange(600) < 150, yy, np.nan)
    clipped, one = ppi_mean(hh, ff), ppi_mean(hh, ff, lam=1.0)
    assert clipped.lam == 1.0 and clipped.lam_raw > 1.5 and one.lam_fit == "fixed"
    assert (clipped.ppi.estimate, clipped.ppi.se) == pytest.approx((one.ppi.estimate, one.ppi.se), rel=1e-12)
    free = ppi_mean(hh, ff, clip=False)
    assert free.lam == pytest.approx(free.lam_raw, rel=1e-12) and free.ppi.se < clipped.ppi.se
    # a fold whose complement has a constant judge: that λ_{−i} is 0, the others are fitted
    h = np.full(40, np.nan)
    h[:4] = [0.2, 0.9, 0.4, 0.7]
    f = np.r_[0.5, 0.5, 0.5, 0.8, np.linspace(0, 1, 36)]
    theta, se, _, lbar, _, lams, _ = _crossfit_by_loop(h, f)
    assert lams[3] == 0.0 and (lams[:3] > 0).all()
    r = ppi_mean(h, f)
    assert (r.ppi.estimate, r.ppi.se, r.lam) == pytest.approx((theta, se, lbar), rel=1e-12)
    # a constant judge: λ = 0, the labelled mean
    flat = ppi_mean(human3, np.full(100, 0.5))
    assert flat.lam == 0.0 and flat.ppi.estimate == pytest.approx(flat.classical.estimate, rel=1e-12)
    # the unlabelled set too small to use: λ = 0 as with the plug-in
    h50, f50, y50, _ = judged(seed=13, q=50, n=49)
    assert ppi_mean(h50, f50).lam == 0.0
    # vectorized rows agree with one-at-a-time calls
    rows = np.stack([human3, human]), np.stack([judge3, judge])
    a = ppi_arrays(*rows)
    assert a.estimate[0] == pytest.approx(three.ppi.estimate, rel=1e-12)
    assert a.estimate[1] == pytest.approx(two.ppi.estimate, rel=1e-12)


def test_paired_crossfit_is_crossfit_on_the_differences():
    rng = np.random.default_rng(11)
    q = 300
    ya, yb = rng.normal(0.6, 0.2, q), rng.normal(0.5, 0.2, q)
    fa, fb = ya + 0.1 + rng.normal(0, 0.1, q), yb + rng.normal(0, 0.1, q)
    lab = rng.random(q) < 0.2
    r = ppi_paired(np.where(lab, ya, np.nan), fa, np.where(lab, yb, np.nan), fb)
    assert r.ppi.estimate == pytest.approx(_crossfit_by_loop(np.where(lab, ya - yb, np.nan), fa - fb)[0], rel=1e-12)


def test_bad_lam_fit():
    human, judge, _, _ = judged(seed=12, q=100, n=20)
    with pytest.raises(InputError, match="lam_fit must be"):
        ppi_mean(human, judge, lam_fit="jackknife")


def test_crossfit_removes_the_small_sample_bias_and_covers():
    """The lab's worst cell written out (docs/calibration.md, judge lab): 0/1 human scores
    with mean 0.6; a 0/1 judge that misses a human 1 with probability 0.1 and passes a
    human 0 with probability 0.4 (10 points too generous); 50 labels of 1,000.  The
    plug-in λ̂ moves the estimate up by about 0.4 points (λ̂ is fitted on the labels it
    corrects); the cross-fitted λ does not, and its interval holds the level (within
    3 Monte Carlo SEs); its width costs at most 4%."""
    reps, q, n, mu = 3000, 1000, 50, 0.6
    rng = np.random.default_rng(2028)
    y = (rng.random((reps, q)) < mu).astype(float)
    g = rng.random((reps, q))
    f = np.where(y == 1, g >= 0.1, g < 0.4).astype(float)
    order = np.argsort(rng.random((reps, q)), axis=1)[:, :n]
    mask = np.zeros((reps, q), bool)
    np.put_along_axis(mask, order, True, axis=1)
    human = np.where(mask, y, np.nan)
    cf, pl = ppi_arrays(human, f), ppi_arrays(human, f, lam_fit="plugin")
    mcse = cf.estimate.std() / math.sqrt(reps)
    assert abs(cf.estimate.mean() - mu) < 3 * mcse                 # unbiased
    assert pl.estimate.mean() - mu > 2 * mcse                       # the plug-in's O(1/n) bias
    covers = np.abs(cf.estimate - mu) <= stats.t.ppf(0.975, cf.df) * cf.se
    assert covers.mean() >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert np.mean(cf.se) / np.mean(pl.se) < 1.04
