"""The confidence sequences' lab (``bayeserr.lab.sequential``; ``docs/calibration.md``,
"Anytime-valid confidence sequences"): the design's truths are exact, the lab runs the
sequences and tests ``bayeserr watch`` and the report run, a 95% sequence ever excludes
the truth at most 5% of the time over every look while naive peeking at the fixed-n test
does far more often, the published section is exactly what the CSV beside it says, and
``bayeserr simulate sequential --publish`` replaces its own section and nothing else."""

from __future__ import annotations

import io
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from scipy.stats import t as student

from bayeserr.analyses.sequential import Rules, watch_scores
from bayeserr.lab import gate as gate_lab
from bayeserr.lab import sequential as lab
from bayeserr.stats import sequential as seq
from bayeserr.stats.estimators import se_clt
from bayeserr.stats.fewclusters import cr2_mean
from bayeserr.stats.planning import n_required

DOCS = Path(__file__).resolve().parents[2] / "docs"
ALPHA = 0.05


def _bound(reps: int, k: float = 3.0) -> float:
    """5% plus k Monte Carlo SEs of a rate of 5%."""
    return ALPHA + k * math.sqrt(ALPHA * (1 - ALPHA) / reps)


# ------------------------------------------------------------------ the design
def test_the_clustered_design_is_swebench_ten_times_in_a_random_order():
    assert lab.SIZES == tuple(s for s in gate_lab.SWEBENCH_SIZES for _ in range(10))
    assert len(lab.SIZES) == 120 and lab.N_MAX == sum(lab.SIZES) == 5000
    d = lab.draw(0.0, "swebench", 4, np.random.default_rng(1))
    orders = []
    for r in range(4):
        # each cluster's questions arrive together, where starts/ends say, with the cluster's size
        seen = d.codes[r][d.starts[r]]
        orders.append(tuple(seen))
        assert sorted(seen) == list(range(120))
        for c, s, e in zip(seen, d.starts[r], d.ends[r]):
            assert (d.codes[r][s:e] == c).all() and e - s == lab.SIZES[c]
    assert len(set(orders)) == 4  # a new order in every data set
    assert lab.draw(0.0, "none", 2, np.random.default_rng(1)).codes is None


@pytest.mark.parametrize("clusters, gap", [("none", 0.0), ("swebench", 0.0), ("swebench", 0.2)])
def test_the_truths_are_exact(clusters, gap):
    """E[a − b] is the gap and E[a] is ``true_mean`` even with clipped cluster effects (at a gap
    of 0.2 the difference's effect is clipped at ±0.099); the models disagree on 30%."""
    reps = 600
    d = lab.draw(gap, clusters, reps, np.random.default_rng(2))
    for x, truth in ((d.a - d.b, lab.true_difference(gap)), (d.a, lab.true_mean(gap))):
        m = x.mean(axis=1)
        assert abs(m.mean() - truth) < 4 * m.std(ddof=1) / math.sqrt(reps), (m.mean(), truth)
    assert lab.true_mean(0.0) == pytest.approx(lab.ACCURACY)
    assert np.mean(d.a != d.b) == pytest.approx(lab.DISAGREE, abs=0.003)
    assert set(np.unique(d.a)) <= {0.0, 1.0} and set(np.unique(d.b)) <= {0.0, 1.0}


def test_the_fixed_n_design_is_bayeserrs_planning():
    """(M9) with ω² = disagreement − gap², times the design effect with clusters."""
    for gap in lab.GAPS:
        omega2 = lab.DISAGREE - gap * gap
        assert lab.fixed_n(gap, "none") == math.ceil(n_required(gap, omega2))
        z = norm.isf(0.025) + norm.isf(0.2)
        assert lab.fixed_n(gap, "none") == math.ceil(z * z * omega2 / gap ** 2)
        deff = lab.design_effect(gap, "swebench")
        assert 1 < deff < 3 and lab.fixed_n(gap, "swebench") == math.ceil(n_required(gap, omega2, deff=deff))
    # the clipped normal's variance, by simulation
    x = np.clip(np.random.default_rng(3).normal(0, 0.05, 2_000_000), -0.06, 0.06)
    assert lab.clipped_variance(0.05, 0.06) == pytest.approx(x.var(), rel=0.01)


