"""Human labels beside a judge's scores (issue 28, input): a column of the
results (``--human-col``), a table of labels joined to the answers
(``--labels``), or a second scorer of Inspect logs (``--human-scorer``).

The labels become ``ds["human"]`` on (model, question, sample), NaN where an
answer is not labelled; a note of the row accounting says how many answers
carry one.  Every bad input is an InputError naming the problem and the fix
(exit 2, no traceback), nothing is dropped silently, and without these options
nothing changes.  The Inspect logs are written by Inspect itself, offline
(``mockllm``), or edited from a real log of ``../shared`` (skipped when absent).
"""

import json
import math
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.base.errors import InputError

from ..conftest import SHARED, validate_report

LOGS = SHARED / "data" / "inspect-logs"
DONE = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def fails(res, *words) -> str:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    for w in words:
        assert w in res.output, res.output
    return res.output


def report_json(cli, *args) -> dict:
    res = cli("report", *args, "--bayes", "off", "--format", "json")
    assert res.exit_code == 0, res.output
    return validate_report(json.loads(res.stdout))


def judged_table(n_questions=8, models=("a", "b", "c"), samples=2, seed=0) -> pd.DataFrame:
    """Answers of several models, several samples each, a judge's score, a topic,
    and a human label on some answers (NaN elsewhere)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in models:
        for q in range(n_questions):
            for s in range(1, samples + 1):
                label = rng.choice([0.0, 1.0, 0.5, np.nan, np.nan])
                rows.append({"model": m, "question_id": f"q{q}", "sample": s,
                             "score": float(rng.integers(0, 2)), "topic": f"t{q % 2}", "human": label})
    return pd.DataFrame(rows)


def human_of(ds, model, question, sample) -> float:
    return float(ds["human"].sel(model=model, question=question, sample=str(sample)))


def same_labels(ds, table: pd.DataFrame, column="human") -> None:
    """``ds["human"]`` holds each row's label, and NaN in every cell with no labelled row."""
    expected = np.full(ds["human"].shape, np.nan)
    pos = {n: {str(v): i for i, v in enumerate(ds[n].values)} for n in ("model", "question", "sample")}
    for r in table.itertuples(index=False):
        d = r._asdict()
        sample = str(d.get("sample", "0"))
        expected[pos["model"][str(d["model"])], pos["question"][str(d["question_id"])],
                 pos["sample"][sample]] = d[column]
    np.testing.assert_array_equal(ds["human"].values, expected)


def notes(ds) -> list[str]:
    return ds.attrs["rows"].get("notes", [])


# ------------------------------------------------------------------ a column of the results
def test_human_column_becomes_ds_human_row_by_row(tmp_path):
    table = judged_table()
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    ds = bayeserr.load(path, human_col="human")
    assert ds["human"].dims == ("model", "question", "sample")
    same_labels(ds, table)
    np.testing.assert_array_equal(ds["score"].values, bayeserr.load(path)["score"].values)
    assert ds.attrs["columns"]["human"] == "human"
    assert ds.attrs["human_source"] == "column 'human'"
    n = int(table["human"].notna().sum())
    per = table.groupby("model")["human"].count()
    assert notes(ds) == [f"{n} of {len(table)} answers have a human label (column 'human'); per model: "
                         f"a {per['a']} of 16, b {per['b']} of 16, c {per['c']} of 16."]
    # a DataFrame gives the same, and so do JSONL and Parquet
    same_labels(bayeserr.load(table, human_col="human"), table)
    table.to_json(tmp_path / "judged.jsonl", orient="records", lines=True)
    same_labels(bayeserr.load(tmp_path / "judged.jsonl", human_col="human"), table)
    table.to_parquet(tmp_path / "judged.parquet")
    same_labels(bayeserr.load(tmp_path / "judged.parquet", human_col="human"), table)


def test_a_human_column_is_never_guessed(tmp_path):
    table = judged_table()
    ds = bayeserr.load(table)
    assert "human" not in ds.data_vars and "human" not in ds.attrs["columns"]
    assert "notes" not in ds.attrs["rows"] and "human_source" not in ds.attrs


