"""Power analysis (SPEC §4): inverses, clustered designs, pilots, the CLI, and
a seeded simulation of the power actually achieved at the (M9) n."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeserr

from ..conftest import real_file


def test_m9_and_m10_are_inverses():
    for delta in (0.01, 0.03, 0.1):
        n = bayeserr.n_required(delta, 0.2, 0.1, 0.15, 3, 5, alpha=0.01, power=0.9)
        assert bayeserr.mde(n, 0.2, 0.1, 0.15, 3, 5, alpha=0.01, power=0.9) == pytest.approx(delta)


def test_unpaired_proportions_formula():
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    expected = (za + zb) ** 2 * (0.8 * 0.2 + 0.83 * 0.17) / 0.03**2
    assert bayeserr.n_unpaired(0.8, 0.83) == pytest.approx(expected)


def test_design_effect_multiplies_n_and_squares_into_mde():
    """(M9) is linear in the variance, so a design effect of 1.9 multiplies n
    by 1.9 and the MDE at fixed n by sqrt(1.9)."""
    base = bayeserr.n_required(0.03, 1 / 9)
    assert bayeserr.n_required(0.03, 1 / 9, deff=1.9) == pytest.approx(1.9 * base, rel=1e-14)
    assert bayeserr.mde(500, 1 / 9, deff=1.9) == pytest.approx(math.sqrt(1.9) * bayeserr.mde(500, 1 / 9), rel=1e-14)


@pytest.mark.parametrize("call", [
    lambda: bayeserr.n_required(0.03, -0.01),                    # omega2 < 0
    lambda: bayeserr.n_required(0.03, float("nan")),
    lambda: bayeserr.n_required(0.0, 0.1),                       # delta ≤ 0
    lambda: bayeserr.n_required(-0.03, 0.1),
    lambda: bayeserr.n_required(float("nan"), 0.1),
    lambda: bayeserr.n_required(0.03, 0.1, -0.2),                # sigma2_a < 0
    lambda: bayeserr.n_required(0.03, 0.1, 0.2, 0.2, 0, 1),      # k_a < 1
    lambda: bayeserr.n_required(0.03, 0.1, alpha=0.0),
    lambda: bayeserr.n_required(0.03, 0.1, alpha=1.0),
    lambda: bayeserr.n_required(0.03, 0.1, power=1.2),
    lambda: bayeserr.n_required(0.03, 0.1, power=float("nan")),
    lambda: bayeserr.n_required(0.03, 0.1, deff=0.8),            # design effect below 1
    lambda: bayeserr.mde(0, 0.1),
    lambda: bayeserr.mde(float("nan"), 0.1),
    lambda: bayeserr.mde(100, -0.1),
    lambda: bayeserr.n_unpaired(0.0, 0.5),                       # p outside (0, 1)
    lambda: bayeserr.n_unpaired(0.5, 1.0),
    lambda: bayeserr.n_unpaired(1.2, 0.5),
    lambda: bayeserr.n_unpaired(0.5, float("nan")),
    lambda: bayeserr.design_effect_icc(10, -0.05),               # icc outside [0, 1)
    lambda: bayeserr.design_effect_icc(10, 1.0),
    lambda: bayeserr.design_effect_icc(10, float("nan")),
    lambda: bayeserr.design_effect_icc(0.5, 0.1),                # cluster size < 1
    lambda: bayeserr.tie_zone(1.5, 100),
    lambda: bayeserr.tie_zone(0.5, 0),
    lambda: bayeserr.n_for_tie_zone(0.0, 0.5),
])
def test_out_of_range_planning_inputs_raise(call):
    """Never a negative or NaN question count: a clear InputError instead."""
    with pytest.raises(bayeserr.InputError):
        call()


def _clustered_pilots(reps, n_clusters, m, icc, seed):
    """``reps`` pilot pairs (A_r, B_r) on the same clustered questions, loaded
    as one dataset: d_i = A_i − B_i has intra-cluster correlation ``icc``
    (a cluster effect on A only), total variance 0.05² (scores stay inside
    [0, 1]: the nearest bound is 6 sd away)."""
    rng = np.random.default_rng(seed)
    n = n_clusters * m
    codes = np.repeat(np.arange(n_clusters), m)
    sd = 0.05
    u = rng.normal(0, sd * math.sqrt(icc), (reps, n_clusters))[:, codes]
    a = 0.6 + u + rng.normal(0, sd * math.sqrt((1 - icc) / 2), (reps, n))
    b = 0.3 + rng.normal(0, sd * math.sqrt((1 - icc) / 2), (reps, n))
    assert a.min() > 0 and b.max() < 1
    frames = [pd.DataFrame({"model": f"{name}{r}", "question_id": np.arange(n), "cluster_id": codes,
                            "score": x[r]})
              for r in range(reps) for name, x in (("A", a), ("B", b))]
    return bayeserr.load(pd.concat(frames, ignore_index=True))


def test_pilot_icc_estimate_recovers_a_known_icc():
    """200 simulated pilots, 60 clusters of 8, true ICC of the differences
    0.2.  The mean of from_pilot's ICC estimates must lie within 4 Monte
    Carlo SEs (sd of the estimates / √200) of the estimator's expectation,
    whose first-order value for equal clusters is computed below, and that
    expectation within 0.01 of the truth (the estimator's O(1/C) bias).

    With D = 1 + (m − 1)ρ, n = Cm: E Σ_c S_c² = (C − 1) m σ² D and
    E Σ e² = σ² (n − D), so the observed design effect
    1 + (n − 1)/n · (Σ S_c²/Σ e² − 1) has expectation ≈
    1 + (n − 1)/n · ((n − m) D/(n − D) − 1)."""
    reps, n_clusters, m, icc = 200, 60, 8, 0.2
    ds = _clustered_pilots(reps, n_clusters, m, icc, seed=7)
    est = np.array([bayeserr.from_pilot(ds, f"A{r}", f"B{r}").icc_estimate for r in range(reps)])
    n, d = n_clusters * m, 1 + (m - 1) * icc
    expected = ((n - 1) / n * ((n - m) * d / (n - d) - 1)) / (m - 1)
    mc_se = est.std(ddof=1) / math.sqrt(reps)
    assert abs(est.mean() - expected) < 4 * mc_se
    assert abs(expected - icc) < 0.01
    one = bayeserr.from_pilot(ds, "A0", "B0")
    assert one.cluster_size == m and one.icc == max(one.icc_estimate, 0.0)
    assert one.design_effect == pytest.approx(1 + (m - 1) * one.icc, rel=1e-14)


def test_negative_pilot_icc_is_noise_and_the_design_effect_is_floored():
    """Clusters of two questions whose differences are +x and −x: the
    residuals cancel within clusters, the observed design effect is below 1
    and the ICC estimate negative.  Planning uses ICC 0 and design effect 1,
    and says so."""
    rng = np.random.default_rng(8)
    n = 200
    x = rng.uniform(0.05, 0.3, n // 2)
    d = np.ravel(np.c_[x, -x])
    frame = pd.DataFrame({"model": np.repeat(["A", "B"], n), "question_id": np.tile(np.arange(n), 2),
                          "cluster_id": np.tile(np.arange(n) // 2, 2),
                          "score": np.r_[0.5 + d / 2, 0.5 - d / 2]})
    est = bayeserr.from_pilot(bayeserr.load(frame), "A", "B")
    assert est.icc_estimate < 0 and est.deff_floored is True
    assert est.icc == 0.0 and est.design_effect == 1.0
    assert est.to_dict()["deff_floored"] is True
    assert bayeserr.n_required(0.03, est.omega2, deff=est.design_effect) == bayeserr.n_required(0.03, est.omega2)


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
    """K = 16 answers to 3,000 questions; x_A ~ Beta(2, 2), x_B = (x_A + v)/2
    with v ~ Beta(2, 2) independent, so ω² = Var((x_A − v)/2) = 0.1/4 =
    0.025, σ_A² = E[x(1 − x)] = 0.2 and σ_B² = 0.5 − (0.025 + 0.25) = 0.225.
    Each estimate is a mean over questions of a per-question term (for ω²:
    (d_i − d̄)² − (σ̂²_A,i + σ̂²_B,i)/K), so its sampling SE is the sd of those
    terms / √n; each must lie within 4 such SEs of the truth."""
    rng = np.random.default_rng(3)
    n, k = 3000, 16
    x_a = rng.beta(2, 2, n)
    x_b = (x_a + rng.beta(2, 2, n)) / 2
    ans = {m: (rng.random((n, k)) < x[:, None]).astype(float) for m, x in (("A", x_a), ("B", x_b))}
    frame = pd.concat([pd.DataFrame({"model": m, "question_id": np.repeat(np.arange(n), k),
                                     "sample": np.tile(np.arange(k), n), "score": a.ravel()})
                       for m, a in ans.items()], ignore_index=True)
    est = bayeserr.from_pilot(bayeserr.load(frame), "A", "B")
    s2 = {m: a.var(axis=1, ddof=1) for m, a in ans.items()}
    d = ans["A"].mean(axis=1) - ans["B"].mean(axis=1)
    t_omega = (d - d.mean()) ** 2 - (s2["A"] + s2["B"]) / k
    se_omega = t_omega.std(ddof=1) / math.sqrt(n)
    assert abs(est.omega2 - 0.025) < 4 * se_omega
    assert se_omega < 0.1 * 0.025  # the check has teeth: the SE is under a tenth of ω²
    for m, truth, got in (("A", 0.2, est.sigma2_a), ("B", 0.225, est.sigma2_b)):
        assert abs(got - truth) < 4 * s2[m].std(ddof=1) / math.sqrt(n), m
    assert est.k_a == k and est.icc is None and est.design_effect == 1 and est.deff_floored is False


def test_pilot_with_clusters_reads_icc_off_the_design_effect():
    from bayeserr.examples import example_path
    ds = bayeserr.load(example_path())
    est = bayeserr.from_pilot(ds, "ckpt-0426", "ckpt-0412")
    import pandas as pd
    sizes = pd.read_csv(example_path()).drop_duplicates("question_id")["cluster_id"].value_counts()
    # the size-weighted mean cluster size n / C_eff = Σ n_c² / n (unequal article sizes)
    assert est.cluster_size == pytest.approx((sizes**2).sum() / sizes.sum(), rel=1e-12)
    assert est.design_effect == pytest.approx(1 + (est.cluster_size - 1) * est.icc)


def test_power_pilot_takes_the_report_column_options(cli_json):
    path = real_file("matharena_aime2025_II_per_run.csv.gz")
    import pandas as pd
    models = pd.read_csv(path)["model"].unique()[:2]
    out = cli_json("power", "--pilot", path, *models, "--delta", 0.05, "--sample-col", "run")
    assert out["pilot"]["k_a"] > 1 and out["n_required"] > 0


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