# ------------------------------------------------------------------ the lab runs bayeserr's own code
def test_the_fixed_n_test_is_the_reports():
    """At any look, the z test's SE is se_clt of the first t differences, and with clusters
    the CR2 SE and Bell–McCaffrey df are cr2_mean's on the first t questions."""
    looks = np.array([10, 37, 400, 1234, 5000])
    d = lab.draw(0.05, "swebench", 3, np.random.default_rng(5))
    x = d.a - d.b
    reject, half = lab.fixed_n_test(x, 0.0, looks, d.starts, d.ends)
    plain_reject, plain_half = lab.fixed_n_test(x, 0.0, looks)
    for r in range(3):
        for k, t in enumerate(looks):
            c = cr2_mean(x[r, :t], d.codes[r, :t])
            if np.isnan(c.se):  # one cluster begun: no test
                assert np.isnan(half[r, k]) and not reject[r, k]
                continue
            h = student.isf(0.025, c.df) * c.se
            assert half[r, k] == pytest.approx(h, rel=1e-9)
            assert reject[r, k] == (abs(c.mean) > h)
            hz = norm.isf(0.025) * se_clt(x[r, :t])
            assert plain_half[r, k] == pytest.approx(hz, rel=1e-9)
            assert plain_reject[r, k] == (abs(x[r, :t].mean()) > hz)


@pytest.mark.parametrize("clusters", ["none", "swebench"])
@pytest.mark.parametrize("method", ["betting", "asymptotic"])
def test_the_sequences_and_the_stop_are_bayeserr_watchs(clusters, method):
    """The lab's sequence is the one ``watch_scores`` builds, and its settle stop is watch's."""
    d = lab.draw(0.1, clusters, 2, np.random.default_rng(6))
    for r in range(2):
        codes = None if d.codes is None else d.codes[r]
        w = watch_scores(d.a[r], d.b[r], codes, rules=Rules(), method=method)
        s = lab.sequence(d.a[r], d.b[r], codes, method, "difference")
        np.testing.assert_array_equal(s.lower, w.sequence.lower)
        np.testing.assert_array_equal(s.upper, w.sequence.upper)
        assert s.unit == ("question" if clusters == "none" else "cluster")
        t, side = lab.settle(d.a[r], d.b[r], codes, method)
        if w.stop is None:
            assert (t, side) == (0, 0)
        else:
            assert (t, side) == (w.stop.t, 1 if w.stop.lower > 0 else -1)
        m = lab.sequence(d.a[r], d.b[r], codes, method, "mean")
        ref = seq.mean_cs(d.a[r], method, 1 - lab.LEVEL, clusters=codes)
        np.testing.assert_array_equal(m.lower, ref.lower)


def test_settling_on_prefixes_is_settling_on_the_whole_run():
    """Without clusters the settle rule is evaluated on growing prefixes: the stop is the
    first exclusion of the sequence on all 5,000 answers."""
    d = lab.draw(0.05, "none", 6, np.random.default_rng(7))
    for r in range(6):
        for method in lab.METHODS:
            full = seq.paired_cs(d.a[r], d.b[r], method)
            i = seq.first_exclusion(full.lower, full.upper, 0.0)
            assert lab.settle(d.a[r], d.b[r], None, method)[0] == (0 if i is None else i)


# ------------------------------------------------------------------ error over every look
def test_the_sequences_hold_5_percent_and_peeking_does_not():
    """A seeded run (about 6 s): at a true gap of 0, the betting sequence ever excludes the
    true A − B and the true mean in at most 5% + 3 MC SE of data sets, without and with
    SWE-bench's clusters; naive peeking at the fixed-n test every 10 questions rejects the
    true value in more than 15%."""
    grid = [lab.Cell("error", "none"), lab.Cell("error", "swebench")]
    df = pd.concat([lab.run_sequential(50, seed=11, grid=grid[:1]),
                    lab.run_sequential(100, seed=12, grid=grid[1:])])
    for _, r in df.iterrows():
        if r["procedure"] == "betting":
            assert r["rate"] <= _bound(r["reps"]), r.to_dict()
        if r["procedure"] in ("peek", "peek_plain"):
            assert r["rate"] > 0.15, r.to_dict()
    assert set(df.procedure) == set(lab.PROCEDURES) and set(df.estimand) == {"difference", "mean"}
    assert np.allclose(df["rate_se"], np.sqrt(df["rate"] * (1 - df["rate"]) / df["reps"]))
    assert not (df[df.clusters == "none"].procedure == "peek_plain").any()


