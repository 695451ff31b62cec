"""The leaderboard over tasks like these (bayeserr.analyses.tasks; docs/methods.md §3.15):
its numbers against the suite's macro scores and hand formulas, its place in the report,
and its leave-one-task-out check on LiveBench's 18 tasks."""

import json

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.analyses.suite import suite_view
from bayeserr.analyses.tasks import readings, tasks_view
from bayeserr.stats.view import DataView

from ..conftest import real_file, validate_report


def _frame(seed=0, models=5, tasks=6, n=30, skip=None):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        level = rng.normal(0, 0.8)
        for m in range(models):
            p = 1 / (1 + np.exp(-(level + 0.2 * m + rng.normal(0, 0.3))))
            if skip == (m, t):
                continue
            for q in range(n):
                rows.append({"model": f"M{m}", "question_id": f"t{t}q{q}", "task": f"task{t}",
                             "score": float(rng.random() < p)})
    return pd.DataFrame(rows)


def _view(df):
    return DataView.from_dataset(bayeserr.load(df))


def test_means_and_pairs_are_the_macro_means_over_tasks():
    df = _frame()
    view = _view(df)
    res = tasks_view(view, 0.95)
    suite = suite_view(view, 0.95)
    macro = {s.model: s.mean for s in suite.of("macro")}
    task_means = df.groupby(["model", "task"]).score.mean().unstack()
    for m in res.models:
        assert m.mean == pytest.approx(macro[m.model], abs=1e-12)
        per_task = task_means.loc[m.model].to_numpy()
        assert m.se == pytest.approx(per_task.std(ddof=1) / np.sqrt(6), rel=1e-10)
    p = next(p for p in res.pairs if {p.a, p.b} == {"M0", "M4"})
    d = task_means.loc[p.a] - task_means.loc[p.b]
    assert p.diff == pytest.approx(d.mean(), abs=1e-12) and p.df == 5.0
    assert p.se == pytest.approx(d.std(ddof=1) / np.sqrt(6), rel=1e-10)
    # the best model first; ranks follow the means
    assert [m.rank for m in res.models] == sorted(m.rank for m in res.models)
    assert res.models[0].tied_with_best and res.rank_level == pytest.approx(1 - 2 / 7)


def test_a_model_without_every_task_is_left_out_and_said():
    res = tasks_view(_view(_frame(skip=(2, 3))), 0.95)
    assert "M2" not in [m.model for m in res.models] and res.left_out == {"M2": ("task3",)}


def test_too_few_tasks_gives_none_and_sample_asks_for_them(tmp_path, cli):
    assert tasks_view(_view(_frame(tasks=2)), 0.95) is None
    path = tmp_path / "two.csv"
    _frame(tasks=2).to_csv(path, index=False)
    res = cli("report", path, "--bayes", "off", "--tasks-as", "sample")
    assert res.exit_code == 2 and "at least 3" in res.output and "Traceback" not in res.output


def test_the_chosen_reading_leads(tmp_path, cli):
    path = tmp_path / "suite.csv"
    _frame().to_csv(path, index=False)
    plain = cli("report", path, "--bayes", "off").stdout
    first = cli("report", path, "--bayes", "off", "--tasks-as", "sample").stdout
    assert plain.index("## Suite") < plain.index("## Over tasks like these")
    assert first.index("## Over tasks like these") < first.index("## Suite") < first.index("## Pairwise")
    out = tmp_path / "r.json"
    assert cli("report", path, "--bayes", "off", "--tasks-as", "sample", "-o", out).exit_code == 0
    rep = validate_report(json.loads(out.read_text()))
    ov = rep["over_tasks"]
    assert ov["headline"] == "sample" and ov["readings"][0]["reading"] == "sample"
    assert ov["tied_with_best"] == ov["readings"][0]["tied_with_best"]
    # one voice: the ranking line quotes the Ranking section (questions not clustered: it is the
    # independent-questions reading, so that one is not recomputed)
    assert {r["reading"] for r in ov["readings"]} == {"ranking", "task_clusters", "strata", "sample", "bootstrap"}
    line = next(r for r in ov["readings"] if r["reading"] == "ranking")
    names = {m["model"] for m in ov["models"]}
    assert line["tied_with_best"] == [m for m in rep["ranking"]["tied_with_best"] if m in names]


@pytest.fixture(scope="module")
def livebench12():
    """The 12 best (pooled mean) of the LiveBench models that answered all 1,136 questions."""
    df = pd.read_csv(real_file("livebench_20250113_per_question.csv.gz"))
    counts = df.groupby("model").question_id.nunique()
    full = df[df.model.isin(counts[counts == df.question_id.nunique()].index)]
    top = full.groupby("model").score.mean().sort_values(ascending=False).index[:12]
    return full[full.model.isin(top)].rename(columns={"cluster_id": "task"})


def test_livebench_leave_one_task_out_holds_its_guarantee(livebench12):
    view = _view(livebench12)
    res = tasks_view(view, 0.95)
    cov, cases, guarantee = res.loto
    assert len(res.tasks) == 18 and cases == 18 * 12
    # 216 held-out ranks, 12 per task (not independent): at least the guarantee, less 2 binomial SEs
    assert cov >= guarantee - 2 * np.sqrt(guarantee * (1 - guarantee) / cases), (cov, guarantee)
    lines = {r.key: r for r in readings(view, res, suite_view(view, 0.95), 0.95)}
    assert set(lines) == {"questions", "task_clusters", "strata", "sample", "bootstrap"}
    # the random-effects reading is never narrower than questions taken as independent here
    assert len(lines["sample"].tied) >= len(lines["questions"].tied)
    assert lines["sample"].tied == tuple(res.tied_with_best) and not lines["bootstrap"].guarantee


def test_livebench_readings_quoted_in_the_methods(livebench12, tmp_path, cli):
    """The figures docs/methods.md §3.15 quotes for the LiveBench 12 (deterministic: no draws
    decide them): 95.4% of 216 held-out ranks; 2, 4, 2, 4 and 2 tied with #1 over questions,
    tasks as clusters, these tasks, tasks like these and the bootstrap; and the 4 and 7
    models whose simultaneous rank interval reaches 1 without and with the task clusters."""
    path = tmp_path / "lb12.csv"
    livebench12.rename(columns={"task": "cluster_id"}).to_csv(path, index=False)
    out = tmp_path / "r.json"
    assert cli("report", path, "--task-col", "cluster_id", "--bayes", "off", "-o", out).exit_code == 0
    rep = json.loads(out.read_text())
    ov = rep["over_tasks"]
    assert ov["leave_one_task_out"]["cases"] == 216
    assert ov["leave_one_task_out"]["coverage"] == pytest.approx(0.954, abs=0.0005)
    counts = {r["reading"]: len(r["tied_with_best"]) for r in ov["readings"]}
    assert counts == {"ranking": 4, "questions": 2, "strata": 2, "sample": 4, "bootstrap": 2}
    assert sum(m["rank_simultaneous"][0] == 1 for m in rep["ranking"]["models"]) == 7
    iid = tmp_path / "iid.json"
    assert cli("report", path, "--no-cluster", "--bayes", "off", "-o", iid).exit_code == 0
    assert sum(m["rank_simultaneous"][0] == 1 for m in json.loads(iid.read_text())["ranking"]["models"]) == 4
