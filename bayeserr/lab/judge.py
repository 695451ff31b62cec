"""The judge-scored evals lab (``docs/methods.md`` §3.14; issue 28): how often the
intervals of ``bayeserr``'s Judge section cover the *human*-scored mean when the scores
come from a biased, noisy LLM judge and people label a small random subset.

Each data set is one eval of two models, A and B, on the same :data:`N_QUESTIONS`
questions, with 0/1 human scores ``Y`` and 0/1 judge scores ``f`` on every question.

* **Human scores.**  Question i of cluster c has a uniform ``U_i``; A is right when
  ``U_i < μ_A + w_c`` and B when ``V_i < μ_B + w_c``, where ``V_i = U_i`` on a random
  :data:`SHARED` of the questions (the same difficulty for both models) and an independent
  uniform otherwise, so the two models' scores are correlated on a question.  ``μ_A``,
  ``μ_B`` are :data:`MEANS`.
* **The judge** misses a human 1 (scores it 0) with probability :data:`MISS` and passes a
  human 0 (scores it 1) with probability ``FP_m + v_mc``; ``FP_m`` (:func:`false_positive`)
  is chosen so that the judge's mean is exactly ``μ_m + BIAS_m`` (:data:`BIASES`: A's judge
  +10 points, B's unbiased but noisy).
* **Clusters** (:data:`CLUSTERS`): none (``w = v = 0``); 40 unequal clusters
  (:data:`FORTY_SIZES`, log-normal quantiles scaled to 1,000 questions); or SWE-bench
  Verified's 12 repository sizes scaled to 1,000 (:data:`SWEBENCH`).  Each cluster draws
  an effect ``w_c`` on both models' human rates (sd :data:`TAU_HUMAN`) and an effect
  ``v_mc`` per model on its judge's false-positive rate (sd :data:`TAU_JUDGE`), all normal
  with mean 0 and clipped symmetrically, so their means stay 0 and every rate stays in
  [0, 1].  The effects are independent of each other and of the sizes, so the
  superpopulation means are exact: ``E[Y_A] = μ_A``, ``E[Y_B] = μ_B`` and
  ``E[f_m] = μ_m + BIAS_m`` (``E[(1 − p_c) v_mc] = 0``).
* **Labels**: people score a uniformly random subset of the questions, the same for both
  models; the subsets of :data:`LABELS` (50, 100, 300) are nested (the first n of one
  random order), so the three label counts are compared on the same data sets.

Per data set, label count and quantity (A's mean, B's mean, A − B), the intervals the
report's Judge section computes (:mod:`bayeserr.analyses.judge`, which calls
:func:`~bayeserr.stats.ppi.ppi_mean` and :func:`~bayeserr.stats.ppi.ppi_paired`):
PPI++ (the array core :func:`~bayeserr.stats.ppi.ppi_arrays` those functions call, with
its default λ, cross-fitted leave-one-out (J2x); Welch–Satterthwaite t without clusters,
CR2 with t on the df of (J7) with them), the
labelled-only (classical) interval from the same call, and the judge-only interval
(over all questions: t on n + N − 1 df without clusters, :func:`~bayeserr.stats.fewclusters.cr2_mean` with
them); without clusters also :func:`~bayeserr.stats.ppi.rogan_gladen` for each model's
mean (the judge is 0/1).  Data sets are simulated in blocks of :data:`BLOCK`, each with
its own seed ``(cell seed, block)``, so the result does not depend on how many processes
run them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.base.formats import percent as _percent
from bayeserr.lab.blocks import publisher
from bayeserr.lab.formats import findings_head, rate_cells
from bayeserr.lab.formats import missing as _missing
from bayeserr.lab.formats import nominal as _nominal
from bayeserr.lab.formats import pm as _pm
from bayeserr.lab.gate import SWEBENCH_SIZES, scaled_sizes

#: questions per data set (judged on every one)
N_QUESTIONS = 1000
#: the human-scored means of models A and B (the estimands)
MEANS = {"A": 0.6, "B": 0.55}
#: the judge's bias on each model (judge mean − human mean)
BIASES = {"A": 0.10, "B": 0.0}
#: share of questions on which B's answer uses A's uniform (the same difficulty)
SHARED = 0.5
#: the judge's chance of scoring a human 1 as 0, both models
MISS = 0.1
#: sd of the cluster effect on both models' human rates
TAU_HUMAN = 0.1
#: sd of the cluster effect on each model's judge false-positive rate
TAU_JUDGE = 0.05
#: human labels per data set (nested uniformly random subsets)
LABELS = (50, 100, 300)
#: cluster structures: none, 40 unequal clusters, SWE-bench's 12 sizes scaled to 1,000
CLUSTERS = ("none", "forty", "swebench")
#: log-normal spread (sd of the log) of the 40 unequal clusters' sizes
FORTY_SPREAD = 0.8
#: the quantities: each model's human-scored mean and the paired difference A − B
QUANTITIES = ("A", "B", "A − B")
#: the intervals, in the tables' order (Rogan–Gladen: each model's mean, not A − B)
METHODS = ("ppi", "classical", "judge_only", "rogan_gladen")
#: level of every interval
LEVEL = 0.95
#: data sets per published cell: a Monte Carlo SE of 0.22 points for a coverage near 95%
PUBLISHED_REPS = 10_000
#: data sets simulated (and held in memory) at once, with their own seed
BLOCK = 500
#: worker processes of the published run
JOBS = 2
#: a coverage is flagged when it is more than this many Monte Carlo SEs (at the nominal
#: level) below nominal
BELOW_SE = 2
#: markers around the section of docs/calibration.md
SECTION_START, SECTION_END = "<!-- judge-lab:start -->", "<!-- judge-lab:end -->"
_NAMES = {"ppi": "PPI++", "classical": "labelled only", "judge_only": "judge only",
          "rogan_gladen": "Rogan–Gladen"}


def _forty_sizes() -> tuple:
    from scipy.stats import norm
    k = np.arange(40)
    raw = np.exp(FORTY_SPREAD * norm.ppf((k + 0.5) / 40))[::-1]
    return scaled_sizes(raw, N_QUESTIONS)


#: the 40 unequal clusters: log-normal quantiles (sd of the log FORTY_SPREAD) scaled to 1,000
FORTY_SIZES = _forty_sizes()
#: SWE-bench Verified's 12 repository sizes scaled to 1,000 questions
SWEBENCH = scaled_sizes(SWEBENCH_SIZES, N_QUESTIONS)


# --------------------------------------------------------------------------- #
# the design
# --------------------------------------------------------------------------- #
def false_positive(model: str) -> float:
    """The judge's chance of scoring a human 0 as 1 on ``model``'s answers: the rate that
    makes its mean ``μ + bias``: ``(bias + MISS·μ)/(1 − μ)``."""
    mu, bias = MEANS[model], BIASES[model]
    return (bias + MISS * mu) / (1 - mu)


def sizes(clusters: str) -> tuple | None:
    """The cluster sizes of a structure (None without clusters)."""
    _check_clusters(clusters)
    return {"none": None, "forty": FORTY_SIZES, "swebench": SWEBENCH}[clusters]


def cluster_codes(clusters: str) -> np.ndarray | None:
    """Each question's cluster (0…C − 1), in blocks of the sizes; None without clusters."""
    s = sizes(clusters)
    return None if s is None else np.repeat(np.arange(len(s)), s)


