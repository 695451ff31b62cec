"""Two models on the same questions, and all pairs of many (``docs/methods.md`` §3).

Convention: ``compare(ds, A, B)`` estimates ``A − B``.  The headline test
(``statistic``, ``df``, ``p_value``, ``ci``; §3.8) is, with clusters, the CR2
t-test on the paired differences with Bell–McCaffrey df (M4b applied to
``d_i``; ``test = "t_cr2_bm"``), else the paired z-test (M7; ``test =
"z_paired"``).  The paper's clustered paired SE (M8) stays beside it,
labelled.  Where the df is small (below :data:`WILD_DF`), the wild cluster
restricted bootstrap (§3.4) gives a second opinion.  The unclustered moments
of all pairs come from M×M matrix products (:mod:`bayeserr.stats.pairs`); the
cluster sums of the differences are formed in chunks of pairs.  p-values are
adjusted with ``statsmodels.stats.multitest.multipletests`` (Holm and
Benjamini–Hochberg).  Each :class:`Comparison` is built once, with its
Bayesian probabilities when asked for (``bayes="fast"`` by default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeserr.analyses.families import decide, family_rows
from bayeserr.base.errors import InputError
from bayeserr.base.results import ResultList, frame_value
from bayeserr.registries import caveats
from bayeserr.registries.options import Options
from bayeserr.stats.pairs import (
    correlation,
    discordant_counts,
    mcnemar_pvalues,
    pair_cluster_totals,
    pair_moments,
    paired_standard_errors,
)


@dataclass(frozen=True)
class McNemar:
    """McNemar's test on the 2×2 table of a pair of 0/1 models (K = 1), §3.5."""

    n_both: int
    n_a_only: int
    n_b_only: int
    n_neither: int
    p_value: float  #: exact binomial test on the discordant pairs
    p_mid: float  #: mid-p version

    def to_dict(self) -> dict:
        return {"n_a_only": self.n_a_only, "n_b_only": self.n_b_only,
                "p_value": self.p_value, "p_mid": self.p_mid}


@dataclass(frozen=True)
class WildBootstrap:
    """The wild cluster restricted bootstrap of one pair (§3.4)."""

    p_value: float
    ci: tuple | None  #: None where the test never rejects on a side (an unbounded interval)
    weights: str
    draws: int
    exact: bool

    def to_dict(self) -> dict:
        return {"p_value": self.p_value, "ci": None if self.ci is None else list(self.ci),
                "weights": self.weights, "draws": self.draws, "exact": self.exact}


