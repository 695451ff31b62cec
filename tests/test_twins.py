"""Twin implementations checked against each other and against references.

* Hierarchical Beta–Binomial (docs/methods.md §5.2): the exact posterior of
  one data set (``fit_exact``) and the batched one (``batch_intervals``) run
  the same grid code; both are checked for grid convergence, against an
  independent quadrature, against each other, and the posterior of the
  answer-weighted mean W against brute-force Monte Carlo.
* Bayesian bootstrap (docs/methods.md §5.4): the plain path
  (``weighted_means``/``bootstrap_means``) and the grouped path
  (``grouped_draws``/``grouped_intervals``) draw their Dirichlet weights with
  one helper; same seed gives the same draws, and the order of the units
  does not matter.

Random data sets are seeded; Monte Carlo tolerances use Monte Carlo errors
computed in the tests.
"""

import numpy as np
import pytest
from bayeserr.models import bayesian_bootstrap as bb
from bayeserr.models import hierarchical
from scipy import integrate, interpolate, optimize, special, stats

PRIOR = hierarchical.HierarchicalPrior()


def _random_groups(seed: int, count: int, max_size: int = 80):
    """``count`` data sets (k, n): 2–200 groups, 1–max_size answers per group,
    rates from near 0 to near 1 with varied overdispersion, every tenth
    data set all wrong and every tenth all right."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        groups = int(rng.choice([2, 3, 5, 8, 12, 20, 50, 100, 200]))
        n = rng.integers(1, int(rng.choice([3, 10, 40, max_size])) + 1, groups)
        mu = rng.choice([0.01, 0.05, 0.3, 0.5, 0.8, 0.97, 0.995, rng.uniform()])
        kappa = np.exp(rng.uniform(-1, 7))
        k = rng.binomial(n, rng.beta(max(mu * kappa, 1e-3), max((1 - mu) * kappa, 1e-3), groups))
        if i % 10 == 3:
            k[:] = 0
        if i % 10 == 7:
            k = n.copy()
        out.append((k, n))
    return out


def _summary(post):
    return np.r_[post.interval(0.95), post.interval(0.9), post.mean]


# ------------------------------------------------------------------ §5.2 exact grid
def test_exact_grid_converged_against_16_times_the_nodes():
    """§5.2: p(μ, κ | k) ∝ Beta(μ | 1, 1) N(log κ | 2.5, 1.5) Π_c BB(k_c | N_c, μκ, (1 − μ)κ),
    integrated on the (logit μ, log κ) grid.  The mean of μ and its 95% and
    90% equal-tailed endpoints agree to 1e-4 with the same posterior on a
    grid 4× finer per axis (16× the nodes), on 30 random data sets with
    2–200 groups, 1–40 answers per group and rates near 0 and 1 (the old
    fixed 120 × 48 grid missed by up to 3.5e-3 on such data)."""
    worst = 0.0
    for k, n in _random_groups(11, 30, max_size=40):
        fine = hierarchical.fit_exact(k, n, fine=(4 * hierarchical.FINE[0], 4 * hierarchical.FINE[1]))
        worst = max(worst, np.abs(_summary(hierarchical.fit_exact(k, n)) - _summary(fine)).max())
    assert worst < 1e-4


@pytest.mark.slow
def test_exact_grid_converged_against_16_times_finer_per_axis():
    """§5.2, same posterior as above: against a grid 16× finer on *each* axis
    (256× the nodes), mean and endpoints agree to 1e-4 (6 data sets, small
    groups to keep the reference affordable)."""
    for k, n in _random_groups(12, 6, max_size=10):
        fine = hierarchical.fit_exact(k, n, fine=(16 * hierarchical.FINE[0], 16 * hierarchical.FINE[1]))
        assert np.abs(_summary(hierarchical.fit_exact(k, n)) - _summary(fine)).max() < 1e-4


def _independent_quadrature(k, n, x_box):
    """Reference sharing no code with the module: likelihood from
    ``betaln``, Simpson's rule over log κ on the whole prior range, cumulative
    Simpson over logit μ on ``x_box`` and a cubic spline of the CDF inverted
    with ``brentq``."""
    lm = np.linspace(*x_box, 801)
    lk = np.linspace(PRIOR.log_kappa_mean - 6 * PRIOR.log_kappa_sd,
                     PRIOR.log_kappa_mean + 6 * PRIOR.log_kappa_sd, 401)
    mu, kappa = special.expit(lm)[:, None], np.exp(lk)[None, :]
    a, b = mu * kappa, (1 - mu) * kappa
    pairs, mult = np.unique(np.c_[k, n], axis=0, return_counts=True)
    logp = sum(m * (special.betaln(kc + a, nc - kc + b) - special.betaln(a, b))
               for (kc, nc), m in zip(pairs, mult))
    logp = logp + np.log(mu * (1 - mu)) + stats.norm.logpdf(lk, PRIOR.log_kappa_mean, PRIOR.log_kappa_sd)
    f = integrate.simpson(np.exp(logp - logp.max()), x=lk, axis=1)
    cdf = integrate.cumulative_simpson(f, x=lm, initial=0)
    cdf /= cdf[-1]
    spline = interpolate.CubicSpline(lm, cdf)
    ends = [optimize.brentq(lambda x: spline(x) - q, lm[0], lm[-1], xtol=1e-12) for q in (0.025, 0.975)]
    mean = integrate.simpson(f * special.expit(lm), x=lm) / integrate.simpson(f, x=lm)
    return np.r_[special.expit(ends), mean]


def test_exact_grid_against_independent_quadrature():
    """§5.2, same posterior: 95% endpoints and mean of μ against a separate
    implementation (Beta–Binomial likelihood by ``betaln``, Simpson's rule
    on an 801 × 401 grid over a box 1.5× wider than the fit's in logit μ and
    the whole prior range in log κ), within 1e-4, on 8 small data sets."""
    for k, n in _random_groups(13, 8, max_size=10):
        if len(k) > 12:
            continue
        post = hierarchical.fit_exact(k, n)
        lo, hi = post.logit_mu[0], post.logit_mu[-1]
        box = np.clip([lo - (hi - lo) / 4, hi + (hi - lo) / 4], -12, 12)
        got = np.r_[post.interval(0.95), post.mean]
        np.testing.assert_allclose(got, _independent_quadrature(k, n, box), atol=1e-4)


# ------------------------------------------------------------------ §5.2 single vs batched
def test_batch_intervals_agree_with_fit_exact_on_ragged_rows():
    """§5.2: ``batch_intervals`` gives each row the equal-tailed interval of
    μ under p(μ, κ | k_row) — the posterior of ``fit_exact(k_row, n_row)`` —
    to 1e-4 on 40 random data sets passed as one 2-D ``n`` with different
    group counts per row (padded with n = 0, which must be ignored), with
    the groups shuffled, and at a second level (0.8)."""
    data = _random_groups(14, 40)
    width = max(len(k) for k, _ in data)
    k2, n2 = np.zeros((len(data), width)), np.zeros((len(data), width))
    rng = np.random.default_rng(0)
    for r, (k, n) in enumerate(data):
        place = rng.permutation(width)[: len(k)]  # groups scattered among empty ones
        k2[r, place], n2[r, place] = k, n
    for level in (0.95, 0.8):
        single = np.array([hierarchical.fit_exact(k, n).interval(level) for k, n in data])
        batch = hierarchical.batch_intervals(k2, n2, level)
        assert np.abs(batch - single).max() < 1e-4
    perm = rng.permutation(width)
    np.testing.assert_array_equal(hierarchical.batch_intervals(k2[:, perm], n2[:, perm], 0.8), batch)


def test_batch_intervals_shared_n_row_and_both_paths_use_one_grid_function(monkeypatch):
    """§5.2: one row of group sizes shared by all data sets (the simulation
    lab's call) equals the explicit 2-D ``n``; ``fit_exact``,
    ``batch_intervals`` and ``weighted_mean_intervals`` all integrate
    p(μ, κ | k) through ``_grid_posteriors``."""
    rng = np.random.default_rng(15)
    n = rng.integers(1, 12, 30)
    k = rng.binomial(n, rng.beta(2, 3, (50, 30)))
    np.testing.assert_array_equal(hierarchical.batch_intervals(k, n), hierarchical.batch_intervals(k, np.tile(n, (50, 1))))
    calls = []
    original = hierarchical._grid_posteriors

    def spy(*args, **kwargs):
        calls.append(args[0].shape[0])
        yield from original(*args, **kwargs)

    monkeypatch.setattr(hierarchical, "_grid_posteriors", spy)
    hierarchical.fit_exact(k[0], n)
    hierarchical.batch_intervals(k[:3], n)
    hierarchical.weighted_mean_intervals(k[:2], n)
    assert calls == [1, 3, 2]


# ------------------------------------------------------------------ §5.2 weighted mean W
def _monte_carlo_w(k, n, draws=600_000, seed=0, batches=20):
    """Brute force, sharing no code with the module: importance sampling of
    (logit μ, log κ) from a Student-t (4 df) fitted to a pilot sample from
    the prior, weights prior × Π_c B(k_c + μκ, N_c − k_c + (1 − μ)κ) /
    B(μκ, (1 − μ)κ) / proposal; θ_c from its conditional Beta;
    W = Σ N_c θ_c / Σ N_c; also μ and the unweighted mean of the θ_c, to
    show the test tells the estimands apart.  Returns each estimand's 95%
    endpoints, the Monte Carlo SE of W's endpoints (from ``batches``
    independent sub-samples), W's posterior mean and its SE."""
    rng = np.random.default_rng(seed)

    def log_target(x):  # x = (logit μ, log κ), density on that scale
        mu, kappa = special.expit(x[:, 0]), np.exp(x[:, 1])
        a, b = mu * kappa, special.expit(-x[:, 0]) * kappa
        return (sum(special.betaln(kc + a, nc - kc + b) - special.betaln(a, b) for kc, nc in zip(k, n))
                - np.logaddexp(0, x[:, 0]) - np.logaddexp(0, -x[:, 0])  # log μ(1 − μ)
                + stats.norm.logpdf(x[:, 1], PRIOR.log_kappa_mean, PRIOR.log_kappa_sd))

    pilot = np.c_[special.logit(rng.uniform(size=200_000)),
                  rng.normal(PRIOR.log_kappa_mean, PRIOR.log_kappa_sd, 200_000)]
    lw = log_target(pilot) - stats.logistic.logpdf(pilot[:, 0]) - stats.norm.logpdf(
        pilot[:, 1], PRIOR.log_kappa_mean, PRIOR.log_kappa_sd)
    pw = np.exp(lw - lw.max())
    centre = pw @ pilot / pw.sum()
    cov = 2.0 * np.cov(pilot.T, aweights=pw)
    proposal = stats.multivariate_t(centre, cov, df=4, seed=rng)
    x = proposal.rvs(draws)
    x = x[np.all(np.abs(x - centre) < 30, axis=1)]  # far tails: weight 0 in double precision anyway
    lw = log_target(x) - proposal.logpdf(x)
    w = np.exp(lw - lw.max())
    mu, kappa = special.expit(x[:, 0])[:, None], np.exp(x[:, 1])[:, None]
    theta = rng.beta(mu * kappa + k, special.expit(-x[:, :1]) * kappa + (n - k))
    mu = mu[:, 0]
    est = {"W": theta @ n / n.sum(), "mu": mu, "unweighted": theta.mean(axis=1)}

    def quantiles(v, wt):
        order = np.argsort(v)
        cdf = np.cumsum(wt[order])
        return np.interp([0.025, 0.975], cdf / cdf[-1], v[order])

    ends = {key: quantiles(v, w) for key, v in est.items()}
    parts = np.array([quantiles(est["W"][i::batches], w[i::batches]) for i in range(batches)])
    means = [np.sum(w[i::batches] * est["W"][i::batches]) / w[i::batches].sum() for i in range(batches)]
    return (ends, parts.std(axis=0, ddof=1) / np.sqrt(batches), np.sum(w * est["W"]) / w.sum(),
            np.std(means, ddof=1) / np.sqrt(batches))


