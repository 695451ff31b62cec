"""Anytime-valid confidence sequences (bayeserr.stats.sequential; issue 27, the
statistical core): each sequence against a loop written straight from the
papers' formulas, time-uniform coverage by seeded simulation (with and without
clusters) next to naive peeking at a fixed-n interval, the stopping rules on
hand-made sequences, and bad input."""

import math
import time

import numpy as np
import pytest
from scipy.special import expit

from bayeserr.base.errors import InputError
from bayeserr.stats import sequential as sq

ALPHA = 0.05
SWE_SIZES = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1])


# ------------------------------------------------------------------ independent loops
def loop_log_capital(x, m, alpha=ALPHA, c=0.5, w=None):
    """Hedged capital of Waudby-Smith & Ramdas (2024) at one m, one answer at a time:
    λ_t = sqrt(2 log(2/α) / (σ̂²_{t−1} t log(1+t))), μ̂_t = (1/2 + Σx)/(t+1),
    σ̂²_t = (1/4 + Σ (x_i − μ̂_i)²)/(t+1); K± products; K = (K⁺ + K⁻)/2.
    ``w`` (cluster weights) multiplies each increment and each deviation."""
    w = [1.0] * len(x) if w is None else list(w)
    sig2_prev, sum_wx, sum_w, sum_dev = 0.25, 0.0, 0.0, 0.0
    k_plus = k_minus = 1.0
    out = []
    for t, (xi, wi) in enumerate(zip(x, w), start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (sig2_prev * t * math.log(1 + t)))
        lam_p = min(lam, c / m) if m > 0 else lam
        lam_m = min(lam, c / (1 - m)) if m < 1 else lam
        k_plus *= 1 + lam_p * wi * (xi - m)
        k_minus *= 1 - lam_m * wi * (xi - m)
        out.append(math.log(0.5 * k_plus + 0.5 * k_minus))
        sum_wx += wi * xi
        sum_w += wi
        mu = (0.5 + sum_wx) / (1 + sum_w)
        sum_dev += (wi * (xi - mu)) ** 2
        sig2_prev = (0.25 + sum_dev) / (t + 1)
    return np.array(out)


def loop_betting_bounds(x, grid, alpha=ALPHA, w=None):
    """The CS of the paper on a grid j/(G−1): at each t the included grid points,
    their hull widened by one grid step, then the running max / min."""
    ms = [j / (grid - 1) for j in range(grid)]
    logk = np.array([loop_log_capital(x, m, alpha, w=w) for m in ms])   # (G, n)
    lower, upper = [], []
    lo_run, hi_run = 0.0, 1.0
    for t in range(len(x)):
        inside = [j for j in range(grid) if logk[j, t] < math.log(1 / alpha)]
        if inside:
            lo, hi = ms[max(inside[0] - 1, 0)], ms[min(inside[-1] + 1, grid - 1)]
        else:
            lo, hi = 0.0, 1.0
        lo_run, hi_run = max(lo_run, lo), min(hi_run, hi)
        lower.append(lo_run)
        upper.append(hi_run)
    return np.array(lower), np.array(upper)


def loop_gm_half_width(t, var, rho, alpha=ALPHA):
    """Waudby-Smith et al. (2024) Gaussian mixture boundary, scalar math."""
    return math.sqrt(2 * (t * rho**2 * var + 1) / (t**2 * rho**2)
                     * math.log(math.sqrt(t * rho**2 * var + 1) / alpha))


