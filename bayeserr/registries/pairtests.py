"""The registry of tests of A − B that the simulation lab measures
(``docs/methods.md`` §3, §5.3, §8): key, label, family and reference of each,
from which the lab's tables and figures take their names, and how each test
decides — and, where it has one, what interval it gives — on many replicates
at once.

An entry's ``decide(batch, alpha)`` takes a :class:`PairBatch` (replicates of
two models answering the same questions) and returns, per replicate, +1
("A better"), −1 ("B better") or 0 (no decision); ``interval(batch, level)``
returns ``(reps, 2)`` endpoints of the interval for ``A − B`` that goes with
the test, or the entry has none.  Frequentist tests are two-sided at
``alpha``.  The formulas live in :mod:`bayeserr.stats.estimators`,
:mod:`bayeserr.stats.fewclusters`, :mod:`bayeserr.stats.pairs` and :mod:`bayeserr.models`;
an entry only chooses the inputs, as in :mod:`bayeserr.registries.methods`.

Adding a test = one :func:`register` call here; the lab's
:func:`~bayeserr.lab.simulate.decisions` and
:func:`~bayeserr.lab.simulate.pair_intervals` loop over the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from bayeserr.base.registry import Registry


@dataclass(frozen=True)
class PairTest:
    key: str
    label: str
    family: str  #: "normal", "clustered", "exact" or "bayes"
    reference: str  #: section of docs/methods.md
    decide: Callable = None  #: (PairBatch, alpha) -> (reps,) verdicts in {−1, 0, +1}
    interval: Callable | None = None  #: (PairBatch, level) -> (reps, 2), or None: no interval
    needs: str | None = None  #: "clusters", "independent" (no clusters), "binary" (0/1, K = 1) or None
    fewclusters: bool = True  #: a column of the lab's few-cluster table
    headline: bool = False  #: the clustered headline test of a pair (SPEC §3)
    color: str = "#555555"  #: line colour in the lab's figures

    def applies(self, batch: "PairBatch") -> bool:
        if self.needs == "clusters":
            return batch.codes is not None and batch.n_clusters >= 2
        if self.needs == "independent":
            return batch.codes is None
        if self.needs == "binary":
            return batch.binary
        return True


TESTS = Registry("test of A − B")


def register(key: str, label: str, family: str, reference: str, **kw):
    """Decorator: register ``decide`` as the test ``key`` (``interval=`` its interval)."""
    def deco(decide):
        TESTS.add(key, PairTest(key, label, family, reference, decide, **kw))
        return decide
    return deco


def headline() -> PairTest:
    """The clustered headline test (CR2 with t on the Bell–McCaffrey df)."""
    return next(t for t in TESTS.values() if t.headline)


# ------------------------------------------------------------------ the replicates
class PairBatch:
    """Replicates of models A and B on the same questions, for the tests above.

    ``a``, ``b``: answer cubes ``(reps, n, K)`` (0/1 answers, or scores in
    [0, 1]); ``codes``: the cluster code of each question (contiguous
    0..C−1), or None.  ``binary`` says whether the answers are 0/1 with
    K = 1 (McNemar, the Dirichlet 2×2 posterior); by default it is read off
    the data.  ``seed`` and ``draws`` drive the Bayesian bootstraps (over
    questions without clusters; the old rule over clusters); ``wild_draws``
    the wild cluster bootstrap (``seed + 1``); ``rope`` is the half-width of
    the region of practical equivalence passed to the cluster model (it does
    not change P(A > B) or the interval).  Shared quantities (the
    differences, their SEs, the cluster sums, the posteriors, the bootstrap
    results) are computed once, lazily.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, codes=None, *, binary: bool | None = None,
                 seed: int = 0, draws: int = 1000, wild_draws: int = 999, rope: float = 0.01):
        self.a, self.b = np.asarray(a, float), np.asarray(b, float)
        self.codes = None if codes is None else np.asarray(codes)
        self.sa, self.sb = self.a.mean(axis=2), self.b.mean(axis=2)
        self.d = self.sa - self.sb
        self.diff = self.d.mean(axis=1)
        if binary is None:
            binary = self.a.shape[2] == 1 and bool(np.isin(self.a, (0.0, 1.0)).all()
                                                  and np.isin(self.b, (0.0, 1.0)).all())
        self.binary = binary
        self.seed, self.draws, self.wild_draws, self.rope = seed, draws, wild_draws, rope
        self._wild = {}
        self._cluster_model = {}

    @property
    def reps(self) -> int:
        return self.d.shape[0]

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes).astype(float)

    @cached_property
    def n_clusters(self) -> int:
        return int(np.count_nonzero(self.sizes))

    @cached_property
    def se_unpaired(self):
        from bayeserr.stats.estimators import se_clt
        return np.sqrt(se_clt(self.sa) ** 2 + se_clt(self.sb) ** 2)

    @cached_property
    def se_paired(self):
        from bayeserr.stats.estimators import se_clt
        return se_clt(self.d)

    def se_clustered(self, correction: str):
        from bayeserr.stats.estimators import se_clustered
        return se_clustered(self.d, self.codes, correction)

    @cached_property
    def cr2(self):
        from bayeserr.stats.fewclusters import cr2_mean
        return cr2_mean(self.d, self.codes)

    @cached_property
    def cluster_totals(self) -> np.ndarray:
        """Cluster sums of d: (reps, C)."""
        from bayeserr.stats.estimators import cluster_sums
        return cluster_sums(self.d, self.codes)

    @cached_property
    def cluster_sq_totals(self) -> np.ndarray:
        """Cluster sums of d²: (reps, C)."""
        from bayeserr.stats.estimators import cluster_sums
        return cluster_sums(self.d * self.d, self.codes)

    def cluster_model(self, level: float = 0.95):
        """The pair posterior with a cluster random effect on the difference
        (:func:`bayeserr.models.paired_clustered.pair_probabilities`, §5.3) of
        every replicate at once — the function the report's
        :func:`~bayeserr.bayes.pairs.clustered_probabilities` calls, with the
        same inputs (cluster sums of d and d², the cluster sizes).  Computed
        once per level."""
        if level not in self._cluster_model:
            from bayeserr.models.paired_clustered import pair_probabilities
            self._cluster_model[level] = pair_probabilities(
                self.cluster_totals, self.sizes, self.rope, sum_sq=self.cluster_sq_totals, level=level)
        return self._cluster_model[level]

    def wild(self, level: float, interval: bool):
        """The wild cluster restricted bootstrap (§3.4) of every replicate,
        computed once per level (an interval run also gives the p-values)."""
        from bayeserr.stats.fewclusters import wild_cluster_bootstrap
        for (lv, iv), res in self._wild.items():
            if lv == level and (iv or not interval):
                return res
        res = wild_cluster_bootstrap(self.cluster_totals, self.sizes, level=level, draws=self.wild_draws,
                                     seed=self.seed + 1, interval=interval)
        self._wild[(level, interval)] = res
        return res

    @cached_property
    def discordant(self):
        """(A only right, B only right) counts per replicate (0/1, K = 1)."""
        return (np.sum((self.sa == 1) & (self.sb == 0), axis=1),
                np.sum((self.sa == 0) & (self.sb == 1), axis=1))

    @cached_property
    def prob_a_better(self) -> np.ndarray:
        """P(A − B > 0) per replicate, as the report computes it (§5.3): with
        clusters, the model with a cluster random effect on the difference
        (:meth:`cluster_model`; NaN with fewer than two clusters, where the
        report shows ``null``); without, the Dirichlet 2×2 posterior for 0/1
        answers with K = 1, else the Bayesian bootstrap over questions."""
        if self.codes is not None:
            post = self.cluster_model()
            return np.where(post.estimable, post.prob_a_better, np.nan)
        if self.binary:
            from bayeserr.models import paired_dirichlet
            b_only, c_only = self.discordant
            return paired_dirichlet.prob_a_better(b_only, c_only, self.d.shape[1] - b_only - c_only)
        k_a, k_b = self.a.sum(axis=2), self.b.sum(axis=2)
        n_q = np.full(k_a.shape, float(self.a.shape[2]))
        return bootstrap_prob_positive(k_a - k_b, n_q, self.draws, np.random.default_rng(self.seed))

    @cached_property
    def prob_a_better_cluster_bootstrap(self) -> np.ndarray:
        """P(A − B > 0) per replicate from the Bayesian bootstrap over clusters
        of the paired answer totals (§5.4): what the report computed for
        clustered pairs before the cluster model — kept in the lab to show
        why it was replaced (overconfident with few clusters)."""
        from bayeserr.stats.estimators import cluster_sums
        k_a, k_b = self.a.sum(axis=2), self.b.sum(axis=2)
        n_q = np.full(k_a.shape, float(self.a.shape[2]))
        k_a, k_b, n_q = (cluster_sums(x, self.codes) for x in (k_a, k_b, n_q))
        return bootstrap_prob_positive(k_a - k_b, n_q, self.draws, np.random.default_rng(self.seed))


