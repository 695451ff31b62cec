"""Scale: ``bayeserr report`` on a 100,000,000-row Parquet file (issue 12).

Done-criterion: 100M rows (Parquet, 100 models) either complete within
12 GiB peak memory or stop at once with the clear memory error.

Run::

    python benchmarks/bench_scale.py                       # 100 models x 1,000,000 questions
    python benchmarks/bench_scale.py --questions 100000    # 10M rows, a quick run
    python benchmarks/bench_scale.py --ids str --clusters 1000 --dir /data/tmp --keep
    python benchmarks/bench_scale.py --engine stream --clusters 1000 --limit-gib 2 --min-free 4
    python benchmarks/bench_scale.py --engine dask --workers 2 --worker-memory 4GiB --clusters 1000
    python benchmarks/bench_scale.py --engine dask --questions 2500000 --samples 4 --clusters 1000 --dir /tmp/big
    python benchmarks/bench_scale.py --engine dask --questions 100000 --clusters 1000 --compare-memory

Steps:

1. write the Parquet file with pyarrow, one row group per model (never the
   whole table in memory): ``model`` (dictionary-encoded text),
   ``question_id`` (int64, or short strings ``q0000001`` with ``--ids str``),
   ``score`` (0/1, int8) and, with ``--clusters C``, ``cluster_id``;
2. run ``bayeserr report FILE --format json -o out.json`` in a fresh process
   under ``/usr/bin/time -v`` (when present), sampling its resident memory
   every 0.2 s, and report wall time, peak RSS (``VmHWM``, ``ru_maxrss`` of
   the child) and whether it completed or refused with the memory error;
3. with ``--phases``, run load / report / JSON in one child process instead,
   resetting the peak between phases (``/proc/self/clear_refs``), to see
   which phase holds the peak.

Measured (2 cores, 23.5 GiB, load average about 2 from other jobs; the
loader of the time): int ids, no clusters: 62.6 s, peak RSS 7.32 GiB
(load 7.3 GiB, report 6.4 GiB), completed; string ids, 1,000 clusters:
227 s, peak 8.64 GiB (in loading), completed.  Under heavier contention
(load average 4.5) the same runs took 206 s and 769 s with the same peaks.

``--engine stream`` (issue 26; the report from sufficient statistics, two
passes over the file through spill files partitioned by question), 100 models
x 1,000,000 questions, int ids, 1,000 clusters, load average about 1.8: 38.3 s,
peak RSS 1.14 GiB, completed (target: 2 GiB and 1.5 x 62.6 s).

``--engine dask --workers 2 --worker-memory 4GiB`` (issue 26; a LocalCluster
of 2 worker processes: scan tasks, shuffle by question, reduce, tree sum),
1,000 clusters, 2 cores shared with other jobs: 100 models x 1,000,000
questions (100M rows), load average 2.4 at the start (up to 5.8 during):
160.8 s, 0.62M rows/s, worker peaks 1.08 / 1.06 GiB, client 0.67 GiB (an
earlier build, before the smaller shuffle types: 133.8 s); 100 models x
2,500,000 questions x 4 samples (1B rows, 5.13 GiB of Parquet written in
125 s; ``--questions 2500000 --samples 4``), load average 3.3 at the start
(the test suite ran beside it for its first 9 minutes): completed in 1,026 s
(17.1 min), 0.97M rows/s, worker peaks 1.54 / 1.45 GiB of the 4 GiB limit,
client 0.67 GiB, full headline report (100 models, 4,950 pairs).  With
``--compare-memory`` on 10M rows of the same generator (100 x 100,000, and
100 x 25,000 x 4 samples): every JSON number equal to ``--engine memory``'s to
1e-12.

With the Bayesian columns from sums (issue 42; the default ``--bayes fast``), 100 models x
1,000,000 questions, 1,000 clusters, load average 0.8: 51.8 s, peak 0.85 GiB; ``-- --bayes off``
48.5 s, 1.21 GiB (1.07x); no ``--engine`` (auto streams past 50M rows): 51.5 s, 1.20 GiB.

The machine's load and available memory at the start are printed with the
figures.  Nothing is run when the available memory is below ``--min-free``
GiB (a shared machine): use a smaller ``--questions``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

GiB = 1 << 30


def meminfo(key: str = "MemAvailable") -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine() -> str:
    load = " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"
    avail, total = meminfo(), meminfo("MemTotal")
    mem = f"{avail / GiB:.1f} of {total / GiB:.1f} GiB available" if avail and total else "memory: ?"
    return f"{os.cpu_count()} cores, load average {load}, {mem}"


# ------------------------------------------------------------------ the file
def write_parquet(path: Path, n_models: int, n_questions: int, *, ids: str = "int", clusters: int = 0,
                  seed: int = 0, samples: int = 1) -> float:
    """Binary results with question difficulty (and cluster effects), one row
    group per model (per model and sample with ``samples`` > 1: a ``sample``
    column); written group by group, never whole in memory; returns the seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, n_questions)
    fields = [pa.field("model", pa.dictionary(pa.int32(), pa.string())),
              pa.field("question_id", pa.int64() if ids == "int" else pa.string())]
    if ids == "int":
        qcol = pa.array(np.arange(n_questions, dtype=np.int64))
    else:
        width = len(str(n_questions - 1))
        qcol = pa.array([f"q{i:0{width}d}" for i in range(n_questions)], pa.string())
    ccol = None
    if clusters:
        code = rng.integers(0, clusters, n_questions)
        difficulty += rng.normal(0, 1, clusters)[code]
        width = len(str(clusters - 1))
        labels = pa.array([f"c{c:0{width}d}" for c in range(clusters)], pa.string())
        ccol = pa.DictionaryArray.from_arrays(pa.array(code.astype(np.int32)), labels)
        fields.append(pa.field("cluster_id", pa.dictionary(pa.int32(), pa.string())))
    if samples > 1:
        fields.append(pa.field("sample", pa.int8()))
    fields.append(pa.field("score", pa.int8()))
    schema = pa.schema(fields)
    width = len(str(n_models - 1))
    names = pa.array([f"model-{m:0{width}d}" for m in range(n_models)], pa.string())
    ability = rng.normal(0, 0.5, n_models)
    with pq.ParquetWriter(path, schema, compression="snappy") as writer:
        for m in range(n_models):
            p = 1 / (1 + np.exp(-(ability[m] - difficulty)))
            model = pa.DictionaryArray.from_arrays(pa.array(np.full(n_questions, m, np.int32)), names)
            for k in range(samples):
                score = (rng.random(n_questions) < p).astype(np.int8)
                cols = [model, qcol] + ([ccol] if ccol is not None else [])
                cols += ([pa.array(np.full(n_questions, k, np.int8))] if samples > 1 else []) + [pa.array(score)]
                writer.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=n_questions)
    return time.perf_counter() - t0


