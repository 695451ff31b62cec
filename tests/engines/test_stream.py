"""--engine stream: the report from sufficient statistics equals the in-memory
report, number for number, on the bundled example, SWE-bench and LiveBench."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.engines.stream import reduce_parquet
from bayeserr.reporting.build import build_report

from ..conftest import real_file


def _differences(a, b, path="", rel=1e-12, loose=()):
    """Values of two JSON reports that differ beyond ``rel`` (relative); keys in ``loose`` (path
    fragments) are compared to 1e-5 relative or 1e-6 absolute instead."""
    if isinstance(a, dict):
        keys = set(a) | set(b)
        return [d for k in keys if k != "provenance"
                for d in (_differences(a[k], b[k], f"{path}/{k}", rel, loose) if k in a and k in b
                          else [(path + "/" + k,)])]
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return [(path, "length")]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]", rel, loose)]
    if isinstance(a, float) or isinstance(b, float):
        lax = any(k in path for k in loose)
        ok = a is not None and b is not None and math.isclose(a, b, rel_tol=1e-5 if lax else rel,
                                                              abs_tol=1e-6 if lax else 1e-15)
        return [] if ok else [(path, a, b)]
    return [] if a == b else [(path, a, b)]


#: the Bayesian values of a report: every one is compared across engines (issue 42)
BAYES_KEYS = ("beta_posterior", "hierarchical_posterior", "cluster_effect_posterior", "bayesian_bootstrap")


def bayes_values(rep: dict) -> int:
    """How many Bayesian numbers a report holds (so the equality checks compare some)."""
    n = sum(v is not None for m in rep["models"] for k in BAYES_KEYS for v in (m["intervals"].get(k) or []))
    n += sum(c["prob_a_better"] is not None for c in rep["comparisons"])
    return n + sum(m["p_best"] is not None for m in rep["ranking"]["models"]) if rep["ranking"] else n


def _same_report(path, load=None, **kw):
    """The memory and stream reports, Bayesian columns and the pass^k section included, equal to 1e-12."""
    load = load or {}
    mem = build_report(bayeserr.load(path, **load), **kw).to_dict()
    stream = build_report(path, engine="stream", progress=False, **load, **kw).to_dict()
    assert mem["rows"] == stream["rows"]
    assert _differences(mem, stream) == []
    assert bayes_values(stream) > 0 and not any(w["code"] == "not_at_scale" for w in stream["warnings"])
    return stream


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    from bayeserr.examples import example_path
    path = tmp_path_factory.mktemp("ex") / "internal_eval.parquet"
    pd.read_csv(example_path()).to_parquet(path)
    return path


def test_example_equals_memory(example):
    rep = _same_report(example, pass_k=[1, 2])
    assert rep["models"][0]["variance"] is not None  # K = 3: the within/between split
    assert rep["reliability"]["ks"] == [1, 2, 3] and rep["pass_at_k"]  # from the run table
    assert rep["comparisons"] and rep["comparisons"][0]["test"] == "t_cr2_bm"


def test_row_order_does_not_change_the_report(example, tmp_path):
    """The rows shuffled: the engine's run table is put in the order of the question labels, as the
    memory engine's view is, so pass@k's sums (and ties between models) are formed alike."""
    path = tmp_path / "shuffled.parquet"
    pd.read_parquet(example).sample(frac=1, random_state=1).to_parquet(path)
    _same_report(path, pass_k=[1, 2])


def test_several_files_are_accounted_file_by_file(example, tmp_path):
    """A glob of several files: each file's rows under rows.inputs, as the loader gives them."""
    frame = pd.read_parquet(example)
    for i, (_, part) in enumerate(frame.groupby("model")):
        part.to_parquet(tmp_path / f"p{i}.parquet")
    rep = _same_report(str(tmp_path / "p*.parquet"))
    assert [x["read"] for x in rep["rows"]["inputs"]] == frame.groupby("model").size().tolist()


def test_example_in_small_partitions(example):
    """Many spill partitions (each question's rows in one) give the same statistics."""
    one = reduce_parquet(example, progress=False, partitions=1)
    many = reduce_parquet(example, progress=False, partitions=7, track_questions=True)
    assert many.stats.equal(one.stats, 1e-12) and many.partitions == 7


