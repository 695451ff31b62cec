"""The judge-scored evals' lab (``bayeserr.lab.judge``; ``docs/calibration.md``,
"Judge-scored evals"): the design's truths are exact, the lab's intervals are the
report's (``ppi_mean``, ``ppi_paired``, ``rogan_gladen``), PPI++ covers the human-scored
mean and difference while the judge-only interval does not, the published section is
exactly what the CSV beside it says, and ``bayeserr simulate judge --publish`` replaces
its own section and nothing else."""

from __future__ import annotations

import io
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeserr.lab import gate as gate_lab
from bayeserr.lab import judge as lab
from bayeserr.lab import sequential as seq_lab
from bayeserr.stats.ppi import ppi_mean, ppi_paired, rogan_gladen

DOCS = Path(__file__).resolve().parents[2] / "docs"
LEVEL = 0.95


def _floor(reps: int, k: float = 3.0) -> float:
    """95% minus k Monte Carlo SEs of a coverage of 95%."""
    return LEVEL - k * math.sqrt(LEVEL * (1 - LEVEL) / reps)


# ------------------------------------------------------------------ the design
def test_the_cluster_structures():
    """40 unequal clusters and SWE-bench's 12 sizes (the gate lab's constant) scaled to 1,000."""
    assert len(lab.FORTY_SIZES) == 40 and sum(lab.FORTY_SIZES) == lab.N_QUESTIONS == 1000
    assert min(lab.FORTY_SIZES) >= 1 and max(lab.FORTY_SIZES) / min(lab.FORTY_SIZES) > 10
    assert lab.SWEBENCH == gate_lab.scaled_sizes(gate_lab.SWEBENCH_SIZES, 1000)
    assert len(lab.SWEBENCH) == 12 and sum(lab.SWEBENCH) == 1000
    codes = lab.cluster_codes("swebench")
    assert np.bincount(codes).tolist() == list(lab.SWEBENCH) and lab.cluster_codes("none") is None
    assert lab.judge_value("A") - lab.true_value("A") == pytest.approx(0.10)
    assert lab.judge_value("B") == lab.true_value("B")
    assert lab.true_value("A − B") == pytest.approx(0.05)


@pytest.mark.parametrize("clusters", lab.CLUSTERS)
def test_the_truths_are_exact(clusters):
    """The mean human score of each model and of A − B is the design's, and so is the judge's
    (+10 points on A, unbiased on B), with clipped cluster effects too; scores are 0/1."""
    reps = 1500
    d = lab.draw(clusters, reps, np.random.default_rng(3))
    for q in lab.QUANTITIES:
        y, f = lab._columns(d, q)
        for x, truth in ((y, lab.true_value(q)), (f, lab.judge_value(q))):
            m = x.mean(axis=1)
            assert abs(m.mean() - truth) < 4 * m.std(ddof=1) / math.sqrt(reps), (q, m.mean(), truth)
    for m in ("A", "B"):
        assert set(np.unique(d.human[m])) == set(np.unique(d.judge[m])) == {0.0, 1.0}
    if clusters == "none":
        for q in lab.QUANTITIES:
            y, f = lab._columns(d, q)
            assert np.corrcoef(y.ravel(), f.ravel())[0, 1] == pytest.approx(lab.correlation(q), abs=0.01)
        cov = np.mean((d.human["A"] - 0.6) * (d.human["B"] - 0.55))
        assert cov == pytest.approx(lab.human_covariance(), abs=0.005)
        miss = 1 - d.judge["A"][d.human["A"] == 1].mean()
        assert miss == pytest.approx(lab.MISS, abs=0.003)


def test_the_labels_are_nested_uniform_subsets_shared_by_both_models():
    d = lab.draw("forty", 400, np.random.default_rng(4))
    masks = {n: lab.labelled(d.order, n) for n in lab.LABELS}
    for n, m in masks.items():
        assert (m.sum(axis=1) == n).all()
    assert (masks[50] <= masks[100]).all() and (masks[100] <= masks[300]).all()
    # uniform: each cluster's share of the labels is its share of the questions
    codes = lab.cluster_codes("forty")
    share = np.bincount(codes, weights=masks[300].sum(axis=0)) / masks[300].sum()
    assert np.abs(share - np.asarray(lab.FORTY_SIZES) / 1000).max() < 0.006


