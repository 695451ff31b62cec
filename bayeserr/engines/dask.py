"""``--engine dask``: the sufficient statistics of Parquet results on a
dask.distributed cluster (``docs/guide/scale.md``).

The same contract as :mod:`bayeserr.engines.stream` (scan, reduce by question,
combine with ``+``), the work spread over the workers of a cluster:

1. **Scan** (one task per input part: a file, a hive fragment, or a run of a
   large file's row groups): :func:`bayeserr.engines.stream.check_batch` on
   every record batch (the loader's rules, the error naming the file), the
   part's models in first-seen order with their sums and counts, its cluster
   labels, the sample labels seen and whether every score is 0 or 1.  The
   client combines these small summaries in input order: the models (in the
   order the stream engine gives), the clusters, the centres.
2. **Shuffle** by question: each part is read again, coded (model and cluster
   codes from step 1) and ``dask.dataframe.shuffle(on="q")`` (peer-to-peer
   where available) moves every row of a question to one output partition —
   the rows never pass through the client.
3. **Reduce**: :func:`bayeserr.engines.stream.reduce_table` on each output
   partition → :class:`~bayeserr.stats.sufficient.Sufficient`, summed in a
   tree on the workers as the partitions finish; the client receives one
   :class:`~bayeserr.stats.sufficient.Sufficient`.

A worker that dies is replaced and its tasks rerun (dask's retries); the
numbers do not depend on which worker computed what.  Nothing here is
imported by ``import bayeserr``; dask and distributed come with
``pip install 'bayeserr[dask]'``.
"""

from __future__ import annotations

import math
import os
import time
import uuid

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.engines.stream import (
    ROWS_PER_PARTITION,
    Progress,
    StreamResult,
    _batches,
    _Codes,
    check_batch,
    cluster_order,
    count_columns,
    keeps_runs,
    needs_units,
    parquet_files,
    row_accounting,
    source_columns,
)

#: rows per input part (a run of a file's row groups)
ROWS_PER_INPUT = 4_000_000
INSTALL = "pip install 'bayeserr[dask]'"


def _require():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise InputError(f"--engine dask needs dask and distributed ({exc.name} is not installed): "
                         f"{INSTALL}") from None


# ------------------------------------------------------------------ inputs
def input_parts(files) -> list[tuple]:
    """``(path, fragment, row_groups, first_row)`` parts of about :data:`ROWS_PER_INPUT`
    rows: a hive fragment whole, a plain file split at row-group boundaries;
    ``first_row``: the part's first row in its file (0-based; errors name data rows)."""
    import pyarrow.parquet as pq
    parts = []
    for path, frag in files:
        if frag is not None:
            parts.append((path, frag, None, 0))
            continue
        try:
            meta = pq.ParquetFile(path).metadata
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc}). Replace or "
                             "remove that part of the input.") from None
        run, rows, start = [], 0, 0
        for g in range(meta.num_row_groups):
            run.append(g)
            rows += meta.row_group(g).num_rows
            if rows >= ROWS_PER_INPUT:
                parts.append((path, None, run, start))
                run, start, rows = [], start + rows, 0
        if run or not parts or parts[-1][0] != path:
            parts.append((path, None, run or None, start))
    return parts


def _part_batches(part, wanted):
    """``(path, batch, first_row)``: the part's record batches and where each starts in its file."""
    path, frag, groups, first = part
    for batch in _batches(path, frag, wanted, row_groups=groups):
        if batch.num_rows:
            yield path, batch, first
            first += batch.num_rows


# ------------------------------------------------------------------ pass 1
def scan_part(part, cols, wanted) -> dict:
    """One part's summary: models (first-seen order) with sums and counts,
    cluster labels, up to two sample labels, rows, all scores 0/1."""
    models, clusters = _Codes(), _Codes()
    sums, counts = np.zeros(0), np.zeros(0)
    samples: set = set()
    rows, binary, ranges = 0, True, {}
    for path, batch, first_row in _part_batches(part, wanted):
        score = check_batch(batch, cols, path, first_row)
        m = models.encode(batch.column(cols.model))
        size = len(models.index)
        sums = np.r_[sums, np.zeros(size - len(sums))] + np.bincount(m, weights=score, minlength=size)
        counts = np.r_[counts, np.zeros(size - len(counts))] + np.bincount(m, minlength=size)
        if cols.cluster:
            clusters.encode(batch.column(cols.cluster))
        if cols.sample and len(samples) < 2:
            samples.update(str(v) for v in batch.column(cols.sample).unique().to_pylist()[:2])
        binary = binary and bool(((score == 0) | (score == 1)).all())
        rows += batch.num_rows
        for key, name in (("q", cols.question), ("k", cols.sample)):
            ranges[key] = _range(batch.column(name), ranges.get(key, (0, 0))) if name else None
    return {"models": models.labels, "sums": sums, "counts": counts, "clusters": clusters.labels,
            "samples": samples, "rows": rows, "binary": binary, "ranges": ranges}


