"""Sufficient statistics of a report: sums over questions that any engine can
compute partition by partition and combine by addition (``docs/methods.md`` §7.3,
"Sufficient statistics and engines").

Every headline number of a report — per model the mean, the CLT, Bernoulli,
(M4), CR1 and CR2 standard errors, the Bell–McCaffrey df, C_eff, the design
effect, the exact intervals on n and n_eff, the K > 1 variance split; per pair
the difference, the unpaired, paired (M7), (M8) and CR2 standard errors, df,
t, p, ρ and McNemar — is a function of the sums below.  Each is a sum over
questions, so the statistics of a partition of the questions are the sum of
the statistics of its parts (``Sufficient.__add__``).

**Partitioning rule.** A question's rows (every model, every sample) must lie
in one partition: the per-question mean ``s_i`` averages a question's K
samples, and a pair's sums run over the questions *both* models answered.
Partition by question (e.g. a hash of the question id), never by model or by
row.  ``Sufficient.__add__`` refuses two parts that both hold a question
when question ids are tracked (``track_questions=True``, the tests).

Notation: model ``a`` answers question ``i`` with ``K_i ≥ 1`` samples; ``s_i``
is their mean; ``x_i = s_i − centre_a`` with ``centre_a`` a fixed per-model
shift (a multiple of 2⁻¹⁰ near the mean: it guards against cancellation and
keeps sums of 0/1 scores exact in float64).  ``w_i`` = 1 where answered.

Per model (``M``):
    ``n = Σ w``, ``sx = Σ x``, ``sxx = Σ x²``, ``k_sum = Σ K``, ``k_min``,
    ``k_max`` (combined by min / max), ``zero_one`` (combined by *and*);
    K > 1: ``n_rep`` (questions with K ≥ 2), ``w_sum = Σ σ_i²``,
    ``w_over_k = Σ σ_i² / K_i`` (ddof 1, over those questions).
Per model × cluster (``M × C``):
    ``nc = Σ_{i∈c} w``, ``sxc = Σ_{i∈c} x``.
Per pair (``M × M``, over the questions both answered):
    ``N = Σ w_a w_b``, ``SA = Σ x_a w_b``, ``QA = Σ x_a² w_b``, ``XX = Σ x_a x_b``.
Per pair × cluster (``M × M × C``; only when some model skipped a question of a partition, otherwise ``nc`` and ``sxc`` of each model):
    ``Nc = Σ_{i∈c} w_a w_b``, ``SAc = Σ_{i∈c} x_a w_b``.

For an intercept-only model the CR2 adjustment of cluster c is
``(1 − n_c/n)^(−1/2)`` (the hat block is ``(n_c/n) 11ᵀ``), and the
Bell–McCaffrey df is a function of the sizes ``n_c`` alone
(:func:`bayeserr.stats.fewclusters.bm_df`): both need only ``nc`` (and, for a
pair, ``Nc``).  Not functions of these sums: bootstraps over questions
(the Bayesian bootstrap), the Bayesian fits (hierarchical, cluster-effect,
three-level posteriors), pass@k, suite and per-task tables, task groups and
the judge section.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from bayeserr.stats import bayes_sums
from bayeserr.stats.estimators import cluster_sums

#: sums of squares at or below ``ROUNDING · n · ε`` times the raw second moment are rounding error
ROUNDING = 8.0
_EPS = np.finfo(float).eps


def centre_of(means) -> np.ndarray:
    """The per-model shift: the mean rounded to a multiple of 2⁻¹⁰ (0 where undefined)."""
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(np.round(np.asarray(means, float) * 1024.0) / 1024.0)


# --------------------------------------------------------------------------- #
# one model: the sums and the headline numbers from them
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class ModelSums:
    """Per-row sums of the centred per-question scores (leading axes: models or
    replicates); ``nc``/``sxc`` on a last axis of clusters, or ``None``."""

    n: np.ndarray
    sx: np.ndarray
    sxx: np.ndarray
    centre: np.ndarray
    nc: np.ndarray | None = None
    sxc: np.ndarray | None = None

    @classmethod
    def of_scores(cls, s, codes=None, centre=None) -> "ModelSums":
        """The sums of per-question scores ``s`` (``(..., n)``, NaN = unanswered)."""
        s = np.asarray(s, float)
        w = ~np.isnan(s)
        if centre is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                centre = centre_of(np.where(w, s, 0.0).sum(axis=-1) / w.sum(axis=-1))
        centre = np.asarray(centre, float)
        x = np.where(w, s - centre[..., None], 0.0)
        nc = sxc = None
        if codes is not None:
            codes = np.asarray(codes)
            nc, sxc = cluster_sums(w.astype(float), codes), cluster_sums(x, codes)
        return cls(w.sum(axis=-1).astype(float), x.sum(axis=-1), (x * x).sum(axis=-1), centre, nc, sxc)

    # --------------------------------------------------------------- numbers
    @property
    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.centre + self.sx / self.n

    @property
    def ss(self) -> np.ndarray:
        """``Σ (s_i − s̄)²``, exactly 0 when within rounding of 0."""
        with np.errstate(invalid="ignore", divide="ignore"):
            ss = self.sxx - self.sx * self.sx / self.n
        return np.where(ss > ROUNDING * _EPS * self.n * self.sxx, ss, 0.0)

    @property
    def se_clt(self) -> np.ndarray:
        """(M1) ``sqrt(Σ (s_i − s̄)² / ((n − 1) n))``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sqrt(self.ss / ((self.n - 1) * self.n))

    @property
    def residual_sums(self) -> np.ndarray:
        """``S_c = Σ_{i∈c} (s_i − s̄)``, 0 where the cluster is absent or the SS is 0."""
        with np.errstate(invalid="ignore", divide="ignore"):
            S = self.sxc - self.nc * (self.sx / self.n)[..., None]
        return np.where((self.nc > 0) & (self.ss > 0)[..., None], S, 0.0)

    @property
    def n_clusters(self) -> np.ndarray:
        return np.count_nonzero(self.nc, axis=-1)

    def se_clustered(self, correction: str = "paper") -> np.ndarray:
        """(M4) or CR1 (``docs/methods.md`` §2.4) from the cluster sums."""
        from bayeserr.stats.estimators import CLUSTER_CORRECTIONS
        S2 = (self.residual_sums ** 2).sum(axis=-1)
        n = self.n
        with np.errstate(invalid="ignore", divide="ignore"):
            if correction == "paper":
                return np.sqrt(np.maximum(self.se_clt ** 2 + (S2 - self.ss) / n ** 2, 0.0))
            if correction == "cr1":
                c = self.n_clusters
                return np.where(c >= 2, np.sqrt(c / np.where(c > 1, c - 1, 1) * S2 / n ** 2), np.nan)
        raise ValueError(f"cluster_correction must be one of {CLUSTER_CORRECTIONS}, got {correction!r}")

    def cr2(self):
        """(M4b): :class:`~bayeserr.stats.fewclusters.CR2Mean` from the cluster sums."""
        from bayeserr.stats.fewclusters import CR2Mean, bm_df, cr2_from_sums, effective_clusters
        return CR2Mean(mean=self.mean, se=cr2_from_sums(self.residual_sums, self.nc), df=bm_df(self.nc),
                       n_clusters=self.n_clusters, effective_clusters=effective_clusters(self.nc),
                       n=self.n.astype(np.int64))


