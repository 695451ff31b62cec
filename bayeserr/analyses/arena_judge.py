"""Judge-corrected arena ratings: prediction-powered Bradley–Terry (``docs/methods.md`` §5.5.1).

An LLM judge gives a verdict on every comparison *item* (one pair of answers
to one prompt: ``--item-col``, e.g. ``pair_id``); people (a crowd) voted on a
subset of the items, the *labelled* items.  The estimand is the Bradley–Terry
fit of the *human* verdicts over the population of items; the judge is used
for precision only, and its bias is corrected with the labelled items (PPI++
for M-estimators: Angelopoulos, Duchi & Zrnic 2023; PPI: Angelopoulos et al.,
Science 2023).

Per item i (models a_i, b_i): the human share ``y_i`` (the mean of the item's
human votes for a_i, a tie counting ½; NaN where unlabelled) and the judge
share ``f_i`` (the mean of its judge verdicts).  The item loss is the
Bradley–Terry log-loss ``ℓ_i(s; y) = −y log σ(s_a − s_b) − (1 − y) log σ(s_b − s_a)``.
With L the n labelled items and U the N others (the *rest*, as in
:mod:`bayeserr.stats.ppi`), the PPI++ loss is::

    L_λ(s) = Σ_L ℓ_i(s; y_i)/n + λ [Σ_U ℓ_j(s; f_j)/N − Σ_L ℓ_i(s; f_i)/n]

Every ℓ is linear in its (half-)win matrix, so ``n·L_λ`` is the Bradley–Terry
negative log-likelihood of the *effective win matrix*::

    W_λ = W_h,L + λ (n/N · W_f,U − W_f,L)

(:func:`effective_wins`), fitted by the arena's own Newton fitter
(:func:`~bayeserr.analyses.arena.fit_strengths`) with its groups, cores,
ridge and Elo scale.  Entries of ``W_λ`` may be negative (a pair whose judge
verdicts on labelled items the crowd overturned); the loss stays convex while
every pair's total weight ``W_ij + W_ji`` is ≥ 0, since a pair's term has
second derivative ``(W_ij + W_ji) σ(d)σ(−d)`` in ``d = s_i − s_j``.  For
0 ≤ λ ≤ 1 the total is ``(1 − λ) c_L + λ (n/N) c_U ≥ 0`` (``c``: the pair's
items), so convexity never fails there; a fixed λ outside [0, 1] is checked
(:func:`check_convex`) and refused when it fails.

λ̂ is PPI++'s trace-optimal power tuning (:func:`tuned_lambda`); intervals
come from a bootstrap that resamples labelled and unlabelled items separately
(or whole clusters), re-fitting the corrected, human-only and judge-only
ratings on each resample; the sandwich (asymptotic) SE is reported beside
them (:func:`sandwich_cov`).  Per-model win rates are corrected with
:func:`bayeserr.stats.ppi.ppi_mean`.

Assumption: the labelled items are a uniformly random subset of the items.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayeserr.analyses import arena as ar
from bayeserr.base.caveat import Caveat
from bayeserr.base.errors import InputError, describe, row_list, suggest
from bayeserr.base.jsonable import as_float
from bayeserr.data.dataset import RowAccount
from bayeserr.stats import ppi
from bayeserr.stats.bradley_terry import (  # noqa: F401 (the PPI fit's pieces: this module's API too)
    DIVERGED,
    PPIFit,
    bounded_fit,
    check_convex,
    check_lam,
    effective_wins,
    fit_centred,
    fit_ppi,
    item_map,
    replicate,
    sandwich_cov,
    small_blas,
    structure,
    tuned_lambda,
)

#: fewer labelled items than this for a model: a warning (its corrected rating leans on few labels)
FEW_LABELS = 10


# ------------------------------------------------------------------ items
@dataclass(frozen=True)
class JudgedItems:
    """Comparison items with the judge's and the humans' verdicts (:func:`load_judged`).

    ``a < b`` are model codes (sorted names); ``human`` and ``judge`` are the
    share of a's wins on the item (ties ½), averaged over its votes; ``human``
    is NaN on unlabelled items.  ``cluster`` codes index ``clusters`` (None
    without a cluster column).
    """

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    human: np.ndarray
    judge: np.ndarray
    n_human_votes: np.ndarray
    n_judge_votes: np.ndarray
    cluster: np.ndarray | None
    clusters: tuple
    rows: RowAccount
    source: str = ""
    human_label: str = "human"
    judge_label: str = "judge"
    judge_col: str = ""

    @property
    def labelled(self) -> np.ndarray:
        return ~np.isnan(self.human)


def _text_values(df: pd.DataFrame, col: str, lines: np.ndarray):
    """The column's values as text on the given data rows (1-based), and which are blank."""
    col_text = ar._Text(df[col])
    return np.asarray(col_text.labels, dtype=object)[col_text.codes[lines - 1]], col_text.blank()[lines - 1]


