"""One model's score: mean, standard errors and intervals (SPEC §2).

:func:`score` computes, for each model of a loaded dataset, everything the
per-model table of the report shows.  The formulas live in
:mod:`bayeserr.estimators` and :mod:`bayeserr.exact`; this module chooses
which apply (0/1 or fractional scores, K samples, clusters) and gathers them
into a :class:`ModelScore`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import xarray as xr

from . import caveats
from .data import cluster_codes, question_means
from .estimators import (design_effect, normal_interval, se_bernoulli, se_clt,
                         se_clustered, variance_components, VarianceComponents)
from .exact import METHODS, effective_n, proportion_interval

INTERVAL_KEYS = ("clt", "clustered", "wilson", "clopper_pearson", "jeffreys", "agresti_coull",
                 "wilson_clustered", "clopper_pearson_clustered", "beta_posterior",
                 "hierarchical_posterior")


@dataclass(frozen=True)
class ModelScore:
    """Everything the report says about one model's score."""

    model: str
    n_questions: int
    n_clusters: int | None
    k_samples: float  #: mean answers per question
    mean: float
    se_clt: float
    se_bernoulli: float | None
    se_clustered: float | None
    design_effect: float | None
    cluster_correction: str | None
    level: float
    binary: bool  #: every score 0/1 and one answer per question
    intervals: dict = field(default_factory=dict)
    variance: VarianceComponents | None = None

    @property
    def caveats(self) -> list:
        return caveats.for_model(self)

    def to_dict(self) -> dict:
        """The model entry of the SPEC §6 JSON schema."""
        return {
            "model": self.model, "n_questions": self.n_questions, "n_clusters": self.n_clusters,
            "k_samples": self.k_samples, "mean": self.mean, "se_clt": self.se_clt,
            "se_bernoulli": self.se_bernoulli, "se_clustered": self.se_clustered,
            "design_effect": self.design_effect,
            "intervals": {k: (None if self.intervals.get(k) is None
                              else [float(v) for v in self.intervals[k]]) for k in INTERVAL_KEYS},
            "variance": None if self.variance is None else self.variance.to_dict(),
        }

    def to_frame(self) -> pd.DataFrame:
        return _flat_frame([self])


@dataclass(frozen=True)
class Scores:
    """Per-model results of :func:`score`, in the dataset's model order."""

    models: tuple[ModelScore, ...]

    def __getitem__(self, name: str) -> ModelScore:
        for m in self.models:
            if m.model == name:
                return m
        raise KeyError(name)

    def __iter__(self):
        return iter(self.models)

    def __len__(self):
        return len(self.models)

    def to_dict(self) -> list[dict]:
        return [m.to_dict() for m in self.models]

    def to_frame(self) -> pd.DataFrame:
        return _flat_frame(self.models)


def _flat_frame(models) -> pd.DataFrame:
    rows = []
    for m in models:
        d = m.to_dict()
        flat = {k: v for k, v in d.items() if k not in ("intervals", "variance")}
        for key, ci in d["intervals"].items():
            flat[f"{key}_low"], flat[f"{key}_high"] = (ci if ci is not None else (None, None))
        rows.append(flat)
    return pd.DataFrame(rows).set_index("model")


def score_one(model: str, s: np.ndarray, answers: np.ndarray, codes: np.ndarray | None, *,
              level: float = 0.95, cluster_correction: str = "paper") -> ModelScore:
    """Score one model from its per-question means ``s`` (no NaN), its raw
    ``answers`` ``(question, sample)`` and the questions' cluster ``codes``.

    The exact intervals are added by :func:`_with_exact_intervals`, which
    does all models in one vectorized call per method.
    """
    n = s.size
    k = np.sum(~np.isnan(answers), axis=1)
    mean, se = float(s.mean()), float(se_clt(s))
    binary = bool(np.all(k == 1) and np.isin(s, (0.0, 1.0)).all())
    intervals = {"clt": normal_interval(mean, se, level)}
    se_cl = deff = n_clusters = None
    if codes is not None:
        n_clusters = int(np.unique(codes).size)
        se_cl = float(se_clustered(s, codes, cluster_correction))
        deff = float(design_effect(se_cl, se))
        intervals["clustered"] = normal_interval(mean, se_cl, level)
    return ModelScore(
        model=model, n_questions=n, n_clusters=n_clusters, k_samples=float(k.mean()),
        mean=mean, se_clt=se, se_bernoulli=float(se_bernoulli(mean, n)) if binary else None,
        se_clustered=se_cl, design_effect=deff,
        cluster_correction=cluster_correction if codes is not None else None,
        level=level, binary=binary, intervals=intervals,
        variance=variance_components(answers) if answers.shape[1] > 1 else None,
    )


def _with_exact_intervals(scores: list[ModelScore], level: float) -> list[ModelScore]:
    """Add Wilson, Clopper–Pearson, Jeffreys and Agresti–Coull intervals to the
    0/1, K = 1 models, and under clustering the versions on the effective
    sample size ``n / deff`` (SPEC §2)."""
    idx = [j for j, m in enumerate(scores) if m.binary]
    if not idx:
        return scores
    n = np.array([scores[j].n_questions for j in idx], float)
    mean = np.array([scores[j].mean for j in idx])
    extra = {key: proportion_interval(mean * n, n, level, key) for key in METHODS}
    clustered = [j for j in idx if scores[j].n_clusters is not None]
    if clustered:
        n_eff = np.array([effective_n(scores[j].n_questions, scores[j].design_effect) for j in clustered])
        mean_c = np.array([scores[j].mean for j in clustered])
        for key in ("wilson", "clopper_pearson"):
            extra[f"{key}_clustered"] = dict(zip(clustered, proportion_interval(mean_c * n_eff, n_eff, level, key)))
    out = list(scores)
    for row, j in enumerate(idx):
        ivs = dict(scores[j].intervals)
        for key, value in extra.items():
            if isinstance(value, dict):
                if j in value:
                    ivs[key] = value[j]
            else:
                ivs[key] = value[row]
        out[j] = replace(scores[j], intervals=ivs)
    return out


def score(ds: xr.Dataset, models=None, *, level: float = 0.95,
          cluster_correction: str = "paper") -> Scores:
    """Score every model (or the listed ``models``) of a loaded dataset (SPEC §2).

    Standard errors are over the n per-question means ``s_i`` (the mean of a
    question's K_i samples), never over the K·n answers.
    """
    if models is not None:
        ds = ds.sel(model=list(models))
    s_all, _ = question_means(ds)
    codes_all = cluster_codes(ds)
    cube = ds["score"].values
    out = []
    for j, name in enumerate(ds["model"].values):
        answered = ~np.isnan(s_all[j])
        out.append(score_one(
            str(name), s_all[j, answered], cube[j, answered],
            None if codes_all is None else codes_all[answered],
            level=level, cluster_correction=cluster_correction))
    return Scores(tuple(_with_exact_intervals(out, level)))
