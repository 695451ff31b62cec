"""The release gate's lab (``bayeserr.lab.gate``; ``docs/calibration.md``, "The release
gate's size at the margin"): the simulation runs the gate's own decision, the size at the
margin holds on a small seeded run while a candidate as good as the baseline passes more
often, the published section is exactly what the CSV beside it says, and
``bayeserr simulate gate --publish`` replaces its own section of the page and nothing else."""

from __future__ import annotations

import io
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeserr.analyses.gate import gate
from bayeserr.lab import gate as lab

from ..conftest import real_file

DOCS = Path(__file__).resolve().parents[2] / "docs"
ALPHA = 0.05


def _slack(reps: int, k: float = 3.0) -> float:
    """k Monte Carlo SEs of a rate of 5%."""
    return k * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def _frame(a, b, codes, tasks=None) -> pd.DataFrame:
    """A results table of one replicate, built here (not by the lab)."""
    n = len(a)
    q = [f"item{i}" for i in range(n)]
    out = pd.DataFrame({"model": ["cand"] * n + ["base"] * n, "question_id": q * 2,
                        "score": np.concatenate([a, b])})
    if codes is not None:
        out["cluster_id"] = [f"repo{c}" for c in codes] * 2
    if tasks is not None:
        out["task"] = [f"task{t}" for t in tasks] * 2
    return out


# ------------------------------------------------------------------ the design
def test_swebench_sizes_are_the_real_files_and_scale_to_100():
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    real = pd.read_csv(path).drop_duplicates("question_id")["cluster_id"].value_counts()
    assert tuple(sorted(real.tolist(), reverse=True)) == lab.SWEBENCH_SIZES


def test_scaled_sizes_keep_every_cluster_and_the_shares():
    assert lab.scaled_sizes(lab.SWEBENCH_SIZES, 500) == lab.SWEBENCH_SIZES
    small = lab.scaled_sizes(lab.SWEBENCH_SIZES, 100)
    assert small == (46, 15, 9, 7, 6, 4, 4, 4, 2, 1, 1, 1) and sum(small) == 100
    for n in (12, 37, 250, 1000):
        s = np.array(lab.scaled_sizes(lab.SWEBENCH_SIZES, n))
        share = np.array(lab.SWEBENCH_SIZES) / 500
        assert s.sum() == n and (s >= 1).all() and np.abs(s / n - share).max() < 12 / n


@pytest.mark.parametrize("clusters, tau, truth", [("none", 0.0, -0.05), ("swebench", 0.1, -0.05),
                                                  ("swebench", 0.1, 0.02), ("suite", 0.1, -0.05)])
def test_the_true_difference_is_the_designs(clusters, tau, truth):
    """Cluster effects are clipped symmetrically, so E[a − b] stays exactly Δ (τ = 0.1 clips a lot)."""
    d = lab.GateDesign(500, clusters, tau, abs(truth), "non-inferiority", truth)
    a, b = lab.draw(d, 20_000, np.random.default_rng(4))
    diff = (a - b).mean(axis=1)
    se = diff.std(ddof=1) / math.sqrt(len(diff))
    assert abs(diff.mean() - truth) < 4 * se, (diff.mean(), se)
    assert set(np.unique(a)) <= {0.0, 1.0} and np.mean(a != b) == pytest.approx(lab.DISAGREE, abs=0.005)


# ------------------------------------------------------------------ the gate's own decision
@pytest.mark.parametrize("clusters, tau", [("none", 0.0), ("swebench", 0.05), ("suite", 0.05)])
@pytest.mark.parametrize("mode, sign", [("non-inferiority", -1.0), ("superiority", 1.0), ("non-inferiority", 0.0)])
def test_the_lab_decides_as_bayeserr_gate_does(clusters, tau, mode, sign):
    """On the lab's own replicates, its vectorized decision is the verdict, p and bound of
    ``bayeserr.gate`` run on a results table (a wrong null, SE or df would show here); a
    suite design is gated with ``suite="macro"`` on a table with a task column."""
    m = 0.02
    d = lab.GateDesign(100, clusters, tau, m, mode, sign * m)
    a, b = lab.draw(d, 6, np.random.default_rng(21))
    dec = lab.gate_decision(a, b, d.codes, d.null, tasks=d.tasks)
    for r in range(6):
        c = gate(_frame(a[r], b[r], d.codes, d.tasks), "cand", "base", m, mode=mode, bayes="off",
                 suite="macro" if clusters == "suite" else None).checks[0]
        assert c.passed == bool(dec.p_value[r] < ALPHA)
        assert c.p_decision == pytest.approx(dec.p_value[r], rel=1e-9, abs=1e-12)
        assert c.bound == pytest.approx(dec.lower[r], rel=1e-6, abs=1e-9)
        # without clusters: the paired z, or the score test on 0/1 answers (bayeserr.analyses.gate)
        assert c.test in {"none": ("z_paired", "score_tango"), "swebench": ("t_cr2_bm",),
                          "suite": ("t_suite_macro",)}[clusters]
        assert (c.wild is not None) == bool(dec.wild_rows[r])


