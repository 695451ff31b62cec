"""--engine dask: the report from sufficient statistics computed on a
dask.distributed LocalCluster (2 worker processes, started here) equals the
in-memory report, number for number, with the same row accounting."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.reporting.build import build_report

from ..conftest import real_file
from .test_stream import REAL, _differences, bayes_values

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    import logging
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="2GiB", dashboard_address=":0",
                                       silence_logs=logging.ERROR,
                                       local_directory=str(tmp_path_factory.mktemp("dask")))
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    from bayeserr.examples import example_path
    path = tmp_path_factory.mktemp("ex") / "internal_eval.parquet"
    pd.read_csv(example_path()).to_parquet(path)
    return path


def _same_report(path, client, load=None, **kw):
    """The memory and dask reports, Bayesian columns included (statistics combined on the
    workers: count tables and unit multisets too), equal to 1e-12."""
    load = load or {}
    mem = build_report(bayeserr.load(path, **load), **kw).to_dict()
    got = build_report(str(path), engine="dask", scheduler=client, progress=False, **load, **kw).to_dict()
    assert mem["rows"] == got["rows"]
    assert _differences(mem, got) == []
    assert bayes_values(got) > 0 and not any(w["code"] == "not_at_scale" for w in got["warnings"])
    return got


def test_example_equals_memory(example, client):
    rep = _same_report(example, client)
    assert rep["models"][0]["variance"] is not None  # K = 3: the within/between split


@pytest.mark.parametrize("name,load,kw", REAL)
def test_real_files_equal_memory(name, load, kw, client, tmp_path):
    path = tmp_path / "real.parquet"
    pd.read_csv(real_file(name)).to_parquet(path)
    _same_report(path, client, load, **kw)


def test_several_files_are_accounted_file_by_file(example, client, tmp_path):
    frame = pd.read_parquet(example)
    for i, (_, part) in enumerate(frame.groupby("model")):
        part.to_parquet(tmp_path / f"p{i}.parquet")
    rep = _same_report(str(tmp_path / "p*.parquet"), client)
    assert len(rep["rows"]["inputs"]) == 4


def test_many_parts_and_partitions_equal_stream(example, client, tmp_path):
    """A hive folder (one part per model) shuffled into 5 partitions: the stream engine's statistics."""
    from bayeserr.engines.dask import reduce_dask
    from bayeserr.engines.stream import reduce_parquet
    df = pd.read_parquet(example)
    for m, part in df.groupby("model"):
        (tmp_path / f"model={m}").mkdir()
        part.drop(columns="model").to_parquet(tmp_path / f"model={m}" / "part.parquet")
    ref = reduce_parquet(tmp_path, progress=False)
    got = reduce_dask(tmp_path, scheduler=client, partitions=5, progress=False)
    assert got.rows == ref.rows and got.stats.models == ref.stats.models and got.partitions == 5
    assert got.stats.equal(ref.stats, 1e-12)


def test_worker_killed_mid_computation(example, client, tmp_path):
    """A worker process dies as it starts a reduce task; dask reruns the work: the same numbers."""
    from distributed.diagnostics.plugin import WorkerPlugin

    from bayeserr.engines.dask import reduce_dask
    flag = tmp_path / "kill-once"
    flag.write_text("")

    class KillOnce(WorkerPlugin):
        name = "bayeserr-kill-once"

        def __init__(self, flag):
            self.flag = flag

        def transition(self, key, start, finish, **kw):
            import os
            if finish == "executing" and str(key).startswith("bayeserr-reduce") and os.path.exists(self.flag):
                os.remove(self.flag)
                os._exit(1)

    ref = reduce_dask(example, scheduler=client, progress=False)
    client.register_plugin(KillOnce(str(flag)))
    try:
        got = reduce_dask(example, scheduler=client, partitions=4, progress=False)
    finally:
        client.unregister_worker_plugin("bayeserr-kill-once")
    assert not flag.exists()  # a worker was killed
    assert got.rows == ref.rows and got.stats.equal(ref.stats, 1e-12)
    client.wait_for_workers(2, timeout=60)


