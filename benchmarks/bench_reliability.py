"""What the reliability section (pass^k over repeated runs) costs.
Run: ``python benchmarks/bench_reliability.py [--repeat 3]``.

In process, best of ``--repeat``:

1. EvalPerf (34 configurations × 118 tasks, 50–100 samples each, as counts; skipped without
   ``../shared``): ``bayeserr.pass_hat_k`` at the default k (1, 2, 4, …, 50) with and without the
   Beta–Binomial posteriors, and the whole report beside it;
2. synthetic agents at the sizes agent evals reach: 25 and 100 models × 300 tasks × 8 runs
   (0/1 per run, one row per run), the section alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "evalperf_per_task.csv.gz"


def _synthetic(models: int, tasks: int, runs: int, seed: int = 0):
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    theta = rng.beta(2, 1, (models, tasks)) ** rng.uniform(0.5, 2, (models, 1))
    right = rng.random((models, tasks, runs)) < theta[..., None]
    m, t, r = np.meshgrid(np.arange(models), np.arange(tasks), np.arange(runs), indexing="ij")
    return pd.DataFrame({"model": [f"agent-{j:03d}" for j in m.ravel()], "question_id": t.ravel(),
                         "sample": r.ravel(), "score": right.ravel().astype(float)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import bayeserr
    from bayeserr.analyses.reliability import reliability_view
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView
    if REAL.exists():
        ds = bayeserr.load(REAL, no_cluster=True)
        view = DataView.from_dataset(ds)
        with_bayes = best_of(args.repeat, lambda: reliability_view(view, Options()))
        without = best_of(args.repeat, lambda: reliability_view(view, Options(bayes="off")))
        report = best_of(args.repeat, lambda: bayeserr.report(ds).to_json())
        print(f"EvalPerf 34 × 118 (k = 1 … 50): section {with_bayes:.2f} s ({without:.2f} s without the "
              f"Beta–Binomial posteriors); whole report {report:.2f} s")
    else:
        print(f"EvalPerf skipped: {REAL} is absent")
    for models in (25, 100):
        df = _synthetic(models, 300, 8)
        view = DataView.from_dataset(bayeserr.load(df))
        t = best_of(args.repeat, lambda: reliability_view(view, Options()))
        t_off = best_of(args.repeat, lambda: reliability_view(view, Options(bayes="off")))
        print(f"synthetic {models} agents × 300 tasks × 8 runs ({len(df):,} rows, k = 1 … 8): section {t:.2f} s "
              f"({t_off:.2f} s without the Beta–Binomial posteriors)")


if __name__ == "__main__":
    main()
