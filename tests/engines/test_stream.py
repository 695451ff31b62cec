"""--engine stream: the report from sufficient statistics equals the in-memory
report, number for number, on the bundled example, SWE-bench and LiveBench."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.engines.stream import reduce_parquet
from bayeserr.reporting.build import build_report

from ..conftest import real_file


def _differences(a, b, path=""):
    if isinstance(a, dict):
        keys = set(a) | set(b)
        return [d for k in keys if k != "provenance"
                for d in (_differences(a[k], b[k], f"{path}/{k}") if k in a and k in b else [(path + "/" + k,)])]
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return [(path, "length")]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) or isinstance(b, float):
        ok = a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
        return [] if ok else [(path, a, b)]
    return [] if a == b else [(path, a, b)]


def without_pass_hat_k(mem: dict, engine: dict) -> None:
    """Set aside what only the memory engine shows for questions run repeatedly: the reliability
    section (pass^k needs each question's runs), which the engine names in a not_at_scale warning."""
    if mem.get("reliability") is not None:
        mem.pop("reliability")
        assert engine.pop("reliability") is None
        (said,) = [w for w in engine["warnings"] if w["code"] == "not_at_scale"]
        assert "reliability section (pass^k)" in said["message"]
        engine["warnings"].remove(said)


def _same_report(path, **kw):
    mem = build_report(bayeserr.load(path), bayes="off", **kw).to_dict()
    stream = build_report(path, engine="stream", bayes="off", progress=False, **kw).to_dict()
    without_pass_hat_k(mem, stream)
    assert mem["rows"] == stream["rows"]
    assert _differences(mem, stream) == []
    return stream


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    from bayeserr.examples import example_path
    path = tmp_path_factory.mktemp("ex") / "internal_eval.parquet"
    pd.read_csv(example_path()).to_parquet(path)
    return path


def test_example_equals_memory(example):
    rep = _same_report(example)
    assert rep["models"][0]["variance"] is not None  # K = 3: the within/between split
    assert rep["comparisons"] and rep["comparisons"][0]["test"] == "t_cr2_bm"


def test_example_in_small_partitions(example):
    """Many spill partitions (each question's rows in one) give the same statistics."""
    one = reduce_parquet(example, progress=False, partitions=1)
    many = reduce_parquet(example, progress=False, partitions=7, track_questions=True)
    assert many.stats.equal(one.stats, 1e-12) and many.partitions == 7


@pytest.mark.parametrize("name,kw", [("swebench_verified_bashonly_per_instance.csv.gz", {}),
                                     ("livebench_20250113_per_question.csv.gz", {"on_unpaired": "drop"})])
def test_real_files_equal_memory(name, kw, tmp_path):
    path = tmp_path / "real.parquet"
    pd.read_csv(real_file(name)).to_parquet(path)
    _same_report(path, **kw)


def test_folder_glob_and_hive(example, tmp_path):
    """A hive-partitioned folder (model=NAME/…) and a glob of parts: the same statistics."""
    df = pd.read_parquet(example)
    hive, flat = tmp_path / "hive", tmp_path / "flat"
    flat.mkdir()
    for i, (m, part) in enumerate(df.groupby("model")):
        (hive / f"model={m}").mkdir(parents=True)
        part.drop(columns="model").to_parquet(hive / f"model={m}" / "part.parquet")
        part.to_parquet(flat / f"part-{i}.parquet")
    ref = reduce_parquet(example, progress=False)
    for source in (hive, str(flat / "part-*.parquet")):
        got = reduce_parquet(source, progress=False)
        assert got.rows == ref.rows
        order = [got.stats.models.index(m) for m in ref.stats.models]
        assert got.stats.select(order).equal(ref.stats, 1e-12)


def test_api_and_cli(example, cli, tmp_path):
    rep = bayeserr.report(str(example), engine="stream", pass_k=[1])
    codes = [w.code for w in rep.warnings]
    assert codes.count("not_at_scale") == 3  # the Bayesian columns, pass@k and pass^k, with the reason
    out = tmp_path / "r.json"
    res = cli("report", example, "--engine", "stream", "--format", "json", "-o", out)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert any(w["code"] == "not_at_scale" for w in data["warnings"])
    res = cli("report", example, "--engine", "stream", "--where", "model=x")
    assert res.exit_code != 0 and "--where" in res.output


def test_malformed_and_missing_parts(example, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    pd.read_parquet(example).to_parquet(folder / "a.parquet")
    (folder / "b.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match="b.parquet"):
        reduce_parquet([folder / "a.parquet", folder / "b.parquet"], progress=False)
    with pytest.raises(InputError, match="missing.parquet"):
        reduce_parquet(folder / "missing.parquet", progress=False)
    with pytest.raises(InputError, match="engine='stream' reads Parquet"):
        bayeserr.report(bayeserr.load(example), engine="stream")


def test_bad_rows_are_errors_naming_the_file(tmp_path):
    path = tmp_path / "bad.parquet"
    pd.DataFrame({"model": ["a", "a", "b", "b"], "question_id": [1, 2, 1, 2],
                  "score": [0.0, 1.5, 1.0, 0.0]}).to_parquet(path)
    with pytest.raises(InputError, match="bad.parquet.*outside"):
        reduce_parquet(path, progress=False)
    pd.DataFrame({"model": ["a", "a", "b", "b"], "question_id": [1, 1, 1, 2],
                  "score": [0.0, 1.0, 1.0, 0.0]}).to_parquet(path)
    with pytest.raises(InputError, match="duplicate"):
        reduce_parquet(path, progress=False)


def test_a_hive_folder_name_that_contradicts_the_column_is_an_error(example, tmp_path):
    """model=A/ holding files whose model column says B: pyarrow reads the folder's value, which
    swapped A and B silently (issue 43, item 6); an agreeing column is fine."""
    df = pd.read_parquet(example)
    agree, swap = tmp_path / "agree", tmp_path / "swap"
    models = sorted(df.model.unique())
    for i, (m, part) in enumerate(df.groupby("model")):
        (agree / f"model={m}").mkdir(parents=True)
        part.to_parquet(agree / f"model={m}" / "part.parquet")  # the column kept, the same value
        (swap / f"model={m}").mkdir(parents=True)
        part.assign(model=models[(i + 1) % len(models)]).to_parquet(swap / f"model={m}" / "part.parquet")
    ref = reduce_parquet(example, progress=False)
    got = reduce_parquet(agree, progress=False)
    order = [got.stats.models.index(m) for m in ref.stats.models]
    assert got.stats.select(order).equal(ref.stats, 1e-12)
    with pytest.raises(InputError, match=r"folder name 'model=.*' and the column 'model' inside .* disagree"):
        reduce_parquet(swap, progress=False)


def test_a_server_that_never_answers_is_given_up_on(tmp_path):
    """A server that accepts the connection and never answers hung the stream engine past 150 s
    (issue 43, item 2): each network step is bounded (BAYESERR_REMOTE_TIMEOUT) and the error names
    the URL; the default engine says it reads local files."""
    import os
    import socket
    import subprocess
    import sys
    import threading
    import time
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])  # accept, never answer
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/results.parquet"
    env = {**os.environ, "BAYESERR_REMOTE_TIMEOUT": "2"}
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", url, "--engine", "stream"],
                         capture_output=True, text=True, env=env, timeout=120)
    server.close()
    assert res.returncode == 2 and url in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert time.monotonic() - start < 60
    res = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", url], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and "--engine stream reads Parquet" in res.stderr


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_megabyte_model_name_is_refused_by_every_engine(tmp_path, engine):
    """A 1 MB model name: the dask engine's workers died on it after minutes (issue 43, item 7);
    every engine now refuses it at once, as the log readers do."""
    df = pd.DataFrame({"model": ["x" * 1_000_000] * 20 + ["b"] * 20, "question_id": [f"q{i}" for i in range(20)] * 2,
                       "score": [i % 2 for i in range(40)]})
    path = tmp_path / "big.parquet"
    df.to_parquet(path)
    with pytest.raises(InputError, match="1,000,000 characters long, above the limit of 65,536"):
        if engine == "memory":
            bayeserr.load(path)
        else:
            build_report(path, engine="stream", bayes="off", progress=False)