def _range(column, seen):
    """The (min, max) of an integer column with ``seen``; None for other types."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if seen is None:
        return None
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if not pa.types.is_integer(column.type):
        return None
    mm = pc.min_max(column).as_py()
    return (min(seen[0], mm["min"]), max(seen[1], mm["max"]))


def _int_type(low, high):
    """The smallest signed integer dtype holding [low, high]."""
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= low and high <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


def combine_scans(scans) -> dict:
    """The parts' summaries in input order → the source's models (first-seen
    order, as the stream engine), sums, counts, clusters (first-seen), samples."""
    index: dict[str, int] = {}
    cl: dict[str, None] = {}
    sums, counts = [], []
    samples: set = set()
    rows, binary, ranges = 0, True, {}
    for s in scans:
        for name, x, n in zip(s["models"], s["sums"], s["counts"]):
            j = index.setdefault(name, len(index))
            if j == len(sums):
                sums.append(0.0)
                counts.append(0.0)
            sums[j] += x
            counts[j] += n
        cl.update(dict.fromkeys(s["clusters"]))
        samples |= s["samples"]
        rows += s["rows"]
        binary = binary and s["binary"]
        for key, r in s["ranges"].items():
            have = ranges.get(key, r)
            ranges[key] = None if r is None or have is None else (min(have[0], r[0]), max(have[1], r[1]))
    dtypes = {key: (_int_type(*r) if r is not None else np.dtype(object)) for key, r in ranges.items()}
    return {"models": list(index), "sums": np.array(sums), "counts": np.array(counts),
            "clusters": list(cl), "samples": samples, "rows": rows, "binary": binary, "dtypes": dtypes}


# ------------------------------------------------------------------ pass 2
def read_coded(part, cols, wanted, models, clusters, binary, dtypes):
    """One part as a pandas frame of codes (the smallest integer types, to
    shuffle fewer bytes): ``m`` (model code), ``q`` (question id: integers, or
    text), ``c`` (cluster position in the report's order), ``k`` (sample),
    ``s`` (score; int8 when every score is 0/1)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    model_index = pd.Index(models)
    cluster_index = pd.Index(clusters) if clusters is not None else None
    frames = []
    for path, batch, first_row in _part_batches(part, wanted):
        score = check_batch(batch, cols, path, first_row)
        frame = {"m": model_index.get_indexer(_text(batch.column(cols.model))).astype(dtypes["m"])}
        for key, name in (("q", cols.question), ("k", cols.sample)):
            if name is None:
                continue
            v = batch.column(name)
            if pa.types.is_dictionary(v.type):
                v = v.cast(v.type.value_type)
            frame[key] = v.to_numpy(zero_copy_only=False).astype(dtypes[key]) if dtypes[key] != object else \
                pc.cast(v, pa.string()).to_numpy(zero_copy_only=False).astype(object)
        if cluster_index is not None:
            frame["c"] = cluster_index.get_indexer(_text(batch.column(cols.cluster))).astype(dtypes["c"])
        frame["s"] = score.astype(np.int8) if binary else score
        frame.update(count_columns(batch, cols, path))
        frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True) if frames else None


