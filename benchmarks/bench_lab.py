"""Speed of the simulation lab (issue: simulation lab).  Run: ``python benchmarks/bench_lab.py [--full]``.

1. The issue's grid: 6 n × 4 accuracies × 2 cluster settings, 2,000 replicates
   per cell, every non-MCMC interval method (target < 60 s);
2. how the cost of one cell grows with replicates and with n;
3. tests of A − B: one error-rate cell, and cells of the few-cluster study
   (every registered test, with and without the wild bootstrap's inverted
   interval), and the whole few-cluster grid with ``--full``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

from bayeserr.lab import simulate as sim  # noqa: E402
from bayeserr.lab.publish import run_grid  # noqa: E402


def main():
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    designs = [d if d.cluster_size > 1 else sim.replace(d, icc=0.0)
               for d in sim.grid(n=[10, 20, 50, 100, 300, 1000], accuracy=[0.05, 0.5, 0.8, 0.95],
                                 cluster_size=[1, 10], icc=[0.3])]
    t = time.perf_counter()
    df = run_grid(designs, sim.coverage, 2000)
    print(f"coverage grid, {len(designs)} cells x 2,000 replicates, {df['method'].nunique()} methods: "
          f"{time.perf_counter() - t:.1f} s (target < 60 s)")
    for design in (sim.Design(n=300, accuracy=0.8), sim.Design(n=300, accuracy=0.8, cluster_size=10, icc=0.3)):
        label = "clustered" if design.cluster_size > 1 else "independent"
        for reps in (500, 2000, 8000):
            s = best_of(2, lambda: sim.coverage(design, reps))
            print(f"  {label}, n=300: {reps:>5} replicates {s:.2f} s")
        for n in (100, 1000, 3000):
            s = best_of(2, lambda: sim.coverage(sim.replace(design, n=n), 2000))
            print(f"  {label}, 2,000 replicates: n={n:>5} {s:.2f} s")
    t = time.perf_counter()
    cells = sim.error_rates(sim.Design(n=1000, accuracy=0.75, gap=0.03, rho=0.8, cluster_size=10, icc=0.3), 2000)
    print(f"error rates, n=1000 clustered, 2,000 replicates, {len(cells)} tests: {time.perf_counter() - t:.2f} s")
    for name in ("equal_5", "swebench", "dominant", "equal_200"):
        d = sim.preset(name, accuracy=0.6, icc=0.2, rho=0.7, icc_diff=0.1, gap=0.05)
        s0 = best_of(1, lambda: sim.pair_calibration(d, 2000, wild_interval=False))
        s1 = best_of(1, lambda: sim.pair_calibration(d, 2000))
        print(f"  few-cluster cell {name:>9} (n={d.n}, C={d.n_clusters}), 2,000 replicates: "
              f"{s0:.2f} s, with the wild bootstrap interval {s1:.2f} s")
    if "--full" in sys.argv:
        from bayeserr.lab.publish import run_fewclusters
        t = time.perf_counter()
        df = run_fewclusters(2000)
        print(f"few-cluster grid, {df[['name', 'icc_diff', 'gap']].drop_duplicates().shape[0]} cells x 2,000 "
              f"replicates: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