def loop_rho(t_opt, alpha, variance):
    return math.sqrt((-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / (t_opt * variance))


def loop_asymptotic(x, alpha=ALPHA, t_opt=500, variance=0.25, lo_b=0.0, hi_b=1.0):
    rho = loop_rho(t_opt, alpha, variance)
    lower, upper, est = [], [], []
    lo_run, hi_run = -math.inf, math.inf
    for t in range(1, len(x) + 1):
        xs = x[:t]
        mean = sum(xs) / t
        ss = sum((v - mean) ** 2 for v in xs)
        half = loop_gm_half_width(t, (variance + ss) / (t + 1), rho, alpha)
        lo_run = max(lo_run, min(max(mean - half, lo_b), hi_b))
        hi_run = min(hi_run, max(min(mean + half, hi_b), lo_b))
        est.append(mean)
        lower.append(lo_run)
        upper.append(hi_run)
    return np.array(est), np.array(lower), np.array(upper)


def loop_cluster_asymptotic(S, n, alpha=ALPHA, t_opt=50, variance=0.25):
    rho = loop_rho(t_opt, alpha, variance)
    lower, upper = [], []
    lo_run, hi_run = 0.0, 1.0
    for k in range(1, len(S) + 1):
        theta = sum(S[:k]) / sum(n[:k])
        nbar = sum(n[:k]) / k
        z = [(s - theta * m) / nbar for s, m in zip(S[:k], n[:k])]
        var = (variance + sum(v * v for v in z)) / (k + 1)
        half = loop_gm_half_width(k, var, rho, alpha)
        lo_run, hi_run = max(lo_run, max(theta - half, 0.0)), min(hi_run, min(theta + half, 1.0))
        lower.append(lo_run)
        upper.append(hi_run)
    return np.array(lower), np.array(upper)


# ------------------------------------------------------------------ against the loops
@pytest.mark.parametrize("p", [0.5, 0.85])
def test_log_capital_matches_the_paper_loop(p):
    rng = np.random.default_rng(11)
    x = rng.binomial(1, p, 400).astype(float)
    ms = np.array([0.0, 0.1, 0.5, p, 0.93, 1.0])
    got = sq.log_capital(x, ms)
    for j, m in enumerate(ms):
        np.testing.assert_allclose(got[:, j], loop_log_capital(x, m), rtol=0, atol=1e-10)
    # fractional scores and c = 3/4
    f = rng.beta(2, 3, 300)
    for m in (0.2, 0.4, 0.7):
        np.testing.assert_allclose(sq.log_capital(f, m, c=0.75), loop_log_capital(f, m, c=0.75), atol=1e-10)


def test_weighted_log_capital_matches_the_loop():
    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 30, 60).astype(float)
    S = rng.binomial(sizes.astype(int), 0.6).astype(float)
    w = sizes / sizes.max()
    for m in (0.3, 0.6, 0.8):
        np.testing.assert_allclose(sq.log_capital(S / sizes, m, weights=w),
                                   loop_log_capital(S / sizes, m, w=w), atol=1e-10)


@pytest.mark.parametrize("p", [0.5, 0.9])
def test_betting_bounds_match_the_paper_loop(p):
    x = np.random.default_rng(13).binomial(1, p, 250).astype(float)
    est, lo, hi = sq.betting_bounds(x, grid=101)
    ref_lo, ref_hi = loop_betting_bounds(x, 101)
    np.testing.assert_allclose(lo, ref_lo, atol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, atol=1e-12)
    np.testing.assert_allclose(est, np.cumsum(x) / np.arange(1, 251), atol=1e-12)
    assert (lo <= est + 1e-12).all() and (est <= hi + 1e-12).all()


def test_cluster_betting_bounds_match_the_loop():
    rng = np.random.default_rng(14)
    sizes = rng.integers(1, 25, 80).astype(float)
    S = rng.binomial(sizes.astype(int), expit(0.5 + 0.7 * rng.normal(size=80))).astype(float)
    est, lo, hi = sq.cluster_betting_bounds(S, sizes, grid=81)
    ref_lo, ref_hi = loop_betting_bounds(S / sizes, 81, w=sizes / sizes.max())
    np.testing.assert_allclose(lo, ref_lo, atol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, atol=1e-12)
    np.testing.assert_allclose(est, np.cumsum(S) / np.cumsum(sizes), atol=1e-12)


@pytest.mark.parametrize("p", [0.5, 0.95])
def test_asymptotic_matches_scalar_math(p):
    x = np.random.default_rng(15).binomial(1, p, 300).astype(float)
    est, lo, hi = sq.asymptotic_bounds(x, t_opt=200, variance=0.2)
    r_est, r_lo, r_hi = loop_asymptotic(list(x), t_opt=200, variance=0.2)
    np.testing.assert_allclose(est, r_est, atol=1e-10)
    np.testing.assert_allclose(lo, r_lo, atol=1e-10)
    np.testing.assert_allclose(hi, r_hi, atol=1e-10)
    assert sq.rho_for(200, ALPHA, 0.2) == pytest.approx(loop_rho(200, ALPHA, 0.2), abs=1e-14)


