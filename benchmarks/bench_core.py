"""Speed of the core toolkit (issue: core toolkit).  Run: ``python benchmarks/bench_core.py``.

Prints wall-clock figures for
1. ``import bayeserr`` (and that it does not import pymc or arviz);
2. ``bayeserr report --format json`` on 1,000,000 rows (100 models x 10,000
   questions, 500 clusters, 4,950 pairs) next to pandas alone reading the file;
3. the full LiveBench file with ``--on-unpaired drop`` (skipped without ../shared);
4. 20 models x 5,000 binary questions with clusters, 190 pairs with exact McNemar.

End-to-end figures run the real command in a fresh process (start-up included),
best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LIVEBENCH = ROOT.parent / "shared" / "data" / "real" / "livebench_20250113_per_question.csv.gz"




def run_cli(*args):
    subprocess.run([sys.executable, "-m", "bayeserr.cli", *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL)


def in_process(path):
    import bayeserr
    bayeserr.report(bayeserr.load(path)).to_json()


def synthetic(path: Path, n_models: int, n_questions: int, n_clusters: int, seed: int = 0) -> None:
    """Binary results with shared question difficulty and cluster effects."""
    rng = np.random.default_rng(seed)
    cluster = rng.integers(0, n_clusters, n_questions)
    difficulty = rng.normal(0, 1, n_clusters)[cluster] + rng.normal(0, 1, n_questions)
    ability = rng.normal(0, 0.5, n_models)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    score = (rng.random(p.shape) < p).astype(np.int8)
    pd.DataFrame({
        "model": np.repeat([f"model-{m:03d}" for m in range(n_models)], n_questions),
        "question_id": np.tile([f"q{i:05d}" for i in range(n_questions)], n_models),
        "cluster_id": np.tile([f"c{c:03d}" for c in cluster], n_models),
        "score": score.ravel(),
    }).to_csv(path, index=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {sys.platform}, {__import__('os').cpu_count()} cores, Python {sys.version.split()[0]}")

    code = ("import sys,time; t=time.perf_counter(); import bayeserr; "
            "print(time.perf_counter()-t, 'pymc' in sys.modules, 'arviz' in sys.modules)")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(args.repeat)]
    print(f"import bayeserr: {min(float(o[0]) for o in outs) * 1000:.1f} ms "
          f"(imports pymc: {outs[0][1]}, arviz: {outs[0][2]})")

    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.csv"
        synthetic(big, 100, 10_000, 500)
        t_pandas = best_of(args.repeat, lambda: pd.read_csv(big))
        t_pandas_proc = best_of(args.repeat, lambda: subprocess.run(
            [sys.executable, "-c", f"import pandas; pandas.read_csv({str(big)!r})"], check=True))
        t_report = best_of(args.repeat, lambda: run_cli("report", big, "--format", "json"))
        t_off = best_of(args.repeat, lambda: run_cli("report", big, "--format", "json", "--bayes", "off"))
        t_inproc = best_of(args.repeat, lambda: in_process(big))
        print(f"1,000,000 rows, 100 models, 4,950 pairs (target < 10 s, < 3x pandas):\n"
              f"  bayeserr report --format json, fresh process: {t_report:.2f} s\n"
              f"  python -c 'import pandas; pandas.read_csv(...)', fresh process: {t_pandas_proc:.2f} s "
              f"-> ratio {t_report / t_pandas_proc:.1f}x\n"
              f"  the same with --bayes off (frequentist columns only): {t_off:.2f} s "
              f"-> ratio {t_off / t_pandas_proc:.1f}x\n"
              f"  in process, imports done: load + report + JSON {t_inproc:.2f} s vs "
              f"pandas.read_csv {t_pandas:.2f} s")

        if LIVEBENCH.exists():
            t_lb = best_of(args.repeat, lambda: run_cli("report", LIVEBENCH, "--on-unpaired", "drop",
                                                        "--format", "json"))
            print(f"LiveBench (93,034 rows, 93 models, all pairs, --on-unpaired drop): {t_lb:.2f} s "
                  "(target < 3 s)")
        else:
            print("LiveBench: skipped (../shared absent)")

        mid = Path(tmp) / "mid.csv"
        synthetic(mid, 20, 5_000, 250, seed=1)
        t_mid = best_of(args.repeat, lambda: run_cli("report", mid, "--format", "json"))
        print(f"20 models x 5,000 binary questions, 190 pairs with exact McNemar: {t_mid:.2f} s "
              "(target < 2 s)")


if __name__ == "__main__":
    main()