# ------------------------------------------------------------------ running
def _rss_sampler(pid: int, out: dict, stop: threading.Event, every: float = 0.2) -> None:
    """Peak VmRSS of ``pid`` and of its children, and the time it was reached."""
    t0 = time.perf_counter()
    while not stop.is_set():
        total = 0
        for p in [pid] + _children(pid):
            try:
                with open(f"/proc/{p}/status") as fh:
                    m = re.search(r"VmRSS:\s+(\d+)", fh.read())
                total += int(m.group(1)) * 1024 if m else 0
            except OSError:
                continue
            per = out.setdefault("per_pid", {})
            if p not in per:
                try:
                    with open(f"/proc/{p}/cmdline") as fh:  # dask's worker processes are spawned
                        out.setdefault("spawned", set()).update([p] if "spawn_main" in fh.read() else [])
                except OSError:
                    pass
            per[p] = max(per.get(p, 0), int(m.group(1)) * 1024 if m else 0)
        if total > out.get("peak", 0):
            out["peak"], out["at"] = total, time.perf_counter() - t0
        out.setdefault("trace", []).append((round(time.perf_counter() - t0, 1), total))
        stop.wait(every)


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):  # children of every thread (dask spawns from its loop's)
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids += [int(x) for x in fh.read().split()]
    except OSError:
        return kids
    return kids + [g for k in kids for g in _children(k)]


