"""Issue 22, items 3, 8 and 9: Inspect logs.

* 3 — without ``--cluster-field`` the report clusters by the metadata field
  the log's own metrics cluster by (``ci_clustered(cluster="repo")``,
  ``ci_hierarchical``, Inspect's ``stderr(cluster=...)``), says so in a note of
  the row accounting, and an explicit ``--cluster-field`` / ``--no-cluster``
  wins (with a note that the log's intervals differ).
* 8 — a model with fewer than two questions stops the report with the
  ``--where 'model!=NAME'`` that leaves it out (chosen over dropping it
  silently; docs/guide/inspect.md); ``--duplicate-runs latest`` says which run
  it kept and how many samples each had when the newer run lacks some.
* 9 — the README's Inspect example runs offline, as written (extracted from
  the README and run with the network cut off), and the docs page shows the
  same code.

The synthetic logs are written here in Inspect's layout (no Inspect needed);
the real logs of ``../shared/data/inspect-logs`` and Inspect itself are
skipped cleanly when absent.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.data.readers import read_inspect

from ...conftest import SHARED

ROOT = Path(__file__).resolve().parents[3]
LOGS = SHARED / "data" / "inspect-logs"


# --------------------------------------------------------------------------- #
# synthetic Inspect logs
# --------------------------------------------------------------------------- #
def _metric(name, **options):
    return {"name": name, "options": options}


CLUSTERED = [_metric("inspect_ai/accuracy"), _metric("bayeserr/ci_clustered", cluster="repo", level=0.95),
             _metric("bayeserr/ci_hierarchical", cluster="repo", level=0.95)]


def _header(model, task, created, metrics, scorer="match", task_metrics=None):
    ev = {"task": task, "model": model, "created": created, "run_id": "r",
          "scorers": [{"name": scorer, "options": {}, "metrics": metrics, "metadata": {}}]}
    if task_metrics is not None:
        ev["metrics"] = task_metrics
    return {"version": 2, "status": "success", "eval": ev, "results": {}}


def _samples(ids, meta, right, scorer="match"):
    return [{"id": i, "epoch": 1, "input": f"question {i}",
             "scores": {scorer: {"value": "C" if right(i) else "I"}}, "metadata": meta(i)} for i in ids]


def _repo(i):
    return {"repo": f"r{i % 3}", "topic": f"t{i % 2}", "info": {"repo": f"n{i % 4}"}}


def write_log(path: Path, *, model="openai/m1", task="mmlu", created="2025-01-01T00:00:00+00:00",
              ids=range(1, 13), metrics=CLUSTERED, meta=_repo, right=lambda i: i % 3 != 1,
              scorer="match", task_metrics=None) -> Path:
    """A small Inspect log: ``.eval`` archive (header.json + samples/) or ``.json``."""
    header = _header(model, task, created, metrics, scorer, task_metrics)
    samples = _samples(ids, meta, right, scorer)
    if path.suffix == ".json":
        path.write_text(json.dumps({**header, "samples": samples}))
        return path
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_1.json", json.dumps(s))
        z.writestr("header.json", json.dumps(header))
    return path


def _fails(cli, *args, expect=()):
    """The CLI's error line (whitespace normalised), after checking it is one: exit 2, no traceback."""
    res = cli(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.output.startswith("error:"), res.output
    out = " ".join(res.output.split())
    for text in expect:
        assert text in out, (text, out)
    return out


# --------------------------------------------------------------------------- #
# item 3: the log's cluster field is the default
# --------------------------------------------------------------------------- #
def test_log_metrics_cluster_field_is_the_default(tmp_path, cli_json):
    path = write_log(tmp_path / "a.eval")
    ds = bayeserr.load(path)
    assert "cluster" in ds.coords
    assert dict(zip(ds["question"].values, ds["cluster"].values))["mmlu/4"] == "r1"
    (note,) = ds.attrs["rows"]["notes"]
    assert "'repo'" in note and "ci_clustered(cluster='repo')" in note
    assert "ci_hierarchical(cluster='repo')" in note
    assert "--cluster-field FIELD" in note and "--no-cluster" in note
    # the report is the one with --cluster-field repo: the log's own interval
    auto = cli_json("report", path)
    explicit = cli_json("report", path, "--cluster-field", "repo")
    assert auto["models"] == explicit["models"]
    assert auto["models"][0]["n_clusters"] == 3
    assert auto["rows"]["notes"] == [note] and "notes" not in explicit["rows"]


def test_explicit_cluster_field_and_no_cluster_win_with_a_note(tmp_path, cli_json):
    path = write_log(tmp_path / "a.eval")
    rep = cli_json("report", path, "--cluster-field", "topic")
    assert rep["models"][0]["n_clusters"] == 2
    (note,) = rep["rows"]["notes"]
    assert "'topic' (--cluster-field)" in note and "ci_clustered(cluster='repo')" in note
    assert "differ" in note
    rep = cli_json("report", path, "--no-cluster")
    assert rep["models"][0]["n_clusters"] is None
    (note,) = rep["rows"]["notes"]
    assert note.startswith("No clusters (--no-cluster)") and "ci_clustered(cluster='repo')" in note
    ds = bayeserr.load(path, no_cluster=True)
    assert "cluster" not in ds.coords


@pytest.mark.parametrize("case", ["json log", "task metrics", "dict metrics", "stderr", "nested"])
def test_where_the_cluster_field_is_recorded(tmp_path, case):
    """Task-level metrics, metrics per score key (a mapping), Inspect's
    stderr(cluster=...), a .json log and a dotted field are all read."""
    kw = {}
    field, expect = "repo", "r1"
    if case == "json log":
        path = tmp_path / "a.json"
    else:
        path = tmp_path / "a.eval"
    if case == "task metrics":
        kw = {"metrics": [_metric("inspect_ai/accuracy")], "task_metrics": CLUSTERED}
    elif case == "dict metrics":
        kw = {"metrics": {"*": CLUSTERED}}
    elif case == "stderr":
        kw = {"metrics": [_metric("inspect_ai/stderr", cluster="repo")]}
    elif case == "nested":
        field, expect = "info.repo", "n0"
        kw = {"metrics": [_metric("ci_clustered", cluster="info.repo", level=0.95)]}  # bare name
    df, _ = read_inspect(write_log(path, **kw))
    assert df.set_index("question_id").loc["mmlu/4", "cluster_id"] == expect
    assert df.attrs["log_cluster"] == field and f"'{field}'" in df.attrs["notes"][0]


def test_metrics_that_name_no_field_leave_the_report_unclustered(tmp_path):
    """ci_clustered() without cluster, Inspect's plain stderr, another
    scorer's metrics and look-alikes from other packages give no cluster."""
    path = write_log(tmp_path / "a.eval", metrics=[
        _metric("bayeserr/ci_clustered", cluster=None, level=0.95), _metric("inspect_ai/stderr"),
        _metric("mypkg/ci_clustered", cluster="repo"), _metric("inspect_ai/stderr", cluster="")])
    ds = bayeserr.load(path)
    assert "cluster" not in ds.coords and "notes" not in ds.attrs["rows"]
    # metrics of a scorer other than the one read
    path = write_log(tmp_path / "b.eval", metrics=CLUSTERED, scorer="other")
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
    assert header["eval"]["scorers"][0]["name"] == "other"
    df, _ = read_inspect(path, scorer="other")
    assert df.attrs["log_cluster"] == "repo"


def test_a_folder_uses_the_field_for_every_log(tmp_path):
    """A log whose metrics name no field (plain accuracy) is clustered by the
    field the other logs name; a sample without it is a clear error."""
    write_log(tmp_path / "a.eval", model="m1")
    write_log(tmp_path / "b.eval", model="m2", metrics=[_metric("inspect_ai/accuracy")])
    ds = bayeserr.load(tmp_path)
    assert ds.sizes["model"] == 2 and ds.sizes["question"] == 12 and "cluster" in ds.coords
    note = ds.attrs["rows"]["notes"][0]
    assert "(in a.eval)" in note and "the logs' own metrics" in note
    write_log(tmp_path / "b.eval", model="m2", metrics=[_metric("inspect_ai/accuracy")],
              meta=lambda i: {"topic": "t"})
    with pytest.raises(InputError, match=r"b\.eval samples/1_epoch_1\.json: sample 1 has no metadata "
                                         r"field 'repo' \(the cluster of the logs' own metrics "
                                         r"ci_clustered\(cluster='repo'\) and ci_hierarchical"
                                         r"\(cluster='repo'\) \(in a\.eval\).*--no-cluster by none"):
        bayeserr.load(tmp_path)
    ds = bayeserr.load(tmp_path, no_cluster=True)
    assert "cluster" not in ds.coords


def test_logs_naming_different_fields_are_an_error(tmp_path, cli):
    write_log(tmp_path / "a.eval", model="m1")
    write_log(tmp_path / "b.eval", model="m2", metrics=[_metric("bayeserr/ci_clustered", cluster="topic")])
    _fails(cli, "report", tmp_path, expect=["cluster by different metadata fields",
                                            "ci_clustered(cluster='repo')", "ci_clustered(cluster='topic')",
                                            "--cluster-field FIELD", "--no-cluster"])
    assert bayeserr.load(tmp_path, cluster_field="topic").sizes["question"] == 12
    # several inputs, each naming its own field
    _fails(cli, "report", tmp_path / "a.eval", tmp_path / "b.eval",
           expect=["different metadata fields", "'repo'", "'topic'", "--cluster-field FIELD"])
    # an older run dropped by --duplicate-runs latest does not count
    write_log(tmp_path / "b.eval", model="m1", created="2024-01-01T00:00:00+00:00",
              metrics=[_metric("bayeserr/ci_clustered", cluster="topic")])
    ds = bayeserr.load(tmp_path, duplicate_runs="latest")
    assert set(ds["cluster"].values) == {"r0", "r1", "r2"}


# --------------------------------------------------------------------------- #
# item 8: one bad model, and re-runs
# --------------------------------------------------------------------------- #
def test_a_model_with_one_question_names_the_where_that_leaves_it_out(tmp_path, cli, cli_json):
    write_log(tmp_path / "good.eval", model="openai/m1", metrics=[])
    write_log(tmp_path / "also.eval", model="openai/m2", metrics=[])
    write_log(tmp_path / "crashed.eval", model="openai/m3", ids=[1], metrics=[])
    out = _fails(cli, "report", tmp_path, expect=["fewer than 2 questions", "'openai/m3' (1)",
                                                  "--where 'model!=openai/m3'"])
    # the option in the message, as printed, is the fix
    option = shlex.split(re.search(r"(--where '[^']*')", out).group(1))
    rep = cli_json("report", tmp_path, *option)
    assert [m["model"] for m in rep["models"]] and "openai/m3" not in {m["model"] for m in rep["models"]}
    assert {"reason": "--where model!=openai/m3", "count": 1} in rep["rows"]["dropped"]


def test_the_suggested_where_quotes_and_escapes_names(tmp_path, cli):
    """Several models, a comma in a name, and a table's own model column."""
    lines = ["llm,question_id,score"] + [f"A,q{i},{i % 2}" for i in range(5)]
    lines += ['"x,y",q1,1', "it's,q1,0"]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    out = _fails(cli, "report", path, "--model-col", "llm", expect=["'x,y' (1)", "'it's' (1)"])
    option = re.search(r"leave them out with (--where .*?) \(the rows", out).group(1)
    args = shlex.split(option)
    assert args[0] == "--where" and args[1] == "llm!=x\\,y,it's"
    ds = bayeserr.load(path, model_col="llm", where=args[1])
    assert list(ds["model"].values) == ["A"]


def test_latest_run_with_fewer_samples_says_what_each_had(tmp_path, cli):
    write_log(tmp_path / "complete.eval", created="2025-01-01T00:00:00+00:00", ids=range(1, 11), metrics=[])
    write_log(tmp_path / "partial.eval", created="2025-02-01T00:00:00+00:00", ids=range(1, 4), metrics=[])
    ds = bayeserr.load(tmp_path, duplicate_runs="latest")
    assert ds.attrs["rows"]["read"] == 13 and ds.attrs["rows"]["used"] == 3
    (drop,) = ds.attrs["rows"]["dropped"]
    assert drop["count"] == 10
    assert drop["reason"] == ("older run of mmlu with openai/m1: complete.eval, 10 samples, 7 of them in no "
                              "newer run: --duplicate-runs latest kept the newer partial.eval, 3 samples "
                              "(to use the older run, leave the newer out)")
    res = cli("report", tmp_path, "--duplicate-runs", "latest", "--bayes", "off")
    text = " ".join(res.output.split())  # Markdown may wrap the rows sentence
    assert res.exit_code == 0 and "complete.eval, 10 samples, 7 of them in no newer run" in text


def test_real_folder_one_bad_model_and_a_partial_rerun(cli, cli_json):
    if not LOGS.exists():
        pytest.skip(f"{LOGS} not available (../shared is absent)")
    _fails(cli, "report", LOGS, "--duplicate-runs", "latest",
           expect=["'openai/gpt-4o' (1)", "--where 'model!=openai/gpt-4o'"])
    # the newer run is a cancelled one: left out by default (issue 30), used with --partial-runs include,
    # and then the report says which run it kept and how many samples each had
    rep = cli_json("report", LOGS, "--duplicate-runs", "latest", "--where", "model!=openai/gpt-4o",
                   "--partial-runs", "include")
    assert [m["model"] for m in rep["models"]] == ["openai/gpt-4o-mini"]
    reasons = {d["reason"]: d["count"] for d in rep["rows"]["dropped"]}
    assert reasons["--where model!=openai/gpt-4o"] == 1
    (older,) = [r for r in reasons if r.startswith("older run")]
    assert reasons[older] == 10
    assert ("2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval, 10 samples, 7 of them in no "
            "newer run: --duplicate-runs latest kept the newer 2025-05-12T20-28-13-04-00_popularity.json, "
            "3 samples") in older


def test_guide_documents_the_choice():
    text = (ROOT / "docs" / "guide" / "inspect.md").read_text()
    assert "--where 'model!=openai/gpt-4o'" in text and "never dropped silently" in text
    assert "--duplicate-runs latest" in text and "how many samples each had" in text
    assert "Which cluster the report uses" in text


# --------------------------------------------------------------------------- #
# item 9: the README's Inspect example runs offline
# --------------------------------------------------------------------------- #
def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


def _example(page: Path) -> tuple[str, list[str]]:
    """The offline example of a page: its Python file and its shell commands."""
    text = page.read_text()
    (code,) = [b for b in _blocks(text, "python") if b.startswith("# offline_eval.py\n")]
    (shell,) = [b for b in _blocks(text, "bash") if b.startswith("python offline_eval.py")]
    commands = [line.split("#")[0].strip() for line in shell.splitlines() if line.strip()]
    return code, commands


#: cuts the subprocess off the network: every IPv4/IPv6 connection and name lookup fails
NO_NETWORK = textwrap.dedent('''
    import socket

    def _refuse(*args, **kwargs):
        raise OSError("no network in this test")

    def _guard(real):
        def connect(self, address):
            if self.family in (socket.AF_INET, socket.AF_INET6):
                raise OSError(f"no network in this test (connect to {address!r})")
            return real(self, address)
        return connect

    socket.socket.connect = _guard(socket.socket.connect)
    socket.socket.connect_ex = _guard(socket.socket.connect_ex)
    socket.getaddrinfo = _refuse
    socket.create_connection = _refuse
''')


def _offline(tmp: Path) -> dict:
    from ...integrations.test_inspect_metrics import _offline_env
    env = _offline_env(tmp)
    guard = tmp / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    env["PYTHONPATH"] = str(guard)
    env.pop("INSPECT_LOG_DIR")
    return env


def test_readme_and_guide_show_the_same_offline_example():
    readme = _example(ROOT / "README.md")
    assert readme == _example(ROOT / "docs" / "guide" / "inspect.md")
    code, commands = readme
    assert commands == ["python offline_eval.py", "bayeserr report logs/"]
    assert "ModelUsage(" in code and "mockllm/" in code


@pytest.mark.slow
def test_readme_inspect_example_runs_offline(tmp_path, monkeypatch, cli_json):
    """The README's snippet, as written, with the network cut off; then the
    README's `bayeserr report logs/` gives the intervals the logs hold."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    code, commands = _example(ROOT / "README.md")
    (tmp_path / "offline_eval.py").write_text(code)
    env = _offline(tmp_path)
    connect = "import socket; socket.create_connection(('pypi.org', 443))"
    probe = subprocess.run([sys.executable, "-c", connect], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=60, check=False)
    assert probe.returncode != 0 and "no network in this test" in probe.stderr  # the guard holds
    first = shlex.split(commands[0])
    assert first[0] == "python"
    res = subprocess.run([sys.executable, *first[1:]], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 2

    monkeypatch.chdir(tmp_path)
    report = shlex.split(commands[1])
    assert report[0] == "bayeserr"
    rep = cli_json(*report[1:])
    assert "repo" in rep["rows"]["notes"][0]
    by_model = {m["model"]: m for m in rep["models"]}
    assert set(by_model) == {"mockllm/model-a", "mockllm/model-b"}
    for path in logs:
        log = read_eval_log(str(path), header_only=True)
        assert log.status == "success"
        logged = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
        model = by_model[log.eval.model]
        assert model["n_clusters"] == 10
        for key in ("clustered", "hierarchical_posterior"):
            low, high = model["intervals"][key]
            assert logged[f"{key}_lower"] == pytest.approx(low, abs=1e-12)
            assert logged[f"{key}_upper"] == pytest.approx(high, abs=1e-12)
