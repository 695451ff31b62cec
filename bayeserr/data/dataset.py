"""The validated dataset: which column holds each field, the row accounting,
the checks of SPEC §1 on a working table, and the ``xarray.Dataset`` they build
(``docs/methods.md`` §1)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from bayeserr.base.errors import InputError, row_list, suggest
from bayeserr.data import lazy_dask
from bayeserr.data.memory import _check_cube_size

lazy_dask.install()  # xarray: no dask import to build a Dataset (lazy_dask)

#: column names that hold the run of an answer: suggested for --sample-col on duplicated rows
RUN_COLUMNS = ("run", "trial", "attempt", "epoch", "repeat", "seed", "rollout", "generation", "iteration", "sample_id",
               "sample_idx", "run_id", "run_idx", "trial_id", "trial_idx", "attempt_id", "epoch_id")

def _short(name: str, limit: int = 200) -> str:
    """A name cut for a message (a damaged name can be a megabyte long)."""
    return name if len(name) <= limit else name[:limit] + f"… ({len(name):,} characters)"


def _short_labels(labels, key: str, name: str, where) -> None:
    """Model names no longer than the log readers allow (every engine refuses the same names)."""
    from bayeserr.data.readers.values import MAX_TABLE_NAME_CHARS, long_name_error
    longest = max((len(str(x)) for x in labels), default=0)
    if longest > MAX_TABLE_NAME_CHARS:
        raise long_name_error(where, key, name, longest)


DEFAULT_COLUMNS = {
    "model": "model",
    "question": "question_id",
    "score": "score",
    "cluster": "cluster_id",
    "sample": "sample",
    "task": "task",
    "n_samples": "n_samples",
    "n_correct": "n_correct",
}
REQUIRED = ("model", "question", "score")


@dataclass(frozen=True)
class Columns:
    """Which input column holds each field (``None``: not used)."""

    model: str = "model"
    question: str = "question_id"
    score: str = "score"
    cluster: str | None = None
    sample: str | None = None
    n_samples: str | None = None  #: per-problem sample count (pass@k), optional
    n_correct: str | None = None  #: per-problem correct count (pass@k), optional
    task: str | None = None  #: the task of each question (a suite of tasks), optional
    human: str | None = None  #: a human label of each answer, in [0, 1] (NaN: unlabelled), optional

    def to_dict(self) -> dict:
        """The SPEC §6 ``columns`` object (the pass@k count columns are not part of it;
        ``task`` and ``human`` only when such a column is used)."""
        d = asdict(self)
        d.pop("n_samples")
        d.pop("n_correct")
        for key in ("task", "human"):
            if d[key] is None:
                d.pop(key)
        return d


@dataclass(frozen=True)
class RowAccount:
    """Rows read from the source, rows used, and rows dropped with a reason.

    With several inputs, ``inputs`` holds ``(input, RowAccount)`` for each of
    them (the totals are their sums); it is empty for one input, and then
    absent from :meth:`to_dict`.  ``notes`` are sentences about how the rows
    were read that drop no row (e.g. which metadata field of an Inspect log
    gave the clusters); absent from :meth:`to_dict` when there are none.
    """

    read: int
    used: int
    dropped: tuple[tuple[str, int], ...] = field(default=())
    inputs: tuple = field(default=())
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        out = {
            "read": self.read,
            "used": self.used,
            "dropped": [{"reason": r, "count": c} for r, c in self.dropped],
        }
        if self.inputs:
            out["inputs"] = [{"input": name, **acc.to_dict()} for name, acc in self.inputs]
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "RowAccount":
        return cls(d["read"], d["used"], tuple((x["reason"], x["count"]) for x in d["dropped"]),
                   tuple((x["input"], cls.from_dict(x)) for x in d.get("inputs", ())),
                   tuple(d.get("notes", ())))

    def drop(self, reason: str, count: int) -> "RowAccount":
        """A new account with ``count`` more rows dropped for ``reason``
        (a reason already listed adds to its count)."""
        if count == 0:
            return self
        dropped = dict(self.dropped)
        dropped[reason] = dropped.get(reason, 0) + count
        return RowAccount(self.read, self.used - count, tuple(dropped.items()), self.inputs, self.notes)

# ------------------------------------------------------------------ validation
class _Rows:
    """Where each row of the working table came from, for error messages:
    source row numbers (kept through ``models=`` selection) or, for eval
    logs, the file and member of each row."""

    def __init__(self, where: str, n: int, *, numbers=None, unit="data rows",
                 note=", counting from 1 after the header", origin=None):
        self.where = where
        self.numbers = np.arange(1, n + 1) if numbers is None else np.asarray(numbers)
        self.origin = None if origin is None else np.asarray(origin, dtype=object)
        self.unit, self.note = unit, note

    def keep(self, mask: np.ndarray) -> None:
        self.numbers = self.numbers[mask]
        if self.origin is not None:
            self.origin = self.origin[mask]

    def describe(self, positions: np.ndarray) -> str:
        if self.origin is not None:
            return row_list(self.origin[positions])
        return f"{self.unit} {row_list(self.numbers[positions])}{self.note}"


class _MultiRows:
    """Where each row of a table combined from several inputs came from: the
    input, and the place in it (as that input's :class:`_Rows` describes it)."""

    def __init__(self, where: str, parts: list, part_of_row: np.ndarray, local: np.ndarray):
        self.where = where
        self.parts = parts
        self.part_of_row = part_of_row
        self.local = local

    def keep(self, mask: np.ndarray) -> None:
        self.part_of_row = self.part_of_row[mask]
        self.local = self.local[mask]

    def describe(self, positions: np.ndarray) -> str:
        positions = np.asarray(positions)
        out = []
        for i in dict.fromkeys(self.part_of_row[positions].tolist()):
            rows = self.parts[i]
            text = rows.describe(self.local[positions[self.part_of_row[positions] == i]])
            out.append(text if rows.origin is not None else f"{rows.where} {text}")
        return "; ".join(out)


def resolve_columns(df: pd.DataFrame, where: str, *, model_col=None, question_col=None,
                    score_col=None, cluster_col=None, sample_col=None, task_col=None,
                    no_cluster: bool = False, human_col=None) -> Columns:
    """Map fields to columns: explicit names first, then the SPEC §1 defaults.

    Optional fields (cluster, sample, task) are used when their default column is
    present; ``no_cluster`` ignores a cluster column.  The human label column
    (``human_col``) is used only when named: it is never guessed.
    """
    given = {"model": model_col, "question": question_col, "score": score_col,
             "cluster": cluster_col, "sample": sample_col, "task": task_col, "n_samples": None,
             "n_correct": None}
    flags = {"model": "--model-col", "question": "--question-col", "score": "--score-col",
             "cluster": "--cluster-col", "sample": "--sample-col", "task": "--task-col",
             "n_samples": "n_samples", "n_correct": "n_correct"}
    present = [str(c) for c in df.columns]
    if not present:
        raise InputError(f"{where}: no columns at all. A results table needs the columns "
                         "model, question_id and score (one row per graded answer).")
    chosen = {}
    for key, default in DEFAULT_COLUMNS.items():
        name = given[key]
        if name is not None:
            if name not in present:
                raise InputError(
                    f"{where}: column '{name}' (from {flags[key]}) is not in the file."
                    f"{suggest(name, present)} Columns present: {', '.join(present)}."
                )
            chosen[key] = name
        elif default in present:
            chosen[key] = default
        elif key in REQUIRED:
            other = _other_kind(present)
            raise InputError(
                f"{where}: no '{default}' column for the {key}. "
                + (other or f"Name the column with {flags[key]}.{suggest(default, present)}")
                + f" Columns present: {', '.join(present)}."
            )
        else:
            chosen[key] = None
    if no_cluster:
        chosen["cluster"] = None
    if human_col is not None:
        if human_col not in present:
            raise InputError(
                f"{where}: column '{human_col}' (from --human-col) is not in the file."
                f"{suggest(human_col, present)} Columns present: {', '.join(present)}. The human "
                "labels are a column of the results (empty where an answer is not labelled); or give "
                "them in a table of their own with --labels FILE."
            )
        taken = {v: k for k, v in chosen.items() if v is not None}
        if human_col in taken:
            raise InputError(f"{where}: the column '{human_col}' is the {taken[human_col]} column; "
                             "--human-col must name another column (the human label of each answer).")
        chosen["human"] = human_col
    return Columns(**chosen)


def _other_kind(present) -> str:
    """The sentence that names the command for a file of another kind (pairwise votes, a task ×
    model summary) whose columns are not those of per-question results; "" otherwise."""
    cols = set(present)
    if {"model_a", "model_b"} <= cols and "winner" in cols:
        return ("This looks like pairwise votes (model_a, model_b, winner), not per-question results: "
                "rate them with `bayeserr arena FILE`.")
    if {"model", "task", "score"} <= cols and ("se" in cols or "n" in cols):
        return ("This looks like a task × model summary (a score and its SE or n per model and task), not "
                "per-question results: read it with `bayeserr tasks FILE`.")
    return ""


def _fail_rows(rows: _Rows, mask: np.ndarray, problem: str, fix: str) -> None:
    """Raise an InputError naming the source rows where ``mask`` holds."""
    if mask.any():
        positions = np.flatnonzero(mask)
        raise InputError(f"{rows.where}: {problem} in {len(positions)} row(s) "
                         f"({rows.describe(positions)}). {fix}")


#: what pandas' C type scan (``infer_dtype``) calls a column of plain text or real numbers
_PLAIN_KINDS = ("string", "integer", "integer-na", "floating", "decimal", "boolean", "empty")


def _may_hold_containers(col: pd.Series) -> bool:
    """An object column whose values are not all text or numbers (pandas' C type scan): only
    then are the rows looked at one by one (a 50M-row column of text is not)."""
    return col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) not in _PLAIN_KINDS


