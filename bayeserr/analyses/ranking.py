"""Which model is best: rank intervals, the models tied with the best, a
top-k set and Bayesian ranks (``docs/methods.md`` §3.10).

``bayeserr.rank(ds)`` answers a leaderboard's question from the same decisions
as the pairwise table: a model's rank interval counts the models the family
declares better and worse than it (Mogstad, Romano, Shaikh & Wilhelm 2024).
*Simultaneous* intervals use the all-pairs family and hold for every model at
once; *marginal* intervals use the family of one model's pairs and hold for
that model alone.  Beside them, from joint posterior draws of the mean scores
that share the clusters' covariance: P(best), the expected rank and a rank
credible interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError
from bayeserr.base.results import ResultList, frame_value
from bayeserr.registries.options import Options
from bayeserr.stats.ranking import posterior_ranks, rank_bounds

#: joint posterior draws behind P(best) and the rank credible intervals
BAYES_DRAWS = 4000


@dataclass(frozen=True)
class ModelRank:
    """One model's place in the ranking."""

    model: str
    mean: float
    rank: int  #: by the estimate (1 = best; equal scores share the better rank)
    rank_marginal: tuple  #: (low, high), this model alone (its own pairs, both directions)
    rank_simultaneous: tuple  #: (low, high), every model at once (the report's family)
    tied_with_best: bool  #: in the confidence set for the best (its own one-sided comparisons)
    in_top_k: bool  #: in the top-k set (fewer than k models shown better by its one-sided step-down)
    p_best: float | None = None  #: posterior probability of being the best
    expected_rank: float | None = None
    rank_credible: tuple | None = None  #: (low, high) equal-tailed posterior interval of the rank
    p_is_best: float | None = None  #: p-value of "this model is the best" (in the set when ≥ 1 − level)

    def to_dict(self) -> dict:
        return {"model": self.model, "mean": self.mean, "rank": self.rank,
                "rank_marginal": list(self.rank_marginal), "rank_simultaneous": list(self.rank_simultaneous),
                "tied_with_best": self.tied_with_best, "p_is_best": self.p_is_best,
                "in_top_k": self.in_top_k, "p_best": self.p_best,
                "expected_rank": self.expected_rank,
                "rank_credible": None if self.rank_credible is None else list(self.rank_credible)}


class Ranking(ResultList):
    """Rank intervals of every model (best first); ``ranking["A"]`` looks one up."""

    key = "model"

    def __new__(cls, rows=(), *, level=0.95, top_k=3, family=None, bayes=None, best=None, show="own"):
        self = super().__new__(cls, rows)
        self.level = level
        self.top_k = top_k
        #: the family the intervals for all models come from (the report's; Decisions.to_dict())
        self.family = family or {}
        #: description of the posterior behind P(best), or None
        self.bayes = bayes
        #: how the confidence set for the best and the models' own rank intervals were computed
        self.best = best or {}
        #: the rank intervals text formats show (Options.rank_intervals)
        self.show = show
        return self

    @property
    def tied_with_best(self) -> list[str]:
        return [r.model for r in self if r.tied_with_best]

    @property
    def top_k_set(self) -> list[str]:
        return [r.model for r in self if r.in_top_k]

    def to_dict(self) -> dict:
        """The ``ranking`` block of the JSON report (``docs/methods.md`` §7.2)."""
        return {"level": self.level, "family": self.family, "best_set": self.best, "top_k": self.top_k,
                "tied_with_best": self.tied_with_best, "top_k_set": self.top_k_set,
                "bayes": self.bayes, "models": [r.to_dict() for r in self]}

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for r in self:
            d = r.to_dict()
            d["rank_marginal_low"], d["rank_marginal_high"] = d.pop("rank_marginal")
            d["rank_simultaneous_low"], d["rank_simultaneous_high"] = d.pop("rank_simultaneous")
            cred = d.pop("rank_credible") or (None, None)
            d["rank_credible_low"], d["rank_credible_high"] = cred
            rows.append({k: frame_value(v) for k, v in d.items()})
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return f"Ranking({len(self)} models; tied with the best: {', '.join(self.tied_with_best)})"


def _better(n: int, pos: dict, comps, different) -> np.ndarray:
    """``better[j, k]``: the decisions declare model j above model k."""
    better = np.zeros((n, n), bool)
    for c, d in zip(comps, different):
        if d:
            i, j = pos[c.a], pos[c.b]
            if c.diff > 0:
                better[i, j] = True
            elif c.diff < 0:
                better[j, i] = True
    return better


def _mean_covariance(view):
    """Covariance of the model means and its df (:func:`bayeserr.stats.ranking.mean_covariance`)
    from the view's sums: its own (``covariance_sums``: an engine's statistics) or the
    per-question data's."""
    from bayeserr.stats.ranking import mean_covariance
    sums = view.covariance_sums() if hasattr(view, "covariance_sums") else _view_covariance_sums(view)
    return mean_covariance(*sums)


def _view_covariance_sums(view):
    """``(n, cross, S, sizes)`` of per-question data: answered questions, the cross-products of
    the residuals over common questions (no clusters) or their cluster sums and sizes."""
    from bayeserr.stats.estimators import cluster_sums
    s, answered = view.s, view.answered
    n = answered.sum(axis=1).astype(float)
    mean = np.nansum(s, axis=1) / n
    r = np.where(answered, s - mean[:, None], 0.0)
    if view.codes is None:
        return n, r @ r.T, None, None
    return n, None, cluster_sums(r, view.codes), cluster_sums(answered.astype(float), view.codes)