def test_human_column_under_another_name_with_bools_and_na(tmp_path):
    path = tmp_path / "judged.csv"
    path.write_text("model,question_id,score,grade\n"
                    "a,q1,1,True\na,q2,0,\na,q3,1,False\nb,q1,0,NA\nb,q2,1,True\nb,q3,0,\n")
    ds = bayeserr.load(path, human_col="grade")
    assert ds["human"].sel(model="a").values.ravel().tolist()[::2] == [1.0, 0.0]
    assert np.isnan(human_of(ds, "a", "q2", 0)) and np.isnan(human_of(ds, "b", "q1", 0))
    assert human_of(ds, "b", "q2", 0) == 1.0
    assert ds.attrs["columns"]["human"] == "grade"
    assert notes(ds)[0].startswith("3 of 6 answers have a human label (column 'grade'); per model: a 2 of 3, b 1 of 3")


@pytest.mark.parametrize("cell, problem", [
    ("1.5", "is outside [0, 1]"), ("-0.1", "is outside [0, 1]"), ("yes", "is not a number"),
    ("inf", "is infinite"),
])
def test_human_labels_outside_unit_interval_or_not_numbers(tmp_path, cli, cell, problem):
    path = tmp_path / "judged.csv"
    path.write_text("model,question_id,score,human\n"
                    f"a,q1,1,1\na,q2,0,{cell}\na,q3,1,\nb,q1,0,0\nb,q2,1,\nb,q3,0,{cell}\n")
    with pytest.raises(InputError) as exc:
        bayeserr.load(path, human_col="human")
    assert f"the human label column 'human' {problem} in 2 row(s) (data rows 2, 6, counting" in str(exc.value)
    out = fails(cli("report", path, "--human-col", "human"), problem, "data rows 2, 6", "[0, 1]")
    assert out.startswith("error:")


def test_missing_human_column_and_a_taken_name(tmp_path, cli):
    table = judged_table()
    with pytest.raises(InputError, match=r"column 'humna' \(from --human-col\) is not in the file. "
                                         r"Did you mean 'human'\?"):
        bayeserr.load(table, human_col="humna")
    with pytest.raises(InputError, match="the column 'score' is the score column"):
        bayeserr.load(table, human_col="score")
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    fails(cli("report", path, "--human-col", "grade"), "'grade' (from --human-col) is not in the file",
          "--labels FILE")


def test_no_labelled_answer_is_an_error(tmp_path, cli):
    table = judged_table().assign(human=np.nan)
    with pytest.raises(InputError, match=r"none of the 48 answers used has a human label \(column 'human'\)"):
        bayeserr.load(table, human_col="human")
    table = judged_table()
    labelled_a = table[(table["model"] == "a") & table["human"].notna()]
    table.loc[table["model"] != "a", "human"] = np.nan
    assert len(labelled_a)
    with pytest.raises(InputError, match=r"none of the 32 answers used has a human label \(column 'human'\) "
                                         r"\(of the answers --where and models kept\)\. The answers with a "
                                         r"label were all left out"):
        bayeserr.load(table, human_col="human", models=["b", "c"])
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    fails(cli("report", path, "--human-col", "human", "--where", "model=b,c"),
          "none of the 32 answers used has a human label", "--where")


def test_where_and_models_keep_the_labels_of_the_rows_they_keep(tmp_path, cli):
    table = judged_table()
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    ds = bayeserr.load(path, human_col="human", where="topic=t1", models=["a", "c"])
    kept = table[(table["topic"] == "t1") & table["model"].isin(["a", "c"])]
    same_labels(ds, kept)
    assert list(ds["model"].values) == ["a", "c"]
    assert notes(ds) == [f"{kept['human'].notna().sum()} of {len(kept)} answers have a human label "
                         f"(column 'human'); per model: a {kept[kept.model == 'a']['human'].count()} of 8, "
                         f"c {kept[kept.model == 'c']['human'].count()} of 8."]
    # a filter on the labels themselves: only the labelled answers
    only = bayeserr.load(path, human_col="human", where="human>=0")
    assert not np.isnan(only["human"].values[~np.isnan(only["score"].values)]).any()
    assert only.attrs["rows"]["dropped"] == [{"reason": "--where human>=0",
                                              "count": int(table["human"].isna().sum())}]