def _check_column_name(arg, value, optional=False):
    if (value is None and not optional) or (value is not None and (not isinstance(value, str) or not value.strip())):
        raise InputError(f"{arg} takes a column name (text){' or None' if optional else ''}; got {describe(value)}.")


def _check_value(arg, value):
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Real)) or not str(value).strip():
        raise InputError(f"{arg} takes one value of the judge column (e.g. {'crowd' if arg == 'human' else 'gpt-4'}); "
                         f"got {describe(value)}.")
    return str(value).strip()


def load_judged(source, *, judge_col: str, human, judge, item_col: str = "pair_id",
                model_a_col="model_a", model_b_col="model_b", winner_col="winner", cluster_col=None,
                where=None, name=None) -> JudgedItems:
    """Read votes of two kinds, human and judge (``judge_col`` = ``human`` or ``judge``), and pool
    them into comparison items (``item_col``).

    Rows of other kinds count as dropped; every other check is
    :func:`~bayeserr.analyses.arena.load_votes`'.  Errors (naming rows or
    items): an empty item id, an item whose votes are on different pairs of
    models or in different clusters, an item with human votes but no judge
    verdict, and no labelled item at all.
    """
    # size: the public API's keyword options, each documented above
    from bayeserr.data.tables import read_table
    for arg, value in (("judge_col", judge_col), ("item_col", item_col)):
        _check_column_name(arg, value)
    human, judge = _check_value("human", human), _check_value("judge", judge)
    if human == judge:
        raise InputError(f"the human and judge values are the same ('{human}'); give the value of "
                         f"'{judge_col}' that marks human votes and the one that marks the judge's.")
    where = dict(where or {})
    if judge_col in where:
        raise InputError(f"--where on '{judge_col}' conflicts with --human/--judge, which choose its values; "
                         "drop that --where.")
    if isinstance(source, pd.DataFrame):
        df, label = source.reset_index(drop=True), name or "DataFrame"
    elif isinstance(source, (str, os.PathLike)):
        label = name or str(source)
        text_cols = (model_a_col, model_b_col, judge_col, item_col) + ((cluster_col,) if cluster_col else ()) \
            + tuple(where)
        df = read_table(source, id_columns=tuple(c for c in text_cols if isinstance(c, str)))
    else:
        raise InputError(f"load_judged takes the path of a votes file or a pandas DataFrame; got {describe(source)}.")
    for c in (judge_col, item_col):
        if c not in df.columns:
            raise InputError(f"{label}: no column '{c}'.{suggest(c, df.columns)} "
                             f"Columns present: {', '.join(map(str, df.columns))}.")
    votes = ar.load_votes(df, model_a_col=model_a_col, model_b_col=model_b_col, winner_col=winner_col,
                          cluster_col=cluster_col, where={**where, judge_col: [human, judge]}, name=label)
    line = votes.line
    is_human = ar._Text(df[judge_col]).matches(human)[line - 1]
    item_text, blank = _text_values(df, item_col, line)
    ar._fail(label, np.sort(line), blank[np.argsort(line)], f"the item id is empty (column '{item_col}')",
             "Give every vote the id of the comparison it judges (the same id for the human votes and the "
             "judge's verdict on one pair of answers), or remove those rows.")
    item_labels, item = np.unique(item_text.astype(str), return_inverse=True)
    k = item_labels.size
    lo, hi = np.minimum(votes.a, votes.b), np.maximum(votes.a, votes.b)
    share = np.where(votes.a == lo, votes.win_a, 1 - votes.win_a)  # the share of the item's first model

    order = np.argsort(line, kind="stable")
    first_row = order[np.unique(item[order], return_index=True)[1]]  # each item's first vote in the file

    def _per_item_constant(x, what, fix):
        first = x[first_row]
        bad = x != first[item]
        if bad.any():
            items = [item_labels[i] for i in np.unique(item[bad])]
            rows = np.sort(line[np.isin(item, np.unique(item[bad]))])
            raise InputError(f"{label}: {len(items)} item(s) of '{item_col}' have votes {what} (items "
                             f"{', '.join(items[:5])}{' …' if len(items) > 5 else ''}; data rows "
                             f"{row_list(rows)}). {fix}")
        return first

    a = _per_item_constant(lo, "on different pairs of models",
                           f"An item is one comparison of two answers: give each its own '{item_col}'.")
    b = _per_item_constant(hi, "on different pairs of models",
                           f"An item is one comparison of two answers: give each its own '{item_col}'.")
    cluster = None
    if votes.cluster is not None:
        cluster = _per_item_constant(votes.cluster, f"in different clusters ('{cluster_col}')",
                                     "Every vote on one item must carry the item's cluster (e.g. its prompt).")
    nh = np.bincount(item, weights=is_human, minlength=k)
    nj = np.bincount(item, weights=~is_human, minlength=k)
    y = np.bincount(item, weights=share * is_human, minlength=k)
    f = np.bincount(item, weights=share * ~is_human, minlength=k)
    if not (nj > 0).any():
        raise InputError(f"{label}: no votes have {judge_col}={judge}. Give the judge's value of '{judge_col}'.")
    orphan = (nh > 0) & (nj == 0)
    if orphan.any():
        items = item_labels[orphan]
        rows = np.sort(line[np.isin(item, np.flatnonzero(orphan))])
        raise InputError(f"{label}: {items.size} item(s) have {human} votes but no {judge} verdict (items "
                         f"{', '.join(items[:5])}{' …' if items.size > 5 else ''}; data rows {row_list(rows)}). "
                         f"The correction needs the judge on every item: add the judge's verdicts, or remove "
                         "those items.")
    if not (nh > 0).any():
        raise InputError(f"{label}: no item has {human} votes, so nothing says how the judge differs from "
                         f"the humans. Give the value of '{judge_col}' that marks human votes (--human), "
                         "and human votes on a random subset of the items.")
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(nh > 0, y / nh, np.nan)
        f = f / nj
    return JudgedItems(votes.models, a, b, y, f, nh.astype(np.int64), nj.astype(np.int64), cluster,
                       votes.clusters, votes.rows, label, human, judge, judge_col)






























