"""Loading and validating per-question results (SPEC §1).

A results table has one row per graded answer (``model``, ``question_id``,
``score`` and optionally ``cluster_id`` and ``sample``).  :func:`load` reads it
from CSV, TSV, JSONL or Parquet (gzip or not; a file, a pipe, or ``-`` for
standard input) or takes a DataFrame, checks every rule of SPEC §1 and returns
an :class:`xarray.Dataset`::

    score    (model, question, sample)  float, NaN where there is no answer
    cluster  (question)                 coordinate, when clusters are given

Several inputs (a list of paths, a glob pattern, ``{model: path}``) are read
one by one and combined into one table, as if their rows were one file;
``where=`` filters rows (:mod:`bayeserr.filters`) with the rows removed
counted as dropped.

Nothing is fixed silently: each rule that fails raises
:class:`~bayeserr.errors.InputError` naming the file, the rows and the fix.
Row numbers always refer to the rows of the source (data rows counting from 1
after the header; lines for JSONL; file and member for eval logs), also after
``models=`` has left rows out.  Row accounting (read / used / dropped with the
reason) travels in ``ds.attrs["rows"]`` and is printed by every report.

Identifiers (model, question, cluster, sample) are compared as text: the
number ``1`` and the string ``"1"`` (JSONL, Parquet, a DataFrame) are one id,
and ``007`` stays ``007`` (CSV/TSV identifier columns are read as text).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .errors import InputError, _row_list, describe, human_bytes, suggest
from .readers import TABLE_FORMATS, UnscoredLog, id_text

#: Largest dense score array ``models × questions × samples × 8 bytes`` that
#: :func:`load` allocates (also capped by the memory available at the time).
MAX_CUBE_BYTES = 8 << 30
#: Memory :func:`load` needs per input row, as ``(resident, address space)``
#: bytes: ``"read"`` while a CSV/TSV or Parquet file is parsed (the parser's
#: buffers and the table), ``"index"`` once it is read (integer codes of the
#: ids, the scores as float64, the validation masks), besides the score array
#: (8 bytes a cell).  Resident memory is compared with the memory available
#: (and a cgroup limit), address space with ``ulimit -v`` / ``ulimit -d``.
#: Measured on 4M and 10M-row Parquet and CSV files (int or text ids, with
#: and without clusters) as the growth of VmHWM and VmPeak over the phase and
#: the smallest RLIMIT_AS that loads: reading 45–88 resident and 26–126
#: address bytes a row, indexing 36–75 and 74–109 (the score array
#: included); a whole load of 10M rows peaks at about 80 resident bytes a row.
#: The figures below round those up.
LOAD_BYTES_PER_ROW = {"read": (90, 130), "index": (70, 110)}
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
    """Rows read from the source, rows used, and rows dropped with a reason.

    With several inputs, ``inputs`` holds ``(input, RowAccount)`` for each of
    them (the totals are their sums); it is empty for one input, and then
    absent from :meth:`to_dict`.
    """

    read: int
    used: int
    dropped: tuple[tuple[str, int], ...] = field(default=())
    inputs: tuple = field(default=())

    def to_dict(self) -> dict:
        out = {
            "read": self.read,
            "used": self.used,
            "dropped": [{"reason": r, "count": c} for r, c in self.dropped],
        }
        if self.inputs:
            out["inputs"] = [{"input": name, **acc.to_dict()} for name, acc in self.inputs]
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "RowAccount":
        return cls(d["read"], d["used"], tuple((x["reason"], x["count"]) for x in d["dropped"]),
                   tuple((x["input"], cls.from_dict(x)) for x in d.get("inputs", ())))

    def drop(self, reason: str, count: int) -> "RowAccount":
        """A new account with ``count`` more rows dropped for ``reason``
        (a reason already listed adds to its count)."""
        if count == 0:
            return self
        dropped = dict(self.dropped)
        dropped[reason] = dropped.get(reason, 0) + count
        return RowAccount(self.read, self.used - count, tuple(dropped.items()), self.inputs)


# --------------------------------------------------------------------- reading
_READERS = {".csv": "csv", ".tsv": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
            ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".gzip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _READERS:
        return _READERS[suffixes[-1]]
    raise InputError(
        f"{path}: cannot tell the format from the file name. Use one of "
        f"{', '.join(sorted(_READERS))} (optionally followed by .gz), or name the format "
        f"with --input-format ({', '.join(TABLE_FORMATS)})."
    )


def _sniff(raw: bytes) -> str:
    """The table format of bytes from standard input: Parquet by its magic
    number, JSONL when the first line is an object, TSV when the first line
    has tabs and no commas, else CSV."""
    if raw[:4] == b"PAR1":
        return "parquet"
    first = next((line for line in raw[:65536].splitlines() if line.strip()), b"").lstrip(b"\xef\xbb\xbf ")
    if first.startswith(b"{"):
        return "jsonl"
    if b"\t" in first and b"," not in first:
        return "tsv"
    return "csv"


def _stdin_bytes() -> bytes:
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    data = stream.read()
    return data.encode() if isinstance(data, str) else data


class _DuplicateKey(ValueError):
    def __init__(self, key):
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def _unique_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return obj


@dataclass
class _Source:
    """One input, read once: a regular file is handed to the parser by path,
    anything else (standard input, a pipe, a device) is read into memory."""

    where: str
    path: Path | None
    raw: bytes | None
    gzip: bool

    @classmethod
    def open(cls, path) -> "_Source":
        if str(path) == STDIN:
            return cls._from_bytes("standard input", None, _stdin_bytes())
        path = Path(path)
        if not path.exists():
            raise InputError(f"{path}: no such file. Check the path.")
        if path.is_dir():
            raise InputError(f"{path}: a folder, not a results file. Pass a results file, or a "
                             "folder of Inspect logs or lm-eval samples.")
        try:
            if path.is_file():
                with open(path, "rb") as fh:
                    return cls(str(path), path, None, fh.read(2) == _GZIP_MAGIC)
            return cls._from_bytes(str(path), path, path.read_bytes())  # a pipe: read it once
        except OSError as exc:
            raise InputError(f"{path}: cannot be read ({exc}).") from None

    @classmethod
    def _from_bytes(cls, where, path, raw) -> "_Source":
        if raw[:2] == _GZIP_MAGIC:
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, ValueError) as exc:
                raise InputError(f"{where}: damaged gzip data ({exc}).") from None
        return cls(where, path, raw, False)

    def binary(self):
        if self.raw is not None:
            return io.BytesIO(self.raw)
        return gzip.open(self.path, "rb") if self.gzip else open(self.path, "rb")

    def data(self) -> bytes:
        if self.raw is not None:
            return self.raw
        with self.binary() as fh:
            return fh.read()

    def parser_input(self):
        return io.BytesIO(self.raw) if self.raw is not None else self.path


def read_table(path: str | os.PathLike, id_columns=(), *, fmt: str | None = None,
               check_columns=None, categorical: bool = False) -> pd.DataFrame:
    """Read a results file into a DataFrame, picking the reader from the name.

    ``path`` may be ``"-"`` for standard input (format ``fmt`` or sniffed:
    Parquet, JSONL, TSV, else CSV) or a pipe; every input is read once.
    ``id_columns`` are read as text, so identifiers such as ``007`` keep their
    leading zeros and never merge with ``7`` (as ``category`` when
    ``categorical``, which takes a fraction of the memory).  A header that
    names a column twice is an error when the name is in ``check_columns``
    (``None``: any name), since a parser would silently rename the second.
    """
    return _read_table(path, id_columns, fmt=fmt, check_columns=check_columns,
                       categorical=categorical)[0]


def _read_table(path, id_columns, *, fmt=None, check_columns=None, categorical=False):
    """``(DataFrame, source line numbers or None, format, where)``."""
    src = _Source.open(path)
    if fmt is None:
        fmt = _sniff(src.raw) if src.path is None else _format_of(src.path)
    if fmt not in TABLE_FORMATS:
        raise InputError(f"{src.where}: unknown table format '{fmt}'. Use one of {', '.join(TABLE_FORMATS)}.")
    lines = None
    _check_read_memory(src, fmt)
    try:
        if fmt in ("csv", "tsv"):
            df = _read_delimited(src, "," if fmt == "csv" else "\t", id_columns, check_columns, categorical)
        elif fmt == "jsonl":
            df, lines = _read_jsonl(src, id_columns, categorical)
        else:
            df = pd.read_parquet(src.parser_input())
    except (InputError, MemoryError):  # MemoryError: the CLI says what ran out and what to do
        raise
    except Exception as exc:  # parser errors: report them as input errors
        if "out of memory" in str(exc):  # the C parser's own failure to allocate (a ParserError)
            raise MemoryError(f"reading {src.where}: {str(exc)[:200]}") from None
        fix = ("Save the file as UTF-8 text." if isinstance(exc, UnicodeError) else
               f"Check that it is a {fmt} file, or name its format with --input-format "
               f"({', '.join(TABLE_FORMATS)}).")
        raise InputError(f"{src.where}: could not be read as {fmt}: {str(exc)[:300]}. {fix}") from None
    _check_unique_columns(df, src.where, check_columns)
    return df, lines, fmt, src.where


def _head(src: _Source, sep: str, n_rows: int = 200) -> tuple[list[str], list[list[str]]]:
    """The header fields (parsed as the CSV parser parses them) and the first rows."""
    with src.binary() as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="replace", newline="")
        rows = (row for row in csv.reader(text, delimiter=sep) if row)  # pandas skips blank lines
        try:
            header = next(rows)
            first = [row for _, row in zip(range(n_rows), rows)]
        except StopIteration:
            raise InputError(f"{src.where}: the file is empty (no header line). Check the file.") from None
        except csv.Error as exc:
            raise InputError(f"{src.where}: the first lines cannot be parsed ({exc}).") from None
    return header, first


def _looks_numeric(values) -> bool:
    """Whether sample values of a column would be parsed as numbers."""
    seen = False
    for v in values:
        if v == "":
            continue
        try:
            float(v)
        except ValueError:
            return False
        seen = True
    return seen


def _duplicated(names, check_columns) -> list[str]:
    counts: dict = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n for n, c in counts.items() if c > 1 and str(n) != ""
            and (check_columns is None or n in check_columns)]


def _duplicate_error(where, dups, positions=None) -> InputError:
    where_cols = f" (columns {positions})" if positions else ""
    return InputError(f"{where}: the header names the column{'s' if len(dups) > 1 else ''} "
                      f"{', '.join(repr(str(d)) for d in dups)} more than once{where_cols}; a reader "
                      "would keep one and silently ignore the other. Rename or remove the extra column.")


def _check_unique_columns(df, where, check_columns=None) -> None:
    dups = _duplicated(list(df.columns), check_columns)
    if dups:
        raise _duplicate_error(where, dups)


def _read_delimited(src: _Source, sep: str, id_columns, check_columns, categorical) -> pd.DataFrame:
    """CSV/TSV in one pass, identifier columns read as text.

    The header is read first (a few bytes) so that a column named twice is
    caught before pandas renames the second copy to ``name.1``.
    """
    names, first = _head(src, sep)
    dups = _duplicated(names, check_columns)
    if dups:
        pos = "; ".join(f"'{d}' at " + ", ".join(str(i + 1) for i, n in enumerate(names) if n == d)
                        for d in dups)
        raise _duplicate_error(src.where, dups, pos)
    ids = [c for c in dict.fromkeys(id_columns) if c in names]
    compression = "gzip" if src.gzip else None
    dtype = None
    if categorical and ids:
        # number-looking ids (by the first rows) are read as text objects, the others as
        # categories (pandas >= 3 would give number-looking categories a numeric type)
        position = {n: i for i, n in reversed(list(enumerate(names)))}
        dtype = {c: object if _looks_numeric(r[position[c]] for r in first if len(r) > position[c])
                 else "category" for c in ids}
    df = pd.read_csv(src.parser_input(), sep=sep, low_memory=False, compression=compression, dtype=dtype)
    if dtype:
        for c in ids:
            if dtype[c] is object:
                df[c] = df[c].astype("category")
    # Identifier columns that still came out as numbers lost their text ("007" -> 7): parse
    # just those columns again as text, from the path or from the bytes already in memory
    # (a pipe is read once).
    numeric = [c for c in ids if not _is_text(df[c])]
    if numeric:
        text = pd.read_csv(src.parser_input(), sep=sep, usecols=numeric, low_memory=False,
                           compression=compression,
                           dtype=dict.fromkeys(numeric, object if categorical else str))
        for c in numeric:
            df[c] = text[c].astype("category") if categorical else text[c]
    return df


def _is_text(series: pd.Series) -> bool:
    """Whether an identifier column holds its values as text (or is all empty)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        return len(cats) == 0 or pd.api.types.is_string_dtype(cats.dtype) or cats.dtype == object
    return pd.api.types.is_string_dtype(dtype) or dtype == object


