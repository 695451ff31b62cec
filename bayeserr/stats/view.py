"""One array view of the data, built once from the validated dataset.

Every layer above the loader (scoring, comparisons, the Bayesian columns,
planning, pass@k, the simulation lab) works on the same arrays, so the rules
"what is a 0/1 model", "how many answers does a question have" and "which
cluster is question i in" live here and nowhere else.

Two objects:

* :class:`DataView` — the loaded results: per-question means ``s`` on
  ``(model, question)`` (NaN = not answered), the answer cube, cluster codes,
  and the per-model masks, with the model names as labels (``view.labelled``
  gives them back as an :class:`xarray.DataArray`).
* :class:`ScoreBatch` — rows of per-question means to score at once: the
  models of a report, or the replicates of a simulation.  Its summary
  statistics (n, mean, CLT SE, clustered SEs, counts per cluster) are
  computed once, lazily, and shared by every interval method of
  :mod:`bayeserr.registries.methods`.  See ``docs/methods.md`` §2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import xarray as xr

from bayeserr.base.errors import InputError, describe, row_list, suggest
from bayeserr.data import lazy_dask

lazy_dask.install()  # xarray: no dask import to build a view (bayeserr.data.lazy_dask)

DIMS = ("model", "question", "sample")
_LOAD_HINT = "Load your results with bayeserr.load(path_or_dataframe)."


def _check_question_coord(ds, coord: str, n_questions: int) -> None:
    """A ``cluster`` or ``task`` coordinate: on ``question``, no missing labels."""
    dims = tuple(ds[coord].dims)
    if dims != ("question",):
        raise InputError(f"the '{coord}' coordinate is on {dims}; it must be on 'question' (one "
                         f"{coord} per question): ds.assign_coords({coord}=('question', labels)).")
    values = ds[coord].values
    missing = np.asarray(pd.isna(values) | (pd.Index(values).astype(str).str.strip() == ""))
    if missing.any():
        where = row_list(repr(q) for q in _labels(ds, "question", n_questions)[missing])
        raise InputError(f"a {coord} id is missing for {int(missing.sum())} question(s) ({where}); give "
                         f"every question a {coord}, or drop the coordinate (ds.drop_vars('{coord}')) "
                         f"to analyse without {coord}s.")


def check_dataset(ds) -> xr.Dataset:
    """The dataset contract of :func:`bayeserr.load`, checked at the API boundary.

    Every analysis (score, compare, report, pass@k) calls this once, so a
    hand-built or edited :class:`xarray.Dataset` fails here with an
    :class:`~bayeserr.base.errors.InputError` naming the problem and the fix,
    not deep inside with a KeyError or an IndexError.  A long results
    :class:`pandas.DataFrame` (one row per answer) is loaded with
    :func:`bayeserr.load`.  The rules are load's: ``score`` on ``(model,
    question, sample)``, numbers in [0, 1] or NaN (no answer), unique model
    and question labels, at least 2 answered questions per model, a
    ``cluster`` coordinate on ``question`` with no missing ids, and the
    pass@k counts ``n_samples``/``n_correct`` together on ``(model, question)``.
    """
    if isinstance(ds, pd.DataFrame):
        from bayeserr.data.loading import load
        return load(ds)
    if not isinstance(ds, xr.Dataset):
        raise InputError(f"expected a dataset from bayeserr.load(...) (or a results DataFrame); got "
                         f"{describe(ds)}. {_LOAD_HINT}")
    if "score" not in ds.data_vars:
        raise InputError(f"the dataset has no 'score' variable (variables: "
                         f"{', '.join(map(str, ds.data_vars)) or 'none'}). {_LOAD_HINT}")
    dims = tuple(ds["score"].dims)
    if dims != DIMS:
        fix = (f"Put them in order with ds.transpose{DIMS}." if sorted(dims) == sorted(DIMS) else
               "Add the missing dimension (one answer per question: sample of length 1) or "
               f"{_LOAD_HINT[0].lower()}{_LOAD_HINT[1:]}")
        raise InputError(f"'score' has dims {dims} but must be on {DIMS}. {fix}")
    values = ds["score"].values
    if values.dtype.kind not in "biuf":
        try:
            values = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"'score' values must be numbers in [0, 1] (NaN for no answer); got "
                             f"dtype {ds['score'].dtype}. Convert them, or {_LOAD_HINT[0].lower()}"
                             f"{_LOAD_HINT[1:]}") from None
    n_models, n_questions = values.shape[:2]
    if n_models == 0:
        raise InputError(f"the dataset has no models. {_LOAD_HINT}")
    for what in ("model", "question"):
        if what in ds.coords and not _unique_text(ds[what].values):
            index = pd.Index(_labels(ds, what, 0), dtype=object)
            dup = index[index.duplicated()].unique()
            raise InputError(f"the {what} label{'s' if len(dup) > 1 else ''} "
                             f"{row_list(repr(d) for d in dup)} appear{'' if len(dup) > 1 else 's'} more "
                             f"than once; give every {what} one label (bayeserr.load merges repeated "
                             "answers into samples).")
    if values.size and values.dtype.kind == "f":
        lo, hi = float(np.fmin.reduce(values, axis=None)), float(np.fmax.reduce(values, axis=None))
        if np.isinf(lo) or np.isinf(hi):
            raise InputError("'score' holds infinite values; scores are numbers in [0, 1] (NaN for no "
                             "answer). Fix or drop those answers.")
        if lo < 0 or hi > 1:
            raise InputError(f"'score' holds values outside [0, 1] (from {lo:g} to {hi:g}). Rescale the "
                             "scores to [0, 1], e.g. divide by the maximum points.")
    elif values.size and (values.min() < 0 or values.max() > 1):
        raise InputError(f"'score' holds values outside [0, 1] (from {values.min()} to {values.max()}). "
                         "Rescale the scores to [0, 1], e.g. divide by the maximum points.")
    answered = np.array([np.count_nonzero(~np.isnan(values[j]).all(axis=-1)) if values.dtype.kind == "f"
                         else n_questions for j in range(n_models)])
    few = [f"'{m}' ({k})" for m, k in zip(_labels(ds, "model", n_models), answered) if k < 2]
    if few:
        raise InputError(f"fewer than 2 questions for model(s) {', '.join(few[:5])}"
                         f"{' and more' if len(few) > 5 else ''}. A standard error needs at least two "
                         "answered questions per model; add questions or leave those models out (models=[...]).")
    for coord in ("cluster", "task"):
        if coord in ds.coords:
            _check_question_coord(ds, coord, n_questions)
    counts = [k for k in ("n_samples", "n_correct") if k in ds]
    if len(counts) == 1:
        raise InputError(f"the dataset has '{counts[0]}' without "
                         f"'{({'n_samples', 'n_correct'} - set(counts)).pop()}'; the pass@k counts n_samples "
                         "and n_correct go together. Add the other, or drop it.")
    for k in counts:
        if tuple(ds[k].dims) != ("model", "question"):
            raise InputError(f"'{k}' is on {tuple(ds[k].dims)}; it must be on ('model', 'question').")
    return ds


def _unique_text(values: np.ndarray) -> bool:
    """Whether labels stay distinct as text (``1`` and ``"1"`` are one label)."""
    if values.dtype.kind in "iub":
        return pd.Index(values).is_unique
    return len(set(map(str, values.tolist()))) == len(values)


def _labels(ds, dim: str, size: int) -> np.ndarray:
    """The labels of a dimension as text (positions when it has no coordinate)."""
    if dim in ds.coords:
        return np.asarray(pd.Index(ds[dim].values).astype(str), dtype=object)
    return np.arange(size).astype(str).astype(object)


def model_names(models, what: str = "models", example: str = "models=['A', 'B']") -> list[str] | None:
    """``models`` as a list of names (text): ``None`` (all), one name, or a
    list of names; numbers name the model that prints the same, as in load."""
    if models is None:
        return None
    if isinstance(models, (str, np.str_)):
        models = [models]
    elif isinstance(models, (pd.Series, pd.Index, np.ndarray)):
        models = list(models)
    elif not isinstance(models, (list, tuple)):
        raise InputError(f"{what} takes a list of model names; got {describe(models)}. "
                         f"Example: {example}.")
    bad = [m for m in models if isinstance(m, (bool, np.bool_))
           or not isinstance(m, (str, int, np.integer, np.str_))]
    if bad:
        raise InputError(f"{what} takes model names (text); got {describe(bad[0])}. Example: "
                         f"{example}.")
    if not models:
        raise InputError(f"{what} is empty: list at least one model, or leave it out for all models.")
    names = [str(m) for m in models]
    seen = set()
    for m in names:
        if m in seen:
            raise InputError(f"'{m}' is listed twice in {what}; list each model once.")
        seen.add(m)
    return names


def zero_one_k1(answers: np.ndarray) -> np.ndarray:
    """Per row of an answer cube ``(..., question, sample)`` (NaN = no answer):
    every answer is 0/1 and no question has more than one answer."""
    answered = ~np.isnan(answers)
    one_each = (answered.sum(axis=-1) <= 1).all(axis=-1)
    zero_one = (np.isin(answers, (0.0, 1.0)) | ~answered).all(axis=(-2, -1))
    return one_each & zero_one


def all_zero_one(answers: np.ndarray) -> np.ndarray:
    """Per row of an answer cube ``(..., question, sample)``: every answer is 0 or 1."""
    return (np.isin(answers, (0.0, 1.0)) | np.isnan(answers)).all(axis=(-2, -1))


def question_means(answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-question means ``s_i`` over the samples of an answer cube and the
    answer counts ``K_i`` (``docs/methods.md`` §2.1); NaN / 0 where unanswered."""
    answered = ~np.isnan(answers)
    k = answered.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(answered, answers, 0.0).sum(axis=-1) / k
    return s, k


