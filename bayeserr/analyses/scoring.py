"""One model's score: mean, standard errors and every interval method
(``docs/methods.md`` §2).

:func:`score` scores all models at once: the statistics shared by the
methods are computed once on a :class:`~bayeserr.stats.view.ScoreBatch`, every
method of the registry (:mod:`bayeserr.registries.methods`) is applied to the whole
batch, and each :class:`ModelScore` is then built once, Bayesian intervals
included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from bayeserr.base.results import ResultList, frame_value
from bayeserr.registries import caveats
from bayeserr.registries.methods import INTERVALS, recommendation, report_methods
from bayeserr.registries.options import Options
from bayeserr.stats.estimators import VarianceComponents, variance_components


@dataclass(frozen=True)
class ModelScore:
    """Everything the report says about one model's score."""

    model: str
    n_questions: int
    n_clusters: int | None
    effective_clusters: float | None  #: C_eff = n² / Σ n_c² (§2.6)
    df: float | None  #: Bell–McCaffrey degrees of freedom of the CR2 interval (§2.5)
    k_samples: float  #: mean answers per question
    k_min: int
    k_max: int
    mean: float
    se_clt: float
    se_bernoulli: float | None
    se_clustered: float | None  #: CR2 (M4b), the clustered headline
    se_clustered_paper: float | None  #: the paper's (M4)
    se_clustered_cr1: float | None
    design_effect: float | None  #: se_clustered² / se_clt²
    cluster_correction: str | None  #: the one behind the "clustered_paper" interval
    level: float
    binary: bool  #: every score 0/1 and one answer per question
    intervals: dict = field(default_factory=dict)  #: method key -> (low, high) or None
    hierarchical_mu: tuple | None = None  #: interval of μ, the mean rate of a new cluster (§5.2)
    variance: VarianceComponents | None = None

    @property
    def caveats(self) -> list:
        return caveats.for_model(self)

    @cached_property  # frozen: computed once (to_dict, the table and the caveats all read it)
    def recommended(self):
        """The :class:`~bayeserr.registries.methods.Recommendation`: the interval the
        report's table shows for this model, its method and whether it was cut to [0, 1]."""
        return recommendation(self)

    def to_dict(self) -> dict:
        """The model entry of the JSON report (``docs/methods.md`` §7.2)."""
        return {
            "model": self.model, "n_questions": self.n_questions, "n_clusters": self.n_clusters,
            "effective_clusters": self.effective_clusters, "df": self.df,
            "k_samples": self.k_samples, "k_min": self.k_min, "k_max": self.k_max,
            "mean": self.mean, "se_clt": self.se_clt,
            "se_bernoulli": self.se_bernoulli, "se_clustered": self.se_clustered,
            "se_clustered_paper": self.se_clustered_paper, "se_clustered_cr1": self.se_clustered_cr1,
            "design_effect": self.design_effect,
            "intervals": {m.key: _pair(self.intervals.get(m.key)) for m in report_methods()},
            "hierarchical_mu": _pair(self.hierarchical_mu),
            "recommended": self.recommended.key,
            "recommended_interval": _pair(self.recommended.interval),
            "recommended_cut": self.recommended.cut,
            "variance": None if self.variance is None else self.variance.to_dict(),
        }

    def to_frame(self) -> pd.DataFrame:
        return Scores((self,)).to_frame()


class Scores(ResultList):
    """Per-model results of :func:`score`; ``scores["name"]`` looks one up."""

    key = "model"

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for m in self:
            d = m.to_dict()
            flat = {k: frame_value(v) for k, v in d.items()
                    if k not in ("intervals", "variance", "hierarchical_mu", "recommended_interval")}
            flat["recommended_low"], flat["recommended_high"] = d["recommended_interval"]
            for key, ci in d["intervals"].items():
                flat[f"{key}_low"], flat[f"{key}_high"] = (ci if ci is not None else (np.nan, np.nan))
            rows.append(flat)
        if not rows:  # no models: the same columns, no rows
            return pd.DataFrame(columns=_frame_columns()).set_index("model")
        return pd.DataFrame(rows).set_index("model")