#: real files of every kind of Bayesian column: 0/1 with clusters (two-level posteriors, cluster-effect
#: pair model), partly answered (LiveBench), fractional with clusters (AlpacaEval: cluster-effect
#: posterior, bootstrap over clusters) and without (the Bayesian bootstrap over questions from the unit
#: multiset), K = 4 runs (MathArena: the two-level model over questions, pairs bootstrapped)
REAL = [("swebench_verified_bashonly_per_instance.csv.gz", {}, {}),
        ("livebench_20250113_per_question.csv.gz", {}, {"on_unpaired": "drop"}),
        ("alpacaeval2_per_instruction.csv.gz", {}, {"on_unpaired": "drop"}),
        ("alpacaeval2_per_instruction.csv.gz", {"no_cluster": True}, {"on_unpaired": "drop"}),
        ("matharena_aime2025_II_per_run.csv.gz", {"sample_col": "run"}, {})]


@pytest.mark.parametrize("name,load,kw", REAL)
def test_real_files_equal_memory(name, load, kw, tmp_path):
    path = tmp_path / "real.parquet"
    pd.read_csv(real_file(name)).to_parquet(path)
    _same_report(path, load, **kw)


def test_count_columns_are_read_as_the_memory_engine_reads_them(tmp_path):
    """EvalPerf's n_correct/n_samples columns (50–100 runs a problem, 2 clusters): the three-level
    posteriors, pass^k and pass@k from the engine's count and run tables equal the memory engine's.
    Romano–Wolf's critical values are quantiles of float32 draws: one float32 step apart (1e-7) when the
    covariance differs in the last bits, as it does here, which a pair on ≈ 1 df (two clusters) turns into
    1e-6 of its adjusted critical t; a pair with t ≈ 7,000 carries 1e-11 in its p-values."""
    path = tmp_path / "evalperf.parquet"
    pd.read_csv(real_file("evalperf_per_task.csv.gz")).to_parquet(path)
    mem = build_report(bayeserr.load(path), pass_k=[1, 10]).to_dict()
    stream = build_report(path, engine="stream", progress=False, pass_k=[1, 10]).to_dict()
    assert _differences(mem, stream, rel=1e-9, loose=("critical", "ci_adjusted")) == []
    assert stream["reliability"]["ks"][-1] == 50 and all(m["intervals"]["hierarchical_posterior"]
                                                         for m in stream["models"])


def test_bayes_mcmc_from_sums_gives_the_sampler_the_memory_engines_data(example, monkeypatch):
    """--bayes mcmc with the stream engine: the hierarchical NUTS fits read the count table (no
    rows) and get the memory engine's data: each model's questions (k, n) in each cluster."""
    from bayeserr.bayes import fitting
    seen = []

    def fake(items, settings):
        # per model: the multiset of (k, n) per cluster, clusters unlabelled (each engine numbers its own)
        seen.append(sorted((name, sorted(tuple(sorted(zip(k[c == code], n[c == code]))) for code in set(c)))
                           for name, k, n, c in items))
        raise RuntimeError("stop here")
    monkeypatch.setattr(fitting, "hierarchical_mcmc_many", fake)
    with pytest.raises(RuntimeError, match="stop here"):
        bayeserr.report(bayeserr.load(example), bayes="mcmc")
    with pytest.raises(RuntimeError, match="stop here"):
        bayeserr.report(str(example), engine="stream", bayes="mcmc", progress=False)
    assert len(seen) == 2 and seen[0] == seen[1] and len(seen[0]) == 4


