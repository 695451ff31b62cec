"""The simulation lab: its generator against known truth, the coverage and
error-rate claims of the issue, (M9) by simulation, and the explainer's lab."""

import math

import numpy as np
import pytest

from bayeserr.lab import simulate as sim
from bayeserr.lab.publish import calibration_page, run_grid

REPS = 4000


def mc(p, reps=REPS, k=3.5):
    """Tolerance: k Monte Carlo standard errors of a rate p."""
    return k * math.sqrt(p * (1 - p) / reps)


def test_generator_hits_its_targets():
    d = sim.Design(n=400, accuracy=0.3, spread=1.5, cluster_size=20, icc=0.4, k=2, gap=0.05, rho=0.6)
    a, b = sim.simulate_pair(d, 500, seed=1)
    assert a.shape == (500, 400, 2) and set(np.unique(a)) <= {0.0, 1.0}
    assert a.mean() == pytest.approx(0.3, abs=0.01) and b.mean() == pytest.approx(0.25, abs=0.01)
    # the 0/1 answer correlation of the two models matches the bivariate-normal formula
    d1 = sim.Design(n=2000, accuracy=0.72, spread=1.2, gap=-0.03, rho=0.7)
    a1, b1 = sim.simulate_pair(d1, 50, seed=2)
    r = np.mean([np.corrcoef(a1[i, :, 0], b1[i, :, 0])[0, 1] for i in range(50)])
    assert r == pytest.approx(sim.binary_correlation(d1), abs=0.01)
    assert np.var(a1[..., 0] - b1[..., 0], ddof=1) == pytest.approx(sim.true_omega2(d1), rel=0.02)
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
    for m in ("clustered_paper", "clustered_cr1", "wilson_clustered", "hierarchical_posterior"):
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


def test_explainer_lab_numbers_come_out_in_range():
    """error-bars-explainer: 72% vs 75% on 300 questions; B fails to come out
    ahead in ~11% of reruns (30% at 100 questions); at 1,000 questions the
    paired test detects the gap in ~65% of reruns, the unpaired in ~27%; at a
    zero gap about 1 run in 20 is "significant"."""
    base = sim.Design(n=300, accuracy=0.75, gap=0.03, spread=3.0)
    base = sim.replace(base, rho=sim.rho_for_binary_correlation(base, 0.6))

    def behind(n):
        a, b = sim.simulate_pair(sim.replace(base, n=n), REPS, seed=n)
        return np.mean(a.mean(axis=(1, 2)) <= b.mean(axis=(1, 2)))

    assert 0.06 <= behind(300) <= 0.16
    assert 0.22 <= behind(100) <= 0.38
    r1000 = {r.test: r.rate for r in sim.error_rates(sim.replace(base, n=1000), REPS, seed=10)}
    assert 0.55 <= r1000["paired"] <= 0.75
    assert 0.2 <= r1000["unpaired"] <= 0.4
    r0 = {r.test: r.rate for r in sim.error_rates(sim.replace(base, gap=0.0), REPS, seed=11)}
    assert abs(r0["paired"] - 0.05) < mc(0.05)


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
