"""Suite comparisons in every format (issue 25): each pair's suite difference
with Holm over the pairs of the headline weighting, each task's tables in
LaTeX with their own captions and labels, and each task's pairs table headed by
the adjustment it used (Holm)."""

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import bayeserr
from bayeserr.reporting import tables

from ..renderers.test_latex_layout import compile_pdf, needs_tex, tables_of
from ..reporting.test_suite_report import _table


def _suite_csv(tmp_path, models=3, seed=0):
    df = _table(seed)
    if models > 3:  # more models: shifted copies of A with their own noise
        rng = np.random.default_rng(seed + 1)
        extra = []
        for k in range(models - 3):
            d = df[df.model == "A"].copy()
            d["model"] = f"M{k:02d}"
            d["score"] = (rng.random(len(d)) < 0.45 + 0.03 * k).astype(int)
            extra.append(d)
        df = pd.concat([df, *extra], ignore_index=True)
    path = tmp_path / "suite.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("weights", [None, {"math": 2, "code": 1, "qa": 1}])
def test_holm_over_the_suite_pairs_matches_statsmodels(tmp_path, weights):
    suite = bayeserr.suite(bayeserr.load(_suite_csv(tmp_path, models=6)), weights=weights)
    for w in suite.weights:
        pairs = suite.pairs_of(w)
        assert len(pairs) == 15
        p = np.array([x.p_value for x in pairs])
        want = multipletests(p, method="holm")[1]
        np.testing.assert_allclose([x.p_holm for x in pairs], want, rtol=1e-12)
    assert suite.headline == ("user" if weights else "macro")


def test_a_pair_without_a_test_is_left_out_of_the_holm_family():
    from bayeserr.analyses.suite import holm_finite
    p = np.array([0.01, np.nan, 0.04, 0.03])
    got = holm_finite(p)
    assert np.isnan(got[1])
    np.testing.assert_allclose(got[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="holm")[1], rtol=1e-12)


def test_markdown_shows_the_suite_comparisons_better_first(tmp_path, cli):
    path = _suite_csv(tmp_path)
    res = cli("report", path, "--bayes", "off")
    assert res.exit_code == 0, res.output
    section = res.stdout.split("### Suite comparisons", 1)[1].split("\n## ", 1)[0]
    suite = bayeserr.suite(bayeserr.load(path))
    order = tables.suite_order(suite, "macro")
    rows = [line for line in section.splitlines() if line.startswith("| ") and " − " in line
            and "| Diff |" not in line]
    assert len(rows) == 3
    for line in rows:
        a, b = line.split("|")[1].strip().split(" − ")
        assert order.index(a) < order.index(b)  # the better first: the difference is ≥ 0
        diff = float(line.split("|")[2].split("(")[0])
        want = next(p for p in suite.pairs_of("macro") if {p.a, p.b} == {a, b})
        assert diff == pytest.approx(abs(want.diff) * 100, abs=0.051)
    assert "Holm over the 3 pairs" in section


def test_many_models_show_neighbours_and_say_so(tmp_path, cli):
    path = _suite_csv(tmp_path, models=12)  # 66 pairs > 45
    res = cli("report", path, "--bayes", "off")
    assert res.exit_code == 0, res.output
    section = res.stdout.split("### Suite comparisons", 1)[1].split("\n## ", 1)[0]
    assert "Showing 11 of 66 pairs (neighbours in the suite ranking)" in " ".join(section.split())
    json_rep = cli("report", path, "--bayes", "off", "--format", "json")
    import json
    rep = json.loads(json_rep.stdout)
    assert sum(p["weighting"] == "macro" for p in rep["suite"]["pairs"]) == 66
    assert all("p_holm" in p for p in rep["suite"]["pairs"])