def _jsonl_records(src: _Source):
    """Records and their line numbers; each line must be one JSON object with
    no key twice.  Parsed in one call when the file is clean; line by line,
    to name the line, when it is not."""
    data = src.data()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    numbered = [(i, line) for i, line in enumerate(data.splitlines(), 1) if line.strip()]
    try:
        records = json.loads(b"[" + b",".join(line for _, line in numbered) + b"]",
                             object_pairs_hook=_unique_keys)
        if len(records) == len(numbered) and all(isinstance(r, dict) for r in records):
            return records, np.array([i for i, _ in numbered], dtype=np.int64)
    except (ValueError, RecursionError):
        pass
    records = []
    for i, line in numbered:
        where = f"{src.where}, line {i}"
        try:
            r = json.loads(line, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            raise InputError(f"{where}: the key '{exc.key}' appears twice in one record; a reader "
                             "would keep one value and silently drop the other. Remove the "
                             "duplicate key.") from None
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{where}: not valid JSON ({str(exc)[:200]}). Each line of a JSONL "
                             "file is one JSON object; fix or remove that line.") from None
        if not isinstance(r, dict):
            raise InputError(f"{where}: {describe(r)} rather than a JSON object. Each line of a "
                             "JSONL file is one object ({\"model\": ..., \"score\": ...}).")
        records.append(r)
    return records, np.array([i for i, _ in numbered], dtype=np.int64)