def true_value(quantity: str) -> float:
    """The human-scored estimand: a model's mean, or A − B."""
    return MEANS["A"] - MEANS["B"] if quantity == "A − B" else MEANS[quantity]


def judge_value(quantity: str) -> float:
    """What the judge-only interval estimates: the judge-scored mean (or difference)."""
    if quantity == "A − B":
        return judge_value("A") - judge_value("B")
    return MEANS[quantity] + BIASES[quantity]


def correlation(quantity: str) -> float:
    """The judge–human correlation without clusters (exact, from the design).

    Given the human scores the judge is linear in them, ``E[f_m | Y_m] = FP_m + s_m Y_m``
    with ``s_m = 1 − MISS − FP_m``, and the two judges err independently, so
    ``Cov(Y_m, f_m) = s_m Var Y_m``, ``Cov(Y_A, f_B) = s_B κ``, ``Cov(f_A, f_B) = s_A s_B κ``
    with ``κ = Cov(Y_A, Y_B)``."""
    s = {m: 1 - MISS - false_positive(m) for m in MEANS}
    v = {m: MEANS[m] * (1 - MEANS[m]) for m in MEANS}
    vf = {m: judge_value(m) * (1 - judge_value(m)) for m in MEANS}
    if quantity != "A − B":
        return s[quantity] * v[quantity] / math.sqrt(v[quantity] * vf[quantity])
    k = human_covariance()
    cov = s["A"] * v["A"] + s["B"] * v["B"] - (s["A"] + s["B"]) * k
    return cov / math.sqrt((v["A"] + v["B"] - 2 * k) * (vf["A"] + vf["B"] - 2 * s["A"] * s["B"] * k))


def human_covariance() -> float:
    """Cov(Y_A, Y_B) without clusters: P(both right) = SHARED·min(μ_A, μ_B) + (1 − SHARED)·μ_A μ_B."""
    a, b = MEANS["A"], MEANS["B"]
    return SHARED * min(a, b) + (1 - SHARED) * a * b - a * b


def _check_clusters(clusters) -> None:
    if clusters not in CLUSTERS:
        raise InputError(f"clusters must be one of {', '.join(CLUSTERS)} (got {clusters!r}).")


def _bound_human() -> float:
    return min(min(MEANS.values()), 1 - max(MEANS.values())) - 1e-3


def _bound_judge() -> float:
    fp = [false_positive(m) for m in MEANS]
    return min(min(fp), 1 - max(fp)) - 1e-3


