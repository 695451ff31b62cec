"""Arena-style ratings from pairwise votes: Bradley–Terry (SPEC §5.5).

Model: ``P(i beats j) = σ(s_i − s_j)``.  **Ties count as half a win for each
side**, i.e. a tie adds ``½ log σ(s_i − s_j) + ½ log σ(s_j − s_i)`` to the
log-likelihood (the convention of Chatbot Arena's Bradley–Terry fit; the
Davidson extension would add a tie parameter instead).  Votes are pooled
into an M×M matrix ``W[i, j]`` of (half-)wins, so each fit costs M×M work
whatever the number of votes.

Strengths are reported on the Elo scale ``R = 400 s / ln 10 + 1000``, on
which a 200-point gap is a win probability of about 0.76.  A very weak ridge
(``λ = 1e-6``, a Normal(0, 1000) prior on ``s``) keeps the fit finite when a
model won or lost every vote; it moves ordinary ratings by less than 0.01 Elo.

What the votes identify (checked on every fit, reported as warnings):

* **Groups.**  Models that never met, directly or through other models, form
  separate connected components of the comparison graph; the gap between
  two groups is not identified.  Each group is centred on its own, ranks and
  "cannot order" neighbours are computed within groups, and win
  probabilities across groups are left out (``NaN``; ``null`` in JSON).
* **Infinite ratings.**  Within a group the maximum-likelihood rating is
  finite only when the "won or tied against" graph is strongly connected
  (Zermelo; Ford 1957).  A model that won (lost) every vote is outside the
  group's largest strongly connected set, the *core*: its rating is set by
  the ridge, not by the data.  Ratings are centred on the core of each group
  (mean strength 0, i.e. 1000 Elo; with identified data the core is every
  model and this is the usual ``Σ s = 0``), so an unidentified model does not
  shift the others.

Intervals: percentile bootstrap, resampling votes or whole clusters (prompt,
annotator); rank intervals from the bootstrap ranks; and a Bayesian
Bradley–Terry in PyMC (:mod:`bayeserr.models.bradley_terry`).

Determinism: model names and cluster labels are coded in sorted (text) order
and votes are pooled into counts per (cluster, model_a, model_b, outcome)
cell before resampling, so the same votes in any row order with the same
seed give identical output.  A vote bootstrap draws multinomial counts over
the cells (the same distribution as resampling single votes); a cluster
bootstrap draws multinomial counts over the clusters in sorted-label order.
"""

from __future__ import annotations

import math
import warnings as _warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayeserr.base.caveat import Caveat
from bayeserr.base.errors import InputError, row_list, suggest
from bayeserr.data.dataset import RowAccount
from bayeserr.data.tables import read_table
from bayeserr.registries.caveats import look_alike_names
from bayeserr.stats.bradley_terry import (  # noqa: F401 (RIDGE, fit_strengths: this module's API too)
    RIDGE,
    Structure,
    centre,
    fit_strengths,
    rank_bounds,
    reaches,
    replicate,
    small_blas,
    structure,
)

ELO_SCALE = 400 / math.log(10)
ELO_BASE = 1000.0
WINNERS = ("model_a", "model_b", "tie")
MIN_CLUSTERS = 10  #: a cluster bootstrap over fewer clusters gets the ``few_clusters`` warning
UNSTABLE_SHARE = 0.01  #: share of resamples not identifying a model before ``bootstrap_unidentified``
MAX_NAMES = 20  #: model names listed per group in a warning


def to_elo(s):
    """Elo-scale rating of a (centred) strength: ``400 s / ln 10 + 1000``."""
    return ELO_SCALE * np.asarray(s) + ELO_BASE


def win_probability(rating_a, rating_b):
    """``P(A beats B)`` for Elo-scale ratings: ``1 / (1 + 10^(−(R_A − R_B)/400))``."""
    return 1.0 / (1.0 + 10 ** (-(np.asarray(rating_a) - np.asarray(rating_b)) / 400))


