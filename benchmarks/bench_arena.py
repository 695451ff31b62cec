"""Speed of Bradley–Terry ratings (issue: pairwise votes and pass@k).
Run: ``python benchmarks/bench_arena.py``.

100,000 simulated votes among 100 models, 1,000 bootstrap resamples
(target < 30 s), and pass@k on 100 models × 1,000 problems.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pandas as pd

from bayeserr.analyses import arena
from bayeserr.stats.passk import pass_at_k


def main():
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    rng = np.random.default_rng(0)
    m, n = 100, 100_000
    strength = rng.normal(0, 1, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    winner = np.where(u < 0.85 * p, "model_a", np.where(u < 0.85, "model_b", "tie"))
    df = pd.DataFrame({"model_a": [f"m{i:03d}" for i in a], "model_b": [f"m{i:03d}" for i in b],
                       "winner": winner})
    t = time.perf_counter()
    votes = arena.load_votes(df)
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    r = arena.rate(votes, bootstrap=1000)
    t_rate = time.perf_counter() - t
    print(f"Bradley–Terry, {n:,} votes, {m} models, 1,000 bootstrap resamples: {t_load + t_rate:.1f} s "
          f"(validation {t_load:.2f} s, fit + bootstrap {t_rate:.1f} s; target < 30 s)")
    truth = strength[[int(name[1:]) for name in r.models]]
    err = np.corrcoef(r.rating, truth)[0, 1]
    print(f"  correlation of fitted and true strengths: {err:.4f}")
    nn = rng.integers(10, 200, (100, 1000))
    cc = rng.binomial(nn, 0.4)
    t = time.perf_counter()
    pass_at_k(nn, cc, 10)
    print(f"pass@10 for 100,000 problem-model cells: {1000 * (time.perf_counter() - t):.1f} ms")


if __name__ == "__main__":
    main()
