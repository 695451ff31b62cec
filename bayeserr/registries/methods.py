"""The registry of interval methods: one entry per method, from which the
report columns (JSON, Markdown, LaTeX, HTML), the figure legends, the
simulation lab and the CLI choices are generated.

An entry says what the method is (key, labels, family, when it applies, the
``docs/methods.md`` section) and how to compute it: ``compute(batch, level)``
takes a :class:`~bayeserr.stats.view.ScoreBatch` (rows = models of a report, or
replicates of a simulation) and returns ``(rows, 2)`` interval endpoints,
NaN on rows where the method does not apply.  The formulas themselves live in
:mod:`bayeserr.stats.estimators`, :mod:`bayeserr.stats.exact` and :mod:`bayeserr.models`;
an entry only chooses the inputs.

Adding a method = one :func:`register` call here (plus its test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bayeserr.base.registry import Registry


@dataclass(frozen=True)
class IntervalMethod:
    key: str  #: name in the JSON ``intervals`` object and on the command line
    label: str  #: column head and legend entry
    latex: str  #: column head in a paper (words, not equation numbers)
    family: str  #: "normal", "clustered", "exact" or "bayes"
    applies: str  #: when it applies, in one line
    reference: str  #: section of docs/methods.md
    compute: Callable  #: (ScoreBatch, level) -> (rows, 2), NaN where it does not apply
    color: str = "#555555"
    report: bool = True  #: a column of the per-model report
    lab: bool = True  #: measured by the simulation lab
    bayes: bool = False  #: needs the Bayesian columns (--bayes fast or mcmc)
    cluster_aware: bool = True  #: False: assumes independent questions
    meaning: str = ""  #: what the interval is about, in one sentence (glossaries)

    def __call__(self, batch, level: float) -> np.ndarray:
        return self.compute(batch, level)


INTERVALS = Registry("interval method", "--methods")


def register(key: str, label: str, latex: str, family: str, applies: str, reference: str, **kw):
    """Decorator: register ``compute`` as the interval method ``key``."""
    def deco(compute):
        INTERVALS.add(key, IntervalMethod(key, label, latex, family, applies, reference, compute, **kw))
        return compute
    return deco


def report_methods(bayes: bool = True) -> list[IntervalMethod]:
    """Methods of the per-model report, in column order."""
    return [m for m in INTERVALS.values() if m.report and (bayes or not m.bayes)]


def lab_methods() -> list[IntervalMethod]:
    return [m for m in INTERVALS.values() if m.lab]


# ------------------------------------------------------------------ helpers
def _rows(mask: np.ndarray, values: np.ndarray, shape) -> np.ndarray:
    """``values`` (for the rows of ``mask``) placed in a NaN (rows, 2) array."""
    out = np.full(tuple(shape) + (2,), np.nan)
    out[mask] = values
    return out


def _nan(batch) -> np.ndarray:
    return np.full(batch.mean.shape + (2,), np.nan)


def _normal(batch, se, level):
    from bayeserr.stats.estimators import normal_interval
    return normal_interval(batch.mean, se, level)


def _proportion(batch, level, method, n=None):
    """A statsmodels proportion interval on the 0/1, K = 1 rows."""
    from bayeserr.stats.exact import proportion_interval
    rows = batch.binary
    if not rows.any():
        return _nan(batch)
    n = batch.n[rows] if n is None else n[rows]
    return _rows(rows, proportion_interval(batch.mean[rows] * n, n, level, method), batch.mean.shape)


def _n_eff(batch, level: float):
    """Korn–Graubard n_eff per row, with the df factor of the rows' Bell–McCaffrey df."""
    from bayeserr.stats.exact import effective_n
    df = batch.cr2.df if batch.cr2 is not None else np.full(batch.n.shape, np.nan)
    return np.array([effective_n(n, d, f, level) for n, d, f in
                     zip(np.ravel(batch.n), np.ravel(batch.design_effect), np.ravel(df))]).reshape(batch.n.shape)


