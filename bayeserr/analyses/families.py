"""The families of pairs a report adjusts over, and their one set of decisions
(``docs/methods.md`` §3.6 and §3.9).

A *family* is the set of pairs a multiplicity adjustment covers.  It follows
the question the report answers (``--pairs``): ``vs=MODEL`` is the family of
MODEL's pairs (the model is named in advance); ``all``, ``auto`` and
``adjacent`` are all pairs (neighbours in the estimated ranking are chosen by
the data, so adjusting over them alone would not hold the error rate;
``adjacent`` only shows fewer).

Every view of a report — the pairwise table, the rank intervals, the letter
groups, the tie-zone sentence, the pairs figure and the heatmap marks — reads
the same :class:`Decisions`: a pair is *different* when its adjusted p is below
``1 − level``, in the direction of its estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.stats.simultaneous import (
    JointDraws,
    benjamini_hochberg,
    gaussian_draws,
    holm,
    joint_inference,
    wild_draws,
)


def family_rows(pairs: str, names, ia, ib) -> tuple[str, np.ndarray]:
    """``(description, rows)``: the family of a ``--pairs`` choice, as rows of
    the pair arrays ``(ia[k], ib[k])``."""
    rows = np.arange(len(ia))
    if str(pairs).startswith("vs="):
        base = str(pairs).split("=", 1)[1]
        if base not in names:
            from bayeserr.base.errors import suggest
            raise InputError(f"--pairs {pairs}: '{base}' is not a model of the report.{suggest(base, list(names))}")
        j = list(names).index(base)
        return f"vs={base}", rows[(ia == j) | (ib == j)]
    return "all", rows


_STEPWISE = {"holm": holm, "bh": benjamini_hochberg, "none": lambda p: p}


def _stepwise(p: np.ndarray, rows: np.ndarray, method: str) -> np.ndarray:
    """Holm, BH or no adjustment over ``rows``; NaN elsewhere."""
    out = np.full(len(p), np.nan)
    sel = rows[np.isfinite(p[rows])]
    if len(sel):
        out[sel] = _STEPWISE[method](p[sel])
    return out


@dataclass(frozen=True)
class Decisions:
    """One family's adjusted p-values (every adjustment), the decisions of the
    chosen one, and the simultaneous intervals."""

    family: str  #: "all" or "vs=MODEL"
    rows: np.ndarray  #: pairs in the family
    adjust: str  #: the adjustment the decisions use
    p: dict  #: adjustment -> p per pair (NaN outside the family or where undefined)
    ci_adjusted: np.ndarray  #: (pairs, 2): the intervals adjusted as the p-values are (see :func:`adjusted_intervals`)
    critical: float  #: c
    draws: JointDraws
    level: float
    one_cluster: int = 0  #: pairs in one cluster: Holm at α·m0/m for them, Romano–Wolf at α·m1/m for the rest
    #: per pair, the critical value c_k of its adjusted interval d ± c_k·SE (before the cut to [−1, 1])
    critical_pairs: np.ndarray | None = None

    @property
    def p_adjusted(self) -> np.ndarray:
        return self.p[self.adjust]

    @property
    def different(self) -> np.ndarray:
        """Declared different at ``1 − level`` (False outside the family)."""
        p = self.p_adjusted
        with np.errstate(invalid="ignore"):
            return np.isfinite(p) & (p < 1 - self.level)

    def to_dict(self) -> dict:
        return {"pairs": self.family, "size": int(len(self.rows)), "adjust": self.adjust,
                "level": self.level, "critical_value": self.critical,
                "n_different": int(self.different.sum()), "joint": self.draws.to_dict(),
                "one_cluster_pairs": int(self.one_cluster)}


@dataclass(frozen=True)
class _NoDraws:
    """Where no joint draws were made (each task's tables of a suite: Holm)."""

    min_p: float = 0.0

    def to_dict(self) -> dict:
        return {"method": "none", "weights": None, "draws": 0, "exact": False, "min_p": None}


NO_DRAWS = _NoDraws()


def _draws(arr, options, order=None):
    """The joint draws of every pair: the wild cluster bootstrap with clusters,
    the parametric (normal) bootstrap without — and when no pair's questions span
    two clusters (every question in one cluster): then each pair's test is the
    paired z (M7) and the wild bootstrap has nothing to resample."""
    if arr.totals is not None:
        D = np.concatenate(arr.totals["D"]) if arr.totals["D"] else np.zeros((0, 1))
        sizes = _pair_sizes(arr.totals, D.shape)
        if (_clusters_present(sizes) >= 2).any():
            S = arr.totals.get("S")
            return wild_draws(D, sizes, level=options.level, seed=options.seed,
                              models=None if S is None else (S, arr.ia, arr.ib))
    pm = arr.pm
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = np.where(pm.n > 0, pm.cov / pm.n, 0.0)
        np.fill_diagonal(cov, np.diag(pm.var) / np.maximum(np.diag(pm.n), 1))
    return gaussian_draws(cov, arr.ia, arr.ib, seed=options.seed, order=order)


def decide(arr, options, families: list[tuple[str, np.ndarray]], names=None, *,
           joint: bool = True) -> list[Decisions]:
    """Adjusted p-values (Romano–Wolf, Holm, BH, none) and simultaneous
    intervals of each ``(label, rows)`` family; one pass over the joint draws
    serves them all.  ``names``: the models, whose sorted order fixes the
    parametric draws (the same numbers whatever order the models come in).
    ``joint=False`` (Holm, BH or none only): no joint draws, Romano–Wolf p NaN."""
    if not joint:
        if options.adjust == "romano-wolf":
            raise ValueError("Romano–Wolf needs the joint draws")
        out = []
        for label, rows in families:
            p = {m: _stepwise(arr.p, rows, m) for m in ("holm", "bh", "none")}
            p["romano-wolf"] = np.full(len(arr.p), np.nan)
            ci, crit_used = adjusted_intervals(arr, rows, options.adjust, options.level, None, p["bh"])
            out.append(Decisions(label, rows, options.adjust, p, ci, float("nan"), NO_DRAWS, options.level,
                                 critical_pairs=crit_used))
        return out
    blocks, info = _draws(arr, options, None if names is None else np.argsort(np.asarray(names, dtype=object)))
    # pairs whose questions lie in one cluster (tested by the paired z, no wild draws) beside pairs with
    # wild draws: Romano–Wolf over the clustered ones at α·m1/m, Holm over the others at α·m0/m — a
    # Bonferroni split of α, valid whatever the dependence (docs/methods.md §3.9)
    single = _single_cluster_rows(arr) if info.method == "wild_cluster" else np.zeros(len(arr.p), bool)
    subs = [rows[~single[rows]] for _, rows in families]
    joint = joint_inference(arr.statistic, arr.df, blocks, info.draws, subs, options.level,
                            decide_only=range(1, len(families)))
    out = []
    for k, ((label, rows), res) in enumerate(zip(families, joint)):
        p = {m: _stepwise(arr.p, rows, m) for m in ("holm", "bh", "none")}
        p["romano-wolf"] = np.full(len(arr.p), np.nan)
        ones = rows[single[rows] & np.isfinite(arr.p[rows])]
        m1, m0 = len(res.rows), len(ones)
        scale = (m1 + m0) / m1 if m1 else 1.0
        p["romano-wolf"][res.rows] = np.minimum(res.p_adjusted * scale, 1.0)
        crit, critical = res.critical_t, res.critical
        if m0:
            p["romano-wolf"][ones] = np.minimum(_STEPWISE["holm"](arr.p[ones]) * (m1 + m0) / m0, 1.0)
            if k == 0 and options.adjust == "romano-wolf":  # the intervals at the split levels
                crit, critical = _split_critical(arr, blocks, info, res.rows, ones, options.level)
        # a family is never more lenient than its pairs alone: the adjusted p at least the pair's own,
        # the simultaneous interval at least its own (with one pair and few clusters the bootstrap's
        # tails are lighter than the t's: docs/methods.md §3.9)
        rw = p["romano-wolf"]
        p["romano-wolf"] = np.where(np.isfinite(rw), np.maximum(rw, np.nan_to_num(arr.p, nan=0.0)), rw)
        ci, crit_used = adjusted_intervals(arr, rows, options.adjust, options.level, crit, p["bh"])
        out.append(Decisions(label, rows, options.adjust, p, ci, critical, info, options.level, m0, crit_used))
    return out


def _split_critical(arr, blocks, info, multi, ones, level):
    """Per-row critical values when a family is split: the clustered pairs' simultaneous
    critical value at level 1 − α·m1/m (from the joint draws), the one-cluster pairs'
    Bonferroni value at α/m (Holm's first step over the whole family)."""
    from bayeserr.stats.distributions import norm_isf, t_isf
    alpha, m = 1 - level, len(multi) + len(ones)
    crit = np.full(len(arr.p), np.nan)
    critical = float("nan")
    if len(multi):
        res = joint_inference(arr.statistic, arr.df, blocks, info.draws, [multi], 1 - alpha * len(multi) / m)[0]
        crit[multi] = res.critical_t[multi]
        critical = res.critical
    df = arr.df[ones]
    crit[ones] = np.where(np.isfinite(df), t_isf(alpha / m / 2, np.where(np.isfinite(df), df, 1.0)),
                          norm_isf(alpha / m / 2))
    return crit, critical


def _single_cluster_rows(arr) -> np.ndarray:
    """Per pair: its common questions lie in fewer than two clusters (no wild draws)."""
    out = np.zeros(len(arr.p), bool)
    if arr.totals is None or not arr.totals["sizes"]:
        return out
    out[:] = _clusters_present(_pair_sizes(arr.totals, (len(out), arr.totals["sizes"][0].shape[-1]))) < 2
    return out


def _pair_sizes(totals, shape) -> np.ndarray:
    """Every pair's cluster sizes, (P, C).  With complete data each chunk is one row of
    sizes broadcast (stride 0): then a broadcast view of that row, not a P × C copy."""
    parts = totals["sizes"]
    if not parts:
        return np.zeros(shape)
    first = parts[0][:1]
    if all(p.strides[0] == 0 and np.array_equal(p[:1], first) for p in parts):
        return np.broadcast_to(first, shape)
    return np.broadcast_to(np.concatenate(parts), shape)


def _clusters_present(sizes) -> np.ndarray:
    """Clusters with questions, per row of ``sizes``; counted once for a broadcast row."""
    from bayeserr.stats.fewclusters import shared_row
    return np.broadcast_to((shared_row(sizes) > 0).sum(axis=1), sizes.shape[:1])


def adjusted_intervals(arr, rows, adjust: str, level: float, critical_t, p_bh) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of the family's pairs adjusted as its p-values are, so that an
    interval excluding 0 always belongs to a pair declared different:
    Romano–Wolf, d ± c_k·SE from the joint ``max |t|`` (simultaneous), and never
    narrower than the pair's own interval; Holm, the Bonferroni interval at α/m
    (simultaneous; Holm's first step); BH, the Benjamini–Yekutieli (2005)
    false-coverage-rate interval at R·α/m (R pairs declared; it excludes 0
    exactly for them); none, the pair's own interval.  Scores lie in [0, 1], so a
    difference of two means lies in [−1, 1]: the intervals are cut there (with
    few clusters a simultaneous t can be enormous — EvalPerf's 2 clusters give
    ±10⁵ points — and the cut only removes impossible values).  Returns
    ``(intervals, c)``: the cut intervals and each pair's critical value ``c_k``
    (the uncut interval is ``d ± c_k·SE``); NaN outside the family."""
    from bayeserr.stats.distributions import norm_isf, t_isf
    alpha, m = 1 - level, max(len(rows), 1)

    def critical(share):
        return np.where(np.isfinite(arr.df), t_isf(share / 2, np.where(np.isfinite(arr.df), arr.df, 1.0)),
                        norm_isf(share / 2))
    if adjust == "romano-wolf":
        crit = np.fmax(critical_t, critical(alpha)) if critical_t is not None else critical(alpha)
    else:
        share = {"holm": alpha / m, "none": alpha,
                 "bh": alpha * max(int(np.sum(p_bh[rows] < alpha)), 1) / m}[adjust]
        crit = critical(share)
    inside = np.zeros(len(arr.diff), bool)
    inside[rows] = True
    crit = np.where(inside, crit, np.nan)
    with np.errstate(invalid="ignore"):  # no critical value (empty family) or no SE: NaN
        half = crit * arr.se_head
        return np.clip(np.stack([arr.diff - half, arr.diff + half], axis=-1), -1.0, 1.0), crit
