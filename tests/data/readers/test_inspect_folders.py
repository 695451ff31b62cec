"""Log folders as Inspect writes them.

* 1 — ``inspect eval-set`` writes ``logs.json`` (its manifest), ``eval-set.json``
  and ``.eval-set-id`` into the log folder; bayeserr's own ``-o logs/report.json``
  and ``--save-posterior logs/post`` (its ``index.json``) land there too.  None
  of them is read as a log: they are skipped with a note in the row
  accounting (told apart by their first key, reading only the file's start),
  and logs the manifest lists that are not in the folder are named.
* 2 — an ``.eval`` still being written (``_journal/start.json`` and samples, no
  ``header.json``) is skipped in a folder and counted as dropped; alone it is
  an error naming the fix.
* 3 — a log whose status is not ``success`` (``error``, ``cancelled``,
  ``started``) is left out of a folder (and of several inputs), counted with
  its status and sample counts, before re-runs are matched; alone it is used
  with a note; ``partial_runs="include"`` uses them all.

The main test runs a real ``inspect_ai.eval_set`` offline (``mockllm``, three
models, one of which fails half-way, so Inspect itself writes an ``error``
log), adds a run still in progress and bayeserr's own outputs, and reports
the folder.  It skips when ``inspect_ai`` is missing; the real logs of
``../shared/data/inspect-logs`` skip when absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.data.readers import read_inspect
from bayeserr.data.readers.archive import EvalArchive

from ...conftest import SHARED
from ...data.readers.test_inspect_logs import write_log
from ...integrations.test_inspect_metrics import _offline_env

ROOT = Path(__file__).resolve().parents[3]
LOGS = SHARED / "data" / "inspect-logs"
DONE = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
CANCELLED = "2025-05-12T20-28-13-04-00_popularity.json"


def _text(res) -> str:
    return " ".join(res.output.split())  # Markdown wraps the rows sentence


def _rows(ds) -> dict:
    rows = ds.attrs["rows"]
    return {"read": rows["read"], "used": rows["used"],
            "dropped": {d["reason"]: d["count"] for d in rows["dropped"]}, "notes": rows.get("notes", [])}


def _unfinished(src: Path, dst: Path, keep=3, model=None) -> Path:
    """A copy of an ``.eval`` log as Inspect leaves it while the run is going:
    ``_journal/start.json`` and the first ``keep`` samples, no ``header.json``
    (members read through bayeserr's bounded reader: Inspect writes zstd)."""
    archive = EvalArchive(src)
    try:
        members = {i.filename: bytes(archive.read(i)) for i in archive.zip.infolist()}
    finally:
        archive.close()
    samples = sorted((n for n in members if n.startswith("samples/")),
                     key=lambda n: int(n.split("/")[1].split("_")[0]))[:keep]
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        start = json.loads(members["_journal/start.json"])
        if model:
            start["eval"]["model"] = model
        z.writestr("_journal/start.json", json.dumps(start))
        for name in samples:
            z.writestr(name, members[name])
    return dst


def _synthetic_unfinished(path: Path, n=4, model="openai/m9", task="mmlu") -> Path:
    ev = {"task": task, "model": model, "created": "2025-03-01T00:00:00+00:00",
          "dataset": {"samples": 12, "sample_ids": list(range(1, 13))}, "config": {"epochs": 1}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", json.dumps({"version": 2, "eval": ev, "plan": {}}))
        for i in range(1, n + 1):
            z.writestr(f"samples/{i}_epoch_1.json", json.dumps(
                {"id": i, "epoch": 1, "scores": {"match": {"value": "C"}}, "metadata": {}}))
    return path


def _with_status(path: Path, status: str, keep: int | None = None, planned: int = 12) -> Path:
    """A synthetic ``.json`` log turned into a partial run: ``status`` and only
    the first ``keep`` samples, ``planned`` in its results."""
    log = json.loads(path.read_text())
    log["status"] = status
    if keep is not None:
        log["samples"] = log["samples"][:keep]
    log["results"] = {"total_samples": planned, "completed_samples": keep or len(log["samples"])}
    path.write_text(json.dumps(log))
    return path


def _manifest(folder: Path, names) -> Path:
    """``logs.json`` as Inspect writes it: ``{file name: header}``."""
    out = {}
    for name in names:
        p = folder / name
        header = json.loads(p.read_text()) if p.suffix == ".json" else \
            json.loads(zipfile.ZipFile(p).read("header.json"))
        header.pop("samples", None)
        out[name] = header
    (folder / "logs.json").write_text(json.dumps(out, indent=2))
    return folder / "logs.json"


# --------------------------------------------------------------------------- #
# a real eval set, offline
# --------------------------------------------------------------------------- #
RUN_EVAL_SET = r'''
import json, sys
from inspect_ai import Task, eval_set
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

def model(name, answer):
    def out(messages, tools, tool_choice, config):
        i = int(messages[-1].text.split()[1])
        o = ModelOutput.from_content(model=f"mockllm/{name}", content=answer(i))
        o.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return o
    return get_model(f"mockllm/{name}", custom_outputs=out)

def broken(i):
    if i == 5:  # the provider fails on the fifth question: Inspect writes an "error" log
        raise RuntimeError("provider went away")
    return "yes"

task = Task(name="tiny", solver=generate(), scorer=match(),
            dataset=MemoryDataset([Sample(id=i, input=f"question {i}", target="yes") for i in range(1, 7)]))
models = [model("a", lambda i: "yes" if i % 2 else "no"), model("b", lambda i: "yes" if i % 3 else "no"),
          model("c", broken)]
ok, logs = eval_set([task], log_dir=sys.argv[1], model=models, display="none", retry_attempts=0,
                    max_samples=1, fail_on_error=True)
print(json.dumps({l.eval.model: {"status": l.status, "location": l.location} for l in logs}))
'''


@pytest.fixture(scope="module")
def eval_set_folder(tmp_path_factory):
    """``(folder, {model: {"status", "location"}})`` of one offline ``eval_set`` run."""
    pytest.importorskip("inspect_ai")
    tmp = tmp_path_factory.mktemp("evalset")
    script = tmp / "run_eval_set.py"
    script.write_text(RUN_EVAL_SET)
    folder = tmp / "logs"
    res = subprocess.run([sys.executable, str(script), str(folder)], capture_output=True, text=True,
                         env=_offline_env(tmp), cwd=tmp, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    runs = json.loads(res.stdout.strip().splitlines()[-1])
    assert {m: r["status"] for m, r in runs.items()} == \
        {"mockllm/a": "success", "mockllm/b": "success", "mockllm/c": "error"}
    assert {"logs.json", "eval-set.json", ".eval-set-id"} <= {p.name for p in folder.iterdir()}
    return folder, runs


@pytest.mark.slow
def test_eval_set_folder_with_an_interrupted_run(eval_set_folder, tmp_path, cli, cli_json):
    src, runs = eval_set_folder
    folder = tmp_path / "logs"
    shutil.copytree(src, folder)
    # a fourth run, still in progress: 3 samples written, no header.json
    _unfinished(Path(runs["mockllm/a"]["location"]), folder / "in-progress.eval", keep=3, model="mockllm/d")
    # bayeserr's own outputs, written into the folder by earlier reports
    res = cli("report", folder, "--bayes", "off", "--format", "json", "-o", folder / "report.json")
    assert res.exit_code == 0, res.output
    res = cli("report", folder, "--save-posterior", folder / "post")
    assert res.exit_code == 0, res.output
    assert (folder / "post" / "index.json").exists()

    rep = cli_json("report", folder, "--bayes", "off")
    assert sorted(m["model"] for m in rep["models"]) == ["mockllm/a", "mockllm/b"]
    rows = rep["rows"]
    error_log = Path(runs["mockllm/c"]["location"]).name
    assert rows["read"] == 6 + 6 + 6 + 3 and rows["used"] == 12
    assert {d["reason"]: d["count"] for d in rows["dropped"]} == {
        f"partial run of tiny with mockllm/c: {error_log} (status error, 4 of 6 samples scored)": 6,
        "run of tiny with mockllm/d in progress or interrupted: in-progress.eval (no header.json yet, "
        "3 of 6 samples written)": 3}
    skipped, rule = rows["notes"]
    assert skipped.startswith("Not logs, skipped:")
    for name in ("logs.json (Inspect's log-folder manifest)", "eval-set.json (Inspect's eval-set definition)",
                 "report.json (bayeserr's own output, bayeserr.report/",
                 "post/index.json (bayeserr's --save-posterior index)"):
        assert name in skipped, (name, skipped)
    assert "status is not 'success'" in rule and "inspect eval-set would re-run them" in rule
    # the same in the Markdown report's rows line, exit 0
    res = cli("report", folder, "--bayes", "off")
    assert res.exit_code == 0, res.output
    text = _text(res)
    assert "Rows read: 21; used: 12; dropped: 9" in text
    assert "(status error, 4 of 6 samples scored)" in text and "no header.json yet" in text
    # each partial or unfinished log alone: the error log is used with a note, the unfinished one stops
    alone = cli_json("report", Path(runs["mockllm/c"]["location"]), "--bayes", "off")
    assert alone["rows"]["used"] == 4 and "(status error, 4 of 6 samples scored)" in alone["rows"]["notes"][0]
    res = cli("report", folder / "in-progress.eval")
    assert res.exit_code == 2 and "still in progress or was interrupted" in _text(res)
    assert "inspect eval-retry" in _text(res) and "Traceback" not in res.output


@pytest.mark.slow
def test_eval_set_manifest_names_logs_missing_from_the_folder(eval_set_folder, tmp_path):
    src, runs = eval_set_folder
    folder = tmp_path / "logs"
    shutil.copytree(src, folder)
    gone = Path(runs["mockllm/b"]["location"]).name
    (folder / gone).unlink()
    r = _rows(bayeserr.load(folder))
    (note,) = [n for n in r["notes"] if "not in the folder" in n]
    assert note.startswith("logs.json (Inspect's log-folder manifest) lists 3 logs, 1 of them not in "
                           f"the folder ({gone})")


# --------------------------------------------------------------------------- #
# item 1: files that are not logs (no Inspect needed)
# --------------------------------------------------------------------------- #
def test_manifest_and_bayeserr_outputs_are_skipped_with_a_note(tmp_path, cli, cli_json):
    write_log(tmp_path / "a.json", model="m/a", metrics=[])
    write_log(tmp_path / "b.json", model="m/b", metrics=[], right=lambda i: i % 2 == 0)
    _manifest(tmp_path, ["a.json", "b.json"])
    (tmp_path / "eval-set.json").write_text(json.dumps({"eval_set_id": "x", "tasks": []}))
    (tmp_path / ".eval-set-id").write_text("x")
    before = cli_json("report", tmp_path, "--bayes", "off")
    (tmp_path / "report.json").write_text(json.dumps(before, indent=2))
    (tmp_path / "post").mkdir()
    (tmp_path / "post" / "index.json").write_text(json.dumps({"posteriors": []}))
    after = cli_json("report", tmp_path, "--bayes", "off")
    assert after["models"] == before["models"]
    assert after["rows"]["read"] == after["rows"]["used"] == 24 and after["rows"]["dropped"] == []
    (note,) = after["rows"]["notes"]
    assert note == ("Not logs, skipped: eval-set.json (Inspect's eval-set definition), logs.json "
                    "(Inspect's log-folder manifest), post/index.json (bayeserr's --save-posterior index), "
                    "report.json (bayeserr's own output, bayeserr.report/2).")
    # a pattern matching logs.json too: skipped among several inputs
    ds = bayeserr.load(str(tmp_path / "*.json"))
    assert ds.attrs["rows"]["used"] == 24
    assert "logs.json (Inspect's log-folder manifest)" in ds.attrs["rows"]["notes"][0]
    # alone, a manifest is a clear error
    res = cli("report", tmp_path / "logs.json")
    assert res.exit_code == 2 and "Inspect's log-folder manifest, not an Inspect log" in res.output


def test_a_json_file_is_classified_from_its_start_only(tmp_path):
    from bayeserr.data.readers.runs import PEEK_BYTES, json_kind

    big = tmp_path / "report.json"
    # a bayeserr report whose tail is not JSON: only the first PEEK_BYTES are read to classify it
    big.write_text('{\n  "schema": "bayeserr.report/2",\n  "pad": "' + "x" * (2 * PEEK_BYTES) + "<<not json")
    assert json_kind(big) == "bayeserr's own output, bayeserr.report/2"
    manifest = tmp_path / "logs.json"
    manifest.write_text('{"2025_x.eval": {"version": 2, "eval": ' + "[" * 100000)
    assert json_kind(manifest) == "Inspect's log-folder manifest"
    log = write_log(tmp_path / "log.json", metrics=[])
    assert json_kind(log) is None
    write_log(tmp_path / "b.json", model="m/b", metrics=[])
    df, dropped = read_inspect(tmp_path)
    assert len(df) == 24 and dropped == []


def test_other_json_in_a_folder_names_the_fix(tmp_path, cli):
    write_log(tmp_path / "a.json", metrics=[])
    (tmp_path / "config.json").write_text(json.dumps({"temperature": 0}))
    res = cli("report", tmp_path)
    assert res.exit_code == 2 and "not an Inspect log (no 'eval' header)" in res.output
    assert "move it out of the folder" in _text(res)


# --------------------------------------------------------------------------- #
# item 2: a run still in progress
# --------------------------------------------------------------------------- #
def test_run_in_progress_is_skipped_in_a_folder_and_an_error_alone(tmp_path, cli):
    write_log(tmp_path / "a.eval", model="m/a", metrics=[])
    write_log(tmp_path / "b.eval", model="m/b", metrics=[], right=lambda i: i % 2 == 0)
    _synthetic_unfinished(tmp_path / "c.eval", n=4)
    r = _rows(bayeserr.load(tmp_path))
    assert r["read"] == 28 and r["used"] == 24
    assert r["dropped"] == {"run of mmlu with openai/m9 in progress or interrupted: c.eval (no header.json "
                            "yet, 4 of 12 samples written)": 4}
    res = cli("report", tmp_path, "--bayes", "off")
    assert res.exit_code == 0 and "Rows read: 28; used: 24; dropped: 4" in _text(res)
    with pytest.raises(InputError, match="still in progress or was interrupted") as exc:
        bayeserr.load(tmp_path / "c.eval")
    assert "inspect eval-retry" in str(exc.value) and "4 of 12 samples written" in str(exc.value)
    # among several inputs it is skipped and counted, as in a folder
    ds = bayeserr.load([tmp_path / "a.eval", tmp_path / "b.eval", tmp_path / "c.eval"])
    assert ds.attrs["rows"]["read"] == 28 and ds.attrs["rows"]["used"] == 24


def test_archive_without_header_or_journal_is_still_an_error(tmp_path):
    write_log(tmp_path / "a.eval", metrics=[])
    with zipfile.ZipFile(tmp_path / "odd.eval", "w") as z:
        z.writestr("samples/1_epoch_1.json", "{}")
    with pytest.raises(InputError, match="not an Inspect log, or a damaged one"):
        bayeserr.load(tmp_path)


# --------------------------------------------------------------------------- #
# item 3: partial runs
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("status", ["cancelled", "error", "started"])
def test_partial_run_in_a_folder_is_left_out_and_counted(tmp_path, status, cli):
    write_log(tmp_path / "a.json", model="m/a", metrics=[])
    write_log(tmp_path / "b.json", model="m/b", metrics=[], right=lambda i: i % 2 == 0)
    _with_status(write_log(tmp_path / "c.json", model="m/c", metrics=[]), status, keep=4)
    r = _rows(bayeserr.load(tmp_path))
    assert r["read"] == 28 and r["used"] == 24
    assert r["dropped"] == {f"partial run of mmlu with m/c: c.json (status {status}, 4 of 12 samples scored)": 4}
    (rule,) = r["notes"]
    assert "--partial-runs include" in rule and "report its file on its own" in rule
    res = cli("report", tmp_path, "--bayes", "off")
    assert res.exit_code == 0, res.output
    assert f"c.json (status {status}, 4 of 12 samples scored)" in _text(res)
    # included on request, named in a note
    r = _rows(bayeserr.load(tmp_path, partial_runs="include"))
    assert r["used"] == 28 and r["dropped"] == {}
    assert r["notes"][0].startswith(f"Partial run used (--partial-runs include): c.json (status {status}, "
                                    "4 of 12 samples scored)")
    res = cli("report", tmp_path, "--bayes", "off", "--partial-runs", "include", "--on-unpaired", "drop",
              "--format", "json")
    assert res.exit_code == 0 and json.loads(res.output)["rows"]["used"] == 28


def test_partial_run_alone_is_used_with_a_note_and_set_aside_among_inputs(tmp_path, cli_json):
    a = write_log(tmp_path / "a.json", model="m/a", metrics=[])
    c = _with_status(write_log(tmp_path / "c.json", model="m/c", metrics=[]), "cancelled", keep=4)
    rep = cli_json("report", c, "--bayes", "off")
    assert rep["models"][0]["n_questions"] == 4 and rep["rows"]["used"] == 4
    (note,) = rep["rows"]["notes"]
    assert "c.json (status cancelled, 4 of 12 samples scored)" in note and "read on its own" in note
    ds = bayeserr.load([a, c])
    assert ds.attrs["rows"]["read"] == 16 and ds.attrs["rows"]["used"] == 12
    by_input = {i["input"]: i for i in ds.attrs["rows"]["inputs"]}
    assert by_input[str(c)]["dropped"] == [
        {"reason": "partial run of mmlu with m/c: c.json (status cancelled, 4 of 12 samples scored)", "count": 4}]
    with pytest.raises(InputError, match="partial_runs must be one of exclude, include"):
        bayeserr.load(a, partial_runs="maybe")


def test_only_partial_runs_in_a_folder_is_a_clear_error(tmp_path):
    _with_status(write_log(tmp_path / "c.json", metrics=[]), "cancelled", keep=4)
    with pytest.raises(InputError, match="no complete log to report") as exc:
        bayeserr.load(tmp_path)
    assert "report its file on its own" in str(exc.value)


def test_errored_samples_of_a_partial_run_are_counted(tmp_path):
    path = write_log(tmp_path / "c.json", metrics=[])
    log = json.loads(path.read_text())
    for s in log["samples"][8:]:
        s["scores"] = None
        s["error"] = {"message": "provider went away"}
    path.write_text(json.dumps({**log, "status": "error"}))
    r = _rows(bayeserr.load(path))
    assert r["used"] == 8 and r["dropped"] == {"unscored samples of partial run c.json (status error)": 4}


def test_a_partial_rerun_no_longer_replaces_a_complete_run(tmp_path):
    """--duplicate-runs latest used to keep a newer cancelled 3-sample run over a complete one."""
    write_log(tmp_path / "complete.json", created="2025-01-01T00:00:00+00:00", metrics=[])
    _with_status(write_log(tmp_path / "rerun.json", created="2025-02-01T00:00:00+00:00", metrics=[]),
                 "cancelled", keep=3)
    r = _rows(bayeserr.load(tmp_path, duplicate_runs="latest"))
    assert r["used"] == 12 and r["read"] == 15
    assert r["dropped"] == {"partial run of mmlu with openai/m1: rerun.json (status cancelled, 3 of 12 "
                            "samples scored)": 3}


def test_real_folder_leaves_the_cancelled_run_out(cli_json):
    if not LOGS.exists():
        pytest.skip(f"{LOGS} not available (../shared is absent)")
    rep = cli_json("report", LOGS, "--duplicate-runs", "latest", "--where", "model!=openai/gpt-4o",
                   "--bayes", "off")
    (model,) = rep["models"]
    assert model["model"] == "openai/gpt-4o-mini" and model["n_questions"] == 10
    reasons = {d["reason"]: d["count"] for d in rep["rows"]["dropped"]}
    assert reasons[f"partial run of popularity with openai/gpt-4o-mini: {CANCELLED} (status cancelled, "
                   "3 of 3 samples scored)"] == 3
    assert not [r for r in reasons if r.startswith("older run")]


def test_guide_documents_the_rule():
    text = (ROOT / "docs" / "guide" / "inspect.md").read_text()
    for phrase in ("inspect eval-set", "logs.json", "partial_runs", "status", "in progress"):
        assert phrase in text, phrase


# --------------------------------------------------------------------------- #
# a decision on a partial run names it (issue 43, item 5)
# --------------------------------------------------------------------------- #
def test_gate_on_a_partial_run_names_it_everywhere(eval_set_folder, tmp_path, cli):
    """A real errored run (4 of 6 samples scored): left out by default (the gate cannot find the
    candidate); with --partial-runs include the gate decides, and its text, JSON and job summary
    name the partial run; read on its own, the API refuses to gate on it without the request."""
    folder, runs = eval_set_folder
    error_log = Path(runs["mockllm/c"]["location"]).name
    args = ["gate", folder, "--candidate", "mockllm/c", "--baseline", "mockllm/a", "--margin", "0.9",
            "--on-unpaired", "drop", "--bayes", "off"]
    res = cli(*args)
    assert res.exit_code == 2 and "mockllm/c" in res.output
    summary = tmp_path / "summary.md"
    res = cli(*args, "--partial-runs", "include", "--summary", summary)
    said = f"partial run mockllm/c: {error_log} (status error, 4 of 6 samples scored)"
    assert said in " ".join(res.output.split()) and "Caution" in res.output
    assert said in " ".join(summary.read_text().split())
    rep = json.loads(cli(*args, "--partial-runs", "include", "--format", "json").output)
    (run,) = rep["partial_runs"]
    assert (run["model"], run["status"], run["scored"], run["planned"], run["asked"]) == \
        ("mockllm/c", "error", 4, 6, True)
    # the errored log read on its own: used (with a note), but a gate on it must be asked for
    from bayeserr.analyses.gate import gated_partial_runs
    alone = bayeserr.load(runs["mockllm/c"]["location"])
    with pytest.raises(InputError, match="status error, 4 of 6 samples scored.*--partial-runs include"):
        gated_partial_runs(alone, ["mockllm/c"])
    assert gated_partial_runs(alone, ["mockllm/a"]) == []


def test_watch_names_a_partial_run_and_takes_no_stop_on_it_unasked(eval_set_folder, cli):
    """watch reads partial runs by default (a run may still be going); an errored run's status is
    named in the verdict and the JSON, and a stop on it is taken (exit 0) only with
    --partial-runs include; finished runs whose rule cannot hold end a --follow at once."""
    folder, runs = eval_set_folder
    c, a = runs["mockllm/c"]["location"], runs["mockllm/a"]["location"]
    args = ["watch", c, a, "--pair", "mockllm/c", "mockllm/a", "--budget", "2"]
    res = cli(*args)
    text = " ".join(res.output.split())
    assert res.stdout.startswith("stop") and res.exit_code == 1, res.output
    assert "status error, 4 of 6 samples scored" in text and "--partial-runs include" in text
    res = cli(*args, "--partial-runs", "include", "--format", "json")
    got = json.loads(res.stdout)
    assert res.exit_code == 0 and got["exit_code"] == 0 and got["partial_runs"][0]["status"] == "error"
    assert "status error" in got["sentence"]
    # two finished runs, a rule that cannot hold: --follow ends at once, exit 1, and says why
    b = runs["mockllm/b"]["location"]
    res = cli("watch", a, b, "--pair", "mockllm/a", "mockllm/b", "--tie", "0.001", "--follow", "--interval", "0.1")
    assert res.exit_code == 1 and "the runs are finished" in res.output


@pytest.mark.parametrize("damage", [b'{"a.json": {"eval"', b"\x00garbage{", b'{"a": 1}', b'{"x.eval": 1}'])
def test_a_damaged_manifest_does_not_stop_the_folder(tmp_path, damage):
    """A truncated or garbled logs.json stopped the whole eval-set folder (issue 43, item 9): it is
    skipped as a damaged manifest, named in the row accounting, and the logs are read."""
    write_log(tmp_path / "a.json", model="m/a", metrics=[])
    write_log(tmp_path / "b.json", model="m/b", metrics=[], right=lambda i: i % 2 == 0)
    (tmp_path / "logs.json").write_bytes(damage)
    r = _rows(bayeserr.load(tmp_path))
    assert r["used"] == 24
    assert "logs.json (Inspect's log-folder manifest" in r["notes"][0]


def test_a_model_whose_partial_run_was_left_out_is_named(eval_set_folder, cli):
    """Gating a model whose only run is partial said only "not in the data" (a reviewer's find):
    the error names the partial run and the fix."""
    folder, runs = eval_set_folder
    res = cli("gate", folder, "--candidate", "mockllm/c", "--baseline", "mockllm/a", "--margin", "0.5")
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "model 'mockllm/c' has no run in the data: partial run of tiny" in text
    assert "(status error, 4 of 6 samples scored), left out" in text and "--partial-runs include" in text