# ------------------------------------------------------------------ frequentist
@register("clt", "CLT", "Normal (CLT)", "normal", "always", "§2.1, §2.3", color="#1f77b4",
          meaning="Mean ± z × SE, questions taken as independent.")
def _clt(batch, level):
    return _normal(batch, batch.se_clt, level)


@register("bernoulli", "Bernoulli SE", "Normal (Bernoulli SE)", "normal", "0/1 scores, K = 1",
          "§2.2", color="#aec7e8", report=False)
def _bernoulli(batch, level):
    from bayeserr.stats.estimators import se_bernoulli
    if not batch.binary.any():
        return _nan(batch)
    out = _normal(batch, se_bernoulli(batch.mean, batch.n), level)
    out[~batch.binary] = np.nan
    return out


@register("clustered", "Clustered (CR2, t)", "Clustered (CR2, $t$)", "clustered",
          "clusters given (at least two)", "§2.5", color="#ff7f0e",
          meaning="Mean over a population of clusters: CR2 SE with t on the Bell–McCaffrey df; "
                  "wide when clusters are few or unequal.")
def _clustered(batch, level):
    """The clustered headline (M4b): CR2 SE with t on the Bell–McCaffrey df."""
    if batch.codes is None:
        return _nan(batch)
    from bayeserr.stats.fewclusters import t_test
    cr2 = batch.cr2
    return t_test(batch.mean, cr2.se, cr2.df, level).ci


def _normal_clustered(batch, level, correction):
    if batch.codes is None:
        return _nan(batch)
    out = _normal(batch, batch.se_clustered(correction), level)
    out[~batch.cluster_ok] = np.nan
    return out


@register("clustered_paper", "Clustered (paper, z)", "Clustered (paper, $z$)", "clustered",
          "clusters given (at least two); the paper's (M4), or CR1 with --cluster-correction cr1",
          "§2.4", color="#ffbb78",
          meaning="The paper's clustered SE with z: too narrow with few effective clusters.")
def _clustered_paper(batch, level):
    return _normal_clustered(batch, level, None)


@register("clustered_cr1", "Clustered (CR1, z)", "Clustered (CR1, $z$)", "clustered",
          "clusters given (at least two)", "§2.4", color="#e6a03c", report=False)
def _clustered_cr1(batch, level):
    return _normal_clustered(batch, level, "cr1")


def _exact(key, label, latex, reference, color, statsmodels_key=None):
    @register(key, label, latex, "exact", "0/1 scores, K = 1", reference, color=color,
              cluster_aware=False)
    def compute(batch, level):
        return _proportion(batch, level, statsmodels_key or key)
    return compute


_exact("wilson", "Wilson", "Wilson", "§2.8", "#2ca02c")
_exact("clopper_pearson", "Clopper–Pearson", "Clopper--Pearson", "§2.8", "#98df8a")
_exact("jeffreys", "Jeffreys", "Jeffreys", "§2.8", "#8c564b")
_exact("agresti_coull", "Agresti–Coull", "Agresti--Coull", "§2.8", "#c49c94")


def _exact_clustered(key, label, latex, color):
    @register(f"{key}_clustered", label, latex, "exact", "0/1 scores, K = 1, clusters given",
              "§2.8", color=color)
    def compute(batch, level):
        if batch.codes is None:
            return _nan(batch)
        out = _proportion(batch, level, key, n=_n_eff(batch, level))
        out[~batch.cluster_ok] = np.nan
        return out
    return compute


_exact_clustered("wilson", "Wilson, n_eff", r"Wilson, $n_{\mathrm{eff}}$", "#17becf")
_exact_clustered("clopper_pearson", "Clopper–Pearson, n_eff", r"Clopper--Pearson, $n_{\mathrm{eff}}$",
                 "#9edae5")