def _text(column) -> np.ndarray:
    """A column's values as text labels (as :class:`~bayeserr.engines.stream._Codes` names them)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column.to_numpy(zero_copy_only=False).astype(object)
    encoded = pc.dictionary_encode(column)
    labels = np.array([str(v) for v in encoded.dictionary.to_pylist()], dtype=object)
    return labels[encoded.indices.to_numpy(zero_copy_only=False)]


def reduce_frame(frame, models, centre, clusters, label, cols, units: bool = True, runs: bool = False):
    """:func:`~bayeserr.engines.stream.reduce_table` of one shuffled partition (a
    pandas frame holding every row of its questions); ``units``, ``runs``: keep the unit
    multiset, the run table."""
    import pyarrow as pa

    from bayeserr.engines.stream import reduce_table
    from bayeserr.stats.sufficient import Sufficient
    if frame is None or len(frame) == 0:
        return Sufficient.empty(tuple(models), centre, clusters, units, runs, bool(cols.n_samples and cols.n_correct))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if "s" in table.column_names and not pa.types.is_floating(table.schema.field("s").type):
        table = table.set_column(table.column_names.index("s"), "s", table.column("s").cast(pa.float64()))
    remap = np.arange(len(clusters)) if clusters is not None else None
    return reduce_table(table, tuple(models), centre, clusters, remap, label, cols, units=units, runs=runs)


def _add(a, b):
    return a + b


# ------------------------------------------------------------------ cluster
class _Cluster:
    """A client on ``scheduler`` (an address), or on a LocalCluster of
    ``workers`` processes with ``worker_memory`` each, closed at the end."""

    def __init__(self, scheduler=None, workers=None, worker_memory="4GiB", tmp_dir=None, timeout="10s"):
        self.scheduler, self.workers, self.memory, self.tmp = scheduler, workers, worker_memory, tmp_dir
        self.timeout = timeout
        self.cluster = self.client = self.scratch = self.config = None

    def __enter__(self):
        import logging

        from distributed import Client, LocalCluster
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            self.client = self.scheduler  # a Client given from Python: used, not closed
            self.owned = False
            return self.client
        self.owned = True
        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout=self.timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"--scheduler {self.scheduler}: no dask scheduler answers there "
                                 f"({type(exc).__name__}: {exc}). Start one (dask scheduler) or drop "
                                 "--scheduler to run a local cluster.") from None
            return self.client
        import tempfile
        n = self.workers or max(1, min(4, os.cpu_count() or 1))
        # the workers' scratch folder is ours, removed at the end (lock files included, even after
        # an interrupt); the workers ignore SIGINT, so Ctrl-C (sent to the whole process group)
        # stops this process, which closes them, instead of printing each worker's traceback
        self.scratch = tempfile.mkdtemp(prefix="bayeserr-dask-", dir=self.tmp)
        import dask
        # dask's own scratch space (its purge and global lock files) inside ours too, removed at the end
        self.config = dask.config.set({"temporary-directory": self.scratch})
        try:
            with _workers_ignore_interrupts():
                try:
                    self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                memory_limit=self.memory, dashboard_address=":0",
                                                silence_logs=logging.CRITICAL, local_directory=self.scratch)
                except ValueError as exc:
                    raise InputError(f"--workers {n} --worker-memory {self.memory}: {exc}") from None
            self.client = Client(self.cluster)
        except BaseException:  # a SIGTERM deferred during the start acts here: close what started
            self.__exit__()
            raise
        return self.client

    def __exit__(self, *exc):
        if not self.owned:
            return
        import contextlib
        import shutil
        with contextlib.suppress(Exception):  # closing after an interrupt: no second traceback
            if self.client is not None:
                self.client.close()
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close()
        if getattr(self, "config", None) is not None:
            self.config.__exit__(None, None, None)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


class _workers_ignore_interrupts:
    """While the local workers start: SIGINT ignored (they inherit it, so Ctrl-C to the process
    group reaches only bayeserr; one arriving in these ~1.5 s is lost), and SIGTERM deferred (a
    cluster half started cannot be closed cleanly: it acts once the start is over)."""

    def __enter__(self):
        import signal
        import threading
        self.old = self.old_term = None
        self.term: list = []
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            self.old_term = signal.signal(signal.SIGTERM, lambda signum, frame: self.term.append(signum))

    def __exit__(self, *exc):
        import signal
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        if self.old_term is not None:
            signal.signal(signal.SIGTERM, self.old_term)
            if self.term:
                signal.raise_signal(signal.SIGTERM)  # through bayeserr's own handler, now the start is over


def _gather_all(client, futures, show, what):
    """Results of ``futures`` in order, with progress lines (a task's error raised as it is)."""
    from distributed import as_completed
    for i, fut in enumerate(as_completed(futures), 1):
        if fut.status == "error":
            fut.result()
        show(f"{what}: {i} of {len(futures)} parts")
    return client.gather(futures)


def reduce_dask(source, *, model_col=None, question_col=None, score_col=None, cluster_col=None,
                sample_col=None, task_col=None, no_cluster: bool = False, scheduler=None, workers=None,
                worker_memory="4GiB", partitions: int | None = None, tmp_dir=None,
                progress: bool = True, shuffle_method: str | None = None,
                connect_timeout: str = "10s") -> StreamResult:
    """The :class:`~bayeserr.stats.sufficient.Sufficient` statistics of a
    Parquet source on a dask.distributed cluster (module docstring).
    ``scheduler``: an address (``tcp://host:8786``) or a ``distributed.Client``;
    without it a LocalCluster of ``workers`` processes × ``worker_memory``
    is started and closed.  ``partitions``: the shuffle's output partitions
    (default: about :data:`~bayeserr.engines.stream.ROWS_PER_PARTITION` rows each)."""
    # size: the column options of a results table and the cluster's options
    _require()
    import dask
    import dask.dataframe as dd
    import pandas as pd
    from distributed import as_completed

    from bayeserr.stats.sufficient import Sufficient, centre_of

    files, label = parquet_files(source)
    cols, wanted = source_columns(files, label, model_col=model_col, question_col=question_col,
                                  score_col=score_col, cluster_col=cluster_col, sample_col=sample_col,
                                  task_col=task_col, no_cluster=no_cluster)
    parts = input_parts(files)
    show = Progress(progress, name="dask")
    t0 = time.perf_counter()
    run = uuid.uuid4().hex[:12]  # task keys unique to this run (results of another run never reused)
    with _Cluster(scheduler, workers, worker_memory, tmp_dir, connect_timeout) as client:
        # pass 1: scan every part on the workers, combine the small summaries here
        scan_futures = [client.submit(scan_part, p, cols, wanted, key=f"bayeserr-scan-{run}-{i}", pure=False)
                        for i, p in enumerate(parts)]
        try:
            scans = _gather_all(client, scan_futures, show, "pass 1 (scan)")
            scan = combine_scans(scans)
        except BaseException:
            client.cancel(scan_futures)
            raise
        del scan_futures
        if scan["rows"] == 0:
            raise InputError(f"{label}: no data rows. A results table needs one row per graded answer.")
        names = tuple(scan["models"])
        centre = centre_of(scan["sums"] / np.maximum(scan["counts"], 1))
        cluster_labels = cluster_order(scan["clusters"])[0] if cols.cluster else None
        t1 = time.perf_counter()
        show(f"pass 1 done: {scan['rows']:,} rows, {len(names)} models", force=True)

        # pass 2: read again as codes, shuffle by question, reduce each partition, add in a tree
        dtypes = dict(scan["dtypes"], m=_int_type(0, len(names)),
                      c=_int_type(0, len(cluster_labels) if cluster_labels else 0))
        counted = ["nc", "ns"] if cols.n_samples and cols.n_correct else []
        meta = pd.DataFrame({k: pd.Series([], dtype=dtypes[k] if k not in ("s", "nc", "ns") else
                                          (np.int8 if scan["binary"] and k == "s" else np.float64))
                             for k in ["m", "q"] + ["c"] * bool(cols.cluster) + ["k"] * bool(cols.sample) + ["s"]
                             + counted})
        frame = dd.from_map(read_coded, parts, args=(cols, wanted, list(names),
                                                     list(cluster_labels) if cluster_labels else None,
                                                     scan["binary"], dtypes),
                            meta=meta, enforce_metadata=False, label="bayeserr-read")
        n_out = partitions or max(1, math.ceil(scan["rows"] / ROWS_PER_PARTITION))
        method = shuffle_method or dask.config.get("dataframe.shuffle.method", None) or "p2p"
        shuffled = frame.shuffle(on="q", npartitions=n_out, shuffle_method=method)
        pieces = shuffled.to_delayed()
        reduce = dask.delayed(reduce_frame, pure=True)
        units = needs_units(cluster_labels, scan["binary"], len(scan["samples"]) > 1)
        runs = keeps_runs(scan["binary"] or bool(cols.n_samples and cols.n_correct), scan["rows"],
                          len(scan["samples"]) > 1)
        tasks = [reduce(p, names, centre, cluster_labels, label, cols, units, runs,
                        dask_key_name=f"bayeserr-reduce-{run}-{i}") for i, p in enumerate(pieces)]
        futures = client.compute(tasks)
        total = Sufficient.empty(names, centre, cluster_labels, units, runs, bool(counted))
        queue = as_completed(futures)
        waiting, finished, merged = None, 0, 0
        for fut in queue:
            if fut.status == "error":
                try:
                    fut.result()  # raises the task's error (an InputError naming the file or the rows)
                finally:
                    client.cancel(futures)  # on a shared cluster, stop the rest of this run
            if str(fut.key).startswith("bayeserr-reduce"):
                finished += 1
                show(f"pass 2 (shuffle by question and reduce): {finished} of {len(futures)} partitions")
            if waiting is None:
                waiting = fut
            else:
                merged += 1
                queue.add(client.submit(_add, waiting, fut, key=f"bayeserr-add-{run}-{merged}", pure=False))
                waiting = None
        total = total + waiting.result()
        t2 = time.perf_counter()
    from bayeserr.data.dataset import check_min_questions
    check_min_questions(label, names, total.n, cols.model)
    show(f"done: {scan['rows']:,} rows in {t2 - t0:.0f} s", force=True)
    per_file = dict.fromkeys((p for p, _ in files), 0)
    for part, s in zip(parts, scans):
        per_file[part[0]] += s["rows"]
    return StreamResult(total, row_accounting(per_file), cols.to_dict(),
                        label, [p for p, _ in files], samples=len(scan["samples"]) > 1,
                        tasks=cols.task is not None, partitions=n_out,
                        seconds={"scan": t1 - t0, "reduce": t2 - t1})
