"""Engines and ``--engine stream``: the sufficient statistics of a Parquet results table in
bounded memory, on one machine (``docs/guide/scale.md``).

Eval logs are written model by model, but a question's per-question mean and
every pair's sums need all the rows *of a question* together (the
partitioning rule of :mod:`bayeserr.stats.sufficient`).  The plan, two passes:

1. **Scan and spill.**  Read the input in record batches (pyarrow; a file, a
   folder, a glob pattern or a hive-partitioned dataset), check every batch
   (ids present, scores numbers in [0, 1]: the loader's rules, the error naming
   the file), code models and clusters, sum each model's answers (for the
   centres), and append each row to one of ``P`` spill files (Arrow IPC, in a
   temporary folder) chosen by a hash of its question id.  ``P`` is set so that
   one partition holds about :data:`ROWS_PER_PARTITION` rows.
2. **Reduce.**  Read the spill files one at a time; each holds every row of
   its questions, so it becomes a small model × question × sample cube whose
   :class:`~bayeserr.stats.sufficient.Sufficient` statistics are added to the
   running total.  Duplicate rows and a question in two clusters are errors, as
   in the loader.

Memory: one record batch, the write buffers, one partition's cube and the
M × M (and, when some model skipped questions, M × M × C) sums.  Disk: about
the input's uncompressed size, in the temporary folder (``tmp_dir``).

Engines: ways to compute the :class:`~bayeserr.stats.sufficient.Sufficient`
statistics of a results table too large to hold as a cube.

* ``memory`` (the default) — no sufficient statistics: the loaded
  :class:`~bayeserr.stats.view.DataView` is read question by question.
* ``stream`` — :func:`reduce_parquet`: Parquet
  (file, folder, glob, hive-partitioned dataset) read in record batches with
  pyarrow, hash-partitioned by question to spill files, each partition reduced
  and the results added (bounded memory).

An engine's contract (what a distributed engine implements, see
``docs/guide/scale.md``): produce a :class:`StreamResult` — the statistics,
the row accounting, the columns used and the source label — by

1. ``scan``: the models, clusters and centres (pass 1 of :func:`reduce_parquet`);
2. ``reduce``: for each partition *of the questions* (all rows of a question
   together), :func:`reduce_table` → :class:`~bayeserr.stats.sufficient.Sufficient`;
3. ``combine``: ``sum(parts)`` (``Sufficient.__add__``, associative).

:func:`bayeserr.reporting.build.report_from_sufficient` turns the result
into the report; :data:`bayeserr.engines.registry.ENGINES` lists the engines.  Nothing
here is imported by ``import bayeserr``.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayeserr.base.errors import InputError

#: rows per spill partition (pass 2 holds one partition's cube at a time)
ROWS_PER_PARTITION = 2_000_000
#: rows per record batch read
BATCH_ROWS = 1 << 20
_GLOB = "*?["


@dataclass
class StreamResult:
    """What an engine hands to the report: the statistics and the accounting."""

    stats: object  #: :class:`~bayeserr.stats.sufficient.Sufficient`, models in first-seen order
    rows: dict  #: the row accounting (as ``ds.attrs["rows"]``)
    columns: dict  #: the columns used (as ``ds.attrs["columns"]``)
    source: str
    inputs: list  #: the files read
    samples: bool = False  #: more than one sample label (the K > 1 variance split is reported)
    tasks: bool = False  #: a task column was used (suite tables are not available at scale)
    partitions: int = 1
    seconds: dict = field(default_factory=dict)


# ------------------------------------------------------------------ progress
class Progress:
    """Lines on stderr for long runs: nothing in the first 2 s, then one line every 5 s."""

    def __init__(self, enabled: bool = True, stream=None, name: str = "stream"):
        self.enabled, self.name = enabled, name
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.last = self.t0

    def __call__(self, text: str, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.t0 < 2 or (now - self.last < 5 and not force):
            return
        self.last = now
        print(f"bayeserr {self.name} [{now - self.t0:6.0f} s] {text}", file=self.stream, flush=True)


# ------------------------------------------------------------------ inputs
def parquet_files(source) -> tuple[list[tuple[str, object]], str]:
    """``[(path, fragment-or-None)]`` and the label of a Parquet source: a file,
    a folder (hive partitioning read from ``key=value`` folder names), a glob
    pattern, or a list of them."""
    items = source if isinstance(source, (list, tuple)) else [source]
    out = []
    for item in items:
        text = os.fspath(item)
        path = Path(text).expanduser()
        if "://" in text:
            out += _remote_files(text)
        elif path.is_dir():
            try:
                dataset = hive_dataset(text, str(path))
                frags = sorted(dataset.get_fragments(), key=lambda f: f.path)
            except InputError:
                raise
            except Exception as exc:  # noqa: BLE001 - pyarrow's errors name no fix
                raise InputError(f"{text}: not a readable Parquet dataset ({exc}). The stream engine "
                                 "reads Parquet files, folders of them and glob patterns.") from None
            if not frags:
                raise InputError(f"{text}: the folder holds no Parquet files.")
            out += [(f.path, (dataset, f)) for f in frags]
        elif path.exists():
            out.append((str(path), None))
        elif any(ch in text for ch in _GLOB):
            import glob
            matches = sorted(glob.glob(os.path.expanduser(text), recursive=True))
            if not matches:
                raise InputError(f"{text}: no file matches this pattern.")
            out += [(m, None) for m in matches if Path(m).is_file()]
        else:
            raise InputError(f"{text}: no such file or folder.")
    label = " + ".join(os.fspath(i) for i in items) if len(items) <= 3 else \
        f"{os.fspath(items[0])} + … ({len(items)} inputs)"
    return out, label


#: seconds a remote source may take to connect and to answer one request (BAYESERR_REMOTE_TIMEOUT overrides)
REMOTE_TIMEOUT = 60.0
#: threads still blocked in a network call that was given up on: a process that exits with one alive can
#: abort in Python's finalization, so the command line ends it at once (bayeserr.cli.app.run)
ABANDONED: list = []


def remote_timeout() -> float:
    """The network bound: :data:`REMOTE_TIMEOUT`, or the ``BAYESERR_REMOTE_TIMEOUT`` environment variable."""
    text = os.environ.get("BAYESERR_REMOTE_TIMEOUT")
    try:
        value = float(text) if text else REMOTE_TIMEOUT
    except ValueError:
        raise InputError(f"BAYESERR_REMOTE_TIMEOUT must be a number of seconds (got '{text}').") from None
    if not (value > 0 and value < float("inf")):
        raise InputError(f"BAYESERR_REMOTE_TIMEOUT must be a positive, finite number of seconds (got '{text}').")
    return value


def _bounded(fn, url: str, seconds: float):
    """``fn()`` in a daemon thread, given up after ``seconds`` with an error naming the URL (a server that
    accepts and never answers, or a bucket behind a retrying client, would otherwise hang the report)."""
    import threading
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
    thread = threading.Thread(target=run, name="bayeserr-remote", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        ABANDONED.append(thread)  # the command line ends the process without waiting for it
        raise InputError(f"{url}: no answer within {seconds:g} s (connecting, or listing the files). Check the "
                         "address and the network; BAYESERR_REMOTE_TIMEOUT=SECONDS waits longer.")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _remote_fs(url: str, seconds: float):
    """``(file system, path)`` of a URL with connect and request timeouts: pyarrow's S3 and GCS
    file systems, else fsspec's (HTTP with aiohttp's socket timeouts)."""
    import pyarrow.fs as pafs
    scheme = url.split("://", 1)[0].lower()
    try:
        fs, path = pafs.FileSystem.from_uri(url)
    except Exception:  # noqa: BLE001 - a scheme pyarrow does not know: fsspec, if present
        try:
            from fsspec.core import url_to_fs
            options = {}
            if scheme in ("http", "https"):
                import aiohttp
                # total: one request (a footer, a row group) must finish in time, so a server that trickles
                # a byte at a time cannot hold the read for ever
                options["client_kwargs"] = {"timeout": aiohttp.ClientTimeout(total=seconds, sock_connect=seconds,
                                                                             sock_read=seconds)}
            fsspec_fs, path = url_to_fs(url, **options)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{url}: cannot open this URL ({type(exc).__name__}: {exc}). Install the file "
                             "system's package (for example s3fs or gcsfs), or copy the files locally.") from None
        return pafs.PyFileSystem(pafs.FSSpecHandler(fsspec_fs)), path
    from datetime import timedelta
    if isinstance(fs, pafs.S3FileSystem):
        fs = pafs.S3FileSystem(region=fs.region, connect_timeout=seconds, request_timeout=seconds)
    elif scheme in ("gs", "gcs") and hasattr(pafs, "GcsFileSystem"):
        fs = pafs.GcsFileSystem(retry_time_limit=timedelta(seconds=seconds))
    return fs, path


def _remote_files(url: str) -> list:
    """A URL's Parquet files (``s3://``, ``gs://``, ``http(s)://``, …) as dataset fragments, each
    network step bounded by :func:`remote_timeout` (connect and request timeouts of the file system,
    and the whole discovery in a thread that is given up on)."""
    import pyarrow.dataset as pads
    import pyarrow.fs as pafs
    seconds = remote_timeout()

    def discover():
        fs, path = _remote_fs(url, seconds)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise InputError(f"{url}: no such file or folder (or the server could not be reached).")
        dataset = (hive_dataset(url, path, fs) if info.type == pafs.FileType.Directory else
                   pads.dataset(path, filesystem=fs, format="parquet", exclude_invalid_files=False))
        return sorted(dataset.get_fragments(), key=lambda f: f.path), dataset
    try:
        frags, dataset = _bounded(discover, url, seconds)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{url}: not a readable Parquet dataset ({type(exc).__name__}: {exc}).") from None
    if not frags:
        raise InputError(f"{url}: the folder holds no Parquet files.")
    return [(f.path, (dataset, f)) for f in frags]


def hive_dataset(label: str, root: str, fs=None):
    """A folder of Parquet files as a dataset, its ``key=value`` folder names read as columns
    (hive partitioning) — unless the files hold a column of that name too: then the column is read,
    and it must agree with the folder name (pyarrow would take the folder's value, which swapped
    models silently; a disagreement is an error naming both)."""
    import posixpath
    from urllib.parse import unquote

    import pyarrow.compute as pc
    import pyarrow.dataset as pads
    plain = pads.dataset(root, filesystem=fs, format="parquet", exclude_invalid_files=False)
    frags = list(plain.get_fragments())
    rels = [posixpath.relpath(f.path, root.replace(os.sep, "/")) if fs is not None else
            os.path.relpath(f.path, root).replace(os.sep, "/") for f in frags]
    keys_of = [dict(unquote(p).split("=", 1) for p in rel.split("/")[:-1] if "=" in p) for rel in rels]
    if not set().union(*keys_of) & set(plain.schema.names):  # no folder key is a column (the first file's
        # schema, which every part must share): the common case, read without opening every footer
        return pads.dataset([f.path for f in frags], filesystem=fs, format="parquet", partitioning="hive",
                            partition_base_dir=root, exclude_invalid_files=False)
    clash = False
    for frag, keys in zip(frags, keys_of):
        both = [k for k in keys if k in frag.physical_schema.names]
        if not both:
            continue
        clash = True
        table = frag.to_table(columns=both)
        for k in both:
            other = sorted({str(v) for v in pc.unique(table.column(k)).to_pylist() if v is not None} - {keys[k]})
            if other:
                raise InputError(f"{label}: the folder name '{k}={keys[k]}' and the column '{k}' inside {frag.path} "
                                 f"disagree (the column holds '{other[0]}'"
                                 f"{f' and {len(other) - 1} more' if len(other) > 1 else ''}); pyarrow would take "
                                 "the folder's value. Rename the folder key, or drop the column from the files.")
    if clash:  # the files carry the keys as columns, which agree with the folder names: read them
        return plain
    return pads.dataset([f.path for f in frags], filesystem=fs, format="parquet", partitioning="hive",
                        partition_base_dir=root, exclude_invalid_files=False)


def _unreadable(path, exc) -> InputError:
    """A part that could not be read: a remote one that stopped answering, or a damaged file."""
    if "timeout" in type(exc).__name__.lower() or isinstance(exc, TimeoutError):
        return InputError(f"{path}: the server stopped answering while the data was read (no answer within "
                          f"{remote_timeout():g} s). Check the network; BAYESERR_REMOTE_TIMEOUT=SECONDS waits longer.")
    return InputError(f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc}). Replace or remove that "
                      "part of the input.")


def _schema_names(files) -> list[str]:
    import pyarrow.parquet as pq
    path, frag = files[0]
    if frag is not None:
        return list(frag[0].schema.names)
    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{path}: not a readable Parquet file ({exc}).") from None


def _batches(path, frag, columns, row_groups=None):
    """Record batches of one file, or of its ``row_groups`` (a malformed file is
    an error naming it)."""
    import pyarrow.parquet as pq
    try:
        if frag is not None:
            dataset, fragment = frag
            yield from fragment.to_batches(schema=dataset.schema, columns=columns, batch_size=BATCH_ROWS)
            return
        pf = pq.ParquetFile(path)
        missing = [c for c in columns if c not in pf.schema_arrow.names]
        if missing:
            raise InputError(f"{path}: no column {', '.join(repr(c) for c in missing)} (the other parts of "
                             "the input have it). Every part of a dataset needs the same columns.")
        yield from pf.iter_batches(batch_size=BATCH_ROWS, columns=columns, row_groups=row_groups)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file: say which
        raise _unreadable(path, exc) from None


# ------------------------------------------------------------------ coding
class _Codes:
    """Text labels to integer codes, in order of first appearance (as the loader's)."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def encode(self, column) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        labels = [str(v) for v in column.dictionary.to_pylist()]
        lookup = np.array([self.index.setdefault(v, len(self.index)) for v in labels], dtype=np.int32)
        idx = column.indices.to_numpy(zero_copy_only=False)
        return lookup[idx] if len(lookup) else idx.astype(np.int32)

    @property
    def labels(self) -> list[str]:
        return list(self.index)


def _question_hash(column) -> np.ndarray:
    """A 64-bit hash of each question id (text-equal ids hash alike within a type)."""
    import pyarrow as pa
    if pa.types.is_integer(column.type):
        v = column.to_numpy(zero_copy_only=False).astype(np.uint64)
        with np.errstate(over="ignore"):
            v = (v + np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
            return v ^ (v >> np.uint64(31))
    import pandas as pd
    values = column.cast(pa.string()).to_numpy(zero_copy_only=False)
    return pd.util.hash_array(values.astype(object), categorize=True)


def check_batch(batch, cols, path, first_row: int | None = None) -> np.ndarray:
    """The loader's rules for one record batch of ``path`` (ids present, scores
    numbers in [0, 1]; the error names the file, and the data rows when the batch's
    ``first_row`` in its file is known); the scores as float64."""
    for key in ("model", "question", "cluster", "sample", "task"):
        name = getattr(cols, key)
        if name is not None and batch.column(name).null_count:
            column = batch.column(name)
            raise InputError(f"{path}: the {key} column '{name}' is empty in "
                             f"{_rows_where(column.is_null().to_numpy(zero_copy_only=False), first_row)}. "
                             f"Fill in the {key} for those rows or remove them.")
    for key in ("model", "task"):
        name = getattr(cols, key)
        if name is not None:
            _short_names(batch.column(name), key, name, path)
    return _scores(batch.column(cols.score), path, cols.score, first_row)


def _rows_where(mask, first_row: int | None) -> str:
    """``"2 row(s) among rows 1–1,048,576 (data rows 6, 78, counting from 1; reading stopped
    there)"``: the rows of one record batch where ``mask`` holds, numbered in their file as the
    memory engine numbers them (which reads the whole file first, and so counts them all); the
    count alone when the batch's place in its file is not known."""
    from bayeserr.base.errors import row_list
    positions = np.flatnonzero(mask)
    where = f"{len(positions)} row(s)"
    if first_row is None:
        return where
    return (f"{where} among rows {first_row + 1:,}–{first_row + len(mask):,} (data rows "
            f"{row_list(first_row + positions + 1)}, counting from 1; reading stopped there)")


def _short_names(column, key: str, name: str, path) -> None:
    """Model and task names no longer than the log readers allow (a 1 MB name is carried by
    every row and every partition: the dask engine's workers ran out of memory on one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from bayeserr.data.readers.values import MAX_TABLE_NAME_CHARS, long_name_error
    if pa.types.is_dictionary(column.type):
        column = column.dictionary
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return
    longest = pc.max(pc.utf8_length(column)).as_py() or 0
    if longest > MAX_TABLE_NAME_CHARS:
        raise long_name_error(path, key, name, longest)


def _scores(column, path, score_col, first_row: int | None = None) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc
    if column.null_count:
        raise InputError(f"{path}: the score column '{score_col}' is missing in "
                         f"{_rows_where(column.is_null().to_numpy(zero_copy_only=False), first_row)}. "
                         "Every answer needs a score in [0, 1]; fill them in or remove the rows.")
    t = column.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        try:
            column = pc.cast(column, pa.float64())
        except Exception:  # noqa: BLE001
            raise InputError(f"{path}: the score column '{score_col}' is not a number (type {t}). Scores "
                             "must be numbers in [0, 1] (for example 0, 1 or 0.75).") from None
    v = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    for bad, problem, fix in (
            (np.isnan(v), "is not a number", "Scores must be numbers in [0, 1]."),
            (np.isinf(v), "is infinite", "Scores must be finite numbers in [0, 1]."),
            ((v < 0) | (v > 1), "is outside [0, 1]",
             "Rescale scores to [0, 1] (for example divide percentages by 100).")):
        if bad.any():
            raise InputError(f"{path}: the score column '{score_col}' {problem} in "
                             f"{_rows_where(bad, first_row)}. {fix}")
    return v


# ------------------------------------------------------------------ the passes
def reduce_parquet(source, *, model_col=None, question_col=None, score_col=None, cluster_col=None,
                   sample_col=None, task_col=None, no_cluster: bool = False, tmp_dir=None,
                   partitions: int | None = None, progress: bool = True,
                   track_questions: bool = False) -> StreamResult:
    """The :class:`~bayeserr.stats.sufficient.Sufficient` statistics of a Parquet
    source in two passes (module docstring).  ``partitions``: the number of
    spill files (default: about :data:`ROWS_PER_PARTITION` rows each)."""
    # size: the column options of a results table and the engine's options
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from bayeserr.stats.sufficient import Sufficient, centre_of

    files, label = parquet_files(source)
    cols, wanted = source_columns(files, label, model_col=model_col, question_col=question_col,
                                  score_col=score_col, cluster_col=cluster_col, sample_col=sample_col,
                                  task_col=task_col, no_cluster=no_cluster)
    total = _count_rows(files)
    n_parts = partitions or max(1, math.ceil(total / ROWS_PER_PARTITION))
    show = Progress(progress)
    models, clusters = _Codes(), _Codes()
    sums, counts = np.zeros(0), np.zeros(0)
    sample_seen: set = set()
    read, binary = 0, True
    per_file = dict.fromkeys((p for p, _ in files), 0)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bayeserr_stream_", dir=tmp_dir) as tmp:
        writers: dict[int, object] = {}
        spill_schema = None
        for path, frag in files:
            for batch in _batches(path, frag, wanted):
                n = batch.num_rows
                if n == 0:
                    continue
                score = check_batch(batch, cols, path, first_row=per_file[path])
                binary = binary and bool(((score == 0) | (score == 1)).all())
                m = models.encode(batch.column(cols.model))
                if len(models.index) > len(sums):
                    grow = len(models.index) - len(sums)
                    sums, counts = np.r_[sums, np.zeros(grow)], np.r_[counts, np.zeros(grow)]
                sums += np.bincount(m, weights=score, minlength=len(sums))
                counts += np.bincount(m, minlength=len(counts))
                arrays = {"m": pa.array(m), "q": batch.column(cols.question)}
                if cols.cluster:
                    arrays["c"] = pa.array(clusters.encode(batch.column(cols.cluster)))
                if cols.sample:
                    arrays["k"] = batch.column(cols.sample)
                    if len(sample_seen) < 2:
                        sample_seen.update(str(v) for v in
                                           batch.column(cols.sample).unique().to_pylist()[:2])
                arrays["s"] = pa.array(score)
                arrays.update({k: pa.array(v) for k, v in count_columns(batch, cols, path).items()})
                table = pa.table(arrays)
                if spill_schema is None:
                    spill_schema = table.schema
                elif table.schema != spill_schema:
                    try:
                        table = table.cast(spill_schema)
                    except Exception:  # noqa: BLE001
                        raise InputError(f"{path}: its columns' types ({table.schema}) differ from those "
                                         f"of the first part ({spill_schema}).") from None
                part = (_question_hash(batch.column(cols.question)) % np.uint64(n_parts)).astype(np.int64)
                order = np.argsort(part, kind="stable")
                bounds = np.searchsorted(part[order], np.arange(n_parts + 1))
                table = table.take(pa.array(order))
                for p in range(n_parts):
                    lo, hi = bounds[p], bounds[p + 1]
                    if hi > lo:
                        if p not in writers:
                            writers[p] = ipc.new_file(os.path.join(tmp, f"part-{p:05d}.arrow"), spill_schema)
                        writers[p].write_table(table.slice(lo, hi - lo))
                read += n
                per_file[path] += n
                show(f"pass 1 (partition by question): {read:,} of {total:,} rows ({100 * read / max(total, 1):.0f}%)")
        for w in writers.values():
            w.close()
        t1 = time.perf_counter()
        if read == 0:
            raise InputError(f"{label}: no data rows. A results table needs one row per graded answer.")
        names = tuple(models.labels)
        centre = centre_of(sums / np.maximum(counts, 1))
        cluster_labels = None
        remap = None
        if cols.cluster:
            cluster_labels, remap = cluster_order(clusters.labels)
        units = needs_units(cluster_labels, binary, len(sample_seen) > 1)
        runs = keeps_runs(binary or bool(cols.n_samples and cols.n_correct), read, len(sample_seen) > 1)
        total_stats = Sufficient.empty(names, centre, cluster_labels, units, runs, bool(cols.n_samples and cols.n_correct))
        if track_questions:
            total_stats.questions = frozenset()
        done = 0
        for i, p in enumerate(sorted(writers)):
            spill = os.path.join(tmp, f"part-{p:05d}.arrow")
            with pa.memory_map(spill) as fh:
                table = ipc.open_file(fh).read_all()
            total_stats = total_stats + reduce_table(table, names, centre, cluster_labels, remap, label, cols,
                                                     track_questions, units, runs)
            done += table.num_rows
            del table
            os.remove(spill)
            show(f"pass 2 (reduce): partition {i + 1} of {len(writers)}, {done:,} of {read:,} rows")
        t2 = time.perf_counter()
    from bayeserr.data.dataset import check_min_questions
    check_min_questions(label, names, total_stats.n, cols.model)
    show(f"done: {read:,} rows in {t2 - t0:.0f} s", force=True)
    return StreamResult(total_stats, row_accounting(per_file), cols.to_dict(), label,
                        [p for p, _ in files], samples=len(sample_seen) > 1, tasks=cols.task is not None,
                        partitions=n_parts, seconds={"scan": t1 - t0, "reduce": t2 - t1})


def source_columns(files, label, **options):
    """The resolved columns (the loader's rules, ``model_col`` … ``no_cluster``)
    of a Parquet source's first file, and the column names to read."""
    import pandas as pd

    from bayeserr.data.dataset import resolve_columns
    if not files:
        raise InputError(f"{label}: no Parquet files to read.")
    cols = resolve_columns(pd.DataFrame(columns=_schema_names(files)), label, **options)
    wanted = [c for c in (cols.model, cols.question, cols.cluster, cols.sample, cols.task) if c]
    wanted.append(cols.score)
    if cols.n_samples and cols.n_correct:  # counts per problem: read as the memory engine reads them
        wanted += [cols.n_correct, cols.n_samples]
    return cols, wanted


def count_columns(batch, cols, path) -> dict:
    """The n_correct/n_samples columns of a batch as float64 (NaN where empty), checked as the
    loader checks them; ``{}`` when the data have none."""
    if not (cols.n_samples and cols.n_correct):
        return {}
    out = {}
    for key, name in (("nc", cols.n_correct), ("ns", cols.n_samples)):
        v = batch.column(name)
        try:
            out[key] = np.asarray(v.to_numpy(zero_copy_only=False), dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"{path}: the '{name}' column holds values that are not numbers.") from None
    with np.errstate(invalid="ignore"):
        if ((out["nc"] > out["ns"]) | (out["nc"] < 0)).any():
            raise InputError(f"{path}: n_correct is above n_samples or negative for some problems; fix the counts.")
    return out


def cluster_order(labels):
    """The report's cluster labels (sorted as text) and the map from codes in
    first-seen order to their sorted positions."""
    raw = np.array(labels, dtype=object)
    order = np.argsort(raw.astype(str), kind="stable")
    remap = np.empty(len(raw), np.int64)
    remap[order] = np.arange(len(raw))
    return tuple(raw[order]), remap


def _count_rows(files) -> int:
    import pyarrow.parquet as pq
    total = 0
    for path, frag in files:
        try:
            if frag is not None:
                total += frag[1].count_rows()
            else:
                total += pq.ParquetFile(path).metadata.num_rows
        except Exception as exc:  # noqa: BLE001
            raise _unreadable(path, exc) from None
    return total


def reduce_table(table, models, centre, clusters, remap, label: str, cols, track_questions: bool = False,
                 units: bool = True, runs: bool = False):
    """The :class:`~bayeserr.stats.sufficient.Sufficient` statistics of one
    partition: a table with columns ``m`` (model code), ``q`` (question id),
    optionally ``c`` (cluster code before ``remap``) and ``k`` (sample), and
    ``s`` (score), holding *every* row of its questions.  ``units``: keep the
    unit multiset (:func:`needs_units`); ``runs``: the run table (:func:`keeps_runs`)."""
    # size: a partition's table, its codes and labels, and the statistics' options
    import pandas as pd

    from bayeserr.stats.sufficient import Sufficient
    m = table.column("m").to_numpy().astype(np.int64)
    q_codes, q_labels = pd.factorize(table.column("q").to_numpy(zero_copy_only=False), sort=False)
    n_q = len(q_labels)
    if "k" in table.column_names:
        k_codes, k_labels = pd.factorize(table.column("k").to_numpy(zero_copy_only=False), sort=False)
        n_k = len(k_labels)
    else:
        k_codes, n_k = np.zeros(len(m), np.int64), 1
    s = table.column("s").to_numpy()
    flat = (m * n_q + q_codes) * n_k + k_codes
    cube = np.full(len(models) * n_q * n_k, np.nan)
    position = np.arange(len(flat), dtype=np.float64)
    cube[flat] = position
    if (cube[flat] != position).any():
        fields = f"({cols.model}, {cols.question}{', ' + cols.sample if cols.sample else ''})"
        fix = ("Give repeated answers distinct sample numbers with --sample-col, or remove the duplicates."
               if cols.sample is None else "Remove the duplicated rows.")
        raise InputError(f"{label}: duplicate {fields} rows. {fix}")
    cube[flat] = s
    codes = None
    if clusters is not None:
        c = remap[table.column("c").to_numpy().astype(np.int64)]
        codes = np.empty(n_q, np.int64)
        codes[q_codes] = c
        if (codes[q_codes] != c).any():
            raise InputError(f"{label}: a question is assigned to two different clusters ('{cols.cluster}'). "
                             "Each question must belong to exactly one cluster; fix the cluster column or "
                             "pass --no-cluster.")
    questions = (None if not track_questions else [str(v) for v in q_labels])
    columns = None
    if "ns" in table.column_names:  # the n_correct/n_samples grids (model × question), NaN where absent
        columns = tuple(np.full((len(models), n_q), np.nan) for _ in range(2))
        for grid, key in zip(columns, ("nc", "ns")):
            grid[m, q_codes] = table.column(key).to_numpy()
    return Sufficient.from_cube(models, cube.reshape(len(models), n_q, n_k), centre, codes, clusters, questions,
                                units, q_labels if runs else None, columns)


def keeps_runs(binary: bool, rows: int, samples: bool) -> bool:
    """Whether to keep the run table of pass@k and pass^k: 0/1 results whose (model, question) cells
    (at most the rows, half of them with repeated samples) fit :data:`~bayeserr.stats.bayes_sums.RUN_CELLS`."""
    from bayeserr.stats.bayes_sums import RUN_CELLS
    return binary and rows // (2 if samples else 1) <= RUN_CELLS


def row_accounting(per_file: dict) -> dict:
    """The row accounting of a source read whole (``per_file``: rows read from each file, in input
    order), as the loader gives it: with several files, each file's rows under ``inputs``."""
    read = int(sum(per_file.values()))
    rows = {"read": read, "used": read, "dropped": []}
    if len(per_file) > 1:
        rows["inputs"] = [{"input": path, "read": int(n), "used": int(n), "dropped": []}
                          for path, n in per_file.items()]
    return rows


def needs_units(clusters, binary: bool, samples: bool) -> bool:
    """Whether the Bayesian bootstrap over questions can be asked for, so the unit multiset must be
    kept (:mod:`bayeserr.stats.bayes_sums`): no clusters, and a score not 0/1 or repeated samples."""
    return clusters is None and (not binary or samples)