# ------------------------------------------------------------------ the result
#: λ below this is read as "≈ 0": the corrected ratings are essentially the human-only fit
NEGLIGIBLE_LAMBDA = 0.01


@dataclass(frozen=True)
class ArenaJudgeSummary:
    """The answer of a judge-corrected arena in one place (:attr:`JudgeRatings.summary`): the
    leader by the corrected ratings, the models tied with it (their rank interval includes 1:
    :meth:`~bayeserr.analyses.arena.Ratings.tied_with_best`), the judge's own leader and its
    corrected rank, how far the judge-only ratings are from the human-only ones, and λ."""

    leader: str
    rating: float                 #: the leader's corrected rating (Elo)
    interval: tuple               #: its bootstrap interval
    tied_with_best: tuple         #: models whose corrected rank interval includes 1 (leader's group)
    judge_leader: str             #: the judge-only fit's leader
    judge_leader_rank: int        #: its rank by the corrected ratings (within its group)
    judge_leader_rank_interval: tuple
    judge_vs_human: float         #: mean absolute judge-only minus human-only rating (Elo), aligned on the models both rate
    n_compared: int               #: models in that mean
    lam: float
    lam_tuned: bool
    effective_labels: float
    labels_worth: float           #: effective_labels − labelled items (NaN: not measured)
    judge_added_nothing: bool     #: λ ≈ 0, or the judge did not narrow the intervals (worth < 1 item)
    n_groups: int

    def to_dict(self) -> dict:
        f = ppi.as_float
        return {"leader": self.leader, "rating": f(self.rating), "interval": [f(v) for v in self.interval],
                "tied_with_best": list(self.tied_with_best),
                "tie_rule": "corrected rank interval includes 1 (within the leader's group)",
                "judge_leader": self.judge_leader, "judge_leader_rank": self.judge_leader_rank,
                "judge_leader_rank_interval": [int(v) for v in self.judge_leader_rank_interval],
                "judge_vs_human_mean_abs_elo": f(self.judge_vs_human), "models_compared": self.n_compared,
                "lambda": f(self.lam), "lambda_tuned": self.lam_tuned, "effective_labels": f(self.effective_labels),
                "labels_worth": f(self.labels_worth), "judge_added_nothing": self.judge_added_nothing,
                "groups": self.n_groups}