@dataclass(frozen=True)
class Comparison:
    """A − B on the questions both answered (§3)."""

    a: str
    b: str
    n_questions: int
    n_only_a: int  #: questions dropped because only A answered them
    n_only_b: int
    mean_a: float
    mean_b: float
    diff: float
    se_unpaired: float
    se_paired: float
    se_clustered_paired: float | None  #: CR2 on d (M4b): the clustered headline SE
    se_clustered_paired_paper: float | None  #: the paper's (M8), or CR1 with cluster_correction="cr1"
    n_clusters: int | None
    effective_clusters: float | None
    test: str  #: "t_cr2_bm" or "z_paired": what the headline below is
    statistic: float  #: t (or z); ±inf when the SE is 0 and the difference is not
    df: float | None  #: Bell–McCaffrey df of the t; None for z
    ci: tuple[float, float]
    p_value: float
    p_holm: float
    p_bh: float
    correlation: float
    mcnemar: McNemar | None
    level: float
    cluster_correction: str | None
    wild_bootstrap: WildBootstrap | None = None
    prob_a_better: float | None = None
    prob_tie: float | None = None
    p_romano_wolf: float = float("nan")  #: Romano–Wolf step-down p over the family (§3.9)
    adjust: str = "romano-wolf"  #: the adjustment behind ``p_adjusted`` and ``different``
    p_adjusted: float = float("nan")  #: p adjusted over the family by ``adjust``
    different: bool = False  #: declared different at ``1 − level`` (the report's one decision)
    ci_adjusted: tuple | None = None  #: interval adjusted over the family as the p-values are (§3.9), cut to [−1, 1]
    #: its critical value c_k: the uncut interval is diff ± c_k·SE (§3.9)
    ci_adjusted_critical: float | None = None

    def flipped(self) -> "Comparison":
        """The same comparison as B − A: signs of the difference, statistic and
        intervals turned, A's and B's counts swapped, P(B > A) = 1 − P(A > B)."""
        from dataclasses import replace

        def neg(ci):
            return None if ci is None else (-ci[1], -ci[0])
        mc = self.mcnemar
        wb = self.wild_bootstrap
        return replace(
            self, a=self.b, b=self.a, n_only_a=self.n_only_b, n_only_b=self.n_only_a, mean_a=self.mean_b,
            mean_b=self.mean_a, diff=-self.diff, statistic=-self.statistic, ci=neg(self.ci),
            ci_adjusted=neg(self.ci_adjusted),
            mcnemar=None if mc is None else replace(mc, n_a_only=mc.n_b_only, n_b_only=mc.n_a_only),
            wild_bootstrap=None if wb is None else replace(wb, ci=neg(wb.ci)),
            prob_a_better=None if self.prob_a_better is None else 1.0 - self.prob_a_better)

    @property
    def se(self) -> float:
        """The SE behind the headline test: CR2 on d with clusters, else (M7)."""
        return self.se_clustered_paired if self.test == "t_cr2_bm" else self.se_paired

    def to_dict(self) -> dict:
        """The comparison entry of the JSON report (§7.2)."""
        return {
            "a": self.a, "b": self.b, "n_questions": self.n_questions, "diff": self.diff,
            "se_unpaired": self.se_unpaired, "se_paired": self.se_paired,
            "se_clustered_paired": self.se_clustered_paired,
            "se_clustered_paired_paper": self.se_clustered_paired_paper,
            "n_clusters": self.n_clusters, "effective_clusters": self.effective_clusters,
            "test": self.test, "statistic": self.statistic, "df": self.df,
            "ci": list(self.ci), "p_value": self.p_value, "p_holm": self.p_holm, "p_bh": self.p_bh,
            "p_romano_wolf": self.p_romano_wolf, "p_adjusted": self.p_adjusted, "different": self.different,
            "ci_adjusted": None if self.ci_adjusted is None else list(self.ci_adjusted),
            "ci_adjusted_critical": self.ci_adjusted_critical,
            "wild_bootstrap": None if self.wild_bootstrap is None else self.wild_bootstrap.to_dict(),
            "correlation": self.correlation,
            "mcnemar": None if self.mcnemar is None else self.mcnemar.to_dict(),
            "prob_a_better": self.prob_a_better, "prob_tie": self.prob_tie,
        }

    def to_frame(self) -> pd.DataFrame:
        return Comparisons((self,)).to_frame()


class Comparisons(ResultList):
    """All pairwise comparisons, with multiplicity-adjusted p-values;
    ``comps["A", "B"]`` (or ``comps.get("A", "B")``) looks one up."""

    key = ("a", "b")

    def __new__(cls, pairs=(), skipped=(), family=None, rank_decisions=None):
        self = super().__new__(cls, pairs)
        #: pairs left out because they share fewer than 2 questions: (a, b, n_common)
        self.skipped = tuple(skipped)
        #: the family the adjustment covers (:class:`~bayeserr.analyses.families.Decisions`)
        self.family = family
        #: the report's family's decisions, for the simultaneous rank intervals (``ranking=True``)
        self.rank_decisions = rank_decisions
        return self

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for c in self:
            d = c.to_dict()
            mc, wb = d.pop("mcnemar"), d.pop("wild_bootstrap")
            d["ci_low"], d["ci_high"] = d.pop("ci")
            sim = d.pop("ci_adjusted")
            d["ci_adjusted_low"], d["ci_adjusted_high"] = sim if sim is not None else (None, None)
            d["mcnemar_p"] = None if mc is None else mc["p_value"]
            d["wild_bootstrap_p"] = None if wb is None else wb["p_value"]
            rows.append({k: frame_value(v) for k, v in d.items()})
        return pd.DataFrame(rows) if rows else pd.DataFrame(columns=FRAME_COLUMNS)


#: columns of :meth:`Comparisons.to_frame` (kept for an empty frame; a test checks them)
FRAME_COLUMNS = ("a", "b", "n_questions", "diff", "se_unpaired", "se_paired", "se_clustered_paired",
                 "se_clustered_paired_paper", "n_clusters", "effective_clusters", "test", "statistic", "df",
                 "p_value", "p_holm", "p_bh", "p_romano_wolf", "p_adjusted", "different", "ci_adjusted_critical",
                 "correlation",
                 "prob_a_better", "prob_tie", "ci_low", "ci_high", "ci_adjusted_low",
                 "ci_adjusted_high", "mcnemar_p", "wild_bootstrap_p")