def _read_jsonl(src: _Source, id_columns, categorical):
    records, lines = _jsonl_records(src)
    df = pd.DataFrame(records)
    for c in dict.fromkeys(id_columns):
        if c not in df.columns:
            continue
        if pd.api.types.is_string_dtype(df[c].dtype) and df[c].dtype != object:
            text = df[c]  # every value a string (or missing) already
        else:  # numbers or a mix: as JSON writes them, so 1 and "1" are one id
            text = pd.Series([id_text(r.get(c)) for r in records], dtype=object, index=df.index)
        df[c] = text.astype("category") if categorical else text
    return df, lines


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
            return _row_list(self.origin[positions])
        return f"{self.unit} {_row_list(self.numbers[positions])}{self.note}"


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
            raise InputError(
                f"{where}: no '{default}' column for the {key}. Name the column with "
                f"{flags[key]}.{suggest(default, present)} Columns present: {', '.join(present)}."
            )
        else:
            chosen[key] = None
    if no_cluster:
        chosen["cluster"] = None
    return Columns(**chosen)


def _fail_rows(rows: _Rows, mask: np.ndarray, problem: str, fix: str) -> None:
    """Raise an InputError naming the source rows where ``mask`` holds."""
    if mask.any():
        positions = np.flatnonzero(mask)
        raise InputError(f"{rows.where}: {problem} in {len(positions)} row(s) "
                         f"({rows.describe(positions)}). {fix}")


def _check_ids(df: pd.DataFrame, cols: Columns, rows: _Rows) -> None:
    for key in ("model", "question", "cluster", "sample"):
        name = getattr(cols, key)
        if name is not None:
            _fail_rows(rows, df[name].isna().to_numpy(), f"the {key} column '{name}' is empty",
                       f"Fill in the {key} for those rows or remove them.")


def _validated_scores(df: pd.DataFrame, cols: Columns, rows: _Rows) -> np.ndarray:
    """The score column as float64, after the SPEC §1 score checks."""
    raw = df[cols.score]
    if raw.dtype == bool:
        raw = raw.astype(np.float64)
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