# ------------------------------------------------------------------ the lab runs the report's code
@pytest.mark.parametrize("clusters", lab.CLUSTERS)
def test_the_intervals_are_the_reports(clusters):
    """Per data set, the lab's PPI++, labelled-only and judge-only intervals (and effective
    labels) are ppi_mean's and ppi_paired's, the functions the report's Judge section calls;
    its Rogan–Gladen rows are rogan_gladen's."""
    d = lab.draw(clusters, 3, np.random.default_rng(5))
    codes = lab.cluster_codes(clusters)
    for n in (50, 300):
        mask = lab.labelled(d.order, n)
        for q in lab.QUANTITIES:
            y, f = lab._columns(d, q)
            human = np.where(mask, y, np.nan)
            res = lab.intervals(human, f, codes)
            for r in range(3):
                if q == "A − B":
                    ref = ppi_paired(np.where(mask[r], d.human["A"][r], np.nan), d.judge["A"][r],
                                     np.where(mask[r], d.human["B"][r], np.nan), d.judge["B"][r], codes)
                else:
                    ref = ppi_mean(human[r], f[r], codes)
                for method, iv in (("ppi", ref.ppi), ("classical", ref.classical), ("judge_only", ref.judge_only)):
                    got = tuple(float(res[method][k][r]) for k in range(4))
                    assert got == pytest.approx((iv.estimate, iv.se, iv.lower, iv.upper), rel=1e-9, abs=1e-12)
                assert res["effective_labels"][r] == pytest.approx(ref.effective_labels, rel=1e-9)
                assert res["lam"][r] == pytest.approx(ref.lam, rel=1e-9)
            if q != "A − B":
                est, se, lo, hi, usable = lab.rogan_gladen_rows(human, f, codes=codes)
                for r in range(3):
                    rg = rogan_gladen(human[r], f[r], codes)
                    assert (est[r], se[r], lo[r], hi[r], usable[r]) == pytest.approx(
                        (rg.estimate, rg.se, rg.lower, rg.upper, rg.usable), nan_ok=True, rel=0, abs=0)


def test_the_exact_wald_coverage_is_a_binomial_sum():
    """The labelled-only interval without clusters on 0/1 labels, its exact coverage."""
    rng = np.random.default_rng(6)
    n, p, reps = 100, 0.55, 40_000
    k = rng.binomial(n, p, reps)
    m = k / n
    from scipy.stats import t as student
    half = student.ppf(0.975, n - 1) * np.sqrt(m * (1 - m) / (n - 1))
    sim = float((np.abs(m - p) <= half).mean())
    exact = lab.exact_classical_coverage(n, p)
    assert abs(sim - exact) < 4 * math.sqrt(exact * (1 - exact) / reps)
    assert 0.94 < exact < 0.95  # below nominal: the Wald interval's discreteness