@pytest.mark.slow
def test_the_error_over_every_look_with_more_data_sets():
    """The same with 600 data sets without clusters and 2,000 with (about 2 minutes): both
    sequences at most 5% + 3 MC SE, peeking far above."""
    grid = [lab.Cell("error", "none"), lab.Cell("error", "swebench")]
    df = pd.concat([lab.run_sequential(600, seed=21, grid=grid[:1], jobs=2),
                    lab.run_sequential(2000, seed=22, grid=grid[1:], jobs=2)])
    print(df[["clusters", "estimand", "procedure", "rate", "rate_se"]].to_string())
    for _, r in df.iterrows():
        if r["procedure"] in lab.METHODS:
            assert r["rate"] <= _bound(r["reps"]), r.to_dict()
        else:
            assert r["rate"] > 0.3, r.to_dict()


@pytest.mark.slow
def test_the_check_fails_when_the_clusters_are_ignored(monkeypatch):
    """The clustered check can fail: a lab that forgot the clusters (question-level
    sequences on clustered data) ever excludes A's true mean far more than 5%."""
    real = lab.sequence
    monkeypatch.setattr(lab, "sequence", lambda a, b, codes, method, estimand, alpha=ALPHA:
                        real(a, b, None, method, estimand, alpha))
    df = lab.run_sequential(100, seed=13, grid=[lab.Cell("error", "swebench")])
    wrong = df[(df.estimand == "mean") & (df.procedure == "betting")].iloc[0]
    assert wrong["rate"] > _bound(100), wrong.to_dict()


# ------------------------------------------------------------------ questions saved
def test_the_questions_saved_study_is_seeded_and_consistent():
    """A small questions-saved run: seeded, jobs do not change it, the fixed-n columns are the
    planning function's, and a 20-point gap is settled in the right direction."""
    grid = [lab.Cell("saved", "none", 0.2), lab.Cell("saved", "swebench", 0.2)]
    one = lab.run_sequential(12, seed=8, grid=grid)
    two = lab.run_sequential(12, seed=8, grid=grid, jobs=2)
    pd.testing.assert_frame_equal(one, two)
    assert list(one["seed"]) == [8, 8, 1008, 1008]
    assert (one["fixed_n"] == [lab.fixed_n(c.gap, c.clusters) for c in grid for _ in lab.METHODS]).all()
    no = one[one.clusters == "none"]
    assert (no["stopped"] == 1).all() and (no["wrong"] == 0).all() and (no["mean_n"] < 200).all()
    assert (one["mean_n"] <= lab.N_MAX).all() and (one["median_n"] <= lab.N_MAX).all()


def test_bad_lab_inputs_are_clear_errors():
    from bayeserr.base.errors import InputError
    with pytest.raises(InputError, match="clusters must be one of"):
        lab.draw(0.0, "ranked", 2, np.random.default_rng(0))
    with pytest.raises(InputError, match="gap must lie"):
        lab.Cell("saved", "none", 0.4)
    with pytest.raises(InputError, match="error study runs at a true gap of 0"):
        lab.Cell("error", "none", 0.1)
    with pytest.raises(InputError, match="reps must be"):
        lab.run_sequential(1)
    with pytest.raises(InputError, match="jobs must be"):
        lab.run_sequential(10, jobs=0)


# ------------------------------------------------------------------ the published section
def _section(page: str) -> str:
    assert page.count(lab.SECTION_START) == 1 and page.count(lab.SECTION_END) == 1
    return lab.SECTION_START + page.split(lab.SECTION_START, 1)[1].split(lab.SECTION_END, 1)[0] + lab.SECTION_END


