"""What the ranking costs (issue: leaderboards that answer "which is best").
Run: ``python benchmarks/bench_ranking.py [--repeat 3]``.

For SWE-bench Verified (25 models, 12 repositories), AlpacaEval 2 (56 models,
5 clusters, ``--on-unpaired drop``) and LiveBench (93 models, 18 categories,
``--on-unpaired drop``), in process, best of ``--repeat``:

1. every pair's statistics (``_pair_arrays``; what the report computed before);
2. the joint draws and the decisions of the report's family (``decide``);
3. the same with one family per model too, and the ranking with its
   Bayesian ranks (``decide`` + ``rank_view``): **what the ranking adds**;
4. the whole report (``bayeserr.report(...).to_json()``, default options).

Compare (4) with the previous release's report to see the same figure end to
end (the closing note of the ranking issue does both).  Skipped without
``../shared``.
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
    from bayeserr.analyses.families import decide, family_rows, model_families
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView
    print(f"{'file':<20} {'models':>6} {'pairs':>6} {'pair stats':>11} {'family':>8} "
          f"{'ranking adds':>13} {'report':>8}")
    for label, name, unpaired in FILES:
        path = REAL / name
        if not path.exists():
            print(f"{label:<20} skipped: {path} not found")
            continue
        ds = bayeserr.load(path)
        view = DataView.from_dataset(ds)
        opts = Options(on_unpaired=unpaired)
        arr = _pair_arrays(view, opts)
        names = list(view.models)
        family = [family_rows(opts.pairs, names, arr.ia, arr.ib)]
        per_model = [(f"vs={m}", rows) for m, rows in zip(names, model_families(len(names), arr.ia, arr.ib))]
        comps = compare_view(view, opts, ranking=True)
        stats = best_of(args.repeat, lambda: _pair_arrays(view, opts))
        one = best_of(args.repeat, lambda: decide(arr, opts, family, names))
        ranking = best_of(args.repeat, lambda: (decide(arr, opts, family + per_model, names),
                                                rank_view(view, comps, opts)))
        report = best_of(args.repeat, lambda: bayeserr.report(ds, on_unpaired=unpaired).to_json())
        m = len(names)
        print(f"{label:<20} {m:>6} {len(arr.ia):>6} {stats:>10.2f}s {one:>7.2f}s {ranking:>12.2f}s "
              f"{report:>7.2f}s")


if __name__ == "__main__":
    main()