def variance_split(n, sx, sxx, n_rep, w_sum, w_over_k):
    """The K > 1 split of ``docs/methods.md`` §2.7 from sums (one model), as
    :func:`bayeserr.stats.estimators.variance_components` computes it from the
    answers; ``None`` when no question has two answers."""
    from bayeserr.stats.estimators import VarianceComponents
    if n_rep == 0:
        return None
    within = float(w_sum / n_rep)
    ss = max(sxx - sx * sx / n, 0.0)
    raw = float(ss / (n - 1) - w_over_k / n_rep)
    clamped = raw < 0
    between = 0.0 if clamped else raw
    k_rec = int(np.floor(10 * within / between)) + 1 if between > 0 else None
    return VarianceComponents(between, within, k_rec, bool(clamped))


# --------------------------------------------------------------------------- #
# pairs
# --------------------------------------------------------------------------- #
def pair_sums(x: np.ndarray, w: np.ndarray) -> tuple:
    """``N, SA, QA, XX`` (M×M) of centred scores ``x`` (0 where unanswered) and
    the answered mask ``w`` (float): four matrix products, one when complete."""
    if w.all():
        n = float(w.shape[1])
        sx, sxx = x.sum(axis=1), (x * x).sum(axis=1)
        m = x.shape[0]
        return (np.full((m, m), n), np.repeat(sx[:, None], m, 1), np.repeat(sxx[:, None], m, 1), x @ x.T)
    return w @ w.T, x @ w.T, (x * x) @ w.T, x @ x.T


