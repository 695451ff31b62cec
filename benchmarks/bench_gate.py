"""Speed of the release gate (issue 25, part 2).  Run: ``python benchmarks/bench_gate.py``.

The command end to end on the bundled example (one candidate), the gate on
SWE-bench Verified with 23 candidates against one baseline (BM df 3.3: every
pair also runs the wild cluster bootstrap at the margin, and the Bayesian cluster
model), and the vectorized decision of the size simulation (1,000 replicates at
SWE-bench's cluster sizes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bayeserr
from bayeserr.analyses.gate import decide, gate
from bayeserr.examples import example_path
from bayeserr.stats.fewclusters import cluster_totals, cr2_mean

SWE = (Path(__file__).resolve().parents[2] / "shared" / "data" / "real"
       / "swebench_verified_bashonly_per_instance.csv.gz")
SIZES = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1])


def main():
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    exe = Path(sys.executable).parent / "bayeserr"
    t = time.perf_counter()
    subprocess.run([str(exe), "gate", str(example_path()), "--candidate", "ckpt-0426", "--baseline",
                    "ckpt-0419", "--margin", "0.02"], capture_output=True, check=False)
    print(f"bayeserr gate on the bundled example (a fresh process): {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    subprocess.run([str(exe), "gate", "--help"], capture_output=True, check=False)
    print(f"bayeserr gate --help: {time.perf_counter() - t:.2f} s")
    if SWE.exists():
        ds = bayeserr.load(SWE, where=["per_instance_matches_reported=True"])
        names = list(ds["model"].values)
        for bayes in ("off", "fast"):
            t = time.perf_counter()
            res = gate(ds, names[1:], names[0], 0.05, bayes=bayes)
            print(f"SWE-bench Verified, {len(names) - 1} candidates, bayes={bayes}: "
                  f"{time.perf_counter() - t:.2f} s ({sum(c.passed for c in res.checks)} passed)")
    rng = np.random.default_rng(0)
    reps, n = 1000, int(SIZES.sum())
    codes = np.repeat(np.arange(len(SIZES)), SIZES)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.11, 0.8, 0.09], size=(reps, n))
    t = time.perf_counter()
    r = cr2_mean(d, codes)
    D, sizes = cluster_totals(d, codes)
    decide(r.mean, r.se, r.df, -0.02, 0.95, D, sizes[0])
    print(f"size simulation, {reps:,} replicates at SWE-bench sizes (CR2 t + exact wild bootstrap): "
          f"{time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