def _check_ids(df: pd.DataFrame, cols: Columns, rows: _Rows) -> None:
    for key in ("model", "question", "cluster", "sample", "task"):
        name = getattr(cols, key)
        if name is not None and _may_hold_containers(df[name]):  # a DataFrame's cell can hold anything
            _fail_rows(rows, df[name].map(lambda v: isinstance(v, (list, dict, set))).to_numpy(),
                       f"the {key} column '{name}' holds lists, dicts or sets",
                       f"An id is a single value (text or a number): flatten the {key} column.")
        if name is not None:
            _fail_rows(rows, df[name].isna().to_numpy(), f"the {key} column '{name}' is empty",
                       f"Fill in the {key} for those rows or remove them.")


def _real_column(raw: pd.Series, rows: _Rows, column: str, what: str) -> pd.Series:
    """``raw`` with booleans as 0.0/1.0; an :class:`InputError` naming ``column`` when it holds
    complex numbers (an object column is looked at value by value only if not plainly real)."""
    if raw.dtype == bool:
        return raw.astype(np.float64)
    if raw.dtype.kind == "c" or (raw.dtype == object
                                 and pd.api.types.infer_dtype(raw, skipna=True) not in _PLAIN_KINDS
                                 and raw.map(lambda v: isinstance(v, complex)).any()):
        raise InputError(f"{rows.where}: {column} holds complex numbers; {what} are real numbers in [0, 1].")
    return raw