# ------------------------------------------------------------------ votes
@dataclass(frozen=True)
class Votes:
    """Validated votes as integer codes; ``win_a`` is 1, 0 or ½ (tie).

    Models are coded in sorted order of their names, clusters in sorted order
    of their labels (``clusters``), and the votes are in a canonical order
    (by cluster, model_a, model_b, outcome), whatever the order of the rows.
    """

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    win_a: np.ndarray
    cluster: np.ndarray | None
    rows: RowAccount
    source: str = ""
    clusters: tuple = ()  #: cluster labels (text, sorted); ``cluster`` indexes them
    #: data row of each vote (counting from 1 after the header; set by :func:`load_votes`)
    line: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: a column that says who voted (crowd, an LLM judge…), with 2+ kinds pooled: (column, ((kind, votes), …))
    judges: tuple = field(default=(), compare=False)

    @property
    def n_models(self) -> int:
        return len(self.models)

    def wins(self, weights=None) -> np.ndarray:
        """``W[i, j]``: (half-)wins of i over j, optionally with vote weights."""
        m = self.n_models
        w = np.ones(self.a.size) if weights is None else weights
        flat = np.bincount(self.a * m + self.b, weights=w * self.win_a, minlength=m * m)
        flat += np.bincount(self.b * m + self.a, weights=w * (1 - self.win_a), minlength=m * m)
        return flat.reshape(m, m)


def _where_items(where) -> dict:
    """``{column: (values as text, ...)}``; a value may be one value or a list of them."""
    out = {}
    for col, value in (where or {}).items():
        values = value if isinstance(value, (list, tuple, set, frozenset)) else (value,)
        values = tuple(dict.fromkeys(str(v) for v in values))
        if not values:
            raise InputError(f"--where {col}: no value given. Use --where {col}=VALUE.")
        out[col] = values
    return out


class _Text:
    """A column as integer codes into its distinct values printed as text
    (missing: code −1), so that text operations run once per distinct value,
    not once per vote.  Values that print the same (``1`` and ``"1"``) share
    a text."""

    def __init__(self, series: pd.Series):
        self.series = series
        codes, uniques = pd.factorize(series, sort=False)
        self.codes = codes.astype(np.int64, copy=False)
        self.labels = pd.Index(uniques).astype(str)

    def per_row(self, per_label: np.ndarray, missing) -> np.ndarray:
        return np.append(np.asarray(per_label), missing)[self.codes]  # code −1: the appended value

    def blank(self) -> np.ndarray:
        """Missing values and text that is empty or only spaces."""
        return self.per_row(self.labels.str.strip() == "", True).astype(bool)

    def matches(self, value: str) -> np.ndarray:
        """Rows whose value prints as ``value`` (numbers also compared as numbers)."""
        hit = self.per_row(self.labels == value, False).astype(bool)
        series = self.series
        if not hit.any() and pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            try:
                hit = series.to_numpy(dtype=float, na_value=np.nan) == float(value)
            except (TypeError, ValueError):
                pass
        return hit

    def index_in(self, names: pd.Index) -> np.ndarray:
        return self.per_row(names.get_indexer(self.labels), -1).astype(np.int64)


def _check_votes_arguments(source, where, **names) -> None:
    """The arguments of :func:`load_votes`, checked before anything is read."""
    import os

    from bayeserr.base.errors import describe
    if not isinstance(source, (pd.DataFrame, str, os.PathLike)):
        raise InputError(f"load_votes takes the path of a votes file (CSV, TSV, JSONL, Parquet) or a pandas "
                         f"DataFrame with model_a, model_b and winner columns; got {describe(source)}.")
    for arg, value in names.items():
        optional = arg in ("cluster_col", "name")
        if (value is None and not optional) or (value is not None and (not isinstance(value, str)
                                                                       or not value.strip())):
            raise InputError(f"{arg} takes a column name (text){' or None' if optional else ''}; got "
                             f"{describe(value)}.")
    from collections.abc import Mapping
    if where is not None and not isinstance(where, Mapping):
        raise InputError(f"where takes a mapping {{column: value}} (or {{column: [values]}}), e.g. "
                         f"where={{'language': 'en'}}; got {describe(where)}.")