@dataclass(frozen=True)
class Draws:
    """``reps`` data sets: 0/1 human and judge scores of each model (reps × questions),
    and the order in which questions are labelled (reps × max(LABELS))."""

    human: dict
    judge: dict
    order: np.ndarray


def draw(clusters: str, reps: int, rng, max_labels: int = max(LABELS)) -> Draws:
    """``reps`` data sets of the module docstring's model."""
    codes = cluster_codes(clusters)
    Q = N_QUESTIONS
    if codes is None:
        w, v = 0.0, {m: 0.0 for m in MEANS}
    else:
        C, bh, bj = len(sizes(clusters)), _bound_human(), _bound_judge()
        w = np.clip(rng.normal(0.0, TAU_HUMAN, (reps, C)), -bh, bh)[:, codes]
        v = {m: np.clip(rng.normal(0.0, TAU_JUDGE, (reps, C)), -bj, bj)[:, codes] for m in MEANS}
    u = rng.random((reps, Q))
    same = rng.random((reps, Q)) < SHARED
    other = rng.random((reps, Q))
    human = {"A": (u < MEANS["A"] + w).astype(float),
             "B": (np.where(same, u, other) < MEANS["B"] + w).astype(float)}
    judge = {}
    for m in MEANS:
        g = rng.random((reps, Q))
        judge[m] = np.where(human[m] == 1, g >= MISS, g < false_positive(m) + v[m]).astype(float)
    order = np.argsort(rng.random((reps, Q)), axis=1)[:, :max_labels]
    return Draws(human, judge, order)


def labelled(order: np.ndarray, n: int, q: int = N_QUESTIONS) -> np.ndarray:
    """The (reps × q) mask of the first ``n`` questions of each row's labelling order."""
    mask = np.zeros((order.shape[0], q), bool)
    np.put_along_axis(mask, order[:, :n], True, axis=1)
    return mask


def _columns(d: Draws, quantity: str):
    """Human and judge scores of a quantity: a model's, or A's minus B's."""
    if quantity == "A − B":
        return d.human["A"] - d.human["B"], d.judge["A"] - d.judge["B"]
    return d.human[quantity], d.judge[quantity]


# --------------------------------------------------------------------------- #
# the intervals on one block
# --------------------------------------------------------------------------- #
def _bounds(est, se, df, level):
    from bayeserr.stats.distributions import t_ppf
    with np.errstate(invalid="ignore"):
        half = np.where(se == 0, 0.0, t_ppf(0.5 + level / 2, df) * se)
    return est - half, est + half


def intervals(human, judge, codes, level: float = LEVEL) -> dict:
    """The report's PPI++, labelled-only and judge-only intervals for every row of
    ``human`` (NaN where unlabelled) and ``judge``: ``{method: (estimate, se, lower,
    upper)}``, with PPI++'s λ and effective labels."""
    from bayeserr.stats.fewclusters import cr2_mean
    from bayeserr.stats.ppi import ppi_arrays
    r = ppi_arrays(human, judge, codes)
    if codes is None:
        q = judge.shape[-1]
        j = (judge.mean(axis=-1), judge.std(axis=-1, ddof=1) / math.sqrt(q), np.full(judge.shape[0], q - 1.0))
    else:
        c = cr2_mean(judge, codes)
        j = (c.mean, c.se, c.df)
    out = {"ppi": (r.estimate, r.se, *_bounds(r.estimate, r.se, r.df, level)),
           "classical": (r.classical_mean, r.classical_se,
                         *_bounds(r.classical_mean, r.classical_se, r.classical_df, level)),
           "judge_only": (j[0], j[1], *_bounds(*j, level))}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["effective_labels"] = r.n * r.classical_se**2 / r.se**2
    out["lam"] = r.lam
    return out


def rogan_gladen_rows(human, judge, level: float = LEVEL, codes=None):
    """:func:`~bayeserr.stats.ppi.rogan_gladen` on every row (clustered with ``codes``):
    ``(estimate, se, lower, upper, usable)`` (NaN where unusable)."""
    from bayeserr.stats.ppi import rogan_gladen
    rows = [rogan_gladen(h, f, codes, level=level) for h, f in zip(human, judge)]
    est, se, lo, hi = (np.array([getattr(r, k) for r in rows]) for k in ("estimate", "se", "lower", "upper"))
    return est, se, lo, hi, np.array([r.usable for r in rows])


def _score(out: dict, key: str, est, se, lower, upper, truth) -> None:
    with np.errstate(invalid="ignore"):
        out[f"{key}/covers"] = (lower <= truth) & (truth <= upper)
        out[f"{key}/below"] = truth < lower       # the truth below the interval
        out[f"{key}/above"] = truth > upper
    out[f"{key}/undefined"] = ~(np.isfinite(lower) & np.isfinite(upper))
    out[f"{key}/width"] = upper - lower
    out[f"{key}/estimate"], out[f"{key}/se"] = np.asarray(est, float), np.asarray(se, float)


def _seed(cell_seed: int, block: int):
    return np.random.default_rng([int(cell_seed), int(block)])