@dataclass(frozen=True)
class JudgeRatings:
    """Judge-corrected Bradley–Terry ratings (:func:`rate_judged`; ``docs/methods.md`` §5.5.1).

    ``corrected`` is a :class:`~bayeserr.analyses.arena.Ratings` (Elo scale,
    bootstrap and rank intervals) for the *human* ratings; ``human_only`` the
    same fit on the labelled items' human votes alone; ``judge_only`` the judge's
    verdicts on every item (it estimates the *judge's* ratings, not the humans').
    """

    corrected: object            #: Ratings
    human_only: object           #: Ratings (labelled items, human votes)
    judge_only: object           #: Ratings (every item, judge verdicts)
    se: np.ndarray               #: sandwich SE of the corrected rating (Elo), NaN where not identified
    lam: float
    lam_raw: float
    lam_tuned: bool
    n_labelled: int
    n_unlabelled: int
    n_labelled_per_model: np.ndarray
    n_items_per_model: np.ndarray
    effective_labels: float          #: n × median over models of (width human-only / width corrected)²
    win_rates: tuple             #: per model: ppi.PPIMean or None (fewer than 2 labelled items)
    human_label: str
    judge_label: str
    judge_col: str
    warnings: tuple = ()
    rows: RowAccount | None = None
    source: str = ""
    multiple_human_votes: int = 0  #: items with more than one human vote (averaged)
    multiple_judge_votes: int = 0  #: items with more than one judge verdict (averaged)
    draws: np.ndarray | None = field(default=None, repr=False)

    @property
    def models(self) -> tuple:
        return self.corrected.models

    @property
    def level(self) -> float:
        return self.corrected.level

    @property
    def summary(self) -> ArenaJudgeSummary:
        """The leader, the models tied with it, the judge's own leader, the judge-only ratings'
        distance from the human-only ones and what λ amounted to."""
        r = self.corrected
        lead, tied = r.tied_with_best()
        frame = r.to_frame().set_index("model")
        jl = self.models[int(self.judge_only.order()[0])]
        h, j = self.human_only, self.judge_only
        both = h.identified & j.identified & np.isfinite(h.rating) & np.isfinite(j.rating)
        d = j.rating[both] - h.rating[both]
        gap = float(np.mean(np.abs(d - d.mean()))) if both.any() else math.nan  # ratings: up to a constant
        worth = self.effective_labels - self.n_labelled
        nothing = self.n_unlabelled < 2 or self.lam_negligible or not worth >= 1
        return ArenaJudgeSummary(self.models[lead], float(r.rating[lead]), tuple(map(float, r.interval[lead])),
                                 tuple(self.models[i] for i in tied), jl, int(frame.loc[jl, "rank"]),
                                 (int(frame.loc[jl, "rank_low"]), int(frame.loc[jl, "rank_high"])), gap,
                                 int(both.sum()), self.lam, self.lam_tuned, self.effective_labels, worth, nothing,
                                 r.n_groups)

    @property
    def lam_negligible(self) -> bool:
        """λ below :data:`NEGLIGIBLE_LAMBDA`: the judge's verdicts carry (almost) no weight."""
        return self.lam < NEGLIGIBLE_LAMBDA

    def __repr__(self) -> str:
        return (f"JudgeRatings({self.source!r}: {len(self.models)} models, judge {self.judge_label!r} "
                f"corrected by {self.n_labelled} {self.human_label!r}-labelled items, λ = {self.lam:.3f})")

    def _repr_html_(self) -> str:
        from bayeserr.renderers.arena import judge_ratings_blocks
        from bayeserr.renderers.html import render_blocks
        return render_blocks(judge_ratings_blocks(self), fragment=True)

    def to_frame(self) -> pd.DataFrame:
        """One row per model (corrected order): the corrected rating, interval, rank interval and
        sandwich SE, the human-only and judge-only fits, and the corrected win rate."""
        df = self.corrected.to_frame()
        idx = [self.models.index(m) for m in df["model"]]
        df["se"] = self.se[idx]
        for key, r in (("human_only", self.human_only), ("judge_only", self.judge_only)):
            df[key], df[f"{key}_low"], df[f"{key}_high"] = r.rating[idx], r.interval[idx, 0], r.interval[idx, 1]
        df["n_items"], df["n_labelled"] = self.n_items_per_model[idx], self.n_labelled_per_model[idx]
        for key, attr in (("win_rate", "ppi"), ("win_rate_human_only", "classical"),
                          ("win_rate_judge_only", "judge_only")):
            ivs = [None if self.win_rates[i] is None else getattr(self.win_rates[i], attr) for i in idx]
            df[key] = [np.nan if v is None else v.estimate for v in ivs]
            df[f"{key}_low"] = [np.nan if v is None else v.lower for v in ivs]
            df[f"{key}_high"] = [np.nan if v is None else v.upper for v in ivs]
        return df.drop(columns="n_votes")

    def to_dict(self) -> dict:
        base = self.corrected.to_dict()
        out = {"schema": "bayeserr.arena_judge/1", "summary": self.summary.to_dict(), "level": self.level,
               "scale": base["scale"],
               "ties": base["ties"], "bootstrap": base["bootstrap"], "rows": base["rows"],
               "judge": {"column": self.judge_col, "human": self.human_label, "judge": self.judge_label},
               "items": {"labelled": self.n_labelled, "unlabelled": self.n_unlabelled,
                         "multiple_human_votes": self.multiple_human_votes,
                         "multiple_judge_votes": self.multiple_judge_votes,
                         "pooling": "votes on one item are averaged (a tie counts half)"},
               "lambda": {"value": self.lam, "raw": as_float(self.lam_raw), "tuned": self.lam_tuned},
               "effective_labels": as_float(self.effective_labels), "groups": base["groups"]}
        models = []
        for entry in base["models"]:
            i = self.models.index(entry["model"])
            entry.pop("bayes_interval")
            n_votes = entry.pop("n_votes")
            wr = self.win_rates[i]
            models.append({**entry, "se": as_float(self.se[i]), "n_items": int(self.n_items_per_model[i]),
                           "n_labelled": int(self.n_labelled_per_model[i]), "n_votes": n_votes,
                           "human_only": _fit_dict(self.human_only, i), "judge_only": _fit_dict(self.judge_only, i),
                           "win_rate": None if wr is None else wr.to_dict()})
        out["models"] = models
        out["win_probability"] = base["win_probability"]
        out["not_separable"] = base["not_separable"]
        out["warnings"] = [w.to_dict() for w in self.warnings]
        return out