def load_votes(source, *, model_a_col="model_a", model_b_col="model_b", winner_col="winner",
               cluster_col=None, where=None, name=None) -> Votes:
    """Read and validate pairwise votes (CSV/TSV/JSONL/Parquet or a DataFrame).

    ``where`` is ``{column: value}`` (or ``{column: [values]}``, any of them):
    only matching rows are used, the others counted as dropped; a value that
    no row has is an error with the values present.  Unknown or missing
    winners, self-matches, missing model names and (with ``cluster_col``)
    empty cluster ids are errors naming the rows (data rows of the file,
    counting from 1 after the header).  Model names and cluster ids are
    compared as text.
    """
    _check_votes_arguments(source, where, model_a_col=model_a_col, model_b_col=model_b_col,
                           winner_col=winner_col, cluster_col=cluster_col, name=name)
    where = _where_items(where)
    if isinstance(source, pd.DataFrame):
        df, label = source.reset_index(drop=True), name or "DataFrame"
    else:
        label = name or str(source)
        text_cols = (model_a_col, model_b_col) + ((cluster_col,) if cluster_col else ()) + tuple(where)
        df = read_table(source, id_columns=text_cols)
    account = RowAccount(len(df), len(df))
    cols = [model_a_col, model_b_col, winner_col] + ([cluster_col] if cluster_col else [])
    for c in cols + list(where):
        if c not in df.columns:
            raise InputError(f"{label}: no column '{c}'.{suggest(c, df.columns)} "
                             f"Columns present: {', '.join(map(str, df.columns))}.")
    line = np.arange(1, len(df) + 1)  # data-row numbers, kept through --where
    for col, values in where.items():
        column = _Text(df[col])
        keep = np.zeros(len(df), dtype=bool)
        for value in values:
            hit = column.matches(value)
            if not hit.any():
                present = sorted(set(column.labels))
                shown = ", ".join(present[:10]) + (" and more" if len(present) > 10 else "")
                raise InputError(f"{label}: no votes have {col}={value}.{suggest(value, present)} "
                                 f"Values of '{col}'{' in the remaining votes' if account.dropped else ''}: "
                                 f"{shown or 'none'}.")
            keep |= hit
        account = account.drop(f"not {col}={' or '.join(values)}", int((~keep).sum()))
        df, line = df[keep].reset_index(drop=True), line[keep]
    if len(df) == 0:
        raise InputError(f"{label}: no votes to rate (the table has no data rows).")
    col_a, col_b = _Text(df[model_a_col]), _Text(df[model_b_col])
    for col, column in ((model_a_col, col_a), (model_b_col, col_b)):
        _fail(label, line, column.blank(), f"a model name is missing (column '{col}')",
              "Fill in both models of every vote, or remove those rows.")
    win = _Text(df[winner_col])
    _fail(label, line, win.codes < 0, f"the winner is missing (column '{winner_col}')",
          "Write the winner as model_a, model_b or tie.")
    stripped = win.labels.str.strip()
    bad = win.per_row(~stripped.isin(WINNERS), False).astype(bool)
    if bad.any():
        _fail(label, line, bad, f"the winner is not one of {', '.join(WINNERS)} "
              f"(e.g. '{stripped[win.codes[np.flatnonzero(bad)[0]]]}')",
              "Write the winner as model_a, model_b or tie.")
    names = pd.Index(sorted(set(col_a.labels) | set(col_b.labels)))
    a, b = col_a.index_in(names), col_b.index_in(names)
    _fail(label, line, a == b, "a model is matched against itself", "Remove self-matches.")
    cluster, clusters = None, ()
    if cluster_col:
        col_c = _Text(df[cluster_col])
        _fail(label, line, col_c.blank(), f"the cluster id is empty (column '{cluster_col}')",
              "Give every vote a cluster (for example its prompt), remove those rows, or leave out "
              "--cluster-col; an empty id would otherwise be pooled into one cluster.")
        labels = pd.Index(sorted(set(col_c.labels)))
        cluster, clusters = col_c.index_in(labels), tuple(labels)
    outcome = stripped.map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy(float)
    win_a = outcome[win.codes]
    # canonical order (by cluster, model_a, model_b, outcome): the same votes in any row
    # order give the same arrays; one integer key sorts faster than np.lexsort
    m = len(names)
    key = (a * m + b) * 3 + np.rint(2 * win_a).astype(np.int64)
    if cluster is not None:
        key += cluster * (3 * m * m)
    order = np.argsort(key, kind="stable")
    return Votes(tuple(names), a[order], b[order], win_a[order],
                 None if cluster is None else cluster[order], account, label, clusters, line[order],
                 _pooled_judges(df, where))


