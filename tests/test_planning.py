"""Power analysis (SPEC §4): inverses, clustered designs, pilots, the CLI, and
a seeded simulation of the power actually achieved at the (M9) n."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeserr


def test_m9_and_m10_are_inverses():
    for delta in (0.01, 0.03, 0.1):
        n = bayeserr.n_required(delta, 0.2, 0.1, 0.15, 3, 5, alpha=0.01, power=0.9)
        assert bayeserr.mde(n, 0.2, 0.1, 0.15, 3, 5, alpha=0.01, power=0.9) == pytest.approx(delta)


def test_unpaired_proportions_formula():
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    expected = (za + zb) ** 2 * (0.8 * 0.2 + 0.83 * 0.17) / 0.03**2
    assert bayeserr.n_unpaired(0.8, 0.83) == pytest.approx(expected)


def test_cluster_design_effect_inflates_n():
    assert bayeserr.design_effect_icc(10, 0.1) == pytest.approx(1.9)
    base = bayeserr.n_required(0.03, 1 / 9)
    assert bayeserr.n_required(0.03, 1 / 9, deff=1.9) == pytest.approx(1.9 * base)


def test_simulated_power_at_the_m9_n_matches_request():
    """Paired differences with known ω²: the share of 5%-level rejections at the
    planned n must be within 3.5 Monte Carlo SEs of the requested 80%."""
    rng = np.random.default_rng(5)
    omega2, delta, reps = 1 / 9, 0.03, 4000
    n = math.ceil(bayeserr.n_required(delta, omega2))
    d = rng.normal(delta, math.sqrt(omega2), (reps, n))
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    power = np.mean(np.abs(z) > stats.norm.ppf(0.975))
    assert abs(power - 0.8) < 3.5 * math.sqrt(0.8 * 0.2 / reps)


def test_plan_from_pilot_recovers_variances():
    rng = np.random.default_rng(3)
    n, k = 3000, 4
    x_a = rng.beta(2, 2, n)
    x_b = np.clip(x_a + rng.normal(0.05, 0.1, n), 0, 1)
    rows = [(m, i, s, float(rng.random() < x[i])) for m, x in (("A", x_a), ("B", x_b))
            for i in range(n) for s in range(k)]
    ds = bayeserr.load(pd.DataFrame(rows, columns=["model", "question_id", "sample", "score"]))
    est = bayeserr.from_pilot(ds, "A", "B")
    true_omega2 = np.var(x_a - x_b, ddof=1)
    assert est.omega2 == pytest.approx(true_omega2, rel=0.25)
    true_sigma2 = np.mean(x_a * (1 - x_a))
    assert est.sigma2_a == pytest.approx(true_sigma2, rel=0.05)
    assert est.k_a == k and est.icc is None and est.design_effect == 1


def test_pilot_with_clusters_reads_icc_off_the_design_effect():
    from bayeserr.examples import example_path
    ds = bayeserr.load(example_path())
    est = bayeserr.from_pilot(ds, "ckpt-0426", "ckpt-0412")
    assert est.cluster_size == pytest.approx(200 / 24)
    assert est.design_effect == pytest.approx(1 + (est.cluster_size - 1) * est.icc)


def test_power_cli(cli_json, cli):
    assert cli_json("power", "--delta", 0.03, "--omega2", 1 / 9)["n_required"] == 969
    out = cli_json("power", "--n", 198, "--omega2", 1 / 9, "--sigma2-a", 1 / 6, "--sigma2-b", 1 / 6,
                   "--k-a", 10, "--k-b", 10)
    assert out["mde"] == pytest.approx(0.0757, abs=5e-4)
    assert cli_json("power", "--tie-zone", 0.8, "--n", 164)["tie_zone"] == pytest.approx(0.0866, abs=5e-4)
    assert cli_json("power", "--tie-zone", 0.8, "--delta", 0.03)["n_required"] == pytest.approx(1366, abs=2)
    clustered = cli_json("power", "--delta", 0.03, "--omega2", 1 / 9, "--cluster-size", 10, "--icc", 0.1)
    assert clustered["n_required"] == math.ceil(1.9 * bayeserr.n_required(0.03, 1 / 9))
    assert clustered["clusters_required"] == math.ceil(clustered["n_required"] / 10)
    from bayeserr.examples import example_path
    pilot = cli_json("power", "--pilot", example_path(), "ckpt-0426", "ckpt-0412", "--delta", 0.03)
    assert pilot["n_required"] > 0 and pilot["pilot"]["n_pilot"] == 200
    res = cli("power", "--delta", 0.03)
    assert res.exit_code == 2 and "--omega2" in res.output
    res = cli("power", "--delta", -1, "--omega2", 0.1)
    assert res.exit_code == 2 and "positive" in res.output
