"""Planning in the terms people think in (docs/methods.md §4.6): ω² of (M9)
from a baseline accuracy and the correlation of two models' 0/1 answers,
``--baseline/--target`` for independent samples, and usage errors that say
what to give."""

import json
import math
import re
import shlex

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

import bayeserr
from bayeserr.stats.planning import mde_binary, omega2_binary, rho_range

POINTS = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], float)  # (s_A, s_B): cells 11, 10, 01, 00


def _cells(p_a, p_b, p11):
    return np.array([p11, p_a - p11, p_b - p11, 1 - p_a - p_b + p11])


def _corr(w):
    """Pearson correlation of s_A and s_B under the cell probabilities ``w``."""
    c = np.cov(POINTS.T, aweights=w, bias=True)
    return c[0, 1] / math.sqrt(c[0, 0] * c[1, 1])


def _joint_table(p_a, p_b, rho):
    """The 2×2 distribution of (s_A, s_B) with these marginals whose Pearson
    correlation is ``rho``, found without the closed form: P(both right) is
    solved numerically so that the weighted correlation of the four points
    equals ``rho``.  Returns points (4 × 2) and their probabilities."""
    low, high = max(0.0, p_a + p_b - 1), min(p_a, p_b)
    p11 = brentq(lambda x: _corr(_cells(p_a, p_b, x)) - rho, low, high, xtol=1e-15)
    w = _cells(p_a, p_b, p11)
    assert np.all(w >= -1e-15) and w.sum() == pytest.approx(1)
    return POINTS, w


def _var_diff(points, w):
    d = points[:, 0] - points[:, 1]
    return float(np.sum(w * d**2) - np.sum(w * d) ** 2)


CASES = [(0.75, 0.6, 0.03), (0.5, 0.3, 0.05), (0.2, 0.0, 0.02), (0.9, -0.05, 0.04), (0.6, 0.8, 0.01)]


@pytest.mark.parametrize("p, rho, delta", CASES)
def test_p_rho_delta_is_m9_with_the_omega2_of_the_joint_table(p, rho, delta, cli_json):
    omega2 = _var_diff(*_joint_table(p, p + delta, rho))
    assert omega2_binary(p, p + delta, rho) == pytest.approx(omega2, rel=1e-9)
    out = cli_json("power", "--p", p, "--rho", rho, "--delta", delta)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert out["n_required"] == math.ceil(z**2 * omega2 / delta**2 - 1e-9)
    assert out["omega2"] == out["omega2_implied"] == pytest.approx(omega2, rel=1e-9)
    assert (out["p"], out["rho"], out["delta"]) == (p, rho, delta)
    assert out["p_target"] == pytest.approx(p + delta)
    assert out["schema"] == "bayeserr.power/1" and out["design"] == "paired"
    # the same plan as --omega2 with the implied value: the link to (M9) is exact
    same = cli_json("power", "--omega2", repr(out["omega2"]), "--delta", delta)
    assert same["n_required"] == out["n_required"]
    assert bayeserr.plan(p=p, rho=rho, delta=delta).to_dict() == out


def test_markdown_shows_the_implied_omega2(cli):
    res = cli("power", "--p", 0.75, "--rho", 0.6, "--delta", 0.03)
    assert res.exit_code == 0
    assert res.output.startswith("1255 questions")
    assert "ω² = 0.1439" in res.output and "(M9)" in res.output and "p_B = 0.78" in res.output


def test_example_numbers_of_the_docs():
    """docs/methods.md §4.6: 0.75 vs 0.78 at ρ = 0.6."""
    assert omega2_binary(0.75, 0.78, 0.6) == pytest.approx(0.14385, abs=1e-5)
    assert math.ceil(bayeserr.n_required(0.03, omega2_binary(0.75, 0.78, 0.6))) == 1255
    assert math.ceil(bayeserr.n_required(0.03, omega2_binary(0.75, 0.78, 0.0))) == \
        math.ceil(bayeserr.n_unpaired(0.75, 0.78)) == 3132