def _validated_scores(df: pd.DataFrame, cols: Columns, rows: _Rows) -> np.ndarray:
    """The score column as float64, after the SPEC §1 score checks."""
    raw = df[cols.score]
    raw = _real_column(raw, rows, f"the score column '{cols.score}'", "scores")
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    missing = raw.isna().to_numpy()
    _fail_rows(rows, missing, f"the score column '{cols.score}' is missing",
               "Every answer needs a score in [0, 1]; fill them in or remove the rows.")
    _fail_rows(rows, np.isnan(values), f"the score column '{cols.score}' is not a number",
               "Scores must be numbers in [0, 1] (for example 0, 1 or 0.75).")
    _fail_rows(rows, np.isinf(values), f"the score column '{cols.score}' is infinite",
               "Scores must be finite numbers in [0, 1].")
    _fail_rows(rows, (values < 0) | (values > 1), f"the score column '{cols.score}' is outside [0, 1]",
               "Rescale scores to [0, 1] (for example divide percentages by 100).")
    return values


def _validated_labels(df: pd.DataFrame, column: str, rows: _Rows,
                      what: str = "human label") -> np.ndarray:
    """A human label column as float64, NaN where empty (an answer not labelled),
    after the score checks of SPEC §1 (numbers, finite, in [0, 1])."""
    raw = df[column]
    raw = _real_column(raw, rows, f"the {what} column '{column}'", "labels")
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    missing = raw.isna().to_numpy()
    _fail_rows(rows, np.isnan(values) & ~missing, f"the {what} column '{column}' is not a number",
               "Human labels are numbers in [0, 1] like scores (for example 0, 1 or 0.75), left empty "
               "where an answer is not labelled.")
    _fail_rows(rows, np.isinf(values), f"the {what} column '{column}' is infinite",
               "Human labels are finite numbers in [0, 1], left empty where an answer is not labelled.")
    _fail_rows(rows, (values < 0) | (values > 1), f"the {what} column '{column}' is outside [0, 1]",
               "Put human labels on the scale of the scores, [0, 1] (for example divide percentages by "
               "100).")
    return values


