"""Layer 6, the analyses users call: each takes a dataset and options and
returns a frozen result with ``to_frame()`` / ``to_dict()``.

* :mod:`.scoring` — ``bayeserr.score``: per-model intervals;
* :mod:`.comparison` — ``bayeserr.compare`` / ``compare_all``: pairs,
  adjusted over their family (:mod:`.families`: the one set of decisions);
* :mod:`.ranking` — ``bayeserr.rank``: rank intervals, tied with the best;
* :mod:`.power` — ``bayeserr.plan``: power and sample size;
* :mod:`.arena` — Bradley–Terry ratings from pairwise votes, and
  :mod:`.arena_judge` — ratings from judge votes corrected by human votes;
* :mod:`.suite` — suite scores over tasks, and :mod:`.groups` — lm-eval's task groups;
* :mod:`.tasks` — a multi-task leaderboard over tasks like these (tasks as a sample);
* :mod:`.reliability` — ``bayeserr.pass_hat_k``: pass^k over repeated runs, the pairs that
  reorder from pass@1, where the noise comes from and the flaky questions;
* :mod:`.judge` — judge-scored evals corrected by human labels;
* :mod:`.gate` — the release gate (non-inferiority and superiority), its
  sentences in :mod:`.gate_text`;
* :mod:`.sequential` — watching a run: confidence sequences over the looks, its
  sentences in :mod:`.watch_text`.

May import: every layer below (base, data, stats, models, bayes, registries).
A result's display methods (``to_markdown``, ``_repr_html_``, …) import a
renderer when called; nothing else here reaches up.
"""