# ------------------------------------------------------------------- helpers
def _check_paired(pm, names, on_unpaired: str):
    if on_unpaired == "drop" or not (pm.only > 0).any():
        return
    a, b = np.argwhere((pm.only > 0) | (pm.only.T > 0))[0]
    n_pairs = int(np.triu((pm.only > 0) | (pm.only.T > 0), 1).sum())
    raise InputError(
        f"models do not share the same question set, so a paired comparison is undefined: "
        f"'{names[a]}' answered {int(pm.only[a, b])} question(s) that '{names[b]}' did not, and "
        f"'{names[b]}' answered {int(pm.only[b, a])} that '{names[a]}' did not ({n_pairs} "
        f"pair(s) affected). Give every model the same questions, or pass --on-unpaired drop "
        f"to compare each pair on the questions both answered (the drop is reported)."
    )


#: Pairs whose Bell–McCaffrey df is below this get the wild cluster bootstrap
#: as a second opinion: the same threshold as the few-clusters warning, where
#: the CR2 SE is itself noisy.  Above it the CR2 t-test holds its level in the
#: lab (docs/calibration.md) and the bootstrap would only cost time (on
#: LiveBench's 4,158 pairs with 18 clusters, about 30 s).
WILD_DF = 10






def _clustered_pairs(source, ia, ib):
    """CR2 SE, Bell–McCaffrey df, C_eff and clusters of the differences of every
    pair (§3.3), with the cluster sums the wild bootstrap and the Bayesian pair
    model need; ``source`` a :class:`ViewPairs` or :class:`SufficientPairs`."""
    from bayeserr.stats.fewclusters import bm_df, cr2_from_sums, effective_clusters, shared_row
    out = {k: np.full(len(ia), np.nan) for k in ("se", "df", "c_eff", "n_clusters")}
    totals = {"D": [], "Q": [], "sizes": []}
    for sl, D, Q, sizes in source.cluster_totals(ia, ib):
        n = sizes.sum(axis=-1)
        S = D - sizes * (D.sum(axis=-1) / n)[:, None]
        one = shared_row(sizes)  # complete data: the sizes-only statistics once per chunk
        out["se"][sl], out["df"][sl] = cr2_from_sums(S, sizes), bm_df(one)
        out["c_eff"][sl], out["n_clusters"][sl] = effective_clusters(one), (one > 0).sum(axis=-1)
        totals["D"].append(D)
        totals["Q"].append(Q)
        totals["sizes"].append(np.asarray(sizes))
    totals["S"] = source.model_cluster_sums()  # per-model sums behind every D, or None
    return out, totals


class ViewPairs:
    """The pair statistics of an in-memory :class:`~bayeserr.stats.view.DataView`."""

    def __init__(self, view):
        self.view = view
        self.names = view.models
        self.clustered = view.codes is not None
        self.binary = view.binary

    def moments(self):
        return pair_moments(self.view.s, self.view.codes)

    def cluster_totals(self, ia, ib):
        return pair_cluster_totals(self.view, ia, ib)

    def model_cluster_sums(self):
        """Each model's cluster sums S, when every pair's cluster sums are ``S[a] − S[b]`` with
        the same cluster sizes (every model answered every question), else None."""
        from bayeserr.stats.estimators import cluster_sums
        view = self.view
        return cluster_sums(view.s, view.codes) if view.answered.all() else None

    def discordant(self):
        return discordant_counts(self.view.s)