def test_rho_is_tightest_at_t_opt():
    """The width at t_opt (σ̂² = variance) is minimal over ρ up to the paper's one-step
    approximation of the root of x = −2 log α + log(1 + x)."""
    t_opt, var = 800, 0.21
    widths = {r: loop_gm_half_width(t_opt, var, r) for r in np.linspace(0.01, 1, 2000)}
    best = min(widths, key=widths.get)
    rho = sq.rho_for(t_opt, ALPHA, var)
    assert loop_gm_half_width(t_opt, var, rho) <= widths[best] * 1.001
    assert rho == pytest.approx(best, rel=0.05)


def test_cluster_asymptotic_matches_scalar_math():
    rng = np.random.default_rng(16)
    sizes = rng.integers(1, 40, 70).astype(float)
    S = rng.binomial(sizes.astype(int), 0.7).astype(float)
    _, lo, hi = sq.cluster_asymptotic_bounds(S, sizes)
    r_lo, r_hi = loop_cluster_asymptotic(list(S), list(sizes))
    np.testing.assert_allclose(lo, r_lo, atol=1e-10)
    np.testing.assert_allclose(hi, r_hi, atol=1e-10)


def test_paired_maps_the_difference():
    rng = np.random.default_rng(17)
    a = rng.binomial(1, 0.7, 300).astype(float)
    b = rng.binomial(1, 0.6, 300).astype(float)
    cs = sq.paired_cs(a, b, grid=201)
    ref_lo, ref_hi = loop_betting_bounds((a - b + 1) / 2, 201)
    np.testing.assert_allclose(cs.lower, 2 * ref_lo - 1, atol=1e-12)
    np.testing.assert_allclose(cs.upper, 2 * ref_hi - 1, atol=1e-12)
    np.testing.assert_allclose(cs.estimate, np.cumsum(a - b) / np.arange(1, 301), atol=1e-12)
    assert cs.estimand == "difference" and cs.method == "betting"
    asy = sq.paired_cs(a, b, method="asymptotic")
    r_est, r_lo, r_hi = loop_asymptotic(list(a - b), lo_b=-1.0, hi_b=1.0)
    np.testing.assert_allclose(asy.estimate, r_est, atol=1e-10)
    np.testing.assert_allclose(asy.lower, r_lo, atol=1e-10)
    np.testing.assert_allclose(asy.upper, r_hi, atol=1e-10)
    assert (asy.lower >= -1).all() and (asy.upper <= 1).all()


def test_paired_clusters_use_cluster_totals():
    rng = np.random.default_rng(18)
    clusters = np.repeat(np.arange(40), 10)
    a = rng.binomial(1, 0.7, 400).astype(float)
    b = rng.binomial(1, 0.5, 400).astype(float)
    cs = sq.paired_cs(a, b, clusters=clusters, grid=201)
    d = (a - b).reshape(40, 10).sum(axis=1)
    _, lo, hi = sq.cluster_betting_bounds((d + 10) / 2, np.full(40, 10.0), grid=201)
    np.testing.assert_allclose(cs.lower, 2 * lo - 1, atol=1e-12)
    np.testing.assert_allclose(cs.upper, 2 * hi - 1, atol=1e-12)
    assert cs.unit == "cluster" and list(cs.t[:3]) == [10, 20, 30] and list(cs.units[:3]) == [1, 2, 3]
    asy = sq.paired_cs(a, b, method="asymptotic", clusters=clusters)
    assert asy.estimate[-1] == pytest.approx((a - b).mean())
    assert (asy.lower <= asy.estimate).all() and (asy.estimate <= asy.upper).all()


def test_cluster_totals_order_and_open_clusters():
    scores = np.array([1, 0, 1, 1, 0, 1, 1], dtype=float)
    labels = np.array(["a", "b", "a", "c", "b", "c", "c"])
    sums, sizes, t = sq.cluster_totals(scores, labels)
    assert list(sums) == [2, 0, 3] and list(sizes) == [2, 2, 3] and list(t) == [3, 5, 7]
    sums, sizes, t = sq.cluster_totals(scores, labels, expected_sizes={"a": 2, "b": 3, "c": 3})
    assert list(sums) == [2, 3] and list(t) == [3, 7]  # b is still open
    cs = sq.cluster_cs(scores, labels, expected_sizes={"a": 2, "b": 3, "c": 3}, grid=101)
    assert len(cs) == 2 and cs.unit == "cluster"