#: columns that say who voted: several kinds pooled in one rating is said (a warning)
JUDGE_COLUMNS = ("judge_type", "judge", "annotator_type", "rater_type", "voter_type", "source")


def _pooled_judges(df: pd.DataFrame, where: dict) -> tuple:
    """``(column, ((kind, votes), …))`` for the first judge column holding two kinds or more (and not
    narrowed by ``where``), else ``()``."""
    for col in JUDGE_COLUMNS:
        if col in df.columns and col not in where:
            counts = df[col].astype(str).value_counts()
            if len(counts) > 1:
                return col, tuple((str(k), int(v)) for k, v in counts.items())
    return ()


def _fail(label, line, mask, problem, fix):
    if mask.any():
        rows = line[np.flatnonzero(mask)]
        raise InputError(f"{label}: {problem} in {len(rows)} vote(s) (data rows {row_list(rows)}). {fix}")




















def _names(models, idx) -> str:
    from bayeserr.base.formats import some
    return some((models[i] for i in idx), MAX_NAMES)




RIDGE_NOTE = ("The rating, interval and rank shown are set by the weak ridge (λ = 1e-6), not by the "
              "votes; read them only as '{meaning}'.")


def _every(n) -> str:
    n = int(round(n))
    return "its only vote" if n == 1 else f"every one of its {n} votes"


def _structure_caveats(models, wins, st: Structure) -> list[Caveat]:
    out = []
    n_groups = int(st.group.max()) + 1
    if n_groups > 1:
        groups = "; ".join(f"group {g + 1}: {_names(models, np.flatnonzero(st.group == g))}"
                           for g in range(n_groups))
        out.append(Caveat("disconnected_votes", None, (
            f"the models form {n_groups} groups that never met, directly or through other models "
            f"({groups}). The gap between groups is not identified by the votes: ratings, ranks and "
            "intervals are comparable only within a group (each group is centred at 1000 on its own, "
            "ranks are within the group, win probabilities across groups are left out). Add votes "
            "between the groups to compare them.")))
    beats = wins > 0
    games = (wins + wins.T).sum(axis=1)
    for g in range(n_groups):
        members = st.group == g
        core = st.core & members
        for label in np.unique(st.scc[members & ~st.core]):
            s = st.scc == label
            rest = members & ~s
            won, lost = wins[np.ix_(s, rest)].sum(), wins[np.ix_(rest, s)].sum()
            idx = np.flatnonzero(s)
            one = idx.size == 1
            core_names = _names(models, np.flatnonzero(core))
            if lost == 0:
                what = (f"won {_every(games[idx].sum())} (no losses, no ties)"
                        if one else "never lost or tied a vote against the other models they met")
                mle, meaning = "+∞", "above every model it met"
            elif won == 0:
                what = (f"lost {_every(games[idx].sum())} (no wins, no ties)"
                        if one else "never won or tied a vote against the other models they met")
                mle, meaning = "−∞", "below every model it met"
            elif reaches(beats, s, core):
                what = (f"sits above the main set of models ({core_names}): every chain of votes "
                        "between them goes one way")
                mle, meaning = "+∞ relative to them", "above that set"
            elif reaches(beats, core, s):
                what = (f"sits below the main set of models ({core_names}): every chain of votes "
                        "between them goes one way")
                mle, meaning = "−∞ relative to them", "below that set"
            else:
                what = f"has no chain of votes either way to the main set of models ({core_names})"
                mle, meaning = "undetermined relative to them", "not comparable with that set"
            text = (f"{what}, so its rating is not identified by the votes (the maximum-likelihood "
                    f"rating is {mle}). " + RIDGE_NOTE.format(meaning=meaning))
            if one:
                out.append(Caveat("rating_not_identified", models[idx[0]], text))
            else:
                text = (text.replace("sits", "sit").replace("has no", "have no")
                        .replace("its rating is", "their ratings are").replace("rating is", "ratings are")
                        .replace("The rating, interval and rank shown are", "The ratings, intervals and ranks "
                                 "shown are").replace("it met", "they met"))
                out.append(Caveat("rating_not_identified", None, f"{_names(models, idx)}: {text}"))
    return out