@pytest.mark.parametrize("k, n", [
    ([1, 30, 2, 0], [3, 40, 8, 2]),       # sizes and rates differ: W, μ and the plain mean of θ apart
    ([5], [9]),                            # one group: W = θ, the Beta mixture is exact
    ([0, 1, 0], [5, 8, 4]),                # near 0: the worst case of the moment matching
    ([9, 10, 10, 8, 10], [10, 10, 10, 10, 10]),  # near 1
])
def test_weighted_mean_posterior_against_brute_force_monte_carlo(k, n):
    """§5.2, the estimand of the score: W = Σ_c N_c θ_c / Σ_c N_c with
    θ_c | μ, κ, data ~ Beta(μκ + k_c, (1 − μ)κ + N_c − k_c).  The grid mixture
    of laws matching W's four conditional cumulants (Pearson type I Betas,
    Edgeworth where nearly normal) gives 95% endpoints within 4 Monte Carlo
    SEs + 2e-4 (the moment-matching allowance; two-moment matching misses
    the first case by 1.7e-3) of a 600,000-draw importance sample, and the
    exact posterior mean of W within 4 SEs; in the first case μ and the
    unweighted mean of the θ_c lie far outside that tolerance, so the test
    would see a wrong estimand."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    ends, se, mc_mean, mc_mean_se = _monte_carlo_w(k, n)
    got = hierarchical.weighted_mean_intervals(k, n)[0]
    allowance = 4 * se + 2e-4
    assert np.all(np.abs(got - ends["W"]) < allowance), (got, ends["W"], se)
    post = hierarchical.fit_exact(k, n)
    np.testing.assert_allclose(post.weighted_mean_interval(), got, atol=1e-12)
    assert abs(post.weighted_mean_moments()[0] - mc_mean) < 4 * mc_mean_se + 1e-6
    if len(k) == 4:
        for other in ("mu", "unweighted"):
            assert np.abs(ends[other] - ends["W"]).max() > 10 * allowance.max()


def test_weighted_mean_intervals_batched_equal_single_and_ignore_empty_groups():
    """§5.2, W as above: the batched ``weighted_mean_intervals`` (2-D ``n``,
    empty groups, shared grids) agree with the single posterior's
    ``weighted_mean_interval`` to 1e-4 on 30 random data sets; a data set
    with no answers gives NaN; ``weights`` equal to ``n`` change nothing."""
    data = _random_groups(16, 30, max_size=40)
    width = max(len(k) for k, _ in data) + 3
    k2, n2 = np.zeros((len(data) + 1, width)), np.zeros((len(data) + 1, width))
    for r, (k, n) in enumerate(data):
        k2[r, 1:len(k) + 1], n2[r, 1:len(n) + 1] = k, n
    batch = hierarchical.weighted_mean_intervals(k2, n2)
    single = np.array([hierarchical.fit_exact(k, n).weighted_mean_interval() for k, n in data])
    assert np.abs(batch[:-1] - single).max() < 1e-4
    assert np.isnan(batch[-1]).all()
    np.testing.assert_array_equal(hierarchical.weighted_mean_intervals(k2[:5], n2[:5], weights=n2[:5]),
                                  hierarchical.weighted_mean_intervals(k2[:5], n2[:5]))


# ------------------------------------------------------------------ §5.4 Bayesian bootstrap
def _unit_data(seed: int, count: int):
    """Random (sums, counts) of units: answer counts per cluster 0–12
    (0 = a cluster without answers), integer or fractional scores."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        units = int(rng.integers(2, 300))
        counts = rng.integers(0, 13, units).astype(float)
        counts[0] = max(counts[0], 1.0)
        sums = rng.binomial(counts.astype(int), rng.uniform()).astype(float)
        if i % 3 == 2:
            sums = np.round(counts * rng.uniform(size=units), 3)  # fractional scores
        out.append((sums, counts))
    return out


