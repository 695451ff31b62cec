"""Layer 2, the formulas: pure functions of arrays, each citing its equation
in ``docs/methods.md``.  No I/O, no report, no sampler.

* :mod:`.estimators` — means, CLT and clustered SEs, variance components (§2);
* :mod:`.fewclusters` — CR2, Bell–McCaffrey df, the wild cluster bootstrap (§2.9);
* :mod:`.exact` — Clopper–Pearson, Wilson, Jeffreys, Agresti–Coull through
  statsmodels' ``proportion_confint``, and their effective-sample-size versions (§2.8);
* :mod:`.distributions` — the t, normal, binomial and beta functions a report
  needs, from ``scipy.stats`` (imported when first needed);
* :mod:`.bradley_terry` — Bradley–Terry strengths from win matrices, and the PPI++ fit that
  corrects judge votes with human votes (§5.5);
* :mod:`.onesided` — one-sided tests against a margin, Holm's levels, power at 0 (§3.11);
* :mod:`.paired_margin` — paired tests of A − B against a margin (Nam, Tango) (§3.11);
* :mod:`.agreement` — Cohen's κ and Krippendorff's α of judge and human labels (§3.14);
* :mod:`.ppi` — prediction-powered inference: judge scores corrected by human labels (§3.14);
* :mod:`.sequential` — anytime-valid confidence sequences (§3.13);
* :mod:`.sufficient` — sufficient statistics of a results table, added over partitions (§7.3);
* :mod:`.bayes_sums` — the sufficient statistics of the Bayesian columns and of pass@k/pass^k:
  count table, unit multiset, run table, totals of squares (§7.3);
* :mod:`.suite` — suite scores over tasks as fixed strata (§3.12);
* :mod:`.tasks` — tasks as a sample: means over tasks, their spread, rank prediction (§3.15);
* :mod:`.pairs` — all-pairs paired moments, McNemar, pair cluster totals (§3);
* :mod:`.passk` — the unbiased pass@k estimator (§6);
* :mod:`.planning` — power, sample size, tie zone (§4);
* :mod:`.simultaneous` — joint bootstrap of many pairs, Romano–Wolf step-down,
  simultaneous intervals, Holm and BH (§3.9);
* :mod:`.ranking` — rank intervals, letter groups, posterior ranks (§3.10);
* :mod:`.best` — the confidence set for the best model, the top-k set and each
  model's own rank interval from the pairs' one-sided tests (§3.10);
* :mod:`.view` — a dataset's arrays with their statistics cached
  (``DataView``, ``ScoreBatch``), the bridge from the data layer to the
  formulas.

May import: :mod:`bayeserr.base`, :mod:`bayeserr.data`.  A new estimator is a
function here, tested against an independent computation.
"""