# ------------------------------------------------------------------ bootstrap
class _Cells:
    """The votes pooled into counts per (model_a, model_b, outcome) cell, and a
    sparse map from bootstrap weights (per cell, or per cluster) to the
    (half-)win matrix: one sparse product per resample, whatever the number
    of votes."""

    def __init__(self, votes: Votes, by_cluster: bool):
        from scipy.sparse import csr_matrix
        m = votes.n_models
        outcome = np.rint(2 * votes.win_a).astype(np.int64)  # 0 loss of a, 1 tie, 2 win of a
        key = (votes.a * m + votes.b) * 3 + outcome
        if by_cluster:
            key = votes.cluster * (3 * m * m) + key
        keys, count = np.unique(key, return_counts=True)
        cell = keys % (3 * m * m)
        ab, win = cell // 3, (cell % 3) / 2
        a, b = ab // m, ab % m
        # row r of the map: what one unit of weight on row r adds to W (flattened)
        if by_cluster:
            rows, weight, self.size = keys // (3 * m * m), count.astype(float), len(votes.clusters)
        else:
            rows, weight, self.size = np.arange(keys.size), np.ones(keys.size), keys.size
        self.count = count.astype(float)
        self.by_cluster, self.m, self.n = by_cluster, m, votes.a.size
        data = np.r_[weight * win, weight * (1 - win)]
        cols = np.r_[a * m + b, b * m + a]
        self.map = csr_matrix((data, (np.r_[rows, rows], cols)), shape=(self.size, m * m)).T.tocsr()

    def full(self) -> np.ndarray:
        """The weights that give the observed votes."""
        return np.ones(self.size) if self.by_cluster else self.count

    def wins(self, weight) -> np.ndarray:
        return (self.map @ weight).reshape(self.m, self.m)

    def resample(self, rng) -> np.ndarray:
        """Bootstrap weights: multinomial counts over the cells (the same distribution as
        resampling single votes), or over the clusters in sorted-label order."""
        if not self.by_cluster:
            return rng.multinomial(self.n, self.count / self.count.sum()).astype(float)
        return rng.multinomial(self.size, np.full(self.size, 1 / self.size)).astype(float)






