"""Every SPEC §1 validation rule through the CLI: exit code 2, a message that
names the problem, no traceback."""

import gzip
import subprocess
import sys

import pandas as pd
import pytest

from ..conftest import real_file

GOOD = "model,question_id,score\n" + "".join(f"{m},q{i},{(i * 7 + len(m)) % 2}\n"
                                            for m in ("A", "B") for i in range(6))


def _write(tmp_path, text, name="r.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _fails(cli, *args, expect):
    res = cli(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    for word in expect:
        assert word in res.output, res.output
    return res.output


@pytest.mark.parametrize("bad, expect", [
    ("", ["missing", "row"]),
    ("abc", ["not a number", "row"]),
    ("nan", ["missing", "row"]),
    ("inf", ["infinite", "row"]),
    ("1.5", ["outside [0, 1]", "row", "Rescale"]),
    ("-0.1", ["outside [0, 1]"]),
])
def test_bad_scores(cli, tmp_path, bad, expect):
    text = GOOD + f"A,q9,{bad}\n"
    out = _fails(cli, "report", _write(tmp_path, text), expect=expect + ["r.csv"])
    assert "13" in out  # the offending data row


def test_duplicate_rows(cli, tmp_path):
    text = GOOD + "A,q1,1\n"
    _fails(cli, "report", _write(tmp_path, text), expect=["duplicate", "(model, question_id)", "--sample-col"])


def test_question_in_two_clusters(cli, tmp_path):
    text = "model,question_id,cluster_id,score\n" + "".join(
        f"{m},q{i},c{i // 3 if not (m == 'B' and i == 4) else 9},1\n" for m in "AB" for i in range(6))
    _fails(cli, "report", _write(tmp_path, text), expect=["two different clusters", "--no-cluster"])
    assert cli("report", _write(tmp_path, text), "--no-cluster").exit_code == 0


def test_fewer_than_two_questions(cli, tmp_path):
    text = GOOD + "C,q1,1\n"
    _fails(cli, "report", _write(tmp_path, text), expect=["fewer than 2 questions", "'C'"])


def test_missing_column_and_unknown_model_and_file(cli, tmp_path):
    path = _write(tmp_path, GOOD.replace("score", "correct"))
    _fails(cli, "report", path, expect=["no 'score' column", "--score-col"])
    assert cli("report", path, "--score-col", "correct").exit_code == 0
    _fails(cli, "report", path, "--score-col", "corect", expect=["Did you mean 'correct'"])
    _fails(cli, "compare", _write(tmp_path, GOOD), "A", "Z", expect=["'Z' is not in the data"])
    _fails(cli, "report", tmp_path / "nope.csv", expect=["no such file"])
    _fails(cli, "report", _write(tmp_path, GOOD, "r.xlsx"), expect=["cannot tell the format"])


def test_unpaired_small(cli, tmp_path):
    text = GOOD + "A,q7,1\nA,q8,0\n"
    _fails(cli, "compare", _write(tmp_path, text), "A", "B", expect=["same question set", "--on-unpaired drop"])
    res = cli("compare", _write(tmp_path, text), "A", "B", "--on-unpaired", "drop")
    assert res.exit_code == 0 and "2 answered only by A, 0 only by B" in res.output


def test_livebench_unpaired_rule_and_drop(cli, cli_json):
    path = real_file("livebench_20250113_per_question.csv.gz")
    _fails(cli, "report", path, expect=["do not share the same question set", "--on-unpaired drop"])
    rep = cli_json("report", path, "--on-unpaired", "drop")
    assert rep["rows"]["read"] == rep["rows"]["used"] == 93034
    dropped = [w for w in rep["warnings"] if w["code"] == "unpaired_dropped"]
    assert dropped and "dropped 0 answered only by" in dropped[0]["message"]
    assert all(c["n_questions"] >= 2 for c in rep["comparisons"])
    n_pairs = 93 * 92 // 2
    skipped = [w for w in rep["warnings"] if w["code"] == "pair_not_comparable"]
    assert len(rep["comparisons"]) + len(skipped) == n_pairs
    # a pair with 1,136 vs 1,000 questions is compared on the 1,000 in common
    assert any(c["n_questions"] == 1000 for c in rep["comparisons"])


def test_formats_gzip_tsv_jsonl_parquet(cli_json, tmp_path):
    df = pd.read_csv(pd.io.common.StringIO(GOOD))
    paths = [tmp_path / "r.tsv", tmp_path / "r.jsonl.gz", tmp_path / "r.parquet", tmp_path / "r.csv.gz"]
    df.to_csv(paths[0], sep="\t", index=False)
    with gzip.open(paths[1], "wt") as fh:
        fh.write(df.to_json(orient="records", lines=True))
    df.to_parquet(paths[2])
    df.to_csv(paths[3], index=False)
    ref = None
    for p in paths:
        rep = cli_json("report", p)
        means = [m["mean"] for m in rep["models"]]
        ref = ref or means
        assert means == ref


def test_real_process_exit_code_and_no_traceback(tmp_path):
    path = _write(tmp_path, GOOD + "A,q9,2\n")
    proc = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "outside [0, 1]" in proc.stderr
    assert proc.stdout == ""
