"""What the default Bayesian columns cost (issue 23, item 2).

Prints, side by side, the CPU time (user + sys of a fresh child process, best
of 3) of ``bayeserr report FILE --format json`` with ``--bayes off`` and with
the default ``--bayes fast``, their ratio, and the wall times, for:

* EvalPerf (34 models, ``n_correct`` of 100 samples per task, 2 clusters: the
  three-level grid posterior of every model), target: fast ≤ 1.2 × off;
* a generated file of 1,000,000 rows (100 models × 10,000 questions, 0/1
  scores, 500 clusters; written by ``bench_scale.write_parquet``), target:
  the whole default report ≤ 1.3 × the floor, a fresh interpreter that
  imports pandas and reads the same file (printed too).

With ``--profile`` each file's default report is also run in this process
under cProfile (the three-level fits on one thread, as their CPU time is
counted) and the functions of the Bayesian columns are listed by cumulative
time.

Run::

    python benchmarks/bench_bayes_fast.py                 # both files, best of 3
    python benchmarks/bench_bayes_fast.py --profile       # and where the time goes
    python benchmarks/bench_bayes_fast.py --rows 1000000 --keep --dir /tmp/b

Needs ../shared for EvalPerf (skipped when absent).  CPU time, unlike wall
time, hardly depends on what else the machine runs; the load average is
printed with the figures.

Measured (2 cores, load average about 1.3; CPU s, best of 3, the code before
and after issue 23's item 2 side by side in one run):

=====================  ==========  ===========  ==========  ===========
file                   off before  fast before  off after   fast after
=====================  ==========  ===========  ==========  ===========
EvalPerf               0.96        13.05        0.96        4.40
1,000,000 rows         5.14        9.75         4.89        7.72
=====================  ==========  ===========  ==========  ===========

EvalPerf's Bayesian columns went from 12.1 s to 3.4 s (the three-level grid
posterior of 34 models: 0.08 s each, one thread); the 1M-row file's from
4.6 s to 2.8 s, of which the hierarchical column is 0.5 s and the pair
probabilities of ``models/paired_clustered.py`` about 1 s; the rest is BLAS
threads spinning (with ``OPENBLAS_NUM_THREADS=1``: off 3.72 s, fast 5.26 s).
The floor for that file is 0.50 s.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_cpu as cpu
from _timing import best_of

ROOT = Path(__file__).resolve().parents[1]
EVALPERF = ROOT.parent / "shared" / "data" / "real" / "evalperf_per_task.csv.gz"
EXE = [sys.executable, "-m", "bayeserr.cli"]


def wall(cmd: list[str], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` runs (``_timing.best_of``)."""
    return best_of(repeat, lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                  check=True))


def report_cmd(path: Path, *extra: str) -> list[str]:
    return EXE + ["report", str(path), "--format", "json", *extra]


def floor_cmd(path: Path) -> list[str]:
    read = "read_parquet" if path.suffix == ".parquet" else "read_csv"
    return [sys.executable, "-c", f"import pandas; pandas.{read}({str(path)!r})"]


def profile(path: Path, top: int = 25) -> str:
    """cProfile of the default report of ``path`` in this process: the functions of
    the Bayesian columns (models/, bayeserr/bayes/, the registry's methods) by
    cumulative time."""
    import functools

    from bayeserr.models import three_level

    import bayeserr
    from bayeserr.reporting import build_report

    ds = bayeserr.load(path)
    single = functools.partial(three_level.fit_many, workers=1)
    original, three_level.fit_many = three_level.fit_many, single
    try:
        prof = cProfile.Profile()
        prof.enable()
        build_report(ds)
        prof.disable()
    finally:
        three_level.fit_many = original
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("cumulative")
    stats.print_stats(r"(models/|bayeserr/bayes/|registries/methods)", top)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    return "\n".join(lines[start:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated file (100 models)")
    ap.add_argument("--clusters", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (the best is printed)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the generated file")
    ap.add_argument("--keep", action="store_true", help="keep (and reuse) the generated file")
    ap.add_argument("--profile", action="store_true", help="also profile each default report in process")
    args = ap.parse_args(argv)

    from bench_scale import machine, write_parquet

    tmp = None
    folder = args.dir
    if folder is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench_bayes_fast_")
        folder = Path(tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    models = 100
    questions = max(2, args.rows // models)
    big = folder / f"bayes_fast_{models}x{questions}_c{args.clusters}.parquet"
    try:
        if not (args.keep and big.exists()):
            write_parquet(big, models, questions, clusters=args.clusters)
        if args.keep:
            print(f"generated file kept: {big}")
        files = []
        if EVALPERF.exists():
            files.append((f"EvalPerf ({EVALPERF.name})", EVALPERF, 1.2, "off"))
        else:
            print(f"({EVALPERF} not found: the EvalPerf row is skipped)")
        files.append((f"{models * questions:,} rows, {models} models, {args.clusters} clusters", big, 1.3, "floor"))
        print(f"{machine()}, Python {sys.version.split()[0]}")
        print(f"CPU seconds (user + sys, best of {args.repeat}) of `bayeserr report FILE --format json`; "
              "wall seconds in brackets")
        head = f"  {'file':46s} {'--bayes off':>14s} {'--bayes fast':>14s} {'fast/off':>9s}  target"
        print(head)
        for name, path, target, against in files:
            c_off, c_fast = cpu(report_cmd(path, "--bayes", "off"), args.repeat), cpu(report_cmd(path), args.repeat)
            w_off, w_fast = wall(report_cmd(path, "--bayes", "off"), args.repeat), wall(report_cmd(path), args.repeat)
            line = (f"  {name:46s} {c_off:6.2f} [{w_off:5.2f}] {c_fast:6.2f} [{w_fast:5.2f}] "
                    f"{c_fast / c_off:8.2f}x")
            if against == "off":
                line += f"  fast <= {target}x off: {'met' if c_fast <= target * c_off else 'NOT met'}"
            else:
                c_floor = cpu(floor_cmd(path), args.repeat)
                line += (f"  fast <= {target}x floor ({c_floor:.2f} s: import pandas, read the file): "
                         f"{c_fast / c_floor:.2f}x, {'met' if c_fast <= target * c_floor else 'NOT met'}; "
                         f"Bayesian columns {c_fast - c_off:+.2f} s = {(c_fast - c_off) / c_off:+.0%} of off")
            print(line)
        if args.profile:
            for name, path, _, _ in files:
                print(f"\nprofile of the default report, {name} (in process, fits on one thread):")
                print(profile(path))
        return 0
    finally:
        if tmp is not None and not args.keep:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
