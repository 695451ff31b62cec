"""Suites in reports (issue 25 part 1): a task per question from a table's
task column or an eval log's task, suite scores (macro, size-weighted, the
user's weights) in every format and in the JSON's suite block, checked
against hand computations."""

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.base.errors import InputError

from ..conftest import real_file  # noqa: F401  (the shared data helper; skips without ../shared)

LOG = Path(__file__).resolve().parents[3] / "shared" / "data" / "inspect-logs" / "2025-05-12T20-28-13-04-00_popularity.json"


def _table(seed=0, clusters=True):
    rng = np.random.default_rng(seed)
    rows = []
    for task, n, p in [("math", 40, 0.5), ("code", 120, 0.7), ("qa", 25, 0.85)]:
        for m, shift in [("A", 0), ("B", -0.05), ("C", 0.03)]:
            for q in range(n):
                row = {"model": m, "question_id": f"{task}-{q}", "task": task,
                       "score": int(rng.random() < p + shift)}
                if clusters:
                    row["cluster_id"] = f"{task}-c{q % 5}"
                rows.append(row)
    return pd.DataFrame(rows)


def _hand(df, model, weights):
    """Suite mean, SE and df without clusters, from the definition (S1, S2)."""
    parts = []
    for task, w in weights.items():
        s = df[(df.model == model) & (df.task == task)].score.to_numpy(float)
        parts.append((w, s.mean(), s.var(ddof=1) / len(s), len(s) - 1))
    total = sum(w for w, *_ in parts)
    parts = [(w / total, m, v, nu) for w, m, v, nu in parts]
    var = sum(w * w * v for w, _, v, _ in parts)
    df_ = var ** 2 / sum((w * w * v) ** 2 / nu for w, _, v, nu in parts)
    return sum(w * m for w, m, _, _ in parts), np.sqrt(var), df_


def test_table_task_column_gives_suite_scores_that_match_the_definition(tmp_path, cli_json):
    df = _table(clusters=False)
    path = tmp_path / "suite.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--bayes", "off", "--task-weights", "math=2,code=1,qa=1")
    suite = rep["suite"]
    assert [t["task"] for t in suite["tasks"]] == ["code", "math", "qa"]
    assert [t["n_questions"] for t in suite["tasks"]] == [120, 40, 25]
    assert suite["clusters"] == "none" and rep["columns"]["task"] == "task"
    got = {(m["model"], m["weighting"]): m for m in suite["models"]}
    sizes = {"code": 120, "math": 40, "qa": 25}
    for weighting, weights in {"macro": dict.fromkeys(sizes, 1), "size": sizes,
                               "user": {"math": 2, "code": 1, "qa": 1}}.items():
        for model in "ABC":
            mean, se, dof = _hand(df, model, weights)
            g = got[model, weighting]
            assert g["mean"] == pytest.approx(mean, rel=1e-12) and g["se"] == pytest.approx(se, rel=1e-10)
            assert g["df"] == pytest.approx(dof, rel=1e-10)
    # size-weighted = the pooled mean of the models table
    pooled = {m["model"]: m["mean"] for m in rep["models"]}
    assert all(got[m, "size"]["mean"] == pytest.approx(pooled[m]) for m in "ABC")
    # a pair's suite difference is the suite score of the per-question differences
    pair = next(p for p in suite["pairs"] if {p["a"], p["b"]} == {"A", "B"} and p["weighting"] == "macro")
    sign = 1 if pair["a"] == "A" else -1
    assert pair["diff"] == pytest.approx(sign * (got["A", "macro"]["mean"] - got["B", "macro"]["mean"]))
    assert len(suite["pairs"]) == 3 * 3


def test_every_format_has_the_suite_section(tmp_path):
    rep = bayeserr.report(bayeserr.load(_table()), bayes="off")
    assert rep.suite.clusters == "within tasks"
    for text in (rep.to_markdown(), rep.to_html(figures=False)):
        assert "Suite" in text and "Macro (tasks equal)" in text
    assert "Suite scores" in rep.to_latex() and "Size-weighted" in rep.to_latex()
    assert "clustered within the task (CR2)" in rep.to_markdown().replace("\n", " ")
    frame = rep.suite.to_frame()
    assert set(frame.weighting) == {"macro", "size"} and len(frame) == 6


def test_one_task_or_none_has_no_suite_and_weights_then_say_why(cli, tmp_path):
    df = _table()
    rep = bayeserr.report(bayeserr.load(df[df.task == "math"]), bayes="off")
    assert rep.suite is None and "suite" not in rep.to_dict()
    path = tmp_path / "one.csv"
    df[df.task == "math"].to_csv(path, index=False)
    res = cli("report", path, "--bayes", "off", "--task-weights", "math=1")
    assert res.exit_code == 2 and "at least two tasks" in res.output
    with pytest.raises(InputError, match="at least two tasks"):
        bayeserr.suite(bayeserr.load(df.drop(columns="task")))


