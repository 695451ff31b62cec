"""Loading and validating per-question results (SPEC §1).

A results table has one row per graded answer (``model``, ``question_id``,
``score`` and optionally ``cluster_id`` and ``sample``).  :func:`load` reads it
from CSV, TSV, JSONL or Parquet (gzip or not) or takes a DataFrame, checks
every rule of SPEC §1 and returns an :class:`xarray.Dataset`::

    score    (model, question, sample)  float, NaN where there is no answer
    cluster  (question)                 coordinate, when clusters are given

Nothing is fixed silently: each rule that fails raises
:class:`~bayeserr.errors.InputError` naming the file, the rows and the fix.
Row accounting (read / used / dropped with the reason) travels in
``ds.attrs["rows"]`` and is printed by every report.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .errors import InputError, _row_list, suggest

DEFAULT_COLUMNS = {
    "model": "model",
    "question": "question_id",
    "score": "score",
    "cluster": "cluster_id",
    "sample": "sample",
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

    def to_dict(self) -> dict:
        """The SPEC §6 ``columns`` object (the pass@k count columns are not part of it)."""
        d = asdict(self)
        d.pop("n_samples")
        d.pop("n_correct")
        return d


@dataclass(frozen=True)
class RowAccount:
    """Rows read from the source, rows used, and rows dropped with a reason."""

    read: int
    used: int
    dropped: tuple[tuple[str, int], ...] = field(default=())

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "used": self.used,
            "dropped": [{"reason": r, "count": c} for r, c in self.dropped],
        }

    def drop(self, reason: str, count: int) -> "RowAccount":
        """A new account with ``count`` more rows dropped for ``reason``."""
        if count == 0:
            return self
        return RowAccount(self.read, self.used - count, self.dropped + ((reason, count),))


# --------------------------------------------------------------------- reading
_READERS = {".csv": "csv", ".tsv": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
            ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".gzip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _READERS:
        return _READERS[suffixes[-1]]
    raise InputError(
        f"{path}: cannot tell the format from the file name. Use one of "
        f"{', '.join(sorted(_READERS))} (optionally followed by .gz)."
    )


def read_table(path: str | os.PathLike, id_columns=()) -> pd.DataFrame:
    """Read a results file into a DataFrame, picking the reader from the name.

    ``id_columns`` are read as text, so identifiers such as ``007`` keep their
    leading zeros and never merge with ``7``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file. Check the path.")
    fmt = _format_of(path)
    try:
        if fmt in ("csv", "tsv"):
            return _read_delimited(path, "," if fmt == "csv" else "\t", id_columns)
        if fmt == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_parquet(path)
    except InputError:
        raise
    except Exception as exc:  # parser errors: report them as input errors
        raise InputError(f"{path}: could not be read as {fmt}: {exc}") from None


def _read_delimited(path: Path, sep: str, id_columns) -> pd.DataFrame:
    """CSV/TSV with identifier columns kept as text.

    Reading every column with its inferred type is several times faster than
    forcing text; only identifier columns that were parsed as numbers are read
    a second time as text (so ``007`` stays ``007``).
    """
    df = pd.read_csv(path, sep=sep, low_memory=False)
    numeric = [c for c in id_columns if c in df.columns and pd.api.types.is_numeric_dtype(df[c])]
    if numeric:
        text = pd.read_csv(path, sep=sep, usecols=numeric, dtype=str, low_memory=False)
        df[numeric] = text[numeric]
    return df


# ------------------------------------------------------------------ validation
def resolve_columns(df: pd.DataFrame, where: str, *, model_col=None, question_col=None,
                    score_col=None, cluster_col=None, sample_col=None,
                    no_cluster: bool = False) -> Columns:
    """Map fields to columns: explicit names first, then the SPEC §1 defaults.

    Optional fields (cluster, sample) are used when their default column is
    present; ``no_cluster`` ignores a cluster column.
    """
    given = {"model": model_col, "question": question_col, "score": score_col,
             "cluster": cluster_col, "sample": sample_col, "n_samples": None, "n_correct": None}
    flags = {"model": "--model-col", "question": "--question-col", "score": "--score-col",
             "cluster": "--cluster-col", "sample": "--sample-col", "n_samples": "n_samples",
             "n_correct": "n_correct"}
    present = [str(c) for c in df.columns]
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
            raise InputError(
                f"{where}: no '{default}' column for the {key}. Name the column with "
                f"{flags[key]}.{suggest(default, present)} Columns present: {', '.join(present)}."
            )
        else:
            chosen[key] = None
    if no_cluster:
        chosen["cluster"] = None
    return Columns(**chosen)