# ------------------------------------------------------------------ Bayesian
@register("beta_posterior", "Beta posterior", "Beta posterior", "bayes",
          "0/1 scores, K = 1, independent questions", "§5.1", color="#d62728", bayes=True,
          cluster_aware=False,
          meaning="Posterior of the accuracy of independent 0/1 answers, Beta prior.")
def _beta(batch, level):
    from bayeserr.models import beta_binomial
    rows = batch.binary
    if not rows.any():
        return _nan(batch)
    prior = "uniform" if batch.bayes is None else batch.bayes.prior
    k, n = batch.mean[rows] * batch.n[rows], batch.n[rows]
    if batch.keep_fits:
        for row, kk, nn in zip(np.flatnonzero(rows), k, n):
            batch.record(int(row), "beta", beta_binomial.beta_posterior(kk, nn, prior))
    return _rows(rows, beta_binomial.beta_intervals(k, n, level, prior), batch.mean.shape)


def _repeated(batch) -> np.ndarray:
    """Rows with some answered question answered more than once (K > 1, or
    ``n_samples`` > 1 when the scores are ``n_correct / n_samples`` counts)."""
    return batch.repeated


def _hierarchical_rows(batch) -> np.ndarray:
    """Binomial counts (0/1 answers, or n_correct of n_samples) grouped by
    cluster, or by question when some question has more than one answer."""
    grouped = batch.codes is not None or _repeated(batch)
    return batch.binomial & grouped


def _three_level_rows(batch) -> np.ndarray:
    """Rows of the three-level model (§5.2): binomial counts with clusters
    and some answered question answered more than once."""
    if batch.codes is None:
        return np.zeros(batch.mean.shape, bool)
    return batch.binomial & _repeated(batch)


def _three_level_fits(batch, rows, level) -> list:
    """The three-level model's grid posteriors of ``rows`` (no sampler)."""
    from bayeserr.models import three_level
    return three_level.fit_many([batch.row_counts(row) for row in rows],
                                quantiles=((1 - level) / 2, (1 + level) / 2))


@register("hierarchical_posterior", "Hierarchical posterior", "Hierarchical posterior", "bayes",
          "0/1 answers or counts, with clusters or K > 1", "§5.2", color="#9467bd", bayes=True, lab=False,
          meaning="Posterior of the question-weighted mean accuracy of these clusters (or "
                  "questions), from a Beta–Binomial model of their accuracies.")
def _hierarchical(batch, level):
    """Posterior of the question-weighted mean accuracy of these groups,
    ``Σ_g m_g θ_g / Σ_g m_g`` (m_g: answered questions in group g) — the
    estimand of the score beside it.  μ, the mean rate of a new cluster, is
    kept as ``hierarchical_mu`` (``batch.side``): a different estimand.
    With clusters and K > 1 the model has three levels (cluster rates φ_g):
    its grid posterior under ``fast``, non-centred NUTS under ``mcmc``."""
    rows = _hierarchical_rows(batch)
    out, mu_out = _nan(batch), _nan(batch)
    batch.side["hierarchical_mu"] = mu_out
    settings = batch.bayes
    mcmc = settings is not None and settings.mode == "mcmc"
    if mcmc and not rows.any() and not any(n.code == "mcmc_not_needed" for n in batch.notes):
        from bayeserr.bayes.fitting import no_sampler_note
        batch.notes.append(no_sampler_note())
    if settings is not None and settings.skips_three_level:
        rows = _skip_three_level(batch, rows)
    if not rows.any():
        return out
    k_u, n_u = batch.unit_counts()
    m_u = batch.unit_questions()  # questions per group
    q = [(1 - level) / 2, (1 + level) / 2]
    if mcmc:
        from bayeserr.bayes.fitting import hierarchical_mcmc_many, weighted_mean_draws
        fitted = np.flatnonzero(rows)
        items = [(batch.names[row] if batch.names else str(row), *batch.row_counts(row)) for row in fitted]
        for row, (idata, notes) in zip(fitted, hierarchical_mcmc_many(items, settings)):
            mu_out[row] = np.quantile(idata.posterior["mu"].values.ravel(), q)
            used = n_u[row] > 0
            w = weighted_mean_draws(idata, k_u[row][used], n_u[row][used], m_u[row][used], settings.seed)
            out[row] = np.quantile(w, q)
            batch.record(int(row), "hierarchical", idata)
            batch.notes.extend(notes)
        return out
    from bayeserr.models.three_level import one_thread
    with one_thread():  # many small array products: BLAS threads cost more than they give
        _hierarchical_grid(batch, level, rows, out, mu_out, k_u, n_u, m_u)
    return out