def block(clusters: str, reps: int, cell_seed: int, block_no: int, level: float = LEVEL,
          labels=LABELS) -> dict:
    """One block of data sets of a cluster structure: per label count, quantity and
    interval, whether it covers the human-scored truth (and where it misses), its width,
    estimate and SE; PPI++'s λ and effective labels; whether the judge-only interval
    covers the judge-scored mean; Rogan–Gladen's usability."""
    d = draw(clusters, reps, _seed(cell_seed, block_no), max(labels))
    codes = cluster_codes(clusters)
    out = {}
    for quantity in QUANTITIES:
        y, f = _columns(d, quantity)
        truth = true_value(quantity)
        for n in labels:
            mask = labelled(d.order, n)
            human = np.where(mask, y, np.nan)
            res = intervals(human, f, codes, level)
            for method in ("ppi", "classical", "judge_only"):
                _score(out, f"{n}/{quantity}/{method}", *res[method], truth)
            out[f"{n}/{quantity}/ppi/effective_labels"] = res["effective_labels"]
            out[f"{n}/{quantity}/ppi/lam"] = res["lam"]
            lo, hi = res["judge_only"][2:]
            out[f"{n}/{quantity}/judge_only/covers_judge"] = (lo <= judge_value(quantity)) & (
                judge_value(quantity) <= hi)
            if quantity != "A − B":
                est, se, lo, hi, usable = rogan_gladen_rows(human, f, level, codes)
                _score(out, f"{n}/{quantity}/rogan_gladen", est, se, lo, hi, truth)
                out[f"{n}/{quantity}/rogan_gladen/usable"] = usable
    return out


# --------------------------------------------------------------------------- #
# running
# --------------------------------------------------------------------------- #
def _block(task):
    """Run one block (module level, so a worker process can run it)."""
    clusters, k, cell_seed, j, level, labels = task
    return block(clusters, k, cell_seed, j, level, labels)


def _count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise InputError(f"{name} must be a whole number ≥ {low} (got {value!r}).")
    return int(value)


def _se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / reps)


def _nominal_se(level: float, reps: int) -> float:
    return math.sqrt(level * (1 - level) / reps)


def _effective_clusters(clusters: str) -> float:
    s = sizes(clusters)
    if s is None:
        return math.nan
    s = np.asarray(s, float)
    return float(s.sum() ** 2 / (s * s).sum())


def _summary(clusters: str, res: dict, reps: int, seed: int, level: float, labels) -> list[dict]:
    s = sizes(clusters)
    base = {"clusters": clusters, "n_clusters": 0 if s is None else len(s),
            "effective_clusters": _effective_clusters(clusters), "n_questions": N_QUESTIONS,
            "level": level, "reps": reps, "seed": seed}
    rows = []
    for n in labels:
        for quantity in QUANTITIES:
            for method in METHODS:
                key = f"{n}/{quantity}/{method}"
                if f"{key}/covers" not in res:
                    continue
                cov = float(res[f"{key}/covers"].mean())
                est, se = res[f"{key}/estimate"], res[f"{key}/se"]
                ok = np.isfinite(est) & np.isfinite(se)
                with np.errstate(invalid="ignore", divide="ignore"):
                    sd_ratio = (float(np.std(est[ok], ddof=1) / math.sqrt(np.mean(se[ok] ** 2)))
                                if ok.sum() > 1 else math.nan)
                row = {**base, "n_labels": n, "quantity": quantity, "truth": true_value(quantity),
                       "method": method, "coverage": cov, "coverage_se": _se(cov, reps),
                       "below": float(res[f"{key}/below"].mean()), "above": float(res[f"{key}/above"].mean()),
                       "undefined": float(res[f"{key}/undefined"].mean()),
                       "mean_width": float(np.nanmean(res[f"{key}/width"])) if ok.any() else math.nan,
                       "mean_estimate": float(np.mean(est[ok])) if ok.any() else math.nan,
                       "sd_ratio": sd_ratio, "effective_labels": math.nan, "lam": math.nan,
                       "judge_truth": math.nan, "covers_judge": math.nan, "usable": math.nan}
                if method == "ppi":
                    row["effective_labels"] = float(np.nanmean(res[f"{key}/effective_labels"]))
                    row["lam"] = float(np.nanmean(res[f"{key}/lam"]))
                if method == "judge_only":
                    row["judge_truth"] = judge_value(quantity)
                    row["covers_judge"] = float(res[f"{key}/covers_judge"].mean())
                if method == "rogan_gladen":
                    row["usable"] = float(res[f"{key}/usable"].mean())
                rows.append(row)
    return rows