def _fit_dict(r, i) -> dict:
    return {"rating": as_float(r.rating[i]), "interval": [as_float(v) for v in r.interval[i]],
            "identified": bool(r.identified[i]) and bool(np.isfinite(r.rating[i]))}


# ------------------------------------------------------------------ rating
def _check_items(items) -> JudgedItems:
    if not isinstance(items, JudgedItems):
        raise InputError(f"rate_judged takes the items from load_judged(...); got {describe(items)}.")
    return items


def _resample(rng, labelled, cluster, by, n_clusters):
    """Bootstrap weights per item: labelled and unlabelled items resampled separately
    (multinomial counts within each set), or whole clusters (their items, both kinds)."""
    k = labelled.size
    if by == "cluster":
        return rng.multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters)).astype(float)[cluster]
    w = np.zeros(k)
    for sel in (labelled, ~labelled):
        idx = np.flatnonzero(sel)
        if idx.size:
            w[idx] = rng.multinomial(idx.size, np.full(idx.size, 1 / idx.size))
    return w


def _win_rates(items: JudgedItems, codes, level):
    out, failed = [], []
    for j, name in enumerate(items.models):
        on = (items.a == j) | (items.b == j)
        own = lambda x: np.where(items.a[on] == j, x[on], 1 - x[on])  # noqa: E731
        try:
            out.append(ppi.ppi_mean(own(items.human), own(items.judge), None if codes is None else codes[on],
                                    level=level))
        except InputError as exc:
            out.append(None)
            failed.append(f"{name} ({str(exc).split('(')[0].strip()})")
    return tuple(out), failed