def _skip_three_level(batch, rows) -> np.ndarray:
    """``rows`` without the three-level ones that a ``fast`` report does not show, which
    it leaves out (``docs/methods.md`` §5.2, "What a report computes"): rows answering
    in two clusters or more, where the interval rule takes CR2 or the cluster-effect
    posterior (§7.1); a row in one cluster keeps it, as the rule may show it there.
    The warning ``not_computed`` names how many and how to have them."""
    if batch.codes is None:  # no clusters: no three-level model
        return rows
    skipped = rows & _three_level_rows(batch) & (np.asarray(batch.n_clusters) >= 2)
    if skipped.any():
        from bayeserr.base.caveat import Caveat
        n = int(skipped.sum())
        batch.notes.append(Caveat(
            "not_computed", None,
            f"the three-level hierarchical posterior (clusters, and several answers or samples per "
            f"question) of {n} model{'' if n == 1 else 's'} was not computed, as no table of this "
            "report shows it: hierarchical_posterior and hierarchical_mu are null in the JSON. "
            "--bayes full computes it, and so do --methods all, --format html and --save-posterior, "
            "which show it.",
            facts={"models": n}))
    return rows & ~skipped


def _hierarchical_grid(batch, level, rows, out, mu_out, k_u, n_u, m_u) -> None:
    """:func:`_hierarchical` without a sampler: the three-level grid posterior
    for rows with clusters and K > 1, the two-level one (batched unless the
    fits are kept) for the others; fills ``out`` (the weighted mean) and
    ``mu_out`` (μ)."""
    from bayeserr.models import hierarchical
    three = _three_level_rows(batch) & rows
    for row, post in zip(np.flatnonzero(three), _three_level_fits(batch, np.flatnonzero(three), level)):
        mu_out[row] = post.interval(level)
        out[row] = post.weighted_mean_interval(level)
        batch.record(int(row), "hierarchical", post)
    rows = rows & ~three
    if not rows.any():
        return
    if not batch.keep_fits:
        mu_out[rows] = hierarchical.batch_intervals(k_u[rows], n_u[rows], level)
        out[rows] = hierarchical.weighted_mean_intervals(k_u[rows], n_u[rows], level, weights=m_u[rows])
        return
    for row in np.flatnonzero(rows):
        used = n_u[row] > 0
        post = hierarchical.fit_exact(k_u[row][used], n_u[row][used])
        mu_out[row] = post.interval(level)
        out[row] = post.weighted_mean_interval(level, weights=m_u[row][used])
        batch.record(int(row), "hierarchical", post)


@register("hierarchical_mu", "Hierarchical μ (new cluster)", "Hierarchical $\\mu$", "bayes",
          "0/1 answers with clusters or K > 1", "§5.2", color="#c5b0d5", bayes=True, report=False,
          meaning="Posterior of the mean accuracy of a new cluster.")
def _hierarchical_mu(batch, level):
    """μ, the mean rate of a new cluster: the estimand the lab's population truth
    matches (the report keeps it as ``hierarchical_mu``, outside ``intervals``).
    Without kept fits (the lab) only μ is integrated, not the weighted mean;
    three-level rows (clusters and K > 1) use that model's grid posterior."""
    if batch.keep_fits or (batch.bayes is not None and batch.bayes.mode == "mcmc"):
        _hierarchical(batch, level)
        return batch.side["hierarchical_mu"]
    from bayeserr.models import hierarchical
    rows, out = _hierarchical_rows(batch), _nan(batch)
    three = _three_level_rows(batch) & rows
    for row, post in zip(np.flatnonzero(three), _three_level_fits(batch, np.flatnonzero(three), level)):
        out[row] = post.interval(level)
    rows = rows & ~three
    if rows.any():
        k_u, n_u = batch.unit_counts()
        out[rows] = hierarchical.batch_intervals(k_u[rows], n_u[rows], level)
    return out