def run_judge(reps: int, seed: int = 0, *, grid=CLUSTERS, labels=LABELS, jobs: int = 1,
              level: float = LEVEL, progress=None):
    """Every cluster structure of ``grid`` (default :data:`CLUSTERS`) as a DataFrame, one
    row per structure × label count × quantity × interval, ``reps`` data sets per
    structure.  Structure i has the seed ``seed + 1000 i`` and its block j the generator
    ``default_rng([seed + 1000 i, j])``; ``jobs`` worker processes run the blocks (1: in
    this process) and give the same numbers.  ``progress(k)`` is called as each block of
    k data sets finishes."""
    import pandas as pd
    reps = _count("reps", reps, 2)
    jobs = _count("jobs", jobs, 1)
    grid = list(grid)
    for c in grid:
        _check_clusters(c)
    labels = tuple(_count("labels", n, 2) for n in labels)
    if max(labels) > N_QUESTIONS - 2:
        raise InputError(f"labels must leave at least 2 of the {N_QUESTIONS} questions unlabelled "
                         f"(got {max(labels)}).")
    tasks = []
    for i, clusters in enumerate(grid):
        for j, start in enumerate(range(0, reps, BLOCK)):
            tasks.append((i, (clusters, min(BLOCK, reps - start), seed + 1000 * i, j, level, labels)))
    from bayeserr.lab.blocks import run_blocks
    results = run_blocks(_block, tasks, jobs, progress)
    rows = []
    for i, clusters in enumerate(grid):
        blocks = [results[(i, j)] for j in range(len(range(0, reps, BLOCK)))]
        res = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
        rows += _summary(clusters, res, reps, seed + 1000 * i, level, labels)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# the published section
# --------------------------------------------------------------------------- #
def _points(x: float) -> str:
    return f"{100 * x:.1f}"


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clearly_below(coverage, reps, level: float = LEVEL):
    """More than :data:`BELOW_SE` Monte Carlo SEs (of a coverage at ``level``) below ``level``."""
    return coverage < level - BELOW_SE * np.sqrt(level * (1 - level) / reps)


def _structure(clusters: str) -> str:
    return {"none": "none", "forty": "40 unequal", "swebench": "SWE-bench (12)"}[clusters]


def _where(clusters: str) -> str:
    return {"none": "no clusters", "forty": "40 unequal clusters", "swebench": "SWE-bench's 12 clusters"}[clusters]


def _quantity(quantity: str) -> str:
    return f"{quantity} (human {true_value(quantity):g}, judge {judge_value(quantity):g})"


def _cell(r) -> str:
    return f"{r['quantity']}, {_where(r['clusters'])}, {int(r['n_labels'])} labels"


def _ordered(df):
    """The rows in the tables' order: quantity, then structure, then labels."""
    q = {k: i for i, k in enumerate(QUANTITIES)}
    c = {k: i for i, k in enumerate(CLUSTERS)}
    return df.assign(_q=df["quantity"].map(q), _c=df["clusters"].map(c)).sort_values(
        ["_q", "_c", "n_labels"], kind="stable").drop(columns=["_q", "_c"])


def _lines(df):
    """One entry per quantity × structure × label count: ``{method: row}``."""
    out = []
    for _, g in _ordered(df).groupby(["quantity", "clusters", "n_labels"], sort=False):
        out.append({r["method"]: r for _, r in g.iterrows()})
    return out


def coverage_table(df) -> list[str]:
    """Coverage (%, ± one MC SE) of each interval, one line per quantity, structure and label count."""
    lines = ["| quantity | clusters | labels | " + " | ".join(_NAMES[m] for m in METHODS) + " |",
             "|---|---|---|" + "---|" * len(METHODS)]
    for by in _lines(df):
        first = next(iter(by.values()))
        cells = rate_cells(by, METHODS, "coverage",
                           lambda m, r: m != "judge_only" and clearly_below(r["coverage"], r["reps"], r["level"]))
        lines.append(f"| {_quantity(first['quantity'])} | {_structure(first['clusters'])} | "
                     f"{int(first['n_labels'])} | " + " | ".join(cells) + " |")
    return lines


def width_table(df) -> list[str]:
    """Mean width (points) of each interval, PPI++'s width against the labelled-only one's,
    and PPI++'s effective labels."""
    lines = ["| quantity | clusters | labels | " + " | ".join(_NAMES[m] for m in METHODS)
             + " | PPI++ / labelled only | effective labels of PPI++ |",
             "|---|---|---|" + "---|" * (len(METHODS) + 2)]
    for by in _lines(df):
        first = next(iter(by.values()))
        cells = ["–" if m not in by or _missing(by[m]["mean_width"]) else _points(by[m]["mean_width"])
                 for m in METHODS]
        ppi, cl = by.get("ppi"), by.get("classical")
        ratio = "–" if ppi is None or cl is None else f"{ppi['mean_width'] / cl['mean_width']:.2f}"
        neff = "–" if ppi is None else f"{ppi['effective_labels']:.0f}"
        lines.append(f"| {_quantity(first['quantity'])} | {_structure(first['clusters'])} | "
                     f"{int(first['n_labels'])} | " + " | ".join(cells) + f" | {ratio} | {neff} |")
    return lines