class SufficientPairs:
    """The same pair statistics from :class:`~bayeserr.stats.sufficient.Sufficient`
    (any engine): the moments, cluster totals and McNemar cells come from its sums."""

    def __init__(self, stats, gap=None):
        self.stats = stats
        self.names = stats.models
        self.clustered = stats.clusters is not None
        self.binary = stats.binary
        self.gap = gap  #: told what the Bayesian pair probabilities could not take from the sums
        #: the Bayesian bootstrap over questions (no clusters) reads the unit multiset as a view:
        #: one column per distinct row of per-question means, ``mult`` questions each
        self.codes = None if stats.clusters is None else np.arange(len(stats.clusters))
        self.s = self.answered = self.mult = None
        if stats.clusters is None and stats.units is not None:
            from bayeserr.stats.bayes_sums import units_as_scores
            self.s, self.mult = units_as_scores(stats.units)
            self.answered = ~np.isnan(self.s)

    def probabilities(self, arr, settings):
        """``P(A > B)`` and ``P(tie)`` of every pair from the sums (as the memory engine's); pairs
        that need the Bayesian bootstrap over questions are NaN, and named, when the unit
        multiset was not kept."""
        from bayeserr.bayes.pairs import all_pair_probabilities
        if self.codes is None and self.s is None and not np.isfinite(arr.tables[0]).all() and self.gap:
            self.gap(["P(A > B) and P(tie) of pairs of fractional or K > 1 scores (their Bayesian bootstrap over "
                      "questions, past the memory bound of the distinct per-question means)"])
        return all_pair_probabilities(self, arr.ia, arr.ib, arr.tables, settings, arr.totals)

    def moments(self):
        from bayeserr.stats.pairs import moments_from_sums, with_cluster_sums
        from bayeserr.stats.sufficient import residual_square_sum
        st = self.stats
        pm, dbar = moments_from_sums(st.N, st.SA, st.QA, st.XX, st.centre)
        if st.clusters is None:
            return pm
        Nc, SAc = st._pair_clusters_full()
        ss = residual_square_sum(SAc - SAc.transpose(1, 0, 2), Nc, dbar)
        return with_cluster_sums(pm, ss, (Nc > 0).sum(axis=-1).astype(float))

    def cluster_totals(self, ia, ib):
        from bayeserr.stats.bayes_sums import pair_square_totals
        st = self.stats
        D, sizes = st.pair_cluster_totals(ia, ib)
        yield slice(0, len(ia)), D, pair_square_totals(st.N, st.SA, st.QA, st.XX, st.centre, ia, ib), sizes

    def model_cluster_sums(self):
        """As :meth:`ViewPairs.model_cluster_sums`, from the sums."""
        return self.stats.model_cluster_sums()

    def discordant(self):
        return self.stats.discordant()


def _wild(totals, df, options) -> dict:
    """Wild cluster bootstrap of the pairs with df < WILD_DF: position -> WildBootstrap."""
    from bayeserr.stats.fewclusters import wild_cluster_bootstrap
    small = np.flatnonzero(np.isfinite(df) & (df < WILD_DF))
    if not small.size:
        return {}
    D_all = np.concatenate(totals["D"])
    D = D_all[small]
    sizes = np.broadcast_to(np.concatenate(totals["sizes"]), D_all.shape)[small]
    # one call per pattern of clusters present: the weight scheme and the choice between
    # enumerating and drawing then depend on the pair alone, not on the other pairs of the
    # file (a pair's p is the same in `report` and in `compare`)
    patterns = {}
    for k, row in enumerate(sizes > 0):
        patterns.setdefault(row.tobytes(), []).append(k)
    out = {}
    for ks in patterns.values():
        ks = np.array(ks)
        # only the pair's own clusters: the draws then do not depend on the file's other clusters
        cols = np.flatnonzero(sizes[ks[0]] > 0)
        res = wild_cluster_bootstrap(D[np.ix_(ks, cols)], sizes[np.ix_(ks, cols)],
                                     level=options.level, seed=options.seed)
        for k, lo_hi, p in zip(ks, res.ci, res.p_value):
            lo, hi = lo_hi
            ci = (float(lo), float(hi)) if np.isfinite(lo) and np.isfinite(hi) else None
            out[int(small[k])] = WildBootstrap(float(p), ci, res.weights, int(res.draws), bool(res.exact))
    return out


@dataclass(frozen=True)
class PairArrays:
    """Every statistic of the pairs ``(ia[k], ib[k])`` as arrays."""

    ia: np.ndarray
    ib: np.ndarray
    pm: object
    diff: np.ndarray
    se_unpaired: np.ndarray
    se_paired: np.ndarray
    se_paper: np.ndarray | None
    se_head: np.ndarray  #: the SE behind the headline test (CR2 on d with clusters, else M7)
    clustered: dict | None  #: se, df, c_eff, n_clusters (CR2 on d)
    test: np.ndarray  #: True where the headline is the CR2 t-test
    statistic: np.ndarray
    df: np.ndarray
    p: np.ndarray
    ci: np.ndarray
    correlation: np.ndarray
    tables: tuple  #: McNemar (n_a_only, n_b_only, n_concordant), NaN without a 2×2 table
    mcnemar_p: tuple | None
    skipped: tuple
    wild: dict
    totals: dict | None  #: cluster sums of d and d² and sizes (lists of chunks), when clustered