def run_report(path: Path, out: Path, extra=()) -> dict:
    """``bayeserr report FILE --format json -o OUT`` in a fresh process."""
    cmd = [sys.executable, "-m", "bayeserr.cli", "report", str(path), "--format", "json", "-o", str(out),
           *extra]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if timer:
        cmd = [timer, "-v", *cmd]
    sampled: dict = {}
    stop = threading.Event()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = threading.Thread(target=_rss_sampler, args=(proc.pid, sampled, stop), daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kB on Linux
    peak_time = None
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    if m:
        peak_time = int(m.group(1)) * 1024
        stderr = stderr[:stderr.find("\tCommand being timed")].rstrip()
    error = next((line for line in stderr.splitlines() if line.startswith("error:")), None)
    return {"returncode": proc.returncode, "wall": wall, "peak_rss": peak_time or maxrss,
            "ru_maxrss": maxrss if maxrss > before * 1024 else None, "sampled_peak": sampled.get("peak"),
            "sampled_peak_at": sampled.get("at"), "error": error, "stderr": stderr[-2000:],
            "worker_peaks": [v for k, v in sampled.get("per_pid", {}).items() if k in sampled.get("spawned", ())],
            "main_peak": max((v for k, v in sampled.get("per_pid", {}).items()
                              if k not in sampled.get("spawned", ())), default=0),
            "trace": sampled.get("trace", [])}


PHASES = r"""
import json, sys, time
def hwm():
    return int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]) * 1024
def rss():
    return int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1]) * 1024
def reset():
    try:
        open('/proc/self/clear_refs', 'w').write('5')
    except OSError:
        pass
out = []
t = time.perf_counter()
import bayeserr
from bayeserr.reporting import build_report
reset(); t = time.perf_counter()
ds = bayeserr.load(sys.argv[1])
out.append(('load', time.perf_counter() - t, hwm(), rss())); reset(); t = time.perf_counter()
rep = build_report(ds)
out.append(('report', time.perf_counter() - t, hwm(), rss())); reset(); t = time.perf_counter()
text = rep.to_json()
out.append(('json', time.perf_counter() - t, hwm(), rss()))
print(json.dumps(out))
"""


def run_phases(path: Path) -> list:
    res = subprocess.run([sys.executable, "-c", PHASES, str(path)], capture_output=True, text=True)
    if res.returncode:
        print(res.stderr[-2000:])
        return []
    return json.loads(res.stdout.strip().splitlines()[-1])


def _bytes(text: str) -> int:
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)(i?)B?\s*", text, re.I)
    if not m:
        return int(float(text))
    base = 1024 if m.group(3) else 1000
    return int(float(m.group(1)) * base ** " KMGT".index(m.group(2).upper() or " "))


def _flat(doc, path="", out=None) -> dict:
    """A JSON document as {path: leaf value} (provenance aside)."""
    out = {} if out is None else out
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else None
    if items is None:
        out[path] = doc
        return out
    for key, value in items:
        if key != "provenance":
            _flat(value, f"{path}/{key}", out)
    return out