def test_result_to_dict_and_frame():
    x = np.random.default_rng(19).binomial(1, 0.6, 50).astype(float)
    cs = sq.mean_cs(x, grid=201)
    d = cs.to_dict()
    assert d["method"] == "betting" and d["level"] == pytest.approx(0.95) and len(d["lower"]) == 50
    frame = cs.to_frame()
    assert list(frame.columns) == ["t", "units", "estimate", "lower", "upper"]
    assert frame.attrs["method"] == "betting" and frame["t"].iloc[-1] == 50
    asy = sq.mean_cs(x, method="asymptotic")
    assert asy.method == "asymptotic" and (np.diff(asy.lower) >= 0).all() and (np.diff(asy.upper) <= 0).all()


def test_speed_at_5000():
    rng = np.random.default_rng(20)
    x = rng.binomial(1, 0.7, 5000).astype(float)
    a, b = x, rng.binomial(1, 0.6, 5000).astype(float)
    sq.betting_cs(x[:100])
    timings = {}
    for name, fn in (("betting", lambda: sq.betting_cs(x)), ("asymptotic", lambda: sq.asymptotic_cs(x)),
                     ("paired betting", lambda: sq.paired_cs(a, b))):
        start = time.perf_counter()
        cs = fn()
        timings[name] = time.perf_counter() - start
        assert len(cs) == 5000
    print("seconds at n = 5,000:", {k: round(v, 4) for k, v in timings.items()})
    assert max(timings.values()) < 1.0


# ------------------------------------------------------------------ coverage
def _peek_rate(x, p, every=10):
    """Fixed-n 95% Wald interval checked after every ``every`` questions: ever excludes p?"""
    t = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(x, axis=-1) / t
    se = np.sqrt(mean * (1 - mean) / t)
    looks = np.arange(every - 1, x.shape[-1], every)
    return (np.abs(mean - p) > 1.959964 * se)[..., looks].any(axis=-1).mean()


def _mc_bound(reps):
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


@pytest.mark.parametrize("p", [0.5, 0.9])
def test_time_uniform_coverage_questions(p):
    """P(the sequence ever excludes p over t = 10..2,000) ≤ 5% + 3 MC SE; peeking at the
    fixed-n interval every 10 questions excludes it far more often."""
    reps, n = 2000, 2000
    x = np.random.default_rng(21 + int(10 * p)).binomial(1, p, (reps, n)).astype(float)
    # the exact set excludes p at t iff K_t(p) ≥ 1/α; the running intersection carries it on
    betting = (sq.log_capital(x, p).max(axis=-1) >= math.log(1 / ALPHA)).mean()
    _, lo, hi = sq.asymptotic_bounds(x)
    asymptotic = ((lo[:, 9:] > p) | (hi[:, 9:] < p)).any(axis=-1).mean()
    peek = _peek_rate(x, p)
    print(f"\nBernoulli({p}), {reps} runs of {n}: ever excludes the truth — betting {betting:.4f}, "
          f"asymptotic {asymptotic:.4f}, peeking at the Wald interval every 10 questions {peek:.4f}")
    assert betting <= _mc_bound(reps) and asymptotic <= _mc_bound(reps)
    assert peek > 0.15


def test_grid_bounds_exclude_only_what_the_capital_excludes():
    """The grid's rounded-out hull never excludes the truth where K_t(p) < 1/α."""
    p, reps, n = 0.5, 60, 2000
    x = np.random.default_rng(22).binomial(1, p, (reps, n)).astype(float)
    _, lo, hi = sq.betting_bounds(x)
    by_bounds = (lo > p) | (hi < p)
    by_capital = np.maximum.accumulate(sq.log_capital(x, p), axis=-1) >= math.log(1 / ALPHA)
    assert not (by_bounds & ~by_capital).any()


