"""Inspect AI metrics: bayeserr's intervals inside an Inspect run and its log.

Install with ``pip install "bayeserr[inspect]"`` (the core install never pulls
Inspect; ``import bayeserr`` never imports this module).  List the metrics next
to Inspect's own, on a task or a scorer::

    from inspect_ai import Task
    from inspect_ai.scorer import accuracy, match, stderr
    from bayeserr.integrations.inspect_metrics import ci_clustered, ci_exact, ci_beta, ci_hierarchical

    Task(dataset=..., solver=..., scorer=match(),
         metrics=[accuracy(), stderr(cluster="repo"),
                  ci_clustered(cluster="repo"),        # CR2, t on Bell–McCaffrey df
                  ci_exact("clopper_pearson"),          # 0/1 scores, one answer each
                  ci_beta(),                            # Beta posterior, uniform prior
                  ci_hierarchical(cluster="repo")])     # hierarchical Beta–Binomial

or ``metrics=[accuracy(), *interval_metrics(cluster="repo")]`` for all of them.

**Value shape (decided from the installed Inspect, 0.3.285).**  A metric may
return a mapping: Inspect writes each entry as a metric of its own, grouped
under the metric's name, in its terminal summary, ``inspect view`` and the log
(``results.scores[].metrics["clustered_lower"]``, ``.group == "ci_clustered"``).
So each metric returns one mapping ``{"<key>_lower": ..., "<key>_upper": ...}``
rather than a pair of ``_low``/``_high`` metrics: both ends come from one
computation and stay together.  ``<key>`` is the name of the same interval in
``bayeserr report``'s JSON (``intervals.<key>``): ``clustered``,
``clopper_pearson`` / ``wilson`` / ``jeffreys`` / ``agresti_coull``,
``beta_posterior``, ``hierarchical_posterior``.  The key carries the method
because Inspect keys a task's metrics by these names: plain ``lower``/``upper``
would collide with each other and with Inspect's own ``ci()``.  (The same
metric listed twice, e.g. at two levels, gets Inspect's suffix:
``clustered_lower2``.)

**Epochs.**  The metrics are declared ``@metric(scores="unreduced")``
(Inspect 0.3.241 on; importing this module under an older Inspect is an
ImportError naming the version).  Listed next to a reduced metric such as
``accuracy()``, Inspect then writes two score blocks for the scorer: the
reduced one (``reducer="mean"``, or the task's reducer) and ours
(``reducer=None``).

**Same numbers as** ``bayeserr report`` **on the same log** (one task, one
model; default prior; same ``level``).  Inspect records each metric with its
arguments in the log header, and the report, given no ``--cluster-field``,
clusters by the ``cluster`` of these metrics (and of Inspect's
``stderr(cluster=...)``; :data:`bayeserr.data.readers.inspect_logs.CLUSTER_METRICS`), saying
so in a note of its row accounting; an explicit ``--cluster-field`` wins.

* Per-question means first: being ``scores="unreduced"``, a metric gets one
  score per sample *per epoch* whatever epoch reducer the task uses, and
  averages a question's epochs itself (grouped by ``SampleScore.sample_id``).
  Standard errors are over questions (or clusters), never over answers.
* Score values are mapped by :func:`bayeserr.data.readers.values.inspect_value_to_float`
  (C = 1, I = 0, P = 0.5, N = 0, yes/true = 1, no/false = 0, numbers);
  a value it cannot map is a ``ValueError`` (never a silent 0, unlike
  Inspect's ``value_to_float``).  Unscored samples (NaN) are left out, as
  Inspect leaves them out of every metric.
* ``cluster`` names a sample-metadata field, as in Inspect's
  ``stderr(cluster=...)`` (a dotted path such as ``"meta.repo"`` reaches into
  nested metadata, as ``--cluster-field`` does); a sample without it is a
  ``ValueError``.  Cluster ids are compared as text (1 and "1" are one).

Where an interval does not apply the metric reports NaN for both ends, as the
report writes ``null``: the exact intervals and the Beta posterior need 0/1
scores with one answer per question (no epochs > 1); the hierarchical
posterior needs 0/1 answers and clusters or epochs > 1; the clustered interval
needs two clusters.  One difference is deliberate: ``ci_clustered()`` without
``cluster`` puts each question in its own cluster (CR2 is then the usual SE
over questions, with t on n − 1 df); such a log names no cluster field, and
the report has no clustered column.

The formulas are bayeserr's own (:mod:`bayeserr.stats.fewclusters`,
:mod:`bayeserr.stats.exact`, :mod:`bayeserr.models`); this module only turns
Inspect's scores into their inputs.
"""

from __future__ import annotations

import inspect as _inspect
import math
from dataclasses import dataclass