def test_a_question_in_two_tasks_is_an_error():
    df = _table()
    df.loc[(df.model == "A") & (df.question_id == "math-0"), "task"] = "code"
    with pytest.raises(InputError, match="question is assigned to two different tasks"):
        bayeserr.load(df)


def test_clusters_that_are_the_tasks_are_not_used_within_them():
    """lm-eval logs are clustered by task: one cluster per task cannot cluster a task's variance."""
    df = _table(clusters=False)
    res = bayeserr.suite(bayeserr.load(df.assign(cluster_id=df.task)))
    plain = bayeserr.suite(bayeserr.load(df))
    assert res.clusters == "are the tasks"
    assert [s.se for s in res.scores] == pytest.approx([s.se for s in plain.scores])


def test_weights_are_checked(tmp_path, cli):
    ds = bayeserr.load(_table())
    with pytest.raises(InputError, match="not in the data: mth"):
        bayeserr.suite(ds, weights={"mth": 1})
    with pytest.raises(InputError, match="all 0"):
        bayeserr.suite(ds, weights={"math": 0})
    path = tmp_path / "w.csv"
    path.write_text("task,weight\nmath,3\ncode,1\n")
    data = tmp_path / "s.csv"
    _table().to_csv(data, index=False)
    res = cli("report", data, "--bayes", "off", "--task-weights", path, "--format", "json")
    assert res.exit_code == 0, res.output
    weights = json.loads(res.output)["suite"]["weightings"]["user"]["weights"]
    assert weights == {"code": 0.25, "math": 0.75, "qa": 0.0}


@pytest.mark.skipif(not LOG.exists(), reason="needs ../shared/data/inspect-logs")
def test_eval_logs_of_two_tasks_make_a_suite(tmp_path, cli_json):
    """Four Inspect logs (two tasks × two models) in a folder: each run's task is the
    questions' task, with no option."""
    base = json.loads(LOG.read_text())
    base["status"] = "success"
    rng = np.random.default_rng(5)
    for task in ("popularity", "popularity_b"):
        for model in ("openai/m1", "openai/m2"):
            log = copy.deepcopy(base)
            log["eval"]["task"], log["eval"]["model"] = task, model
            samples = []
            for i in range(12):
                s = copy.deepcopy(base["samples"][i % len(base["samples"])])
                s["id"] = i + 1
                scorer = next(iter(s["scores"]))
                s["scores"][scorer]["value"] = "C" if rng.random() < 0.6 else "I"
                samples.append(s)
            log["samples"] = samples
            (tmp_path / f"{task}-{model.split('/')[1]}.json").write_text(json.dumps(log))
    rep = cli_json("report", tmp_path, "--bayes", "off")
    assert rep["columns"]["task"] == "task"
    assert [t["task"] for t in rep["suite"]["tasks"]] == ["popularity", "popularity_b"]
    assert [t["n_questions"] for t in rep["suite"]["tasks"]] == [12, 12]
    macro = {m["model"]: m["mean"] for m in rep["suite"]["models"] if m["weighting"] == "macro"}
    pooled = {m["model"]: m["mean"] for m in rep["models"]}
    assert macro == pytest.approx(pooled)  # equal task sizes: macro = pooled


def test_gate_on_the_suite_and_on_one_task(tmp_path, cli):
    """``gate --suite macro``: the suite difference of bayeserr.suite, tested one-sided on its
    df (scipy's t); ``--task``: the same as keeping that task's questions."""
    from scipy import stats
    path = tmp_path / "s.csv"
    df = _table()
    df.to_csv(path, index=False)
    res = cli("gate", path, "--candidate", "C", "--baseline", "B", "--margin", "0.02", "--suite", "macro",
              "--format", "json")
    assert res.exit_code in (0, 1), res.output
    check = json.loads(res.output)["candidates"][0]
    pair = next(p for p in bayeserr.suite(bayeserr.load(df)).pairs
                if {p.a, p.b} == {"C", "B"} and p.weighting == "macro")
    diff = pair.diff if pair.a == "C" else -pair.diff
    assert check["test"] == "t_suite_macro" and check["wild"] is None and check["prob"] is None
    assert check["diff"] == pytest.approx(diff) and check["se"] == pytest.approx(pair.se)
    assert check["p_value"] == pytest.approx(stats.t.sf((diff + 0.02) / pair.se, pair.df), rel=1e-9)
    assert check["lower"] == pytest.approx(diff - stats.t.ppf(0.95, pair.df) * pair.se, rel=1e-9)
    one = cli("gate", path, "--candidate", "C", "--baseline", "B", "--margin", "0.02", "--task", "code",
              "--format", "json")
    sub = tmp_path / "code.csv"
    df[df.task == "code"].to_csv(sub, index=False)
    same = cli("gate", sub, "--candidate", "C", "--baseline", "B", "--margin", "0.02", "--format", "json")
    a, b = json.loads(one.output)["candidates"][0], json.loads(same.output)["candidates"][0]
    assert one.exit_code == same.exit_code and a["diff"] == b["diff"] and a["lower"] == b["lower"]
    bad = cli("gate", path, "--candidate", "C", "--baseline", "B", "--margin", "0.02", "--task", "cod")
    assert bad.exit_code == 2 and "Did you mean 'code'" in bad.output
    no_tasks = tmp_path / "n.csv"
    df.drop(columns="task").to_csv(no_tasks, index=False)
    bad = cli("gate", no_tasks, "--candidate", "C", "--baseline", "B", "--margin", "0.02", "--suite", "macro")
    assert bad.exit_code == 2 and "at least two tasks" in bad.output


