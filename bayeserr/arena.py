"""Arena-style ratings from pairwise votes: Bradley–Terry (SPEC §5.5).

Model: ``P(i beats j) = σ(s_i − s_j)``.  **Ties count as half a win for each
side**, i.e. a tie adds ``½ log σ(s_i − s_j) + ½ log σ(s_j − s_i)`` to the
log-likelihood (the convention of Chatbot Arena's Bradley–Terry fit; the
Davidson extension would add a tie parameter instead).  Votes are pooled
into an M×M matrix ``W[i, j]`` of (half-)wins, so each fit costs M×M work
whatever the number of votes.

Strengths are centred (``Σ s = 0``) and reported on the Elo scale
``R = 400 s / ln 10 + 1000``, on which a 200-point gap is a win probability
of about 0.76.  A very weak ridge (``λ = 1e-6``, a Normal(0, 1000) prior on
``s``) keeps the fit finite when a model won or lost every vote; it moves
ordinary ratings by less than 0.01 Elo.

Intervals: percentile bootstrap, resampling votes or whole clusters (prompt,
annotator); rank intervals from the bootstrap ranks; and a Bayesian
Bradley–Terry in PyMC (:mod:`bayeserr.models.bradley_terry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .data import RowAccount, read_table
from .errors import InputError, _row_list, suggest

ELO_SCALE = 400 / math.log(10)
ELO_BASE = 1000.0
RIDGE = 1e-6
WINNERS = ("model_a", "model_b", "tie")


def to_elo(s):
    """Elo-scale rating of a (centred) strength: ``400 s / ln 10 + 1000``."""
    return ELO_SCALE * np.asarray(s) + ELO_BASE


def win_probability(rating_a, rating_b):
    """``P(A beats B)`` for Elo-scale ratings: ``1 / (1 + 10^(−(R_A − R_B)/400))``."""
    return 1.0 / (1.0 + 10 ** (-(np.asarray(rating_a) - np.asarray(rating_b)) / 400))


# ------------------------------------------------------------------ votes
@dataclass(frozen=True)
class Votes:
    """Validated votes as integer codes; ``win_a`` is 1, 0 or ½ (tie)."""

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    win_a: np.ndarray
    cluster: np.ndarray | None
    rows: RowAccount
    source: str = ""

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


def load_votes(source, *, model_a_col="model_a", model_b_col="model_b", winner_col="winner",
               cluster_col=None, where=None, name=None) -> Votes:
    """Read and validate pairwise votes (CSV/TSV/JSONL/Parquet or a DataFrame).

    ``where`` is ``{column: value}``: only matching rows are used, the others
    counted as dropped.  Unknown winners, self-matches and missing models are
    errors naming the rows.
    """
    if isinstance(source, pd.DataFrame):
        df, label = source.reset_index(drop=True), name or "DataFrame"
    else:
        label = name or str(source)
        df = read_table(source, id_columns=(model_a_col, model_b_col))
    account = RowAccount(len(df), len(df))
    cols = [model_a_col, model_b_col, winner_col] + ([cluster_col] if cluster_col else [])
    for c in cols + list((where or {}).keys()):
        if c not in df.columns:
            raise InputError(f"{label}: no column '{c}'.{suggest(c, df.columns)} "
                             f"Columns present: {', '.join(map(str, df.columns))}.")
    for col, value in (where or {}).items():
        keep = df[col].astype(str) == str(value)
        account = account.drop(f"not {col}={value}", int((~keep).sum()))
        df = df[keep.to_numpy()].reset_index(drop=True)
    if len(df) == 0:
        raise InputError(f"{label}: no votes left to rate.")
    missing = df[[model_a_col, model_b_col]].isna().any(axis=1).to_numpy()
    _fail(label, missing, "a model name is missing", "Fill in both models of every vote.")
    winner = df[winner_col].astype(str).str.strip()
    bad = ~winner.isin(WINNERS).to_numpy()
    _fail(label, bad, f"the winner is not one of {', '.join(WINNERS)} (e.g. '{winner[bad].iloc[0]}')"
          if bad.any() else "", "Write the winner as model_a, model_b or tie.")
    same = (df[model_a_col].astype(str) == df[model_b_col].astype(str)).to_numpy()
    _fail(label, same, "a model is matched against itself", "Remove self-matches.")
    names = pd.Index(pd.unique(pd.concat([df[model_a_col], df[model_b_col]]).astype(str)))
    a = names.get_indexer(df[model_a_col].astype(str))
    b = names.get_indexer(df[model_b_col].astype(str))
    win_a = winner.map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy(float)
    cluster = pd.factorize(df[cluster_col])[0] if cluster_col else None
    return Votes(tuple(names), a.astype(np.int64), b.astype(np.int64), win_a, cluster, account, label)


def _fail(label, mask, problem, fix):
    if mask.any():
        rows = np.flatnonzero(mask) + 1
        raise InputError(f"{label}: {problem} in {len(rows)} vote(s) (data rows {_row_list(rows)}). {fix}")


# ------------------------------------------------------------------ maximum likelihood
def fit_strengths(wins: np.ndarray, start: np.ndarray | None = None, tol: float = 1e-10,
                  max_iter: int = 100) -> np.ndarray:
    """Bradley–Terry MLE (Newton's method) from the (half-)win matrix; centred."""
    m = wins.shape[0]
    games = wins + wins.T
    s = np.zeros(m) if start is None else start.copy()
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
        grad = (wins - games * p).sum(axis=1) - RIDGE * s
        w = games * p * (1 - p)
        hess = w - np.diag(w.sum(axis=1)) - RIDGE * np.eye(m)
        # the likelihood is invariant to a shift of s: solve on the centred subspace
        system = hess - np.ones((m, m)) / m
        try:
            step = np.linalg.solve(system, -grad)
        except np.linalg.LinAlgError:  # disconnected comparison graph
            step = np.linalg.lstsq(system, -grad, rcond=None)[0]
        s = s + step
        s -= s.mean()
        if np.abs(step).max() < tol:
            break
    return s


@dataclass(frozen=True)
class Ratings:
    """Bradley–Terry ratings on the Elo scale, with intervals and ranks."""

    models: tuple[str, ...]
    rating: np.ndarray  #: MLE, Elo scale
    interval: np.ndarray  #: (models × 2), percentile bootstrap
    rank_interval: np.ndarray  #: (models × 2), 1 = best
    n_votes: np.ndarray  #: votes per model
    win_probability: np.ndarray  #: P(row beats column) from the MLE
    level: float
    bootstrap: int
    bootstrap_by: str
    not_separable: tuple = ()  #: neighbours (a, b, P(a > b)) the data cannot order
    bayes_interval: np.ndarray | None = None
    rows: RowAccount | None = None
    source: str = ""
    draws: np.ndarray | None = field(default=None, repr=False)  #: bootstrap ratings (B × models)

    def order(self) -> np.ndarray:
        return np.argsort(-self.rating)

    def to_frame(self) -> pd.DataFrame:
        o = self.order()
        df = pd.DataFrame({
            "model": np.asarray(self.models)[o], "rating": self.rating[o],
            "low": self.interval[o, 0], "high": self.interval[o, 1],
            "rank": np.arange(1, len(o) + 1), "rank_low": self.rank_interval[o, 0],
            "rank_high": self.rank_interval[o, 1], "n_votes": self.n_votes[o]})
        if self.bayes_interval is not None:
            df["bayes_low"], df["bayes_high"] = self.bayes_interval[o, 0], self.bayes_interval[o, 1]
        return df

    def to_dict(self) -> dict:
        o = self.order()
        names = [self.models[i] for i in o]
        return {
            "schema": "bayeserr.arena/1", "level": self.level, "scale": "elo: 400 s / ln 10 + 1000",
            "ties": "half a win each", "bootstrap": {"replicates": self.bootstrap, "by": self.bootstrap_by},
            "rows": None if self.rows is None else self.rows.to_dict(),
            "models": [{
                "model": self.models[i], "rating": float(self.rating[i]),
                "interval": [float(v) for v in self.interval[i]],
                "rank": r + 1, "rank_interval": [int(v) for v in self.rank_interval[i]],
                "bayes_interval": None if self.bayes_interval is None else [float(v) for v in self.bayes_interval[i]],
                "n_votes": int(self.n_votes[i])} for r, i in enumerate(o)],
            "win_probability": {"models": names,
                                "matrix": [[float(self.win_probability[i, j]) for j in o] for i in o]},
            "not_separable": [{"a": a, "b": b, "prob_a_better": p} for a, b, p in self.not_separable],
        }


def _resample_weights(votes: Votes, by: str, rng) -> np.ndarray:
    n = votes.a.size
    if by == "votes":
        return rng.multinomial(n, np.full(n, 1 / n)).astype(float)
    if votes.cluster is None:
        raise InputError("--bootstrap-by cluster needs a cluster column (--cluster-col).")
    k = int(votes.cluster.max()) + 1
    return rng.multinomial(k, np.full(k, 1 / k)).astype(float)[votes.cluster]


def rate(votes: Votes, *, bootstrap: int = 1000, by: str = "votes", level: float = 0.95, seed: int = 0,
         progress=None, bayes: bool = False, bayes_kwargs=None) -> Ratings:
    """Fit the ratings, bootstrap them (votes or clusters) and rank them."""
    if by not in ("votes", "cluster"):
        raise InputError(f"--bootstrap-by must be votes or cluster (got '{by}').")
    rng = np.random.default_rng(seed)
    s_hat = fit_strengths(votes.wins())
    draws = np.empty((bootstrap, votes.n_models))
    for b in range(bootstrap):
        draws[b] = fit_strengths(votes.wins(_resample_weights(votes, by, rng)), start=s_hat)
        if progress is not None:
            progress(1)
    q = [(1 - level) / 2, (1 + level) / 2]
    elo, elo_draws = to_elo(s_hat), to_elo(draws)
    ranks = (-elo_draws).argsort(axis=1).argsort(axis=1) + 1
    rank_iv = np.quantile(ranks, q, axis=0, method="nearest").T.astype(int)
    order = np.argsort(-elo)
    ambiguous = []
    for hi, lo in zip(order[:-1], order[1:]):
        p = float(np.mean(elo_draws[:, hi] > elo_draws[:, lo]))
        if p < (1 + level) / 2:
            ambiguous.append((votes.models[hi], votes.models[lo], p))
    n_votes = np.bincount(votes.a, minlength=votes.n_models) + np.bincount(votes.b, minlength=votes.n_models)
    bayes_iv = None
    if bayes:
        from bayeserr.models.bradley_terry import fit_mcmc
        idata = fit_mcmc(votes.wins(), **(bayes_kwargs or {}))
        post = to_elo(idata.posterior["s"].values.reshape(-1, votes.n_models))
        bayes_iv = np.quantile(post, q, axis=0).T
    return Ratings(votes.models, elo, np.quantile(elo_draws, q, axis=0).T, rank_iv, n_votes,
                   win_probability(elo[:, None], elo[None, :]), level, bootstrap, by, tuple(ambiguous),
                   bayes_iv, votes.rows, votes.source, elo_draws)


# ------------------------------------------------------------------ rendering
def ratings_blocks(r: Ratings) -> list:
    """The arena report as neutral blocks (:mod:`bayeserr.reporting.document`),
    written out by the same renderers as the eval report."""
    from .reporting import document as doc
    from .reporting.tables import Cell, Column, Table, text
    df = r.to_frame()
    bayes = r.bayes_interval is not None
    cols = [Column("rank", "Rank"), Column("model", "Model", numeric=False), Column("rating", "Rating"),
            Column("ci", f"{r.level:.0%} CI", f"{r.level:.0%} CI".replace("%", r"\%"))]
    if bayes:
        cols.append(Column("bayes", "Bayesian CI"))
    cols += [Column("ranks", "Rank interval"), Column("votes", "Votes")]
    rows = []
    for _, x in df.iterrows():
        row = [Cell("int", x["rank"]), text(x["model"]), Cell("num", x["rating"], digits=0),
               Cell("range", (x["low"], x["high"]), digits=0)]
        if bayes:
            row.append(Cell("range", (x["bayes_low"], x["bayes_high"]), digits=0))
        row += [Cell("span", (x["rank_low"], x["rank_high"])), Cell("int", x["n_votes"])]
        rows.append(tuple(row))
    method = (f"Bradley–Terry MLE on the Elo scale (R = 400 s / ln 10 + 1000; ties count half a win "
              f"each); {r.level:.0%} percentile intervals from {r.bootstrap} bootstrap resamples of "
              f"{r.bootstrap_by}.")
    table = Table("ratings", "Ratings", tuple(cols), tuple(rows), (method,), method)
    out = [doc.Heading(f"Arena ratings: {r.source}", 1), table,
           doc.Heading("Neighbours the votes cannot order")]
    if r.not_separable:
        out.append(doc.Bullets(tuple((None, f"{a} vs {b}: P({a} ahead) = {p:.2f}")
                                     for a, b, p in r.not_separable), "neighbours"))
    else:
        out.append(doc.Para(f"Every neighbour is ordered with probability ≥ {(1 + r.level) / 2:.3f}."))
    if r.rows is not None:
        out += [doc.Heading("Rows"), doc.Para(doc.rows_text(r.rows.to_dict()), "rows")]
    return out


def to_markdown(r: Ratings) -> str:
    from .reporting.markdown import render_blocks
    return render_blocks(ratings_blocks(r))


def to_latex(r: Ratings) -> str:
    from .reporting.latex import render_blocks
    return render_blocks(ratings_blocks(r), f"bayeserr arena: {r.source}")


def to_html(r: Ratings) -> str:
    from .reporting.html import render_blocks
    return render_blocks(ratings_blocks(r), title=f"Arena ratings: {r.source}")