def test_malformed_and_missing_parts(example, client, tmp_path):
    from bayeserr.engines.dask import reduce_dask
    folder = tmp_path / "parts"
    folder.mkdir()
    df = pd.read_parquet(example)
    df.to_parquet(folder / "a.parquet")
    (folder / "b.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match="b.parquet"):
        reduce_dask([folder / "a.parquet", folder / "b.parquet"], scheduler=client, progress=False)
    with pytest.raises(InputError, match="missing.parquet"):
        reduce_dask(folder / "missing.parquet", scheduler=client, progress=False)
    bad = df.copy()
    bad["score"] = bad["score"].astype(float)
    bad.loc[3, "score"] = 1.5  # a bad row found by a worker: the error names the file
    bad.to_parquet(folder / "c.parquet")
    with pytest.raises(InputError, match="c.parquet.*outside"):
        reduce_dask([folder / "a.parquet", folder / "c.parquet"], scheduler=client, progress=False)
    with pytest.raises(InputError, match="duplicate"):
        reduce_dask([folder / "a.parquet", folder / "a.parquet"], scheduler=client, progress=False)


def test_cli_with_scheduler_address(example, client, cli, tmp_path):
    out = tmp_path / "r.json"
    res = cli("report", example, "--engine", "dask", "--scheduler", client.scheduler.address,
              "--format", "json", "-o", out)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    mem = build_report(bayeserr.load(example), bayes="off").to_dict()
    assert data["rows"] == mem["rows"] and data["models"][0]["mean"] == pytest.approx(mem["models"][0]["mean"])
    local = tmp_path / "local.json"  # no --scheduler: a LocalCluster started and closed by bayeserr
    res = cli("report", example, "--engine", "dask", "--workers", "1", "--worker-memory", "1GiB",
              "--format", "json", "-o", local)
    assert res.exit_code == 0, res.output
    assert _differences(data, json.loads(local.read_text())) == []
    res = cli("report", example, "--engine", "stream", "--workers", "2")
    assert res.exit_code == 2 and "--engine dask" in res.output


def test_unreachable_scheduler_and_missing_dask(example, monkeypatch):
    from bayeserr.engines import dask as dask_engine
    with pytest.raises(InputError, match="no dask scheduler answers"):
        dask_engine.reduce_dask(example, scheduler="tcp://127.0.0.1:9", progress=False, connect_timeout="2s")
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(InputError, match=r"pip install 'bayeserr\[dask\]'"):
        bayeserr.report(str(example), engine="dask")


def test_import_bayeserr_does_not_import_dask():
    code = "import sys, bayeserr; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_urls(example, client):
    """A URL: pyarrow's file systems (file://) on the workers, fsspec's (memory://) in the stream engine."""
    fsspec = pytest.importorskip("fsspec")
    from bayeserr.engines.dask import reduce_dask
    from bayeserr.engines.stream import reduce_parquet
    ref = reduce_parquet(example, progress=False)
    got = reduce_dask(example.resolve().as_uri(), scheduler=client, progress=False)
    assert got.rows == ref.rows and got.stats.equal(ref.stats, 1e-12)
    with fsspec.open("memory://bayeserr-test/ex.parquet", "wb") as fh:
        fh.write(example.read_bytes())
    assert reduce_parquet("memory://bayeserr-test/ex.parquet", progress=False).stats.equal(ref.stats, 1e-12)
    with pytest.raises(InputError, match="no such file"):
        reduce_parquet("memory://bayeserr-test/missing.parquet", progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("how, after", [("SIGINT", 1.5), ("SIGTERM", 1.5), ("SIGTERM", 0.0)])
def test_an_interrupted_run_says_one_line_and_leaves_nothing(tmp_path, how, after):
    """Ctrl-C (SIGINT to the whole process group) or SIGTERM to bayeserr during a dask run — also
    while the workers start (``after`` 0): exit 130/143 with one line, no worker traceback, and no
    lock file left in the scratch folder (issue 43, item 7)."""
    import os
    import signal
    import time
    rng = np.random.default_rng(0)
    n = 1_500_000
    df = pd.DataFrame({"model": rng.choice([f"m{i}" for i in range(20)], n), "question_id": rng.integers(0, 120_000, n),
                       "score": rng.integers(0, 2, n)}).drop_duplicates(["model", "question_id"])
    path = tmp_path / "big.parquet"
    df.to_parquet(path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "bayeserr.cli", "report", str(path), "--engine", "dask",
                             "--workers", "2", "--bayes", "off", "--on-unpaired", "drop"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 120
    while not any(p.name.startswith("bayeserr-dask-") for p in scratch.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)  # the cluster's scratch folder: the workers are starting
    time.sleep(after)
    if how == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal")
    assert proc.returncode == (130 if how == "SIGINT" else 143), err
    assert "Traceback" not in err and ("interrupted" in err or "terminated" in err)
    time.sleep(1)
    assert not list(scratch.rglob("*.lock")) and not list(scratch.rglob("*.dirlock"))
    assert not [p for p in scratch.iterdir() if p.name.startswith(("bayeserr-dask-", "dask-scratch"))]