def _differences(a, b) -> list:
    """The leaves of two reports that differ (numbers: by more than 1e-12 relative)."""
    import math
    fa, fb = _flat(a), _flat(b)
    out = [(k,) for k in set(fa) ^ set(fb)]
    for k in set(fa) & set(fb):
        x, y = fa[k], fb[k]
        if isinstance(x, float) or isinstance(y, float):
            if x is None or y is None or not math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15):
                out.append((k, x, y))
        elif x != y:
            out.append((k, x, y))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--questions", type=int, default=1_000_000, help="questions per model (rows = models x questions)")
    ap.add_argument("--ids", choices=("int", "str"), default="int", help="question ids: integers or short strings")
    ap.add_argument("--clusters", type=int, default=0, help="number of clusters (0: no cluster column)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the file (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the Parquet file and the report")
    ap.add_argument("--reuse", action="store_true", help="reuse an existing file of the same name in --dir")
    ap.add_argument("--limit-gib", type=float, default=12.0, help="the peak the done-criterion allows")
    ap.add_argument("--min-free", type=float, default=14.0,
                    help="GiB of available memory needed to start (the run may use up to --limit-gib)")
    ap.add_argument("--phases", action="store_true", help="also measure load / report / JSON peaks separately")
    ap.add_argument("--trace", action="store_true", help="print the sampled RSS trace")
    ap.add_argument("--engine", choices=("memory", "stream", "dask"), default="memory",
                    help="bayeserr report --engine (stream: bounded memory, the report from sufficient statistics; "
                         "dask: the same on a LocalCluster)")
    ap.add_argument("--samples", type=int, default=1, help="samples per model and question (a sample column)")
    ap.add_argument("--workers", type=int, default=2, help="--engine dask: local worker processes")
    ap.add_argument("--worker-memory", default="4GiB", help="--engine dask: each worker's memory limit")
    ap.add_argument("--compare-memory", action="store_true",
                    help="also run --engine memory on the file and check every JSON number is equal to 1e-12")
    ap.add_argument("report_args", nargs="*", help="extra arguments for bayeserr report (after --)")
    args = ap.parse_args(argv)

    rows = args.models * args.questions * args.samples
    print(f"machine: {machine()}, Python {sys.version.split()[0]}")
    tmp = None
    folder = args.dir
    if folder is None and args.keep:
        folder = Path(tempfile.mkdtemp(prefix="bench_scale_"))
        print(f"keeping the files in {folder}")
    elif folder is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench_scale_")
        folder = Path(tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"scale_{args.models}x{args.questions}x{args.samples}_{args.ids}_c{args.clusters}.parquet"
    path, out = folder / name, folder / (name + ".report.json")
    try:
        if args.reuse and path.exists():
            print(f"file: {path} (reused, {path.stat().st_size / GiB:.2f} GiB)")
        else:
            t_gen = write_parquet(path, args.models, args.questions, ids=args.ids, clusters=args.clusters,
                                  samples=args.samples)
            print(f"file: {path}: {rows:,} rows ({args.models} models x {args.questions:,} questions x "
                  f"{args.samples} sample(s), "
                  f"{args.ids} ids, {args.clusters or 'no'} clusters), {path.stat().st_size / GiB:.2f} GiB, "
                  f"written in {t_gen:.1f} s")
        avail = meminfo()
        if avail is not None and avail < args.min_free * GiB:
            print(f"not run: only {avail / GiB:.1f} GiB available (need {args.min_free:g}); "
                  "try a smaller --questions")
            return 3
        print(f"at start: {machine()}")
        extra = list(args.report_args) + (["--engine", args.engine] if args.engine != "memory" else [])
        if args.engine == "dask":
            extra += ["--workers", str(args.workers), "--worker-memory", args.worker_memory]
        res = run_report(path, out, extra)
        peak = res["peak_rss"]
        if res["returncode"] == 0:
            outcome = "completed"
            size = out.stat().st_size if out.exists() else 0
            outcome += f" (report {size / 2**20:.1f} MiB)"
        elif res["error"] and ("memory" in res["error"] or "would need" in res["error"]):
            outcome = f"refused with the memory error: {res['error']}"
        else:
            outcome = f"FAILED (exit {res['returncode']}): {res['error'] or res['stderr'][-500:]}"
        print(f"bayeserr report {rows:,} rows --engine {args.engine} --format json: wall {res['wall']:.1f} s, "
              f"peak RSS {peak / GiB:.2f} GiB (sampled peak {(res['sampled_peak'] or 0) / GiB:.2f} GiB "
              f"at {res['sampled_peak_at'] or 0:.0f} s) -> {outcome}")
        if args.engine == "dask":
            limit = _bytes(args.worker_memory)
            peaks = res["worker_peaks"]
            print(f"  {rows / res['wall']:,.0f} rows/s; worker peaks (sampled VmRSS): "
                  f"{', '.join(f'{w / GiB:.2f}' for w in sorted(peaks, reverse=True)[:8]) or '?'} GiB "
                  f"(limit {limit / GiB:.2f} GiB each: {'all under' if peaks and max(peaks) < limit else 'NOT all under'})"
                  f"; client process {res['main_peak'] / GiB:.2f} GiB")
            peak = res["main_peak"]
        if args.compare_memory and res["returncode"] == 0:
            ref = folder / (name + ".memory.json")
            mres = run_report(path, ref, list(args.report_args))
            diffs = _differences(json.loads(ref.read_text()), json.loads(out.read_text()))
            print(f"  --engine memory: wall {mres['wall']:.1f} s, peak {mres['peak_rss'] / GiB:.2f} GiB; "
                  f"every JSON number equal to 1e-12 with --engine {args.engine}: "
                  f"{'yes' if not diffs else f'NO ({len(diffs)} differ, e.g. {diffs[:3]})'}")
        ok = peak <= args.limit_gib * GiB and (res["returncode"] == 0 or outcome.startswith("refused"))
        quick = outcome.startswith("refused") and res["wall"] < 60
        print(f"done-criterion ({args.limit_gib:g} GiB peak, or an immediate clear memory error): "
              f"{'met' if ok and (res['returncode'] == 0 or quick) else 'NOT met'}")
        if args.trace:
            for t, r in res["trace"][::5]:
                print(f"  {t:7.1f} s  {r / GiB:6.2f} GiB")
        if args.phases:
            for phase, secs, hwm, rss in run_phases(path):
                print(f"  phase {phase:7s} {secs:7.1f} s  peak {hwm / GiB:6.2f} GiB  after {rss / GiB:6.2f} GiB")
        return 0 if ok else 1
    finally:
        if tmp is not None and not args.keep:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