class _AnswerKinds:
    """What kind of answers each row of ``self.answers`` (rows, n, K) holds (shared by
    :class:`DataView` and :class:`ScoreBatch`)."""

    @cached_property
    def binary(self) -> np.ndarray:
        """Per row: every answer 0/1 and one answer per answered question."""
        return zero_one_k1(self.answers)

    @cached_property
    def zero_one(self) -> np.ndarray:
        """Per row: every answer is 0 or 1 (any number of answers)."""
        return all_zero_one(self.answers)


@dataclass(frozen=True, eq=False)
class DataView(_AnswerKinds):
    """The validated results as labelled arrays (see the module docstring)."""

    models: tuple[str, ...]
    answers: np.ndarray  #: (model, question, sample), NaN = no answer
    codes: np.ndarray | None  #: cluster code of each question, 0..C−1
    questions: np.ndarray  #: question labels
    clusters: np.ndarray | None  #: cluster labels, indexed by code
    source: str = ""
    columns: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)  #: the row accounting, as in the JSON report
    extra: dict = field(default_factory=dict)  #: other per-question variables (pass@k counts)
    tasks: np.ndarray | None = None  #: task label of each question (a suite of tasks), or None

    @classmethod
    def from_dataset(cls, ds: xr.Dataset) -> "DataView":
        """Build the view of a dataset returned by :func:`bayeserr.load`.

        Questions are put in the order of their labels and clusters are
        coded in the order of theirs, so that every result (including the
        seeded resampling ones) is the same whatever the order of the input
        rows.  Models keep the dataset's order.
        """
        ds = check_dataset(ds)
        questions = np.asarray(ds["question"].values)
        order = np.argsort(questions.astype(str), kind="stable")
        codes = clusters = None
        if "cluster" in ds.coords:
            labels = np.asarray(ds["cluster"].values)[order].astype(str)
            clusters, codes = np.unique(labels, return_inverse=True)
            codes, clusters = codes.astype(np.int64), clusters.astype(object)
        extra = {k: ds[k].values[:, order] for k in ("n_samples", "n_correct") if k in ds}
        return cls(models=tuple(str(m) for m in ds["model"].values),
                   answers=np.asarray(ds["score"].values, dtype=float)[:, order], codes=codes,
                   questions=questions[order], clusters=clusters,
                   source=ds.attrs.get("source", ""), columns=dict(ds.attrs.get("columns", {})),
                   rows=dict(ds.attrs.get("rows", {"read": 0, "used": 0, "dropped": []})),
                   extra=extra,
                   tasks=np.asarray(ds["task"].values)[order].astype(str) if "task" in ds.coords else None)

    # ------------------------------------------------------------ lookups
    @cached_property
    def position(self) -> dict[str, int]:
        return {m: j for j, m in enumerate(self.models)}

    def index(self, name: str) -> int:
        """Row of a model; an :class:`InputError` with a suggestion if absent."""
        try:
            return self.position[str(name)]
        except KeyError:
            more = " and more" if len(self.models) > 20 else ""
            raise InputError(f"model '{name}' is not in the data.{suggest(name, self.models)} "
                             f"Models present: {', '.join(self.models[:20])}{more}.") from None

    def select(self, models) -> "DataView":
        """The view restricted to (and ordered by) ``models`` (see :func:`model_names`)."""
        models = model_names(models)
        if models is None:
            return self
        idx = [self.index(m) for m in models]
        extra = {k: v[idx] for k, v in self.extra.items()}
        return DataView(tuple(self.models[j] for j in idx), self.answers[idx], self.codes,
                        self.questions, self.clusters, self.source, self.columns, self.rows, extra, self.tasks)

    def questions_where(self, keep: np.ndarray) -> "DataView":
        """The view on the questions where ``keep`` (a boolean per question) holds;
        clusters are coded again over the questions kept."""
        keep = np.asarray(keep, dtype=bool)
        codes = clusters = None
        if self.codes is not None:
            used, codes = np.unique(self.codes[keep], return_inverse=True)
            codes, clusters = codes.astype(np.int64), self.clusters[used]
        extra = {k: v[:, keep] for k, v in self.extra.items()}
        return DataView(self.models, self.answers[:, keep], codes, self.questions[keep], clusters,
                        self.source, self.columns, self.rows, extra,
                        None if self.tasks is None else self.tasks[keep])

    # ------------------------------------------------------------ arrays
    @cached_property
    def _means(self):
        return question_means(self.answers)

    @property
    def s(self) -> np.ndarray:
        """Per-question means ``s_i`` (model, question); NaN where unanswered."""
        return self._means[0]

    @property
    def k(self) -> np.ndarray:
        """Answers per question ``K_i`` (model, question)."""
        return self._means[1]

    @cached_property
    def answered(self) -> np.ndarray:
        return self.k > 0

    @property
    def clustered(self) -> bool:
        return self.codes is not None

    def labelled(self, values: np.ndarray | None = None) -> xr.DataArray:
        """Per-question means (or ``values`` of the same shape) with their labels."""
        return xr.DataArray(self.s if values is None else values, dims=("model", "question"),
                            coords={"model": list(self.models), "question": self.questions})

    def with_scores(self, s: np.ndarray) -> "DataView":
        """The same models and questions with other per-question scores."""
        return DataView(self.models, np.asarray(s, float)[..., None], self.codes, self.questions,
                        self.clusters, self.source, self.columns, self.rows, {}, self.tasks)

    def pass_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Samples n and correct c per (model, problem) for pass@k: the
        ``n_samples``/``n_correct`` columns when loaded, else the 0/1 answers."""
        if "n_samples" in self.extra and "n_correct" in self.extra:
            return self.extra["n_samples"], self.extra["n_correct"]
        if not self.zero_one.all():
            raise InputError("pass@k needs 0/1 answers per sample, or n_samples and n_correct columns.")
        return self.k.astype(float), np.nansum(self.answers, axis=2)

    def batch(self, **settings) -> "ScoreBatch":
        """All models as one :class:`ScoreBatch`."""
        counts = None
        if "n_samples" in self.extra and "n_correct" in self.extra:
            counts = (self.extra["n_correct"], self.extra["n_samples"])
        return ScoreBatch(self.s, self.answers, self.codes, names=self.models, counts=counts, **settings)


@dataclass(eq=False)
class ScoreBatch(_AnswerKinds):
    """Rows of per-question scores to score at once (models or replicates).

    ``s`` is ``(rows, n)`` with NaN for unanswered questions; ``answers`` the
    matching ``(rows, n, K)`` cube (or ``None`` for fractional lab scores
    without answers); ``codes`` the cluster code of each question.  Settings
    (cluster correction, Bayesian settings) ride along for the interval
    methods; ``fits`` collects posterior objects by row for saving and plots.
    """

    s: np.ndarray
    answers: np.ndarray | None = None
    codes: np.ndarray | None = None
    cluster_correction: str = "paper"
    bayes: object = None  #: a BayesSettings, or None for no Bayesian columns
    names: tuple | None = None  #: row labels (model names), for messages
    keep_fits: bool = False  #: keep posterior objects (report: yes; lab: no)
    fits: dict = field(default_factory=dict)  #: row -> {kind: posterior}
    notes: list = field(default_factory=list)  #: caveats raised while computing (MCMC diagnostics)
    side: dict = field(default_factory=dict)  #: other estimands a method computes on the way (hierarchical_mu)
    #: (n_correct, n_samples) per (row, question) when the data have those columns
    counts: tuple | None = None

    def __post_init__(self):
        self.s = np.asarray(self.s, dtype=float)
        if self.answers is None:
            self.answers = self.s[..., None]

    @cached_property
    def answered(self) -> np.ndarray:
        return ~np.isnan(self.s)

    @cached_property
    def n(self) -> np.ndarray:
        """Questions answered per row."""
        return self.answered.sum(axis=-1)

    @cached_property
    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.answered, self.s, 0.0).sum(axis=-1) / self.n

    @cached_property
    def residuals(self) -> np.ndarray:
        """``e_i = s_i − s̄`` with 0 where unanswered (so sums skip them)."""
        return np.where(self.answered, self.s - self.mean[..., None], 0.0)

    @cached_property
    def k(self) -> np.ndarray:
        return (~np.isnan(self.answers)).sum(axis=-1)

    def rowwise(self, fn, *args) -> np.ndarray:
        """``fn(s, *args)`` along the last axis, on each row's answered
        questions: one vectorized call when every row answered every question,
        else row by row (ragged rows only arise with ``on_unpaired="drop"``).
        A cluster-code argument is subset with the row."""
        if self.answered.all():
            return np.asarray(fn(self.s, *args), dtype=float)
        out = np.full(self.s.shape[:-1], np.nan)
        for row in np.ndindex(*self.s.shape[:-1]):
            keep = self.answered[row]
            sub = [a[keep] if isinstance(a, np.ndarray) and a.shape == keep.shape else a for a in args]
            out[row] = fn(self.s[row][keep], *sub)
        return out

    @cached_property
    def sums(self):
        """The per-row sufficient statistics (:class:`~bayeserr.stats.sufficient.ModelSums`):
        every SE below comes from them, as every engine's does."""
        from bayeserr.stats.sufficient import ModelSums
        return ModelSums.of_scores(self.s, self.codes)

    @cached_property
    def se_clt(self) -> np.ndarray:
        return self.sums.se_clt

    @cached_property
    def n_clusters(self) -> np.ndarray | None:
        """Clusters with at least one answered question, per row."""
        if self.codes is None:
            return None
        return (self.cluster_sizes > 0).sum(axis=-1)

    @cached_property
    def cluster_sizes(self) -> np.ndarray | None:
        """Answered questions per cluster, ``(rows, C)``."""
        if self.codes is None:
            return None
        from bayeserr.stats.estimators import cluster_sums
        return cluster_sums(self.answered.astype(float), self.codes)

    def se_clustered(self, correction: str | None = None) -> np.ndarray | None:
        """(M4) or CR1 clustered SE per row (``docs/methods.md`` §2.4)."""
        if self.codes is None:
            return None
        correction = correction or self.cluster_correction
        cache = self.__dict__.setdefault("_se_cl", {})
        if correction not in cache:
            cache[correction] = self.sums.se_clustered(correction)
        return cache[correction]

    @cached_property
    def cr2(self):
        """(M4b) per row: CR2 SE, Bell–McCaffrey df, effective clusters
        (``docs/methods.md`` §2.5); NaN where fewer than 2 clusters."""
        if self.codes is None:
            return None
        return self.sums.cr2()

    @cached_property
    def cluster_ok(self) -> np.ndarray:
        """Rows with at least two clusters: cluster-level inference is possible."""
        if self.codes is None:
            return np.zeros(self.mean.shape, bool)
        return self.n_clusters >= 2

    @cached_property
    def design_effect(self) -> np.ndarray | None:
        """``SE_cr2² / SE_clt²`` (§2.6); NaN with one cluster or SE_clt = 0."""
        if self.codes is None:
            return None
        from bayeserr.stats.estimators import design_effect
        return design_effect(self.cr2.se, self.se_clt)

    @cached_property
    def _count_rows(self) -> np.ndarray:
        """Rows whose ``n_correct``/``n_samples`` columns are whole counts that
        give the score (to the rounding of the score: ``|s − c/n| ≤ ½/n``)."""
        if self.counts is None:
            return np.zeros(self.mean.shape, bool)
        from bayeserr.stats.bayes_sums import counts_give_scores
        ok = counts_give_scores(self.s, *self.counts)
        return (ok | ~self.answered).all(axis=-1) & (self.n > 0)

    @cached_property
    def binomial(self) -> np.ndarray:
        """Rows the Beta–Binomial models take: 0/1 answers, or scores that are
        ``n_correct / n_samples`` counts (``docs/methods.md`` §5.2)."""
        return self.zero_one | self._count_rows

    def question_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Right answers and answers per question, ``(rows, questions)`` each:
        the ``n_correct``/``n_samples`` counts on the rows that have them, else
        the sums of the 0/1 answers; 0 / 0 where unanswered (computed once)."""
        return self._question_counts

    @cached_property
    def _question_counts(self) -> tuple[np.ndarray, np.ndarray]:
        k_q = np.nan_to_num(self.answers).sum(axis=-1)
        n_q = self.k.astype(float)
        rows = self._count_rows
        if rows.any():
            c, n = (np.asarray(x, float) for x in self.counts)
            live = rows[..., None] & self.answered
            k_q, n_q = np.where(live, np.nan_to_num(c), k_q), np.where(live, np.nan_to_num(n), n_q)
        return k_q, n_q

    def unit_counts(self):
        """Right answers and answers per unit for the Beta–Binomial models:
        units are clusters when clustered, else questions (``docs/methods.md``
        §5.2).  ``(rows, units)`` each; zero-answer units have 0 / 0."""
        k_q, n_q = self.question_counts()
        if self.codes is None:
            return k_q, n_q
        from bayeserr.stats.estimators import cluster_sums
        return cluster_sums(k_q, self.codes), cluster_sums(n_q, self.codes)

    @cached_property
    def repeated(self) -> np.ndarray:
        """Rows with some answered question answered more than once (K > 1, or
        ``n_samples`` > 1 when the scores are ``n_correct / n_samples`` counts)."""
        n_q = self.question_counts()[1]
        return ((n_q > 1) & self.answered).any(axis=-1)

    def unit_questions(self) -> np.ndarray:
        """Answered questions per unit of :meth:`unit_counts` (the weights of the
        hierarchical posterior's weighted mean)."""
        return self.cluster_sizes if self.codes is not None else self.answered.astype(float)

    def bootstrap_units(self, row):
        """``(sums, counts, mult)`` of one row's units for the Bayesian bootstrap (§5.4):
        its clusters when it answered in two or more, else its questions (``mult`` None:
        one question each)."""
        keep = self.answered[row]
        s = self.s[row][keep]
        if self.codes is not None:
            from bayeserr.stats.estimators import cluster_sums
            codes = self.codes[keep]
            c_sums, c_counts = cluster_sums(s, codes), cluster_sums(np.ones_like(s), codes)
            if np.count_nonzero(c_counts) >= 2:  # one cluster: over questions, as the CLT
                return c_sums[c_counts > 0], c_counts[c_counts > 0], None
        return s, np.ones_like(s), None

    def cluster_score_sums(self, rows):
        """``(D, sizes, total)`` of ``rows`` (a mask): the cluster sums of the scores, the answered
        questions per cluster and each row's ``Σ s_i²`` (the cluster-effect posterior's inputs)."""
        from bayeserr.stats.bayes_sums import cluster_value_sums, total_of_squares
        scores = np.where(self.answered, self.s, np.nan)[rows]
        D, sizes, Q = cluster_value_sums(scores.reshape(-1, scores.shape[-1]), self.codes)
        return D, sizes, total_of_squares(Q)

    def record(self, row: int, kind: str, fit) -> None:
        if self.keep_fits:
            self.fits.setdefault(row, {})[kind] = fit

    def row_counts(self, row: int):
        """One row's right answers and answers per answered question, and its
        cluster codes there (``None`` without clusters)."""
        keep = self.answered[row]
        k_q, n_q = self.question_counts()
        return k_q[row][keep], n_q[row][keep], None if self.codes is None else self.codes[keep]