import numpy as np

try:
    from inspect_ai.scorer import Metric, SampleScore, Value, metric
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "bayeserr.integrations.inspect_metrics needs Inspect AI, which the core install does not include: "
        f'pip install "bayeserr[inspect]" (import failed: {exc})') from exc

#: First Inspect release whose ``@metric`` takes ``scores="unreduced"``.
MIN_INSPECT = "0.3.241"

if "scores" not in _inspect.signature(metric).parameters:  # pragma: no cover - old Inspect
    raise ImportError(
        f"bayeserr.integrations.inspect_metrics needs inspect_ai >= {MIN_INSPECT} (metrics that read every "
        f'epoch\'s score): pip install -U "bayeserr[inspect]"')

# bayeserr's own modules (statsmodels, pandas, the models) are imported when a
# metric is created or computed, not here: Inspect may import this module only
# to register the metrics (e.g. to recompute them from a log).

__all__ = ["ci_clustered", "ci_exact", "ci_beta", "ci_hierarchical", "ci_pass_hat_k", "interval_metrics",
           "MIN_INSPECT"]


# --------------------------------------------------------------------------- #
# Inspect scores -> bayeserr arrays
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class _Questions:
    """One task's scores as bayeserr sees them: questions sorted by id text."""

    s: np.ndarray  #: per-question mean over its answers (epochs)
    k: np.ndarray  #: answers per question
    right: np.ndarray  #: sum of the answers per question
    zero_one: bool  #: every answer is 0 or 1
    labels: np.ndarray | None  #: cluster label per question (text), or None

    @property
    def n(self) -> int:
        return int(self.s.size)

    @property
    def binary(self) -> bool:
        """0/1 answers, one per question: the exact intervals and the Beta posterior apply."""
        return self.zero_one and bool((self.k == 1).all())

    def codes(self) -> np.ndarray | None:
        """Cluster codes in the order of the labels (as ``bayeserr.load`` codes them)."""
        if self.labels is None:
            return None
        return np.unique(self.labels, return_inverse=True)[1].astype(np.int64)


def _lookup(metadata, field: str):
    """``metadata[field]``, else the dotted path ``a.b`` into nested metadata; None if absent."""
    if not isinstance(metadata, dict):
        return None
    if field in metadata:
        return metadata[field]
    obj = metadata
    for part in field.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _cluster_label(score: SampleScore, field: str, metric_name: str) -> str:
    from bayeserr.data.readers import id_text
    value = _lookup(score.sample_metadata, field)
    label = id_text(value)
    if label is None:
        raise ValueError(
            f"{metric_name}: sample {score.sample_id} has no metadata field '{field}' (or it is empty). "
            f"Every sample needs a cluster id in metadata['{field}'] for cluster='{field}'; "
            "fix the dataset or drop the cluster argument.")
    return label


def _questions(scores: list[SampleScore], cluster: str | None, metric_name: str) -> _Questions:
    """Group unreduced scores by sample id (epochs of one question) and map their values."""
    from bayeserr.data.readers import id_text, inspect_value_to_float
    answers: dict[str, list[float]] = {}
    labels: dict[str, str] = {}
    for i, ss in enumerate(scores):
        value = ss.score.value
        if isinstance(value, float) and math.isnan(value):
            continue  # Score.unscored(): Inspect leaves these out of every metric
        qid = id_text(ss.sample_id)
        if qid is None:  # no id: the score cannot be matched to other epochs
            qid = f"\x00{i}"
        try:
            x = inspect_value_to_float(value, f"{metric_name}: sample {ss.sample_id}")
        except ValueError:
            raise ValueError(
                f"{metric_name}: sample {ss.sample_id} has score value {value!r}, which is not one "
                "Inspect maps to a number (C, I, P, N, yes/no, true/false or a number). For a scorer "
                "with dict values, list the metric per key: metrics={'*': [...]}.") from None
        answers.setdefault(qid, []).append(x)
        if cluster is not None:
            label = _cluster_label(ss, cluster, metric_name)
            if labels.setdefault(qid, label) != label:
                raise ValueError(f"{metric_name}: sample {ss.sample_id} has cluster '{labels[qid]}' in one "
                                 f"epoch and '{label}' in another; a question belongs to one cluster.")
    order = sorted(answers)
    k = np.array([len(answers[q]) for q in order], dtype=float)
    right = np.array([math.fsum(answers[q]) for q in order], dtype=float)
    values = [v for q in order for v in answers[q]]
    return _Questions(
        s=right / np.where(k > 0, k, 1.0), k=k, right=right,
        zero_one=all(v in (0.0, 1.0) for v in values),
        labels=None if cluster is None else np.array([labels[q] for q in order], dtype=object))


