"""The simulation lab's calibration of the Bayesian pair rules (SPEC §5.3,
§7; ``docs/methods.md`` §5.3, §8): the rule the report uses for clustered
pairs — ``max(P, 1 − P) > 0.975`` with P from the model with a cluster random
effect on the difference (``models/paired_clustered.py``) — is in the test
registry and the lab's tables, computed by the report's own function, holds
its level at SWE-bench Verified's sizes where the old Bayesian bootstrap over
clusters does not, and is calibrated when the truth is drawn from its prior."""

import math

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.lab import publish
from bayeserr.lab import simulate as sim
from bayeserr.registries.pairtests import TESTS

NEW, OLD, PLAIN = "bayes_cluster_0975", "bayes_bootstrap_0975", "bayes_prob_0975"


def mc_se(p, reps):
    return math.sqrt(p * (1 - p) / reps)


def swebench(**kw):
    return sim.preset("swebench", accuracy=0.6, icc=0.2, rho=0.7, icc_diff=0.1, **kw)


def test_the_rules_are_registered_with_labels_that_say_what_they_are():
    new, old, plain = TESTS[NEW], TESTS[OLD], TESTS[PLAIN]
    assert "cluster random-effect model" in new.label and "0.975" in new.label
    assert "old" in old.label and "cluster bootstrap" in old.label
    assert "independent questions" in plain.label
    assert new.needs == old.needs == "clusters" and plain.needs == "independent"
    assert new.interval is not None and new.fewclusters and old.fewclusters and not plain.fewclusters
    assert len({new.label, old.label, plain.label}) == 3
    # unclustered 0/1 designs keep the Dirichlet 2×2 rule; clustered ones get the two cluster rules
    from bayeserr.models import paired_dirichlet
    d = sim.Design(n=80, accuracy=0.6, gap=0.1)
    a, b = sim.simulate_pair(d, 30, seed=2)
    batch = sim.pair_batch(a, b, d)
    b_only, c_only = batch.discordant
    np.testing.assert_array_equal(batch.prob_a_better,
                                  paired_dirichlet.prob_a_better(b_only, c_only, 80 - b_only - c_only))
    assert PLAIN in sim.decisions(a, b, d, batch=batch) and NEW not in sim.decisions(a, b, d, batch=batch)


def test_new_rule_holds_its_level_at_swebench_sizes_where_the_old_bootstrap_does_not():
    """One seeded simulation of 400 null data sets at SWE-bench Verified's
    repository sizes with a cluster effect on the difference (latent ICC of
    d 0.1): the report's rule fires at most 3 Monte Carlo SEs above 5%; the
    old cluster bootstrap, on the same data sets, visibly more."""
    reps = 400
    d = swebench(gap=0.0)
    a, b = sim.simulate_pair(d, reps, seed=21)
    batch = sim.pair_batch(a, b, d, seed=22)
    new = float(np.mean(TESTS[NEW].decide(batch, 0.05) != 0))
    old = float(np.mean(TESTS[OLD].decide(batch, 0.05) != 0))
    limit = 0.05 + 3 * mc_se(0.05, reps)
    assert new <= limit, new
    assert old > limit and old - new > 3 * math.sqrt((mc_se(old, reps) ** 2 + mc_se(max(new, 0.05), reps) ** 2)), (
        old, new)


def test_lab_probability_is_the_reports():
    """The lab's P(A > B) for one replicate is what the report computes on the
    same data (one implementation): ``bayeserr.report`` through
    ``clustered_probabilities``; and the lab's interval is the one
    ``bayeserr compare`` shows (``from_arrays``)."""
    from bayeserr.models.paired_clustered import from_arrays
    d = swebench(gap=0.03)
    a, b = sim.simulate_pair(d, 3, seed=5)
    batch = sim.pair_batch(a, b, d)
    post = batch.cluster_model(0.95)
    for r in range(3):
        rep = bayeserr.report(bayeserr.load(sim.to_frame({"A": a, "B": b}, d, replicate=r)))
        (c,) = rep.comparisons
        p = c.prob_a_better if (c.a, c.b) == ("A", "B") else 1 - c.prob_a_better
        assert p == pytest.approx(batch.prob_a_better[r], abs=1e-12)
        assert c.prob_tie == pytest.approx(post.prob_tie[r], abs=1e-12)
        one = from_arrays((a[r, :, 0] - b[r, :, 0])[None], d.codes, batch.rope)
        np.testing.assert_allclose(one.interval[0], post.interval[r], atol=1e-12)
        assert one.prob_a_better[0] == pytest.approx(batch.prob_a_better[r], abs=1e-12)


def test_prior_truth_coverage_and_calibration():
    """Data from the model's own prior at SWE-bench sizes and with 2 equal
    clusters: the 95% credible interval covers the true Δ within 3 Monte
    Carlo SEs of 95%, each tail within 3 SEs of 2.5%, and in the pooled bins
    of P(A > B) the share of true Δ > 0 is within 4 SEs of the mean P."""
    reps = 2000
    df = publish.run_pair_prior(reps, seed=3, presets=["swebench", "equal_2"])
    assert set(df["preset"]) == {"swebench", "equal_2"}
    for _, g in df.groupby("preset"):
        r = g.iloc[0]
        assert abs(r["coverage"] - 0.95) <= 3 * mc_se(0.95, reps), r["coverage"]
        for tail in ("below", "above"):
            assert abs(r[tail] - 0.025) <= 3 * mc_se(0.025, reps), (tail, r[tail])
        assert g["count"].sum() == r["kept"] > 0
    pooled = publish._prior_pooled(df)
    assert ((pooled["freq"] - pooled["mean_p"]).abs() <= 4 * pooled["freq_se"] + 1e-3).all(), pooled
    per_design, bins = publish.pair_prior_tables(df)
    assert "SWE-bench Verified sizes" in per_design and "[0.975, 1]" in bins


def test_new_rule_in_the_lab_tables_and_page(tmp_path, cli):
    few = publish.run_fewclusters(40, seed=1, presets=["equal_3", "swebench"], icc_diffs=(0.1,), wild_draws=99)
    for what in ("rate", "power"):
        head = publish.fewcluster_table(few, what).splitlines()[0]
        assert TESTS[NEW].label in head and TESTS[OLD].label in head and TESTS[PLAIN].label not in head
    cov_head = publish.fewcluster_table(few, "coverage").splitlines()[0]
    assert TESTS[NEW].label in cov_head and TESTS[OLD].label not in cov_head  # the old rule has no interval
    findings = "\n".join(publish.fewcluster_findings(few))
    assert TESTS[NEW].label in findings and TESTS[OLD].label in findings
    prior = publish.run_pair_prior(200, seed=1, presets=["swebench"])
    cov = sim.coverage(sim.Design(n=50, accuracy=0.5), 50)
    page = publish.calibration_page(pd.DataFrame([c.to_dict() for c in cov]), pd.DataFrame(), "fig.svg",
                                    40, 1, few, "few.svg", prior, "prior.svg")
    assert "## The Bayesian pair model with the truth drawn from its prior" in page and "prior.svg" in page
    publish.pair_prior_figure(prior, tmp_path / "prior.png")
    assert (tmp_path / "prior.png").stat().st_size > 1000
    res = cli("simulate", "pair-prior", "--designs", "equal_2", "--reps", 100)
    assert res.exit_code == 0, res.output
    assert "coverage of Δ" in res.stdout and "2 equal clusters" in res.stdout