def pair_cluster_sums(x: np.ndarray, w: np.ndarray, codes: np.ndarray, n_codes: int):
    """``Nc, SAc`` (M×M×C): common questions and A's centred sum over them, per cluster."""
    m = x.shape[0]
    nc, sac = np.zeros((m, m, n_codes)), np.zeros((m, m, n_codes))
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    bounds = np.r_[0, np.flatnonzero(np.diff(sc)) + 1, sc.size]
    xs, ws = x[:, order], w[:, order]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi > lo:
            c = sc[lo]
            nc[:, :, c] = ws[:, lo:hi] @ ws[:, lo:hi].T
            sac[:, :, c] = xs[:, lo:hi] @ ws[:, lo:hi].T
    return nc, sac


def residual_square_sum(D, n_c, dbar):
    """``Σ_c (D_c − n_c d̄)²`` over the last axis: the cluster residual sums of a
    pair's differences, each formed before squaring (no large terms cancel)."""
    r = D - n_c * dbar[..., None]
    return (r * r).sum(axis=-1)


# --------------------------------------------------------------------------- #
# the statistics of a table (or of a partition of its questions)
# --------------------------------------------------------------------------- #
_ADD = ("n", "sx", "sxx", "k_sum", "n_rep", "w_sum", "w_over_k", "nc", "sxc", "N", "SA", "QA", "XX",
        "n_questions")


