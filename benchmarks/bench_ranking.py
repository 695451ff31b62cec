"""What the ranking costs (issue: leaderboards that answer "which is best").
Run: ``python benchmarks/bench_ranking.py [--repeat 3]``.

For SWE-bench Verified (25 models, 12 repositories), AlpacaEval 2 (56 models,
5 clusters, ``--on-unpaired drop``) and LiveBench (93 models, 18 categories,
``--on-unpaired drop``), in process, best of ``--repeat``:

1. the pairwise comparisons as before the ranking: every pair's statistics,
   without the joint draws (``_pair_arrays``);
2. the same with the report's family decided from the joint draws (``compare_view``);
3. with the ranking's families too (all pairs, one per model) and the ranking
   (``compare_view(ranking=True)`` + ``rank_view``, Bayesian ranks included);
4. the whole report (``bayeserr.report``, ``--bayes fast``).

The ranking's cost is (3) − (1).  Skipped without ``../shared``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real"
FILES = [("SWE-bench Verified", "swebench_verified_bashonly_per_instance.csv.gz", "error"),
         ("AlpacaEval 2", "alpacaeval2_per_instruction.csv.gz", "drop"),
         ("LiveBench", "livebench_20250113_per_question.csv.gz", "drop")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import bayeserr
    from bayeserr.analyses.comparison import _pair_arrays, compare_view
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView
    print(f"{'file':<20} {'models':>6} {'pairs':>6} {'pairs only':>11} {'+ family':>9} {'+ ranking':>10} "
          f"{'ranking adds':>13} {'report':>8}")
    for label, name, unpaired in FILES:
        path = REAL / name
        if not path.exists():
            print(f"{label:<20} skipped: {path} not found")
            continue
        ds = bayeserr.load(path)
        view = DataView.from_dataset(ds)
        opts = Options(on_unpaired=unpaired)
        arrays = best_of(args.repeat, lambda: _pair_arrays(view, opts))
        family = best_of(args.repeat, lambda: compare_view(view, opts))
        ranking = best_of(args.repeat, lambda: rank_view(view, compare_view(view, opts, ranking=True), opts))
        report = best_of(args.repeat, lambda: bayeserr.report(ds, on_unpaired=unpaired))
        m = len(view.models)
        print(f"{label:<20} {m:>6} {m * (m - 1) // 2:>6} {arrays:>10.2f}s {family:>8.2f}s {ranking:>9.2f}s "
              f"{ranking - arrays:>12.2f}s {report:>7.2f}s")


if __name__ == "__main__":
    main()