def check_judged(items: JudgedItems, *, lam=None, bootstrap: int = 1000, by: str = "items", level: float = 0.95,
                 seed: int = 0):
    """Every argument of :func:`rate_judged` checked, and the full-data fit made (it is what
    refuses a λ that breaks convexity), before any bootstrap work: ``(items, bootstrap, by,
    level, seed, fit, caveats)``.  The command line calls it before its progress bar, so a
    bad value is one error line."""
    from bayeserr.base.registry import check_level, check_range
    items = _check_items(items)
    lam = check_lam(lam)
    bootstrap = check_range("--bootstrap", bootstrap, 1, integer=True)
    level = check_level(level)
    seed = None if seed is None else check_range("--seed", seed, 0, integer=True)
    by = "items" if by == "votes" else by
    if by not in ("items", "cluster"):
        raise InputError(f"--bootstrap-by must be items (votes) or cluster with a judge (got '{by}').")
    caveats = []
    if by == "cluster":
        if items.cluster is None:
            raise InputError("--bootstrap-by cluster needs a cluster column (--cluster-col).")
        if len(items.clusters) < 2:
            raise InputError(f"{items.source}: every item is in one cluster, so a cluster bootstrap cannot vary; "
                             "use --bootstrap-by items or a finer cluster column.")
    caveats += ar.cluster_caveats(len(items.clusters) if by == "cluster" else None, items.cluster is not None,
                                  "items")
    fit = fit_ppi(len(items.models), items.a, items.b, items.human, items.judge, items.labelled, lam)
    return items, bootstrap, by, level, seed, fit, caveats