def test_engine_auto_streams_parquet_too_large_to_read_comfortably(example, cli, monkeypatch):
    """--engine auto (the default): the memory engine for what fits; for Parquet whose rows (from its
    metadata) would need more than AUTO_SHARE of the memory left, the stream engine, said in a note;
    an option only the memory engine has keeps it (issue 41, item 3)."""
    from bayeserr.engines import registry
    res = cli("report", example, "--bayes", "off", "--format", "json")
    assert "--engine auto" not in res.stderr and json.loads(res.stdout)["reliability"] is not None  # memory
    monkeypatch.setattr(registry, "AUTO_SHARE", 1e-12)  # as if the file were huge
    res = cli("report", example, "--bayes", "off", "--format", "json")
    assert "note: --engine auto: reading the 2,400 rows whole would need about" in res.stderr
    got = json.loads(res.stdout)
    ref = build_report(example, engine="stream", bayes="off", progress=False).to_dict()
    assert _differences(got, ref) == []
    for forced in (["--engine", "memory"], ["--where", "model!=baseline-v1"], ["--clusters-as", "strata"]):
        res = cli("report", example, "--bayes", "off", "--format", "json", *forced)
        assert res.exit_code == 0 and "--engine auto" not in res.stderr
    assert "default: auto" in " ".join(cli("report", "--help").output.split())
    monkeypatch.setattr(registry, "AUTO_SHARE", 0.5)
    monkeypatch.setattr(registry, "AUTO_ROWS", 1000)  # as if the file held more rows than streaming beats
    res = cli("report", example, "--bayes", "off", "--format", "json")
    assert "past 1,000 rows streaming is also faster" in " ".join(res.stderr.split())