# ------------------------------------------------------------------ coverage
def test_ppi_covers_and_the_judge_alone_does_not():
    """A seeded run at a small replicate count (about 3 s): without clusters and with 40
    unequal clusters, PPI++ covers the human-scored mean of A (judge +10 points) and B and
    the difference A − B in at least 95% − 3 MC SE of data sets at 50, 100 and 300 labels;
    the judge-only interval covers A's human mean and A − B in under 50% (and prints it),
    while it covers the judge-scored values; Rogan–Gladen covers, clustered (J9c) with clusters."""
    reps = 600
    df = pd.concat([lab.run_judge(reps, seed=31, grid=["none"]), lab.run_judge(reps, seed=32, grid=["forty"])])
    show = df[df.method.isin(["ppi", "judge_only", "rogan_gladen"])]
    print("\n" + show[["clusters", "n_labels", "quantity", "method", "coverage", "mean_width"]].to_string())
    assert set(df.clusters) == {"none", "forty"} and set(df.n_labels) == set(lab.LABELS)
    ppi = df[df.method == "ppi"]
    assert len(ppi) == 2 * 3 * 3 and (ppi["coverage"] >= _floor(reps)).all(), ppi.to_string()
    judge = df[df.method == "judge_only"]
    biased = judge[judge.quantity != "B"]
    assert (biased["coverage"] < 0.5).all(), biased.to_string()
    assert (judge["covers_judge"] >= _floor(reps)).all()
    assert (judge[judge.quantity == "B"]["coverage"] >= _floor(reps)).all()  # B's judge is unbiased
    rg = df[df.method == "rogan_gladen"]
    assert set(rg.clusters) == {"none", "forty"} and len(rg) == 2 * 2 * 3
    assert (rg["coverage"] >= _floor(reps)).all(), rg.to_string()
    # the judge is worth labels: PPI++ narrower than the labels alone, and more effective labels
    cl = df[df.method == "classical"].set_index(["clusters", "n_labels", "quantity"])
    for _, r in ppi.iterrows():
        assert r["mean_width"] < cl.loc[(r["clusters"], r["n_labels"], r["quantity"]), "mean_width"]
        assert r["effective_labels"] > r["n_labels"]
    assert np.allclose(df["coverage_se"], np.sqrt(df["coverage"] * (1 - df["coverage"]) / df["reps"]))


def test_the_check_fails_when_the_clusters_are_ignored():
    """The clustered check can fail: PPI++ computed as if SWE-bench's questions were
    independent covers A's human mean far less than 95%."""
    d = lab.draw("swebench", 600, np.random.default_rng(7))
    mask = lab.labelled(d.order, 300)
    human = np.where(mask, d.human["A"], np.nan)
    truth = lab.true_value("A")
    naive = lab.intervals(human, d.judge["A"], None)["ppi"]
    right = lab.intervals(human, d.judge["A"], lab.cluster_codes("swebench"))["ppi"]
    cover = {k: float(((v[2] <= truth) & (truth <= v[3])).mean()) for k, v in (("naive", naive), ("cr2", right))}
    assert cover["naive"] < 0.85 < _floor(600) <= cover["cr2"], cover


def test_the_run_is_seeded_and_jobs_do_not_change_it():
    one = lab.run_judge(20, seed=8)
    two = lab.run_judge(20, seed=8, jobs=2)
    pd.testing.assert_frame_equal(one, two)
    assert sorted(set(one["seed"])) == [8, 1008, 2008]
    # structures × labels × quantities × 3 intervals, + Rogan–Gladen (A and B) in every structure
    assert len(one) == 3 * 3 * 3 * 3 + 3 * 3 * 2
    assert set(one[one.method == "rogan_gladen"].clusters) == set(lab.CLUSTERS)


def test_bad_lab_inputs_are_clear_errors():
    from bayeserr.base.errors import InputError
    with pytest.raises(InputError, match="clusters must be one of"):
        lab.draw("ranked", 2, np.random.default_rng(0))
    with pytest.raises(InputError, match="reps must be"):
        lab.run_judge(1)
    with pytest.raises(InputError, match="jobs must be"):
        lab.run_judge(10, jobs=0)
    with pytest.raises(InputError, match="unlabelled"):
        lab.run_judge(10, labels=(999,))


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


