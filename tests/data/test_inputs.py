"""Several inputs at once (mixed formats, globs, NAME=PATH), --where filters,
configuration files (flag > bayeserr.toml > pyproject.toml > default),
--version and shell completion."""

import html
import importlib.metadata
import json
import shutil
import zipfile

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import bayeserr
from bayeserr.cli import main
from bayeserr.data.filters import apply_where, parse_where, where_counts

from ..conftest import SHARED, validate_report
from .readers.test_readers import _lmeval_output

LOGS = SHARED / "data" / "inspect-logs"
DONE = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
UNFINISHED = "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
LETTERS = {"C": 1.0, "I": 0.0}


def real_log(name):
    path = LOGS / name
    if not path.exists():
        pytest.skip("../shared/data/inspect-logs absent")
    return path


def _numbers(rep: dict) -> dict:
    """What must not depend on how the rows were split into inputs."""
    return {"models": rep["models"], "comparisons": rep["comparisons"], "tie_zone": rep["tie_zone"],
            "warnings": rep["warnings"], "level": rep["level"]}


def report_json(cli, *args) -> dict:
    res = cli("report", *args, "--bayes", "off", "--format", "json")
    assert res.exit_code == 0, res.output
    return validate_report(json.loads(res.stdout))


def fails(res, *words) -> str:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    for w in words:
        assert w in res.output, res.output
    return res.output


def inspect_log(path, model, task, scores: dict, metadata=None, created="2025-01-01T00:00:00+00:00"):
    """An Inspect AI .json log in its exact shape: header ``eval`` and samples."""
    samples = [{"id": sid, "epoch": 1, "input": f"question {sid}", "target": "C",
                "scores": {"match": {"value": value, "answer": "x"}},
                "metadata": (metadata or {}).get(sid, {})} for sid, value in scores.items()]
    path.write_text(json.dumps({"version": 2, "status": "success", "samples": samples,
                                "eval": {"task": task, "model": model, "created": created}}))
    return path