def _span(values, fmt=_percent) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def exact_classical_coverage(n: int, p: float, level: float = LEVEL) -> float:
    """Exact coverage of the labelled-only interval without clusters on ``n`` 0/1 labels of
    mean ``p``: ``mean ± t_{n−1} s/√n`` (the Wald interval with t), by the binomial sum."""
    from scipy.stats import binom
    from scipy.stats import t as student
    k = np.arange(n + 1)
    m = k / n
    half = student.ppf(0.5 + level / 2, n - 1) * np.sqrt(m * (1 - m) / (n - 1))
    return float((binom.pmf(k, n, p) * (np.abs(m - p) <= half + 1e-12)).sum())


def _coverage_finding(df, method: str) -> str:
    g = df[df.method == method]
    level, reps = float(g["level"].iloc[0]), int(g["reps"].min())
    floor = level - BELOW_SE * _nominal_se(level, reps)
    low = _ordered(g[clearly_below(g["coverage"], g["reps"], g["level"])])
    name = _NAMES[method]
    who = {"ppi": "PPI++", "classical": "The labelled-only interval"}.get(method, f"The {name} interval")
    if len(low):
        head = (f"{who} covers the human-scored truth to within {100 * (level - g['coverage'].min()):.1f} points "
                f"of {_nominal(level)}.")
    else:
        head = f"{who} holds its level."
    text = (f"- **{head}** Over its {len(g)} cells "
            f"({_and(sorted(set(g['quantity']), key=QUANTITIES.index))}; "
            f"{_and(_where(c) for c in CLUSTERS if c in set(g['clusters']))}; "
            f"{_and(str(n) for n in sorted(set(g['n_labels'])))} labels) the "
            f"{ {'classical': 'labelled-only'}.get(method, name)} interval covered the "
            f"human-scored truth in {_span(g['coverage'])} of data sets")
    if not len(low):
        return text + f", never more than {BELOW_SE} Monte Carlo SEs below {_nominal(level)}."
    text += (f"; {len(low)} of the {len(g)} below {_nominal(level)} − {BELOW_SE} MC SE ({_percent(floor)}), where "
             f"chance alone would put about {len(g) * _below_chance():.1f}: "
             + "; ".join(f"{_cell(r)}: {_pm(r['coverage'], r['coverage_se'])}%" for _, r in low.iterrows()) + ".")
    far = low[low["coverage"] < level - 3 * _nominal_se(level, reps)]
    if len(far):
        worst = far.loc[far["coverage"].idxmin()]
        text += (f" The largest shortfall, {_cell(worst)}: the truth lies below the interval in "
                 f"{_percent(worst['below'])} of data sets and above it in {_percent(worst['above'])} (nominal "
                 f"{_percent((1 - level) / 2)} each), the mean estimate is {worst['mean_estimate']:.4f} against "
                 f"{worst['truth']:g}, and the SD of the estimate is {worst['sd_ratio']:.3f} times the RMS SE.")
    wald = low[(low.clusters == "none") & (low.quantity != "A − B")] if method == "classical" else low.iloc[:0]
    if len(wald):
        text += (" Without clusters this interval on 0/1 labels is the Wald interval (with t), whose exact coverage "
                 "(binomial sum) is " + _and(f"{_percent(exact_classical_coverage(int(r['n_labels']), r['truth'], level))}"
                                            f" for {r['quantity']} at {int(r['n_labels'])} labels"
                                            for _, r in wald.iterrows())
                 + ": the discreteness of 0/1 scores, not Monte Carlo error.")
    clustered = sorted(set(low["clusters"]) - {"none"}, key=CLUSTERS.index)
    j = df[(df.method == "judge_only") & df.clusters.isin(clustered)]
    j = j[j.groupby("clusters")["covers_judge"].transform("min") < level - BELOW_SE * _nominal_se(level, reps)]
    if len(j):
        text += (" In the same clustered designs the judge-only CR2 interval, with no labels involved, covers the "
                 "judge-scored value in " + _and(f"{_span(h['covers_judge'])} ({_where(c)})"
                                                  for c, h in j.groupby("clusters", sort=False))
                 + ": part of the shortfall is the CR2 t interval's own under cluster random effects.")
    return text


def _below_chance() -> float:
    from scipy.stats import norm
    return float(norm.cdf(-BELOW_SE))


def _judge_finding(df) -> str | None:
    g = df[df.method == "judge_only"].drop_duplicates(["clusters", "quantity"])
    if not len(g):
        return None
    biased = g[g["quantity"].map(lambda q: abs(judge_value(q) - true_value(q)) > 1e-12)]
    fair = g[~g.index.isin(biased.index)]
    parts = []
    for q, h in biased.groupby("quantity", sort=False):
        parts.append(f"{_quantity(q)}: " + "; ".join(f"{_percent(r['coverage'])} ({_where(r['clusters'])})"
                                                     for _, r in h.iterrows()))
    text = ("- **The judge-only interval collapses.** With the judge's bias it covers the human-scored truth in "
            + "; ".join(parts)
            + ". It is a valid interval for the wrong quantity: it covers the judge-scored mean (or difference) in "
            + _span(g["covers_judge"]) + " of data sets.")
    if len(fair):
        text += (f" On B, whose judge is unbiased, it covers B's human mean in {_span(fair['coverage'])} — only "
                 "the labels tell the two judges apart.")
    wide = biased[biased["clusters"] == "swebench"]
    if len(wide):
        text += (" With SWE-bench's 12 clusters its CR2 interval is wide enough (mean width "
                 + _and(f"{_points(r['mean_width'])} points for {r['quantity']}" for _, r in wide.iterrows())
                 + ") to reach the human value now and then, not because it accounts for the bias.")
    return text