def _rows(section: str, first: str):
    """The table lines whose first cell starts with ``first`` (a regex)."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and re.match(first, line[2:])]


def _pm(rate, se) -> str:
    return f"{100 * rate:.1f} ± {100 * se:.1f}"


def _n(x) -> str:
    return f"{x:,.0f}"


def _signed(x) -> str:
    text = f"{x:+,.0f}"
    return "0" if text in ("+0", "-0") else text.replace("-", "−")


def test_the_published_section_is_the_csvs():
    """docs/calibration.md's section is exactly what docs/calibration_sequential.csv gives
    (every number of its tables and paragraphs), the grid is the published one, and every
    error rate's Monte Carlo SE is at most 0.71 points."""
    csv = DOCS / "calibration_sequential.csv"
    if not csv.exists():
        pytest.skip("the sequential study has not been published")
    df = pd.read_csv(csv)
    section = _section((DOCS / "calibration.md").read_text())
    command = re.search(r"Reproduce: `([^`]+)`", section).group(1)
    err, sv = df[df.study == "error"], df[df.study == "saved"]
    assert command.startswith("bayeserr simulate sequential ")
    assert f"--reps {int(err.reps.min())} " in command and f"--saved-reps {int(sv.reps.min())} " in command
    assert section == "\n".join(lab.sequential_section(df, command))
    # the grid: every cell, every procedure, once
    cells = [(c.study, c.clusters, c.gap) for c in lab.cells()]
    assert [tuple(k) for k in df[["study", "clusters", "gap"]].drop_duplicates().to_numpy()] == cells
    assert len(err) == 2 * 3 + 2 * 4 and len(sv) == len(lab.GAPS) * 2 * 2
    assert (err.reps >= lab.PUBLISHED_REPS).all() and (err["rate_se"] <= 0.0071).all()
    assert (sv.reps >= lab.PUBLISHED_SAVED_REPS).all()
    # the error table, parsed
    keyed = err.set_index(["estimand", "clusters", "procedure"])
    lines = _rows(section, r"A(’|'s| −)")
    table = [cells_ for cells_ in lines if len(cells_) == 2 + len(lab.PROCEDURES) and "±" in cells_[2]]
    assert len(table) == 4
    for cells_ in table:
        estimand = "difference" if cells_[0].startswith("A − B") else "mean"
        clusters = "none" if cells_[1] == "none" else "swebench"
        for proc, cell in zip(lab.PROCEDURES, cells_[2:]):
            if (estimand, clusters, proc) not in keyed.index:
                assert cell == "–"
                continue
            r = keyed.loc[(estimand, clusters, proc)]
            assert cell.strip("*") == _pm(r["rate"], r["rate_se"])
            assert cell.startswith("**") == bool(lab.clearly_above(r["rate"], r["reps"]))
    # the questions-saved table, parsed
    saved = _rows(section, r"0\.\d")
    assert len(saved) == len(sv)
    for cells_, (_, r) in zip(saved, sv.iterrows()):
        assert (float(cells_[0]), cells_[2]) == (r["gap"], r["procedure"])
        assert cells_[3] == f"{_n(r['mean_n'])} ± {_n(r['mean_n_se'])}" and cells_[4] == _n(r["median_n"])
        assert cells_[5] == _pm(r["stopped"], r["stopped_se"])
        assert cells_[6] == f"{100 * r['wrong']:.2f} ± {100 * r['wrong_se']:.2f}"
        assert cells_[7] == _signed(lab.N_MAX - r["mean_n"]) and cells_[8] == _n(r["fixed_n"])
        assert cells_[9] == _pm(r["fixed_power"], r["fixed_power_se"])
        assert cells_[10] == _signed(r["fixed_n"] - r["mean_n"])
        assert r["fixed_n"] == lab.fixed_n(r["gap"], r["clusters"])


# ------------------------------------------------------------------ the command
def _outside(page: str) -> str:
    if lab.SECTION_START not in page:
        return page.rstrip("\n")
    head, rest = page.split(lab.SECTION_START, 1)
    return (head + rest.split(lab.SECTION_END, 1)[1]).rstrip("\n")