def test_several_table_inputs_each_need_the_column(tmp_path):
    table = judged_table()
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    table[table.model == "a"].to_csv(a, index=False)
    table[table.model != "a"].to_csv(b, index=False)
    same_labels(bayeserr.load([a, b], human_col="human"), table)
    table[table.model != "a"].drop(columns="human").to_csv(b, index=False)
    with pytest.raises(InputError, match=r"b.csv: column 'human' \(from --human-col\) is not in the file"):
        bayeserr.load([a, b], human_col="human")


# ------------------------------------------------------------------ report, CLI
def test_report_runs_and_is_unchanged_with_human_labels(tmp_path, cli):
    table = judged_table()
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    plain = report_json(cli, path)
    with_labels = report_json(cli, path, "--human-col", "human")
    assert with_labels["models"] == plain["models"] and with_labels["comparisons"] == plain["comparisons"]
    assert with_labels["columns"]["human"] == "human"
    assert with_labels["rows"]["notes"][0].startswith(f"{table['human'].notna().sum()} of 48 answers have a "
                                                      "human label")
    md = cli("report", path, "--human-col", "human", "--bayes", "off")
    assert md.exit_code == 0 and "answers have a human label (column 'human')" in md.output
    labels = tmp_path / "labels.csv"
    table.dropna(subset=["human"])[["model", "question_id", "sample", "human"]].to_csv(labels, index=False)
    table.drop(columns="human").to_csv(path, index=False)
    joined = report_json(cli, path, "--labels", labels)
    assert joined["models"] == plain["models"]
    assert {p["path"] for p in joined["provenance"]["inputs"]} == {str(path), str(labels)}
    assert cli("compare", path, "a", "b", "--labels", labels, "--bayes", "off").exit_code == 0


def test_the_labels_file_is_protected_from_being_overwritten(tmp_path, cli):
    table = judged_table()
    path, labels = tmp_path / "judged.csv", tmp_path / "labels.csv"
    table.drop(columns="human").to_csv(path, index=False)
    table.dropna(subset=["human"])[["model", "question_id", "sample", "human"]].to_csv(labels, index=False)
    before = labels.read_bytes()
    res = cli("report", path, "--labels", labels, "--bayes", "off", "--format", "md", "-o", labels)
    fails(res, str(labels))
    assert labels.read_bytes() == before


def test_help_names_the_options(cli):
    text = cli("report", "--help").output
    for flag in ("--human-col", "--labels", "--human-scorer"):
        assert flag in text


# ------------------------------------------------------------------ a table of labels
def _labels_of(table: pd.DataFrame, keys=("model", "question_id", "sample")) -> pd.DataFrame:
    return table.dropna(subset=["human"])[[*keys, "human"]].reset_index(drop=True)


def test_labels_file_joined_with_samples_and_several_models(tmp_path):
    table = judged_table()
    results = table.drop(columns="human")
    path = tmp_path / "results.csv"
    results.to_csv(path, index=False)
    labels = _labels_of(table).sample(frac=1, random_state=1)  # any order
    for fmt in ("csv", "jsonl", "parquet"):
        lab = tmp_path / f"labels.{fmt}"
        if fmt == "csv":
            labels.to_csv(lab, index=False)
        elif fmt == "jsonl":
            labels.to_json(lab, orient="records", lines=True)
        else:
            labels.to_parquet(lab)
        ds = bayeserr.load(path, labels=lab)
        same_labels(ds, table)
        assert ds.attrs["columns"]["human"] == "human"
        assert ds.attrs["human_source"] == f"{lab}, column 'human', joined on model, question_id, sample"
        assert notes(ds)[0].startswith(f"{len(labels)} of 48 answers have a human label ({lab}, column 'human', "
                                       "joined on model, question_id, sample); per model: a ")
        assert ds.attrs["inputs"] == [str(path), str(lab)]
    # a DataFrame of labels, and a results DataFrame
    same_labels(bayeserr.load(results, labels=labels), table)
    # the column options name the id columns of both tables; --human-col the label column
    renamed = {"model": "system", "question_id": "item", "sample": "draw"}
    other = results.rename(columns=renamed)
    lab = labels.rename(columns={**renamed, "human": "grade"})
    ds = bayeserr.load(other, labels=lab, model_col="system", question_col="item", sample_col="draw",
                       human_col="grade")
    same_labels(ds, table)
    assert ds.attrs["columns"]["human"] == "grade"


