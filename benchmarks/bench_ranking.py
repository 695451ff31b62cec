"""What the ranking costs (issue: leaderboards that answer "which is best").
Run: ``python benchmarks/bench_ranking.py [--repeat 3]``.

For SWE-bench Verified (25 models, 12 repositories), AlpacaEval 2 (56 models,
5 clusters, ``--on-unpaired drop``) and LiveBench (93 models, 18 categories,
``--on-unpaired drop``), in process, best of ``--repeat``:

1. every pair's statistics (``pair_arrays``);
2. the joint draws and the decisions of the report's family (``decide``);
3. the ranking: the set tied with the best, the top-k set, the models' own
   rank intervals and the Bayesian ranks (``rank_view``): **what the ranking adds**;
4. the whole report (``bayeserr.report(...).to_json()``, default options).

Real files are skipped without ``../shared``.  ``--synthetic 100,200`` adds
leaderboards of that many models on 500 questions in 20 clusters (0/1 answers,
seeded): the report's time should grow about as the number of pairs (×4 from
100 to 200 models).
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
    parser.add_argument("--synthetic", default="", help="model counts of synthetic leaderboards, e.g. 100,200")
    args = parser.parse_args()
    import bayeserr
    from bayeserr.analyses.comparison import compare_view, pair_arrays
    from bayeserr.analyses.families import decide, family_rows
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView
    print(f"{'file':<20} {'models':>6} {'pairs':>6} {'pair stats':>11} {'family':>8} "
          f"{'ranking adds':>13} {'report':>8}")
    boards = [(label, lambda name=name: bayeserr.load(REAL / name) if (REAL / name).exists() else None,
               unpaired) for label, name, unpaired in FILES]
    boards += [(f"synthetic {m}", lambda m=m: synthetic(m), "error")
               for m in (int(x) for x in args.synthetic.split(",") if x.strip())]
    for label, make, unpaired in boards:
        ds = make()
        if ds is None:
            print(f"{label:<20} skipped: ../shared not found")
            continue
        view = DataView.from_dataset(ds)
        opts = Options(on_unpaired=unpaired)
        arr = pair_arrays(view, opts)
        names = list(view.models)
        family = [family_rows(opts.pairs, names, arr.ia, arr.ib)]
        comps = compare_view(view, opts, ranking=True)
        stats = best_of(args.repeat, lambda: pair_arrays(view, opts))
        one = best_of(args.repeat, lambda: decide(arr, opts, family, names))
        ranking = best_of(args.repeat, lambda: rank_view(view, comps, opts))
        report = best_of(args.repeat, lambda: bayeserr.report(ds, on_unpaired=unpaired).to_json())
        m = len(names)
        print(f"{label:<20} {m:>6} {len(arr.ia):>6} {stats:>10.2f}s {one:>7.2f}s {ranking:>12.2f}s "
              f"{report:>7.2f}s")


def synthetic(models: int, questions: int = 500, clusters: int = 20, seed: int = 0):
    """A seeded leaderboard: 0/1 answers with a shared question difficulty and
    model-by-cluster effects, accuracies spread over 20%–80%."""
    import numpy as np
    import pandas as pd

    import bayeserr
    rng = np.random.default_rng(seed)
    cluster = rng.integers(0, clusters, questions)
    theta = np.linspace(1.4, -1.4, models)[:, None]
    eta = theta + rng.normal(0, 1.5, questions)[None, :] + rng.normal(0, 0.2, (models, clusters))[:, cluster]
    score = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(int)
    frame = pd.DataFrame({"model": np.repeat([f"model-{j:03d}" for j in range(models)], questions),
                          "question_id": np.tile([f"q{i:04d}" for i in range(questions)], models),
                          "cluster_id": np.tile([f"c{c:02d}" for c in cluster], models),
                          "score": score.ravel()})
    return bayeserr.load(frame)


if __name__ == "__main__":
    main()
