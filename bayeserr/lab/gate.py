"""The release gate's lab (``docs/methods.md`` §3.11, §8): how often ``bayeserr gate``
passes when the true difference sits exactly at the margin (its size), and how often
it passes a candidate exactly as good as the baseline (its power, the price of the
margin).

Each replicate is one eval of a candidate A and a baseline B on the same n questions,
with 0/1 answers.  On question i the models disagree with probability
:data:`DISAGREE`: A alone is right with probability ``(DISAGREE + δ_i)/2`` and B alone
with ``(DISAGREE − δ_i)/2``; otherwise both are right with probability
:data:`BOTH_RIGHT`, else both wrong.  So ``E[a_i − b_i] = δ_i``.  With clusters (the
repositories of SWE-bench Verified, :data:`SWEBENCH_SIZES`), each cluster carries an
effect on the difference, ``δ_i = Δ + u_c`` with ``u_c ~ N(0, τ²)`` clipped
symmetrically to ``±(DISAGREE − |Δ| − 0.001)`` (so ``δ_i`` stays a valid rate and,
the clipping being symmetric, ``E[u_c] = 0``): the true A − B over the population of
clusters and questions is exactly Δ.

Cells, for each design (clusters, τ, n) and margin m (all at the gate's level, 0.95):

* non-inferiority at ``Δ = −m``: the pass rate is the gate's size (nominal ≤ 5%);
* superiority at ``Δ = +m``: its size for "better by more than m";
* non-inferiority at ``Δ = 0``: its power when the candidate is exactly as good as
  the baseline, beside the gate's own estimate of it (the "too small" message:
  ``Φ(m/SE − t_df(L))``, :func:`~bayeserr.stats.onesided.power_at_zero`) averaged over
  the replicates.

Suite designs (``clusters="suite"``): the eval is two tasks of n/2 questions each, the
first with SWE-bench's clusters scaled to n/2 (and the cluster effects), the second
without clusters, and the gate tests the macro suite difference (``bayeserr gate --suite
macro``, ``docs/methods.md`` §3.12: the CR2 variance within tasks and the t test on the
df (S2), no wild bootstrap).  δ is the same in both tasks, so the true suite A − B is Δ.

The decision is the gate's own: :func:`gate_decision` feeds every replicate at once to
:func:`bayeserr.analyses.gate.decide` (the function :func:`~bayeserr.analyses.gate.gate`
calls per candidate) with the difference, SE and df the comparison computes (the paired
SE (M7) and the normal without clusters; CR2 with the Bell–McCaffrey df from the
cluster sums with them, as ``compare`` does) and, where the df is below ``WILD_DF``,
the cluster sums for the wild cluster bootstrap, which must pass too.  With SWE-bench's
12 clusters the Rademacher weights are enumerated (2¹² vectors), so the bootstrap is
exact and the seed does not matter.  :func:`run_gate` re-runs the first replicates of
every cell through :func:`~bayeserr.analyses.gate.gate` on a results table and stops
if a verdict differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError
from bayeserr.base.formats import number
from bayeserr.base.formats import percent as _percent
from bayeserr.lab.blocks import publisher
from bayeserr.lab.formats import findings_head
from bayeserr.lab.formats import missing as _missing
from bayeserr.lab.formats import nominal as _nominal
from bayeserr.lab.formats import pm as _pm

#: SWE-bench Verified's 12 repositories (django 231, sympy 75, sphinx-doc 44, matplotlib 34,
#: scikit-learn 32, astropy 22, pydata 22, pytest-dev 19, pylint-dev 10, psf 8, mwaskom 2,
#: pallets 1): the ``cluster_id`` column of the project's real file
#: ``swebench_verified_bashonly_per_instance.csv.gz`` (500 questions; the same constant as
#: ``tests/analyses/test_gate.py`` and :data:`bayeserr.lab.ranking.CLUSTERINGS`).  Embedded so the lab
#: does not read the data folder.
SWEBENCH_SIZES = (231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1)
#: cluster structures of the lab: none, SWE-bench's (scaled to n, :func:`scaled_sizes`), or
#: a two-task suite of SWE-bench's clusters (scaled to n/2) beside n/2 unclustered questions
CLUSTERS = ("none", "swebench", "suite")
#: the weighting the suite designs gate (``bayeserr gate --suite macro``)
SUITE_WEIGHTING = "macro"
#: the three cells of each design and margin: (mode, what is measured, true Δ in units of m)
CASES = (("non-inferiority", "size", -1.0), ("superiority", "size", 1.0), ("non-inferiority", "power", 0.0))
#: share of questions on which the two models disagree (SWE-bench pairs of similar models: 15–30%)
DISAGREE = 0.2
#: chance that both are right where they agree
BOTH_RIGHT = 0.7
#: the published grid
PUBLISHED = dict(n=(100, 500), clusters=("none", "swebench", "suite"), taus=(0.0, 0.05), margins=(0.01, 0.02, 0.05))
#: replicates per published cell: a Monte Carlo SE of at most 0.22 points at 5%, 0.5 at 50%
PUBLISHED_REPS = 10_000
#: replicates simulated (and held in memory) at once
BLOCK = 2_000
#: a rate "clearly above" 5%: more than this many Monte Carlo SEs (of 5%) above it
CLEAR_SE = 3
#: markers around the gate's section of docs/calibration.md
SECTION_START, SECTION_END = "<!-- gate-lab:start -->", "<!-- gate-lab:end -->"


def scaled_sizes(sizes, n: int) -> tuple:
    """``sizes`` scaled to ``n`` questions, every cluster kept (at least one question):
    the proportional sizes rounded down, zeros raised to 1, and the questions left given
    to the largest remainders (ties to the larger cluster).  SWE-bench's sizes at n = 100
    are (46, 15, 9, 7, 6, 4, 4, 4, 2, 1, 1, 1)."""
    sizes = np.asarray(sizes, float)
    if n < len(sizes):
        raise InputError(f"{len(sizes)} clusters need at least {len(sizes)} questions (got n = {n}).")
    if n == sizes.sum():
        return tuple(int(s) for s in sizes)
    raw = sizes * n / sizes.sum()
    out = np.maximum(np.floor(raw), 1).astype(int)
    rest = raw - np.floor(raw)
    order = np.lexsort((-sizes, -rest))  # largest remainder first, then the larger cluster
    k = 0
    while out.sum() != n:
        j = order[k % len(order)]
        if out.sum() < n:
            out[j] += 1
        elif out[j] > 1:
            out[j] -= 1
        k += 1
    return tuple(int(s) for s in out)


@dataclass(frozen=True)
class GateDesign:
    """One design of the gate's lab: the eval and the gate asked of it."""

    n: int = 500
    clusters: str = "none"  #: a member of :data:`CLUSTERS`
    tau: float = 0.0  #: sd of the cluster effect on the difference (score units)
    margin: float = 0.02
    mode: str = "non-inferiority"
    truth: float = -0.02  #: the true A − B
    level: float = 0.95

    def __post_init__(self):
        from bayeserr.analyses.gate import MODES
        if self.clusters not in CLUSTERS:
            raise InputError(f"clusters must be one of {', '.join(CLUSTERS)} (got {self.clusters!r}).")
        if self.mode not in MODES:
            raise InputError(f"mode must be one of {', '.join(MODES)} (got {self.mode!r}).")
        least = {"none": 2, "swebench": len(SWEBENCH_SIZES), "suite": 2 * len(SWEBENCH_SIZES) + 2}[self.clusters]
        if int(self.n) < least:
            raise InputError(f"n = {self.n} is too small for this design (at least {least} questions).")
        if not 0 <= self.margin < DISAGREE or not abs(self.truth) < DISAGREE:
            raise InputError(f"margin and the true difference must lie below {DISAGREE:g} in size, the "
                             f"models' disagreement rate (got {self.margin:g}, {self.truth:g}).")
        if not self.tau >= 0 or (self.clusters == "none" and self.tau > 0):
            raise InputError(f"tau must be ≥ 0, and 0 without clusters (got {self.tau:g}).")

    @property
    def sizes(self) -> tuple | None:
        """SWE-bench's cluster sizes (of the clustered task, in a suite); None without clusters."""
        if self.clusters == "none":
            return None
        return scaled_sizes(SWEBENCH_SIZES, int(self.n) // 2 if self.suite else int(self.n))

    @property
    def suite(self) -> bool:
        return self.clusters == "suite"

    @property
    def codes(self) -> np.ndarray | None:
        """Cluster code of each question (in a suite, the unclustered task's questions are
        their own clusters); None without clusters."""
        s = self.sizes
        if s is None:
            return None
        codes = np.repeat(np.arange(len(s)), s)
        return np.r_[codes, len(s) + np.arange(int(self.n) - len(codes))] if self.suite else codes

    @property
    def tasks(self) -> np.ndarray | None:
        """Task code of each question of a suite design (0: clustered, 1: not); else None."""
        if not self.suite:
            return None
        first = sum(self.sizes)
        return np.repeat([0, 1], [first, int(self.n) - first])

    @property
    def null(self) -> float:
        return -self.margin if self.mode == "non-inferiority" else self.margin


def draw(design: GateDesign, reps: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """0/1 answers of A and B, each (reps × n), of ``design`` (the module docstring's model)."""
    n = int(design.n)
    delta = np.full((reps, n), float(design.truth))
    codes = design.codes
    if codes is not None and design.tau > 0:
        bound = DISAGREE - abs(design.truth) - 1e-3
        k = len(design.sizes)  # the clustered questions come first (in a suite, its clustered task)
        u = np.clip(rng.normal(0.0, design.tau, size=(reps, k)), -bound, bound)
        delta[:, :int(sum(design.sizes))] += u[:, codes[:int(sum(design.sizes))]]
    x = rng.random((reps, n))
    a_only = x < (DISAGREE + delta) / 2
    b_only = ~a_only & (x < DISAGREE)
    same = (rng.random((reps, n)) < BOTH_RIGHT).astype(float)
    a = np.where(a_only, 1.0, np.where(b_only, 0.0, same))
    b = np.where(b_only, 1.0, np.where(a_only, 0.0, same))
    return a, b


@dataclass(frozen=True)
class GateInputs:
    """What the gate gives :func:`~bayeserr.analyses.gate.decide` for each row."""

    diff: np.ndarray
    se: np.ndarray
    df: np.ndarray | float  #: Bell–McCaffrey df with clusters, ``inf`` (the normal) without
    D: np.ndarray | None  #: cluster sums of the differences (wild bootstrap)
    sizes: np.ndarray | None
    n_eff: np.ndarray | float  #: units behind an SE of 0 (``zero_spread``)


def gate_inputs(a, b, codes) -> GateInputs:
    """The inputs of the gate's decision for every row of ``a`` and ``b`` (replicates ×
    questions, every question answered by both), as the gate computes them: the mean
    difference, the paired SE (M7) on the normal without clusters; the CR2 SE and
    Bell–McCaffrey df from the differences' cluster sums, the sums and sizes for the wild
    bootstrap and the effective number of clusters with them (``compare``'s
    ``_clustered_pairs``, the gate's ``_pair_arrays`` and ``_n_eff``)."""
    from bayeserr.stats.estimators import se_clt
    from bayeserr.stats.fewclusters import bm_df, cluster_totals, cr2_from_sums, effective_clusters
    d = np.atleast_2d(np.asarray(a, float) - np.asarray(b, float))
    diff = d.mean(axis=-1)
    if codes is None:
        return GateInputs(diff, se_clt(d), math.inf, None, None, float(d.shape[-1]))
    D, sizes = cluster_totals(d, codes)
    S = D - sizes * (D.sum(axis=-1) / sizes.sum(axis=-1))[:, None]
    return GateInputs(diff, cr2_from_sums(S, sizes), bm_df(sizes), D, sizes[0], effective_clusters(sizes))


def suite_inputs(a, b, codes, tasks) -> GateInputs:
    """The inputs of the gate's decision on a suite (``bayeserr gate --suite macro``): the
    macro suite difference, its SE (S1) and df (S2) as :func:`bayeserr.analyses.suite.suite_view`
    computes them for a pair (clusters within tasks), no wild bootstrap arrays, and the
    questions as the units behind an SE of 0 (the gate's ``_n_eff`` of a suite test)."""
    from bayeserr.analyses.suite import suite_rows
    d = np.atleast_2d(np.asarray(a, float) - np.asarray(b, float))
    diff, se, df = suite_rows(d, tasks, codes, "within tasks", SUITE_WEIGHTING)
    return GateInputs(diff, se, df, None, None, float(d.shape[-1]))


def gate_decision(a, b, codes, null: float, level: float = 0.95, seed: int = 0, inputs=None, tasks=None):
    """The gate's decision on every row: :func:`bayeserr.analyses.gate.decide` (the
    function :func:`~bayeserr.analyses.gate.gate` calls per candidate) on
    :func:`gate_inputs`, all rows at once; with ``tasks`` (a suite design) on
    :func:`suite_inputs`, the t test alone, as the gate decides a suite."""
    from bayeserr.analyses.gate import decide
    if tasks is not None:
        x = suite_inputs(a, b, codes, tasks) if inputs is None else inputs
        return decide(x.diff, x.se, x.df, null, level, seed=seed, n_eff=x.n_eff, wild=False)
    x = gate_inputs(a, b, codes) if inputs is None else inputs
    return decide(x.diff, x.se, x.df, null, level, x.D, x.sizes, seed=seed, n_eff=x.n_eff)


def gate_verdicts(a, b, codes, design: GateDesign, seed: int = 0) -> list:
    """:func:`bayeserr.analyses.gate.gate` itself on each row (a results table per
    replicate): the check of :func:`gate_decision`."""
    import pandas as pd

    from bayeserr.analyses.gate import gate
    n = a.shape[-1]
    q = [f"q{i:04d}" for i in range(n)]
    out = []
    for r in range(a.shape[0]):
        frame = pd.DataFrame({"model": ["A"] * n + ["B"] * n, "question_id": q * 2,
                              "score": np.concatenate([a[r], b[r]])})
        if codes is not None:
            frame["cluster_id"] = [f"c{c:02d}" for c in codes] * 2
        if design.suite:
            frame["task"] = [f"task{t}" for t in design.tasks] * 2
        out.append(gate(frame, "A", "B", design.margin, mode=design.mode, level=design.level, seed=seed,
                        bayes="off", suite=SUITE_WEIGHTING if design.suite else None).checks[0])
    return out


def _se(p: float, reps: int) -> float:
    return math.sqrt(p * (1.0 - p) / reps)


def gate_cell(design: GateDesign, reps: int, seed: int = 0, *, verify: int = 1, gate_seed: int = 0,
              progress=None) -> dict:
    """``reps`` seeded replicates of ``design``: the gate's pass rate and its Monte Carlo
    SE, the headline test's alone, the share of replicates where the wild bootstrap ran,
    and (non-inferiority) the gate's own power estimate at Δ = 0 averaged.  The first
    ``verify`` replicates are also run through :func:`~bayeserr.analyses.gate.gate`; a
    verdict that differs is an error.  ``gate_seed`` is the gate's ``--seed`` (its default,
    0, as a user runs it)."""
    from bayeserr.analyses.gate import power_at_zero
    from bayeserr.stats.fewclusters import bm_df, effective_clusters
    if int(reps) < 1:
        raise InputError(f"reps must be at least 1 (got {reps}).")
    rng = np.random.default_rng(seed)
    codes, sizes = design.codes, design.sizes
    alpha = 1.0 - design.level
    passed = t_passed = wild_rows = 0
    predicted, suite_df = [], []
    done = 0
    while done < reps:
        k = min(BLOCK, int(reps) - done)
        a, b = draw(design, k, rng)
        x = suite_inputs(a, b, codes, design.tasks) if design.suite else gate_inputs(a, b, codes)
        dec = gate_decision(a, b, codes, design.null, design.level, gate_seed, inputs=x, tasks=design.tasks)
        suite_df += [float(v) for v in np.atleast_1d(x.df)] if design.suite else []
        ok = dec.p_value < alpha
        if done == 0 and verify:
            for r, check in enumerate(gate_verdicts(a[:verify], b[:verify], codes, design, gate_seed)):
                if check.passed != bool(ok[r]) or not math.isclose(check.p_decision, float(dec.p_value[r]),
                                                                      rel_tol=1e-6, abs_tol=1e-12):
                    raise RuntimeError(f"the lab's decision differs from bayeserr.gate's on replicate {r} of "
                                       f"{design}: p {float(dec.p_value[r])!r} against {check.p_decision!r}.")
        passed += int(ok.sum())
        t_passed += int((dec.t.p_value < alpha).sum())
        wild_rows += int(dec.wild_rows.sum())
        if design.mode == "non-inferiority" and design.truth == 0 and design.margin > 0:
            dfs = np.broadcast_to(np.asarray(x.df, float), x.se.shape)
            predicted += [power_at_zero(float(se), float(df), design.margin, design.level)[0]
                          for se, df in zip(x.se, dfs)]
        done += k
        if progress is not None:
            progress(k)
    rate = passed / reps
    pred = [p for p in predicted if p is not None]
    return {"clusters": design.clusters, "n": int(design.n),
            "n_clusters": 0 if sizes is None else len(sizes),
            "effective_clusters": math.nan if sizes is None else float(effective_clusters(np.asarray(sizes))),
            "df": (math.inf if sizes is None else float(np.nanmedian(suite_df)) if design.suite
                   else float(bm_df(np.asarray(sizes, float)))),
            "tau": float(design.tau), "margin": float(design.margin), "mode": design.mode,
            "measures": "size" if design.truth == design.null else "power", "truth": float(design.truth),
            "level": float(design.level), "reps": int(reps), "seed": int(seed),
            "pass_rate": rate, "pass_se": _se(rate, reps), "t_pass_rate": t_passed / reps,
            "wild_share": wild_rows / reps,
            "gate_power_estimate": float(np.mean(pred)) if pred else math.nan}


# --------------------------------------------------------------------------- #
# the grid, running and publishing
# --------------------------------------------------------------------------- #
def designs(n=PUBLISHED["n"], clusters=PUBLISHED["clusters"], taus=PUBLISHED["taus"],
            margins=PUBLISHED["margins"], level: float = 0.95) -> list[GateDesign]:
    """The grid: every n × cluster structure × τ (0 alone without clusters) × margin ×
    case of :data:`CASES`, in that order (at a margin of 0 the power case is the size
    case, and is left out)."""
    out = []
    for n_ in n:
        for c in clusters:
            for tau in ((0.0,) if c == "none" else taus):
                for m in margins:
                    for mode, what, sign in CASES:
                        if what == "power" and m == 0:
                            continue
                        out.append(GateDesign(int(n_), c, float(tau), float(m), mode, sign * float(m), level))
    return out


def run_gate(grid, reps: int, seed: int = 0, *, verify: int = 1, progress=None):
    """Every cell of ``grid`` (from :func:`designs`) as one DataFrame row; cell i has the
    seed ``seed + 1000 i``, so any cell can be rerun alone."""
    import pandas as pd
    return pd.DataFrame([gate_cell(d, reps, seed + 1000 * i, verify=verify, progress=progress)
                         for i, d in enumerate(grid)])


def _signed(x: float) -> str:
    """``x`` with one decimal and its sign (``−0.4``, ``+1.2``, ``0.0``)."""
    return number(x, 1, signed=True)


def clearly_above(rate, reps, alpha: float = 0.05):
    """More than :data:`CLEAR_SE` Monte Carlo SEs (of a rate of ``alpha``) above ``alpha``."""
    return rate > alpha + CLEAR_SE * np.sqrt(alpha * (1 - alpha) / reps)


def _structure(r) -> str:
    if r["clusters"] == "none":
        return "none"
    if r["clusters"] == "suite":
        return (f"suite of 2 tasks ({SUITE_WEIGHTING}): SWE-bench's {int(r['n_clusters'])} in {int(r['n']) // 2} "
                f"questions (C_eff {r['effective_clusters']:.1f}) + {int(r['n']) - int(r['n']) // 2} unclustered, "
                f"median df {r['df']:.1f}, τ = {r['tau']:g}")
    return (f"SWE-bench's {int(r['n_clusters'])} (C_eff {r['effective_clusters']:.1f}, "
            f"BM df {r['df']:.1f}), τ = {r['tau']:g}")


def _wide(df):
    """One row per design × margin with the three cases side by side."""
    import pandas as pd
    keys = ["n", "clusters", "tau", "margin"]
    rows = []
    for key, g in df.groupby(keys, sort=False):
        row = dict(zip(keys, key))
        first = g.iloc[0]
        row.update(n_clusters=first["n_clusters"], effective_clusters=first["effective_clusters"],
                   df=first["df"], reps=int(g["reps"].min()))
        for _, r in g.iterrows():
            tag = ("ni" if r["mode"] == "non-inferiority" else "sup") + "_" + r["measures"]
            row[tag] = r["pass_rate"]
            row[tag + "_se"] = r["pass_se"]
            row[tag + "_t"] = r["t_pass_rate"]
            row[tag + "_reps"] = int(r["reps"])
            if tag == "ni_power":
                row["estimate"] = r["gate_power_estimate"]
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(w, tag) -> str:
    if tag not in w or _missing(w[tag]):
        return "–"
    text = _pm(w[tag], w[tag + "_se"])
    if tag.endswith("size") and clearly_above(w[tag], w[tag + "_reps"]):
        text = f"**{text}**"
    return text


def gate_table(df) -> list[str]:
    """The section's table: one line per design and margin (pass rates in % ± one MC SE)."""
    lines = ["| questions | clusters | margin m | non-inferiority, true A − B = −m (size) | "
             "superiority, true A − B = +m (size) | non-inferiority, true A − B = 0 (power) | "
             "the gate's own power estimate |",
             "|---|---|---|---|---|---|---|"]
    for _, w in _wide(df).iterrows():
        est = "–" if "estimate" not in w or _missing(w["estimate"]) else _percent(w["estimate"])
        lines.append(f"| {int(w['n'])} | {_structure(w)} | {w['margin']:g} | {_cell(w, 'ni_size')} | "
                     f"{_cell(w, 'sup_size')} | {_cell(w, 'ni_power')} | {est} |")
    return lines


def _what(clusters, tau) -> str:
    if clusters == "none":
        return "no clusters"
    if clusters == "suite":
        return f"a suite with SWE-bench's clusters in one of two tasks, τ = {tau:g}"
    return f"SWE-bench's clusters, τ = {tau:g}"


def _where(r) -> str:
    return f"n = {int(r['n'])}, {_what(r['clusters'], r['tau'])}, m = {r['margin']:g}"


def gate_findings(df) -> list[str]:
    """The "What the numbers say" paragraphs, every number computed from ``df``."""
    alpha = 1.0 - float(df["level"].iloc[0])
    out = []
    size = df[df.measures == "size"]
    for mode, g in size.groupby("mode", sort=False):
        liberal = g[clearly_above(g["pass_rate"], g["reps"], alpha)]
        worst = g.loc[g["pass_rate"].idxmax()]
        z = (g["pass_rate"] - alpha) / np.sqrt(alpha * (1 - alpha) / g["reps"])
        truth = "−m" if mode == "non-inferiority" else "+m"
        text = (f"- **{mode.capitalize()}, true A − B exactly at {truth}:** the gate passed in "
                f"{_percent(g['pass_rate'].min())}–{_percent(g['pass_rate'].max())} of data sets over {len(g)} designs "
                f"(nominal at most {_nominal(alpha)}; the highest at {_where(worst)}: "
                f"{_pm(worst['pass_rate'], worst['pass_se'])}%). ")
        if len(liberal):
            text += (f"**Liberal** (more than {CLEAR_SE} Monte Carlo SEs above {_nominal(alpha)}) in "
                     f"{len(liberal)} of them: "
                     + "; ".join(f"{_where(r)}: {_pm(r['pass_rate'], r['pass_se'])}%"
                                 for _, r in liberal.iterrows()) + ".")
        elif z.max() > 0:
            text += (f"None is more than {CLEAR_SE} Monte Carlo SEs above {_nominal(alpha)} (the largest excess: "
                     f"{float(z.max()):.1f} SEs).")
        else:
            text += f"None is above {_nominal(alpha)}."
        out.append(text)
    pooled = []
    for (mode, n_, c, tau), g in size.groupby(["mode", "n", "clusters", "tau"], sort=False):
        if len(g) < 2:
            continue
        reps = int(g["reps"].sum())
        rate = float((g["pass_rate"] * g["reps"]).sum() / reps)
        if clearly_above(rate, reps, alpha):
            what = _what(c, tau)
            pooled.append(f"{mode} at n = {int(n_)}, {what}: {rate * 100:.2f} ± {100 * _se(rate, reps):.2f}% "
                          f"over {len(g)} margins")
    if pooled:
        out.append(f"- **Pooled over the margins** (the same test at the same n; a finer look at a small excess), "
                   f"the size is more than {CLEAR_SE} Monte Carlo SEs above {_nominal(alpha)} for "
                   + "; ".join(pooled) + ".")
    cl, none = size[size.clusters == "swebench"], size[size.clusters == "none"]
    if len(cl):
        both = cl[cl["wild_share"] > 0]
        text = (f"- **With SWE-bench's clusters** (Bell–McCaffrey df {cl['df'].min():.1f}–{cl['df'].max():.1f}) "
                f"the size is {_percent(cl['pass_rate'].min())}–{_percent(cl['pass_rate'].max())}")
        if len(both):
            text += (f": with a df below {_wild_df()} the gate passes only when the wild cluster bootstrap passes "
                     f"too, and the CR2 t test alone would have passed {_percent(both['t_pass_rate'].min())}–"
                     f"{_percent(both['t_pass_rate'].max())} of the same data sets")
        if len(none):
            text += (f"; without clusters (the Tango score test with its continuity and skewness corrections) it is {_percent(none['pass_rate'].min())}–"
                     f"{_percent(none['pass_rate'].max())}")
        out.append(text + ".")
    suites = size[size.clusters == "suite"]
    if len(suites):
        out.append(f"- **A suite** (`--suite {SUITE_WEIGHTING}`: SWE-bench's clusters in one of two equal tasks, "
                   "the other unclustered; the t test on the df (S2) of `docs/methods.md` §3.12, median "
                   f"{suites['df'].min():.1f}–{suites['df'].max():.1f}, no wild bootstrap): the size is "
                   f"{_percent(suites['pass_rate'].min())}–{_percent(suites['pass_rate'].max())}.")
    power = df[df.measures == "power"]
    if len(power):
        best, worst = power.loc[power["pass_rate"].idxmax()], power.loc[power["pass_rate"].idxmin()]
        low = power[power["pass_rate"] < 0.5]
        text = (f"- **The price: a candidate exactly as good as the baseline** passes a non-inferiority gate in "
                f"{_percent(worst['pass_rate'])} of data sets at {_where(worst)}, and at most "
                f"{_percent(best['pass_rate'])} (at {_where(best)}). In {len(low)} of {len(power)} designs it "
                "passes less than half the time: the eval is too small for the margin, the case the gate's "
                "\"too small for this margin\" message is for.")
        pairs = []
        for (n_, m), g in power.groupby(["n", "margin"], sort=True):
            no, swe = g[g.clusters == "none"], g[g.clusters == "swebench"].sort_values("tau")
            if len(no) and len(swe):
                taus = ", ".join(f"{_percent(r['pass_rate'])} at τ = {r['tau']:g}" for _, r in swe.iterrows())
                pairs.append(f"n = {int(n_)}, m = {m:g}: {_percent(no['pass_rate'].iloc[0])} without clusters, "
                             f"{taus} with SWE-bench's")
        if pairs:
            text += " Few effective clusters cost power: " + "; ".join(pairs) + "."
        out.append(text)
        est = power.dropna(subset=["gate_power_estimate"])
        if len(est):
            gap = est["gate_power_estimate"] - est["pass_rate"]
            top = est.loc[gap.idxmax()]
            text = (f"- **The gate's own estimate of that chance** (Φ(m/SE − t_df), from each data set's SE, "
                    "averaged over the data sets) is off the simulated one by "
                    f"{_signed(100 * gap.min())} to {_signed(100 * gap.max())} points; most at {_where(top)}: "
                    f"{_percent(top['gate_power_estimate'])} against {_percent(top['pass_rate'])}")
            if top["wild_share"] > 0 and (abs(top["gate_power_estimate"] - top["t_pass_rate"])
                                          < abs(top["gate_power_estimate"] - top["pass_rate"])):
                text += (f" (the CR2 t test alone passes {_percent(top['t_pass_rate'])} there: the estimate does not "
                         "count the wild bootstrap's veto)")
            out.append(text + ".")
    return out


def _wild_df() -> str:
    from bayeserr.analyses.comparison import WILD_DF
    return f"{WILD_DF:g}"


def gate_section(df, command: str) -> list[str]:
    """The release gate's section of ``docs/calibration.md`` as Markdown lines, between
    :data:`SECTION_START` and :data:`SECTION_END`."""
    first = df.iloc[0]
    level, reps = float(first["level"]), int(df["reps"].min())
    alpha = 1 - level
    ns = sorted({int(r["n"]) // 2 if r["clusters"] == "suite" else int(r["n"]) for _, r in df.iterrows()
                 if r["clusters"] != "none"})
    sizes_text = ", ".join(f"{s}" for s in SWEBENCH_SIZES)
    scaled = [f"({', '.join(str(s) for s in scaled_sizes(SWEBENCH_SIZES, n_))}) at n = {n_}" for n_ in ns
              if n_ != sum(SWEBENCH_SIZES)]
    lines = [
        SECTION_START,
        "## The release gate's size at the margin",
        "",
        "How often `bayeserr gate` passes when it should not (`bayeserr.lab.gate`; `docs/methods.md` §3.11). "
        "Each data set is one eval of a candidate A and a baseline B on the same questions, with 0/1 answers: "
        f"the models disagree on {_nominal(DISAGREE)} of questions, A alone is right on (disagreement + δ)/2 of them "
        f"and B alone on (disagreement − δ)/2. With clusters, SWE-bench Verified's {len(SWEBENCH_SIZES)} "
        f"repositories (sizes {sizes_text} at n = {sum(SWEBENCH_SIZES)}"
        + (f"; scaled, every cluster kept: {'; '.join(scaled)}" if scaled else "")
        + "), and each cluster shifts δ by an effect of sd τ (mean 0), so the true A − B over clusters and "
        "questions is exactly the design's."
        + (" In a suite design the eval is two tasks of n/2 questions, the first with SWE-bench's clusters "
           "scaled to n/2 (and their effects), the second without clusters, the same δ in both, and the gate "
           f"tests the {SUITE_WEIGHTING} suite difference (`bayeserr gate --suite {SUITE_WEIGHTING}`: CR2 within "
           "tasks, the t test on the df (S2) of `docs/methods.md` §3.12, no wild bootstrap)."
           if (df["clusters"] == "suite").any() else "")
        + " The gate runs at its default level "
        f"({_nominal(level)}) and seed, through its own decision (`decide`: without clusters the score test for paired proportions of Nam and Tango with a ½ continuity and a skewness correction, §3.11; "
        f"the one-sided CR2 t test on the Bell–McCaffrey df, and where that df is below {_wild_df()} the wild "
        "cluster bootstrap too, with clusters); the first data set of every cell is also run through "
        "`bayeserr.gate` itself and must give the same verdict. At a true A − B of exactly −m a "
        "non-inferiority pass is wrong, and at +m a superiority pass: the pass rate is the gate's size, "
        f"nominal at most {_nominal(alpha)}. At a true A − B of 0 a non-inferiority pass is right: the rate is "
        f"the gate's power, the price of the margin. {reps:,} data sets per cell, ± one Monte Carlo SE "
        f"(±{100 * math.sqrt(alpha * (1 - alpha) / reps):.2f} points for a rate near {_nominal(alpha)}); a size "
        f"in **bold** is more than {CLEAR_SE} SEs above {_nominal(alpha)}. The last column is the gate's own estimate "
        "of its power (the \"too small for this margin\" message), averaged over the data sets.",
        *findings_head(command, gate_findings(df)),
        "",
        "### Pass rates (%)",
        "",
        *gate_table(df),
        SECTION_END,
    ]
    return lines


publish_gate = publisher('calibration_gate.csv', gate_section, SECTION_START, SECTION_END)