@dataclass(frozen=True)
class Ratings:
    """Bradley–Terry ratings on the Elo scale, with intervals and ranks."""

    models: tuple[str, ...]
    rating: np.ndarray  #: MLE, Elo scale (each group centred on its core at 1000)
    interval: np.ndarray  #: (models × 2), percentile bootstrap
    rank_interval: np.ndarray  #: (models × 2), 1 = best (within the model's group)
    n_votes: np.ndarray  #: votes per model
    win_probability: np.ndarray  #: P(row beats column) from the MLE; NaN across groups
    level: float
    bootstrap: int
    bootstrap_by: str
    not_separable: tuple = ()  #: neighbours (a, b, P(a > b)) the data cannot order
    bayes_interval: np.ndarray | None = None
    rows: RowAccount | None = None
    source: str = ""
    #: bootstrap ratings (B × models); NaN where a resample left the model out
    draws: np.ndarray | None = field(default=None, repr=False)
    group: np.ndarray | None = None  #: group of each model (0 = largest); None: one group
    identified: np.ndarray | None = None  #: rating identified by the votes (finite MLE)
    warnings: tuple = ()  #: :class:`~bayeserr.base.caveat.Caveat` s

    def _groups(self) -> np.ndarray:
        return np.zeros(len(self.models), dtype=np.int64) if self.group is None else self.group

    @property
    def n_groups(self) -> int:
        return int(self._groups().max()) + 1

    def order(self) -> np.ndarray:
        """Models by group, then by rating (best first), then by name."""
        return np.lexsort((np.arange(len(self.models)), -self.rating, self._groups()))

    def tied_with_best(self) -> tuple[int, tuple]:
        """The leader (the highest rating in the largest group) and the models tied with it, as
        indices into ``models``: the other models of its group whose rank interval includes 1
        (the table's Rank interval starts at 1), best first.  The one "tied with the best" rule
        of the arena pages."""
        o = self.order()
        lead, g = int(o[0]), self._groups()
        return lead, tuple(int(i) for i in o[1:] if g[i] == g[lead] and self.rank_interval[i, 0] == 1)

    def _ranks(self, o) -> np.ndarray:
        g = self._groups()[o]
        start = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
        return np.arange(len(o)) - np.repeat(start, np.diff(np.r_[start, len(o)])) + 1

    def _repr_html_(self) -> str:
        """Jupyter: the ratings page's blocks as a self-scoped fragment."""
        from bayeserr.renderers.html import render_blocks
        from bayeserr.reporting.arena import ratings_blocks
        return render_blocks(ratings_blocks(self), fragment=True)

    def __repr__(self) -> str:
        return f"Ratings({self.source!r}: {len(self.models)} models)"

    def to_frame(self) -> pd.DataFrame:
        o = self.order()
        identified = np.ones(len(o), bool) if self.identified is None else self.identified
        df = pd.DataFrame({
            "model": np.asarray(self.models)[o], "rating": self.rating[o],
            "low": self.interval[o, 0], "high": self.interval[o, 1],
            "rank": self._ranks(o), "rank_low": self.rank_interval[o, 0],
            "rank_high": self.rank_interval[o, 1], "n_votes": self.n_votes[o],
            "group": self._groups()[o] + 1, "identified": identified[o]})
        if self.bayes_interval is not None:
            df["bayes_low"], df["bayes_high"] = self.bayes_interval[o, 0], self.bayes_interval[o, 1]
        return df

    def to_dict(self) -> dict:
        o = self.order()
        names = [self.models[i] for i in o]
        ranks = self._ranks(o)
        group = self._groups()
        identified = np.ones(len(o), bool) if self.identified is None else self.identified
        return {
            "schema": "bayeserr.arena/1", "level": self.level, "scale": "elo: 400 s / ln 10 + 1000",
            "ties": "half a win each", "bootstrap": {"replicates": self.bootstrap, "by": self.bootstrap_by},
            "rows": None if self.rows is None else self.rows.to_dict(),
            "groups": [[self.models[i] for i in o if group[i] == g] for g in range(self.n_groups)],
            "models": [{
                "model": self.models[i], "rating": float(self.rating[i]),
                "interval": [float(v) for v in self.interval[i]],
                "rank": int(ranks[r]), "rank_interval": [_int(v) for v in self.rank_interval[i]],
                "bayes_interval": None if self.bayes_interval is None else [float(v) for v in self.bayes_interval[i]],
                "n_votes": int(self.n_votes[i]), "group": int(group[i]) + 1,
                "identified": bool(identified[i])} for r, i in enumerate(o)],
            "win_probability": {"models": names,
                                "matrix": [[float(self.win_probability[i, j]) for j in o] for i in o]},
            "not_separable": [{"a": a, "b": b, "prob_a_better": p} for a, b, p in self.not_separable],
            "warnings": [w.to_dict() for w in self.warnings],
        }


def _int(v):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else int(v)




def check_bootstrap(votes: Votes, by: str):
    """Check that ``by`` can resample ``votes`` (before any work): ``(votes, caveats)``,
    the votes with their cluster labels filled in when they were built by hand."""
    if by not in ("votes", "cluster"):
        raise InputError(f"--bootstrap-by must be votes or cluster (got '{by}').")
    if votes.cluster is not None and not votes.clusters:  # a Votes built by hand: code the labels
        if (np.asarray(votes.cluster) < 0).any():
            raise InputError("cluster codes must be ≥ 0 (a negative code is a missing cluster id); "
                             "load the votes with load_votes(..., cluster_col=...).")
        labels, codes = np.unique(votes.cluster, return_inverse=True)
        votes = Votes(votes.models, votes.a, votes.b, votes.win_a, codes.astype(np.int64), votes.rows,
                      votes.source, tuple(str(c) for c in labels))
    if by == "cluster":
        if votes.cluster is None:
            raise InputError("--bootstrap-by cluster needs a cluster column (--cluster-col).")
        k = len(votes.clusters)
        if k < 2:
            raise InputError(f"{votes.source}: every vote is in one cluster ('{votes.clusters[0]}'), so "
                             "a cluster bootstrap cannot vary; use --bootstrap-by votes or a finer "
                             "cluster column.")
    return votes, cluster_caveats(len(votes.clusters) if by == "cluster" else None, votes.cluster is not None,
                                  "votes")