def _cluster_runs(sizes, a0, tau, reps, rng):
    """Clusters in random order, whole clusters one after another, a cluster random
    effect on the logit scale: the cluster totals and the question stream of each run."""
    C, n = len(sizes), int(sizes.sum())
    S, N = np.empty((reps, C)), np.empty((reps, C))
    streams = np.empty((reps, n))
    for r in range(reps):
        order = sizes[rng.permutation(C)]
        p = np.repeat(expit(a0 + tau * rng.normal(size=C)), order)
        streams[r] = rng.random(n) < p
        S[r] = np.add.reduceat(streams[r], np.r_[0, np.cumsum(order)[:-1]])
        N[r] = order
    return S, N, streams


@pytest.mark.parametrize("design", ["swebench x4", "100 clusters"])
@pytest.mark.parametrize("a0", [0.0, 2.2])
def test_time_uniform_coverage_clusters(design, a0):
    """Clusters as the sampling units (12 SWE-bench sizes ×4 = 2,000 questions, or 100
    clusters of 1–39): the cluster sequences hold 5% over all looks; the question-level
    sequence that ignores the clusters, and peeking, do not."""
    reps, tau = 2000, 0.8
    rng = np.random.default_rng(23 + int(a0))
    sizes = SWE_SIZES * 4 if design == "swebench x4" else np.random.default_rng(1).integers(1, 40, 100)
    theta = expit(a0 + tau * np.random.default_rng(3).normal(size=400_000)).mean()  # E[S]/E[n]
    S, N, streams = _cluster_runs(sizes, a0, tau, reps, rng)
    betting = (sq.log_capital(S / N, theta, weights=N / sizes.max()).max(axis=-1)
               >= math.log(1 / ALPHA)).mean()
    _, lo, hi = sq.cluster_asymptotic_bounds(S, N, t_opt=len(sizes))
    asymptotic = ((lo > theta) | (hi < theta)).any(axis=-1).mean()
    ignoring = (sq.log_capital(streams, theta).max(axis=-1) >= math.log(1 / ALPHA)).mean()
    peek = _peek_rate(streams, theta)
    print(f"\n{design}, θ = {theta:.3f}, {reps} runs: ever excludes θ — cluster betting {betting:.4f}, "
          f"cluster asymptotic {asymptotic:.4f}; question-level betting ignoring clusters {ignoring:.4f}, "
          f"peeking every 10 questions {peek:.4f}")
    assert betting <= _mc_bound(reps) and asymptotic <= _mc_bound(reps)
    assert ignoring > 0.15 and peek > 0.15


# ------------------------------------------------------------------ stopping rules
def test_stopping_rules_on_hand_made_sequences():
    lower = np.array([-0.5, -0.2, -0.05, 0.0, 0.01, 0.02])
    upper = np.array([0.5, 0.3, 0.20, 0.1, 0.06, 0.05])
    assert sq.first_exclusion(lower, upper, 0.0) == 5            # 0.0 at look 4 still includes 0
    assert sq.first_exclusion(lower, upper, 0.25) == 3           # upper 0.20 < 0.25
    assert sq.first_exclusion(lower, upper, 0.0, t=[10, 20, 30, 40, 50, 60]) == 50
    assert sq.first_exclusion(lower, upper, 0.03) is None
    assert sq.first_width(lower, upper, 0.05) == 4               # 0.1 − 0.0 = 2 × 0.05
    assert sq.first_width(lower, upper, 0.02) == 6               # 0.05 − 0.02 = 0.03 ≤ 0.04
    assert sq.first_width(lower, upper, 0.01) is None
    tie_lo = np.array([-0.3, -0.05, -0.02])
    tie_hi = np.array([0.3, 0.04, 0.02])
    assert sq.first_tie(tie_lo, tie_hi, 0.05) == 2
    assert sq.first_tie(tie_lo, tie_hi, 0.01) is None
    assert sq.first_inside(lower, upper, 0.0, 0.1) == 4
    assert sq.first_budget([10, 20, 30], 20) == 20
    assert sq.first_budget([10, 20, 30], 25) == 30
    assert sq.first_budget([10, 20, 30], 31) is None

    stop = sq.first_stop(lower, upper, t=[10, 20, 30, 40, 50, 60], exclude=0.0, width=0.05, budget=1000)
    assert (stop.rule, stop.index, stop.t) == ("width", 3, 40)
    assert stop.to_dict() == {"index": 3, "t": 40, "rule": "width", "lower": 0.0, "upper": 0.1}
    stop = sq.first_stop(lower, upper, exclude=0.0, budget=5)
    assert (stop.rule, stop.t) == ("exclude", 5)                 # same look: exclusion is named
    assert sq.first_stop(lower, upper, budget=3).rule == "budget"
    assert sq.first_stop(lower, upper, exclude=0.03) is None
    assert sq.first_stop(tie_lo, tie_hi, tie=0.05, exclude=0.0).rule == "tie"