@register("bayesian_bootstrap", "Bayesian bootstrap", "Bayesian bootstrap", "bayes",
          "fractional scores; over clusters when clustered", "§5.4", color="#e377c2", bayes=True,
          meaning="Dirichlet-weighted resampling of questions (of clusters when there are several).")
def _bayesian_bootstrap(batch, level):
    from bayeserr.models import bayesian_bootstrap as bb
    rows = ~batch.zero_one
    out = _nan(batch)
    if not rows.any():
        return out
    draws = 1000 if batch.bayes is None else batch.bayes.draws
    seed = 0 if batch.bayes is None else batch.bayes.seed
    q = [(1 - level) / 2, (1 + level) / 2]
    for row in zip(*np.nonzero(rows)):
        units = batch.bootstrap_units(row)  # None: an engine that did not keep them (says why)
        if units is not None:
            sums, counts, mult = units
            means = bb.weighted_means(sums[:, None], counts[:, None], draws, seed, mult=mult)[:, 0]
            out[row] = np.quantile(means, q)
    return out


@register("cluster_effect_posterior", "Cluster-effect posterior", "Cluster-effect posterior", "bayes",
          "fractional scores or K > 1, with clusters (C ≥ 2)", "§5.4", color="#bcbd22", bayes=True, lab=False,
          meaning="Posterior of the mean score over a population of clusters, with a cluster "
                  "random effect; inside [0, 1] and wide when clusters are few.")
def _cluster_effect_posterior(batch, level):
    """Posterior of the mean score over the population of clusters, with a
    cluster random effect whose scale has a weakly informative prior (the pair
    model of §5.3 applied to one model's scores), restricted to [0, 1].  The
    Bayesian bootstrap over a handful of clusters is far too short (§5.4);
    this one widens as clusters get fewer.  NaN with one cluster."""
    from bayeserr.models.paired_clustered import mean_from_sums
    rows = ~batch.binary  # fractional scores, counts and K > 1 answers (question means)
    out = _nan(batch)
    if batch.codes is None or not rows.any():
        return out
    out[rows] = mean_from_sums(*batch.cluster_score_sums(rows), level=level).interval
    return out


def label(key: str) -> str:
    """The display label of an interval method or a test of A − B."""
    from bayeserr.registries.pairtests import TESTS
    return (INTERVALS.get(key) or TESTS[key]).label


#: in-range fallbacks, in order, when the rule's interval leaves [0, 1]
#: (the Bayesian bootstrap only without clusters: over a few clusters it is far too short, §5.4)
_INSIDE_FALLBACKS = ("cluster_effect_posterior", "hierarchical_posterior")


@dataclass(frozen=True)
class Recommendation:
    """The interval a reader should look at for one model (:func:`recommendation`)."""

    key: str  #: the method's key in ``INTERVALS``
    interval: tuple  #: (low, high), always inside [0, 1]
    cut: bool  #: the method's interval left [0, 1] and was cut to it (no in-range method available)

    @property
    def label(self) -> str:
        return INTERVALS[self.key].label + (" cut to [0, 1]" if self.cut else "")