def test_a_suite_design_is_two_tasks_one_clustered():
    d = lab.GateDesign(100, "suite", 0.05, 0.02, "non-inferiority", -0.02)
    assert d.sizes == lab.scaled_sizes(lab.SWEBENCH_SIZES, 50) and d.suite
    assert d.tasks.tolist() == [0] * 50 + [1] * 50
    assert len(np.unique(d.codes[:50])) == 12 and len(np.unique(d.codes[50:])) == 50  # own clusters
    assert not set(d.codes[:50]) & set(d.codes[50:])
    with pytest.raises(Exception, match="too small"):
        lab.GateDesign(24, "suite", 0.0, 0.02, "non-inferiority", -0.02)


def test_a_cell_stops_when_its_decision_differs_from_the_gates(monkeypatch):
    """The published run checks its first replicates against ``bayeserr.gate``."""
    real = lab.gate_decision

    def wrong(a, b, codes, null, level=0.95, seed=0, inputs=None, tasks=None):
        return real(a, b, codes, -null, level, seed, tasks=tasks)  # the wrong side of the margin

    monkeypatch.setattr(lab, "gate_decision", wrong)
    with pytest.raises(RuntimeError, match="differs from bayeserr.gate"):
        lab.gate_cell(lab.GateDesign(100, "none", 0.0, 0.05, "non-inferiority", 0.05), 50, seed=1, verify=20)


# ------------------------------------------------------------------ size and power, small seeded run
def test_size_at_the_margin_and_power_at_zero():
    """A seeded run of a few cells (about 5 s): at the margin the gate passes at most
    5% + 3 MC SE of the time (non-inferiority and superiority, with and without
    SWE-bench's clusters); at a true difference of 0 the non-inferiority gate passes
    clearly more often than that bound."""
    reps = 1500
    grid = lab.designs(n=(500,), clusters=("none", "swebench"), taus=(0.05,), margins=(0.05,))
    df = lab.run_gate(grid, reps, seed=3, verify=2)
    assert len(df) == 6 and (df.reps == reps).all()
    size, power = df[df.measures == "size"], df[df.measures == "power"]
    assert set(size["mode"]) == {"non-inferiority", "superiority"} and set(power["mode"]) == {"non-inferiority"}
    for _, r in size.iterrows():
        assert r["pass_rate"] <= ALPHA + _slack(reps), r.to_dict()
        assert r["truth"] == (-r["margin"] if r["mode"] == "non-inferiority" else r["margin"])
    for _, r in power.iterrows():
        assert r["truth"] == 0 and r["pass_rate"] > ALPHA + _slack(reps), r.to_dict()
    # with SWE-bench's clusters (BM df 3.3) the wild bootstrap runs on every replicate, and
    # the gate passes only when the CR2 t test passes too
    cl = df[df.clusters == "swebench"]
    assert (cl["wild_share"] == 1).all() and (cl["df"] < 10).all()
    assert (cl["pass_rate"] <= cl["t_pass_rate"]).all()
    assert (df[df.clusters == "none"]["wild_share"] == 0).all()
    # the gate's own power estimate is reported where it applies, and is a probability
    assert power["gate_power_estimate"].between(0, 1).all() and size["gate_power_estimate"].isna().all()
    # Monte Carlo SE as stated
    assert np.allclose(df["pass_se"], np.sqrt(df["pass_rate"] * (1 - df["pass_rate"]) / reps))