@dataclass(eq=False)
class Sufficient:
    """The sufficient statistics of a report over a set of questions (see the
    module docstring).  ``a + b`` combines two disjoint sets of questions."""

    models: tuple
    centre: np.ndarray  #: (M,) the shift of each model's scores
    clusters: tuple | None  #: cluster labels (the codes index them), or None
    n: np.ndarray
    sx: np.ndarray
    sxx: np.ndarray
    k_sum: np.ndarray
    k_min: np.ndarray
    k_max: np.ndarray
    zero_one: np.ndarray
    n_rep: np.ndarray
    w_sum: np.ndarray
    w_over_k: np.ndarray
    nc: np.ndarray | None
    sxc: np.ndarray | None
    N: np.ndarray
    SA: np.ndarray
    QA: np.ndarray
    XX: np.ndarray
    #: (Nc, SAc) when some partition was incomplete; None: every model answered
    #: every question of every partition (then Nc = nc, SAc = sxc per model)
    pair_clusters: tuple | None = None
    n_questions: int = 0  #: questions (any model) over the partitions
    questions: frozenset | None = field(default=None)  #: ids, when tracked (checks the partitioning)
    #: the count table of the Beta–Binomial models (:func:`bayeserr.stats.bayes_sums.count_table`)
    counts: np.ndarray | None = None
    #: without clusters, the unit multiset of the Bayesian bootstrap over questions
    #: (:func:`bayeserr.stats.bayes_sums.unit_multiset`); None with clusters or when past its bound
    units: tuple | None = None
    #: the run table of pass@k and pass^k (:func:`bayeserr.stats.bayes_sums.run_table`), when kept
    runs: tuple | None = None
    #: with n_correct/n_samples columns: their count table and, per model, whether every answered
    #: question's counts give its score (:func:`bayeserr.stats.bayes_sums.column_count_table`)
    column_counts: tuple | None = None

    # ------------------------------------------------------------ building
    @classmethod
    def empty(cls, models, centre, clusters=None, units: bool = True, runs: bool = False,
              columns: bool = False) -> "Sufficient":
        m = len(models)
        c = None if clusters is None else len(clusters)
        z = np.zeros(m)
        return cls(tuple(models), np.asarray(centre, float), None if clusters is None else tuple(clusters),
                   z.copy(), z.copy(), z.copy(), z.copy(), np.full(m, np.inf), np.zeros(m), np.ones(m, bool),
                   z.copy(), z.copy(), z.copy(), None if c is None else np.zeros((m, c)),
                   None if c is None else np.zeros((m, c)), np.zeros((m, m)), np.zeros((m, m)),
                   np.zeros((m, m)), np.zeros((m, m)), None, 0, None, np.zeros((0, 5), np.int64),
                   (np.zeros((0, m)), np.zeros(0)) if units and clusters is None else None,
                   (np.zeros((m, 0), np.float32), np.zeros((m, 0), np.float32), np.zeros(0, object),
                    None if clusters is None else np.zeros(0, np.int64)) if runs else None,
                   (np.zeros((0, 5), np.int64), np.ones(m, bool)) if columns else None)

    @classmethod
    def from_cube(cls, models, answers, centre, codes=None, clusters=None, questions=None,
                  units: bool = True, run_labels=None, columns=None) -> "Sufficient":
        # size: a partition's cube and what to keep beside its sums
        """The statistics of one partition: ``answers`` is ``(M, n, K)`` (NaN = no
        answer) over the partition's questions, ``codes`` their cluster codes
        into ``clusters`` (the global labels), ``centre`` the global shifts.
        ``units``: keep the unit multiset (without clusters; an engine that knows
        every score is 0/1 with one answer a question skips it: nothing reads it).
        ``run_labels``: the partition's question labels, to keep the run table of
        pass@k and pass^k (0/1 answers); ``columns``: the ``(n_correct, n_samples)``
        columns ``(M, n)`` when the data have them (the memory engine reads them)."""
        answers = np.asarray(answers, float)
        m = len(models)
        centre = np.asarray(centre, float)
        if answers.shape[1] == 0:
            out = cls.empty(models, centre, clusters, units, run_labels is not None, columns is not None)
            out.questions = None if questions is None else frozenset()
            return out
        answered = ~np.isnan(answers)
        k = answered.sum(axis=-1)
        w = k > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(answered, answers, 0.0).sum(axis=-1) / k
        x = np.where(w, s - centre[:, None], 0.0)
        wf = w.astype(float)
        kf = np.where(w, k, 0)
        rep = k >= 2
        with np.errstate(invalid="ignore", divide="ignore"):
            sig = np.where(rep[..., None], answers, np.nan)
            dev = np.where(answered, sig - s[..., None], 0.0)
            sigma2 = np.where(rep, np.nansum(dev * dev, axis=-1) / np.where(rep, k - 1, 1), 0.0)
        zero_one = (np.isin(answers, (0.0, 1.0)) | ~answered).all(axis=(1, 2))
        nc = sxc = None
        pc = None
        if clusters is not None:
            codes = np.asarray(codes, np.int64)
            nc = np.zeros((m, len(clusters)))
            sxc = np.zeros((m, len(clusters)))
            for j in range(m):
                nc[j] = np.bincount(codes, weights=wf[j], minlength=len(clusters))
                sxc[j] = np.bincount(codes, weights=x[j], minlength=len(clusters))
            if not w.all():
                pc = pair_cluster_sums(x, wf, codes, len(clusters))
        N, SA, QA, XX = pair_sums(x, wf)
        kmin = np.where(w, k, np.iinfo(np.int64).max).min(axis=1).astype(float)
        units = None if clusters is not None or not units else bayes_sums.bounded_units(
            bayes_sums.unit_multiset(np.where(w, s, np.nan)))
        return cls(tuple(models), centre, None if clusters is None else tuple(clusters),
                   wf.sum(axis=1), x.sum(axis=1), (x * x).sum(axis=1), kf.sum(axis=1).astype(float),
                   np.where(w.any(axis=1), kmin, np.inf), kf.max(axis=1).astype(float), zero_one,
                   rep.sum(axis=1).astype(float), sigma2.sum(axis=1),
                   np.where(rep, sigma2 / np.where(rep, k, 1), 0.0).sum(axis=1),
                   nc, sxc, N, SA, QA, XX, pc, int(answers.shape[1]),
                   None if questions is None else frozenset(questions),
                   bayes_sums.count_table(answers, codes), units,
                   None if run_labels is None else bayes_sums.run_table(answers, run_labels, codes, columns),
                   None if columns is None else bayes_sums.column_count_table(np.where(w, s, np.nan), *columns,
                                                                              codes))

    # ------------------------------------------------------------ combining
    def _check_compatible(self, other: "Sufficient") -> None:
        if self.models != other.models:
            raise ValueError("sufficient statistics of different models cannot be combined")
        if not np.array_equal(self.centre, other.centre):
            raise ValueError("sufficient statistics with different centres cannot be combined")
        if self.clusters != other.clusters:
            raise ValueError("sufficient statistics with different cluster labels cannot be combined")
        if self.questions is not None and other.questions is not None:
            both = self.questions & other.questions
            if both:
                raise ValueError(f"{len(both)} question(s) (e.g. {sorted(map(str, both))[0]!r}) are in "
                                 "two partitions; partition the rows by question, so that each question's "
                                 "rows (every model, every sample) lie in one partition.")

    def _pair_clusters_full(self):
        """``(Nc, SAc)``, materialized from the model × cluster sums when complete."""
        if self.pair_clusters is not None:
            return self.pair_clusters
        m = len(self.models)
        return (np.broadcast_to(self.nc[:, None, :], (m, m, self.nc.shape[1])).copy(),
                np.broadcast_to(self.sxc[:, None, :], (m, m, self.sxc.shape[1])).copy())

    def __add__(self, other: "Sufficient") -> "Sufficient":
        self._check_compatible(other)
        kw = {}
        for f in _ADD:
            a, b = getattr(self, f), getattr(other, f)
            kw[f] = None if a is None else a + b
        kw["k_min"] = np.minimum(self.k_min, other.k_min)
        kw["k_max"] = np.maximum(self.k_max, other.k_max)
        kw["zero_one"] = self.zero_one & other.zero_one
        pc = None
        if self.clusters is not None and (self.pair_clusters is not None or other.pair_clusters is not None):
            (n1, a1), (n2, a2) = self._pair_clusters_full(), other._pair_clusters_full()
            pc = (n1 + n2, a1 + a2)
        kw["pair_clusters"] = pc
        kw["questions"] = (None if self.questions is None or other.questions is None
                           else self.questions | other.questions)
        kw["counts"] = bayes_sums.reduce_counts(np.concatenate([self.counts, other.counts]))
        kw["units"] = bayes_sums.merge_units(self.units, other.units)
        kw["runs"] = bayes_sums.merge_runs(self.runs, other.runs)
        a, b = self.column_counts, other.column_counts
        kw["column_counts"] = None if a is None or b is None else (
            bayes_sums.reduce_counts(np.concatenate([a[0], b[0]])), a[1] & b[1])
        return replace(self, **kw)

    def equal(self, other: "Sufficient", rtol: float = 1e-12) -> bool:
        """Every statistic equal to ``rtol`` (relative to each array's scale)."""
        for f in fields(self):
            if f.name in ("questions", "runs", "column_counts"):
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name == "units":
                if (a is None) != (b is None) or (a is not None and not all(_close(x, y, rtol)
                                                                            for x, y in zip(a, b))):
                    return False
                continue
            if f.name == "pair_clusters":
                if self.clusters is None:
                    continue
                a, b = self._pair_clusters_full(), other._pair_clusters_full()
                if not all(_close(x, y, rtol) for x, y in zip(a, b)):
                    return False
                continue
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or not _close(a, b, rtol):
                    return False
            elif a != b:
                return False
        return True

    # ------------------------------------------------------------ views
    @property
    def model_sums(self) -> ModelSums:
        return ModelSums(self.n, self.sx, self.sxx, self.centre, self.nc, self.sxc)

    @property
    def binary(self) -> np.ndarray:
        """0/1 answers and one answer per answered question (``zero_one_k1``)."""
        return self.zero_one & (self.k_max <= 1)

    def variance(self, j: int):
        return variance_split(self.n[j], self.sx[j], self.sxx[j], self.n_rep[j], self.w_sum[j],
                              self.w_over_k[j])

    def select(self, order) -> "Sufficient":
        """The statistics of the models at positions ``order`` (in that order)."""
        idx = np.asarray(order, dtype=np.int64)
        ix = np.ix_(idx, idx)
        pc = None if self.pair_clusters is None else tuple(a[ix] for a in self.pair_clusters)
        return replace(self, models=tuple(self.models[i] for i in idx), centre=self.centre[idx],
                       n=self.n[idx], sx=self.sx[idx], sxx=self.sxx[idx], k_sum=self.k_sum[idx],
                       k_min=self.k_min[idx], k_max=self.k_max[idx], zero_one=self.zero_one[idx],
                       n_rep=self.n_rep[idx], w_sum=self.w_sum[idx], w_over_k=self.w_over_k[idx],
                       nc=None if self.nc is None else self.nc[idx],
                       sxc=None if self.sxc is None else self.sxc[idx],
                       N=self.N[ix], SA=self.SA[ix], QA=self.QA[ix], XX=self.XX[ix], pair_clusters=pc,
                       counts=bayes_sums.select_counts(self.counts, idx),
                       units=bayes_sums.select_units(self.units, idx),
                       runs=bayes_sums.select_runs(self.runs, idx),
                       column_counts=None if self.column_counts is None else (
                           bayes_sums.select_counts(self.column_counts[0], idx), self.column_counts[1][idx]))

    def raw_pair_sums(self):
        """``Σ_common s_a`` and ``Σ_common s_a s_b`` (uncentred), M×M."""
        c = self.centre
        sa = self.SA + c[:, None] * self.N
        sab = self.XX + c[:, None] * self.SA.T + c[None, :] * self.SA + np.outer(c, c) * self.N
        return sa, sab

    def covariance_sums(self):
        """``(n, cross, S, sizes)`` of :func:`bayeserr.stats.ranking.mean_covariance`: with
        ``e = s̄ − c``, ``Σ_common r_a r_b = XX_ab − e_b SA_ab − e_a SA_ba + e_a e_b N_ab`` (no
        clusters), else the residual cluster sums ``S = sxc − e·nc`` and sizes ``nc``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            e = self.sx / self.n
        if self.clusters is None:
            cross = self.XX - e[None, :] * self.SA - e[:, None] * self.SA.T + np.outer(e, e) * self.N
            return self.n, cross, None, None
        return self.n, None, self.sxc - e[:, None] * self.nc, self.nc

    def discordant(self) -> np.ndarray:
        """McNemar's cells ``only[a, b]``: questions a got right and b wrong among
        those both answered (meaningful for 0/1 rows with K = 1)."""
        sa, sab = self.raw_pair_sums()
        return np.rint(sa - sab).astype(np.int64)

    def model_cluster_sums(self) -> np.ndarray | None:
        """Each model's cluster sums ``S`` (M, C) when every pair's cluster sums are
        ``S[a] − S[b]`` on one set of cluster sizes (no model skipped a question), else None:
        :meth:`pair_cluster_totals` without its pairs."""
        if self.pair_clusters is not None or not (self.nc == self.nc[:1]).all():
            return None
        return self.sxc + self.centre[:, None] * self.nc

    def pair_cluster_totals(self, ia, ib):
        """Cluster sums of ``d = s_a − s_b`` and the common cluster sizes of the
        pairs ``(ia[k], ib[k])``: ``(D, sizes)``, each ``(pairs, C)``."""
        c = self.centre
        if self.pair_clusters is None:
            sizes = self.nc[ia]
            D = self.sxc[ia] - self.sxc[ib] + (c[ia] - c[ib])[:, None] * sizes
            return D, sizes
        Nc, SAc = self.pair_clusters
        sizes = Nc[ia, ib]
        D = SAc[ia, ib] - SAc[ib, ia] + (c[ia] - c[ib])[:, None] * sizes
        return D, sizes


def _close(a, b, rtol) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        return False
    fin = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)) or not np.array_equal(a[~fin], b[~fin]):
        return False
    scale = max(float(np.abs(a[fin]).max(initial=0.0)), float(np.abs(b[fin]).max(initial=0.0)), 1e-300)
    return bool(np.all(np.abs(a[fin] - b[fin]) <= rtol * scale))


class SufficientBatch:
    """The part of :class:`~bayeserr.stats.view.ScoreBatch` the interval methods
    read (mean, n, the SEs, CR2, design effect, 0/1 flags, and for the Bayesian
    columns the unit counts, cluster sums and bootstrap units), from
    :class:`Sufficient` statistics: the same registry entries compute the
    intervals of every engine.  No per-question data: ``s`` and ``answers`` are
    absent.  ``missing`` collects what could not be computed from the sums
    (the Bayesian bootstrap over questions when the unit multiset was dropped)."""

    #: the report's path of the interval methods (one posterior per model, kept, as the memory
    #: engine's report computes them; the batched grids are the lab's)
    keep_fits = True

    def __init__(self, stats: Sufficient, cluster_correction: str = "paper", bayes=None):
        self.stats = stats
        self.bayes = bayes
        self.fits, self.notes, self.side, self.missing = {}, [], {}, []
        self.sums = stats.model_sums
        self.cluster_correction = cluster_correction
        self.names = stats.models
        self.codes = None if stats.clusters is None else np.arange(len(stats.clusters))
        with np.errstate(invalid="ignore", divide="ignore"):
            # Σ s_i / n: exact for 0/1 scores, as the in-memory mean is
            self.mean = (stats.sx + stats.centre * stats.n) / stats.n
        self.n = stats.n.astype(np.int64)
        self.binary = stats.binary
        self.zero_one = stats.zero_one
        self.se_clt = self.sums.se_clt
        self.cr2 = None if self.codes is None else self.sums.cr2()
        self.n_clusters = None if self.codes is None else self.sums.n_clusters
        self.cluster_ok = (np.zeros(len(self.n), bool) if self.codes is None else self.n_clusters >= 2)
        self._se_cl = {}

    def se_clustered(self, correction: str | None = None):
        if self.codes is None:
            return None
        correction = correction or self.cluster_correction
        if correction not in self._se_cl:
            self._se_cl[correction] = self.sums.se_clustered(correction)
        return self._se_cl[correction]

    @property
    def design_effect(self):
        if self.codes is None:
            return None
        from bayeserr.stats.estimators import design_effect
        return design_effect(self.cr2.se, self.se_clt)

    # ------------------------------------------------------------ the Bayesian columns' statistics
    @property
    def binomial(self) -> np.ndarray:
        """Rows of 0/1 answers, or whose n_correct/n_samples counts give every score (as the memory
        engine's :attr:`~bayeserr.stats.view.ScoreBatch.binomial`)."""
        cc = self.stats.column_counts
        return self.zero_one if cc is None else self.zero_one | (cc[1] & (self.n > 0))

    @property
    def table(self) -> np.ndarray:
        """The count table the Beta–Binomial models read: a model's counts from its n_correct/n_samples
        columns when they give every score, else from its 0/1 answers (the memory engine's choice)."""
        if "table" not in self.__dict__:
            st, cc = self.stats, self.stats.column_counts
            table = st.counts
            if cc is not None:
                by_columns = cc[1] & (self.n > 0)
                table = np.concatenate([table[~by_columns[table[:, 0]]], cc[0][by_columns[cc[0][:, 0]]]])
                table = bayes_sums.reduce_counts(table)
            self.__dict__["table"] = table
        return self.__dict__["table"]

    @property
    def cluster_sizes(self):
        return self.stats.nc

    @property
    def repeated(self) -> np.ndarray:
        return bayes_sums.repeated_models(self.table, len(self.n))

    def _units(self):
        if "units" not in self.__dict__:
            c = None if self.codes is None else len(self.codes)
            self.__dict__["units"] = bayes_sums.unit_counts(self.table, len(self.n), c)
        return self.__dict__["units"]

    def unit_counts(self):
        """Right answers and answers per unit (§5.2) from the count table: ``(rows, units)`` each."""
        return self._units()[:2]

    def unit_questions(self) -> np.ndarray:
        return self._units()[2]

    def row_counts(self, row: int):
        """One model's right answers, answers and cluster per question, from the count table."""
        if "rows" not in self.__dict__:
            self.__dict__["rows"] = bayes_sums.question_rows(self.table, len(self.n))
        k, n, cl = (a[row] for a in self.__dict__["rows"])
        keep = n > 0
        return k[keep], n[keep], None if self.codes is None else cl[keep].astype(np.int64)

    def record(self, row: int, kind: str, fit) -> None:
        """Keep a posterior (the HTML posterior figure and ``--save-posterior`` read them)."""
        self.fits.setdefault(row, {})[kind] = fit

    def bootstrap_units(self, row):
        """``(sums, counts, mult)`` of a model's units for the Bayesian bootstrap: its clusters
        (two or more), else the unit multiset's questions; ``None`` (and a ``missing`` entry)
        when those were not kept."""
        (j,) = row
        st = self.stats
        if st.clusters is not None:
            nc = st.nc[j]
            if np.count_nonzero(nc) >= 2:
                live = nc > 0
                return (st.sxc[j] + st.centre[j] * nc)[live], nc[live], None
            self.missing.append("the Bayesian bootstrap of a model answering in one cluster (over its questions)")
            return None
        if st.units is None:
            self.missing.append(f"the Bayesian bootstrap over questions (past {bayes_sums.UNIT_BYTES >> 20} MiB of "
                                "distinct per-question means)")
            return None
        values, mult = st.units
        keep = values[:, j] != bayes_sums.UNANSWERED
        return values[keep, j], np.ones(int(keep.sum())), mult[keep]

    def cluster_score_sums(self, rows):
        """``(D, sizes, total)`` of the models ``rows`` (a mask) from the sums (see ScoreBatch's)."""
        st = self.stats
        c = st.centre[rows]
        D = st.sxc[rows] + c[:, None] * st.nc[rows]
        total = st.sxx[rows] + 2.0 * c * st.sx[rows] + c * c * st.n[rows]
        return D, st.nc[rows], total