def test_runs_not_kept_are_named_not_silent(example, tmp_path, monkeypatch):
    """pass@k and pass^k read each question's run counts: kept for 0/1 results up to RUN_CELLS
    cells. Past the bound, or with fractional scores, the sections are named, never silently null."""
    from bayeserr.stats import bayes_sums
    monkeypatch.setattr(bayes_sums, "RUN_CELLS", 10)
    rep = build_report(str(example), engine="stream", progress=False, pass_k=[1]).to_dict()
    said = [w["message"] for w in rep["warnings"] if w["code"] == "not_at_scale"]
    assert rep["reliability"] is None and rep["pass_at_k"] is None and len(said) == 1  # one warning, both named
    assert said[0].startswith("Not available with --engine stream: pass@k — computed from each question's runs")
    assert "; the reliability section (pass^k) — computed from each" in said[0] and said[0].endswith("for them.")
    monkeypatch.undo()
    frame = pd.read_parquet(example)
    frame["score"] = frame["score"] * 0.5  # fractional scores: no pass^k, as with the memory engine
    path = tmp_path / "frac.parquet"
    frame.to_parquet(path)
    for source in (bayeserr.load(path), str(path)):
        rep = bayeserr.report(source, engine="memory" if not isinstance(source, str) else "stream")
        assert rep.to_dict()["reliability"] is None and "not_at_scale" not in [w.code for w in rep.warnings]
        with pytest.raises(InputError, match="0/1 results per run"):
            bayeserr.report(source, engine="memory" if not isinstance(source, str) else "stream", pass_hat_k=[2])


def test_a_dropped_unit_multiset_is_named_not_silent(tmp_path, monkeypatch):
    """Past its memory bound the unit multiset is dropped: the Bayesian bootstrap over questions
    is then null and the report names it (not_at_scale), the rest of the Bayesian columns stay."""
    from bayeserr.stats import bayes_sums
    path = tmp_path / "alpaca.parquet"
    pd.read_csv(real_file("alpacaeval2_per_instruction.csv.gz")).to_parquet(path)
    monkeypatch.setattr(bayes_sums, "UNIT_BYTES", 1000)
    rep = build_report(str(path), engine="stream", progress=False, on_unpaired="drop", no_cluster=True).to_dict()
    said = " ".join(w["message"] for w in rep["warnings"] if w["code"] == "not_at_scale")
    assert "Bayesian bootstrap over questions" in said and "P(A > B)" in said
    assert all(m["intervals"]["bayesian_bootstrap"] is None for m in rep["models"])
    assert all(c["prob_a_better"] is None for c in rep["comparisons"])
    assert rep["ranking"]["models"][0]["p_best"] is not None  # from the covariance of the means: kept


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
        assert {k: v for k, v in got.rows.items() if k != "inputs"} == ref.rows
        assert [x["read"] for x in got.rows["inputs"]] == [600] * 4  # each file's rows
        order = [got.stats.models.index(m) for m in ref.stats.models]
        assert got.stats.select(order).equal(ref.stats, 1e-12)


def test_api_and_cli(example, cli, tmp_path):
    rep = bayeserr.report(str(example), engine="stream", pass_k=[1])
    assert "not_at_scale" not in [w.code for w in rep.warnings]  # Bayesian columns, pass@k, pass^k: all there
    out = tmp_path / "r.json"
    res = cli("report", example, "--engine", "stream", "--bayes", "full", "--format", "json", "-o", out)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["reliability"] is not None and data["models"][0]["intervals"]["hierarchical_posterior"]
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