def test_a_megabyte_task_name_is_refused_by_the_default_engine(tmp_path):
    df = pd.DataFrame({"model": ["a"] * 20 + ["b"] * 20, "question_id": [f"q{i}" for i in range(20)] * 2,
                       "task": ["t" * 1_000_000] * 40, "score": [i % 2 for i in range(40)]})
    path = tmp_path / "big.parquet"
    df.to_parquet(path)
    with pytest.raises(InputError, match="a task name in the column 'task' is 1,000,000 characters long"):
        bayeserr.load(path)


def test_a_server_that_trickles_is_given_up_on_without_an_abort(tmp_path):
    """A server that answers the headers and then sends a byte every half second held the stream
    engine for ever, and a given-up thread made Python abort at exit (a reviewer's find): each
    request has a total bound, and the process ends cleanly with exit 2."""
    import os
    import socket
    import subprocess
    import sys
    import threading
    import time
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def drip(conn):
        try:
            while True:
                request = conn.recv(65536).decode(errors="replace")
                if not request:
                    return
                if request.startswith("HEAD"):
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nAccept-Ranges: bytes\r\n\r\n")
                    continue
                conn.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 100000\r\n"
                             b"Content-Range: bytes 0-99999/100000\r\nAccept-Ranges: bytes\r\n\r\n")
                while True:
                    conn.sendall(b"P")
                    time.sleep(0.5)
        except OSError:
            return

    def accept():
        while True:
            try:
                conn = server.accept()[0]
            except OSError:
                return
            threading.Thread(target=drip, args=(conn,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/results.parquet"
    env = {**os.environ, "BAYESERR_REMOTE_TIMEOUT": "2"}
    try:
        for _ in range(3):
            start = time.monotonic()
            res = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", url, "--engine", "stream"],
                                 capture_output=True, text=True, env=env, timeout=120)
            assert res.returncode == 2 and "Fatal Python error" not in res.stderr, res.stderr
            assert time.monotonic() - start < 60
    finally:
        server.close()