def test_rho_range_is_the_frechet_bounds():
    """The ends of the range are the correlations of the tables with an empty
    cell: P(both right) at max(0, p_A + p_B − 1) and at min(p_A, p_B)."""
    for p_a, p_b in [(0.75, 0.78), (0.1, 0.95), (0.5, 0.5), (0.3, 0.6)]:
        low, high = rho_range(p_a, p_b)
        assert low == pytest.approx(_corr(_cells(p_a, p_b, max(0.0, p_a + p_b - 1))), abs=1e-12)
        assert high == pytest.approx(_corr(_cells(p_a, p_b, min(p_a, p_b))), abs=1e-12)
        assert omega2_binary(p_a, p_b, high) >= 0 and omega2_binary(p_a, p_b, low) > 0
        with pytest.raises(bayeserr.InputError, match="must lie in"):
            omega2_binary(p_a, p_b, high + 1e-6)
        with pytest.raises(bayeserr.InputError, match="must lie in"):
            omega2_binary(p_a, p_b, low - 1e-6)


@pytest.mark.parametrize("rho", [0.95, -0.5])
def test_impossible_rho_exits_2_naming_the_range(rho, cli):
    res = cli("power", "--p", 0.75, "--rho", rho, "--delta", 0.03)
    assert res.exit_code == 2 and "Traceback" not in res.output
    lo, hi = map(float, re.search(r"must lie in \[(\S+), (\S+)\]", res.output).groups())
    low, high = rho_range(0.75, 0.78)
    assert low <= lo < low + 1e-3 and high - 1e-3 < hi <= high  # rounded inward: each shown end is feasible
    assert cli("power", "--p", 0.75, "--rho", hi, "--delta", 0.03).exit_code == 0


def test_target_accuracy_above_one_exits_2(cli):
    res = cli("power", "--p", 0.98, "--rho", 0.5, "--delta", 0.03)
    assert res.exit_code == 2 and "below 1" in res.output


def test_mde_from_p_and_rho_inverts_m9(cli_json):
    """With --n instead of --delta the target p + δ depends on δ: the δ returned
    must give back n through (M9) with the ω² at p + δ."""
    out = cli_json("power", "--p", 0.75, "--rho", 0.6, "--n", 500)
    eff = out["mde"]
    assert out["p_target"] == pytest.approx(0.75 + eff)
    assert out["omega2_implied"] == pytest.approx(omega2_binary(0.75, 0.75 + eff, 0.6))
    assert bayeserr.n_required(eff, omega2_binary(0.75, 0.75 + eff, 0.6)) == pytest.approx(500, rel=1e-9)
    with pytest.raises(bayeserr.InputError, match="larger --n"):
        mde_binary(3, 0.75, 0.6)
    with pytest.raises(bayeserr.InputError, match="impossible"):
        mde_binary(500, 0.75, 0.99)  # feasible only for gaps too small to detect


def test_baseline_target_is_unpaired(cli_json, cli):
    for a, b in [(0.8, 0.83), (0.5, 0.4), (0.05, 0.1)]:
        new = cli_json("power", "--baseline", a, "--target", b)
        old = cli_json("power", "--unpaired", a, b)
        assert new == old and new["n_required"] == math.ceil(bayeserr.n_unpaired(a, b))
    assert cli_json("power", "--baseline", 0.8, "--target", 0.83)["n_required"] == 2626
    res = cli("power", "--baseline", 0.8, "--target", 0.83, "--unpaired", 0.8, 0.83)
    assert res.exit_code == 2 and "--unpaired" in res.output and "--baseline" in res.output
    res = cli("power", "--baseline", 0.8)
    assert res.exit_code == 2 and "--target" in res.output


def test_no_arguments_prints_usage_with_examples_that_run(cli):
    res = cli("power")
    assert res.exit_code == 2 and res.stdout == ""
    assert "Traceback" not in res.stderr and "Usage:" in res.stderr and "Examples:" in res.stderr
    examples = [line.strip() for line in res.stderr.splitlines() if line.strip().startswith("bayeserr power")]
    assert len(examples) >= 2
    for line in examples:
        args = shlex.split(line, comments=True)[2:]
        ran = cli("power", *args, "--format", "json")
        assert ran.exit_code == 0, (line, ran.output)
        assert json.loads(ran.stdout)["schema"] == "bayeserr.power/1"