def bootstrap_prob_positive(sums: np.ndarray, counts: np.ndarray, draws: int, rng,
                            budget: int = 2**22) -> np.ndarray:
    """``P(Σ w_u S_u / Σ w_u N_u > 0)`` (ties half) under Dirichlet(1, …, 1)
    weights on the units, for every row of ``sums``/``counts`` (rows × units):
    the Bayesian bootstrap of a paired difference (§5.4).

    Units of a row with the same ``(S_u, N_u)`` share one Gamma(multiplicity)
    weight (Dirichlet aggregation), so a row costs one variate per *distinct*
    unit value per draw: a few for 0/1 answers on independent questions, at
    most C with C clusters.  Rows are processed in chunks of about ``budget``
    variates.
    """
    from bayeserr.bayes.pairs import pair_probabilities
    sums, counts = np.asarray(sums, float), np.asarray(counts, float)
    rows, units = sums.shape
    # sort each row's units by (S, N) and mark the first of each run of equal values
    idx = np.lexsort((counts, sums), axis=-1)
    s_sorted = np.take_along_axis(sums, idx, -1)
    n_sorted = np.take_along_axis(counts, idx, -1)
    new = np.ones((rows, units), bool)
    new[:, 1:] = (s_sorted[:, 1:] != s_sorted[:, :-1]) | (n_sorted[:, 1:] != n_sorted[:, :-1])
    run = np.cumsum(new, axis=-1) - 1                      # run id of each unit
    width = int(run.max()) + 1
    mult = np.zeros((rows, width))
    val_s = np.zeros((rows, width))
    val_n = np.zeros((rows, width))
    r = np.repeat(np.arange(rows), units)
    np.add.at(mult, (r, run.ravel()), 1.0)
    val_s[r, run.ravel()] = s_sorted.ravel()
    val_n[r, run.ravel()] = n_sorted.ravel()
    out = np.empty(rows)
    chunk = max(1, budget // (draws * width))
    for start in range(0, rows, chunk):
        sl = slice(start, start + chunk)
        m = mult[sl]
        g = rng.standard_gamma(np.broadcast_to(m[:, None, :], (m.shape[0], draws, width)))
        mean = np.einsum("rjv,rv->rj", g, val_s[sl]) / np.einsum("rjv,rv->rj", g, val_n[sl])
        out[sl] = pair_probabilities(mean.T, rope=0.0)[0]
    return out


# ------------------------------------------------------------------ helpers
def _z_verdict(batch, se, alpha):
    """Two-sided z test of d̄ / SE (no decision where SE = 0 or undefined)."""
    from bayeserr.stats.distributions import norm_isf
    crit = norm_isf(alpha / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, batch.diff / se, 0.0)
    return np.sign(batch.diff) * (np.abs(z) > crit)


def _z_interval(batch, se, level):
    from bayeserr.stats.estimators import normal_interval
    return normal_interval(batch.diff, se, level)


def _t(batch, se, df, level):
    from bayeserr.stats.fewclusters import t_test
    return t_test(batch.diff, se, df, level)


def _t_verdict(batch, se, df, alpha):
    p = _t(batch, se, df, 1 - alpha).p_value
    with np.errstate(invalid="ignore"):
        return np.sign(batch.diff) * (p < alpha)


# ------------------------------------------------------------------ the tests
@register("unpaired", "Unpaired z", "normal", "§3.1", fewclusters=False, color="#7f7f7f",
          interval=lambda b, level: _z_interval(b, b.se_unpaired, level))
def _unpaired(batch, alpha):
    return _z_verdict(batch, batch.se_unpaired, alpha)


@register("paired", "Paired z (M7)", "normal", "§3.2", color="#1f77b4",
          interval=lambda b, level: _z_interval(b, b.se_paired, level))
def _paired(batch, alpha):
    return _z_verdict(batch, batch.se_paired, alpha)


@register("clustered_paired", "Clustered paired z (M8, paper)", "clustered", "§3.3", needs="clusters",
          color="#ff7f0e",
          interval=lambda b, level: _z_interval(b, b.se_clustered("paper"), level))
def _clustered_paired(batch, alpha):
    return _z_verdict(batch, batch.se_clustered("paper"), alpha)


@register("cr1_t", "CR1 t(C − 1)", "clustered", "§2.4, §3.3", needs="clusters", color="#bcbd22",
          interval=lambda b, level: _t(b, b.se_clustered("cr1"), b.n_clusters - 1, level).ci)
def _cr1_t(batch, alpha):
    return _t_verdict(batch, batch.se_clustered("cr1"), batch.n_clusters - 1, alpha)


@register("cr2_t", "CR2 t (BM df)", "clustered", "§2.5, §3.3", needs="clusters", headline=True,
          color="#d62728",
          interval=lambda b, level: _t(b, b.cr2.se, b.cr2.df, level).ci)
def _cr2_t(batch, alpha):
    return _t_verdict(batch, batch.cr2.se, batch.cr2.df, alpha)


@register("wild_bootstrap", "Wild cluster bootstrap", "clustered", "§3.4", needs="clusters",
          color="#2ca02c",
          interval=lambda b, level: b.wild(level, True).ci)
def _wild(batch, alpha):
    p = batch.wild(1 - alpha, False).p_value
    with np.errstate(invalid="ignore"):
        return np.sign(batch.diff) * (p < alpha)


@register("mcnemar_exact", "McNemar exact", "exact", "§3.5", needs="binary", color="#8c564b")
def _mcnemar(batch, alpha):
    from bayeserr.stats.pairs import mcnemar_pvalues
    b_only, c_only = batch.discordant
    p_exact, _ = mcnemar_pvalues(b_only, c_only)
    return np.sign(b_only - c_only) * (p_exact < alpha)


def _two_sided(p):
    """A difference when max(P, 1 − P) > 0.975 (no decision where P is NaN)."""
    return (p > 0.975).astype(float) - (p < 0.025).astype(float)


@register("bayes_prob_095", "P(A > B) > 0.95", "bayes", "§5.3", fewclusters=False, color="#c5b0d5")
def _bayes_095(batch, alpha):
    """One-sided, as stated: "A better" when P(A > B) > 0.95 (never "B better"),
    with P as the report computes it (:attr:`PairBatch.prob_a_better`)."""
    return (batch.prob_a_better > 0.95).astype(float)


@register("bayes_prob_0975", "P(A > B) > 0.975 or < 0.025 (independent questions)", "bayes", "§5.3",
          needs="independent", fewclusters=False, color="#9467bd")
def _bayes_0975(batch, alpha):
    """The report's two-sided Bayesian rule without clusters: a difference is
    declared when max(P, 1 − P) > 0.975, P from the Dirichlet 2×2 posterior
    (0/1 answers, K = 1) or the Bayesian bootstrap over questions, so its
    false-positive rate compares with a two-sided 5% test (``alpha`` is not
    used: the rule is fixed)."""
    return _two_sided(batch.prob_a_better)


@register("bayes_cluster_0975", "P(A > B) > 0.975 or < 0.025 (cluster random-effect model)", "bayes",
          "§5.3", needs="clusters", color="#9467bd",
          interval=lambda b, level: b.cluster_model(level).interval)
def _bayes_cluster_0975(batch, alpha):
    """The report's two-sided Bayesian rule for clustered data: max(P, 1 − P)
    > 0.975 with P from the model with a cluster random effect on the
    difference (``models/paired_clustered.py``); its interval is that
    model's equal-tailed credible interval of Δ."""
    return _two_sided(batch.prob_a_better)


@register("bayes_bootstrap_0975", "P(A > B) > 0.975 or < 0.025 (old: cluster bootstrap)", "bayes",
          "§5.3, §5.4", needs="clusters", color="#e377c2")
def _bayes_bootstrap_0975(batch, alpha):
    """The rule the report used for clustered pairs before the cluster model:
    max(P, 1 − P) > 0.975 with P from the Bayesian bootstrap over clusters.
    Kept so the lab shows that it does not hold its level with few clusters."""
    return _two_sided(batch.prob_a_better_cluster_bootstrap)
