"""The sections of a report from sufficient statistics (``--engine stream``; the dask engine
calls the same function): every number of the report that is a function of the
sums of :mod:`bayeserr.stats.sufficient`, through the same code as the
in-memory report (``docs/guide/scale.md``).

Not available at this scale (each listed in the report as a warning with its
reason, in every format and in the JSON): the Bayesian columns (posterior
intervals, P(A > B), Bayesian ranks), pass@k, the suite and per-task tables,
lm-eval task groups and the judge section.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bayeserr.registries import caveats as _caveats
from bayeserr.registries.options import Options

#: (code, what, why) of each section a report from sufficient statistics leaves out
NOT_AT_SCALE = {
    "bayes": ("the Bayesian columns (posterior intervals, P(A > B), Bayesian ranks)",
              "the hierarchical and cluster-effect posteriors and the Bayesian bootstrap are fitted to each "
              "question's or cluster's counts, not to sums"),
    "pass_at_k": ("pass@k", "pass@k is computed per problem from its samples"),
    "suite": ("the suite and per-task tables", "they need the sums of each task, which the engine does not "
              "keep"),
}


class _Means:
    """What :func:`~bayeserr.analyses.ranking.rank_view` reads of a view: the
    models and their means (one 'question' holding the mean)."""

    def __init__(self, models, means):
        self.models = tuple(models)
        self.s = np.asarray(means, float)[:, None]
        self.answered = np.ones(self.s.shape, bool)


def not_at_scale(key: str, engine: str, advice: bool = True) -> _caveats.Caveat:
    """Why a section is missing from a report from sufficient statistics; ``advice`` adds what to
    run instead (once, on the last of them, so the Warnings section does not repeat it)."""
    what, why = NOT_AT_SCALE[key]
    return _caveats.Caveat("not_at_scale", None, f"Not available with --engine {engine}: {what}; {why}."
                           + (" Run the default engine (memory) on the data, or on a sample of its questions, "
                              "for them." if advice else ""))


def sufficient_sections(result, options: Options, *, engine: str = "stream"):
    """The sections of a report from an engine's
    :class:`~bayeserr.stats.stream.StreamResult`: ``(options, scores,
    comparisons, ranking, warnings)``, with the options the numbers were
    computed under (no Bayesian columns).  The decisions, ranks and warnings come
    from the same functions as the in-memory report's;
    :func:`bayeserr.reporting.build.report_from_sufficient` assembles them."""
    from bayeserr.analyses.comparison import Comparisons, SufficientPairs, compare_view, pair_caveats
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.analyses.scoring import Scores, score_sufficient
    wanted_bayes = options.bayes.on
    options = replace(options, bayes="off") if wanted_bayes else options
    stats = result.stats
    scores = score_sufficient(stats, options, samples=result.samples)
    order = sorted(range(len(scores)), key=lambda j: (-scores[j].mean, scores[j].model))
    scores = Scores([scores[j] for j in order])
    stats = stats.select(order)
    if len(scores) > 1:
        comps = compare_view(SufficientPairs(stats), options, ranking=True)
        ranking = rank_view(_Means(stats.models, [m.mean for m in scores]), comps, options)
    else:
        comps, ranking = Comparisons(), None
    clustered = stats.clusters is not None
    warnings = _caveats.look_alike_names(stats.models) + [w for m in scores for w in m.caveats]
    warnings += pair_caveats(comps, clustered)
    if clustered and any(m.binary for m in scores):
        warnings.append(_caveats.Caveat(
            "exact_not_cluster_aware", None, "Wilson, Clopper–Pearson, Jeffreys and Agresti–Coull (in the "
            "JSON, and as columns with --methods all) assume independent questions; with clusters read "
            "their 'n_eff' versions."))
    if comps.family is not None and comps.family.draws.min_p >= 1 - options.level:
        warnings.append(_caveats.family_cannot_decide(comps.family.to_dict()))
    missing = [k for k, on in (("bayes", wanted_bayes), ("pass_at_k", bool(options.pass_k)),
                               ("suite", bool(result.tasks))) if on]
    warnings += [not_at_scale(k, engine, advice=i == len(missing) - 1) for i, k in enumerate(missing)]
    return options, scores, comps, ranking, warnings


#: the load options the stream engine reads (column names); the others need the whole table
STREAM_LOAD = ("model_col", "question_col", "score_col", "cluster_col", "sample_col", "task_col", "no_cluster")
_DEFAULTS = {"input_format": ("auto", "parquet"), "duplicate_runs": ("error",), "partial_runs": ("exclude",)}


def stream_options(load: dict, *, where=(), models=None, save_posterior=None, engine: str = "stream") -> dict:
    """The column options of ``load`` for the stream engine; an :class:`~bayeserr.base.errors.InputError`
    for an option it does not support (filters, model selection, logs, labels)."""
    from bayeserr.base.errors import InputError
    unsupported = [f"--{k.replace('_', '-')}" for k, v in load.items()
                   if k not in STREAM_LOAD and v not in _DEFAULTS.get(k, (None, False))]
    unsupported += ["--where"] if where else []
    unsupported += ["--models"] if models else []
    unsupported += ["--save-posterior"] if save_posterior else []
    if unsupported:
        raise InputError(f"--engine {engine} reads Parquet results tables with the column options only; "
                         f"{', '.join(unsupported)} need{'s' if len(unsupported) == 1 else ''} the default engine "
                         "(memory). Filter or select models when writing the Parquet files (e.g. one "
                         "hive partition per model), or drop the option.")
    return {k: v for k, v in load.items() if k in STREAM_LOAD}
