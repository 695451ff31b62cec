"""The simulation lab's few-cluster study (SPEC §2 (M4b), §3, §7): the
presets, the cluster effect on the difference, and the claim the CR2 t
headline rests on — at SWE-bench Verified's repository sizes with cluster
effects on the difference, CR2 with t on the Bell–McCaffrey df holds its
level and coverage where the paper's (M8) z test does not."""

import math

import numpy as np
import pandas as pd
import pytest

from bayeserr.lab import publish
from bayeserr.lab import simulate as sim
from bayeserr.registries.pairtests import TESTS, headline

REPS = 2000


def mc_se(p, reps=REPS):
    """Monte Carlo SE of a rate p measured on ``reps`` replicates."""
    return math.sqrt(p * (1 - p) / reps)


def swebench(**kw):
    return sim.preset("swebench", accuracy=0.6, icc=0.2, rho=0.7, icc_diff=0.1, **kw)


# ---------------------------------------------------------------- presets and generator
def test_presets_have_the_sizes_they_claim():
    sw = sim.PRESETS["swebench"]
    assert sw.n == 500 and sw.n_clusters == 12
    assert tuple(sw.sizes) == (231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1)
    assert tuple(sw.sizes) == sim.SWE_BENCH_VERIFIED_SIZES
    dom = sim.PRESETS["dominant"]
    assert dom.n_clusters == 200 and dom.sizes[0] == dom.n // 2 and dom.sizes[1:].max() <= 3
    for c in (2, 3, 5, 10, 20, 50, 200):
        d = sim.PRESETS[f"equal_{c}"]
        assert d.n_clusters == c and (d.sizes == d.n // c).all() and d.sizes.sum() == d.n
    # codes follow the sizes, in order; n is derived from them
    d = sim.Design(cluster_sizes=(3, 1, 2))
    assert d.n == 6 and d.codes.tolist() == [0, 0, 0, 1, 2, 2]
    assert sim.replace(sw, accuracy=0.3).sizes.tolist() == list(sim.SWE_BENCH_VERIFIED_SIZES)
    with pytest.raises(ValueError, match="not both"):
        sim.Design(cluster_size=5, cluster_sizes=(5, 5))
    with pytest.raises(ValueError, match="not reachable"):
        sim.Design(cluster_size=10, icc=0.0, icc_diff=0.1)


def test_icc_diff_puts_that_share_of_the_latent_difference_between_clusters():
    """Var(z_A) = 1, corr(z_A, z_B) = ρ, and the covariance of the latent
    difference between two questions of one cluster is icc_diff · 2(1 − ρ):
    each within 4 Monte Carlo SEs computed from the draws."""
    d = sim.Design(n=400, cluster_size=2, icc=0.3, rho=0.6, icc_diff=0.25)
    z_a, z_b = sim._latent_pair(d, 4000, np.random.default_rng(3))
    x = z_a[:, 0::2] - z_b[:, 0::2]
    y = z_a[:, 1::2] - z_b[:, 1::2]  # the other question of the same cluster
    targets = [(z_a**2, 1.0), (z_a * z_b, d.rho), (x * y, d.icc_diff * 2 * (1 - d.rho))]
    for values, truth in targets:
        per_rep = values.mean(axis=1)  # replicates are independent
        assert abs(per_rep.mean() - truth) < 4 * per_rep.std(ddof=1) / math.sqrt(per_rep.size), truth
    # the accuracies are untouched by the cluster effect on the difference
    a, b = sim.simulate_pair(sim.replace(d, accuracy=0.6, gap=0.1, spread=1.5), 400, seed=4)
    for ans, truth in ((a, 0.6), (b, 0.5)):
        per_rep = ans.mean(axis=(1, 2))
        assert abs(per_rep.mean() - truth) < 4 * per_rep.std(ddof=1) / math.sqrt(per_rep.size)


# ---------------------------------------------------------------- the claim
def test_cr2_t_holds_at_swebench_sizes_where_m8_z_over_rejects():
    """Null data at SWE-bench Verified's sizes with a cluster effect on the
    difference (latent ICC of d 0.1): the CR2 t headline rejects within 3
    Monte Carlo SEs of 5% or below; the paper's (M8) z test visibly more
    (> 10%), and so does McNemar; the wild bootstrap holds too."""
    cells = {c.test: c for c in sim.pair_calibration(swebench(gap=0.0), REPS, seed=11, wild_interval=False)}
    assert headline().key == "cr2_t"
    cr2, m8 = cells["cr2_t"], cells["clustered_paired"]
    assert cr2.rate <= 0.05 + 3 * mc_se(0.05), cr2.rate
    assert m8.rate > 0.10 and m8.rate - 3 * mc_se(m8.rate) > 0.05 + 3 * mc_se(0.05), m8.rate
    assert cells["mcnemar_exact"].rate > 0.10
    assert cells["wild_bootstrap"].rate <= 0.05 + 3 * mc_se(0.05)
    assert cells["clustered_paired"].design_effect > 1.5  # the cluster effect on d is real
    assert cr2.rate_se == pytest.approx(mc_se(cr2.rate))


def test_cr2_t_interval_covers_the_true_gap_at_swebench_sizes():
    """With a true gap of 5 points at the same design, the CR2 t interval
    covers the gap within 3 Monte Carlo SEs of 95% (or above), the (M8) z
    interval does not."""
    cells = {c.test: c for c in sim.pair_calibration(swebench(gap=0.05), REPS, seed=12)}
    cr2 = cells["cr2_t"]
    assert cr2.coverage >= 0.95 - 3 * mc_se(0.95), cr2.coverage
    assert cr2.coverage <= 0.99  # not trivially wide
    assert cells["clustered_paired"].coverage < 0.95 - 3 * mc_se(0.95)
    assert cells["wild_bootstrap"].coverage >= 0.95 - 3 * mc_se(0.95)
    assert cr2.rate > 0.05  # it detects the gap at times: not a useless test


# ---------------------------------------------------------------- registry and tables
def test_tests_come_from_the_registry_and_the_bayes_rule_is_two_sided():
    d = sim.preset("equal_5", accuracy=0.6, icc=0.2, rho=0.7, icc_diff=0.05, gap=-0.15)
    a, b = sim.simulate_pair(d, 200, seed=5)
    verdicts = sim.decisions(a, b, d)
    # every registered test applies to clustered 0/1 data, except the rule for independent questions
    assert set(verdicts) == {k for k, t in TESTS.items() if t.needs != "independent"}
    for key in ("bayes_cluster_0975", "bayes_bootstrap_0975"):
        assert (verdicts[key] == -1).mean() > 0.5, key  # B better: declared the other way
    assert (verdicts["bayes_prob_095"] >= 0).all()  # the one-sided rule never says "B better"
    ivs = sim.pair_intervals(a, b, d)
    assert set(ivs) == {k for k, t in TESTS.items() if t.interval is not None and t.needs != "independent"}
    # without clusters the clustered tests are left out
    plain = sim.Design(n=100, accuracy=0.6)
    a, b = sim.simulate_pair(plain, 50, seed=6)
    assert {k for k in sim.decisions(a, b, plain)} == {k for k, t in TESTS.items() if t.needs != "clusters"}


def test_new_tests_appear_in_the_lab_tables_with_registry_labels(tmp_path):
    df = publish.run_fewclusters(60, seed=1, presets=["equal_3", "swebench"], icc_diffs=(0.0, 0.1),
                                 wild_draws=199)
    assert set(df["preset"]) == {"equal_3", "swebench"} and (df["reps"] == 60).all()
    shown = [k for k, t in TESTS.items() if t.fewclusters]
    assert {"clustered_paired", "cr1_t", "cr2_t", "wild_bootstrap", "mcnemar_exact", "bayes_cluster_0975",
            "bayes_bootstrap_0975"} <= set(shown)
    rate_table = publish.fewcluster_table(df, "rate")
    for key in shown:
        assert TESTS[key].label in rate_table.splitlines()[0], key
    cov_table = publish.fewcluster_table(df, "coverage")
    assert TESTS["cr2_t"].label in cov_table and TESTS["mcnemar_exact"].label not in cov_table
    assert "SWE-bench Verified sizes" in rate_table and " ± " in rate_table
    cov = sim.coverage(sim.Design(n=50, accuracy=0.5), 50)
    page = publish.calibration_page(pd.DataFrame([c.to_dict() for c in cov]), pd.DataFrame(), "fig.svg",
                                    60, 1, df, "few.svg")
    assert "## Few and unequal clusters" in page and "few.svg" in page and TESTS["cr2_t"].label in page
    publish.fewcluster_figure(df, tmp_path / "few.png")
    assert (tmp_path / "few.png").stat().st_size > 1000


def test_simulate_fewclusters_cli(cli):
    res = cli("simulate", "fewclusters", "--designs", "equal_2", "--icc-diff", "0.05", "--reps", 40,
              "--wild-draws", 99)
    assert res.exit_code == 0, res.output
    assert TESTS["cr2_t"].label in res.stdout and "2 equal clusters" in res.stdout
    bad = cli("simulate", "fewclusters", "--designs", "swebnch", "--reps", 40)
    assert bad.exit_code == 2 and "swebench" in bad.output