#: bytes per comparison kept in memory (the result object, its dict for JSON,
#: the arrays behind it), measured; and per cell of an M×M moment matrix
BYTES_PER_PAIR = 6_000
BYTES_PER_MATRIX_CELL = 8 * 16


def check_pair_memory(n_models: int) -> None:
    """Refuse, before allocating, an all-pairs comparison that cannot fit in memory."""
    from bayeserr.base.errors import InputError
    from bayeserr.data.memory import MAX_CUBE_BYTES, available_memory
    n_pairs = n_models * (n_models - 1) // 2
    need = n_pairs * BYTES_PER_PAIR + n_models**2 * BYTES_PER_MATRIX_CELL
    limit = min(MAX_CUBE_BYTES, available_memory() or MAX_CUBE_BYTES)
    if need > limit:
        from bayeserr.base.errors import human_bytes
        raise InputError(
            f"comparing all {n_pairs:,} pairs of {n_models:,} models would need about "
            f"{human_bytes(need)}, more than {human_bytes(limit)} available. Compare fewer models "
            "(--models A,B,...), or score them without pairs (bayeserr.score).")


def pair_arrays(view, options: Options, second_opinion: bool = True) -> PairArrays:
    """Every statistic of every pair of a view's models, or of the models of
    :class:`SufficientPairs` (one code path for every engine)."""
    from bayeserr.stats.fewclusters import t_test
    source = view if isinstance(view, (ViewPairs, SufficientPairs)) else ViewPairs(view)
    names = source.names
    check_pair_memory(len(names))
    pm = source.moments()
    _check_paired(pm, names, options.on_unpaired)
    se_un, se_pa, se_cl = paired_standard_errors(pm, options.cluster_correction)
    corr = correlation(pm)
    ia, ib = np.triu_indices(len(names), 1)
    few = pm.n[ia, ib] < 2
    skipped = tuple((names[i], names[j], int(pm.n[i, j])) for i, j in zip(ia[few], ib[few]))
    ia, ib = ia[~few], ib[~few]
    diff = pm.mean[ia, ib] - pm.mean.T[ia, ib]
    se_head, df, clustered, wild, se_paper = se_pa[ia, ib], np.full(len(ia), np.inf), None, {}, None
    totals = None
    if source.clustered:
        clustered, totals = _clustered_pairs(source, ia, ib)
        ok = clustered["n_clusters"] >= 2
        se_head = np.where(ok, clustered["se"], se_head)
        df = np.where(ok, clustered["df"], np.inf)
        se_paper = np.where(ok, se_cl[ia, ib], np.nan)
        if second_opinion:
            wild = _wild(totals, np.where(ok, df, np.nan), options)
    head = t_test(diff, se_head, df, options.level)
    nan = np.full(len(ia), np.nan)
    tables, mc_p = (nan, nan, nan), None
    binary = source.binary
    if binary.any():
        only = source.discordant()
        both = binary[ia] & binary[ib]
        b, c = only[ia, ib].astype(float), only[ib, ia].astype(float)
        b[~both], c[~both] = np.nan, np.nan
        tables = (b, c, pm.n[ia, ib] - b - c)
        mc_p = mcnemar_pvalues(np.nan_to_num(b).astype(np.int64), np.nan_to_num(c).astype(np.int64))
    return PairArrays(ia, ib, pm, diff, se_un[ia, ib], se_pa[ia, ib], se_paper, se_head, clustered,
                       np.isfinite(df), head.statistic, df, head.p_value,
                       np.clip(head.ci, -1.0, 1.0),  # a difference of two means of [0, 1] scores
                       corr[ia, ib], tables,
                       mc_p, skipped, wild, totals)