def test_labels_without_sample_or_model_column(tmp_path):
    one = judged_table(samples=1)
    results = one.drop(columns="human")
    # the results have a sample column, but one answer per model and question
    same_labels(bayeserr.load(results, labels=_labels_of(one, ("model", "question_id"))), one)
    # one model: the model column may be left out
    a = one[one.model == "a"]
    same_labels(bayeserr.load(a.drop(columns="human"), labels=_labels_of(a, ("question_id",))), a)
    with pytest.raises(InputError, match=r"labels DataFrame: no 'model' column for the model \(the results "
                                         r"hold 3 models\)"):
        bayeserr.load(results, labels=_labels_of(one, ("question_id",)))
    # several samples: a label without its sample matches several answers
    two = judged_table(samples=2)
    one_each = _labels_of(two, ("model", "question_id")).drop_duplicates(["model", "question_id"])
    with pytest.raises(InputError, match=r"a label without a 'sample' matches several answers \(samples\) of "
                                         r"its model and question in \d+ row\(s\).*Add the 'sample' column"):
        bayeserr.load(two.drop(columns="human"), labels=one_each)
    # and two labels of one model and question, without samples, are two labels for one answer
    with pytest.raises(InputError, match=r"two labels for one answer \(model, question_id\) in \d+ row\(s\).*"
                                         r"several answers to one question: add the 'sample' column"):
        bayeserr.load(two.drop(columns="human"), labels=_labels_of(two, ("model", "question_id")))
    # the labels have samples, the results do not
    with pytest.raises(InputError, match="the labels have a 'sample' column, but the results have no samples"):
        bayeserr.load(one.drop(columns=["human", "sample"]), labels=_labels_of(one))


def test_unmatched_labels_are_an_error_naming_them(tmp_path, cli):
    table = judged_table()
    path, lab = tmp_path / "results.csv", tmp_path / "labels.csv"
    table.drop(columns="human").to_csv(path, index=False)
    labels = _labels_of(table)
    extra = pd.DataFrame([{"model": "a", "question_id": "q99", "sample": 1, "human": 1.0},
                          {"model": "zz", "question_id": "q1", "sample": 1, "human": 0.0},
                          {"model": "b", "question_id": "q1", "sample": 7, "human": 0.0}])
    pd.concat([labels, extra]).to_csv(lab, index=False)
    n = len(labels)
    msg = (f"3 of {n + 3} label(s) match no answer of the results (data rows {n + 1}, {n + 2}, {n + 3}, "
           "counting from 1 after the header), e.g. model 'a', question_id 'q99', sample '1'; model 'zz'")
    with pytest.raises(InputError) as exc:
        bayeserr.load(path, labels=lab)
    assert msg in str(exc.value) and "joined to the answers on (model, question_id, sample)" in str(exc.value)
    fails(cli("report", path, "--labels", lab), "3 of", "match no answer")
    # labels of answers --where or --models leave out are not unmatched: they match an answer read
    labels.to_csv(lab, index=False)
    ds = bayeserr.load(path, labels=lab, models=["b"], where="topic=t0")
    same_labels(ds, table[(table.model == "b") & (table.topic == "t0")])