def _fail_rows(where: str, mask: np.ndarray, problem: str, fix: str) -> None:
    """Raise an InputError naming the (1-based data) rows where ``mask`` holds."""
    if mask.any():
        rows = np.flatnonzero(mask) + 1
        raise InputError(
            f"{where}: {problem} in {len(rows)} row(s) (data rows {_row_list(rows)}, "
            f"counting from 1 after the header). {fix}"
        )


def _check_ids(df: pd.DataFrame, cols: Columns, where: str) -> None:
    for key in ("model", "question", "cluster", "sample"):
        name = getattr(cols, key)
        if name is not None:
            _fail_rows(where, df[name].isna().to_numpy(), f"the {key} column '{name}' is empty",
                       f"Fill in the {key} for those rows or remove them.")


def _validated_scores(df: pd.DataFrame, cols: Columns, where: str) -> np.ndarray:
    """The score column as float64, after the SPEC §1 score checks."""
    raw = df[cols.score]
    if raw.dtype == bool:
        raw = raw.astype(np.float64)
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    missing = raw.isna().to_numpy()
    _fail_rows(where, missing, f"the score column '{cols.score}' is missing",
               "Every answer needs a score in [0, 1]; fill them in or remove the rows.")
    _fail_rows(where, np.isnan(values), f"the score column '{cols.score}' is not a number",
               "Scores must be numbers in [0, 1] (for example 0, 1 or 0.75).")
    _fail_rows(where, np.isinf(values), f"the score column '{cols.score}' is infinite",
               "Scores must be finite numbers in [0, 1].")
    _fail_rows(where, (values < 0) | (values > 1), f"the score column '{cols.score}' is outside [0, 1]",
               "Rescale scores to [0, 1] (for example divide percentages by 100).")
    return values