def test_the_published_section_is_the_csvs():
    """docs/calibration.md's section is exactly what docs/calibration_judge.csv gives (every
    number of its tables and paragraphs), the grid is the published one, and every
    coverage's Monte Carlo SE is at most 0.5 points."""
    csv = DOCS / "calibration_judge.csv"
    if not csv.exists():
        pytest.skip("the judge study has not been published")
    df = pd.read_csv(csv)
    section = _section((DOCS / "calibration.md").read_text())
    command = re.search(r"Reproduce: `([^`]+)`", section).group(1)
    assert command.startswith("bayeserr simulate judge ") and f"--reps {int(df.reps.min())} " in command
    assert section == "\n".join(lab.judge_section(df, command))
    # the grid: every structure, label count, quantity and interval, once
    assert (df.reps >= lab.PUBLISHED_REPS).all() and (df["coverage_se"] <= 0.005).all()
    assert len(df) == len(lab.CLUSTERS) * len(lab.LABELS) * (3 * 3 + 2)
    assert not df.duplicated(["clusters", "n_labels", "quantity", "method"]).any()
    assert list(df.drop_duplicates("clusters")["seed"]) == [0, 1000, 2000]
    # the coverage table, parsed
    keyed = df.set_index(["quantity", "clusters", "n_labels", "method"])
    names = {"none": "none", "40 unequal": "forty", "SWE-bench (12)": "swebench"}
    table = [c for c in _rows(section, r"[AB] ") if len(c) == 3 + len(lab.METHODS) and "±" in c[3]]
    assert len(table) == len(lab.QUANTITIES) * len(lab.CLUSTERS) * len(lab.LABELS)
    for cells in table:
        quantity = cells[0].split(" (")[0]
        key = (quantity, names[cells[1]], int(cells[2]))
        for method, cell in zip(lab.METHODS, cells[3:]):
            if key + (method,) not in keyed.index:
                assert cell == "–"
                continue
            r = keyed.loc[key + (method,)]
            assert cell.strip("*") == _pm(r["coverage"], r["coverage_se"])
            flagged = method != "judge_only" and bool(lab.clearly_below(r["coverage"], r["reps"]))
            assert cell.startswith("**") == flagged
    # the width table, parsed
    widths = [c for c in _rows(section, r"[AB] ") if len(c) == 3 + len(lab.METHODS) + 2]
    assert len(widths) == len(table)
    for cells in widths:
        key = (cells[0].split(" (")[0], names[cells[1]], int(cells[2]))
        ppi, cl = keyed.loc[key + ("ppi",)], keyed.loc[key + ("classical",)]
        assert cells[3] == f"{100 * ppi['mean_width']:.1f}" and cells[4] == f"{100 * cl['mean_width']:.1f}"
        assert cells[-2] == f"{ppi['mean_width'] / cl['mean_width']:.2f}"
        assert cells[-1] == f"{ppi['effective_labels']:.0f}"
    # the judge-only interval's collapse is printed
    assert "The judge-only interval collapses" in section


# ------------------------------------------------------------------ the command
def _outside(page: str) -> str:
    if lab.SECTION_START not in page:
        return page.rstrip("\n")
    head, rest = page.split(lab.SECTION_START, 1)
    return (head + rest.split(lab.SECTION_END, 1)[1]).rstrip("\n")


def test_publish_twice_leaves_one_section(tmp_path, cli):
    """Published twice (as a file, then as its folder), the page holds one section, the rest
    of the page (the other labs' sections included) is untouched, and the section is the
    CSV's; the Markdown output is the section without its markers and heading."""
    page = tmp_path / "calibration.md"
    shutil.copy(DOCS / "calibration.md", page)
    before = page.read_text()
    args = ["simulate", "judge", "--reps", "10", "--seed", "5", "--jobs", "1"]
    first = cli(*args, "--format", "csv", "--publish", page)
    assert first.exit_code == 0, first.output
    once = page.read_text()
    csv = pd.read_csv(tmp_path / "calibration_judge.csv")
    assert pd.read_csv(io.StringIO(first.stdout)).equals(csv)
    assert len(csv) == 27 * 3 + 18 and (csv.reps == 10).all()
    command = f"bayeserr simulate judge --reps 10 --seed 5 --publish {page}"
    assert _section(once) == "\n".join(lab.judge_section(csv, command))
    second = cli(*args, "--publish", tmp_path)  # a folder: its calibration.md
    assert second.exit_code == 0, second.output
    twice = page.read_text()
    assert twice.count(lab.SECTION_START) == 1 and twice.count(lab.SECTION_END) == 1
    assert _outside(twice) == _outside(once) == _outside(before)  # the rest of the page unchanged
    for other in (gate_lab, seq_lab):
        if other.SECTION_START in before:
            assert (before.split(other.SECTION_START, 1)[1].split(other.SECTION_END, 1)[0]
                    == twice.split(other.SECTION_START, 1)[1].split(other.SECTION_END, 1)[0])
    # the same data sets (seeded): only the command line differs
    assert twice == once.replace(f"--publish {page}`", f"--publish {tmp_path}`")
    md = "\n".join(lab.judge_section(csv, command.split(" --publish")[0])[2:-1])
    assert second.stdout.strip() == md.strip() and lab.SECTION_START not in second.stdout
    # a page without the section gets it appended at the end, the rest untouched
    bare = tmp_path / "bare" / "calibration.md"
    bare.parent.mkdir()
    bare.write_text(_outside(before) + "\n")
    lab.publish_judge(csv, bare, command)
    text = bare.read_text()
    assert text.startswith(_outside(before)) and text.rstrip("\n").endswith(lab.SECTION_END)
    assert text.count(lab.SECTION_START) == 1