def retitled(src, dst, model, flip=()):
    """A copy of a real .eval archive whose header names another model, with
    the scores of the samples ``flip`` turned over."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "header.json":
                header = json.loads(data)
                header["eval"]["model"] = model
                data = json.dumps(header)
            elif info.filename in [f"samples/{i}_epoch_1.json" for i in flip]:
                sample = json.loads(data)
                score = sample["scores"]["match"]
                score["value"] = "I" if score["value"] == "C" else "C"
                data = json.dumps(sample)
            zout.writestr(info.filename, data)
    return dst


def archive_rows(path) -> list[dict]:
    """The rows of an .eval archive, read with zipfile and json only."""
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
        task, model = header["eval"]["task"], header["eval"]["model"]
        rows = []
        for name in z.namelist():
            if name.startswith("samples/"):
                s = json.loads(z.read(name))
                rows.append({"model": model, "question_id": f"{task}/{s['id']}", "sample": s["epoch"],
                             "score": LETTERS[s["scores"]["match"]["value"]]})
    return rows


# ------------------------------------------------------------------ several inputs
def test_two_inspect_logs_equal_one_combined_table(tmp_path, cli):
    first = real_log(DONE)
    second = retitled(first, tmp_path / "other.eval", "openai/gpt-4o", flip=(3, 5, 9))
    table = pd.DataFrame(archive_rows(first) + archive_rows(second))
    assert table["model"].nunique() == 2 and len(table) == 20
    table.to_csv(tmp_path / "combined.csv", index=False)
    combined = report_json(cli, tmp_path / "combined.csv")
    both = report_json(cli, first, second)
    assert _numbers(both) == _numbers(combined)
    assert {m["model"] for m in both["models"]} == {"openai/gpt-4o-mini", "openai/gpt-4o"}
    assert both["comparisons"][0]["n_questions"] == 10
    assert both["rows"]["read"] == both["rows"]["used"] == 20
    assert [(i["input"], i["read"], i["used"]) for i in both["rows"]["inputs"]] == \
        [(str(first), 10, 10), (str(second), 10, 10)]
    assert {p["path"] for p in both["provenance"]["inputs"]} == {str(first), str(second)}
    # the Python API: a list of paths gives the same dataset as the combined file
    ds = bayeserr.load([first, second])
    one = bayeserr.load(tmp_path / "combined.csv")
    for m in one["model"].values:
        a = ds["score"].sel(model=m).to_series().dropna().droplevel("sample").sort_index()
        b = one["score"].sel(model=m).to_series().dropna().droplevel("sample").sort_index()
        assert a.equals(b)


def test_the_same_answers_in_two_inputs_name_both_files(tmp_path, cli):
    first = real_log(DONE)
    copy = tmp_path / "copy.eval"
    shutil.copy(first, copy)
    fails(cli("report", first, copy), str(first), str(copy), "model 'openai/gpt-4o-mini'",
          "question 'popularity/", "10 answer(s)", "count twice")
    a = tmp_path / "a.csv"
    a.write_text("model,question_id,score\nA,q1,1\nA,q2,0\nB,q1,1\nB,q2,1\n")
    b = tmp_path / "b.csv"
    b.write_text("model,question_id,score\nB,q2,0\nC,q1,1\nC,q2,0\n")
    fails(cli("report", a, b), str(a), str(b), "model 'B' on question 'q2'", "data rows 4", "data rows 1")
    fails(cli("report", a, a), "given twice")


def test_csv_plus_named_log_and_named_table(tmp_path, cli):
    log = real_log(DONE)
    truth = pd.DataFrame(archive_rows(log))
    base = truth.drop(columns="model").assign(score=1.0 - truth["score"])  # no model column
    base.to_csv(tmp_path / "base.csv", index=False)
    expected = pd.concat([truth.assign(model="mini"), base.assign(model="flipped")])
    expected.to_csv(tmp_path / "expected.csv", index=False)
    want = report_json(cli, tmp_path / "expected.csv")
    got = report_json(cli, f"flipped={tmp_path / 'base.csv'}", f"mini={log}")
    assert _numbers(got) == _numbers(want)
    means = {m["model"]: m["mean"] for m in got["models"]}
    assert means == {"mini": pytest.approx(0.8), "flipped": pytest.approx(0.2)}
    # the API: {model: path}, and a list mixing named and unnamed inputs
    ds = bayeserr.load({"flipped": tmp_path / "base.csv", "mini": log})
    assert sorted(ds["model"].values) == ["flipped", "mini"]
    ds = bayeserr.load([log, {"flipped": tmp_path / "base.csv"}])
    assert sorted(ds["model"].values) == ["flipped", "openai/gpt-4o-mini"]
    # an input holding several models cannot be given one name
    fails(cli("report", f"x={tmp_path / 'expected.csv'}", log), "names the model of every row",
          "2 models")
    # without a name, a table with no model column says how to name it
    fails(cli("report", tmp_path / "base.csv", log), "no 'model' column")


def test_compare_takes_several_inputs_and_the_old_form(tmp_path, cli):
    rng = np.random.default_rng(4)
    rows = [{"model": m, "question_id": f"q{i}", "cluster_id": f"c{i % 6}", "score": float(rng.random() < p)}
            for m, p in (("A", 0.7), ("B", 0.5), ("C", 0.6)) for i in range(60)]
    df = pd.DataFrame(rows)
    df.to_csv(tmp_path / "all.csv", index=False)
    df[df.model == "A"].to_csv(tmp_path / "a.csv", index=False)
    df[df.model != "A"].drop(columns="cluster_id").to_csv(tmp_path / "bc.csv", index=False)  # clusters from a.csv

    def compare(*args):
        res = cli("compare", *args, "--bayes", "off", "--format", "json")
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        return out["comparison"], out["models"], out["rows"]

    old = compare(tmp_path / "all.csv", "A", "B")
    new = compare(tmp_path / "a.csv", tmp_path / "bc.csv", "A", "B")
    assert new[:2] == old[:2]
    # every row enters: C's rows give the report's verdict on the pair (its family of three pairs)
    assert old[2] == {"read": 180, "used": 180, "dropped": []}
    pair = compare(tmp_path / "all.csv", "A", "B", "--family", "pair")
    assert pair[:2] == old[:2]
    assert pair[2] == {"read": 180, "used": 120, "dropped": [{"reason": "model not selected", "count": 60}]}
    assert [(i["read"], i["used"]) for i in new[2]["inputs"]] == [(60, 60), (120, 120)]
    fails(cli("compare", tmp_path / "a.csv", "A"), "FILE... A B")


def test_mixed_formats_csv_inspect_log_and_lmeval_folder(tmp_path, cli):
    rng = np.random.default_rng(7)
    n = 30
    acc = {m: (rng.random(n) < p).astype(float) for m, p in (("csv-model", 0.7), ("log-model", 0.6),
                                                               ("org/lm", 0.5))}
    pd.DataFrame({"model": "csv-model", "question_id": [f"arc_easy/{i}" for i in range(n)],
                  "score": acc["csv-model"]}).to_csv(tmp_path / "t.csv", index=False)
    inspect_log(tmp_path / "run.json", "log-model", "arc_easy",
                {i: "C" if v else "I" for i, v in enumerate(acc["log-model"])})
    _lmeval_output(tmp_path / "lm", "org/lm", {"acc": acc["org/lm"], "acc_norm": acc["org/lm"]})
    pd.DataFrame([{"model": m, "question_id": f"arc_easy/{i}", "score": v}
                  for m, a in acc.items() for i, v in enumerate(a)]).to_csv(tmp_path / "all.csv", index=False)
    got = report_json(cli, tmp_path / "t.csv", tmp_path / "run.json", tmp_path / "lm")
    assert _numbers(got) == _numbers(report_json(cli, tmp_path / "all.csv"))
    assert [i["read"] for i in got["rows"]["inputs"]] == [n, n, n]


def test_a_quoted_glob_is_expanded(tmp_path, cli):
    logs = tmp_path / "logs"
    logs.mkdir()
    rng = np.random.default_rng(2)
    for m in ("m1", "m2", "m3"):
        inspect_log(logs / f"{m}.json", m, "t", {i: "C" if rng.random() < 0.6 else "I" for i in range(12)})
    (logs / "notes.txt").write_text("not a log")
    pattern = str(logs / "*.json")
    by_glob = report_json(cli, pattern)
    assert _numbers(by_glob) == _numbers(report_json(cli, logs))
    assert [i["input"] for i in by_glob["rows"]["inputs"]] == [str(logs / f"{m}.json") for m in ("m1", "m2", "m3")]
    assert bayeserr.load(pattern).sizes["model"] == 3
    fails(cli("report", str(tmp_path / "nothing" / "*.eval")), "no file or folder matches")


def test_unscored_log_among_several_inputs_is_counted_as_dropped(tmp_path, cli):
    done, unfinished = real_log(DONE), real_log(UNFINISHED)
    rep = report_json(cli, done, unfinished)
    assert rep["rows"]["read"] == 20 and rep["rows"]["used"] == 10
    assert rep["rows"]["inputs"][1] == {"input": str(unfinished), "read": 10, "used": 0,
                                        "dropped": [{"reason": f"unscored log {UNFINISHED}", "count": 10}]}


# ------------------------------------------------------------------ --where
@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(11)
    rows = [{"model": m, "question_id": f"q{i}", "score": float(rng.random() < 0.6),
             "cat": "abc"[i % 3], "level": i % 5, "date": f"2025-0{1 + i % 4}-15"}
            for m in ("A", "B") for i in range(40)]
    df = pd.DataFrame(rows)
    df.to_csv(tmp_path / "t.csv", index=False)
    return tmp_path / "t.csv", df


@pytest.mark.parametrize("expr, keep", [
    ("cat=a", lambda d: d.cat == "a"),
    ("cat=a,b", lambda d: d.cat.isin(["a", "b"])),
    ("cat!=a", lambda d: d.cat != "a"),
    ("cat!=a,b", lambda d: ~d.cat.isin(["a", "b"])),
    ("level<2", lambda d: d.level < 2),
    ("level<=2", lambda d: d.level <= 2),
    ("level>2", lambda d: d.level > 2),
    ("level>=2", lambda d: d.level >= 2),
    ("level=2.0", lambda d: d.level == 2),
    ("date>=2025-03-01", lambda d: d.date >= "2025-03-01"),
])
def test_where_operators_on_a_table(cli, table, expr, keep):
    path, df = table
    rep = report_json(cli, path, "--where", expr)
    n_drop = int((~keep(df)).sum())
    assert rep["rows"] == {"read": 80, "used": 80 - n_drop,
                           "dropped": [{"reason": f"--where {expr}", "count": n_drop}]}
    kept = df[keep(df)]
    assert {m["model"]: m["mean"] for m in rep["models"]} == \
        {m: pytest.approx(kept[kept.model == m].score.mean()) for m in ("A", "B")}
    md = cli("report", path, "--where", expr, "--bayes", "off").stdout
    assert f"dropped: {n_drop} ({n_drop} removed by --where {expr})" in md


def test_where_expressions_all_hold_and_are_counted_in_every_format(cli, table, tmp_path):
    path, df = table
    second = tmp_path / "u.csv"
    df.assign(model=df.model + "2").to_csv(second, index=False)
    args = (path, second, "--where", "cat!=c", "--where", "level>=1", "--bayes", "off")
    rep = report_json(cli, *args)
    first_drop = int((df.cat == "c").sum())
    then = int(((df.cat != "c") & (df.level < 1)).sum())
    dropped = [{"reason": "--where cat!=c", "count": 2 * first_drop},
               {"reason": "--where level>=1", "count": 2 * then}]
    assert rep["rows"]["dropped"] == dropped
    assert rep["rows"]["inputs"][0]["dropped"] == [{"reason": d["reason"], "count": d["count"] // 2}
                                                   for d in dropped]
    total = (f"Rows read: 160; used: {160 - 2 * (first_drop + then)}; dropped: {2 * (first_drop + then)} "
             f"({2 * first_drop} removed by --where cat!=c; {2 * then} removed by --where level>=1). "
             f"By input: {path}: read 80")
    assert total in " ".join(cli("report", *args).stdout.split())  # Markdown wraps its prose
    assert total in cli("report", *args, "--format", "latex").stdout
    page = tmp_path / "r.html"
    assert cli("report", *args, "--format", "html", "-o", page).exit_code == 0
    assert html.escape(total, quote=False) in page.read_text()


def test_where_on_inspect_logs(tmp_path, cli):
    meta = {i: {"subject": "physics" if i % 2 else "history", "info": {"level": i % 3}} for i in range(12)}
    rng = np.random.default_rng(3)
    for m in ("m1", "m2"):
        for task in ("t1", "t2"):
            inspect_log(tmp_path / f"{m}-{task}.json", m, task,
                        {i: "C" if rng.random() < 0.6 else "I" for i in range(12)}, meta)
    rep = report_json(cli, tmp_path, "--where", "task=t1")
    assert rep["rows"]["used"] == 24 and rep["rows"]["dropped"] == [{"reason": "--where task=t1", "count": 24}]
    rep = report_json(cli, tmp_path, "--where", "subject!=history", "--where", "info.level>=1")
    kept = [i for i in range(12) if i % 2 and i % 3 >= 1]
    assert rep["rows"]["used"] == 4 * len(kept)
    assert [d["reason"] for d in rep["rows"]["dropped"]] == ["--where subject!=history", "--where info.level>=1"]
    same = report_json(cli, tmp_path, "--where", "metadata.subject=physics", "--where", "metadata.info.level>0")
    assert _numbers(same) == _numbers(rep)
    out = fails(cli("report", tmp_path, "--where", "subjet=physics"), "no column 'subjet'",
                "Did you mean 'subject'?", "task", "info.level")
    assert out.count("error:") == 1
    # a real log's metadata
    log = real_log(DONE)
    ds = bayeserr.load(log, where="label_confidence>0.88")
    assert ds.attrs["rows"]["dropped"] == [{"reason": "--where label_confidence>0.88", "count": 3}]


def test_where_errors_are_one_line_with_the_fix(cli, table):
    path, _ = table
    fails(cli("report", path, "--where", "caat=a"), "no column 'caat'", "Did you mean 'cat'?",
          "Columns available: model, question_id, score, cat, level, date")
    fails(cli("report", path, "--where", "cat=d"), "no rows have cat=d", "Values of 'cat': a, b, c")
    fails(cli("report", path, "--where", "cat"), "--where takes COL=VALUE")
    fails(cli("report", path, "--where", "level>9"), "leaves no rows")
    fails(cli("report", path, "--where", "cat<3"), "holds text")
    fails(cli("compare", path, "A", "B", "--where", "levl>1"), "Did you mean 'level'?")


def test_apply_where_is_pure():
    df = pd.DataFrame({"x": [1, 2, 3, None], "t": ["a", "b", None, "a"]})
    before = df.copy()
    kept, drops = apply_where(df, ["t!=b", "x>=2"])
    assert df.equals(before)
    assert list(kept.index) == [2]  # None != "b"; 3 >= 2
    assert where_counts(drops) == [("--where t!=b", 1), ("--where x>=2", 2)]
    assert not np.any(drops[0][1] & drops[1][1])
    c = parse_where(r"name=a\,b,c")
    assert c.values == ("a,b", "c") and c.op == "=" and parse_where("x==1").op == "="


# ------------------------------------------------------------------ configuration
@pytest.fixture
def project(tmp_path, monkeypatch, table):
    """A project with pyproject.toml [tool.bayeserr] and, in a sub-folder, bayeserr.toml."""
    root = tmp_path / "proj"
    sub = root / "sub"
    sub.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.bayeserr]\nlevel = 0.8\n'
                                         'bayes = "off"\nmethods = ["clt", "wilson"]\n')
    (sub / "bayeserr.toml").write_text('level = 0.9\nwhere = ["cat!=c"]\n')
    monkeypatch.chdir(sub)
    return root, sub, table[0]


def _settings(cli, *args):
    res = cli("config", "--format", "json", *args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_config_precedence_flag_bayeserr_toml_pyproject_default(cli, project):
    root, sub, path = project
    cfg = _settings(cli)
    s = cfg["settings"]
    assert cfg["files"] == {"pyproject.toml": str(root / "pyproject.toml"), "bayeserr.toml": str(sub / "bayeserr.toml")}
    assert s["level"] == {"value": 0.9, "source": str(sub / "bayeserr.toml")}
    assert s["bayes"] == {"value": "off", "source": f"{root / 'pyproject.toml'} [tool.bayeserr]"}
    assert s["methods"]["value"] == "clt,wilson" and s["where"]["value"] == ["cat!=c"]
    assert s["adjust"] == {"value": "romano-wolf", "source": "default"}
    assert _settings(cli, "--level", "0.7")["settings"]["level"] == {"value": 0.7, "source": "flag"}
    text = cli("config").stdout
    assert "level" in text and str(sub / "bayeserr.toml") in text and "default" in text
    # ... and in force in report
    rep = json.loads(cli("report", path, "--format", "json").stdout)
    assert rep["level"] == 0.9 and rep["rows"]["dropped"][0]["reason"] == "--where cat!=c"
    rep = json.loads(cli("report", path, "--format", "json", "--level", "0.7", "--where", "cat=a").stdout)
    assert rep["level"] == 0.7 and [d["reason"] for d in rep["rows"]["dropped"]] == ["--where cat=a"]
    md = cli("report", path).stdout
    assert "Wilson" in md  # methods from pyproject.toml
    (sub / "bayeserr.toml").unlink()
    assert json.loads(cli("report", path, "--format", "json").stdout)["level"] == 0.8
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert json.loads(cli("report", path, "--format", "json", "--bayes", "off").stdout)["level"] == 0.95
    assert _settings(cli)["files"] == {}


def test_config_column_names_and_cluster_field(cli, tmp_path, monkeypatch):
    (tmp_path / "bayeserr.toml").write_text('model-col = "system"\nquestion_col = "item"\nbayes = "off"\n')
    pd.DataFrame({"system": ["A"] * 4 + ["B"] * 4, "item": list("wxyz") * 2,
                  "score": [1, 0, 1, 1, 0, 0, 1, 0]}).to_csv(tmp_path / "r.csv", index=False)
    monkeypatch.chdir(tmp_path)
    rep = json.loads(cli("report", "r.csv", "--format", "json").stdout)
    assert rep["columns"]["model"] == "system" and rep["columns"]["question"] == "item"
    cmp = cli("compare", "r.csv", "A", "B", "--format", "json")
    assert cmp.exit_code == 0 and json.loads(cmp.stdout)["comparison"]["diff"] == pytest.approx(0.5)


@pytest.mark.parametrize("text, words", [
    ("level = 1.5\n", ["bayeserr.toml: level = 1.5", "--level must be"]),
    ("levl = 0.9\n", ["unknown setting 'levl'", "Did you mean 'level'?"]),
    ('bayes = "of"\n', ["bayes = \"of\"", "'of' is not one of"]),
    ('methods = "wilsen"\n', ["methods", "Did you mean 'wilson'?"]),
    ("seed = -1\n", ["seed = -1", "--seed must be"]),
    ("no-cluster = 1\n", ["no-cluster takes true or false"]),
    ('level = "high"\n', ["level takes a number"]),
    ('where = ["cat"]\n', ["--where takes COL=VALUE"]),
    ("level = \n", ["not valid TOML"]),
])
def test_bad_configuration_stops_with_the_file_and_key(cli, tmp_path, monkeypatch, text, words):
    (tmp_path / "bayeserr.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    fails(cli("report", "whatever.csv"), str(tmp_path / "bayeserr.toml"), *words)
    fails(cli("config"), *words)


def test_unknown_key_in_pyproject_names_the_table(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.bayeserr]\nclustr-field = "repo"\n')
    monkeypatch.chdir(tmp_path)
    fails(cli("config"), "pyproject.toml", "unknown setting 'clustr-field' in [tool.bayeserr]",
          "Did you mean 'cluster-field'?")
    assert cli("demo", "--format", "json").exit_code == 0  # commands that take no settings run


# ------------------------------------------------------------------ version and completion
def test_version():
    res = CliRunner().invoke(main, ["--version"])
    assert res.exit_code == 0
    assert res.output.strip() == f"bayeserr, version {importlib.metadata.version('bayeserr')}"


@pytest.mark.parametrize("shell, marker", [("bash", "_bayeserr_completion"), ("zsh", "#compdef bayeserr"),
                                           ("fish", "complete --no-files --command bayeserr")])
def test_shell_completion_script(shell, marker):
    res = CliRunner().invoke(main, [], prog_name="bayeserr", env={"_BAYESERR_COMPLETE": f"{shell}_source"})
    assert res.exit_code == 0 and marker in res.output


def test_shell_completion_completes_commands_and_options():
    def complete(words, cword):
        env = {"_BAYESERR_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        return CliRunner().invoke(main, [], prog_name="bayeserr", env=env).output.split()
    assert "plain,report" in complete("bayeserr rep", 1) and "plain,config" in complete("bayeserr con", 1)
    assert "plain,--where" in complete("bayeserr report x.csv --wh", 3)


@pytest.mark.parametrize("args", [
    ("report", "{ex}", "-o", ""), ("report", "{ex}", "--task-weights", ""),
    ("gate", "{ex}", "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.1", "--summary", ""),
])
def test_an_empty_option_value_is_refused(cli, args):
    """`-o ''`, `--task-weights ''`, `--summary ''`: exit 2 naming the option (issue 43 item 9)."""
    from bayeserr.examples import example_path
    res = cli(*[a.format(ex=example_path()) for a in args], "--bayes", "off")
    assert res.exit_code == 2 and "is empty" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("header, row, command", [
    ("model_a,model_b,winner", "A,B,model_a", "bayeserr arena FILE"),
    ("model,task,score,se", "A,t1,0.5,0.1", "bayeserr tasks FILE"),
    ("model,task,score,n", "A,t1,0.5,40", "bayeserr tasks FILE"),
])
def test_a_file_of_another_kind_is_sent_to_its_command(tmp_path, cli, header, row, command):
    """Pairwise votes or a task × model summary given to `report`: the error names the command
    that reads them, not a look-alike column (issue 43, item 10)."""
    path = tmp_path / "other.csv"
    path.write_text(f"{header}\n{row}\n")
    res = cli("report", path)
    assert res.exit_code == 2 and command in res.output and "did you mean" not in res.output.lower()
    assert "Traceback" not in res.output