def test_duplicate_labels_are_an_error(tmp_path, cli):
    table = judged_table()
    path, lab = tmp_path / "results.csv", tmp_path / "labels.csv"
    table.drop(columns="human").to_csv(path, index=False)
    labels = _labels_of(table)
    pd.concat([labels, labels.iloc[[0]].assign(human=0.5)]).to_csv(lab, index=False)
    out = fails(cli("report", path, "--labels", lab),
                "two labels for one answer (model, question_id, sample) in 2 row(s) (data rows 1, "
                f"{len(labels) + 1}, counting", "Give each answer one label")
    assert str(lab) in out


def test_bad_labels_tables(tmp_path, cli):
    table = judged_table()
    path, lab = tmp_path / "results.csv", tmp_path / "labels.csv"
    table.drop(columns="human").to_csv(path, index=False)
    labels = _labels_of(table)
    labels.assign(human=labels["human"] * 100).to_csv(lab, index=False)
    fails(cli("report", path, "--labels", lab), f"{lab}: the human label column 'human' is outside [0, 1]")
    labels.rename(columns={"human": "label"}).to_csv(lab, index=False)
    fails(cli("report", path, "--labels", lab), "no 'human' column for the human label",
          "--human-col names it", "Columns present: model, question_id, sample, label")
    assert cli("report", path, "--labels", lab, "--human-col", "label", "--bayes", "off").exit_code == 0
    labels.assign(model=None).to_csv(lab, index=False)
    fails(cli("report", path, "--labels", lab), "the model column 'model' is empty")
    labels.iloc[:0].to_csv(lab, index=False)
    fails(cli("report", path, "--labels", lab), "no labels (the table has no rows)")
    fails(cli("report", path, "--labels", tmp_path), "a folder; --labels takes one table")
    fails(cli("report", path, "--labels", tmp_path / "none.csv"), "no such file")
    fails(cli("report", path, "--labels", tmp_path / "x.eval"), "an eval log, not a table of labels",
          "--human-scorer")
    with pytest.raises(InputError, match="labels takes the path of a table of human labels"):
        bayeserr.load(path, labels=3)


def test_one_source_of_labels(tmp_path, cli):
    table = judged_table()
    path, lab = tmp_path / "results.csv", tmp_path / "labels.csv"
    table.to_csv(path, index=False)  # the results have a 'human' column
    _labels_of(table).to_csv(lab, index=False)
    fails(cli("report", path, "--labels", lab), "human labels from two sources",
          "the results have a column 'human'", "Give one source")
    fails(cli("report", path, "--labels", lab, "--human-col", "human"), "human labels from two sources")
    fails(cli("report", path, "--labels", lab, "--human-scorer", "human"),
          "human labels from two sources: --labels", "--human-scorer 'human'")
    fails(cli("report", path, "--human-scorer", "human"),
          "--human-scorer names a scorer of Inspect logs, and no input is one", "--human-col")