def _posterior_draws(view, means, seed: int):
    """Joint draws of the mean scores: flat prior, normal likelihood with the
    clustered covariance of the means, scale uncertainty as a multivariate t
    on the smallest Bell–McCaffrey df (``docs/methods.md`` §3.10)."""
    cov, df = _mean_covariance(view)
    order = np.argsort(np.asarray(view.models, dtype=object))  # drawn in name order: any input order
    back = np.argsort(order)
    val, vec = np.linalg.eigh(((cov + cov.T) / 2)[np.ix_(order, order)])
    root = vec * np.sqrt(np.clip(val, 0.0, None))
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((BAYES_DRAWS, len(means))) @ root.T)[:, back]
    if np.isfinite(df):
        z *= np.sqrt(df / rng.chisquare(df, size=(BAYES_DRAWS, 1)))
    label = ("flat prior; normal likelihood with the CR2 covariance of the means shared through the "
             f"clusters; multivariate t on {df:.1f} df, the models' median" if np.isfinite(df) else
             "flat prior; normal likelihood with the covariance of the means over shared questions")
    return means[None, :] + z, label


def _estimate_ranks(means: np.ndarray) -> np.ndarray:
    return 1 + (means[None, :] > means[:, None]).sum(axis=1)


def pair_matrices(names, comps) -> tuple[np.ndarray, np.ndarray]:
    """``(V, z)`` of the comparisons (:func:`bayeserr.stats.best.pair_inputs`):
    ``V`` the squared paired SEs over questions (M7; they set the correlations of
    the joint law — the clustered covariance of M means has rank below the number
    of clusters, so its correlations are degenerate with few clusters), ``z`` the
    normal equivalents of the pairs' headline t on their own df."""
    from bayeserr.stats.best import pair_inputs
    pos = {name: i for i, name in enumerate(names)}
    comps = list(comps)
    return pair_inputs(len(names), [pos[c.a] for c in comps], [pos[c.b] for c in comps],
                       [c.statistic for c in comps], [np.inf if c.df is None else c.df for c in comps],
                       [c.se_paired ** 2 for c in comps])


def rank_view(view, comps, options: Options) -> Ranking:
    """The ranking of a view's models from comparisons built with
    ``compare_view(view, options, ranking=True)``: the simultaneous rank
    intervals from the report's decisions, the confidence set for the best
    and each model's own rank interval from the pairs' one-sided tests
    (:func:`bayeserr.stats.best.best_set`)."""
    from bayeserr.stats.best import best_set, covariance_from_pairs
    names = list(view.models)
    m = len(names)
    if comps.rank_decisions is None:
        raise InputError("rank_view needs comparisons built with ranking=True.")
    pos = {name: i for i, name in enumerate(names)}
    answered = view.answered
    means = np.array([np.nanmean(view.s[i][answered[i]]) for i in range(m)])
    everyone = comps.rank_decisions[0]
    top_k = min(options.top_k, m)
    low, high = rank_bounds(_better(m, pos, comps, everyone.different))
    V, z = pair_matrices(names, comps)
    best = best_set(covariance_from_pairs(V), z, level=options.level, top_k=top_k, seed=options.seed,
                    order=np.argsort(np.asarray(names, dtype=object)))
    top = best.in_top_k
    p_best = exp_rank = cred = None
    bayes = None
    if options.bayes.on:
        draws, bayes = _posterior_draws(view, means, options.seed)
        p_best, exp_rank, cred = posterior_ranks(draws, options.level)
    est = _estimate_ranks(means)
    rows = [ModelRank(names[j], float(means[j]), int(est[j]), tuple(int(x) for x in best.rank_own[j]),
                      (int(low[j]), int(high[j])), bool(best.in_set[j]), bool(top[j]),
                      None if p_best is None else float(p_best[j]),
                      None if exp_rank is None else float(exp_rank[j]),
                      None if cred is None else (int(cred[j, 0]), int(cred[j, 1])),
                      float(best.p_best[j]))
            for j in np.lexsort((np.arange(m), -means))]
    return Ranking(rows, level=options.level, top_k=top_k, family=everyone.to_dict(), bayes=bayes,
                   best={**best.to_dict(), **_cluster_summary(comps),
                         "clusters_as_strata": options.cluster_reading == "strata"},
                   show=options.rank_intervals)


def _cluster_summary(comps) -> dict:
    """The pairs' median C_eff and Bell–McCaffrey df (None without clusters)."""
    c_eff = [c.effective_clusters for c in comps if c.effective_clusters is not None]
    df = [c.df for c in comps if c.df is not None]
    return {"effective_clusters": float(np.median(c_eff)) if c_eff else None,
            "df": float(np.median(df)) if df else None}


def rank(ds, models=None, *, options: Options | None = None, **kwargs) -> Ranking:
    """Rank intervals (marginal and simultaneous), the models tied with the
    best, the top-k set and Bayesian ranks for the listed ``models``
    (default: all).  Keyword arguments are those of
    :class:`~bayeserr.registries.options.Options` (``level``, ``adjust``,
    ``top_k``, ``bayes``, ``seed``, …)."""
    from bayeserr.analyses.comparison import compare_view
    from bayeserr.stats.view import DataView
    options = Options.coerce(options, **kwargs)
    from bayeserr.analyses.comparison import ranked_names
    view = DataView.from_dataset(ds).select(models)
    view = view.select(ranked_names(view))  # the report's order: the same draws, the same numbers
    if len(view.models) < 2:
        raise InputError(f"rank needs at least two models (got {len(view.models)}). List two or more in "
                         "models=, or leave models out to rank all the models of the data.")
    from dataclasses import replace
    # the ranking reads the pairs' decisions, not their posterior P(A > B): no Bayesian pairs
    comps = compare_view(view, replace(options, bayes="off"), ranking=True)
    return rank_view(view, comps, options)
