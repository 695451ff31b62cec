"""Issue 41's table, each figure a ratio measured in one run: ours against the floor or the peer.

Run: ``python benchmarks/bench_ratios.py`` (``--repeat 3`` runs each command three times and keeps
the best; ``--quick`` skips the 1M-row rows; needs ../shared for the real files).

CPU seconds are user + sys of the whole child process tree (``_timing.best_cpu``), so the two
cores of a machine count once each.  Rows:

* ``--version`` / ``--help`` / ``power`` against the stack floor (a fresh interpreter importing
  pandas): the start-up a command pays;
* the SWE-bench report (default options, JSON) against the *stack floor*: a fresh interpreter
  that imports what the design names (pandas, xarray, scipy.stats, statsmodels) and reads the
  file (issue 41's target: 1.3×);
* the Bayesian columns: each real file's default report against ``--bayes off`` (target 1.3×):
  EvalPerf, SWE-bench, AlpacaEval, LiveBench, and 1M rows (100 models × 10,000 questions, 500
  clusters, written here); and EvalPerf's ``--bayes full`` (its 34 three-level posteriors, which
  the default JSON report leaves out as no table shows them);
* 1M rows against the *read floor* (pandas reading the Parquet file; target 6×);
* the same report with ``--engine stream`` (the Bayesian columns from sums) against
  ``--engine memory``.

The peer (``errorbars``) is timed when it is on the PATH or named by ``$ERRORBARS``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _timing, run from anywhere
from _timing import best_cpu, compile_bytecode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "real"
FILES = {  # name: (file, report options)
    "EvalPerf": ("evalperf_per_task.csv.gz", []),
    "SWE-bench": ("swebench_verified_bashonly_per_instance.csv.gz", []),
    "AlpacaEval": ("alpacaeval2_per_instruction.csv.gz", ["--on-unpaired", "drop"]),
    "LiveBench": ("livebench_20250113_per_question.csv.gz", ["--on-unpaired", "drop"]),
}
STACK = "import pandas, xarray, scipy.stats, statsmodels.api; pandas.read_{kind}({path!r})"


def million_rows(folder: Path) -> Path:
    """100 models × 10,000 questions in 500 clusters of unequal difficulty, 0/1 scores, as Parquet."""
    rng = np.random.default_rng(0)
    models, questions, clusters = 100, 10_000, 500
    cl = rng.integers(0, clusters, questions)
    logit = np.log(p := rng.uniform(0.3, 0.8, models)) - np.log1p(-p)
    prob = 1 / (1 + np.exp(-(logit[:, None] + rng.normal(0, 0.5, clusters)[cl][None, :])))
    scores = (rng.random((models, questions)) < prob).astype(np.int8)
    path = folder / "million.parquet"
    pd.DataFrame({"model": np.repeat([f"m{j:03d}" for j in range(models)], questions),
                  "question_id": np.tile(np.arange(questions), models), "cluster_id": np.tile(cl, models),
                  "score": scores.ravel()}).to_parquet(path)
    return path


def ratio_rows(folder: Path, quick: bool):
    """``(label, ours, floor label, floor)`` commands."""
    exe = [sys.executable, "-m", "bayeserr.cli"]
    py = [sys.executable, "-c"]
    out = folder / "out.json"
    bare = py + ["import pandas"]
    rows = [(f"bayeserr {' '.join(a)}", exe + list(a), "python -c 'import pandas'", bare)
            for a in (("--version",), ("--help",), ("power", "--delta", "0.03", "--omega2", "0.111"))]
    for name, (file, opts) in FILES.items():
        src = REAL / file
        if not src.exists():
            print(f"({src} not found: skipped)")
            continue
        plain = folder / file.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(src.read_bytes()))
        report = exe + ["report", str(plain), "--format", "json", "-o", str(out), *opts]
        rows.append((f"{name} report (default)", report, "--bayes off", report + ["--bayes", "off"]))
        if name == "EvalPerf":  # the three-level posterior, which the default report leaves out unshown
            rows.append((f"{name} report --bayes full", report + ["--bayes", "full"], "--bayes off",
                         report + ["--bayes", "off"]))
        if name == "SWE-bench":
            rows.append((f"{name} report (default)", report, "stack floor: import the stack, read the file",
                         py + [STACK.format(kind="csv", path=str(plain))]))
            peer = shutil.which("errorbars") or os.environ.get("ERRORBARS")
            if peer:
                rows.append((f"{name} report (default)", report, "peer: errorbars leaderboard --json",
                             [peer, "leaderboard", str(plain), "--json", "--cluster-col", "cluster_id"]))
    if not quick:
        big = million_rows(folder)
        report = exe + ["report", str(big), "--format", "json", "-o", str(out), "--engine", "memory"]
        read = py + [f"import pandas; pandas.read_parquet({str(big)!r})"]
        rows += [("1M rows report (default)", report, "--bayes off", report + ["--bayes", "off"]),
                 ("1M rows report (default)", report, "read floor: pandas reads the file", read),
                 ("1M rows report --bayes off", report + ["--bayes", "off"], "read floor: pandas reads the file", read),
                 ("1M rows report --engine stream", report[:-2] + ["--engine", "stream"], "--engine memory", report)]
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2, help="runs of each command; the best is kept")
    ap.add_argument("--quick", action="store_true", help="skip the 1M-row rows")
    args = ap.parse_args(argv)
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="bayeserr_ratios_") as tmp:
        rows = ratio_rows(Path(tmp), args.quick)
        print(f"CPU seconds (user + sys of the process tree, best of {args.repeat}), {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.2f} at the start")
        print(f"  {'ours':>6} {'floor':>6} {'ratio':>6}  what")
        cache: dict = {}

        def cpu(cmd):  # each command measured once, however many rows name it
            if tuple(cmd) not in cache:
                cache[tuple(cmd)] = best_cpu(cmd, args.repeat)
            return cache[tuple(cmd)]

        for label, ours, floor_label, floor in rows:
            a, b = cpu(ours), cpu(floor)
            print(f"  {a:6.2f} {b:6.2f} {a / b:5.2f}x  {label} vs {floor_label}", flush=True)


if __name__ == "__main__":
    main()