def test_each_task_gets_its_own_tables_equal_to_a_report_of_that_task(cli_json, tmp_path):
    df = _table()
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--bayes", "off")  # validated against the schema (per_task included)
    assert [t["task"] for t in rep["per_task"]] == ["code", "math", "qa"]
    for entry in rep["per_task"]:
        alone = bayeserr.report(bayeserr.load(df[df.task == entry["task"]]), bayes="off").to_dict()
        assert [m["model"] for m in entry["models"]] == [m["model"] for m in alone["models"]]
        for got, want in zip(entry["models"], alone["models"]):
            assert got["mean"] == want["mean"] and got["se_clustered"] == pytest.approx(want["se_clustered"])
        key = {(c["a"], c["b"]): c for c in alone["comparisons"]}
        for c in entry["comparisons"]:
            assert c["p_value"] == pytest.approx(key[c["a"], c["b"]]["p_value"])
    page = bayeserr.report(bayeserr.load(df), bayes="off").to_html(figures=False)
    assert page.count('<details class="fold"><summary>Task ') == 3


def test_a_model_missing_from_a_task_is_left_out_of_that_task_only():
    df = _table()
    df = df[~((df.model == "C") & (df.task == "qa"))]
    rep = bayeserr.report(bayeserr.load(df), bayes="off", on_unpaired="drop")
    per = {t: [m.model for m in s] for t, s, _ in rep.per_task}
    assert sorted(per["qa"]) == ["A", "B"] and sorted(per["code"]) == ["A", "B", "C"]
    macro = {s.model: s.mean for s in rep.suite.of("macro")}
    assert np.isnan(macro["C"]) and np.isfinite(macro["A"])  # its suite score needs every task


def test_review_mends_of_the_suite(tmp_path, cli):
    """Size weights are the tasks' shares for every model (a model that skipped a task has
    no suite score); a one-question task does not stop the report; intervals stay in [0, 1];
    a cluster in two tasks is used across tasks; weights named twice are refused."""
    df = _table()
    skipped = df[~((df.model == "C") & (df.task == "qa"))]
    s = bayeserr.suite(bayeserr.load(skipped))
    size = {x.model: x for x in s.of("size")}
    assert np.isnan(size["C"].mean) and np.isfinite(size["A"].mean)
    assert s.weights["size"] == pytest.approx((120 / 185, 40 / 185, 25 / 185))
    one_q = pd.concat([df, pd.DataFrame({"model": list("ABC"), "question_id": "solo-1", "task": "solo",
                                         "cluster_id": "solo-c", "score": [1, 0, 1]})])
    rep = bayeserr.report(bayeserr.load(one_q), bayes="off")
    assert [t for t, _, _ in rep.per_task] == ["code", "math", "qa"]  # no model has 2 answers in "solo"
    narrow = bayeserr.suite(bayeserr.load(df[df.task != "math"]), weights={"qa": 1})
    assert all(0 <= x.ci[0] <= x.ci[1] <= 1 for x in narrow.scores)
    crossed = df.assign(cluster_id="c" + (df.question_id.str.split("-").str[1].astype(int) % 7).astype(str))
    assert bayeserr.suite(bayeserr.load(crossed)).clusters == "across tasks"
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    res = cli("report", path, "--bayes", "off", "--task-weights", "math=1,code=1,math=3")
    assert res.exit_code == 2 and "'math' twice" in res.output
    res = cli("report", path, "--bayes", "off", "--task-weights", "nofile.csv")
    assert res.exit_code == 2 and "no such file" in res.output


