"""Reading one results table (CSV, TSV, JSONL, Parquet; gzip or not; a file,
a pipe or ``-``) into a DataFrame with identifier columns kept as text."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError, describe
from bayeserr.data.memory import _check_load_memory
from bayeserr.data.readers import TABLE_FORMATS, id_text

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
        if "://" in str(path):
            raise InputError(f"{path}: a URL; the default engine reads local files. --engine stream reads Parquet "
                             "from s3://, gs:// and http(s):// (or copy the file here).")
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


def _read_table(path, id_columns, *, fmt=None, check_columns=None, categorical=False, empty_only=()):
    """``(DataFrame, source line numbers or None, format, where)``; in CSV/TSV only an empty cell is
    missing in ``id_columns``, and only an empty cell or ``NA`` in ``empty_only`` (human labels: a
    ``nan``, ``null`` or ``None`` a program printed is not "not labelled")."""
    src = _Source.open(path)
    if fmt is None:
        fmt = _sniff(src.raw) if src.path is None else _format_of(src.path)
    if fmt not in TABLE_FORMATS:
        raise InputError(f"{src.where}: unknown table format '{fmt}'. Use one of {', '.join(TABLE_FORMATS)}.")
    lines = None
    _check_read_memory(src, fmt)
    try:
        if fmt in ("csv", "tsv"):
            df = _read_delimited(src, "," if fmt == "csv" else "\t", id_columns, check_columns, categorical,
                                 empty_only)
        elif fmt == "jsonl":
            df, lines = _read_jsonl(src, id_columns, categorical)
        else:
            _not_too_wide(src.where, _parquet_width(src))
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


#: the most bytes the header sniff reads: the header and as many of the first rows
#: as fit (a cell of any size, e.g. a long model output, is read whole by pandas)
HEAD_BYTES = 16 << 20


class _Bounded(io.RawIOBase):
    """The first ``limit`` bytes of a binary stream; ``cut`` once more were left."""

    def __init__(self, fh, limit: int):
        self.fh, self.left, self.cut = fh, limit, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.left <= 0:
            self.cut = self.cut or bool(self.fh.read(1))
            return 0
        data = self.fh.read(min(len(buffer), self.left))
        buffer[:len(data)] = data
        self.left -= len(data)
        return len(data)


def _head(src: _Source, sep: str, n_rows: int = 200,
          limit: int | None = None) -> tuple[list[str], list[list[str]]]:
    """The header fields (parsed as the CSV parser parses them) and the first
    rows, from at most ``limit`` bytes (:data:`HEAD_BYTES`): a row cut off by
    that limit is left out, so huge cells cost no more memory than that."""
    limit = HEAD_BYTES if limit is None else limit
    old = csv.field_size_limit()
    with src.binary() as fh:
        bounded = _Bounded(fh, limit)
        text = io.TextIOWrapper(io.BufferedReader(bounded), encoding="utf-8-sig", errors="replace",
                                newline="")
        rows = (row for row in csv.reader(text, delimiter=sep) if row)  # pandas skips blank lines
        try:
            csv.field_size_limit(max(old, limit + 1))  # the limit of the csv module is 128 KiB
            header = next(rows)
            first = [row for _, row in zip(range(n_rows + 1), rows)]
        except StopIteration:
            raise InputError(f"{src.where}: the file is empty (no header line). Check the file.") from None
        except csv.Error as exc:
            raise InputError(f"{src.where}: the first lines cannot be parsed ({exc}).") from None
        finally:
            csv.field_size_limit(old)
    if bounded.cut:
        if not first:  # the header itself may be cut off
            raise InputError(f"{src.where}: the header line is longer than {limit >> 10:,} KiB; "
                             "this is not a results table. Check the file and its --input-format.")
        first.pop()  # the row the limit cut off
    return header, first[:n_rows]


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


#: a results table with more columns than this is refused before parsing (a header of a million empty
#: columns took minutes to reach its error; a Parquet file of 100,000 columns filled 23 GB)
MAX_COLUMNS = 10_000


def _not_too_wide(where: str, columns: int) -> None:
    if columns > MAX_COLUMNS:
        raise InputError(f"{where}: {columns:,} columns, above the limit of {MAX_COLUMNS:,}; a results table has a "
                         "handful (model, question_id, score, …). Check the separator, or drop the columns the "
                         "results do not need.")


def _parquet_width(src) -> int:
    """A Parquet file's columns, from its schema (no data read); 0 when it cannot be read (the reader says why)."""
    try:
        import pyarrow.parquet as pq
        return len(pq.read_schema(src.parser_input()).names)
    except Exception:  # noqa: BLE001
        return 0


def _read_delimited(src: _Source, sep: str, id_columns, check_columns, categorical, empty_only=()) -> pd.DataFrame:
    """CSV/TSV in one pass, identifier columns read as text.

    The header is read first (a few bytes) so that a column named twice is
    caught before pandas renames the second copy to ``name.1``.
    """
    names, first = _head(src, sep)
    _not_too_wide(src.where, len(names))
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
    na = _na_values(names, first, ids)
    na.update({c: ["", "NA"] for c in empty_only if c in names and c not in ids})
    df = pd.read_csv(src.parser_input(), sep=sep, low_memory=False, compression=compression, dtype=dtype,
                     keep_default_na=False, na_values=na)
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
                           compression=compression, keep_default_na=False, na_values=na,
                           dtype=dict.fromkeys(numeric, object if categorical else str))
        for c in numeric:
            df[c] = text[c].astype("category") if categorical else text[c]
    return df


#: the cells pandas reads as missing by default ("", "NA", "null", "None", "NaN", "#N/A", ...)
try:
    from pandas._libs.parsers import STR_NA_VALUES as _PANDAS_NA
except ImportError:  # a private name: pandas' documented list
    _PANDAS_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                  "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
_DEFAULT_NA = frozenset(_PANDAS_NA)


def _na_values(names, first, ids) -> dict:
    """``na_values`` for ``pd.read_csv(keep_default_na=False)``: identifier
    columns (by name) are text, so only an empty cell is missing there (a
    model, question or cluster called ``NA``, ``None`` or ``null`` is one);
    every other column (by position, renamed or unnamed ones too) keeps
    pandas' default missing values, so scores still read ``NA`` as missing."""
    width = max([len(names)] + [len(r) for r in first]) + 1  # + 1: an index column pandas infers
    return {**{i: _DEFAULT_NA for i in range(width)}, **{c: [""] for c in ids}}


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
    _not_too_wide(src.where, max((len(r) for r in records), default=0))
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