def _worth_finding(df) -> str | None:
    ppi, cl = df[df.method == "ppi"], df[df.method == "classical"]
    if not len(ppi) or not len(cl):
        return None
    key = ["clusters", "quantity", "n_labels"]
    m = ppi.merge(cl, on=key, suffixes=("", "_cl"))
    m["ratio"] = m["mean_width"] / m["mean_width_cl"]
    text = (f"- **The judge is worth labels.** The PPI++ interval is {_span(m['ratio'], lambda x: f'{x:.2f}')} times "
            "as wide as the labelled-only one")
    none = m[m["clusters"] == "none"]
    if len(none):
        parts = []
        for q, h in _ordered(none).groupby("quantity", sort=False):
            corr = correlation(q)
            parts.append(f"{q} (judge–human correlation {corr:.2f}): "
                         + _and(f"{int(r['n_labels'])} → {r['effective_labels']:.0f}" for _, r in h.iterrows()))
        text += ("; without clusters n labels with the judge were worth as many as n_eff labels alone (n → n_eff): "
                 + "; ".join(parts))
    return text + "."


def clearly_above(coverage, reps, level: float = LEVEL):
    """More than :data:`BELOW_SE` Monte Carlo SEs (of a coverage at ``level``) above ``level``."""
    return coverage > level + BELOW_SE * np.sqrt(level * (1 - level) / reps)


def _cluster_finding(df) -> str | None:
    sw = df[(df.clusters == "swebench") & df.method.isin(["ppi", "classical"])]
    p = sw[sw.method == "ppi"]
    if not len(p):
        return None
    text = ("- **With SWE-bench's 12 clusters** (C_eff = "
            f"{_effective_clusters('swebench'):.1f}) PPI++ uses CR2 with t on the df of (J7) and covers "
            f"{_span(p['coverage'])}")
    diff = p[p.quantity == "A − B"]
    if len(diff):
        cl = sw[(sw.method == "classical") & (sw.quantity == "A − B")]
        over = bool(clearly_above(diff["coverage"], diff["reps"], diff["level"]).all())
        text += ("; for A − B, where the clusters' shared effect on the two models' human scores cancels and only "
                 "the judges' cluster errors remain, " + ("it is conservative" if over else "it covers")
                 + f" ({_span(diff['coverage'])}"
                 + (f"; labelled-only {_span(cl['coverage'])}" if len(cl) else "") + ")")
    none = df[(df.clusters == "none") & (df.method == "ppi")]
    if len(none):
        w = p.merge(none, on=["quantity", "n_labels"], suffixes=("", "_none"))
        if len(w):
            text += (". The price of the clusters is width: "
                     f"{_span(w['mean_width'] / w['mean_width_none'], lambda x: f'{x:.1f}')} times the no-cluster "
                     "PPI++ interval")
    return text + "."


def _rg_finding(df) -> str | None:
    rg = df[df.method == "rogan_gladen"]
    if not len(rg):
        return None
    ppi = df[df.method == "ppi"].set_index(["clusters", "quantity", "n_labels"])
    parts = []
    for (q, c), h in _ordered(rg).groupby(["quantity", "clusters"], sort=False):
        parts.append(f"{q} ({_where(c)}): " + _and(f"{_percent(r['coverage'])} at {int(r['n_labels'])}"
                                                  for _, r in h.iterrows()))
    text = ("- **Rogan–Gladen** (the 0/1 judge's sensitivity and specificity from the labels, its rate from the "
            "unlabelled questions; delta method without clusters, CR2 with t on the df of (J7) over its three "
            "sets with them) covers " + "; ".join(parts) + " labels")
    below = _ordered(rg[clearly_below(rg["coverage"], rg["reps"], rg["level"])])
    if len(below):
        text += " (more than 2 Monte Carlo SEs below 95% for " + _and(_cell(r) for _, r in below.iterrows()) + ")"
    over = _ordered(rg[clearly_above(rg["coverage"], rg["reps"], rg["level"])])
    if len(over):
        text += (" (above nominal, i.e. wider than it needs to be, for "
                 + "; ".join(f"{q}, {_where(c)}, at {_and(str(int(n)) for n in h['n_labels'])} labels"
                             for (q, c), h in over.groupby(["quantity", "clusters"], sort=False)) + ")")
    ratios = [r["mean_width"] / ppi.loc[(r["clusters"], r["quantity"], r["n_labels"]), "mean_width"]
              for _, r in rg.iterrows() if (r["clusters"], r["quantity"], r["n_labels"]) in ppi.index]
    if ratios:
        text += f", at {_span(ratios, lambda x: f'{x:.1f}')} times the width of PPI++"
    unusable = _ordered(rg[rg["usable"] < 1])
    if len(unusable):
        text += ("; it was unusable (Youden's J ≤ 0.1, no labelled 0 or 1, or with clusters a set of the "
                 "labels in one cluster) in "
                 + _and(f"{_percent(1 - r['usable'])} of data sets ({_cell(r)})" for _, r in unusable.iterrows())
                 + ", counted as misses")
    return text + "."