def test_each_tasks_pairs_table_is_headed_by_holm(tmp_path, cli):
    res = cli("report", _suite_csv(tmp_path), "--bayes", "off")
    assert res.exit_code == 0, res.output
    per_task = res.stdout.split("## Each task alone", 1)[1]
    assert "| Holm p |" in per_task and "RW p" not in per_task
    assert "joint bootstrap" not in per_task  # the main table's Romano–Wolf wording


def test_crossed_clusters_validate_against_the_schema(tmp_path, cli_json):
    df = _table()
    df["cluster_id"] = "c" + (df.question_id.str.split("-").str[1].astype(int) % 4).astype(str)
    path = tmp_path / "crossed.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--bayes", "off")  # validated against the shipped schema
    assert rep["suite"]["clusters"] == "across tasks"


def test_latex_has_each_tasks_tables_with_unique_labels(tmp_path, cli):
    res = cli("report", _suite_csv(tmp_path), "--bayes", "off", "--format", "latex")
    assert res.exit_code == 0, res.output
    tex = res.stdout
    labels = re.findall(r"\\label\{([^}]*)\}", tex)
    assert len(labels) == len(set(labels))
    for task in ("code", "math", "qa"):
        assert len(re.findall(rf"\\caption\{{Task {task}: 3 models", tex)) == 2  # models and pairs
    assert "Suite differences A $-$ B" in tex


@pytest.mark.slow
@needs_tex
def test_latex_suite_report_compiles(tmp_path, cli):
    res = cli("report", _suite_csv(tmp_path), "--bayes", "off", "--format", "latex")
    log, text, pages = compile_pdf(res.stdout, tmp_path, "suite")
    assert "multiply defined" not in log and not re.search(r"^! ", log, re.MULTILINE)
    # models, ranking, suite ranking, suite, suite pairs, over tasks, its readings, pairs; 2 per task
    assert len(tables_of(res.stdout)) == 8 + 2 * 3
    assert "Task math" in text and shutil.which("pdflatex")


def test_crossed_clusters_report_in_every_text_format(tmp_path, cli):
    df = _table()
    df["cluster_id"] = "c" + (df.question_id.str.split("-").str[1].astype(int) % 4).astype(str)
    path = tmp_path / "crossed.csv"
    df.to_csv(path, index=False)
    for fmt in ("md", "html", "latex"):
        res = cli("report", path, "--bayes", "off", "--format", fmt,
                  *(("--output", tmp_path / "r.html") if fmt == "html" else ()))
        assert res.exit_code == 0 and "Traceback" not in res.output, res.output[-2000:]
    assert "clusters crossing tasks" in " ".join(cli("report", path, "--bayes", "off").stdout.split())


def test_not_estimable_suite_scores_say_why_and_have_no_verdict(tmp_path, cli):
    df = _table(clusters=False)
    df = pd.concat([df, pd.DataFrame([{"model": m, "question_id": "solo-0", "task": "solo", "score": 1}
                                      for m in ("A", "B", "C")])])
    df = df[~((df.model == "C") & (df.task == "qa"))]  # C skipped a task
    path = tmp_path / "gaps.csv"
    df.to_csv(path, index=False)
    res = cli("report", path, "--bayes", "off", "--on-unpaired", "drop")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split("## Suite", 1)[1].split("## Pairwise", 1)[0].split())
    assert "task with one question (solo" in text and "C skipped qa" in text
    assert "not different" not in text and "no pair has a test" in text


def test_suite_comparisons_follow_the_pairs_option(tmp_path, cli):
    path = _suite_csv(tmp_path, models=12)
    res = cli("report", path, "--bayes", "off", "--pairs", "vs=A")
    section = res.stdout.split("### Suite comparisons", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and "| Diff |" not in r and " − " in r]
    assert len(rows) == 11 and all(" A " in r.split("|")[1] + " " for r in rows)
    everything = cli("report", path, "--bayes", "off", "--pairs", "all").stdout
    section = everything.split("### Suite comparisons", 1)[1].split("\n## ", 1)[0]
    assert sum(r.startswith("| ") and " − " in r and "| Diff |" not in r for r in section.splitlines()) == 66