def _interval(key: str, low=math.nan, high=math.nan) -> dict[str, float]:
    return {f"{key}_lower": float(low), f"{key}_upper": float(high)}


def _check_level(level: float, name: str) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name}: level must be between 0 and 1 (got {level}); use e.g. 0.95.")
    return level


# --------------------------------------------------------------------------- #
# the computations (plain functions of the grouped scores, tested directly too)
# --------------------------------------------------------------------------- #
def clustered_interval(q: _Questions, level: float) -> dict[str, float]:
    """CR2 SE with t on the Bell–McCaffrey df (``bayeserr report``'s ``clustered``)."""
    from bayeserr.stats.fewclusters import cr2_mean, t_test
    if q.n == 0:
        return _interval("clustered")
    codes = q.codes()
    if codes is None:
        codes = np.arange(q.n, dtype=np.int64)  # each question its own cluster
    cr2 = cr2_mean(q.s[None, :], codes)
    low, high = t_test(cr2.mean, cr2.se, cr2.df, level).ci[0]
    return _interval("clustered", low, high)


def exact_interval(q: _Questions, level: float, method: str) -> dict[str, float]:
    """A proportion interval (Clopper–Pearson, Wilson, ...) on 0/1 scores with one answer each."""
    from bayeserr.stats.exact import proportion_interval
    if q.n == 0 or not q.binary:
        return _interval(method)
    low, high = proportion_interval(q.right.sum(), q.n, level, method)
    return _interval(method, low, high)


def beta_interval(q: _Questions, level: float, prior) -> dict[str, float]:
    """Equal-tailed Beta posterior interval on 0/1 scores with one answer each."""
    from bayeserr.models.beta_binomial import beta_posterior
    if q.n == 0 or not q.binary:
        return _interval("beta_posterior")
    low, high = beta_posterior(q.right.sum(), q.n, prior).interval(level)
    return _interval("beta_posterior", low, high)


def hierarchical_interval(q: _Questions, level: float) -> dict[str, float]:
    """Hierarchical posterior of the question-weighted mean accuracy of the
    observed groups: the report's ``hierarchical_posterior`` computed by the
    same registered method (docs/methods.md §5.2) — two levels (groups are
    clusters, or questions with epochs > 1), three with clusters and epochs > 1."""
    from bayeserr.registries.methods import INTERVALS
    from bayeserr.stats.view import ScoreBatch
    if q.n == 0 or not q.zero_one:
        return _interval("hierarchical_posterior")
    batch = ScoreBatch(q.s[None, :], codes=q.codes(), counts=(q.right[None, :], q.k[None, :]))
    low, high = INTERVALS["hierarchical_posterior"](batch, level)[0]
    return _interval("hierarchical_posterior", low, high)


def pass_hat_k_interval(q: _Questions, k: int, level: float) -> dict[str, float]:
    """pass^k over the questions (each epoch a run) and its interval: the report's Reliability
    section (``docs/methods.md`` §6.2: C(c, k)/C(n, k) per question, Wilson on n*); NaN unless
    every answer is 0/1 and every question has at least k epochs."""
    key = f"pass_hat_{k}"
    if q.n == 0 or not q.zero_one or q.k.min() < k:
        return {key: math.nan, **_interval(key)}
    from bayeserr.analyses.reliability import headline_intervals
    from bayeserr.stats.passk import pass_hat_k
    values = pass_hat_k(q.k, q.right, k)
    low, high = headline_intervals(values[None, :], q.codes(), level)[0][0]
    return {key: float(values.mean()), **_interval(key, low, high)}


# --------------------------------------------------------------------------- #
# the Inspect metrics
# --------------------------------------------------------------------------- #
@metric(scores="unreduced")
def ci_clustered(cluster: str | None = None, level: float = 0.95) -> Metric:
    """Clustered headline interval: CR2 standard error, t on the Bell–McCaffrey df.

    Per-question means over epochs, then the CR2 (bias-reduced) cluster-robust
    SE of their mean with a Student t critical value on the Bell–McCaffrey
    degrees of freedom, which stays honest with few clusters
    (``docs/methods.md`` §2.5; ``bayeserr report``'s ``clustered``).

    Args:
       cluster: Sample-metadata field holding each sample's cluster id (as in
          ``stderr(cluster=...)``).  None: each question is its own cluster
          (the usual SE over questions, t on n − 1 df).
       level: Confidence level, e.g. 0.95.

    Returns:
       ``{"clustered_lower": ..., "clustered_upper": ...}`` (NaN with fewer
       than two clusters).
    """
    level = _check_level(level, "ci_clustered")

    def compute(scores: list[SampleScore]) -> Value:
        return clustered_interval(_questions(scores, cluster, "ci_clustered"), level)

    return compute