def _codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (order of first appearance) and the labels as strings.

    Ids are compared as text: values that print the same (the number ``1``
    and the string ``"1"``) get one code.
    """
    codes, uniques = pd.factorize(series, sort=False)
    labels = np.asarray(pd.Index(uniques).astype(str), dtype=object)
    if not pd.Index(labels).is_unique:
        merged, labels = pd.factorize(labels, sort=False)
        codes = merged[codes]
        labels = np.asarray(labels, dtype=object)
    return codes.astype(np.int64, copy=False), labels


def _question_labels(rows, cols, key, q_codes, n_questions, df) -> np.ndarray | None:
    """The cluster (``key="cluster"``) or task label of each question; error if a question has two."""
    column = getattr(cols, key)
    if column is None:
        return None
    codes, labels = _codes(df[column])
    of_question = np.empty(n_questions, dtype=np.int64)
    of_question[q_codes] = codes  # any one row's label per question
    fix = ("fix the cluster column or pass --no-cluster." if key == "cluster" else
           "give questions of different tasks different ids (e.g. prefix them with the task).")
    _fail_rows(rows, of_question[q_codes] != codes,
               f"a question is assigned to two different {key}s ('{column}')",
               f"Each question must belong to exactly one {key}; {fix}")
    return labels[of_question]


def check_min_questions(where, model_labels, n_answered, model_col: str = "model") -> None:
    """Every model needs two questions; the error names the models and the
    ``--where`` that leaves them out (so a folder with one broken run needs one
    option, not a list of every other model)."""
    bad = [(str(m), int(k)) for m, k in zip(model_labels, n_answered) if k < 2]
    if bad:
        few = [f"'{m}' ({k})" for m, k in bad]
        raise InputError(
            f"{where}: fewer than 2 questions for model(s) {', '.join(few[:5])}"
            f"{f' and {len(few) - 5} more' if len(few) > 5 else ''}. A standard error needs at least two "
            f"questions per model; add questions, or leave {'it' if len(bad) == 1 else 'them'} out with "
            f"{_exclude_models(model_col, [m for m, _ in bad])} (the rows removed are counted in the "
            "row accounting)."
        )


def _exclude_models(model_col: str, models: list[str]) -> str:
    """The ``--where`` option that removes ``models`` (``COL!=A,B``; commas escaped, shell-quoted)."""
    import shlex
    values = ",".join(m.replace(",", "\\,") for m in models)
    return f"--where {shlex.quote(f'{model_col}!={values}')}"


def _select_models(df, cols, models, rows, left_out=()) -> np.ndarray | None:
    """Which rows belong to ``models`` (compared as text); ``None``: all.  A model missing because
    its run was set aside (``left_out``: the readers' reasons, e.g. a partial Inspect run) is
    named with that reason."""
    if not models:
        return None
    codes, uniques = pd.factorize(df[cols.model], sort=False)
    labels = pd.Index(uniques).astype(str)
    present = list(dict.fromkeys(labels))
    for m in models:
        if m not in present:
            why = [r for r in left_out if f" with {m}: " in str(r)]
            if why:
                raise InputError(f"{rows.where}: model '{m}' has no run in the data: {why[0]}, left out. Re-run it "
                                 "to completion, or pass --partial-runs include (Python: partial_runs='include') to "
                                 "use the samples that finished.")
            raise InputError(f"{rows.where}: model '{_short(m)}' is not in the data.{suggest(m, present)} "
                             f"Models present: {', '.join(_short(p) for p in present[:20])}"
                             f"{' and more' if len(present) > 20 else ''}.")
    return np.append(np.asarray(labels.isin(list(models))), False)[codes]  # code -1 (empty): not kept

def _build_dataset(df, cols, scores, rows: _Rows, account, human=None) -> xr.Dataset:
    where = rows.where
    m_codes, m_labels = _codes(df[cols.model])
    _short_labels(m_labels, "model", cols.model, where)
    q_codes, q_labels = _codes(df[cols.question])
    if cols.sample is not None:
        s_codes, s_labels = _codes(df[cols.sample])
    else:
        s_codes, s_labels = np.zeros(len(df), dtype=np.int64), np.array(["0"], dtype=object)
    shape = (len(m_labels), len(q_labels), len(s_labels))
    _check_cube_size(where, shape)
    flat = (m_codes * shape[1] + q_codes) * shape[2] + s_codes
    cube = np.full(int(np.prod(shape)), np.nan)
    # duplicate cells: write each row's position, and see which rows were overwritten
    position = np.arange(len(flat), dtype=np.float64)
    cube[flat] = position
    lost = cube[flat] != position
    if lost.any():
        fields = f"({cols.model}, {cols.question}{', ' + cols.sample if cols.sample else ''})"
        runs = [c for c in df.columns if str(c).lower() in RUN_COLUMNS]
        fix = ((f"The column '{runs[0]}' looks like the run of each answer: --sample-col {runs[0]} (Python: "
                f"sample_col='{runs[0]}') reads the rows as repeated runs." if runs else
                "Give repeated answers distinct sample numbers with --sample-col, or remove the duplicates.")
               if cols.sample is None else "Remove the duplicated rows.")
        _fail_rows(rows, np.isin(flat, flat[lost]), f"duplicate {fields} rows", fix)
    del position, lost
    clusters = _question_labels(rows, cols, "cluster", q_codes, shape[1], df)
    tasks = _question_labels(rows, cols, "task", q_codes, shape[1], df)
    if tasks is not None:
        _short_labels(np.unique(np.asarray(tasks, dtype=str)), "task", cols.task, where)
    labels = None
    if human is not None:
        labels = np.full(int(np.prod(shape)), np.nan)
        labels[flat] = human
        labels = labels.reshape(shape)
    cube[flat] = scores
    cube = cube.reshape(shape)
    check_min_questions(where, m_labels, (~np.isnan(cube)).any(axis=2).sum(axis=1), cols.model)
    coords = {"model": m_labels, "question": q_labels, "sample": s_labels}
    if clusters is not None:
        coords["cluster"] = ("question", clusters)
    if tasks is not None:
        coords["task"] = ("question", tasks)
    ds = xr.Dataset({"score": (("model", "question", "sample"), cube)}, coords=coords)
    if labels is not None:
        ds["human"] = (("model", "question", "sample"), labels)
    if cols.n_samples and cols.n_correct:
        for key in ("n_samples", "n_correct"):
            grid = np.full(shape[:2], np.nan)
            grid[m_codes, q_codes] = pd.to_numeric(df[getattr(cols, key)], errors="coerce").to_numpy(float)
            ds[key] = (("model", "question"), grid)
        bad = (ds["n_correct"] > ds["n_samples"]) | (ds["n_correct"] < 0)
        if bool(bad.any()):
            raise InputError(f"{where}: n_correct is above n_samples or negative for some problems; "
                             "fix the counts.")
    ds.attrs.update(source=where, columns=cols.to_dict(), rows=account.to_dict(),
                    binary=bool(np.isin(scores, (0.0, 1.0)).all()))
    return ds


def rows_of(ds: xr.Dataset) -> RowAccount:
    """The row accounting carried by a loaded dataset."""
    return RowAccount.from_dict(ds.attrs["rows"])


def question_means(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Per-question means ``s_i`` over samples (SPEC §2) and answer counts ``K_i``.

    Returns arrays of shape ``(model, question)``; NaN / 0 where unanswered.
    """
    cube = ds["score"].values
    answered = ~np.isnan(cube)
    k = answered.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(answered, cube, 0.0).sum(axis=2) / k
    return s, k


def cluster_codes(ds: xr.Dataset) -> np.ndarray | None:
    """Integer cluster code per question, or ``None`` when unclustered."""
    if "cluster" not in ds.coords:
        return None
    return pd.factorize(ds["cluster"].values)[0].astype(np.int64)