def findings(df) -> list[str]:
    """The section's conclusions, every number computed from ``df``."""
    out = []
    if (df.method == "ppi").any():
        out.append(_coverage_finding(df, "ppi"))
    if (df.method == "classical").any():
        out.append(_coverage_finding(df, "classical"))
    for f in (_judge_finding(df), _worth_finding(df), _cluster_finding(df), _rg_finding(df)):
        if f:
            out.append(f)
    return out


def judge_section(df, command: str) -> list[str]:
    """The section of ``docs/calibration.md`` as Markdown lines, between
    :data:`SECTION_START` and :data:`SECTION_END`."""
    level, reps = float(df["level"].iloc[0]), int(df["reps"].min())
    labels = sorted({int(n) for n in df["n_labels"]})
    fp = {m: false_positive(m) for m in MEANS}
    lines = [
        SECTION_START,
        "## Judge-scored evals: coverage of the human-scored mean",
        "",
        "Does the report's Judge section (`docs/methods.md` §3.14) give honest intervals for the *human*-scored "
        "mean when an LLM judge scores every question and people label a small random subset "
        "(`bayeserr.lab.judge`)? Each data set is one eval of models A and B on the same "
        f"{N_QUESTIONS:,} questions with 0/1 human scores: A right with probability {MEANS['A']:g}, B with "
        f"{MEANS['B']:g}, on {_nominal(SHARED)} of the questions from the same uniform draw (so the two models' "
        "scores are correlated on a question). The judge scores every answer 0/1: it misses a human 1 with "
        f"probability {MISS:g} for both models and passes a human 0 with probability {fp['A']:.3f} for A (its "
        f"mean is {judge_value('A'):g}: {round(100 * BIASES['A']):+d} points) and {fp['B']:.3f} for B (unbiased "
        f"but noisy); judge–human correlation {correlation('A'):.2f} (A), {correlation('B'):.2f} (B) and "
        f"{correlation('A − B'):.2f} (A − B). People label {_and(str(n) for n in labels)} questions drawn "
        "uniformly at random, the same for both models (nested: the first n of one random order). Cluster "
        f"structures: none; 40 unequal clusters (log-normal quantiles with log-sd {FORTY_SPREAD:g}: sizes "
        f"{max(FORTY_SIZES)}…{min(FORTY_SIZES)}, C_eff = {_effective_clusters('forty'):.1f}); and SWE-bench "
        f"Verified's 12 repository sizes scaled to {N_QUESTIONS:,} ({', '.join(str(s) for s in SWEBENCH)}; "
        f"C_eff = {_effective_clusters('swebench'):.1f}). With clusters each cluster moves both models' human "
        f"rates by an effect of sd {TAU_HUMAN:g} and each model's judge false-positive rate by one of sd "
        f"{TAU_JUDGE:g} (normal, clipped symmetrically), so the human-scored means over the population of clusters "
        "are exact. The intervals are the report's: PPI++ with the power-tuned λ cross-fitted leave-one-out "
        "(each label's correction uses the λ fitted without it, (J2x); `ppi_arrays`, the core of "
        "`ppi_mean` and `ppi_paired`; Welch–Satterthwaite t without clusters, CR2 with t on the df of (J7) with "
        "them), the labelled-only interval (t on n − 1 df; CR2 with the Bell–McCaffrey df), the judge-only "
        "interval over all questions (t; CR2), and Rogan–Gladen (`rogan_gladen`; the delta method without "
        "clusters, CR2 with t on the df of (J7) over its three sets with them) for each "
        f"model's mean. Level {_nominal(level)}; {reps:,} data sets per design, each rate ± one Monte Carlo SE "
        f"(±{100 * _nominal_se(level, reps):.2f} points for a coverage near {_nominal(level)}); a coverage in "
        f"**bold** is more than {BELOW_SE} SEs below {_nominal(level)}. The judge-only column does not depend on "
        "the labels (the same data sets in each row of a design).",
        *findings_head(command, findings(df)),
        "",
        f"### Coverage of the human-scored truth (%, nominal {_nominal(level)})",
        "",
        *coverage_table(df),
        "",
        "### Mean width (points) and the labels the judge was worth",
        "",
        "Effective labels: n × (labelled-only SE / PPI++ SE)², the labels the labelled-only interval would need "
        "to be as narrow (the report's `effective_labels`), averaged over data sets.",
        "",
        *width_table(df),
        SECTION_END,
    ]
    return lines


publish_judge = publisher('calibration_judge.csv', judge_section, SECTION_START, SECTION_END)