def test_bad_options_are_clear_errors(cli, tmp_path):
    for args, word in ((["--reps", "5"], "--reps"), (["--jobs", "0"], "--jobs"), (["--seed", "-1"], "--seed"),
                       (["--format", "html"], "--format"),
                       (["--publish", tmp_path / "missing" / "calibration.md"], "does not exist")):
        res = cli("simulate", "judge", *args, *(["--reps", "10"] if args[0] != "--reps" else []))
        assert res.exit_code == 2, (args, res.output)
        assert word in res.output and "Traceback" not in res.output
    assert not (tmp_path / "missing").exists()
    res = cli("simulate", "calibration-docs", "--judge-reps", "3")
    assert res.exit_code == 2 and "--judge-reps" in res.output


def test_the_commands_defaults_are_the_published_run():
    from bayeserr.cli.lab import calibration_docs, simulate_judge
    defaults = {p.name: p.default for p in simulate_judge.params}
    assert defaults["reps"] == lab.PUBLISHED_REPS and defaults["jobs"] == lab.JOBS and defaults["seed"] == 0
    assert {p.name: p.default for p in calibration_docs.params}["judge_reps"] == lab.PUBLISHED_REPS


@pytest.mark.slow
def test_the_published_numbers_are_reproduced():
    """Rerunning the published design without clusters (its seed, 10,000 data sets; about
    15 s) gives exactly the CSV's rows."""
    csv = DOCS / "calibration_judge.csv"
    if not csv.exists():
        pytest.skip("the judge study has not been published")
    pub = pd.read_csv(csv)
    pub = pub[pub.clusters == "none"].reset_index(drop=True)
    again = lab.run_judge(int(pub.reps.iloc[0]), seed=int(pub.seed.iloc[0]), grid=["none"], jobs=2)
    again = pd.read_csv(io.StringIO(again.to_csv(index=False)))
    pd.testing.assert_frame_equal(again, pub)


@pytest.mark.slow
def test_calibration_docs_keeps_the_other_sections_and_writes_this_one(tmp_path, cli):
    """A full regeneration with tiny replicates: the judge's section and CSV are written, the
    gate's and the sequences' sections are written, and the ranking section is kept."""
    shutil.copy(DOCS / "calibration.md", tmp_path / "calibration.md")
    before = (tmp_path / "calibration.md").read_text()
    res = cli("simulate", "calibration-docs", "--output", tmp_path, "--reps", "10", "--fewcluster-reps", "10",
              "--prior-reps", "10", "--gate-reps", "10", "--sequential-reps", "10", "--sequential-saved-reps", "10",
              "--judge-reps", "10")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "calibration.md").read_text()
    from bayeserr.lab import ranking
    for mod in (ranking, gate_lab, seq_lab, lab):
        assert page.count(mod.SECTION_START) == 1 and page.count(mod.SECTION_END) == 1
    assert before.split(ranking.SECTION_START, 1)[1].split(ranking.SECTION_END, 1)[0] in page
    csv = pd.read_csv(tmp_path / "calibration_judge.csv")
    assert (csv.reps == 10).all()
    assert _section(page) == "\n".join(lab.judge_section(
        csv, f"bayeserr simulate judge --reps 10 --seed 0 --publish {tmp_path / 'calibration.md'}"))