def cluster_caveats(k: int | None, has_clusters: bool, unit: str) -> list[Caveat]:
    """What a bootstrap's clusters mean for its intervals: ``k`` clusters resampled (None: single
    ``unit`` resampled although ``has_clusters``) — few clusters, or clusters ignored."""
    if k is not None:
        return [] if k >= MIN_CLUSTERS else [Caveat("few_clusters", None, (
            f"only {k} clusters: a percentile bootstrap over so few clusters tends to give intervals "
            "that are too narrow; treat them as a lower bound on the uncertainty."))]
    if not has_clusters:
        return []
    return [Caveat("clusters_ignored", None, (
        f"a cluster column was given but the bootstrap resamples single {unit} (--bootstrap-by {unit}): "
        f"the intervals treat {unit} as independent and are too narrow if {unit} within a cluster are "
        "related; use --bootstrap-by cluster."))]


def rate(votes: Votes, *, bootstrap: int = 1000, by: str = "votes", level: float = 0.95, seed: int = 0,
         progress=None, bayes: bool = False, bayes_kwargs=None) -> Ratings:
    """Fit the ratings, bootstrap them (votes or clusters) and rank them.

    Warnings (``Ratings.warnings``) say when the votes do not identify what is
    shown: groups of models that never met, ratings with an infinite MLE, all
    votes tied, a cluster column the bootstrap ignores, few clusters, and
    models that many resamples leave out or do not identify.
    """
    from bayeserr.base.registry import check_level, check_range
    if isinstance(votes, pd.DataFrame):  # a votes table: read it as load_votes would
        votes = load_votes(votes)
    elif not isinstance(votes, Votes):
        from bayeserr.base.errors import describe
        raise InputError(f"rate takes the votes from load_votes(...) (or a votes DataFrame with model_a, "
                         f"model_b and winner columns); got {describe(votes)}.")
    bootstrap = check_range("--bootstrap", bootstrap, 1, integer=True)
    level = check_level(level)
    seed = None if seed is None else check_range("--seed", seed, 0, integer=True)
    votes, caveats = check_bootstrap(votes, by)
    m = votes.n_models
    cells = _Cells(votes, by == "cluster")
    wins = cells.wins(cells.full())
    st = structure(wins)
    s_hat = centre(fit_strengths(wins), st.group, st.core)
    caveats = look_alike_names(votes.models) + _structure_caveats(votes.models, wins, st) + caveats
    if votes.judges:
        col, kinds = votes.judges
        shown = ", ".join(f"{k} {n:,}" for k, n in kinds[:6]) + (f" and {len(kinds) - 6} more" if len(kinds) > 6 else "")
        caveats.append(Caveat("judges_pooled", None, (
            f"the votes come from {len(kinds)} kinds of judge in '{col}' ({shown}), pooled in one rating. "
            f"--where {col}={kinds[0][0]} rates one kind; --judge-col {col} --human HUMAN --judge JUDGE corrects "
            "a judge's votes by the human ones.")))
    if np.all(votes.win_a == 0.5):
        caveats.append(Caveat("no_decisive_votes", None, (
            f"all {votes.a.size} votes are ties: with a tie as half a win each, every rating is 1000 and "
            "every bootstrap resample is again all ties, so the intervals shrink to a point. That is the "
            "tie convention, not certainty: the votes show no difference between the models.")))
    rng = np.random.default_rng(seed)
    draws = np.empty((bootstrap, m))
    absent = np.zeros(m, dtype=np.int64)
    unidentified = np.zeros(m, dtype=np.int64)
    with small_blas(m):
        for b in range(bootstrap):
            draws[b], gone, loose = replicate(cells.wins(cells.resample(rng)), s_hat, st)
            absent += gone
            unidentified += loose
            if progress is not None:
                progress(1)
    caveats += _bootstrap_caveats(votes.models, absent, unidentified, st, bootstrap)
    n_votes = np.bincount(votes.a, minlength=m) + np.bincount(votes.b, minlength=m)
    bayes_iv = None
    if bayes:
        from bayeserr.models.bradley_terry import fit_mcmc
        idata = fit_mcmc(wins, **(bayes_kwargs or {}))
        post = idata.posterior["s"].values.reshape(-1, m)
        q = [(1 - level) / 2, (1 + level) / 2]
        bayes_iv = np.quantile(to_elo(centre(post, st.group, st.core)), q, axis=0).T
    return summarise(votes.models, s_hat, draws, st, n_votes, level=level, by=by, rows=votes.rows,
                     source=votes.source, caveats=caveats, bayes_interval=bayes_iv)