def test_publish_twice_leaves_one_section(tmp_path, cli):
    """Published twice (as a file, then as its folder), the page holds one section, the rest
    of the page (the gate's section included) is untouched, and the section is the CSV's;
    the Markdown output is the section without its markers and heading."""
    page = tmp_path / "calibration.md"
    shutil.copy(DOCS / "calibration.md", page)
    before = page.read_text()
    args = ["simulate", "sequential", "--reps", "10", "--saved-reps", "10", "--seed", "5", "--jobs", "1"]
    first = cli(*args, "--format", "csv", "--publish", page)
    assert first.exit_code == 0, first.output
    once = page.read_text()
    csv = pd.read_csv(tmp_path / "calibration_sequential.csv")
    assert pd.read_csv(io.StringIO(first.stdout)).equals(csv)
    assert len(csv) == 14 + 12 and (csv.reps == 10).all()
    command = f"bayeserr simulate sequential --reps 10 --saved-reps 10 --seed 5 --publish {page}"
    assert _section(once) == "\n".join(lab.sequential_section(csv, command))
    second = cli(*args, "--publish", tmp_path)  # a folder: its calibration.md
    assert second.exit_code == 0, second.output
    twice = page.read_text()
    assert twice.count(lab.SECTION_START) == 1 and twice.count(lab.SECTION_END) == 1
    assert _outside(twice) == _outside(once) == _outside(before)  # the rest of the page unchanged
    if gate_lab.SECTION_START in before:
        assert (before.split(gate_lab.SECTION_START, 1)[1].split(gate_lab.SECTION_END, 1)[0]
                == twice.split(gate_lab.SECTION_START, 1)[1].split(gate_lab.SECTION_END, 1)[0])
    # the same data sets (seeded): only the command line differs
    assert twice == once.replace(f"--publish {page}`", f"--publish {tmp_path}`")
    md = "\n".join(lab.sequential_section(csv, command.split(" --publish")[0])[2:-1])
    assert second.stdout.strip() == md.strip() and lab.SECTION_START not in second.stdout
    # a page without the section gets it appended at the end, the rest untouched
    bare = tmp_path / "bare" / "calibration.md"
    bare.parent.mkdir()
    bare.write_text(_outside(before) + "\n")
    lab.publish_sequential(csv, bare, command)
    text = bare.read_text()
    assert text.startswith(_outside(before)) and text.rstrip("\n").endswith(lab.SECTION_END)
    assert text.count(lab.SECTION_START) == 1


def test_bad_options_are_clear_errors(cli, tmp_path):
    for args, word in ((["--reps", "5"], "--reps"), (["--saved-reps", "0"], "--saved-reps"),
                       (["--jobs", "0"], "--jobs"), (["--seed", "-1"], "--seed"),
                       (["--format", "html"], "--format"),
                       (["--publish", tmp_path / "missing" / "calibration.md"], "does not exist")):
        res = cli("simulate", "sequential", *args, "--reps" if args[0] != "--reps" else "--saved-reps", "10")
        assert res.exit_code == 2, (args, res.output)
        assert word in res.output and "Traceback" not in res.output
    assert not (tmp_path / "missing").exists()


def test_the_commands_defaults_are_the_published_run():
    from bayeserr.cli.lab import calibration_docs, simulate_sequential
    defaults = {p.name: p.default for p in simulate_sequential.params}
    assert defaults["reps"] == lab.PUBLISHED_REPS and defaults["saved_reps"] == lab.PUBLISHED_SAVED_REPS
    assert defaults["jobs"] == lab.JOBS
    docs = {p.name: p.default for p in calibration_docs.params}
    assert docs["sequential_reps"] == lab.PUBLISHED_REPS
    assert docs["sequential_saved_reps"] == lab.PUBLISHED_SAVED_REPS


@pytest.mark.slow
def test_calibration_docs_keeps_the_other_sections_and_writes_this_one(tmp_path, cli):
    """A full regeneration with tiny replicates: the sequential section and CSV are written,
    the gate's section is written, and the ranking section is kept."""
    shutil.copy(DOCS / "calibration.md", tmp_path / "calibration.md")
    before = (tmp_path / "calibration.md").read_text()
    res = cli("simulate", "calibration-docs", "--output", tmp_path, "--reps", "10", "--fewcluster-reps", "10",
              "--prior-reps", "10", "--gate-reps", "10", "--sequential-reps", "10", "--sequential-saved-reps", "10",
              "--judge-reps", "10")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "calibration.md").read_text()
    from bayeserr.lab import ranking
    for start, end in ((ranking.SECTION_START, ranking.SECTION_END),
                       (gate_lab.SECTION_START, gate_lab.SECTION_END), (lab.SECTION_START, lab.SECTION_END)):
        assert page.count(start) == 1 and page.count(end) == 1
    assert before.split(ranking.SECTION_START, 1)[1].split(ranking.SECTION_END, 1)[0] in page
    csv = pd.read_csv(tmp_path / "calibration_sequential.csv")
    assert (csv.reps == 10).all()
    assert _section(page) == "\n".join(lab.sequential_section(
        csv, f"bayeserr simulate sequential --reps 10 --saved-reps 10 --seed 0 "
             f"--publish {tmp_path / 'calibration.md'}"))