@metric(scores="unreduced")
def ci_exact(method: str = "clopper_pearson", level: float = 0.95) -> Metric:
    """Exact / score interval for a proportion, for 0/1 scores with one answer per question.

    Args:
       method: ``clopper_pearson`` (exact, default), ``wilson``, ``jeffreys``
          or ``agresti_coull`` (:func:`bayeserr.stats.exact.proportion_interval`).
       level: Confidence level, e.g. 0.95.

    Returns:
       ``{"<method>_lower": ..., "<method>_upper": ...}``; NaN when a score is
       not 0/1 or a question has several epochs (these intervals assume
       independent questions with one answer each; use :func:`ci_clustered`
       or :func:`ci_hierarchical` there).
    """
    from bayeserr.stats.exact import METHODS
    if method not in METHODS:
        raise ValueError(f"ci_exact: unknown method '{method}'; use one of {', '.join(METHODS)}.")
    level = _check_level(level, "ci_exact")

    def compute(scores: list[SampleScore]) -> Value:
        return exact_interval(_questions(scores, None, "ci_exact"), level, method)

    return compute


@metric(scores="unreduced")
def ci_beta(prior: str | list[float] = "uniform", level: float = 0.95) -> Metric:
    """Equal-tailed interval of the conjugate Beta posterior of the accuracy.

    Args:
       prior: ``uniform`` (Beta(1, 1), default), ``jeffreys`` (Beta(½, ½)) or
          a pair ``[a, b]`` (``bayeserr report --prior``).
       level: Posterior probability of the interval, e.g. 0.95.

    Returns:
       ``{"beta_posterior_lower": ..., "beta_posterior_upper": ...}``; NaN
       unless every score is 0/1 with one answer per question.
    """
    from bayeserr.models.beta_binomial import prior_parameters
    if not isinstance(prior, str):
        prior = [float(v) for v in prior]
    prior_parameters(prior)  # a bad prior fails when the task is defined, not after the run
    level = _check_level(level, "ci_beta")

    def compute(scores: list[SampleScore]) -> Value:
        return beta_interval(_questions(scores, None, "ci_beta"), level, prior)

    return compute


@metric(scores="unreduced")
def ci_hierarchical(cluster: str | None = None, level: float = 0.95) -> Metric:
    """Interval of μ in the hierarchical Beta–Binomial model (exact grid posterior).

    Groups are the clusters when ``cluster`` is given, else the questions
    (which needs epochs > 1: each question's epochs are its group's answers).

    Args:
       cluster: Sample-metadata field holding each sample's cluster id.
       level: Posterior probability of the interval, e.g. 0.95.

    Returns:
       ``{"hierarchical_posterior_lower": ..., "hierarchical_posterior_upper": ...}``;
       NaN unless every answer is 0/1 and there are clusters or epochs > 1.
    """
    level = _check_level(level, "ci_hierarchical")

    def compute(scores: list[SampleScore]) -> Value:
        return hierarchical_interval(_questions(scores, cluster, "ci_hierarchical"), level)

    return compute


@metric(scores="unreduced")
def ci_pass_hat_k(k: int = 2, cluster: str | None = None, level: float = 0.95) -> Metric:
    """pass^k — the chance that k epochs of a sample all succeed — with its interval.

    Run the task with ``epochs`` ≥ k; each epoch is a run of the sample.

    Args:
       k: Runs that must all succeed (a whole number ≥ 1).
       cluster: Sample-metadata field holding each sample's cluster id (CR2 with clusters).
       level: Coverage of the interval, e.g. 0.95.

    Returns:
       ``{"pass_hat_<k>": ..., "pass_hat_<k>_lower": ..., "pass_hat_<k>_upper": ...}``; NaN
       unless every answer is 0/1 and every sample has at least k epochs.
    """
    level = _check_level(level, "ci_pass_hat_k")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"ci_pass_hat_k: k must be a whole number ≥ 1 (got {k!r}); e.g. k=4 with epochs=4.")

    def compute(scores: list[SampleScore]) -> Value:
        return pass_hat_k_interval(_questions(scores, cluster, "ci_pass_hat_k"), k, level)

    return compute


def interval_metrics(cluster: str | None = None, level: float = 0.95,
                     prior: str | list[float] = "uniform") -> list[Metric]:
    """All of the above at one ``level``, in ``bayeserr report``'s column order:
    clustered, Wilson, Clopper–Pearson, Beta posterior, hierarchical posterior."""
    return [ci_clustered(cluster=cluster, level=level),
            ci_exact(method="wilson", level=level),
            ci_exact(method="clopper_pearson", level=level),
            ci_beta(prior=prior, level=level),
            ci_hierarchical(cluster=cluster, level=level)]