def _pair_columns(arr: PairArrays, fam, better, tie) -> dict:
    """Every per-pair number of the comparisons as Python lists (``tolist()`` once, not a
    NumPy scalar per pair and field: 4,950 pairs, 30 fields), with the McNemar tables'
    counts; non-finite values None where a field is optional."""
    pm, cl, ia, ib = arr.pm, arr.clustered, arr.ia, arr.ib

    def optional(x):
        return [None] * len(ia) if x is None else [v if math.isfinite(v) else None for v in np.asarray(x, float).tolist()]
    b, c, _ = arr.tables
    n = pm.n[ia, ib]
    return {
        "ia": ia.tolist(), "ib": ib.tolist(), "n": n.astype(int).tolist(),
        "only_a": pm.only[ia, ib].astype(int).tolist(), "only_b": pm.only[ib, ia].astype(int).tolist(),
        "mean_a": pm.mean[ia, ib].tolist(), "mean_b": pm.mean[ib, ia].tolist(), "diff": arr.diff.tolist(),
        "se_unpaired": arr.se_unpaired.tolist(), "se_paired": arr.se_paired.tolist(),
        "se_clustered": optional(None if cl is None else cl["se"]), "se_paper": optional(None if cl is None else arr.se_paper),
        "n_clusters": [None] * len(ia) if cl is None else cl["n_clusters"].astype(int).tolist(),
        "c_eff": optional(None if cl is None else cl["c_eff"]), "test": arr.test.tolist(),
        "statistic": arr.statistic.tolist(), "df": arr.df.tolist(), "ci": arr.ci.tolist(), "p": arr.p.tolist(),
        "p_holm": fam.p["holm"].tolist(), "p_bh": fam.p["bh"].tolist(), "p_rw": fam.p["romano-wolf"].tolist(),
        "correlation": arr.correlation.tolist(), "p_adjusted": fam.p_adjusted.tolist(),
        "different": np.asarray(fam.different, bool).tolist(), "ci_adjusted": fam.ci_adjusted.tolist(),
        "critical": None if fam.critical_pairs is None else fam.critical_pairs.tolist(),
        "better": [None] * len(ia) if better is None else np.asarray(better, float).tolist(),
        "tie": [None] * len(ia) if tie is None else np.asarray(tie, float).tolist(),
        # McNemar: the table's counts (both right = round(mean_a · n) − a only), its two p-values
        "mc_b": b.tolist(), "mc_c": c.tolist(),
        "mc_both": (np.rint(np.nan_to_num(pm.mean[ia, ib] * n)) - np.nan_to_num(b)).tolist(),
        "mc_p": None if arr.mcnemar_p is None else [x.tolist() for x in arr.mcnemar_p],
    }


def _mcnemar(col: dict, k: int) -> McNemar | None:
    if not math.isfinite(col["mc_b"][k]):
        return None
    n_ij, n_b, n_c, both = col["n"][k], int(col["mc_b"][k]), int(col["mc_c"][k]), int(col["mc_both"][k])
    return McNemar(both, n_b, n_c, n_ij - both - n_b - n_c, col["mc_p"][0][k], col["mc_p"][1][k])