def _frame_columns() -> list[str]:
    """Columns of :meth:`Scores.to_frame` (the flat part of ``ModelScore.to_dict``)."""
    from dataclasses import fields
    names = [f.name for f in fields(ModelScore)]
    flat = names[:names.index("design_effect") + 1]
    flat += ["recommended", "recommended_cut", "recommended_low", "recommended_high"]
    return flat + [f"{m.key}_{end}" for m in report_methods() for end in ("low", "high")]


def _clustered_arrays(batch) -> dict:
    """Clustered per-model quantities; NaN (→ None) for a model with one cluster."""
    ok = batch.cluster_ok

    def masked(v):
        return np.where(ok, v, np.nan)
    return {"effective_clusters": masked(batch.cr2.effective_clusters), "df": masked(batch.cr2.df),
            "se_clustered": masked(batch.cr2.se), "se_clustered_paper": masked(batch.se_clustered("paper")),
            "se_clustered_cr1": masked(batch.se_clustered("cr1")), "design_effect": masked(batch.design_effect)}


_UNCLUSTERED = dict.fromkeys(("effective_clusters", "df", "se_clustered", "se_clustered_paper",
                              "se_clustered_cr1", "design_effect"))


def _interval(iv, unit: bool = False):
    """An interval as a pair of floats (None if undefined); ``unit``: of a
    quantity in [0, 1] whose method keeps it there (exact, Bayesian), cut to
    [0, 1] so that quadrature or floating-point error cannot leave it
    (a hierarchical posterior gave 1.00000000005549 at 50/50 correct)."""
    if np.isnan(iv).any():
        return None
    lo, hi = float(iv[0]), float(iv[1])
    return (min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)) if unit else (lo, hi)


#: interval families whose intervals lie in [0, 1] by construction (see _interval)
UNIT_FAMILIES = ("exact", "bayes")


def _pair(ci):
    return None if ci is None else [float(ci[0]), float(ci[1])]