def summarise(models, s_hat, draws, st, n_votes, *, level, by, rows=None, source="", caveats=(),
              bayes_interval=None) -> Ratings:
    """:class:`Ratings` from a centred fit ``s_hat`` and its bootstrap strengths ``draws``
    (B × models, NaN where a resample left a model out): percentile intervals, rank
    intervals, the neighbours the resamples do not order and the win probabilities."""
    # size: every statistic of the ratings is an argument of the one result it builds
    m = len(models)
    q = [(1 - level) / 2, (1 + level) / 2]
    elo, elo_draws = to_elo(s_hat), to_elo(draws)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", RuntimeWarning)  # a model left out of every resample: NaN
        interval = np.nanquantile(elo_draws, q, axis=0).T
        best, worst = rank_bounds(elo_draws, st.group)
        rank_iv = np.column_stack([np.nanquantile(best, q[0], axis=0, method="nearest"),
                                   np.nanquantile(worst, q[1], axis=0, method="nearest")])
    ambiguous = []
    order = np.lexsort((np.arange(m), -elo, st.group))
    for hi, lo in zip(order[:-1], order[1:]):
        if st.group[hi] != st.group[lo]:
            continue
        both = ~np.isnan(elo_draws[:, hi]) & ~np.isnan(elo_draws[:, lo])
        p = float(np.mean(elo_draws[both, hi] > elo_draws[both, lo])) if both.any() else float("nan")
        if not p >= (1 + level) / 2:
            ambiguous.append((models[hi], models[lo], p))
    same_group = st.group[:, None] == st.group[None, :]
    wp = np.where(same_group, win_probability(elo[:, None], elo[None, :]), np.nan)
    rank_iv = np.where(np.isnan(rank_iv), 0, rank_iv).astype(int)
    return Ratings(tuple(models), elo, interval, rank_iv, n_votes, wp, level, draws.shape[0], by,
                   tuple(ambiguous), bayes_interval, rows, source, elo_draws, st.group, st.core.copy(),
                   tuple(caveats))


def _bootstrap_caveats(models, absent, unidentified, st: Structure, bootstrap: int) -> list[Caveat]:
    out = []
    for i in np.flatnonzero(st.core & ((absent + unidentified) >= UNSTABLE_SHARE * bootstrap)):
        parts = []
        if absent[i]:
            parts.append(f"left it out ({absent[i]})")
        if unidentified[i]:
            parts.append(f"did not identify its rating ({unidentified[i]}: it won or lost every "
                         "resampled vote against the rest)")
        k = int(absent[i] + unidentified[i])
        out.append(Caveat("bootstrap_unidentified", models[i], (
            f"in {k} of {bootstrap} bootstrap resamples ({k / bootstrap:.0%}) the resampled votes "
            f"{' or '.join(parts)}: its interval and rank interval come from the resamples that include it, "
            "with the ridge setting its value where the resample does not identify it, so treat them as "
            "rough; more votes for this model would fix it.")))
    return out