# ------------------------------------------------------------------ Inspect logs
RUN_TASK = r'''
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score, Target, accuracy, match, scorer
from inspect_ai.solver import TaskState, generate

def scripted(answer):
    def out(messages, tools, tool_choice, config):
        i = int(messages[-1].text.split()[1])
        o = ModelOutput.from_content(model="mockllm/model", content=answer(i))
        o.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return o
    return get_model("mockllm/model", custom_outputs=out)

# a human grade on some answers of the first epoch: letters, and a number
GRADES = {1: CORRECT, 2: INCORRECT, 4: PARTIAL, 7: CORRECT, 9: 0.25, 11: INCORRECT}

@scorer(metrics=[accuracy()])
def human():
    async def score(state: TaskState, target: Target):
        grade = GRADES.get(int(state.sample_id)) if state.epoch == 1 else None
        return None if grade is None else Score(value=grade)   # None: this answer is not labelled
    return score

dataset = MemoryDataset([Sample(id=i, input=f"question {i}", target="yes", metadata={"topic": f"t{i % 3}"})
                         for i in range(1, 13)])
task = Task(name="judged", dataset=dataset, solver=generate(), scorer=[match(), human()], epochs=2)
log = eval(task, model=scripted(lambda i: "yes" if i % 4 else "no"), log_dir=sys.argv[1], display="none")[0]
print(json.dumps({"status": log.status, "location": log.location,
                  "error": str(log.error) if log.error else None}))
'''


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    """An Inspect log with two scorers (``match``, the judge, and ``human``, on
    some samples only), written by Inspect offline; its path."""
    pytest.importorskip("inspect_ai")
    from ..integrations.test_inspect_metrics import _offline_env
    tmp = tmp_path_factory.mktemp("inspect-human")
    script = tmp / "run_task.py"
    script.write_text(RUN_TASK)
    res = subprocess.run([sys.executable, str(script), str(tmp / "logs")], capture_output=True, text=True,
                         env=_offline_env(tmp), cwd=tmp, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    run = json.loads(res.stdout.strip().splitlines()[-1])
    assert run["status"] == "success", run["error"]
    return run["location"]


def _inspect_labels(path) -> dict:
    """``{(question, epoch): (judge score, human label or NaN)}``, read with Inspect's own reader."""
    from inspect_ai.log import read_eval_log
    log = read_eval_log(path)
    out = {}
    for s in log.samples:
        grade = s.scores.get("human")
        value = math.nan if grade is None else grade.value
        out[(f"judged/{s.id}", s.epoch)] = (VALUES[s.scores["match"].value],
                                            VALUES.get(value, value) if isinstance(value, str) else float(value))
    return out


def test_inspect_human_scorer_gives_the_labels(inspect_log, cli):
    ds = bayeserr.load(inspect_log, human_scorer="human")
    expected = _inspect_labels(inspect_log)
    assert sum(not math.isnan(h) for _, h in expected.values()) == 6
    for (q, epoch), (score, label) in expected.items():
        assert float(ds["score"].sel(model="mockllm/model", question=q, sample=str(epoch))) == score
        got = human_of(ds, "mockllm/model", q, epoch)
        assert (math.isnan(got) and math.isnan(label)) or got == label, (q, epoch, got, label)
    assert human_of(ds, "mockllm/model", "judged/4", 1) == 0.5 and human_of(ds, "mockllm/model", "judged/9", 1) == 0.25
    assert ds.attrs["columns"]["human"] == "human" and ds.attrs["human_source"] == "Inspect scorer 'human'"
    assert notes(ds) == ["6 of 24 answers have a human label (Inspect scorer 'human')."]
    # the judge's score is the same as without labels; --scorer still chooses it
    plain = bayeserr.load(inspect_log)
    np.testing.assert_array_equal(ds["score"].values, plain["score"].values)
    assert "human" not in plain.data_vars
    named = bayeserr.load(inspect_log, scorer="match", human_scorer="human")
    np.testing.assert_array_equal(named["human"].values, ds["human"].values)
    rep = report_json(cli, inspect_log, "--human-scorer", "human")
    assert rep["rows"]["notes"] == notes(ds)
    # the where filter on a metadata field keeps the labels of the rows it keeps
    kept = bayeserr.load(inspect_log, human_scorer="human", where="topic=t1")
    for q in kept["question"].values:
        for e in (1, 2):
            got, want = human_of(kept, "mockllm/model", q, e), expected[(q, e)][1]
            assert (math.isnan(got) and math.isnan(want)) or got == want
    assert notes(kept) == ["3 of 8 answers have a human label (Inspect scorer 'human')."]  # 1, 4, 7


def test_inspect_human_scorer_errors(inspect_log, cli):
    fails(cli("report", inspect_log, "--human-scorer", "humna"),
          "none of the 24 answers used has a human label (Inspect scorer 'humna')",
          "Did you mean 'human'?", "Scorers in the logs: match, human.")
    fails(cli("report", inspect_log, "--human-scorer", "match", "--scorer", "match"),
          "--scorer and --human-scorer both name 'match'")
    fails(cli("report", inspect_log, "--human-col", "human"),
          "--human-col names a column of a results table", "--human-scorer", "--labels FILE")


def test_labels_table_joined_to_an_inspect_log(inspect_log, tmp_path, cli):
    expected = _inspect_labels(inspect_log)
    rows = [{"model": "mockllm/model", "question_id": q, "sample": e, "human": h}
            for (q, e), (_, h) in expected.items() if not math.isnan(h)]
    lab = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(lab, index=False)
    ds = bayeserr.load(inspect_log, labels=lab)
    np.testing.assert_array_equal(ds["human"].values,
                                  bayeserr.load(inspect_log, human_scorer="human")["human"].values)
    # the log's question ids are '<task>/<sample id>': a bare id matches nothing, and the message says so
    pd.DataFrame(rows).assign(question_id=lambda d: d["question_id"].str.removeprefix("judged/")).to_csv(
        lab, index=False)
    fails(cli("report", inspect_log, "--labels", lab), "6 of 6 label(s) match no answer",
          "'<task>/<sample id>'")


def json_log(path, scores: list[dict], task="judged", model="openai/judge-me"):
    """An Inspect .json log in its exact shape, each sample scored by the scorers given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    samples = [{"id": i + 1, "epoch": 1, "input": f"question {i + 1}", "target": "C", "scores": s,
                "metadata": {}} for i, s in enumerate(scores)]
    path.write_text(json.dumps({"version": 2, "status": "success", "samples": samples,
                                "eval": {"task": task, "model": model, "created": "2025-01-01T00:00:00+00:00"}}))
    return path


def test_the_judge_is_the_first_other_scorer_and_unlabelled_logs_are_noted(tmp_path, cli):
    # the human scorer listed first: without --scorer, the judge's score is the first other scorer
    first = json_log(tmp_path / "logs" / "first.json",
                     [{"human": {"value": "C"}, "judge": {"value": 0.75}},
                      {"judge": {"value": 0.25}},
                      {"human": {"value": False}, "judge": {"value": 1}}])
    ds = bayeserr.load(first, human_scorer="human")
    assert ds["score"].values.ravel().tolist() == [0.75, 0.25, 1.0]
    assert [None if math.isnan(v) else v for v in ds["human"].values.ravel()] == [1.0, None, 0.0]
    # a log none of whose samples has the human scorer: its answers are unlabelled, and a note says so
    json_log(tmp_path / "logs" / "second.json", [{"judge": {"value": 1}}, {"judge": {"value": 0}}],
             model="openai/other")
    ds = bayeserr.load(tmp_path / "logs", human_scorer="human")
    assert notes(ds) == [
        "No sample of second.json has a score from scorer 'human' (--human-scorer): its answers are unlabelled.",
        "2 of 5 answers have a human label (Inspect scorer 'human'); per model: openai/judge-me 2 of 3, "
        "openai/other 0 of 2."]
    # a human value Inspect does not map to a number; a log scored by the human scorer alone
    json_log(tmp_path / "bad.json", [{"human": {"value": "maybe"}, "judge": {"value": 1}},
                                     {"judge": {"value": 0}}])
    fails(cli("report", tmp_path / "bad.json", "--human-scorer", "human"),
          "samples[0]: sample 1, scorer 'human': score value 'maybe' is not one Inspect maps to a number",
          "Pick another --human-scorer")
    json_log(tmp_path / "alone.json", [{"human": {"value": 1}}, {"human": {"value": 0}}])
    fails(cli("report", tmp_path / "alone.json", "--human-scorer", "human"),
          "scored by 'human' only", "--scorer")
    json_log(tmp_path / "big.json", [{"human": {"value": 2}, "judge": {"value": 1}}, {"judge": {"value": 0}}])
    fails(cli("report", tmp_path / "big.json", "--human-scorer", "human"),
          "the human label column 'human' is outside [0, 1] in 1 row(s)", "big.json samples[0]")


def test_a_real_log_with_a_human_scorer_added(tmp_path, cli):
    """A real Inspect log (../shared) with a second scorer added to three samples, as
    `inspect score` or manual grading would add it."""
    src = LOGS / DONE
    if not src.exists():
        pytest.skip("../shared/data/inspect-logs absent")
    grades = {1: "C", 2: "I", 5: "C"}
    dst = tmp_path / "graded.eval"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            for sid, grade in grades.items():
                if info.filename == f"samples/{sid}_epoch_1.json":
                    sample = json.loads(data)
                    sample["scores"]["human"] = {"value": grade, "explanation": "graded by hand"}
                    data = json.dumps(sample)
            zout.writestr(info.filename, data)
    ds = bayeserr.load(dst, human_scorer="human")
    np.testing.assert_array_equal(ds["score"].values, bayeserr.load(src)["score"].values)
    got = {q: float(v) for q, v in zip(ds["question"].values, ds["human"].values[0, :, 0]) if not math.isnan(v)}
    assert got == {f"popularity/{sid}": VALUES[g] for sid, g in grades.items()}
    rep = report_json(cli, dst, "--human-scorer", "human")
    assert rep["rows"]["notes"] == ["3 of 10 answers have a human label (Inspect scorer 'human')."]
    assert rep["models"] == report_json(cli, src)["models"]


def test_tables_and_logs_together(inspect_log, tmp_path):
    """Several inputs: --human-col reads the tables, --human-scorer the logs, into one ``human``."""
    table = pd.DataFrame({"model": "x", "question_id": [f"judged/{i}" for i in range(1, 5)], "sample": 1,
                          "score": [1, 0, 1, 0], "grade": [1, np.nan, 0, np.nan]})
    table.to_csv(tmp_path / "x.csv", index=False)
    ds = bayeserr.load([tmp_path / "x.csv", inspect_log], human_col="grade", human_scorer="human")
    assert [None if math.isnan(v) else v for v in ds["human"].sel(model="x", sample="1")
            .sel(question=table["question_id"].tolist()).values] == [1.0, None, 0.0, None]
    alone = bayeserr.load(inspect_log, human_scorer="human")
    np.testing.assert_array_equal(ds["human"].sel(model="mockllm/model", question=alone["question"]).values,
                                  alone["human"].values[0])
    assert ds.attrs["columns"]["human"] == "grade"
    assert notes(ds) == ["8 of 28 answers have a human label (column 'grade' of the tables, Inspect scorer "
                         "'human' of the logs); per model: x 2 of 4, mockllm/model 6 of 24."]
    # only the scorer: the table's answers are unlabelled (counted); a table column of the same name is refused
    ds = bayeserr.load([tmp_path / "x.csv", inspect_log], human_scorer="human")
    assert notes(ds)[0].endswith("per model: x 0 of 4, mockllm/model 6 of 24.")
    table.rename(columns={"grade": "human"}).to_csv(tmp_path / "x.csv", index=False)
    with pytest.raises(InputError, match="x.csv: a column 'human', the name the human labels of the other inputs "
                                         "are given, is not this input's human labels.*--human-col human"):
        bayeserr.load([tmp_path / "x.csv", inspect_log], human_scorer="human")


@pytest.mark.parametrize("typed", ["nan", "NaN", "null", "None"])
def test_a_typed_missing_word_is_not_an_empty_label(tmp_path, typed):
    """Only an empty cell (or R's NA) means "not labelled": a label a program printed as nan, null
    or None read as not labelled, silently (issue 43, item 9); it is an error naming the row."""
    import bayeserr
    path = tmp_path / "r.csv"
    path.write_text("model,question_id,score,human\n" + "".join(
        f"{m},q{i},{i % 2},{typed if (m, i) == ('a', 2) else ('' if i > 3 else i % 2)}\n"
        for m in "ab" for i in range(6)))
    with pytest.raises(bayeserr.InputError, match=r"human label column 'human' is not a number in 1 row\(s\) "
                                                  r"\(data rows 3"):
        bayeserr.load(path, human_col="human")
    path.write_text(path.read_text().replace(f",{typed}\n", ",\n"))
    ds = bayeserr.load(path, human_col="human")
    assert int(np.isnan(ds["human"].values).sum()) == 5  # empty: not labelled