def test_suite_size_at_the_margin_and_power_at_zero():
    """A seeded run of the suite cells (two tasks, SWE-bench's clusters in one; the gate's
    ``suite="macro"``): the size at the margin is at most 5% + 3 MC SE, no wild bootstrap,
    and a candidate as good as the baseline passes clearly more often."""
    reps = 2000
    grid = lab.designs(n=(500,), clusters=("suite",), taus=(0.05,), margins=(0.02,))
    df = lab.run_gate(grid, reps, seed=5, verify=2)
    size, power = df[df.measures == "size"], df[df.measures == "power"]
    assert len(size) == 2 and len(power) == 1 and (df.clusters == "suite").all()
    assert (size["pass_rate"] <= ALPHA + _slack(reps)).all(), size[["mode", "pass_rate"]]
    assert (power["pass_rate"] > ALPHA + _slack(reps)).all()
    assert (df["wild_share"] == 0).all() and (df["pass_rate"] == df["t_pass_rate"]).all()
    assert df["df"].between(2, 499).all()  # the median df (S2) of the replicates
    section = "\n".join(lab.gate_section(df, "cmd"))
    assert "In a suite design" in section and "- **A suite**" in section
    assert section.count("| 500 | suite of 2 tasks (macro)") == 1


def test_the_run_is_seeded():
    grid = lab.designs(n=(100,), clusters=("swebench",), taus=(0.05,), margins=(0.02,))
    one, two = lab.run_gate(grid, 40, seed=8), lab.run_gate(grid, 40, seed=8)
    pd.testing.assert_frame_equal(one, two)
    assert list(one["seed"]) == [8, 1008, 2008]


# ------------------------------------------------------------------ the published section
def _section(page: str) -> str:
    assert page.count(lab.SECTION_START) == 1 and page.count(lab.SECTION_END) == 1
    return lab.SECTION_START + page.split(lab.SECTION_START, 1)[1].split(lab.SECTION_END, 1)[0] + lab.SECTION_END


PM = re.compile(r"^\**(\d+\.\d) ± (\d+\.\d)\**$")


def test_the_published_section_is_the_csvs():
    """docs/calibration.md's gate section is exactly what docs/calibration_gate.csv gives
    (every number of its table and its paragraphs), the grid is the published one, and
    every size's Monte Carlo SE is at most 0.5 points."""
    csv = DOCS / "calibration_gate.csv"
    if not csv.exists():
        pytest.skip("the gate study has not been published")
    df = pd.read_csv(csv)
    page = (DOCS / "calibration.md").read_text()
    section = _section(page)
    command = re.search(r"Reproduce: `([^`]+)`", section).group(1)
    assert command.startswith("bayeserr simulate gate ") and f"--reps {int(df.reps.min())}" in command
    assert section == "\n".join(lab.gate_section(df, command))
    # the grid: every published design × margin × case, once
    grid = lab.designs()
    assert len(df) == len(grid)
    for d, (_, r) in zip(grid, df.iterrows()):
        assert (r["n"], r["clusters"], r["tau"], r["margin"], r["mode"], r["truth"]) == (
            d.n, d.clusters, d.tau, d.margin, d.mode, d.truth)
    assert (df.reps >= 2000).all() and (df[df.measures == "size"]["pass_se"] <= 0.005).all()
    # the table, parsed: each line's rates are the CSV's, rounded as shown
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == len(df) // len(lab.CASES)
    keyed = df.set_index(["n", "clusters", "tau", "margin", "mode", "measures"])
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        n, clusters, margin = int(cells[0]), cells[1], float(cells[2])
        kind = "none" if clusters == "none" else "suite" if clusters.startswith("suite") else "swebench"
        tau = 0.0 if kind == "none" else float(re.search(r"τ = ([\d.]+)", clusters).group(1))
        for cell, mode, what in zip(cells[3:6], ("non-inferiority", "superiority", "non-inferiority"),
                                    ("size", "size", "power")):
            r = keyed.loc[(n, kind, tau, margin, mode, what)]
            rate, se = PM.match(cell).groups()
            assert (rate, se) == (f"{100 * r['pass_rate']:.1f}", f"{100 * r['pass_se']:.1f}")
            assert abs(float(rate) - 100 * r["pass_rate"]) <= 0.05 + 1e-9
            bold = cell.startswith("**")
            assert bold == (what == "size" and bool(lab.clearly_above(r["pass_rate"], r["reps"])))
        estimate = keyed.loc[(n, kind, tau, margin, "non-inferiority", "power"), "gate_power_estimate"]
        assert cells[6] == f"{100 * estimate:.1f}%"


# ------------------------------------------------------------------ the command
def _outside(page: str) -> str:
    if lab.SECTION_START not in page:
        return page.rstrip("\n")
    head, rest = page.split(lab.SECTION_START, 1)
    return (head + rest.split(lab.SECTION_END, 1)[1]).rstrip("\n")