@pytest.mark.parametrize("args, names", [
    (("--delta", 0.03), ("--omega2", "--p", "--rho", "--pilot")),
    (("--p", 0.75, "--delta", 0.03), ("--rho",)),
    (("--rho", 0.5, "--delta", 0.03), ("--p",)),
    (("--p", 0.75, "--rho", 0.5), ("--delta", "--n")),
    (("--omega2", 0.1), ("--delta", "--n")),
    (("--omega2", 0.1, "--p", 0.75, "--rho", 0.5, "--delta", 0.03), ("--omega2", "--p")),
    (("--p", 0.75, "--rho", 0.5, "--delta", 0.03, "--sigma2-a", 0.1), ("--sigma2-a",)),
    (("--baseline", 0.8, "--target", 0.83, "--delta", 0.03), ("--delta",)),
    (("--omega2", 0.1, "--delta", 0.03, "--n", 100), ("--delta", "--n")),
    (("--omega2", 0.1, "--delta", 0.03, "--icc", 0.1), ("--cluster-size",)),
    (("--tie-zone", 0.8), ("--delta", "--n")),
])
def test_inconsistent_inputs_name_what_to_give(args, names, cli):
    res = cli("power", *args)
    assert res.exit_code == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert res.stderr.startswith("error: ")
    for name in names:
        assert name in res.stderr, (name, res.stderr)


@pytest.mark.parametrize("p, rho, delta, alpha, power, seed", [
    (0.75, 0.6, 0.03, 0.05, 0.8, 11),
    (0.5, 0.2, 0.05, 0.01, 0.9, 12),
])
def test_simulated_power_at_the_planned_n(p, rho, delta, alpha, power, seed, cli_json):
    """Draw the 2×2 cells of each simulated eval from the joint multinomial of
    (s_A, s_B) at the planned n and test with the paired z test at alpha:
    the share of rejections must be within 4 Monte Carlo SEs of the power asked."""
    reps = 2000
    n = cli_json("power", "--p", p, "--rho", rho, "--delta", delta, "--alpha", alpha,
                 "--power", power)["n_required"]
    points, w = _joint_table(p, p + delta, rho)
    counts = np.random.default_rng(seed).multinomial(n, w, size=reps)  # cells 11, 10, 01, 00
    a_only, b_only = counts[:, 1], counts[:, 2]
    mean = (a_only - b_only) / n
    var = (a_only + b_only - n * mean**2) / (n - 1)
    z = mean / np.sqrt(var / n)
    rate = np.mean(np.abs(z) > stats.norm.ppf(1 - alpha / 2))
    assert abs(rate - power) < 4 * math.sqrt(power * (1 - power) / reps), (n, rate)


def test_lab_generator_agrees_on_omega2():
    """The lab's latent-difficulty model (bayeserr simulate), set to give 0/1
    answers the correlation ρ, has the same Var(s_A − s_B) as the formula."""
    from dataclasses import replace

    from bayeserr.lab import simulate as sim
    design = sim.Design(accuracy=0.78, gap=0.03, spread=3.0)  # μ_A = 0.78, μ_B = 0.75
    design = replace(design, rho=sim.rho_for_binary_correlation(design, 0.6))
    assert sim.binary_correlation(design) == pytest.approx(0.6, abs=1e-6)
    assert sim.true_omega2(design) == pytest.approx(omega2_binary(0.75, 0.78, 0.6), abs=1e-5)


def test_where_filters_the_pilot_rows_and_needs_a_pilot(tmp_path, cli_json, cli):
    """--where on a pilot = the pilot pre-filtered; without --pilot it is an error."""
    import pandas as pd
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"model": np.repeat(["A", "B"], n), "question_id": np.tile(np.arange(n), 2),
                       "split": np.tile(np.where(np.arange(n) < 150, "dev", "test"), 2),
                       "score": rng.integers(0, 2, 2 * n)})
    full, part = tmp_path / "pilot.csv", tmp_path / "test_only.csv"
    df.to_csv(full, index=False)
    df[df.split == "test"].to_csv(part, index=False)
    filtered = cli_json("power", "--pilot", full, "A", "B", "--where", "split=test", "--delta", "0.05")
    direct = cli_json("power", "--pilot", part, "A", "B", "--delta", "0.05")
    assert filtered["pilot"]["n_pilot"] == direct["pilot"]["n_pilot"] == 250
    assert filtered["n_required"] == direct["n_required"]
    assert filtered["omega2"] == pytest.approx(direct["omega2"], rel=1e-12)
    out = cli("power", "--delta", "0.05", "--omega2", "0.2", "--where", "split=test")
    assert out.exit_code == 2
    assert "--pilot" in out.output and "Traceback" not in out.output