def _question_clusters(rows, cols, q_codes, n_questions, df) -> np.ndarray | None:
    """The cluster label of each question; error if a question has two."""
    if cols.cluster is None:
        return None
    c_codes, c_labels = _codes(df[cols.cluster])
    of_question = np.empty(n_questions, dtype=np.int64)
    of_question[q_codes] = c_codes  # any one row's cluster per question
    _fail_rows(rows, of_question[q_codes] != c_codes,
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


def _select_models(df, cols, models, rows) -> np.ndarray | None:
    """Which rows belong to ``models`` (compared as text); ``None``: all."""
    if not models:
        return None
    codes, uniques = pd.factorize(df[cols.model], sort=False)
    labels = pd.Index(uniques).astype(str)
    present = list(dict.fromkeys(labels))
    for m in models:
        if m not in present:
            raise InputError(f"{rows.where}: model '{m}' is not in the data.{suggest(m, present)} "
                             f"Models present: {', '.join(present[:20])}"
                             f"{' and more' if len(present) > 20 else ''}.")
    return np.append(np.asarray(labels.isin(list(models))), False)[codes]  # code -1 (empty): not kept


def _proc_field(path: str, key: str, scale: int = 1024) -> int | None:
    """``key: value`` of a /proc or cgroup file (``kB`` by default), or None."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key) and line[len(key)] in ": \t":
                    return int(line[len(key) + 1:].split()[0]) * scale
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as fh:
            text = fh.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _cgroup_headroom() -> int | None:
    """Memory left under this process's cgroup limit (v2 ``memory.max`` or v1
    ``memory.limit_in_bytes``; reclaimable page cache counted as free), or
    None without a limit."""
    try:
        with open("/proc/self/cgroup") as fh:
            entries = [line.rstrip("\n").split(":", 2) for line in fh]
    except OSError:
        return None
    for _, controllers, path in entries:
        v2 = controllers == ""
        if not v2 and "memory" not in controllers.split(","):
            continue
        root = "/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/memory"
        names = ("memory.max", "memory.current") if v2 else ("memory.limit_in_bytes", "memory.usage_in_bytes")
        for folder in dict.fromkeys((root + path.rstrip("/"), root)):  # as mounted in a container: the root
            limit, used = (_read_int(f"{folder}/{n}") for n in names)
            if limit is not None and used is not None:
                if limit >= 1 << 60:  # "no limit" in cgroup v1
                    break
                cache = _proc_field(f"{folder}/memory.stat", "inactive_file" if v2 else "total_inactive_file", 1)
                return max(limit - used + (cache or 0), 0)
    return None


def _memory_limits() -> list[tuple[int, str, int]]:
    """What limits the memory this process can still allocate, as
    ``(bytes left, what, kind)``; kind 0 counts resident memory (the memory
    available, a cgroup limit), kind 1 address space (``ulimit -v``, ``-d``)."""
    import resource
    out = []
    free = _proc_field("/proc/meminfo", "MemAvailable")
    if free is not None:
        out.append((free, "the memory available now", 0))
    cgroup = _cgroup_headroom()
    if cgroup is not None:
        out.append((cgroup, "the memory left under the container's limit (cgroup)", 0))
    for name, used, flag in (("RLIMIT_AS", "VmSize", "-v"), ("RLIMIT_DATA", "VmData", "-d")):
        try:
            limit = resource.getrlimit(getattr(resource, name))[0]
        except (AttributeError, OSError, ValueError):
            continue
        now = _proc_field("/proc/self/status", used)
        if limit != resource.RLIM_INFINITY and now is not None:
            out.append((max(limit - now, 0), f"the address space left under ulimit {flag} "
                                             f"(limit {human_bytes(limit)})", 1))
    return out


def _available_memory() -> int | None:
    """The least memory left under any limit (:func:`_memory_limits`), else None."""
    limits = _memory_limits()
    return min(left for left, _, _ in limits) if limits else None


def load_memory_estimate(rows: int, phase: str = "index", cube_cells: int | None = None) -> tuple[int, int]:
    """Peak memory (resident, address space) in bytes that :func:`load` needs
    for ``rows`` input rows in ``phase`` (``"read"`` or ``"index"``, see
    :data:`LOAD_BYTES_PER_ROW`); ``"index"`` adds the score array of
    ``cube_cells`` cells, at least one a row when not known yet."""
    resident, address = LOAD_BYTES_PER_ROW[phase]
    cube = 0 if phase == "read" else 8 * (rows if cube_cells is None else cube_cells)
    return rows * resident + cube, rows * address + cube


_MORE_MEMORY = "or run on a machine with more memory"


def _check_load_memory(where: str, rows: int, phase: str, *, estimated: bool = False) -> None:
    """Refuse, before allocating, to read or index ``rows`` rows when the
    estimate (:func:`load_memory_estimate`) exceeds a memory limit."""
    need = load_memory_estimate(rows, phase)
    for left, what, kind in _memory_limits():
        if need[kind] <= left:
            continue
        count = f"its rows (about {rows:,}, from the file size)" if estimated else f"its {rows:,} rows"
        per_row = LOAD_BYTES_PER_ROW[phase][kind]
        if phase == "read":
            doing = f"reading {count} needs about {human_bytes(need[kind])} ({per_row} bytes a row)"
            fix = ("--models and --where select rows only once the file is read: split the file (e.g. one "
                   f"file per model or task) and load the parts you need, {_MORE_MEMORY}.")
        else:
            doing = (f"indexing {count} needs about {human_bytes(need[kind])} ({per_row} bytes a row "
                     "and the score array, 8 bytes a row at least)")
            fix = ("Load fewer models (--models), fewer rows (--where, e.g. --where task=NAME), "
                   f"{_MORE_MEMORY}.")
        raise InputError(f"{where}: {doing}, more than {what}: {human_bytes(left)}. {fix}")


def _check_read_memory(src: _Source, fmt: str) -> None:
    """Before a Parquet or CSV/TSV file is parsed: its rows (from the Parquet
    metadata, or the size of a text file over the length of its first
    lines) against the memory left."""
    rows = None
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
            rows = pq.ParquetFile(src.parser_input()).metadata.num_rows
        except Exception:  # not Parquet after all: the reader says so
            return
    elif fmt in ("csv", "tsv") and not src.gzip:
        size = len(src.raw) if src.raw is not None else src.path.stat().st_size
        with src.binary() as fh:
            head = fh.read(1 << 16)
        lines = head.count(b"\n")
        rows = lines if size <= len(head) else size * lines // max(len(head), 1)
    if rows:
        _check_load_memory(src.where, int(rows), "read", estimated=fmt != "parquet")


def _check_cube_size(where, shape) -> None:
    """Refuse a dense score array larger than the limit before allocating it."""
    cells = int(shape[0]) * int(shape[1]) * int(shape[2])
    need = cells * 8
    limit, what = MAX_CUBE_BYTES, "the limit bayeserr.data.MAX_CUBE_BYTES"
    available = _available_memory()
    if available is not None and available < limit:
        limit, what = available, "the memory available now"
    if need > limit:
        raise InputError(
            f"{where}: the score array would need {human_bytes(need)} ({shape[0]:,} models × "
            f"{shape[1]:,} questions × {shape[2]:,} samples × 8 bytes), more than {what} "
            f"({human_bytes(limit)}). Load fewer models (--models), fewer samples per question, or "
            "split the file (e.g. by task); sample ids should count the repeats of one question "
            "(0..K-1), not number the rows.")


# ---------------------------------------------------------------------- public
_COLUMN_ARGS = {"model_col": "--model-col", "question_col": "--question-col", "score_col": "--score-col",
                "cluster_col": "--cluster-col", "sample_col": "--sample-col", "scorer": "--scorer",
                "cluster_field": "--cluster-field", "metric": "--metric", "filt": "--filter",
                "name": "name"}


def _check_arguments(args: dict) -> None:
    for key, flag in _COLUMN_ARGS.items():
        value = args[key]
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"{flag} takes a non-empty name (text); got {describe(value)}.")


def _model_list(models) -> list[str] | None:
    if models is None:
        return None
    if isinstance(models, str):
        return [models]
    try:
        items = list(models)
    except TypeError:
        raise InputError(f"models takes a list of model names; got {describe(models)}.") from None
    bad = [m for m in items if m is None or not isinstance(m, (str, int, np.integer))]
    if bad:
        raise InputError(f"models takes model names (text); got {describe(bad[0])} in the list.")
    return [str(m) for m in items]


def _dropped_list(dropped) -> list[tuple[str, int]]:
    try:
        out = [(str(r), int(c)) for r, c in dropped]
    except (TypeError, ValueError):
        raise InputError("dropped takes (reason, count) pairs, e.g. [('filtered out', 3)]; "
                         f"got {describe(dropped)}.") from None
    if any(c < 0 for _, c in out):
        raise InputError("dropped: a row count is negative.")
    return out


def _as_frame(source: pd.DataFrame, where: str) -> pd.DataFrame:
    """A DataFrame source with text column names (its own rows, untouched)."""
    if not all(isinstance(c, str) for c in source.columns):
        source = source.set_axis([str(c) for c in source.columns], axis=1)
    return source


def load(source, *, model_col=None, question_col=None, score_col=None, cluster_col=None,
         sample_col=None, no_cluster: bool = False, models=None, name: str | None = None,
         dropped=(), input_format: str = "auto", scorer=None, cluster_field=None, metric=None,
         filt=None, duplicate_runs: str = "error", where=None) -> xr.Dataset:
    """Read and validate per-answer results into an ``xarray.Dataset`` (SPEC §1).

    Parameters
    ----------
    source : path, ``"-"``, pandas.DataFrame, a list of them, or ``{model: path}``
        CSV, TSV, JSONL or Parquet file (``.gz`` allowed; a pipe works too),
        ``"-"`` for standard input, a file or folder of eval logs, or a
        DataFrame.  Every input is read once.  A path with ``*``, ``?`` or
        ``[`` that does not exist as written is a glob pattern (``**``
        recurses); it stands for the files it matches, in sorted order.
        **Several inputs** (a list, a pattern matching several files, a
        dict) are read one by one, each by its own reader, and combined
        into one table, exactly as if their rows were one file: questions
        pair by id (``task/id`` for eval logs, the question id for tables).
        A ``(model, question, sample)`` found in two inputs is an error
        naming both.  A dict ``{model: path}`` (or an item ``{model: path}``
        of a list) names the model of every row of that input: it supplies
        the model of a table with no model column and **overrides** the
        model an eval log names (an input holding several models cannot be
        named).  Column options apply to every table input; eval logs have
        their own columns.  The row accounting is kept per input too.
    model_col, question_col, score_col, cluster_col, sample_col : str, optional
        Column names; default to ``model``, ``question_id``, ``score``,
        ``cluster_id``, ``sample`` (the optional ones are used when present).
    no_cluster : bool
        Ignore a cluster column even when present.
    models : list of str, optional
        Keep only these models (the other rows are counted as dropped).
        Row numbers in error messages still refer to the source rows.
    name : str, optional
        What to call the input in messages and reports (default: its path).
    where : str or list of str, optional
        Row filters, all of which must hold (:mod:`bayeserr.filters`:
        ``col=value``, ``col=a,b``, ``col!=value``, ``col<N``, ``col<=N``,
        ``col>N``, ``col>=N``), applied before ``models``; the rows removed
        are counted as dropped under ``--where EXPR``.  Columns of tables,
        and for eval logs ``task``, ``model``, ``score``, ``sample`` and any
        Inspect sample metadata field (``subject`` or ``metadata.subject``).
    input_format : {"auto", "table", "inspect", "lm-eval", "csv", "tsv", "jsonl", "parquet"}
        Reader for eval logs (:mod:`bayeserr.readers`); ``auto`` picks from
        the path.  ``csv``/``tsv``/``jsonl``/``parquet`` name a table format
        (for ``"-"``, which is otherwise sniffed: Parquet, JSONL, TSV, else
        CSV).  ``scorer`` and ``cluster_field`` (Inspect), ``metric`` and
        ``filt`` (lm-eval) are passed to the reader.
    duplicate_runs : {"error", "latest"}
        Eval logs only: two runs of one task with the same model on the same
        samples (within one input, e.g. a folder) are an error naming the
        files, or (``"latest"``) the newest run is used and the older ones
        are counted as dropped.
    dropped : list of (reason, count)
        Rows a caller already removed, for the row accounting.

    Returns
    -------
    xarray.Dataset
        ``score`` on ``(model, question, sample)``, NaN where a model has no
        answer; ``cluster`` coordinate on ``question`` when clustered; attrs
        ``source``, ``inputs`` (the paths read), ``columns`` and ``rows``
        (the row accounting; with several inputs, ``rows["inputs"]`` holds
        each input's).

    Raises
    ------
    InputError
        For every problem with the input or the arguments (what, where, fix).
    """
    from .filters import apply_where, parse_where_list

    args = dict(model_col=model_col, question_col=question_col, score_col=score_col,
                cluster_col=cluster_col, sample_col=sample_col, scorer=scorer,
                cluster_field=cluster_field, metric=metric, filt=filt, name=name)
    _check_arguments(args)
    models = _model_list(models)
    dropped = _dropped_list(dropped)
    conditions = parse_where_list(where)
    fields = tuple(dict.fromkeys(c.column for c in conditions))
    inputs = _inputs(source)
    several = len(inputs) > 1
    parts, accounts = [], []  # accounts: (label, RowAccount or the index of its part), input order
    for i, inp in enumerate(inputs):
        try:
            parts.append(_read_input(inp, args, input_format, no_cluster, duplicate_runs, fields,
                                     None if several else name, several, i))
            accounts.append((parts[-1].label, len(parts) - 1))
        except UnscoredLog as exc:  # among several inputs, skipped and counted, as in a folder
            if not several:
                raise
            where = os.fspath(inp.source)
            accounts.append((where, RowAccount(exc.n_samples, 0, ((f"unscored log {Path(where).name}",
                                                                   exc.n_samples),))))
    if not parts:
        raise InputError(f"{_combined_label([a for a, _ in accounts])}: no scored samples in any "
                         "input. Score the logs (inspect score) first.")
    if several:
        label = name or _combined_label([a for a, _ in accounts])
        df, rows = _combine(parts, args, no_cluster, label)
        book = _Book(parts, accounts, rows.part_of_row, dropped)
    else:
        part = parts[0]
        df, rows, label = part.df, part.rows, part.label
        book = _Book(parts, accounts, None, dropped)
    cols = resolve_columns(df, label, model_col=model_col, question_col=question_col,
                           score_col=score_col, cluster_col=cluster_col,
                           sample_col=sample_col, no_cluster=no_cluster)
    _check_unique_columns(df, label, {c for c in asdict(cols).values() if c})
    if len(df) == 0:
        what = ("the DataFrame has no rows" if isinstance(parts[0].source, pd.DataFrame) and not several
                else "no data rows")
        raise InputError(f"{label}: {what}. A results table needs one row per graded answer.")
    if conditions:
        available = [f for p in parts for f in p.fields]
        _, drops = apply_where(df, conditions, where=label, available=available)
        keep = np.ones(len(df), dtype=bool)
        for reason, removed in drops:
            book.drop(reason, removed)
            keep &= ~removed
        df = _keep(df, keep, rows, book)
    keep = _select_models(df, cols, models, rows)
    if keep is not None:
        book.drop("model not selected", ~keep)
        df = _keep(df, keep, rows, book)
    df = df.reset_index(drop=True)
    _check_load_memory(label, len(df), "index")
    _check_ids(df, cols, rows)
    scores = _validated_scores(df, cols, rows)
    ds = _build_dataset(df, cols, scores, rows, book.account())
    ds.attrs["inputs"] = [os.fspath(i.source) for i in inputs if not isinstance(i.source, pd.DataFrame)]
    return ds


#: the columns every eval-log row has (others named by ``where`` are metadata fields)
_LOG_COLUMNS = frozenset({"model", "question_id", "score", "sample", "cluster_id", "task"})
_GLOB_CHARS = "*?["


def _keep(df, keep, rows, book):
    if keep.all():
        return df
    rows.keep(keep)
    book.keep(keep)
    return df[keep]


@dataclass
class _Input:
    source: object  #: a path (text or PathLike) or a DataFrame
    model: str | None = None  #: NAME of NAME=PATH: the model of every row


@dataclass
class _Part:
    """One input, read."""

    source: object
    df: pd.DataFrame
    rows: _Rows
    dropped: list
    label: str
    log: bool  #: read by an eval-log reader (fixed column names)
    path: str | None  #: the path read (None: a DataFrame)
    fields: list  #: eval logs: the metadata fields seen (for messages)

    def account(self) -> RowAccount:
        return RowAccount(len(self.df) + sum(c for _, c in self.dropped), len(self.df),
                          tuple(_merged(self.dropped)))


def _merged(dropped) -> list[tuple[str, int]]:
    out: dict = {}
    for reason, count in dropped:
        if count:
            out[reason] = out.get(reason, 0) + count
    return list(out.items())


class _Book:
    """The row accounting as rows are dropped: the total and, with several
    inputs, each input's (in the order given, inputs skipped included)."""

    def __init__(self, parts: list, accounts: list, part_of_row, dropped):
        self.labels = [label for label, _ in accounts]
        self.accounts = [parts[a].account() if isinstance(a, int) else a for _, a in accounts]
        self.index = np.array([i for i, (_, a) in enumerate(accounts) if isinstance(a, int)])
        self.part_of_row = part_of_row
        self.extra = list(dropped)  # rows the caller removed before load()

    def drop(self, reason: str, removed: np.ndarray) -> None:
        if self.part_of_row is None:
            self.accounts[0] = self.accounts[0].drop(reason, int(np.count_nonzero(removed)))
            return
        counts = np.bincount(self.part_of_row[removed], minlength=len(self.index))
        for i, c in zip(self.index, counts):
            self.accounts[i] = self.accounts[i].drop(reason, int(c))

    def keep(self, mask: np.ndarray) -> None:
        if self.part_of_row is not None:
            self.part_of_row = self.part_of_row[mask]

    def account(self) -> RowAccount:
        extra = sum(c for _, c in self.extra)
        dropped = _merged(self.extra + [d for a in self.accounts for d in a.dropped])
        total = RowAccount(sum(a.read for a in self.accounts) + extra,
                           sum(a.used for a in self.accounts), tuple(dropped))
        if self.part_of_row is None:
            return total
        return RowAccount(total.read, total.used, total.dropped, tuple(zip(self.labels, self.accounts)))


def _expand(source) -> list:
    """``source``, or the files a glob pattern matches (sorted)."""
    if isinstance(source, pd.DataFrame) or not isinstance(source, (str, os.PathLike)):
        return [source]
    text = os.fspath(source)
    if not isinstance(text, str) or text == STDIN or not any(ch in text for ch in _GLOB_CHARS) \
            or Path(text).exists():
        return [source]
    import glob
    matches = sorted(glob.glob(os.path.expanduser(text), recursive=True))
    if not matches:
        raise InputError(f"{text}: no file or folder matches this pattern. Check the path (quoted "
                         "patterns are expanded by bayeserr, unquoted ones by the shell).")
    return matches


def _inputs(source) -> list[_Input]:
    """The inputs named by ``source`` (see :func:`load`)."""
    def one(item, model=None):
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise InputError(f"a model name for an input must be non-empty text; got {describe(model)}.")
        if not isinstance(item, (str, os.PathLike, pd.DataFrame)):
            raise InputError(f"load() takes the path of a results file or folder of logs, '-' for "
                             f"standard input, a pandas DataFrame, a list of them or a dict "
                             f"{{model: path}}; got {describe(item)}.")
        return [_Input(s, model) for s in _expand(item)]

    if isinstance(source, dict):
        items = [one(path, model) for model, path in source.items()]
    elif isinstance(source, (list, tuple)):
        items = []
        for item in source:
            if isinstance(item, dict):
                items += [one(path, model) for model, path in item.items()]
            else:
                items.append(one(item))
    else:
        items = [one(source)]
    out = [inp for group in items for inp in group]
    if not out:
        raise InputError("load() needs at least one input (got an empty list).")
    seen: dict = {}
    for inp in out:
        if isinstance(inp.source, pd.DataFrame):
            continue
        text = os.fspath(inp.source)
        key = text if text == STDIN else os.path.realpath(text)
        if key in seen:
            raise InputError(f"{text}: given twice (also as {seen[key]}); every input is read once. "
                             "Remove the repeat (a pattern may already match it).")
        seen[key] = text
    return out


def _combined_label(labels: list[str]) -> str:
    if len(labels) <= 3:
        return " + ".join(labels)
    return f"{labels[0]} + {labels[1]} + … ({len(labels)} inputs)"


def _read_input(inp: _Input, args, input_format, no_cluster, duplicate_runs, fields, name,
                several: bool, index: int) -> _Part:
    source = inp.source
    if isinstance(source, pd.DataFrame):
        label = name or (f"DataFrame {index + 1}" if several else "DataFrame")
        df = _as_frame(source, label)
        part = _Part(source, df, _Rows(label, len(df), unit="rows", note=", positions counting from 1"),
                     [], label, False, None, [])
    else:
        path = os.fspath(source)
        if not isinstance(path, str) or not path.strip():
            raise InputError(f"load() needs the path of a results file (or '-' for standard input); "
                             f"got {describe(source)}.")
        df, rows, more, log, seen = _read_source(path, name, args, input_format, no_cluster,
                                                 duplicate_runs, fields)
        part = _Part(source, df, rows, more, rows.where, log, path, seen)
    if inp.model is not None:
        part.df = _name_model(part, inp.model, args)
    return part


def _name_model(part: _Part, model: str, args) -> pd.DataFrame:
    """The input's rows with ``model`` as the model of every row."""
    col = "model" if part.log else (args["model_col"] or DEFAULT_COLUMNS["model"])
    df = part.df
    if col in df.columns:
        present = [str(m) for m in pd.unique(df[col].dropna())]
        if len(present) > 1:
            shown = ", ".join(present[:5]) + (" and more" if len(present) > 5 else "")
            raise InputError(f"{part.label}: {model}={part.label} names the model of every row, but "
                             f"the input holds {len(present)} models ({shown}). Name only inputs of "
                             "one model, or drop the name and select models with --models.")
    df = df.copy(deep=False)
    df[col] = model
    return df


def _read_source(path, name, args, input_format, no_cluster, duplicate_runs, fields=()):
    """``(DataFrame, _Rows, dropped, read by a log reader, metadata fields seen)`` from a path or ``-``."""
    from .readers import read_logs

    logs = read_logs(path, input_format, scorer=args["scorer"], cluster_field=args["cluster_field"],
                     metric=args["metric"], filt=args["filt"], duplicate_runs=duplicate_runs,
                     fields=[f for f in fields if f not in _LOG_COLUMNS])
    if logs is not None:
        df, dropped = logs
        origin = df.attrs.pop("row_origin", None)  # first: pandas copies attrs on every operation
        seen = df.attrs.pop("fields", [])
        where = name or path
        return df, _Rows(where, len(df), origin=origin), list(dropped), True, list(seen)
    ids = [args[k] or DEFAULT_COLUMNS[f] for k, f in
           (("model_col", "model"), ("question_col", "question"), ("cluster_col", "cluster"))]
    used = set(ids) | {args["score_col"] or "score", args["sample_col"] or "sample",
                       DEFAULT_COLUMNS["n_samples"], DEFAULT_COLUMNS["n_correct"]} | set(fields)
    if no_cluster and not args["cluster_col"]:
        used.discard(DEFAULT_COLUMNS["cluster"])
    fmt = input_format if input_format in TABLE_FORMATS else None
    df, lines, fmt, where = _read_table(path, ids, fmt=fmt, check_columns=used, categorical=True)
    where = name or where
    if fmt == "jsonl":
        rows = _Rows(where, len(df), numbers=lines, unit="lines", note="")
    elif fmt == "parquet":
        rows = _Rows(where, len(df), note=", counting from 1")
    else:
        rows = _Rows(where, len(df))
    return df, rows, [], False, []


_FIELDS = ("model", "question", "score", "cluster", "sample")


def _combine(parts: list[_Part], args, no_cluster: bool, label: str):
    """One table from several inputs, as if their rows were one file.

    Each input's columns are resolved on their own (table inputs with the
    column options, eval logs with their fixed names) and renamed to the
    names the combined table uses (the column options, or the defaults).
    Inputs without a sample column get the first sample id of the others;
    inputs without clusters get each question's cluster from the other
    inputs.  A ``(model, question, sample)`` in two inputs is an error.
    """
    targets = {f: args[f"{f}_col"] or DEFAULT_COLUMNS[f] for f in _FIELDS}
    frames, resolved = [], []
    for p in parts:
        flags = {} if p.log else {f"{f}_col": args[f"{f}_col"] for f in _FIELDS}
        cols = resolve_columns(p.df, p.label, no_cluster=no_cluster, **flags)
        _check_unique_columns(p.df, p.label, {c for c in asdict(cols).values() if c})
        rename = {}
        for f in _FIELDS:
            c = getattr(cols, f)
            if c is not None and c != targets[f]:
                if targets[f] in p.df.columns:
                    raise InputError(f"{p.label}: the column '{c}' holds the {f}, and the column "
                                     f"'{targets[f]}' (the {f} of the other inputs) is there too; "
                                     "rename or remove one of them.")
                rename[c] = targets[f]
        frames.append(p.df.rename(columns=rename) if rename else p.df)
        resolved.append(cols)
    with_sample = [df[targets["sample"]] for df, c in zip(frames, resolved) if c.sample is not None]
    if with_sample and len(with_sample) < len(frames):
        fill = _first_sample(with_sample)
        frames = [df if c.sample is not None else df.assign(**{targets["sample"]: fill})
                  for df, c in zip(frames, resolved)]
    part_of_row = np.concatenate([np.full(len(df), i, dtype=np.int64) for i, df in enumerate(frames)])
    local = np.concatenate([np.arange(len(df), dtype=np.int64) for df in frames])
    rows = _MultiRows(label, [p.rows for p in parts], part_of_row, local)
    df = pd.concat(frames, ignore_index=True, sort=False)
    has_cluster = [c.cluster is not None for c in resolved]
    if any(has_cluster) and not all(has_cluster):
        df = _fill_clusters(df, targets, np.asarray(has_cluster)[part_of_row])
    _check_across_inputs(df, targets, bool(with_sample), rows, [p.label for p in parts])
    return df, rows


def _first_sample(columns):
    """The sample id inputs without a sample column get: the smallest of the others'."""
    values = pd.concat([c.dropna() for c in columns], ignore_index=True)
    numbers = pd.to_numeric(values, errors="coerce")
    if len(values) and numbers.notna().all():
        low = numbers.min()
        return int(low) if float(low).is_integer() else float(low)
    return values.iloc[0] if len(values) else 0


def _fill_clusters(df, targets, clustered_row: np.ndarray) -> pd.DataFrame:
    """Rows of inputs without clusters take their question's cluster from the other inputs."""
    cluster, question = targets["cluster"], targets["question"]
    values = df[cluster].astype(object)
    q_text = df[question].astype(str)
    known = clustered_row & values.notna().to_numpy()
    of_question = pd.Series(values[known].to_numpy(), index=q_text[known].to_numpy())
    of_question = of_question[~of_question.index.duplicated()]
    need = ~clustered_row
    values[need] = q_text[need].map(of_question).to_numpy()
    return df.assign(**{cluster: values})


def _check_across_inputs(df, targets, has_sample: bool, rows: _MultiRows, labels) -> None:
    """A ``(model, question, sample)`` in two inputs would count twice: an error naming both."""
    m, m_labels = _codes(df[targets["model"]])
    q, q_labels = _codes(df[targets["question"]])
    if has_sample:
        s, s_labels = _codes(df[targets["sample"]])
    else:
        s, s_labels = np.zeros(len(df), dtype=np.int64), np.array(["0"], dtype=object)
    valid = (m >= 0) & (q >= 0) & (s >= 0)
    key = (m * len(q_labels) + q) * max(len(s_labels), 1) + s
    part = rows.part_of_row
    idx = np.flatnonzero(valid)
    order = idx[np.lexsort((part[idx], key[idx]))]
    k, p = key[order], part[order]
    clash = np.flatnonzero((k[1:] == k[:-1]) & (p[1:] != p[:-1]))
    if not len(clash):
        return
    pick = clash[np.argmin(np.minimum(order[clash], order[clash + 1]))]  # the earliest row
    first, second = sorted((order[pick], order[pick + 1]))
    a, b = labels[part[first]], labels[part[second]]
    sample = f", sample {s_labels[s[first]]}" if has_sample else ""
    raise InputError(
        f"{a} and {b} both hold model '{m_labels[m[first]]}' on question '{q_labels[q[first]]}'"
        f"{sample} ({rows.describe(np.array([first, second]))}); {len(clash)} answer(s) are in two "
        "inputs and would count twice. Give each answer once: leave one input out. For re-runs of "
        "one evaluation, give their folder as one input (not a pattern of its files) with "
        "--duplicate-runs latest, which keeps the newest run.")


def _build_dataset(df, cols, scores, rows: _Rows, account) -> xr.Dataset:
    where = rows.where
    m_codes, m_labels = _codes(df[cols.model])
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
        fix = ("Give repeated answers distinct sample numbers with --sample-col, or remove the "
               "duplicates." if cols.sample is None else "Remove the duplicated rows.")
        _fail_rows(rows, np.isin(flat, flat[lost]), f"duplicate {fields} rows", fix)
    del position, lost
    clusters = _question_clusters(rows, cols, q_codes, shape[1], df)
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