def test_plain_and_grouped_bootstrap_give_the_same_draws():
    """§5.4: each draw is Σ_u w_u S_u / Σ_u w_u N_u with w ~ Dirichlet(1, …, 1).
    For each of 30 random data sets passed alone with the same seed,
    ``weighted_means`` (plain) and ``grouped_draws`` (batched) return the
    same draws (to rounding), and so the same intervals, because both draw
    the aggregated weights with ``dirichlet_weights``."""
    for seed, (sums, counts) in enumerate(_unit_data(21, 30)):
        plain = bb.weighted_means(sums[:, None], counts[:, None], 1000, seed)[:, 0]
        values, mult = bb.distinct_units(sums, counts)
        (_, grouped), = list(bb.grouped_draws(values, mult, 1000, np.random.default_rng(seed)))
        np.testing.assert_allclose(grouped[0], plain, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(bb.grouped_intervals(sums, counts, 0.9, 1000, seed)[0],
                                   np.quantile(plain, [0.05, 0.95]), rtol=1e-12)


def test_grouped_batch_agrees_with_plain_within_monte_carlo_error():
    """§5.4, same estimand: 30 data sets in one ``grouped_intervals`` call
    (later ones continue the random stream) against the plain path on each
    alone: every 95% endpoint within 4.5 × √2 Monte Carlo SEs, the SE from
    20 sub-samples of the plain draws."""
    data = [(s, c) for s, c in _unit_data(22, 30)]
    width = max(len(s) for s, _ in data)
    sums, counts = np.zeros((len(data), width)), np.zeros((len(data), width))
    for r, (s, c) in enumerate(data):
        sums[r, :len(s)], counts[r, :len(c)] = s, c  # padding: units without answers
    draws = 2000
    batch = bb.grouped_intervals(sums, counts, 0.95, draws, seed=5)
    for r, (s, c) in enumerate(data):
        plain = bb.weighted_means(s[:, None], c[:, None], draws, seed=100 + r)[:, 0]
        parts = np.array([np.quantile(plain[i::20], [0.025, 0.975]) for i in range(20)])
        se = parts.std(axis=0, ddof=1) / np.sqrt(20)
        assert np.all(np.abs(batch[r] - np.quantile(plain, [0.025, 0.975])) <= 4.5 * np.sqrt(2) * se + 1e-12)


def test_bootstrap_draws_do_not_depend_on_unit_order():
    """§5.4: the law of Σ_u w_u S_u / Σ_u w_u N_u does not depend on how the
    units are listed, and neither do the draws: shuffling the questions of
    three models at once (paired differences keep their common weights),
    relabelling clusters, or adding units without answers leaves every draw
    unchanged, in both paths.  (Shuffling questions *within* clusters may
    change a cluster's floating-point sum in the last bit, hence the 1e-12
    tolerance there.)"""
    rng = np.random.default_rng(23)
    s = rng.beta(2, 3, size=(3, 200))
    s[1, rng.random(200) < 0.1] = np.nan
    codes = rng.integers(0, 25, 200)
    base_q = bb.bootstrap_means(s, None, 2000, seed=4)
    base_c = bb.bootstrap_means(s, codes, 2000, seed=4)
    for _ in range(3):
        perm = rng.permutation(200)
        relabel = rng.permutation(40)[:25]  # other cluster codes, some unused
        np.testing.assert_array_equal(bb.bootstrap_means(s[:, perm], None, 2000, seed=4), base_q)
        np.testing.assert_array_equal(bb.bootstrap_means(s, relabel[codes], 2000, seed=4), base_c)
        np.testing.assert_allclose(bb.bootstrap_means(s[:, perm], relabel[codes[perm]], 2000, seed=4), base_c,
                                   rtol=1e-12)
    for sums, counts in _unit_data(24, 10):
        perm = rng.permutation(len(sums))
        ref = bb.grouped_intervals(sums, counts, 0.9, 500, seed=2)
        np.testing.assert_array_equal(bb.grouped_intervals(sums[perm], counts[perm], 0.9, 500, seed=2), ref)
        padded = (np.r_[sums[perm], 0.0, 0.0], np.r_[counts[perm], 0.0, 0.0])
        np.testing.assert_array_equal(bb.grouped_intervals(*padded, 0.9, 500, seed=2), ref)
        np.testing.assert_array_equal(bb.weighted_means(padded[0][:, None], padded[1][:, None], 500, 2),
                                      bb.weighted_means(sums[:, None], counts[:, None], 500, 2))


def test_plain_and_grouped_paths_draw_weights_with_one_helper(monkeypatch):
    """§5.4: w ~ Dirichlet(1, …, 1) is drawn in one place: both paths call
    ``dirichlet_weights``, whose aggregated Gamma(multiplicity) weights give,
    for 0/1 answers without clusters, the Beta(k, n − k) posterior of the
    mean (checked against its quantiles within 4 Monte Carlo SEs)."""
    calls = []
    original = bb.dirichlet_weights

    def spy(mult, draws, rng):
        calls.append(np.shape(mult))
        return original(mult, draws, rng)

    monkeypatch.setattr(bb, "dirichlet_weights", spy)
    x = (np.random.default_rng(25).random(120) < 0.3).astype(float)
    draws = bb.bootstrap_means(x[None], None, 20000, seed=1)[:, 0]
    assert calls and all(len(shape) == 1 for shape in calls)
    calls.clear()
    bb.grouped_intervals(x[None], np.ones((1, 120)), 0.95, 100, seed=1)
    assert calls and all(len(shape) == 2 for shape in calls)
    k = x.sum()
    ref = stats.beta(k, 120 - k)
    q = np.array([0.025, 0.5, 0.975])
    se = np.sqrt(q * (1 - q) / len(draws)) / ref.pdf(ref.ppf(q))
    assert np.all(np.abs(np.quantile(draws, q) - ref.ppf(q)) < 4 * se)