def compare_view(view, options: Options, *, ranking: bool = False, second_opinion: bool = True,
                 joint: bool = True) -> Comparisons:
    """Every pair ``(i, j)``, ``i < j``, of the view's models, estimating ``models[i] − models[j]``.

    p-values are adjusted over the family of ``options.pairs``
    (:func:`~bayeserr.analyses.families.family_rows`); ``ranking`` keeps
    the family's decisions for the simultaneous rank intervals
    (:func:`~bayeserr.analyses.ranking.rank_view`; the models' own intervals and
    the set for the best come from the pairs' one-sided tests there).
    ``second_opinion=False`` skips the
    per-pair wild bootstrap (the lab, which does not report it); ``joint=False`` the
    joint draws (Holm, BH or none only; the tables of each task of a suite)."""
    arr = pair_arrays(view, options, second_opinion)
    names = tuple(view.names if isinstance(view, SufficientPairs) else view.models)
    families = [family_rows(options.pairs, names, arr.ia, arr.ib)]
    decided = decide(arr, options, families, names, joint=joint)
    fam = decided[0]
    better = tie = None
    if options.bayes.on and len(arr.ia) and isinstance(view, SufficientPairs):
        better, tie = view.probabilities(arr, options.bayes)
    elif options.bayes.on and len(arr.ia):
        from bayeserr.bayes.pairs import all_pair_probabilities
        better, tie = all_pair_probabilities(view, arr.ia, arr.ib, arr.tables, options.bayes, arr.totals)
    col = _pair_columns(arr, fam, better, tie)
    set_rows = set(fam.rows.tolist())
    pairs = []
    for k, (i, j) in enumerate(zip(col["ia"], col["ib"])):
        in_family = k in set_rows
        ci_adj = col["ci_adjusted"][k]
        pairs.append(Comparison(
            a=names[i], b=names[j], n_questions=col["n"][k], n_only_a=col["only_a"][k],
            n_only_b=col["only_b"][k], mean_a=col["mean_a"][k], mean_b=col["mean_b"][k],
            diff=col["diff"][k], se_unpaired=col["se_unpaired"][k], se_paired=col["se_paired"][k],
            se_clustered_paired=col["se_clustered"][k], se_clustered_paired_paper=col["se_paper"][k],
            n_clusters=col["n_clusters"][k], effective_clusters=col["c_eff"][k],
            test="t_cr2_bm" if col["test"][k] else "z_paired", statistic=col["statistic"][k],
            df=col["df"][k] if col["test"][k] else None,
            ci=tuple(col["ci"][k]), p_value=col["p"][k], p_holm=col["p_holm"][k], p_bh=col["p_bh"][k],
            correlation=col["correlation"][k], mcnemar=_mcnemar(col, k), level=options.level,
            cluster_correction=options.cluster_correction if arr.clustered is not None else None,
            wild_bootstrap=arr.wild.get(k), prob_a_better=col["better"][k], prob_tie=col["tie"][k],
            p_romano_wolf=col["p_rw"][k], adjust=options.adjust, p_adjusted=col["p_adjusted"][k],
            different=col["different"][k],
            ci_adjusted=tuple(ci_adj) if in_family and all(map(math.isfinite, ci_adj)) else None,
            ci_adjusted_critical=(col["critical"][k] if col["critical"] is not None and in_family
                                  and math.isfinite(col["critical"][k]) else None),
        ))
    return Comparisons(pairs, arr.skipped, fam, decided if ranking else None)


# ------------------------------------------------------------------- public
def compare_all(ds, models=None, *, options: Options | None = None, **kwargs) -> Comparisons:
    """Every pair of the listed ``models``, ``models[i] − models[j]`` for ``i < j``;
    by default all models, best first as in the report (score, then name), so
    that pairs are oriented as in the report's JSON.  Either orientation looks
    up: ``comps["B", "A"]`` is B − A.

    Keyword arguments are those of :class:`~bayeserr.registries.options.Options`
    (``level``, ``cluster_correction``, ``on_unpaired``, ``bayes``, …); the
    numbers equal ``bayeserr report``'s for the same options.  Adjusted
    p-values (Romano–Wolf by default, Holm, BH) are over the family of
    ``pairs`` (all pairs returned unless ``pairs="vs=MODEL"``);
    ``on_unpaired="drop"`` compares each pair on the questions both answered
    (the counts dropped are ``n_only_a`` / ``n_only_b``).
    """
    from bayeserr.stats.view import DataView
    options = Options.coerce(options, **kwargs)
    view = DataView.from_dataset(ds).select(models)
    if models is None:
        view = view.select(ranked_names(view))
    if len(view.models) < 2:
        raise InputError(f"compare_all needs at least two models (got {len(view.models)}: "
                         f"{', '.join(repr(m) for m in view.models)}). List two or more in models=, or leave "
                         "models out to compare all the models of the data.")
    return compare_view(view, options)


def compare(ds, a: str, b: str, *, options: Options | None = None, **kwargs) -> Comparison:
    """One pair: ``A − B`` (M5–M8, McNemar, Bayesian probabilities).  See :func:`compare_all`."""
    a, b = pair_names(a, b)
    comps = compare_all(ds, [a, b], options=options, **kwargs)
    if not len(comps):
        raise InputError(f"'{a}' and '{b}' share {comps.skipped[0][2]} question(s); a paired "
                         "comparison needs at least 2.")
    return comps[0]


def ranked_names(view) -> list[str]:
    """The view's models best first, ties by name: the report's order."""
    means = [float(np.nanmean(view.s[j][view.answered[j]])) if view.answered[j].any() else -np.inf
             for j in range(len(view.models))]
    return [view.models[j] for j in sorted(range(len(means)), key=lambda j: (-means[j], view.models[j]))]


