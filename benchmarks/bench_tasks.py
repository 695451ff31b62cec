"""What the leaderboard over tasks costs (issue: ranks that generalise over tasks).
Run: ``python benchmarks/bench_tasks.py [--repeat 3]``.

On LiveBench read with its 18 tasks (``cluster_id``; the 41 models that answered every
question, and all 93 with ``--on-unpaired drop``), in process, best of ``--repeat``:

1. the leaderboard over tasks (``over_tasks_view`` without the posterior): T1–T5, the
   pairs, the ranking and the readings;
2. the models × tasks posterior alone (``models/task_effects.posterior``, 4 × 1,500 iterations);
3. the whole report (``bayeserr.report(...).to_json()``, ``bayes="off"``) with and
   without the task column: **what the section adds**.

Skipped without ``../shared``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "livebench_20250113_per_question.csv.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not REAL.exists():
        print(f"skipped: {REAL} is absent")
        return
    import numpy as np
    import pandas as pd

    import bayeserr
    from bayeserr.analyses.suite import suite_view
    from bayeserr.analyses.tasks import over_tasks_view
    from bayeserr.models.task_effects import posterior
    from bayeserr.stats.view import DataView
    df = pd.read_csv(REAL)
    counts = df.groupby("model").question_id.nunique()
    full = df[df.model.isin(counts[counts == df.question_id.nunique()].index)]
    for label, data in (("41 models, every question", full), ("93 models, --on-unpaired drop", df)):
        ds = bayeserr.load(data, task_col="cluster_id")
        view = DataView.from_dataset(ds)
        suite = suite_view(view, 0.95)
        res = over_tasks_view(view, suite, 0.95, bayes=False)
        t_section = best_of(args.repeat, lambda: over_tasks_view(view, suite, 0.95, bayes=False))
        keep = np.array([view.position[m.model] for m in res.models])
        from bayeserr.analyses.tasks import task_values
        tm, tv = task_values(view.s[keep], np.unique(view.tasks, return_inverse=True)[1], None)
        t_post = best_of(1, lambda: posterior(tm, tv))
        opts = dict(bayes="off", on_unpaired="drop")
        t_with = best_of(args.repeat, lambda: bayeserr.report(ds, **opts).to_json())
        plain = bayeserr.load(data)
        t_without = best_of(args.repeat, lambda: bayeserr.report(plain, **opts).to_json())
        print(f"LiveBench {label} ({len(res.models)} models read over {len(res.tasks)} tasks): "
              f"section {t_section:.2f} s; posterior {t_post:.2f} s; report with tasks {t_with:.2f} s, "
              f"without {t_without:.2f} s")


if __name__ == "__main__":
    main()