def recommendation(score) -> Recommendation:
    """The interval a reader should look at for one model (``docs/methods.md``
    §7.1), chosen from the data by a fixed rule:

    1. clusters (at least two): the clustered headline, CR2 with t on the
       Bell–McCaffrey df — unless, for 0/1 scores, every score is 0 or 1
       (that SE collapses) or the interval leaves [0, 1] (few effective
       clusters near 0 or 1): then Clopper–Pearson on the effective sample
       size, which stays inside [0, 1]; for fractional scores (counts and
       K > 1 answers included) whose clustered interval leaves [0, 1], the
       cluster-effect posterior: the same estimand (the mean over the
       population of clusters), inside [0, 1] and as wide as few clusters
       make it.  With exactly two clusters CR2 is not the headline at all
       (Clopper–Pearson on the effective sample size, or for fractional
       scores the cluster-effect posterior): its SE has one degree of
       freedom, and keeping it only when it stays inside [0, 1] keeps the
       data sets whose two clusters happen to agree — in 2 clusters of 10
       questions (ICC 0.3) those intervals covered 20–29% and the rule's
       interval 90–91%, against 100% with Clopper–Pearson throughout;
    2. 0/1 scores, one answer each, no clusters (or one): Wilson (holds its level from
       n = 10 in the lab, never leaves [0, 1], keeps its width at 0/n and n/n);
    3. otherwise (fractional scores or K > 1) with fewer than 100 questions:
       the Bayesian interval that applies (hierarchical posterior for 0/1
       answers with K > 1, Bayesian bootstrap for fractional scores);
    4. otherwise: CLT.

    A method that is unavailable (e.g. ``bayes="off"``) falls through to the
    next rule, and so does a hierarchical posterior that misses the score
    (warning ``hierarchical_misfit``).  The recommended interval never leaves
    [0, 1]: when the rule's interval does, the first available in-range
    method of the same estimand is taken instead (cluster-effect posterior,
    hierarchical posterior, and without clusters the Bayesian bootstrap);
    when none is available (``bayes="off"``) the interval is cut to [0, 1],
    which keeps its coverage because the mean score cannot leave [0, 1].
    """
    ivs = score.intervals
    clustered = score.n_clusters is not None and score.n_clusters >= 2
    candidates = []
    if clustered:
        headline = ivs.get("clustered")
        outside = headline is not None and not _inside(headline)
        # two clusters: CR2's width rests on one degree of freedom, and "inside [0, 1]" would
        # pick exactly the data sets where the two clusters happen to agree (see the docstring)
        two = score.n_clusters == 2
        if score.mean in (0.0, 1.0) or outside or two:
            candidates.append("clopper_pearson_clustered")
        if outside or two:
            candidates.append("cluster_effect_posterior")
        candidates.append("clustered")
    if score.binary and not clustered:  # no clusters, or all in one (no cluster-level inference)
        candidates.append("wilson")
    if score.n_questions < 100:
        candidates += ["hierarchical_posterior", "bayesian_bootstrap"]
    candidates.append("clt")
    misfit = hierarchical_misses_score(score)  # the hierarchical_misfit warning
    usable = [k for k in candidates if ivs.get(k) is not None
              and not (misfit and k == "hierarchical_posterior")]
    first = usable[0]
    if _inside(ivs[first]):
        return Recommendation(first, tuple(ivs[first]), False)
    fallbacks = _INSIDE_FALLBACKS + (() if clustered else ("bayesian_bootstrap",))
    inside = next((k for k in fallbacks if ivs.get(k) is not None and _inside(ivs[k])
                   and not (misfit and k == "hierarchical_posterior")), None)
    if inside is not None:
        return Recommendation(inside, tuple(ivs[inside]), False)
    lo, hi = ivs[first]
    return Recommendation(first, (min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)), True)


def recommended(score) -> str:
    """The key of the recommended interval's method (:func:`recommendation`)."""
    return recommendation(score).key


def _inside(ci) -> bool:
    return 0.0 <= ci[0] and ci[1] <= 1.0


def hierarchical_misses_score(score) -> bool:
    """The hierarchical posterior exists and does not contain the score (§2.9 ``hierarchical_misfit``)."""
    hier = score.intervals.get("hierarchical_posterior")
    return hier is not None and not hier[0] <= score.mean <= hier[1]