def pair_names(a, b) -> tuple[str, str]:
    """The two model names of one comparison, as text; an :class:`InputError`
    for something that is not a name, or one model twice."""
    from bayeserr.stats.view import model_names
    a, b = (model_names([m], "compare", "compare(ds, 'A', 'B')")[0] for m in (a, b))
    if a == b:
        raise InputError(f"compare needs two different models (got '{a}' twice); name two models of the "
                         "data, e.g. compare(ds, 'A', 'B').")
    return a, b


def pair_caveats(comps: Comparisons, clustered: bool) -> list:
    """Warnings about the comparisons: unpaired drops, McNemar under clustering."""
    out = [caveats.unpaired_dropped(c.a, c.b, c.n_questions, c.n_only_a, c.n_only_b)
           for c in comps if c.n_only_a or c.n_only_b]
    out += [caveats.pair_skipped(a, b, n) for a, b, n in comps.skipped]
    out += [caveats.zero_se(c.a, c.b) for c in comps if np.isinf(c.statistic)]
    out += [caveats.identical_scores(c.a, c.b, c.n_questions) for c in comps
            if c.se_paired == 0 and c.diff == 0]
    out += [caveats.pair_single_cluster(c.a, c.b) for c in comps
            if c.n_clusters is not None and c.n_clusters < 2]
    out += [caveats.pair_few_df(c.a, c.b, c.df) for c in comps if c.different and c.df is not None and c.df < 2]
    if clustered and any(c.mcnemar is not None for c in comps):
        out.append(caveats.mcnemar_clustered())
    out += [caveats.pair_estimand_differs(c.a, c.b, c.diff, c.prob_a_better) for c in comps
            if clustered and _points_the_other_way(c.diff, c.prob_a_better, bool(c.different))]
    return out


#: P(A > B) on the other side of ½ from the difference's sign by more than this is flagged: the
#: posterior must lean clearly the other way (P ≤ 0.2 against a positive difference) — at 0.43
#: against "+0.0 points" the two agree that the pair is a toss-up, and saying otherwise is noise
ESTIMAND_MARGIN = 0.3
#: ... or by more than this when the report declares the pair different (a decision the posterior doubts)
ESTIMAND_MARGIN_DECIDED = 0.05


def _points_the_other_way(diff: float, prob, different: bool = False) -> bool:
    """The pair posterior leans against the sign of the question-weighted
    difference, and by enough to matter (``docs/methods.md`` §5.3): a difference
    that shows as ±0.0 points has no direction to contradict."""
    if prob is None or not np.isfinite(prob) or round(abs(diff) * 100, 1) == 0:
        return False
    against = -np.sign(diff) * (prob - 0.5)
    return bool(against > ESTIMAND_MARGIN or (different and against > ESTIMAND_MARGIN_DECIDED))


@dataclass(frozen=True)
class FamilyVerdict:
    """What the report of every model says of one pair: its verdict under the
    report's default family (all pairs, the report's adjustment)."""

    n_models: int
    family: dict  #: the family's description (Decisions.to_dict())
    different: bool
    p_adjusted: float
    ci_adjusted: tuple | None  #: (low, high) of A − B, adjusted as the family's p-values

    def to_dict(self) -> dict:
        return {"n_models": self.n_models, "family": self.family, "different": self.different,
                "p_adjusted": self.p_adjusted,
                "ci_adjusted": None if self.ci_adjusted is None else list(self.ci_adjusted)}


def family_verdict(view, a: str, b: str, options: Options) -> FamilyVerdict | None:
    """The verdict the report of all of ``view``'s models gives the pair
    ``a − b`` (``docs/methods.md`` §3.9), or None with two models (the pair is
    the whole family).  The models are taken in the report's order, so the
    draws — and the numbers — are the report's."""
    from dataclasses import replace
    if len(view.models) <= 2:
        return None
    full = view.select(ranked_names(view))
    comps = compare_view(full, replace(options, bayes="off", pairs="auto"), second_opinion=False)
    for c in comps:
        if {c.a, c.b} == {a, b}:
            c = c if c.a == a else c.flipped()
            return FamilyVerdict(len(full.models), comps.family.to_dict(), bool(c.different),
                                 float(c.p_adjusted), c.ci_adjusted)
    return None