@pytest.mark.parametrize("bad", ["outside", "nan", "inf", "missing score", "empty model"])
def test_bad_rows_are_named_as_the_memory_engine_names_them(cli, tmp_path, monkeypatch, bad):
    """The stream engine said "outside [0, 1] (from -1 to 2)" with no row: it names the data
    rows of the first record batch that has bad ones, numbered as the memory engine numbers
    them (batches of 7 rows here: the second batch, rows 8–14), and says reading stopped there."""
    import bayeserr.engines.stream as stream
    monkeypatch.setattr(stream, "BATCH_ROWS", 7)
    n = 40
    df = pd.DataFrame({"model": np.repeat(["a", "b"], n // 2).astype(object),
                       "question_id": np.tile(np.arange(n // 2), 2), "score": np.tile([0.0, 1.0], n // 2)})
    rows = [9, 12, 33]  # 0-based: two in the second batch, one in the fifth
    if bad == "empty model":
        df.loc[rows, "model"] = None
    else:
        df.loc[rows, "score"] = {"outside": [1.5, -1.0, 2.0], "nan": np.nan, "inf": np.inf,
                                 "missing score": None}[bad]
    path = tmp_path / "bad.parquet"
    df.to_parquet(path)
    said = {}
    for engine in ("memory", "stream"):
        res = cli("report", path, "--engine", engine)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        said[engine] = " ".join(res.output.split())
    assert ("in 2 row(s) among rows 8–14 (data rows 10, 13, counting from 1; reading stopped there)"
            in said["stream"]), said
    if bad not in ("nan", "missing score"):  # the memory engine reads both as a missing score
        assert "in 3 row(s) (data rows 10, 13, 34, counting from 1)" in said["memory"], said
        assert said["stream"].split(" in ")[0] == said["memory"].split(" in ")[0]  # the same problem


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


@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # PyMC 6's chains
def test_bayes_mcmc_with_the_stream_engine_samples_from_the_count_table(example):
    """--bayes mcmc at scale: the three-level NUTS fits run from the count table and agree with the
    grid posterior of the same model (the memory engine's --bayes fast) to Monte Carlo error."""
    grid = bayeserr.report(str(example), engine="stream", progress=False).to_dict()
    from bayeserr.bayes.settings import BayesSettings
    mcmc = bayeserr.report(str(example), engine="stream", progress=False,
                           bayes=BayesSettings(mode="mcmc", mcmc_draws=600, mcmc_tune=600, seed=3)).to_dict()
    for g, m in zip(grid["models"], mcmc["models"]):
        assert g["model"] == m["model"]
        lo_g, hi_g = g["intervals"]["hierarchical_posterior"]
        lo_m, hi_m = m["intervals"]["hierarchical_posterior"]
        assert abs(lo_g - lo_m) < 0.02 and abs(hi_g - hi_m) < 0.02, (g["model"], (lo_g, hi_g), (lo_m, hi_m))
    assert not any(w["code"] == "not_at_scale" for w in mcmc["warnings"])


def test_save_posterior_and_the_posterior_figure_from_the_stream_engine(example, cli, tmp_path):
    """The engine keeps the same fits as the memory engine: --save-posterior writes the same files
    (the same posterior summaries) and the HTML has the posterior figure."""
    import xarray as xr
    for engine in ("memory", "stream"):
        res = cli("report", example, "--engine", engine, "--save-posterior", tmp_path / engine, "--format", "html",
                  "-o", tmp_path / f"{engine}.html")
        assert res.exit_code == 0, res.output
    files = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "stream").iterdir()) and len(files) > 2
    for name in files:
        if name.endswith(".nc"):
            a, b = (xr.open_dataset(tmp_path / e / name, group="posterior") for e in ("memory", "stream"))
            for var in a.data_vars:
                np.testing.assert_allclose(a[var].values, b[var].values, rtol=1e-9)
    assert 'id="fig-posterior"' in (tmp_path / "stream.html").read_text()


def test_a_parquet_folder_is_streamed_by_default_and_standard_input_is_refused(example, cli, tmp_path):
    """A folder of Parquet parts, given with no --engine, is read by the stream engine (the loader reads
    files) with one note; the stream engine refuses standard input and --task-weights, naming the fix."""
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_parquet(example)
    for i, (_, part) in enumerate(frame.groupby("model")):
        part.to_parquet(folder / f"part-{i}.parquet")
    res = cli("report", folder, "--bayes", "full", "--format", "json", "-o", tmp_path / "auto.json")
    assert res.exit_code == 0, res.output
    assert "a folder of Parquet files is read by the stream engine" in res.output
    got = json.loads((tmp_path / "auto.json").read_text())
    want = build_report(str(folder), engine="stream", progress=False).to_dict()
    assert _differences(got, want) == []
    res = cli("report", "-", "--engine", "stream")
    assert res.exit_code == 2 and "not standard input" in res.output
    res = cli("report", example, "--engine", "stream", "--task-weights", "a=1")
    assert res.exit_code == 2 and "--task-weights" in res.output and "--engine memory" in res.output