def rate_judged(items: JudgedItems, *, lam=None, bootstrap: int = 1000, by: str = "items", level: float = 0.95,
                seed: int = 0, progress=None) -> JudgeRatings:
    """Judge-corrected Bradley–Terry ratings (``docs/methods.md`` §5.5.1).

    ``lam``: None for the tuned λ̂ (clipped to [0, 1]), else fixed (0: the labelled
    human votes alone; 1: plain PPI).  ``by``: ``"items"`` resamples labelled and
    unlabelled items separately, ``"cluster"`` whole clusters (``votes`` is taken as
    ``items``).  Each resample re-fits the corrected ratings (λ held at its
    full-data value), the human-only and the judge-only fits.
    """
    items, bootstrap, by, level, seed, fit, caveats = check_judged(items, lam=lam, bootstrap=bootstrap, by=by,
                                                                   level=level, seed=seed)
    m, a, b = len(items.models), items.a, items.b
    y, f, lab = items.human, items.judge, items.labelled
    n, N = int(lab.sum()), int((~lab).sum())
    if N < 2:
        caveats.append(Caveat("all_items_labelled", None, (
            f"{'every item is' if N == 0 else 'all but one item are'} labelled by {items.human_label}: the judge "
            "adds nothing, so the corrected ratings are the human-only ones (λ = 0).")))
    maps = {key: item_map(m, a, b, x) for key, x in (("h", y), ("f", f))}

    def wins(key, weight):
        return (maps[key] @ weight).reshape(m, m)

    ones = np.ones(a.size)
    w_h, w_f = wins("h", ones * lab), wins("f", ones)
    fits = {"ppi": (fit.wins, fit.s)}
    for key, w in (("human", w_h), ("judge", w_f)):
        fits[key] = (w, fit_centred(w))
    structures = {key: structure(w) for key, (w, _) in fits.items()}
    rng = np.random.default_rng(seed)
    draws = {key: np.empty((bootstrap, m)) for key in fits}
    absent = {key: np.zeros(m, dtype=np.int64) for key in fits}
    loose = {key: np.zeros(m, dtype=np.int64) for key in fits}
    n_clusters = len(items.clusters)
    shrunk = 0
    with small_blas(m):
        for r in range(bootstrap):
            w = _resample(rng, lab, items.cluster, by, n_clusters)
            wl, wu = w * lab, w * ~lab
            nb, Nb = wl.sum(), wu.sum()
            resampled = {"human": wins("h", wl), "judge": wins("f", w)}
            resampled["ppi"] = effective_wins(resampled["human"], wins("f", wl), wins("f", wu), nb, Nb, fit.lam)
            for key, (_, start) in fits.items():
                if nb == 0 and key != "judge":  # a cluster resample without a labelled item
                    draws[key][r], gone = np.nan, np.ones(m, dtype=bool)
                    absent[key] += gone
                    continue
                draws[key][r], gone, unid = replicate(resampled[key], start, structures[key])
                if key == "ppi" and np.nanmax(np.abs(draws[key][r]), initial=0.0) >= DIVERGED:
                    wl_f, wu_f = wins("f", wl), wins("f", wu)
                    shrunk += 1
                    w_ok = bounded_fit(resampled["human"], wl_f, wu_f, nb, Nb, fit.lam / 2)[1]
                    draws[key][r], gone, unid = replicate(w_ok, start, structures[key])
                absent[key] += gone
                loose[key] += unid
            if progress is not None:
                progress(1)
    if fit.lam_shrunk:
        caveats.append(Caveat("lambda_shrunk", None, (
            f"with λ = {fit.lam_raw:.3g} the corrected loss has no minimum (a negative effective win outweighs "
            f"the rest for some model: the judge's verdicts on its few labelled items were overturned), so λ "
            f"was halved to {fit.lam:.3g}.")))
    if shrunk:
        caveats.append(Caveat("lambda_shrunk_in_bootstrap", None, (
            f"in {shrunk} of {bootstrap} bootstrap resamples ({shrunk / bootstrap:.1%}) the corrected loss had no "
            "minimum at λ and λ was halved for that resample; many such resamples make the intervals rough "
            "(label more items, or fix a smaller λ).")))
    n_items = np.bincount(a, minlength=m) + np.bincount(b, minlength=m)
    n_lab = np.bincount(a[lab], minlength=m) + np.bincount(b[lab], minlength=m)
    out = {}
    for key, (w, s) in fits.items():
        st = structures[key]
        notes = ar._structure_caveats(items.models, w, st) if key == "ppi" else []
        if key == "ppi":
            notes += ar._bootstrap_caveats(items.models, absent[key], loose[key], st, bootstrap)
        count = n_lab if key == "human" else n_items
        s = np.where(count > 0, s, np.nan) if key == "human" else s
        out[key] = ar.summarise(items.models, s, draws[key], st, count, level=level, by=by, rows=items.rows,
                                source=items.source, caveats=notes)
    st = structures["ppi"]
    se = np.full(m, np.nan)
    try:
        cov = sandwich_cov(fit.s, a, b, y, f, lab, fit.lam)
        se = np.where(st.core, ar.ELO_SCALE * np.sqrt(np.clip(np.diag(cov), 0, None)), np.nan)
    except np.linalg.LinAlgError:  # pragma: no cover - pinv of a symmetric matrix
        pass
    width = {key: np.diff(out[key].interval, axis=1)[:, 0] for key in ("ppi", "human")}
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (width["human"] / width["ppi"]) ** 2
    ok = np.isfinite(ratio) & st.core & (n_lab > 0)
    effective_labels = float(n * np.median(ratio[ok])) if ok.any() and N >= 2 else math.nan
    codes = items.cluster if by == "cluster" else None
    win_rates, failed = _win_rates(items, codes, level)
    if failed:
        caveats.append(Caveat("no_corrected_win_rate", None, (
            "no corrected win rate for " + "; ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5
                                                                    else "") + ".")))
    few = [items.models[j] for j in range(m) if 0 < n_lab[j] < FEW_LABELS] + \
          [items.models[j] for j in range(m) if n_lab[j] == 0]
    if few:
        caveats.append(Caveat("few_labelled_items", None, (
            f"{len(few)} model(s) have fewer than {FEW_LABELS} labelled items ({', '.join(few[:5])}"
            f"{' …' if len(few) > 5 else ''}): their correction rests on few human votes, so their corrected "
            "intervals are wide and their bootstrap rough; label more of their items.")))
    from bayeserr.analyses.judge import _selection_p
    p = _selection_p(np.abs(f - 0.5), lab)
    if p is not None and p < 0.01 and n >= 20:
        caveats.append(Caveat("labelled_subset_not_random", None, (
            f"the labelled items differ from the unlabelled ones in how decisive the judge was (Welch p = {p:.2g}): "
            "the labelled subset looks chosen, not random, and the correction assumes a random subset; label a "
            "uniformly random sample of the items.")))
    corrected = out["ppi"]
    corrected = replace(corrected, warnings=corrected.warnings + tuple(caveats))
    return JudgeRatings(corrected, out["human"], out["judge"], se, fit.lam, fit.lam_raw, fit.lam_tuned, n, N,
                        n_lab, n_items, effective_labels, win_rates, items.human_label, items.judge_label,
                        items.judge_col, corrected.warnings, items.rows, items.source,
                        int((items.n_human_votes > 1).sum()), int((items.n_judge_votes > 1).sum()),
                        draws["ppi"])


def arena_judge(source, *, judge_col: str, human, judge, item_col: str = "pair_id", lam=None,
                bootstrap: int = 1000, by: str = "items", level: float = 0.95, seed: int = 0,
                model_a_col="model_a", model_b_col="model_b", winner_col="winner", cluster_col=None,
                where=None, name=None, progress=None) -> JudgeRatings:
    """Judge-corrected arena ratings from a votes file or DataFrame (``docs/methods.md`` §5.5.1)::

        bayeserr.arena_judge("votes.csv.gz", judge_col="judge_type", human="crowd", judge="gpt-4")

    The human votes (``judge_col == human``) on a random subset of the comparison
    items correct the judge's verdicts (``judge_col == judge``) on every item; the
    result holds the corrected ratings beside the human-only and judge-only fits."""
    # size: the public API's keyword options, each documented above
    items = load_judged(source, judge_col=judge_col, human=human, judge=judge, item_col=item_col,
                        model_a_col=model_a_col, model_b_col=model_b_col, winner_col=winner_col,
                        cluster_col=cluster_col, where=where, name=name)
    return rate_judged(items, lam=lam, bootstrap=bootstrap, by=by, level=level, seed=seed, progress=progress)
