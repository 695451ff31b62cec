"""The simulation lab: its generator against known truth, the coverage and
error-rate claims of the issue, (M9) by simulation, and the explainer's lab."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from bayeserr.lab import simulate as sim
from bayeserr.lab.publish import calibration_page, run_grid

REPS = 4000


def mc(p, reps=REPS, k=3.5):
    """Tolerance: k Monte Carlo standard errors of a rate p."""
    return k * math.sqrt(p * (1 - p) / reps)


def run_tol(rate, reps=REPS, k=4.0):
    """Tolerance: k Monte Carlo standard errors of a rate measured in a run."""
    return k * math.sqrt(max(rate * (1 - rate), 1e-12) / reps)


# ---------------------------------------------------------------- exact reference values
# Independent of the lab's own code: the generative model of its docstring
# (x_j = Φ(c_j − τ z_j), c_j = Φ⁻¹(μ_j) sqrt(1 + τ²), latent z_A, z_B standard
# normal with correlation ρ), integrated by Gauss–Hermite quadrature, and the
# exact distributions of the test statistics of n independent questions.
def _cells(design, nodes=200):
    """P(A right), P(B right), P(both right) on one question (K = 1, no clusters)."""
    t, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    z_a = t[:, None]
    z_b = design.rho * t[:, None] + math.sqrt(1 - design.rho**2) * t[None, :]
    ww = w[:, None] * w[None, :]

    def c(mu):
        return stats.norm.ppf(mu) * math.sqrt(1 + design.spread**2)

    x_a = stats.norm.cdf(c(design.accuracy) - design.spread * z_a)
    x_b = stats.norm.cdf(c(design.accuracy - design.gap) - design.spread * z_b)
    return float(np.sum(ww * x_a)), float(np.sum(ww * x_b)), float(np.sum(ww * x_a * x_b))


def _discordant_pmf(design):
    """Exact joint pmf of (A-only, B-only) counts: multinomial over n questions."""
    n = design.n
    p_a, p_b, p11 = _cells(design)
    up, down = p_a - p11, p_b - p11
    i = np.arange(n + 1)
    a, b = np.meshgrid(i, i, indexing="ij")
    ok = a + b <= n
    rest = np.where(ok, n - a - b, 0)
    logp = (gammaln(n + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(rest + 1)
            + a * np.log(up) + b * np.log(down) + rest * np.log1p(-up - down))
    return a, b, np.where(ok, np.exp(logp), 0.0)


def _totals_pmf(design):
    """Exact joint pmf of (A's right answers, B's right answers): the
    coefficients of (p00 + p10 x + p01 y + p11 x y)^n, by a 2-D FFT of size
    (n + 1)² (no aliasing: degree n in each variable)."""
    n = design.n
    p_a, p_b, p11 = _cells(design)
    p10, p01 = p_a - p11, p_b - p11
    om = np.exp(-2j * np.pi * np.arange(n + 1) / (n + 1))
    g = (1 - p10 - p01 - p11 + p10 * om[:, None] + p01 * om[None, :] + p11 * om[:, None] * om[None, :]) ** n
    i = np.arange(n + 1)
    a, b = np.meshgrid(i, i, indexing="ij")
    return a, b, np.clip(np.fft.ifft2(g).real, 0.0, None)


def _z_rates(diff, var_over_n, pmf, crit):
    """P(z > crit) and P(|z| > crit) for z = diff / SE (0 where SE = 0)."""
    se = np.sqrt(np.maximum(var_over_n, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, diff / se, 0.0)
    return float(pmf[z > crit].sum()), float(pmf[np.abs(z) > crit].sum())


def exact_behind(design):
    """P(B's score ≥ A's): P(A-only ≤ B-only)."""
    a, b, pmf = _discordant_pmf(design)
    return float(pmf[a <= b].sum())


def exact_paired(design, alpha=0.05):
    """(P(paired z declares A better), P(it declares any difference))."""
    n = design.n
    a, b, pmf = _discordant_pmf(design)
    diff = (a - b) / n
    return _z_rates(diff, (a + b - n * diff**2) / (n - 1) / n, pmf, stats.norm.ppf(1 - alpha / 2))


def exact_unpaired(design, alpha=0.05):
    n = design.n
    a, b, pmf = _totals_pmf(design)
    var = (a * (n - a) + b * (n - b)) / (n * (n - 1)) / n
    return _z_rates((a - b) / n, var, pmf, stats.norm.ppf(1 - alpha / 2))


def test_generator_hits_its_targets():
    """Each target within 4 Monte Carlo SEs computed from the run: the
    accuracies (SE from the spread of the replicate means: questions and
    clusters are shared within a replicate), and against the quadrature
    above, the 0/1 correlation of the two models' answers (SE of the mean
    of 50 replicate correlations) and ω² = Var(d) (SE of a mean of iid
    squared deviations)."""
    d = sim.Design(n=400, accuracy=0.3, spread=1.5, cluster_size=20, icc=0.4, k=2, gap=0.05, rho=0.6)
    a, b = sim.simulate_pair(d, 500, seed=1)
    assert a.shape == (500, 400, 2) and set(np.unique(a)) <= {0.0, 1.0}
    for x, truth in ((a, 0.3), (b, 0.25)):
        per_rep = x.mean(axis=(1, 2))
        assert abs(per_rep.mean() - truth) < 4 * per_rep.std(ddof=1) / math.sqrt(per_rep.size)
    d1 = sim.Design(n=2000, accuracy=0.72, spread=1.2, gap=-0.03, rho=0.7)
    p_a, p_b, p11 = _cells(d1)
    assert p_a == pytest.approx(0.72, abs=1e-9) and p_b == pytest.approx(0.75, abs=1e-9)
    corr = (p11 - p_a * p_b) / math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    omega2 = p_a * (1 - p_a) + p_b * (1 - p_b) - 2 * (p11 - p_a * p_b)
    assert sim.binary_correlation(d1) == pytest.approx(corr, abs=1e-8)
    assert sim.true_omega2(d1) == pytest.approx(omega2, abs=1e-8)
    a1, b1 = sim.simulate_pair(d1, 50, seed=2)
    r = np.array([np.corrcoef(a1[i, :, 0], b1[i, :, 0])[0, 1] for i in range(50)])
    assert abs(r.mean() - corr) < 4 * r.std(ddof=1) / math.sqrt(r.size)
    dev2 = ((a1[..., 0] - b1[..., 0]) - (a1[..., 0] - b1[..., 0]).mean()) ** 2
    assert abs(dev2.mean() - omega2) < 4 * dev2.std(ddof=1) / math.sqrt(dev2.size)
    # same seed, same numbers
    np.testing.assert_array_equal(sim.simulate(d, 3, seed=9), sim.simulate(d, 3, seed=9))


def test_clt_coverage_nominal_at_large_n():
    cells = {c.method: c for c in sim.coverage(sim.Design(n=1000, accuracy=0.5), REPS, seed=3)}
    assert abs(cells["clt"].coverage - 0.95) < mc(0.95)
    assert abs(cells["wilson"].coverage - 0.95) < mc(0.95)


def test_clt_fails_at_n10_p09_and_beta_posterior_is_calibrated_under_its_prior():
    cells = {c.method: c for c in sim.coverage(sim.Design(n=10, accuracy=0.9), REPS, seed=4)}
    assert cells["clt"].coverage < 0.85  # clearly below nominal
    assert cells["clopper_pearson"].coverage >= 0.95 - mc(0.95)  # exact: conservative
    cal = sim.prior_coverage(10, REPS, seed=5)
    assert abs(cal["beta_posterior"] - 0.95) < mc(0.95)
    assert cal["clt"] < 0.9


def test_clustering_breaks_naive_intervals_and_clustered_ones_fix_it():
    d = sim.Design(n=1000, accuracy=0.5, cluster_size=10, icc=0.3)
    cells = {c.method: c for c in sim.coverage(d, REPS, seed=6)}
    assert cells["clt"].coverage < 0.9
    for m in ("clustered_paper", "clustered_cr1", "wilson_clustered", "hierarchical_mu"):
        assert abs(cells[m].coverage - 0.95) < mc(0.95), m


@pytest.mark.parametrize("design", [sim.Design(n=300, accuracy=0.7, rho=0.0),
                                    sim.Design(n=400, accuracy=0.6, rho=0.0, cluster_size=4, icc=0.2)])
def test_false_positive_rates_at_zero_gap(design):
    rates = {r.test: r.rate for r in sim.error_rates(design, REPS, seed=7)}
    for test, rate in rates.items():
        if design.cluster_size > 1 and test in ("unpaired", "paired", "mcnemar_exact"):
            continue  # these ignore clustering: not valid here, by design
        if test == "mcnemar_exact":
            assert rate <= 0.05 + mc(0.05)  # exact test: conservative
        else:
            assert abs(rate - 0.05) < mc(0.05), (test, rate)


def test_power_at_the_m9_n_matches_the_request():
    d = sim.planned(sim.Design(accuracy=0.75, gap=0.03, rho=0.8), power=0.8)
    rates = {r.test: r.rate for r in sim.error_rates(d, REPS, seed=8)}
    assert abs(rates["paired"] - 0.8) < mc(0.8)


def test_explainer_lab_numbers_match_exact_values():
    """error-bars-explainer: 72% vs 75% on 300 questions, answer correlation
    0.6.  Exact values under the lab's generative model (quadrature and the
    exact multinomial distributions above) against (i) the lab's 4,000-run
    simulations, within 4 Monte Carlo SEs computed from each run, and (ii)
    the explainer's own figures, measured on 200 reruns, within 3 of their
    Monte Carlo SEs: B fails to come out ahead in 22/200 (300 questions) and
    60/200 (100 questions); at 1,000 questions the paired test detects the
    gap in 130/200 reruns, the unpaired in 54/200; at a zero gap about 1 run
    in 20 is "significant".  (The exact values: 10.6%, 26.3%, 67.4%, 24.4%
    and 4.95%.)"""
    base = sim.Design(n=300, accuracy=0.75, gap=0.03, spread=3.0)
    base = sim.replace(base, rho=sim.rho_for_binary_correlation(base, 0.6))
    p_a, p_b, p11 = _cells(base)
    assert (p11 - p_a * p_b) / math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b)) == pytest.approx(0.6, abs=1e-6)

    def behind(n):
        a, b = sim.simulate_pair(sim.replace(base, n=n), REPS, seed=n)
        return float(np.mean(a.mean(axis=(1, 2)) <= b.mean(axis=(1, 2))))

    d1000 = sim.replace(base, n=1000)
    r1000 = {r.test: r.rate for r in sim.error_rates(d1000, REPS, seed=10)}
    r0 = {r.test: r.rate for r in sim.error_rates(sim.replace(base, gap=0.0), REPS, seed=11)}
    checks = [  # (lab's simulated rate, exact rate, explainer's count out of 200)
        (behind(300), exact_behind(base), 22),
        (behind(100), exact_behind(sim.replace(base, n=100)), 60),
        (r1000["paired"], exact_paired(d1000)[0], 130),
        (r1000["unpaired"], exact_unpaired(d1000)[0], 54),
        (r0["paired"], exact_paired(sim.replace(base, gap=0.0))[1], 10),
    ]
    for simulated, exact, count in checks:
        assert abs(simulated - exact) < run_tol(simulated), (simulated, exact)
        assert abs(count / 200 - exact) < run_tol(exact, reps=200, k=3.0), (count, exact)


def test_grid_runner_and_page(tmp_path):
    cov = run_grid(sim.grid(n=[10, 100], accuracy=[0.5, 0.95], cluster_size=[1]), sim.coverage, 200)
    assert set(cov["n"]) == {10, 100} and (cov["reps"] == 200).all()
    rates = run_grid([sim.Design(n=100, gap=0.0)], sim.error_rates, 200)
    page = calibration_page(cov, rates, "fig.svg", 200, 0)
    assert "## Coverage (%)" in page and "fig.svg" in page and "Clopper–Pearson" in page


def test_simulate_cli(cli, tmp_path):
    res = cli("simulate", "coverage", "--n", "20,50", "--p", "0.5", "--cluster-size", "1",
              "--reps", 200, "--format", "json", "--plot", tmp_path / "c.png")
    assert res.exit_code == 0
    import json
    rows = json.loads(res.stdout)
    assert {r["method"] for r in rows} >= {"clt", "wilson", "beta_posterior"}
    assert (tmp_path / "c.png").stat().st_size > 1000
    res = cli("simulate", "power", "--plan", 0.8, "--gap", 0.03, "--p", 0.75, "--rho", 0.8,
              "--cluster-size", 1, "--reps", 300)
    assert res.exit_code == 0 and "Paired z" in res.stdout
    bad = cli("simulate", "coverage", "--p", "1.5")
    assert bad.exit_code == 2 and "between 0 and 1" in bad.output