def test_publish_replaces_only_its_own_section(tmp_path, cli):
    page = tmp_path / "calibration.md"
    shutil.copy(DOCS / "calibration.md", page)
    before = page.read_text()
    args = ["simulate", "gate", "--n", "100", "--clusters", "none,swebench", "--tau", "0.05", "--margin", "0.02",
            "--reps", "20", "--seed", "5", "--format", "csv", "--publish", page]
    first = cli(*args)
    assert first.exit_code == 0, first.output
    once = page.read_text()
    second = cli(*args)
    assert second.exit_code == 0 and second.stdout == first.stdout
    twice = page.read_text()
    assert twice == once and twice.count(lab.SECTION_START) == 1 and twice.count(lab.SECTION_END) == 1
    assert _outside(twice) == _outside(before)  # the rest of the page, ranking section included, unchanged
    csv = pd.read_csv(tmp_path / "calibration_gate.csv")
    assert len(csv) == 6 and (csv.reps == 20).all()
    assert _section(twice) == "\n".join(lab.gate_section(csv, f"bayeserr simulate gate --n 100 --clusters "
                                                              f"none,swebench --tau 0.05 --margin 0.02 --reps 20 "
                                                              f"--seed 5 --publish {page}"))
    assert pd.read_csv(io.StringIO(first.stdout)).equals(csv)
    # a page without the section gets it appended at the end, the rest untouched
    bare = tmp_path / "bare" / "calibration.md"
    bare.parent.mkdir()
    bare.write_text(_outside(before) + "\n")
    res = cli(*args[:-1], bare.parent)  # a folder: its calibration.md
    assert res.exit_code == 0, res.output
    text = bare.read_text()
    assert text.startswith(_outside(before)) and text.rstrip("\n").endswith(lab.SECTION_END)
    assert text.count(lab.SECTION_START) == 1


def test_bad_options_are_clear_errors(cli):
    for args, word in ((["--clusters", "ranked"], "--clusters"), (["--margin", "0.3"], "--margin"),
                       (["--tau", "-1"], "--tau"), (["--n", "5", "--clusters", "swebench"], "--n")):
        res = cli("simulate", "gate", *args, "--reps", "10")
        assert res.exit_code == 2 and word in res.output and "Traceback" not in res.output


def test_the_commands_defaults_are_the_published_grid():
    from bayeserr.cli.lab import calibration_docs, simulate_gate
    defaults = {p.name: p.default for p in simulate_gate.params}
    published = lab.PUBLISHED
    assert defaults["n_text"] == ",".join(str(n) for n in published["n"])
    assert defaults["clusters_text"] == ",".join(published["clusters"])
    assert defaults["tau_text"] == ",".join(f"{t:g}" for t in published["taus"])
    assert defaults["margin_text"] == ",".join(f"{m:g}" for m in published["margins"])
    assert defaults["reps"] == lab.PUBLISHED_REPS
    assert {p.name: p.default for p in calibration_docs.params}["gate_reps"] == lab.PUBLISHED_REPS


@pytest.mark.slow
def test_calibration_docs_keeps_the_ranking_section_and_writes_the_gates(tmp_path, cli):
    """A full regeneration (tiny replicates, about 10 s): the gate's section and CSV are
    written, and the ranking section, published by its own command, is kept as it was."""
    shutil.copy(DOCS / "calibration.md", tmp_path / "calibration.md")
    before = (tmp_path / "calibration.md").read_text()
    res = cli("simulate", "calibration-docs", "--output", tmp_path, "--reps", "10", "--fewcluster-reps", "10",
              "--prior-reps", "10", "--gate-reps", "10", "--sequential-reps", "10",
              "--sequential-saved-reps", "10", "--judge-reps", "10")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "calibration.md").read_text()
    from bayeserr.lab import ranking
    for start, end in ((ranking.SECTION_START, ranking.SECTION_END), (lab.SECTION_START, lab.SECTION_END)):
        assert page.count(start) == 1 and page.count(end) == 1
    keep = before.split(ranking.SECTION_START, 1)[1].split(ranking.SECTION_END, 1)[0]
    assert keep in page
    csv = pd.read_csv(tmp_path / "calibration_gate.csv")
    assert len(csv) == len(lab.designs()) and (csv.reps == 10).all()
    assert _section(page) == "\n".join(lab.gate_section(
        csv, f"bayeserr simulate gate --reps 10 --seed 0 --publish {tmp_path / 'calibration.md'}"))