def _codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (order of first appearance) and the labels as strings."""
    codes, uniques = pd.factorize(series, sort=False)
    return codes.astype(np.int64), np.asarray(pd.Index(uniques).astype(str), dtype=object)


def _check_duplicates(where, cols, flat_key, n_cells) -> np.ndarray:
    counts = np.bincount(flat_key, minlength=n_cells)
    dup = counts[flat_key] > 1
    fields = f"({cols.model}, {cols.question}{', ' + cols.sample if cols.sample else ''})"
    fix = ("Give repeated answers distinct sample numbers with --sample-col, or remove the "
           "duplicates." if cols.sample is None else "Remove the duplicated rows.")
    _fail_rows(where, dup, f"duplicate {fields} rows", fix)
    return counts


def _question_clusters(where, cols, q_codes, n_questions, df) -> np.ndarray | None:
    """The cluster label of each question; error if a question has two."""
    if cols.cluster is None:
        return None
    c_codes, c_labels = _codes(df[cols.cluster])
    of_question = np.empty(n_questions, dtype=np.int64)
    of_question[q_codes] = c_codes  # any one row's cluster per question
    _fail_rows(where, of_question[q_codes] != c_codes,
               f"a question is assigned to two different clusters ('{cols.cluster}')",
               "Each question must belong to exactly one cluster; fix the cluster column "
               "or pass --no-cluster.")
    return c_labels[of_question]


def _check_min_questions(where, model_labels, n_answered) -> None:
    few = [f"'{m}' ({k})" for m, k in zip(model_labels, n_answered) if k < 2]
    if few:
        raise InputError(
            f"{where}: fewer than 2 questions for model(s) {', '.join(few[:5])}"
            f"{' and more' if len(few) > 5 else ''}. A standard error needs at least two "
            "questions per model; add questions or leave those models out (--models)."
        )


def _select_models(df, cols, models, where, account):
    if not models:
        return df, account
    names = df[cols.model].astype(str)
    present = pd.unique(names)
    for m in models:
        if m not in set(present):
            raise InputError(f"{where}: model '{m}' is not in the data.{suggest(m, present)} "
                             f"Models present: {', '.join(map(str, present[:20]))}.")
    keep = names.isin(list(models)).to_numpy()
    return df.loc[keep], account.drop("model not selected", int((~keep).sum()))


# ---------------------------------------------------------------------- public
def load(source, *, model_col=None, question_col=None, score_col=None, cluster_col=None,
         sample_col=None, no_cluster: bool = False, models=None, name: str | None = None,
         dropped=(), input_format: str = "auto", scorer=None, cluster_field=None, metric=None,
         filt=None) -> xr.Dataset:
    """Read and validate per-answer results into an ``xarray.Dataset`` (SPEC §1).

    Parameters
    ----------
    source : path or pandas.DataFrame
        CSV, TSV, JSONL or Parquet file (``.gz`` allowed), or a DataFrame.
    model_col, question_col, score_col, cluster_col, sample_col : str, optional
        Column names; default to ``model``, ``question_id``, ``score``,
        ``cluster_id``, ``sample`` (the optional ones are used when present).
    no_cluster : bool
        Ignore a cluster column even when present.
    models : list of str, optional
        Keep only these models (the other rows are counted as dropped).
    input_format : {"auto", "table", "inspect", "lm-eval"}
        Reader for eval logs (:mod:`bayeserr.readers`); ``auto`` picks from
        the path.  ``scorer`` and ``cluster_field`` (Inspect), ``metric`` and
        ``filt`` (lm-eval) are passed to the reader.
    dropped : list of (reason, count)
        Rows a caller already removed, for the row accounting.

    Returns
    -------
    xarray.Dataset
        ``score`` on ``(model, question, sample)``, NaN where a model has no
        answer; ``cluster`` coordinate on ``question`` when clustered; attrs
        ``source``, ``columns`` and ``rows`` (the row accounting).
    """
    dropped = list(dropped)
    if isinstance(source, pd.DataFrame):
        df, where = source, name or "DataFrame"
    else:
        from .readers import read_logs
        where = name or str(source)
        logs = read_logs(source, input_format, scorer=scorer, cluster_field=cluster_field,
                         metric=metric, filt=filt)
        if logs is not None:
            df, more = logs
            dropped += more
        else:
            ids = [c for c in (model_col or "model", question_col or "question_id",
                               cluster_col or "cluster_id") if c]
            df = read_table(source, id_columns=ids)
    n_dropped = sum(c for _, c in dropped)
    account = RowAccount(read=len(df) + n_dropped, used=len(df),
                         dropped=tuple((r, c) for r, c in dropped if c))
    cols = resolve_columns(df, where, model_col=model_col, question_col=question_col,
                           score_col=score_col, cluster_col=cluster_col,
                           sample_col=sample_col, no_cluster=no_cluster)
    df, account = _select_models(df, cols, models, where, account)
    df = df.reset_index(drop=True)
    if len(df) == 0:
        raise InputError(f"{where}: the file has no data rows. Check the file.")
    _check_ids(df, cols, where)
    scores = _validated_scores(df, cols, where)
    return _build_dataset(df, cols, scores, where, account)


def _build_dataset(df, cols, scores, where, account) -> xr.Dataset:
    m_codes, m_labels = _codes(df[cols.model])
    q_codes, q_labels = _codes(df[cols.question])
    if cols.sample is not None:
        s_codes, s_labels = _codes(df[cols.sample])
    else:
        s_codes, s_labels = np.zeros(len(df), dtype=np.int64), np.array(["0"], dtype=object)
    shape = (len(m_labels), len(q_labels), len(s_labels))
    flat = (m_codes * shape[1] + q_codes) * shape[2] + s_codes
    _check_duplicates(where, cols, flat, int(np.prod(shape)))
    clusters = _question_clusters(where, cols, q_codes, shape[1], df)
    cube = np.full(int(np.prod(shape)), np.nan)
    cube[flat] = scores
    cube = cube.reshape(shape)
    _check_min_questions(where, m_labels, (~np.isnan(cube)).any(axis=2).sum(axis=1))
    coords = {"model": m_labels, "question": q_labels, "sample": s_labels}
    if clusters is not None:
        coords["cluster"] = ("question", clusters)
    ds = xr.Dataset({"score": (("model", "question", "sample"), cube)}, coords=coords)
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
    r = ds.attrs["rows"]
    return RowAccount(r["read"], r["used"], tuple((d["reason"], d["count"]) for d in r["dropped"]))


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