def test_a_real_difference_is_found_and_a_tie_is_settled():
    rng = np.random.default_rng(24)
    a = rng.binomial(1, 0.75, 5000).astype(float)
    b = rng.binomial(1, 0.55, 5000).astype(float)
    cs = sq.paired_cs(a, b)
    t = sq.first_exclusion(cs.lower, cs.upper, 0.0)
    assert t is not None and t < 1000 and cs.lower[t - 1] > 0
    base = rng.binomial(1, 0.6, 5000).astype(float)
    u = rng.random(5000)                      # 5% (1, 0), 5% (0, 1): a true tie
    tie_a = np.where(u < 0.05, 1.0, np.where(u < 0.1, 0.0, base))
    tie_b = np.where(u < 0.05, 0.0, np.where(u < 0.1, 1.0, base))
    tie = sq.paired_cs(tie_a, tie_b)
    assert sq.first_exclusion(tie.lower, tie.upper, 0.0) is None
    assert sq.first_tie(tie.lower, tie.upper, 0.03) is not None


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("scores, match", [
    ([0.2, 1.3, 0.5], r"\[0, 1\].*1\.3 at position 1"),
    ([0.2, np.nan, 0.5], "NaN or infinity at position"),
    ([0.2, -0.1], r"-0\.1"),
    ([], "at least one value"),
    (["a", "b"], "must be numbers"),
])
def test_bad_scores_raise(scores, match):
    for fn in (sq.betting_cs, sq.asymptotic_cs, sq.mean_cs):
        with pytest.raises(InputError, match=match):
            fn(scores)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), "0.05", None, True])
def test_bad_alpha_raises(alpha):
    with pytest.raises(InputError, match="alpha"):
        sq.betting_cs([0.5, 1.0], alpha=alpha)
    with pytest.raises(InputError, match="alpha"):
        sq.asymptotic_cs([0.5, 1.0], alpha=alpha)
    with pytest.raises(InputError, match="alpha"):
        sq.paired_cs([1, 0], [0, 0], alpha=alpha)


def test_other_bad_inputs_raise():
    with pytest.raises(InputError, match="same questions"):
        sq.paired_cs([1, 0, 1], [0, 1])
    with pytest.raises(InputError, match="truncation c"):
        sq.betting_cs([0.5, 1.0], c=1.0)
    with pytest.raises(InputError, match="grid"):
        sq.betting_cs([0.5, 1.0], grid=2)
    with pytest.raises(InputError, match="method"):
        sq.mean_cs([0.5, 1.0], method="bayes")
    with pytest.raises(InputError, match="t_opt"):
        sq.asymptotic_cs([0.5, 1.0], t_opt=0)
    with pytest.raises(InputError, match="cluster sizes"):
        sq.cluster_betting_bounds([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(InputError, match="total score"):
        sq.cluster_betting_bounds([3.0, 2.0], [2.0, 2.0])
    with pytest.raises(InputError, match="max_size"):
        sq.cluster_betting_bounds([1.0, 2.0], [2.0, 5.0], max_size=3)
    with pytest.raises(InputError, match="no cluster is complete"):
        sq.cluster_cs([1.0, 0.0], ["a", "a"], expected_sizes={"a": 3})
    with pytest.raises(InputError, match="lower and upper"):
        sq.first_exclusion([0.1, np.nan], [0.2, 0.3])
    with pytest.raises(InputError, match="width"):
        sq.first_width([0.1], [0.2], 0)
    with pytest.raises(InputError, match="margin"):
        sq.first_tie([0.1], [0.2], -0.01)
    with pytest.raises(InputError, match="one entry per look"):
        sq.first_stop([0.1, 0.2], [0.3, 0.3], t=[1], budget=1)