def test_review_mends_of_the_gate(tmp_path, cli):
    """An undefined suite difference is bad input (exit 2), not a failed gate; the task or
    suite gated is named in the sentence, the JSON and the job summary; assert_not_worse
    takes suite= and task=."""
    from bayeserr.testing import assert_not_worse
    df = _table()
    path = tmp_path / "s.csv"
    df[~((df.model == "C") & (df.task == "qa"))].to_csv(path, index=False)
    res = cli("gate", path, "--candidate", "C", "--baseline", "B", "--margin", "0.05", "--suite", "macro",
              "--on-unpaired", "drop")
    assert res.exit_code == 2 and "not estimable" in res.output
    full = tmp_path / "full.csv"
    df.to_csv(full, index=False)
    summary = tmp_path / "summary.md"
    res = cli("gate", full, "--candidate", "C", "--baseline", "B", "--margin", "0.1", "--task", "code",
              "--summary", summary, "--format", "json")
    out = json.loads(res.stdout)
    assert out["scope"] == "task code" and out["sentence"].startswith("[task code] ")
    text = summary.read_text()
    assert "### bayeserr gate (task code)" in text
    cli("gate", full, "--candidate", "C", "--baseline", "B", "--margin", "0.1", "--suite", "macro",
        "--summary", summary)
    assert "suite t (macro weights)" in summary.read_text() and "(suite macro)" in summary.read_text()
    assert assert_not_worse(full, "C", "B", margin=0.1, suite="macro").scope == "suite macro"
    assert assert_not_worse(full, "C", "B", margin=0.1, task="code").scope == "task code"


def test_suite_ranking_answers_first_under_the_users_weights(tmp_path, cli, cli_json):
    """The user's weighting gets its own ranking (own rank intervals, the set tied with the
    best), first in the report; two models: the set is the one-sided suite t-test."""
    from scipy import stats
    df = _table(clusters=False)
    df = df[df.model != "C"]
    path = tmp_path / "suite.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--bayes", "off", "--task-weights", "math=2,code=1,qa=1")
    ranking = rep["suite"]["ranking"]
    assert ranking["weighting"] == "user" and [m["model"] for m in ranking["models"]][0] in ("A", "B")
    pair = next(p for p in rep["suite"]["pairs"] if p["weighting"] == "user")
    lower = pair["b"] if pair["diff"] > 0 else pair["a"]
    t = abs(pair["diff"]) / pair["se"]
    want = stats.t.sf(t, pair["df"])  # P(a t this large | the lower model is the best)
    got = next(m for m in ranking["models"] if m["model"] == lower)["p_is_best"]
    assert abs(got - want) < 4 * np.sqrt(max(want * (1 - want), 1e-4) / 4999)
    assert (lower in ranking["tied_with_best"]) == (got > 0.05)
    md = cli("report", path, "--bayes", "off", "--task-weights", "math=2,code=1,qa=1").output
    assert md.index("## Suite") < md.index("## Ranking")  # the user's weighting first
    assert "Under your weights: tied with the best at 95%" in md
    md = cli("report", path, "--bayes", "off").output  # macro: the pooled ranking first
    assert md.index("## Ranking") < md.index("## Suite") and "Under macro weights (tasks equal): tied with" in md


def test_clusters_read_as_fixed_strata(tmp_path, cli, cli_json):
    """--clusters-as strata: a Suite section over the clusters, led by the size weighting — the
    pooled mean with the stratified variance Σ w_c² s_c²/n_c (w_c = n_c/n), hand-computed — with its
    own ranking, first; clusters of one question are pooled; refused beside tasks or at scale."""
    df = _table(clusters=True).drop(columns="task")
    df.loc[df.question_id == "qa-0", "cluster_id"] = "lonely"  # a cluster of one question
    path = tmp_path / "strata.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--bayes", "off", "--clusters-as", "strata")
    suite = rep["suite"]
    assert suite["clusters_as_strata"] and suite["ranking"]["weighting"] == "size"
    assert "(small clusters, pooled)" in [t["task"] for t in suite["tasks"]]
    a = df[df.model == "A"].copy()
    sizes = a.groupby("cluster_id").size()
    smallest = sizes[sizes >= 2].idxmin()  # the lonely question is pooled with the smallest other cluster
    strata = a.cluster_id.where(~a.cluster_id.isin(["lonely", smallest]), "pooled")
    n = len(a)
    var = sum((len(g) / n) ** 2 * g.score.var(ddof=1) / len(g) for _, g in a.groupby(strata))
    got = next(m for m in suite["models"] if m["model"] == "A" and m["weighting"] == "size")
    assert got["mean"] == pytest.approx(a.score.mean(), abs=1e-12)
    assert got["se"] == pytest.approx(np.sqrt(var), rel=1e-10)
    md = cli("report", path, "--bayes", "off", "--clusters-as", "strata").output
    assert md.index("## Suite") < md.index("## Ranking") and "Clusters read as fixed strata" in md
    res = cli("report", path, "--bayes", "off", "--clusters-as", "strata", "--task-col", "cluster_id")
    assert res.exit_code == 2 and "already have tasks" in res.output and "Traceback" not in res.output