def _opt(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def ranked_view(view, options: Options, keep_fits: bool = False):
    """Scores sorted best first (ties by name: the report's order), the view in that order,
    the fits by model (``keep_fits``) and the batch's notes."""
    from bayeserr.analyses.comparison import ranked_names
    scores, batch = score_view(view, options, keep_fits=keep_fits)
    position = {m: j for j, m in enumerate(view.models)}
    order = [position[m] for m in ranked_names(view)]  # one ordering for the report and compare_all
    fits = {view.models[j]: batch.fits.get(j, {}) for j in order} if keep_fits else None
    return Scores([scores[j] for j in order]), view.select([view.models[j] for j in order]), fits, batch.notes


def score_view(view, options: Options, *, keep_fits: bool = False):
    """Score every model of a :class:`~bayeserr.stats.view.DataView`.

    Returns the :class:`Scores` (in the view's model order) and the batch
    (its ``fits`` and ``notes`` hold the posteriors and MCMC caveats).
    """
    from bayeserr.stats.estimators import se_bernoulli
    bayes = options.bayes if options.bayes.on else None
    batch = view.batch(cluster_correction=options.cluster_correction, bayes=bayes, keep_fits=keep_fits)
    methods = report_methods(bayes=bayes is not None)
    ivs = {m.key: m(batch, options.level) for m in methods}
    clustered = view.codes is not None
    cl = _clustered_arrays(batch) if clustered else {k: [None] * len(view.models) for k in _UNCLUSTERED}
    out = []
    for j, name in enumerate(view.models):
        binary = bool(batch.binary[j])
        answered = batch.answered[j]
        answers = view.answers[j][answered]
        k = batch.k[j][answered]
        out.append(ModelScore(
            model=name, n_questions=int(batch.n[j]),
            n_clusters=int(batch.n_clusters[j]) if clustered else None,
            **{key: _opt(v[j]) for key, v in cl.items()},
            k_samples=float(k.mean()), k_min=int(k.min()), k_max=int(k.max()), mean=float(batch.mean[j]),
            se_clt=float(batch.se_clt[j]),
            se_bernoulli=float(se_bernoulli(batch.mean[j], batch.n[j])) if binary else None,
            cluster_correction=options.cluster_correction if clustered else None,
            level=options.level, binary=binary,
            intervals={key: _interval(iv[j], INTERVALS[key].family in UNIT_FAMILIES) for key, iv in ivs.items()},
            # μ of a new cluster is a cluster-level quantity: none from one cluster (it would be the prior's)
            hierarchical_mu=_mu(batch, j, clustered),
            variance=variance_components(answers) if answers.shape[1] > 1 else None,
        ))
    return Scores(out), batch


def score_sufficient(stats, options: Options, samples: bool = True) -> Scores:
    """Score every model from its :class:`~bayeserr.stats.sufficient.Sufficient`
    statistics (any engine): the numbers of :func:`score_view` that are functions
    of the sums — mean, SEs, CR2 and its df, C_eff, design effect, the normal,
    clustered and exact intervals, the K > 1 variance split — through the same
    registry entries and the same clustered arrays — the Bayesian ones too, from the
    count table, cluster sums and unit multiset the engines keep (``docs/methods.md``
    §7.3, "Sufficient statistics and engines").  ``samples``: the data have more than
    one sample label (the memory engine's test for the variance split).  Returns the
    scores and the batch (its ``notes`` and ``missing``)."""
    from bayeserr.stats.estimators import se_bernoulli
    from bayeserr.stats.sufficient import SufficientBatch
    bayes = options.bayes if options.bayes.on else None
    batch = SufficientBatch(stats, options.cluster_correction, bayes)
    ivs = {m.key: m(batch, options.level) for m in report_methods(bayes=bayes is not None)}
    clustered = batch.codes is not None
    cl = _clustered_arrays(batch) if clustered else {k: [None] * len(stats.models) for k in _UNCLUSTERED}
    out = []
    for j, name in enumerate(stats.models):
        binary = bool(batch.binary[j])
        out.append(ModelScore(
            model=name, n_questions=int(batch.n[j]),
            n_clusters=int(batch.n_clusters[j]) if clustered else None,
            **{key: _opt(v[j]) for key, v in cl.items()},
            k_samples=float(stats.k_sum[j] / stats.n[j]), k_min=int(stats.k_min[j]), k_max=int(stats.k_max[j]),
            mean=float(batch.mean[j]), se_clt=float(batch.se_clt[j]),
            se_bernoulli=float(se_bernoulli(batch.mean[j], batch.n[j])) if binary else None,
            cluster_correction=options.cluster_correction if clustered else None,
            level=options.level, binary=binary,
            intervals={key: _interval(iv[j], INTERVALS[key].family in UNIT_FAMILIES) for key, iv in ivs.items()},
            hierarchical_mu=_mu(batch, j, clustered),
            variance=stats.variance(j) if samples else None,
        ))
    return Scores(out), batch


def _mu(batch, j: int, clustered: bool):
    """μ of a new cluster (§5.2) of row ``j``, when the hierarchical posterior computed it; none
    from one cluster (it would be the prior's)."""
    if "hierarchical_mu" not in batch.side or (clustered and batch.n_clusters[j] < 2):
        return None
    return _interval(batch.side["hierarchical_mu"][j], True)


def score(ds, models=None, *, options: Options | None = None, **kwargs):
    """Score every model (or the listed ``models``) of a loaded dataset.

    Keyword arguments are those of :class:`~bayeserr.registries.options.Options`
    (``level``, ``cluster_correction``, ``bayes="off"|"fast"|"mcmc"``, …);
    the numbers are the same as the ``bayeserr report`` command's for the
    same options.  Standard errors are over the n per-question means (the
    mean of a question's K samples), never over the K·n answers.
    """
    from bayeserr.stats.view import DataView
    options = Options.coerce(options, **kwargs)
    view = DataView.from_dataset(ds).select(models)
    return score_view(view, options, keep_fits=options.bayes.on)[0]
