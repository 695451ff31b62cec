"""Memory before loading (issue 12): ``load`` estimates the memory a file
needs (rows × bytes a row, plus the score array) and refuses, before
allocating, with a message naming the size, the memory left and what to do;
a ``MemoryError`` the estimate did not foresee is one ``error:`` line from
the CLI with exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.cli import main
from bayeserr.data import loading, memory

MiB = 1 << 20


def _frame(n_models: int, n_questions: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "model": pd.Categorical(np.repeat([f"m{i}" for i in range(n_models)], n_questions)),
        "question_id": np.tile(np.arange(n_questions), n_models),
        "score": (rng.random(n_models * n_questions) < 0.6).astype(np.int8)})


def _write_parquet(path, n_models: int, n_questions: int) -> None:
    """One row group per model (never the whole table in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(1)
    names = pa.array([f"model-{m:02d}" for m in range(n_models)])
    schema = pa.schema([("model", pa.dictionary(pa.int32(), pa.string())), ("question_id", pa.int64()),
                        ("score", pa.int8())])
    questions = pa.array(np.arange(n_questions, dtype=np.int64))
    with pq.ParquetWriter(path, schema) as writer:
        for m in range(n_models):
            model = pa.DictionaryArray.from_arrays(pa.array(np.full(n_questions, m, np.int32)), names)
            score = pa.array((rng.random(n_questions) < 0.6).astype(np.int8))
            writer.write_table(pa.Table.from_arrays([model, questions, score], schema=schema))


# ------------------------------------------------------------------ the estimate
def test_the_estimate_is_rows_times_bytes_a_row_plus_the_score_array():
    rows = 10_000_000
    read, index = memory.LOAD_BYTES_PER_ROW["read"], memory.LOAD_BYTES_PER_ROW["index"]
    assert memory.load_memory_estimate(rows, "read") == (rows * read[0], rows * read[1])
    # indexing: the score array is at least one cell a row before its shape is known ...
    assert memory.load_memory_estimate(rows, "index") == (rows * (index[0] + 8), rows * (index[1] + 8))
    # ... and its real size once it is (100 models × 200k questions × 1 sample)
    assert memory.load_memory_estimate(rows, "index", 20_000_000)[0] == rows * index[0] + 160_000_000
    # the benchmark's figure (issue 12): loading peaks at 75–90 bytes an input row; the
    # estimate must not be below it, nor so far above that it refuses what fits
    for phase in ("read", "index"):
        resident, address = memory.load_memory_estimate(1, phase)
        assert 60 <= resident <= 120 and resident <= address <= 2 * resident


def test_the_estimate_bounds_a_real_load():
    """What numpy and pandas allocate while indexing a table already read
    (traced by tracemalloc: allocated, not necessarily touched, so between
    the resident and the address-space figures) stays within the estimate,
    and the estimate is not a wild overstatement of it."""
    df = _frame(20, 15_000)
    bayeserr.load(df.head(100))  # warm: lazily imported modules are not the load's
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        ds = bayeserr.load(df)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    resident, address = memory.load_memory_estimate(len(df), "index", ds["score"].size)
    assert 0.75 * peak <= resident and peak <= address <= 3 * peak, (peak, resident, address)


# ------------------------------------------------------------------ refusals
def _limit(monkeypatch, left: int, what="the memory available now", kind=0):
    monkeypatch.setattr(memory, "_memory_limits", lambda: [(left, what, kind)])


def test_parquet_is_refused_from_its_metadata_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.parquet"
    _write_parquet(path, 4, 50_000)

    def never(*args, **kwargs):
        raise AssertionError("the file was read")

    monkeypatch.setattr(pd, "read_parquet", never)
    _limit(monkeypatch, 10 * MiB)
    with pytest.raises(InputError) as err:
        bayeserr.load(path)
    message = str(err.value)
    assert message.startswith(f"{path}: reading its 200,000 rows needs about ")
    assert "more than the memory available now: 10.0 MiB" in message
    assert "split the file" in message and "more memory" in message


def test_csv_rows_are_estimated_from_the_file_size(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    _frame(4, 50_000).to_csv(path, index=False)
    _limit(monkeypatch, 10 * MiB, "the address space left under ulimit -v (limit 600.0 MiB)", 1)
    with pytest.raises(InputError, match=r"reading its rows \(about [\d,]+, from the file size\) needs "
                                         r"about .* \(130 bytes a row\), more than the address space left "
                                         r"under ulimit -v \(limit 600.0 MiB\): 10.0 MiB") as err:
        bayeserr.load(path)
    rows = int(re.search(r"about ([\d,]+),", str(err.value)).group(1).replace(",", ""))
    assert 0.8 * 200_000 <= rows <= 1.2 * 200_000  # the first lines (short ids) are a fair sample


def test_indexing_is_refused_after_the_rows_are_selected(monkeypatch):
    """Once read, what counts is the rows left after --models / --where: the
    message names them and says how to load fewer."""
    df = _frame(4, 50_000)
    per_row = memory.LOAD_BYTES_PER_ROW["index"][0] + 8
    _limit(monkeypatch, 100_000 * per_row + 1)
    with pytest.raises(InputError) as err:
        bayeserr.load(df)
    message = str(err.value)
    assert message.startswith("DataFrame: indexing its 200,000 rows needs about 14.9 MiB")
    for fix in ("--models", "--where", "more memory"):
        assert fix in message
    assert bayeserr.load(df, models=["m0", "m1"])["score"].shape == (2, 50_000, 1)


def test_memory_limits_are_read_from_the_system():
    limits = memory._memory_limits()
    assert limits and all(left >= 0 and kind in (0, 1) for left, _, kind in limits)
    assert memory.available_memory() == min(left for left, _, _ in limits)



@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_parser_out_of_memory_is_a_memory_error(tmp_path, monkeypatch, fmt):
    """The parsers' own allocation failures (pandas' C parser raises a
    ParserError, pyarrow an ArrowMemoryError) are MemoryErrors, not "could
    not be read as csv" with advice about the format."""
    import pyarrow as pa
    path = tmp_path / f"r.{fmt}"
    frame = _frame(2, 10)
    frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path)

    def fail(*args, **kwargs):
        if fmt == "csv":
            raise pd.errors.ParserError("Error tokenizing data. C error: out of memory")
        raise pa.ArrowMemoryError("malloc of size 32000000 failed")

    monkeypatch.setattr(pd, "read_csv" if fmt == "csv" else "read_parquet", fail)
    with pytest.raises(MemoryError, match="out of memory|malloc of size"):
        bayeserr.load(path)

# ------------------------------------------------------------------ the CLI
def test_a_memory_error_is_one_error_line(tmp_path, monkeypatch):
    """A MemoryError the estimate did not foresee: one line, exit 2."""
    path = tmp_path / "r.csv"
    _frame(2, 10).to_csv(path, index=False)

    def out_of_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 76.3 MiB for an array with shape (10000000,) and data type float64")

    monkeypatch.setattr(loading, "_validated_scores", out_of_memory)
    res = CliRunner().invoke(main, ["report", str(path), "--bayes", "off"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bayeserr report ran out of memory (Unable to "
                                                   "allocate 76.3 MiB"), res.stderr
    for fix in ("--models", "--where", "more memory"):
        assert fix in lines[0]
    assert "draws" not in lines[0]
    # with a huge --draws, the draws are named first (issue 43, item 9: the advice said "load fewer models")
    res = CliRunner().invoke(main, ["report", str(path), "--draws", "50000000"])
    assert res.exit_code == 2 and "Ask for fewer posterior draws (--draws 50000000 was given)" in res.stderr


def _run_limited(args, limit_mib: int, cwd) -> subprocess.CompletedProcess:
    """``python -m bayeserr.cli ARGS`` with its address space limited
    (ulimit -v); one thread for BLAS and Arrow, whose per-thread buffers
    would otherwise take much of a small limit."""
    limit = limit_mib * MiB
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "ARROW_IO_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "bayeserr.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))


@pytest.fixture(scope="module")
def address_limit(tmp_path_factory):
    """The smallest address-space limit (MiB, in 50 MiB steps) under which
    the CLI imports and reports a small file: loading anything big cannot fit."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS and /proc/self/status are Linux's")
    tmp = tmp_path_factory.mktemp("limit")
    small = tmp / "small.csv"
    _frame(2, 20).to_csv(small, index=False)
    for limit in range(600, 1201, 50):
        res = _run_limited(["report", small, "--bayes", "off", "--format", "json", "-o", tmp / "s.json"],
                           limit, tmp)
        if res.returncode == 0:
            return limit
    pytest.skip("the CLI's imports need more than 1.2 GiB of address space here")


def test_cli_refuses_a_file_too_big_for_the_address_space(tmp_path, address_limit):
    """Under ``ulimit -v`` just above what the CLI's imports need, a 3M-row
    Parquet file is refused from its metadata, before it is read: exit 2,
    one ``error:`` line naming the size, the limit and what to do, no
    traceback (unlimited, it loads in about a second)."""
    big = tmp_path / "big.parquet"
    _write_parquet(big, 30, 100_000)
    res = _run_limited(["report", big, "--bayes", "off", "--format", "json", "-o", tmp_path / "b.json"],
                       address_limit, tmp_path)
    assert res.returncode == 2, (address_limit, res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "reading its 3,000,000 rows needs about 371.9 MiB" in lines[0]
    assert f"ulimit -v (limit {address_limit:.1f} MiB)" in lines[0] and "more memory" in lines[0]

