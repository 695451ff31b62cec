"""Readers for real evaluation logs, so nobody converts by hand.

Each reader turns logs into the long results table of SPEC §1 (``model``,
``question_id``, ``score``, optional ``cluster_id`` and ``sample``) which
:func:`bayeserr.load` then validates like any other file.  Registered by
name in :data:`READERS`; :func:`detect` picks one from the path.

* ``inspect`` — Inspect AI logs: ``.eval`` archives (zip; deflate or the
  zstd compression newer Inspect writes) and ``.json`` logs, a file or a
  folder of them.  One row per sample and epoch (epoch = sample index);
  model from the log header; score from one scorer (default the first),
  with Inspect's value mapping (C = 1, I = 0, P = 0.5, N = 0, yes/true = 1,
  no/false = 0, numbers as they are); a metadata field as cluster: the one
  named (``--cluster-field``), else the one the logs' own metrics cluster by
  (``ci_clustered(cluster="repo")``, ``ci_hierarchical``, Inspect's
  ``stderr(cluster=...)``: :data:`CLUSTER_METRICS`, read from the log header),
  so the report's intervals are the log's; a note says which (see
  :func:`read_inspect`).  Every row carries the ``task``; sample metadata
  fields asked for by name (``fields``, e.g. the columns of ``--where``;
  ``metadata.x`` or ``x``, dotted paths into nested objects) become columns
  of their own.  ``human_scorer`` names a second scorer whose value is a
  human label of the answer (column ``human``, converted like the score;
  NaN where a sample has no score from it).

  **Question ids are always ``"<task>/<sample id>"``** (the task is the
  log header's ``eval.task``, e.g. ``popularity/3`` or
  ``inspect_evals/mmlu_0_shot/17``).  Inspect numbers the samples of every
  task from 1, so bare ids would "pair" sample 3 of one task with sample 3
  of another; namespaced ids pair models only on the same task, and models
  that share no task share no questions.  The ids do not depend on what
  else is in the folder.
* ``lm-eval`` — lm-evaluation-harness ``--log_samples`` output
  (``samples_<task>_<date>.jsonl``), a file or an output folder with one
  subfolder per model; question ids ``"<task>/<doc_id>"``, rows keyed on
  ``(doc_id, filter)``; one metric; every row carries the ``task`` (the leaf
  task); lm-eval's task groups (``group_subtasks`` of the ``results_*.json``
  beside the samples, with its published group scores) go to
  ``df.attrs["task_groups"]`` (see :func:`read_lmeval`).
* ``table`` — CSV / TSV / JSONL / Parquet results tables (the default);
  ``csv``, ``tsv``, ``jsonl`` and ``parquet`` name the table format
  explicitly (needed for standard input, ``-``, when sniffing is not enough).

**Re-runs.**  Two logs of the same task with the same model whose samples
overlap (same question and epoch) are two runs of one evaluation.  With
``duplicate_runs="error"`` (default) that is an error naming the files;
with ``duplicate_runs="latest"`` the newest run is kept (Inspect: header
``eval.created``; lm-eval: the date in the file name; ties broken by file
name), and every older run that overlaps a kept one is dropped whole and
counted in the row accounting with a reason naming its file and the run
kept; when the kept run lacks some of its samples (a newer partial re-run
over a complete run), the reason also gives each run's sample count and how
many samples are lost.  Logs of the same task and model on disjoint samples
(a run split in parts) are simply read together.  Unscored logs are set
aside first, so a crashed re-run never hides a finished one.

**Limits.**  Before anything is inflated, an ``.eval`` archive whose
central-directory entries overlap (two entries sharing compressed bytes: the
zip-bomb construction, never written by Inspect) is refused, and so are
members read that declare more than :data:`MAX_MEMBER_BYTES` each or
:data:`MAX_ARCHIVE_BYTES` together, a member over :data:`RATIO_FREE_BYTES`
that declares more than :data:`MAX_RATIO` times its compressed size, and
members that together declare more than :data:`MAX_RATIO` times the file's
size (beyond :data:`ARCHIVE_RATIO_FREE_BYTES`); real logs compress about 5:1.
Members are then stream-decompressed in 1 MiB steps and never inflate past
the size their entry declares (a zstd frame header that claims more is
ignored), and each is decoded to text and its bytes freed before the JSON is
parsed, so a member costs about twice its size in memory at its peak.  Model
and task names longer than :data:`MAX_NAME_CHARS` are refused (every row
carries them).  Damaged, encrypted or oddly compressed members, and malformed
samples, are :class:`~bayeserr.base.errors.InputError` naming the file and the
member (or line), never tracebacks.
"""

from __future__ import annotations

import json
import math
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from bayeserr.base.errors import InputError, describe, human_bytes, suggest

ZSTD_METHOD = 93  # zip compression method id of Zstandard
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", ZSTD_METHOD: "zstd"}
#: Largest decompressed size of one archive member (a header or one sample).
MAX_MEMBER_BYTES = 1 << 30
#: Largest total decompressed size read from one archive.
MAX_ARCHIVE_BYTES = 8 << 30
#: Largest compression ratio (declared size / compressed size) of a member over
#: :data:`RATIO_FREE_BYTES`, and of the members read from an archive together
#: (their declared sizes / the file's size) over :data:`ARCHIVE_RATIO_FREE_BYTES`.
#: Inspect's logs compress about 5:1 (10:1 for the most repetitive members);
#: deflate cannot pass about 1,030:1, zstd reaches 30,000:1 on filler.
MAX_RATIO = 1000
#: Members up to this size are not held to :data:`MAX_RATIO` (a small member of
#: repeated text may compress further, and costs little).
RATIO_FREE_BYTES = 4 << 20
#: Archives whose members read declare up to this much in total are not held to
#: :data:`MAX_RATIO` as a whole.
ARCHIVE_RATIO_FREE_BYTES = 64 << 20
#: Longest model or task name read from a log header (names are short
#: identifiers such as ``openai/gpt-4o``; every row carries them).
MAX_NAME_CHARS = 4096
#: zip local file header: fixed part (the name and extra field follow)
_LOCAL_HEADER = 30
_CHUNK = 1 << 20
DUPLICATE_RUNS = ("error", "latest")

# ------------------------------------------------------------------ Inspect AI
INSPECT_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
INSPECT_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def inspect_value_to_float(value, where: str, option: str = "--scorer") -> float:
    """Inspect's ``value_to_float``: letters C/I/P/N, yes/no, true/false,
    numbers and numeric strings.  Anything else is an error, not a silent 0;
    ``option`` is the flag the message suggests (``--scorer``, ``--human-scorer``)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # beyond 1.8e308: e.g. a 400-digit integer in the log
            raise InputError(f"{where}: score value {_big_int(value)} is too large to be a score (scores "
                             "are numbers in [0, 1]). Fix the scorer that wrote it, or pick another "
                             f"{option}.") from None
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text in INSPECT_LETTERS:
            return INSPECT_LETTERS[text]
        if text.lower() in INSPECT_WORDS:
            return INSPECT_WORDS[text.lower()]
        try:
            return float(text)
        except ValueError:
            pass
    raise InputError(f"{where}: score value {_short_repr(value)} is not one Inspect maps to a number "
                     f"(C, I, P, N, yes/no, true/false or a number). Pick another {option}.")


def _short_repr(value) -> str:
    try:
        return _shorten(repr(value), 200)
    except ValueError:  # an integer inside past sys.get_int_max_str_digits()
        return f"{type(value).__name__} (too large to show)"


def _big_int(value: int) -> str:
    """``1000000000…0000000000 (an integer of 400 digits)``: a huge integer for a message."""
    try:
        digits = str(value)
    except ValueError:  # past sys.get_int_max_str_digits()
        return f"(an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits)"
    sign, digits = ("-", digits[1:]) if digits.startswith("-") else ("", digits)
    return f"{sign}{digits[:10]}…{digits[-10:]} (an integer of {len(digits):,} digits)"


def id_text(value) -> str | None:
    """An identifier as text, the form in which ids are compared.

    Strings stay as they are; numbers are written as JSON writes them (``1``,
    ``1.5``), so the number ``1`` and the string ``"1"`` are one id; ``None``
    and NaN are missing (``None``); anything else is its JSON text.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return None if value != value else repr(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _question_key(task: str, sample_id) -> str:
    """The question id ``"<task>/<sample id>"`` of a log's sample.

    In the sample id, ``%`` is written ``%25`` and ``/`` is written ``%2F``, so
    the last ``/`` always separates task and id: task ``t`` with id ``x/1``
    (``t/x%2F1``) and task ``t/x`` with id ``1`` (``t/x/1``) are two
    questions.  Ids with neither character (nearly all) are unchanged.
    """
    sid = id_text(sample_id)
    if isinstance(sid, str) and ("/" in sid or "%" in sid):
        sid = sid.replace("%", "%25").replace("/", "%2F")
    return f"{task}/{sid}"


def _parse_json(data, where: str, fix: str):
    """JSON from text or bytes (``json.loads``), or a clear error."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else "not valid JSON"
        raise InputError(f"{where}: {reason} ({str(exc)[:200]}). {fix}") from None


def _text_of(data, where: str, fix: str) -> str:
    """Bytes decoded as ``json.loads`` decodes them (UTF-8, or UTF-16/32 by
    their first bytes).  Decoding first, as its own step, lets the caller drop
    the bytes before the JSON is parsed: the bytes, the text and the parsed
    objects are never all held at once."""
    try:
        return data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text ({str(exc)[:200]}). {fix}") from None


class _Compressed:
    """A file object's next ``n`` bytes, read in pieces (a member's compressed
    data, for zstd's streaming decompressor); ``short``: the file ended first."""

    def __init__(self, fh, n: int):
        self.fh, self.left, self.short = fh, n, False

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.fh.read(size) if size else b""
        self.left -= len(data)
        self.short = self.short or len(data) < size
        return data


class DamagedArchive(InputError):
    """An ``.eval`` archive that cannot be read as a zip, or a member that does
    not inflate to what its entry declares: damaged, or (a log being written)
    caught mid-write, so ``bayeserr watch --follow`` reads it again later."""


class _EvalArchive:
    """A ``.eval`` zip whose members are read with hard bounds: no overlapping
    entries, no member or archive past the size and ratio limits, and members
    stream-decompressed no further than they declare."""

    DAMAGED = "The archive is damaged (truncated or corrupted): copy it again or re-run the evaluation."
    BOMB = "Check where the file came from; raise the limit only if the log is genuine."

    def __init__(self, path: Path):
        self.path = path
        self.total = 0
        try:
            self.zip = zipfile.ZipFile(path)
            self.size = path.stat().st_size
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
                NotImplementedError, struct.error, UnicodeDecodeError) as exc:
            raise DamagedArchive(f"{path}: not a readable .eval archive (zip: {exc}). "
                             "Check the file; an .eval log is a zip archive.") from None
        try:
            self._check_overlaps()
        except InputError:
            self.zip.close()
            raise

    def close(self):
        self.zip.close()

    def _check_overlaps(self) -> None:
        """Refuse entries whose records (local header and compressed data) share
        bytes of the file: several entries pointing at one member's data, or
        Fifield's overlapping zip bomb, which turn a small file into gigabytes.
        From the central directory alone (no member is read); each record is
        taken at its smallest (30 bytes, the name, no extra field, no data
        descriptor), so no archive zipfile writes can be refused."""
        entries = sorted(self.zip.infolist(), key=lambda i: i.header_offset)
        last, end = None, -1
        for info in entries:
            if info.header_offset < end:
                raise InputError(
                    f"{self.path}: members '{last.filename}' and '{info.filename}' overlap (the archive's "
                    "directory points both at the same compressed bytes): a zip bomb or a damaged archive, "
                    "never a log Inspect writes; nothing was read from it. Check where the file came from, "
                    "or re-run the evaluation.")
            name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437", "replace")
            stop = info.header_offset + _LOCAL_HEADER + len(name) + info.compress_size
            if stop > end:
                last, end = info, stop

    def check(self, info: zipfile.ZipInfo) -> None:
        """The checks of a member that need no reading: encryption, compression
        method, declared size and compression ratio."""
        where = f"{self.path}, member {info.filename}"
        if info.flag_bits & 0x1:
            raise InputError(f"{where}: the member is encrypted; bayeserr reads unencrypted logs "
                             "only. Write the log without a password.")
        if info.compress_type not in ZIP_METHODS:
            raise InputError(
                f"{where}: compression method {info.compress_type} is not supported (Inspect "
                f"writes {', '.join(ZIP_METHODS.values())}). Rewrite the log with Inspect, e.g. "
                "`inspect log convert`.")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                f"{where}: declares {human_bytes(info.file_size)} uncompressed, above the limit of "
                f"{human_bytes(MAX_MEMBER_BYTES)} per member (bayeserr.data.readers.MAX_MEMBER_BYTES). "
                "No log sample is this large: check the file; raise the limit only if it is genuine.")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FREE_BYTES and ratio > MAX_RATIO:
            raise InputError(
                f"{where}: declares {human_bytes(info.file_size)} uncompressed from "
                f"{human_bytes(info.compress_size)}, a ratio of {ratio:,.0f}:1, above the limit of "
                f"{MAX_RATIO:,}:1 for members over {human_bytes(RATIO_FREE_BYTES)} (bayeserr.data.readers."
                "MAX_RATIO; logs compress about 5:1): a decompression bomb, not a log; nothing was inflated. "
                f"{self.BOMB}")

    def check_all(self, infos) -> None:
        """:meth:`check` each member to be read (in reading order), then their
        total: :data:`MAX_ARCHIVE_BYTES`, and :data:`MAX_RATIO` times the
        file's size; before anything is inflated."""
        total = self.total
        for info in infos:
            self.check(info)
            total += info.file_size
            if total > MAX_ARCHIVE_BYTES:
                raise self._archive_total(info)
        if total > ARCHIVE_RATIO_FREE_BYTES and total > MAX_RATIO * max(self.size, 1):
            raise InputError(
                f"{self.path}: the members read inflate to {human_bytes(total)} from a "
                f"{human_bytes(self.size)} file, more than {MAX_RATIO:,} times its size "
                "(bayeserr.data.readers.MAX_RATIO; logs compress about 5:1): a decompression bomb, not a "
                f"log; nothing was inflated. {self.BOMB}")

    def _archive_total(self, info) -> InputError:
        return InputError(
            f"{self.path}, member {info.filename}: the archive inflates past "
            f"{human_bytes(MAX_ARCHIVE_BYTES)} in total (bayeserr.data.readers.MAX_ARCHIVE_BYTES). Check the "
            "file; raise the limit only if it is genuine.")

    def read(self, info: zipfile.ZipInfo) -> bytearray:
        """The member's bytes, at most its declared size and the module limits."""
        where = f"{self.path}, member {info.filename}"
        self.check(info)
        if self.total + info.file_size > MAX_ARCHIVE_BYTES:
            raise self._archive_total(info)
        try:
            data = self._zstd(info, where) if info.compress_type == ZSTD_METHOD else self._plain(info, where)
        except InputError:
            raise
        except Exception as exc:  # zlib.error, BadZipFile (bad CRC), EOFError, ZstdError, OSError ...
            raise DamagedArchive(f"{where}: cannot be decompressed ({type(exc).__name__}: "
                             f"{str(exc)[:200]}). {self.DAMAGED}") from None
        if len(data) != info.file_size:
            raise DamagedArchive(f"{where}: inflates to {len(data)} bytes, not the {info.file_size} its "
                             f"entry declares. {self.DAMAGED}")
        self.total += len(data)
        return data

    def read_json(self, info: zipfile.ZipInfo, fix: str):
        """The member parsed as JSON; its bytes are freed once decoded."""
        where = f"{self.path}, member {info.filename}"
        text = _text_of(self.read(info), where, fix)  # the bytes are dropped when this returns
        return _parse_json(text, where, fix)

    def _too_big(self, info, where):
        return DamagedArchive(f"{where}: inflates past the {info.file_size} bytes its entry declares "
                          f"(a damaged archive or a decompression bomb); stopped reading. {self.DAMAGED}")

    def _plain(self, info, where) -> bytearray:
        buf = bytearray()
        with self.zip.open(info) as fh:  # deflate output per read is bounded; CRC checked at the end
            while chunk := fh.read(_CHUNK):
                buf += chunk
                if len(buf) > info.file_size:
                    raise self._too_big(info, where)
        return buf

    def _zstd(self, info, where) -> bytearray:
        """zstd members are decompressed here (Python's zipfile reads them only
        from 3.14 on), streamed from the file in 1 MiB steps with the declared
        size as a hard cap: a frame header that claims more content is not
        trusted, and neither the compressed nor the inflated data is held
        beyond the member's own bytes."""
        import zstandard
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL_HEADER)
            if len(header) < _LOCAL_HEADER or header[:4] != b"PK\x03\x04":
                raise DamagedArchive(f"{where}: bad local header. {self.DAMAGED}")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            fh.seek(info.header_offset + _LOCAL_HEADER + name_len + extra_len)
            source = _Compressed(fh, info.compress_size)
            reader = zstandard.ZstdDecompressor().stream_reader(source, read_size=_CHUNK,
                                                                read_across_frames=True)
            buf, crc = bytearray(), 0
            while chunk := reader.read(_CHUNK):
                buf += chunk
                if len(buf) > info.file_size:
                    raise self._too_big(info, where)
                crc = zlib.crc32(chunk, crc)
            if source.short:
                raise DamagedArchive(f"{where}: the compressed data is cut short. {self.DAMAGED}")
        if len(buf) == info.file_size and crc != info.CRC:
            raise DamagedArchive(f"{where}: bad CRC-32 (the data does not match its checksum). {self.DAMAGED}")
        return buf


#: the member an unfinished ``.eval`` has from its start (the run's ``eval`` header)
JOURNAL_START = "_journal/start.json"


def _is_sample_member(name: str) -> bool:
    return name.startswith("samples/") and name.endswith(".json")


def _eval_members(archive: _EvalArchive) -> tuple[dict, list]:
    """``{name: info}`` of the members used, and drops of duplicate sample members.

    Several members with one name: the last is used, as Python's ``zipfile`` and
    Inspect's own reader do (Inspect appends a sample again when a re-run of an
    eval set rewrites the log); the earlier copies are counted as dropped, as an
    identical copy or as one the later copy replaced."""
    groups: dict[str, list] = {}
    for info in archive.zip.infolist():
        groups.setdefault(info.filename, []).append(info)
    used, dropped = {}, []
    for name, infos in groups.items():
        if name not in ("header.json", JOURNAL_START) and not _is_sample_member(name):
            continue
        used[name] = infos[-1]
        if len(infos) > 1 and _is_sample_member(name):
            same = len({(i.CRC, i.file_size) for i in infos}) == 1
            why = "identical copy" if same else "an earlier copy, replaced by the last one, as Inspect reads it"
            dropped.append((f"duplicate archive member {name} in {archive.path.name} ({why})", len(infos) - 1))
    first = [n for n in ("header.json", JOURNAL_START) if n in used]
    archive.check_all([used[n] for n in first + sorted(n for n in used if _is_sample_member(n))])
    return used, dropped


@dataclass
class _Sample:
    """The few fields of an Inspect sample that are used."""

    id: object
    epoch: int
    scores: dict
    cluster: object
    origin: str
    extra: dict = field(default_factory=dict)  #: the metadata fields asked for (present ones)
    declared: dict = field(default_factory=dict)  #: values of the fields the log's metrics cluster by


#: at most this many metadata field names are collected for messages
MAX_FIELD_NAMES = 500


class _Fields:
    """Sample metadata fields asked for by column name (``x`` or ``metadata.x``,
    dotted paths into nested objects), and the names seen, for messages."""

    def __init__(self, names=()):
        self.names = tuple(names)
        self.paths = {n: n.removeprefix("metadata.") for n in self.names}
        self.seen: set = set()

    def read(self, meta) -> dict:
        if not self.names or not isinstance(meta, dict):
            return {}
        _flat_keys(meta, "", self.seen)
        out = {}
        for name, path in self.paths.items():
            value = _field(meta, path)
            if value is not None:
                out[name] = value if isinstance(value, (str, int, float, bool)) else id_text(value)
        return out


def _flat_keys(obj: dict, prefix: str, out: set) -> None:
    for k, v in obj.items():
        if len(out) >= MAX_FIELD_NAMES:
            return
        name = f"{prefix}{k}"
        out.add(name)
        if isinstance(v, dict):
            _flat_keys(v, name + ".", out)


def _sample(obj, where: str, origin: str, cluster_field, fields: _Fields | None = None,
            declared=()) -> _Sample:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: the sample is {describe(obj)}, not a JSON object. "
                         "The log is damaged; re-run the evaluation or leave this log out.")
    sid = obj.get("id")
    if isinstance(sid, bool) or not isinstance(sid, (int, str)) or sid == "":
        raise InputError(f"{where}: the sample id is {describe(sid)}; Inspect sample ids are "
                         "numbers or text. The log is damaged; re-run or leave it out.")
    epoch = obj.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        raise InputError(f"{where}: sample {sid} has epoch {describe(epoch)}; an epoch is a whole "
                         "number (1, 2, ...). The log is damaged; re-run or leave it out.")
    scores = obj.get("scores")
    if scores is not None and not isinstance(scores, dict):
        raise InputError(f"{where}: sample {sid} has 'scores' of {describe(scores)}, not an object "
                         "of scorer results. The log is damaged; re-run or leave it out.")
    meta = obj.get("metadata") or {}
    cluster = _field(meta, cluster_field) if cluster_field else None
    extra = fields.read(obj.get("metadata")) if fields is not None else {}
    values = {f: _field(meta, f) for f in declared}
    return _Sample(sid, epoch, scores or {}, cluster, origin, extra, values)


def _read_eval_archive(path: Path, label: str, cluster_field, fields=None,
                       auto: bool = False, in_progress: str = "exclude") -> tuple[dict, list, list]:
    archive = _EvalArchive(path)
    try:
        infos, dropped = _eval_members(archive)
        fix = "The log is damaged; re-run the evaluation or leave this log out."
        if "header.json" in infos:
            header = archive.read_json(infos["header.json"], fix)
        elif in_progress == "read" and JOURNAL_START in infos:
            header = _journal_header(archive, infos, fix)
        else:
            _unfinished_archive(archive, infos)
        declared = _all_declared(header) if auto else ()
        samples = []
        # in the order Inspect wrote them (the order the samples finished), not by name: a watched
        # run's sequence (bayeserr watch) takes the questions in the order they first appear
        for name in sorted((n for n in infos if _is_sample_member(n)), key=lambda n: infos[n].header_offset):
            obj = archive.read_json(infos[name], fix)
            samples.append(_sample(obj, f"{path}, member {name}", f"{label} {name}", cluster_field, fields,
                                   declared))
            del obj  # the sample's few fields are kept; its messages and events are freed now
    finally:
        archive.close()
    return header, samples, dropped


#: a header read from ``_journal/start.json`` (a run in progress) carries this key
IN_PROGRESS = "bayeserr_in_progress"
#: the words of the reader's note on runs in progress (``bayeserr watch`` repeats the note)
IN_PROGRESS_NOTE = "in progress, read from Inspect's journal"


def _journal_header(archive: _EvalArchive, infos: dict, fix: str) -> dict:
    """The header of a run in progress (``in_progress="read"``): Inspect writes
    ``_journal/start.json`` (the run's ``eval`` spec and plan) when the run
    starts and ``header.json`` only when it ends, so the task, model, scorers
    and planned samples come from the journal, the status is ``"started"``, and
    :data:`IN_PROGRESS` holds the samples written so far (and planned)."""
    start = archive.read_json(infos[JOURNAL_START], fix)
    ev = start.get("eval") if isinstance(start, dict) else None
    if not isinstance(ev, dict):
        raise InputError(f"{archive.path}, member {JOURNAL_START}: no 'eval' object (the run's spec); not "
                         f"an Inspect log, or a damaged one. {fix}")
    header = {"eval": ev, "status": "started"}
    header[IN_PROGRESS] = {"written": sum(1 for n in infos if _is_sample_member(n)),
                           "planned": _planned(header)}
    return header


#: the name bayeserr's Inspect early-stopping manager writes to ``results.early_stopping.manager``
STOPPING_MANAGER = "bayeserr/sequential_stopping"


def _manager_order(header: dict, samples: list) -> list:
    """The samples of a log stopped by bayeserr's early-stopping manager in the order
    they entered its sequence (``results.early_stopping.metadata.order``, first
    epochs), then the others in written order: the log is written in batches,
    and samples finishing together may be written in another order than the
    manager received them.  Other logs: unchanged."""
    stopping = _field(header, "results.early_stopping")
    if not isinstance(stopping, dict) or stopping.get("manager") != STOPPING_MANAGER:
        return samples
    order = _field(stopping, "metadata.order")
    if not isinstance(order, list) or not order:
        return samples
    rank = {sid: i for i, sid in enumerate(order) if isinstance(sid, str)}
    last = len(rank)
    keyed = [(rank.get(id_text(s.id), last) if s.epoch == 1 else last, i) for i, s in enumerate(samples)]
    return [samples[i] for _, i in sorted(keyed)]


#: the words every reader note on a run stopped early by a sequential rule holds
#: (:func:`bayeserr.registries.caveats.early_stopped` turns such notes into warnings)
EARLY_STOP_NOTE = "was stopped early by a sequential rule"


def _early_stop_text(header: dict, path: Path, task: str, model: str) -> str | None:
    """A note on a run that Inspect's early stopping ended before its last sample
    (``results.early_stopping`` with skipped samples, or bayeserr's manager's verdict
    ``stop``), or None: its fixed-n intervals and p-values ignore the optional stop, and
    the anytime-valid sequence the manager recorded (quoted) is the valid one."""
    stopping = _field(header, "results.early_stopping")
    if not isinstance(stopping, dict):
        return None
    meta = stopping.get("metadata") if isinstance(stopping.get("metadata"), dict) else {}
    skipped = stopping.get("early_stops")
    skipped = len(skipped) if isinstance(skipped, list) else 0
    ours = stopping.get("manager") == STOPPING_MANAGER
    if not skipped and not (ours and meta.get("decision") == "stop"):
        return None  # a manager that let the run finish
    manager = _text(stopping.get("manager"), "an early-stopping manager")
    stop = meta.get("stop") if isinstance(meta.get("stop"), dict) else {}
    planned = _field(meta, "samples.planned") or _field(header, "results.total_samples")
    ran = _field(header, "results.completed_samples")
    k = stop.get("t") if ours else ran
    when = (f"after {k:,} of its {planned:,} planned questions" if isinstance(k, int) and isinstance(planned, int)
            else f"after {k:,} questions" if isinstance(k, int) else "before its last question")
    extra = f" ({skipped:,} samples skipped)" if skipped else ""
    text = (f"{path.name} (task {task} with {model}) {EARLY_STOP_NOTE} ({manager}) {when}{extra}: the "
            "fixed-n intervals and p-values computed from it do not account for the data-dependent stop, so "
            "they are optimistic (a run stopped because a gap looked settled overstates it).")
    quoted = []
    level = meta.get("level")
    what = ("A − B" if meta.get("b") else "the mean score") if ours else None
    if ours and all(isinstance(stop.get(x), (int, float)) for x in ("lower", "upper", "t")):
        from bayeserr.base.formats import points  # watch's number format, as the log's sentence

        def fmt(x):
            return points(x, bool(meta.get("b")))
        quoted.append(f"[{fmt(stop['lower'])}, {fmt(stop['upper'])}] at the stop ({stop['t']:,} questions)")
        if all(isinstance(meta.get(x), (int, float)) for x in ("lower", "upper", "n_questions")):
            quoted.append(f"[{fmt(meta['lower'])}, {fmt(meta['upper'])}] over all {meta['n_questions']:,} "
                          "answers received")
    if quoted:
        lv = f"{level:.0%} " if isinstance(level, (int, float)) else ""
        text += (f" The anytime-valid {lv}confidence sequence the log records for {what} is the valid one: "
                 f"{' and '.join(quoted)} (results.early_stopping.metadata).")
    else:
        text += " The manager's own record (results.early_stopping) is the one to read for the stop."
    return text


def _in_progress_text(run) -> str:
    """``FILE (task T with M: k of n samples written so far)`` of a run in progress."""
    written, planned = run.in_progress["written"], run.in_progress["planned"]
    of = "" if planned is None else f" of {planned}"
    return (f"{run.file.name} (task {run.task} with {run.model}: {written}{of} "
            f"sample{'s' if written != 1 else ''} written so far)")


def _unfinished_archive(archive: _EvalArchive, infos: dict):
    """Raise for an ``.eval`` without ``header.json``: :class:`UnfinishedLog`
    (skipped in a folder) when Inspect's journal shows a run that started,
    else a plain error (not an Inspect log, or a damaged one)."""
    path = archive.path
    if JOURNAL_START not in infos:
        raise InputError(f"{path}: no header.json in the archive (nor Inspect's {JOURNAL_START}): not "
                         "an Inspect log, or a damaged one. Re-run the evaluation or leave this log out.")
    written = sum(1 for n in infos if _is_sample_member(n))
    start = None
    try:  # the run's task, model and planned samples, for the message (bounded like every member)
        start = archive.read_json(infos[JOURNAL_START], "")
    except InputError:
        pass
    ev = start.get("eval") if isinstance(start, dict) else None
    ev = ev if isinstance(ev, dict) else {}
    planned = _planned({"eval": ev})
    what = _run_name(ev, path)
    counts = f"{written}{'' if planned is None else f' of {planned}'} samples written"
    reason = f"run{what} in progress or interrupted: {path.name} (no header.json yet, {counts})"
    raise UnfinishedLog(
        f"{path}: no header.json in the archive: the run{what} is still in progress or was interrupted "
        f"before Inspect finished its log ({counts}). Wait for it to finish, or resume it (inspect "
        "eval-retry, or inspect eval-set on the same folder); in a folder of logs such a log is "
        "skipped and counted as dropped.", written, reason)


def _run_name(ev: dict, path: Path) -> str:
    """``" of TASK with MODEL"`` from a log's ``eval`` header (what is known of it)."""
    task, model = ev.get("task"), ev.get("model")
    out = f" of {_shorten(task, 200)}" if isinstance(task, str) and task else ""
    return out + (f" with {_shorten(model, 200)}" if isinstance(model, str) and model else "")


def _planned(header) -> int | None:
    """Samples the run planned (dataset samples × epochs), from the log header:
    ``results.total_samples``, else ``eval.dataset`` and ``eval.config``."""
    def count(v):
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    results = header.get("results") if isinstance(header, dict) else None
    if isinstance(results, dict) and count(results.get("total_samples")) is not None:
        return results["total_samples"]
    ev = header.get("eval") if isinstance(header, dict) else None
    ev = ev if isinstance(ev, dict) else {}
    ds = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    cfg = ev.get("config") if isinstance(ev.get("config"), dict) else {}
    epochs = count(cfg.get("epochs")) or 1
    if isinstance(ds.get("sample_ids"), list):
        return len(ds["sample_ids"]) * epochs
    n = count(ds.get("samples"))
    if n is None:
        return None
    limit = count(cfg.get("limit"))
    return (n if limit is None else min(n, limit)) * epochs


# -------------------------------------------------- what a folder holds besides logs
#: bytes read from the start of a ``.json`` file to tell a log from the other
#: JSON files a log folder holds (Inspect's manifests, bayeserr's own outputs)
PEEK_BYTES = 1 << 16
#: a larger ``logs.json`` manifest is recognised but not read for its list of logs
MAX_MANIFEST_BYTES = 64 << 20
MANIFEST = "Inspect's log-folder manifest"
_WS = re.compile(r"[ \t\n\r]*")
_OBJECT = object()  # an object value, not decoded


def _first_key(path: Path):
    """``(key, value)``: the first key of the JSON object the file starts with
    and its value (``_OBJECT`` for an object, ``None`` when it does not fit in
    :data:`PEEK_BYTES`); ``("", None)`` for ``{}``, ``(None, None)`` otherwise.
    Reads at most :data:`PEEK_BYTES`."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(PEEK_BYTES)
    except OSError:
        return None, None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    i = _WS.match(text, 0).end()
    if text[i:i + 1] != "{":
        return None, None
    i = _WS.match(text, i + 1).end()
    if text[i:i + 1] == "}":
        return "", None
    if text[i:i + 1] != '"':
        return None, None
    try:
        key, i = json.decoder.scanstring(text, i + 1)
    except ValueError:
        return None, None
    i = _WS.match(text, i).end()
    if text[i:i + 1] != ":":
        return None, None
    i = _WS.match(text, i + 1).end()
    if text[i:i + 1] == "{":
        return key, _OBJECT
    try:
        return key, json.JSONDecoder().raw_decode(text, i)[0]
    except (ValueError, RecursionError):
        return key, None


def _bayeserr_kind(schema) -> str | None:
    if isinstance(schema, str) and schema.startswith("bayeserr."):
        return f"bayeserr's own output, {schema[:60]}"
    return None


def _json_kind(path: Path) -> str | None:
    """What a ``.json`` file of a log folder is when it is recognisably not a
    log (Inspect's manifest or eval-set definition, a bayeserr report or
    ``--save-posterior`` index), from its first key; ``None``: read it as a log."""
    key, value = _first_key(path)
    if key == "schema":
        return _bayeserr_kind(value)
    if key == "posteriors" and path.name == "index.json":
        return "bayeserr's --save-posterior index"
    if key == "eval_set_id":
        return "Inspect's eval-set definition"
    if (key == "" and path.name == "logs.json") or (
            isinstance(key, str) and key.endswith((".eval", ".json")) and value is _OBJECT):
        return MANIFEST
    return None


def _object_kind(obj, path: Path) -> str | None:
    """:func:`_json_kind` for a parsed JSON value that has no ``eval`` header."""
    if not isinstance(obj, dict):
        return None
    if _bayeserr_kind(obj.get("schema")):
        return _bayeserr_kind(obj.get("schema"))
    if "posteriors" in obj and path.name == "index.json":
        return "bayeserr's --save-posterior index"
    if "eval_set_id" in obj and "tasks" in obj:
        return "Inspect's eval-set definition"
    if (not obj and path.name == "logs.json") or (obj and all(
            isinstance(k, str) and k.endswith((".eval", ".json")) and isinstance(v, dict) and "eval" in v
            for k, v in obj.items())):
        return MANIFEST
    return None


def _manifest_notes(manifests: list[Path], logs: list[Path], root: Path) -> list[str]:
    """Notes from Inspect's ``logs.json`` manifests: the logs a manifest lists
    that are not in the folder (moved or deleted since Inspect wrote it)."""
    notes = []
    present = {str(f.relative_to(root)).replace("\\", "/") for f in logs}
    for m in manifests:
        try:
            if m.stat().st_size > MAX_MANIFEST_BYTES:
                continue
            listed = json.loads(m.read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(listed, dict):
            continue
        base = m.parent.relative_to(root)
        prefix = "" if str(base) == "." else str(base).replace("\\", "/") + "/"
        missing = [k for k in listed if isinstance(k, str) and prefix + k not in present]
        if missing:
            notes.append(f"{_label(m, root)} ({MANIFEST}) lists {_n(len(listed), 'log')}, "
                         f"{len(missing)} of them not in the folder ({_shown_files(missing)}): moved or "
                         "deleted since Inspect wrote it; the report covers the logs present.")
    return notes


class NotALog(InputError):
    """A JSON file that is recognisably not an Inspect log (Inspect's manifest,
    a bayeserr report ...): skipped, with a note, in a folder of logs."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def _read_json_log(path: Path, label: str, cluster_field, fields=None,
                   auto: bool = False) -> tuple[dict, list, list]:
    fix = "Check the file; an Inspect .json log is one JSON object."
    try:
        text = _text_of(path.read_bytes(), str(path), fix)  # the bytes are dropped before parsing
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc}).") from None
    log = _parse_json(text, str(path), fix)
    del text
    if not isinstance(log, dict) or "eval" not in log:
        kind = _object_kind(log, path)
        if kind:
            raise NotALog(f"{path}: {kind}, not an Inspect log. Pass the folder of logs, or a log "
                          "file.", kind)
        raise InputError(f"{path}: not an Inspect log (no 'eval' header). In a folder of logs, move "
                         "it out of the folder, or pass the log files themselves (e.g. 'logs/*.eval').")
    raw = log.get("samples") or []
    if not isinstance(raw, list):
        raise InputError(f"{path}: 'samples' is {describe(raw)}, not a list of samples. "
                         "The log is damaged; re-run the evaluation or leave it out.")
    declared = _all_declared(log) if auto else ()
    samples = [_sample(s, f"{path}, samples[{i}]", f"{label} samples[{i}]", cluster_field, fields, declared)
               for i, s in enumerate(raw)]
    return log, samples, []


#: Inspect metrics that cluster by the sample metadata field their ``cluster`` option
#: names, and the packages they come from (``""``: a bare name, as Inspect records a
#: metric run from a source tree): bayeserr's (:mod:`bayeserr.integrations.inspect_metrics`)
#: and Inspect's own ``stderr(cluster=...)``.
CLUSTER_METRICS = {"ci_clustered": ("bayeserr", ""), "ci_hierarchical": ("bayeserr", ""),
                   "stderr": ("inspect_ai",)}


def _metric_defs(metrics) -> list:
    """The metric definitions (``{"name", "options"}``) of a log header's
    ``metrics``: a list, or a mapping of score keys to lists."""
    if isinstance(metrics, dict):
        metrics = [d for v in metrics.values() for d in (v if isinstance(v, list) else [v])]
    return [d for d in metrics if isinstance(d, dict)] if isinstance(metrics, list) else []


def _cluster_metrics(header, scorer: str | None = None) -> dict[str, list[str]]:
    """``{field: ["ci_clustered(cluster='field')", ...]}``: the metadata fields the
    log's metrics cluster by (:data:`CLUSTER_METRICS`), from the header's task
    metrics and those of the scorer ``scorer`` (``None``: every scorer)."""
    ev = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(ev, dict):
        return {}
    defs = _metric_defs(ev.get("metrics"))
    scorers = ev.get("scorers")
    for entry in scorers if isinstance(scorers, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and (scorer is None or scorer in (name, name.rpartition("/")[2])):
            defs += _metric_defs(entry.get("metrics"))
    out: dict[str, list[str]] = {}
    for d in defs:
        name, options = d.get("name"), d.get("options")
        if not isinstance(name, str) or not isinstance(options, dict):
            continue
        package, _, short = name.rpartition("/")
        cluster = options.get("cluster")
        if package in CLUSTER_METRICS.get(short, ()) and isinstance(cluster, str) and cluster.strip():
            labels = out.setdefault(cluster, [])
            label = f"{short}(cluster='{cluster}')"
            if label not in labels:
                labels.append(label)
    return out


def _all_declared(header) -> tuple:
    """Every field some metric of the log clusters by (any scorer)."""
    return tuple(_cluster_metrics(header))


def _field(obj, dotted: str):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _text(value, default: str) -> str:
    return default if value is None or value == "" else str(value)


def _name(name: str, what: str, path: Path) -> str:
    """A model or task name, refused past :data:`MAX_NAME_CHARS` (every row
    carries it: a 1 MB name costs a megabyte a row and minutes downstream)."""
    if len(name) > MAX_NAME_CHARS:
        raise InputError(
            f"{path}: {what} is {len(name):,} characters long, above the limit of {MAX_NAME_CHARS:,} "
            "(bayeserr.data.readers.MAX_NAME_CHARS); names are short identifiers such as 'openai/gpt-4o', so "
            f"this one is damaged or was edited ({_shorten(name, 40)}). Fix the name in the log, or leave "
            "the log out.")
    return name


@dataclass
class _Run:
    """One log file read: its rows, where each came from, and what identifies the run."""

    file: Path
    task: str
    model: str
    when: object
    rows: list = field(default_factory=list)
    origin: list = field(default_factory=list)
    n_read: int = 0  # rows of the source this file accounts for
    dropped: list = field(default_factory=list)
    declared: dict = field(default_factory=dict)  #: {field: [metric]}: what the log's metrics cluster by
    values: list = field(default_factory=list)  #: per row, the values of the declared fields
    status: object = None  #: Inspect: the header's status ("success", "cancelled", "error", "started")
    planned: int | None = None  #: Inspect: samples the run planned (samples × epochs), when known
    scored: int = 0  #: Inspect: samples with a score
    scorers: list = field(default_factory=list)  #: Inspect: the scorers of the samples, in order
    labelled: int = 0  #: Inspect, with ``human_scorer``: rows with a human label
    in_progress: dict | None = None  #: Inspect, a run in progress read: {"written", "planned"}
    stopped: str | None = None  #: Inspect: the note on a run stopped early by a sequential rule

    def keys(self) -> set:
        return {(r["question_id"], r.get("sample", 0)) for r in self.rows}


def _created(value, path: Path):
    """A sortable time from Inspect's ``eval.created``; the file's mtime if missing."""
    try:
        t = datetime.fromisoformat(str(value))
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)


def _inspect_run(path: Path, label: str, scorer, cluster_field, fields=None, auto: bool = False,
                 why: str = "for --cluster-field.", human_scorer: str | None = None,
                 in_progress: str = "exclude") -> _Run:
    """One log's rows.  ``auto``: also the values of the metadata fields the
    log's metrics cluster by (``run.values``), to cluster by them by default;
    ``why`` ends the message for a sample without ``cluster_field``.
    ``human_scorer``: every row gets ``human``, the value of that scorer
    (NaN when the sample has none), and the score's default scorer is the
    first other one.  ``in_progress="read"``: an ``.eval`` of a run in progress
    (no ``header.json`` yet) is read from Inspect's journal (``run.in_progress``)."""
    if path.suffix == ".eval":
        header, samples, dropped = _read_eval_archive(path, label, cluster_field, fields, auto, in_progress)
    else:
        header, samples, dropped = _read_json_log(path, label, cluster_field, fields, auto)
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise InputError(f"{path}: the log header has no 'eval' object; not an Inspect log, or a "
                         "damaged one. Re-run the evaluation or leave this log out.")
    status = header.get("status")
    model = _name(_text(header["eval"].get("model"), "unknown-model"), "the log header's eval.model", path)
    task = _name(_text(header["eval"].get("task"), path.stem), "the log header's eval.task", path)
    running = header.get(IN_PROGRESS)
    if in_progress == "read":
        samples = _manager_order(header, samples)
    if not samples and running is not None:
        planned = "" if running["planned"] is None else f" of the {running['planned']} planned"
        raise UnfinishedLog(f"{path}: the run of task {task} with {model} is in progress and has written no "
                            f"sample yet (none{planned}; Inspect writes them in batches as they finish). "
                            "Read it again later (bayeserr watch --follow does).", 0,
                            f"run in progress, no sample written yet: {path.name}")
    if not samples:
        raise InputError(f"{path}: the log has no samples (status: {status}). "
                         "The run may be unfinished; re-run it or drop this log.")
    scored = [s for s in samples if s.scores]
    if not scored:
        raise UnscoredLog(f"{path}: none of its {len(samples)} samples has a score (status: "
                          f"{status}): the run looks unfinished or was never scored. "
                          "Score it (inspect score) or leave this log out.", len(samples),
                          None if status in (None, "success") else
                          f"unscored log {path.name} (status {_status_text(status)})")
    names = list(dict.fromkeys(k for s in scored for k in s.scores))
    name = scorer or names[0]
    if human_scorer is not None and scorer is None:
        name = next((n for n in names if n != human_scorer), None)
        if name is None:
            raise InputError(f"{path}: the samples are scored by '{human_scorer}' only, the scorer of the "
                             "human labels (--human-scorer); the judge's score comes from another scorer. "
                             "Score the log with the judge too, or name it with --scorer.")
    run = _Run(path, task, model, _created(header["eval"].get("created"), path),
               n_read=len(samples) + sum(c for _, c in dropped), dropped=dropped,
               declared=_cluster_metrics(header, name), status=status, planned=_planned(header),
               scored=len(scored), scorers=names, in_progress=running,
               stopped=_early_stop_text(header, path, task, model))
    unscored = 0
    for s in samples:
        if not s.scores and status not in (None, "success"):
            unscored += 1  # a partial run: the samples it failed on or never finished
            continue
        if not s.scores:
            raise InputError(f"{s.origin}: sample {s.id} (epoch {s.epoch}) has no score (it failed or "
                             "was never scored) although the log's status is success. Score it (inspect "
                             "score), or leave this log out.")
        if name not in s.scores:
            raise InputError(f"{s.origin}: sample {s.id} (epoch {s.epoch}) has no score "
                             f"from scorer '{name}'.{suggest(name, names)} Scorers: {', '.join(names)}.")
        result = s.scores[name]
        value = result.get("value") if isinstance(result, dict) else result
        row = {"model": model, "question_id": _question_key(task, s.id), "sample": s.epoch,
               "score": inspect_value_to_float(value, f"{s.origin}: sample {s.id}"), "task": task,
               **s.extra}
        if human_scorer is not None:
            row["human"] = _human_value(s, human_scorer)
            run.labelled += not math.isnan(row["human"])
        if cluster_field:
            if s.cluster is None:
                raise InputError(_no_cluster(s, cluster_field, why))
            row["cluster_id"] = id_text(s.cluster)
        run.rows.append(row)
        run.origin.append(s.origin)
        if auto:
            run.values.append(s.declared)
    if unscored:
        run.dropped.append((f"unscored samples of partial run {path.name} (status {_status_text(status)})",
                            unscored))
    return run


def _human_value(s: _Sample, human_scorer: str) -> float:
    """The human label of a sample: the value of ``human_scorer``, converted as
    scores are; NaN (unlabelled) when the sample has no score from it."""
    result = s.scores.get(human_scorer)
    if result is None:
        return math.nan
    value = result.get("value") if isinstance(result, dict) else result
    return inspect_value_to_float(value, f"{s.origin}: sample {s.id}, scorer '{human_scorer}'",
                                  "--human-scorer")


def _no_cluster(s, cluster_field: str, why: str) -> str:
    return f"{s.origin}: sample {s.id} has no metadata field '{cluster_field}' {why}"


def _log_files(path: Path, patterns) -> list[Path]:
    if path.is_dir():
        files = sorted({p for pat in patterns for p in path.rglob(pat) if not p.is_dir()})
        if not files:
            raise InputError(f"{path}: no {' or '.join(patterns)} files in this folder. "
                             "Pass a folder of logs, or a results file.")
        return files
    if not path.exists():
        raise InputError(f"{path}: no such file or folder. Check the path.")
    return [path]


def folder_inputs(path) -> list[Path]:
    """The files of a folder that a reader would read as results (Inspect ``.eval`` and
    ``.json`` logs, lm-eval ``samples_*.jsonl``), leaving out bayeserr's own outputs,
    Inspect's manifests and anything else written beside them: the files a command
    protects from being overwritten (so ``-o logs/report.json`` can be re-run)."""
    root = Path(path)
    if not root.is_dir():
        return []
    out = []
    for f in sorted(p for pat in ("*.eval", "*.json", "samples_*.jsonl") for p in root.rglob(pat)):
        if f.is_file() and not (f.suffix == ".json" and _json_kind(f) is not None):
            out.append(f)
    return out


def _label(f: Path, root: Path) -> str:
    return str(f.relative_to(root)) if root.is_dir() else f.name


def _check_duplicate_runs(mode: str) -> None:
    if mode not in DUPLICATE_RUNS:
        raise InputError(f"duplicate_runs must be one of {', '.join(DUPLICATE_RUNS)} (got {describe(mode)}).")


def _when(value) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value or "unknown")


def _dedupe_runs(runs: list[_Run], mode: str, root: Path, what: str) -> tuple[list, list]:
    """Runs kept and ``[(reason, rows)]`` dropped, by the ``duplicate_runs`` rule."""
    groups: dict[tuple, list] = {}
    for run in runs:
        groups.setdefault((run.task, run.model), []).append(run)
    kept, dropped = [], []
    for (task, model), group in groups.items():
        group.sort(key=lambda r: (r.when, str(r.file)), reverse=True)  # newest first
        chosen, seen = [], set()
        for run in group:
            keys = run.keys()
            if not keys & seen:
                chosen.append(run)
                seen |= keys
                continue
            if mode == "error":
                clash = [r for r in chosen if r.keys() & keys][0]
                raise InputError(
                    f"{root}: {clash.file.name} ({what} {_when(clash.when)}) and {run.file.name} "
                    f"({what} {_when(run.when)}) are two runs of task '{task}' with model '{model}' on the same "
                    f"samples, so every answer they share would count twice. Keep one of them, or "
                    f"pass duplicate_runs='latest' (CLI --duplicate-runs latest) to use the newest "
                    f"run and count the older ones as dropped.")
            dropped.append((_older_reason(run, [r for r in chosen if r.keys() & keys], task, model),
                            run.n_read))
        kept += chosen
    kept.sort(key=lambda r: str(r.file))  # file order, as read
    return kept, dropped


def _older_reason(run: _Run, newer: list[_Run], task: str, model: str) -> str:
    """The row-accounting reason of an older run dropped for ``newer`` ones.

    When the newer runs hold every sample of the older one, it names the file
    kept; when they do not (a newer partial re-run over a complete run), it
    also gives each run's sample count, how many samples are lost, and how to
    keep the older run instead."""
    names = ", ".join(r.file.name for r in newer)
    head = f"older run of {task} with {model}: {run.file.name}"
    lost = len(run.keys() - set().union(*(r.keys() for r in newer)))
    if not lost:
        return f"{head} (kept {names})"
    counts = ", ".join(f"{r.file.name}, {_n(len(r.rows), 'sample')}" for r in newer)
    return (f"{head}, {_n(len(run.rows), 'sample')}, {lost} of them in no newer run: --duplicate-runs "
            f"latest kept the newer {counts} (to use the older run, leave the newer out)")


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _shown_files(names: list[str], limit: int = 3) -> str:
    names = list(dict.fromkeys(names))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _declared_text(declared: dict, runs: list[_Run]) -> str:
    """``"the log's own metrics ci_clustered(cluster='repo') and ..."`` for the
    metrics of ``declared`` (``{field: {metric: [file names]}}``), the files
    named unless every log has them."""
    parts, n = [], 0
    for metrics in declared.values():
        files = [f for names in metrics.values() for f in names]
        every = len(set(files)) == len(runs)
        parts.append(_and(list(metrics)) + ("" if every else f" (in {_shown_files(files)})"))
        n += len(metrics)
    return f"{_owner(runs)} own metric{'s' if n > 1 else ''} {'; '.join(parts)}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _owner(runs: list) -> str:
    return "the log's" if len(runs) == 1 else "the logs'"


#: how to choose the cluster when the logs' metrics name one (ends the notes and errors)
CLUSTER_FIX = "--cluster-field FIELD clusters by another metadata field, --no-cluster by none"


def _log_clusters(runs: list[_Run], root: Path, scorer, cluster_field, auto: bool,
                  fields: _Fields | None, human_scorer: str | None = None,
                  in_progress: str = "exclude") -> tuple[list[_Run], str | None, list[str]]:
    """``(runs, cluster field, notes)``: the cluster the logs' own metrics use
    (:data:`CLUSTER_METRICS`), taken by default (``auto``) or named in a note
    when the report's differs.

    With ``auto`` and one field declared by the kept runs, every row gets its
    cluster from that field (runs whose metrics do not name it are read again
    with it); several fields are an error asking to choose.
    """
    declared: dict[str, dict[str, list[str]]] = {}
    for run in runs:
        for fld, metrics in run.declared.items():
            for metric in metrics:
                declared.setdefault(fld, {}).setdefault(metric, []).append(run.file.name)
    if not declared:
        return runs, None, []
    what = _declared_text(declared, runs)
    if not auto:
        if cluster_field is None:
            note = (f"No clusters (--no-cluster), but {what} cluster the questions: "
                    f"{_owner(runs)} intervals differ from this report's.")
            return runs, None, [note]
        if set(declared) == {cluster_field}:
            return runs, cluster_field, []
        note = (f"Clusters: the metadata field '{cluster_field}' (--cluster-field); {what} cluster by "
                f"another field, so {_owner(runs)} intervals differ from this report's.")
        return runs, cluster_field, [note]
    if len(declared) > 1:
        raise InputError(f"{root}: {what} cluster by different metadata fields; the report uses one "
                         f"for every log. Choose it: {CLUSTER_FIX}; or give each task's logs to a report "
                         "of their own.")
    (fld,) = declared
    why = (f"(the cluster of {what}, which the report uses by default). Give the samples that field, "
           f"or choose: {CLUSTER_FIX}.")
    out = []
    for run in runs:
        if fld not in run.declared:  # the field was not read from this log: read it again with it
            run = _inspect_run(run.file, _label(run.file, root), scorer, fld, fields, why=why,
                               human_scorer=human_scorer, in_progress=in_progress)
        else:
            for row, origin, values in zip(run.rows, run.origin, run.values):
                value = values.get(fld)
                if value is None:
                    sid = row["question_id"].removeprefix(f"{run.task}/")
                    raise InputError(f"{origin}: sample {sid} has no metadata field '{fld}' {why}")
                row["cluster_id"] = id_text(value)
        run.values = []
        out.append(run)
    headers = "log headers" if len(runs) > 1 else "log header"
    note = (f"Clusters: the sample metadata field '{fld}', as in {what} (read from the {headers}, so "
            f"the intervals match {_owner(runs)}); {CLUSTER_FIX}.")
    return out, fld, [note]


def _frame(runs: list[_Run], fields: _Fields | None = None, notes=(), cluster=None) -> pd.DataFrame:
    rows = [r for run in runs for r in run.rows]
    df = pd.DataFrame(rows)
    df.attrs["scorers"] = list(dict.fromkeys(n for run in runs for n in run.scorers))
    df.attrs["row_origin"] = [o for run in runs for o in run.origin]
    if fields is not None and fields.names:
        df.attrs["fields"] = sorted(fields.seen)  # metadata field names, for messages
    if notes:
        df.attrs["notes"] = list(notes)  # for the row accounting (bayeserr.load)
    if cluster is not None:
        df.attrs["log_cluster"] = cluster  # the metadata field of the clusters
    return df


class UnscoredLog(InputError):
    """A log with no scored samples (an unfinished or unscored run): an error
    alone, skipped and counted as dropped (``reason``, ``n_samples``) in a folder
    or among several inputs."""

    def __init__(self, message: str, n_samples: int, reason: str | None = None):
        super().__init__(message)
        self.n_samples = n_samples
        self.reason = reason

    def why(self, name: str) -> str:
        """The row-accounting reason of the skipped log ``name``."""
        return self.reason or f"unscored log {name}"


class UnfinishedLog(UnscoredLog):
    """An ``.eval`` archive without ``header.json``: a run still in progress or interrupted."""


class PartialLog(UnscoredLog):
    """A log whose status is not ``success`` (cancelled, error, started), read
    among other inputs with ``partial_runs="exclude"``: set aside and counted."""


#: what ``partial_runs`` may be: logs whose status is not "success" are set aside, or used
PARTIAL_RUNS = ("exclude", "include")
#: the note that says why partial runs were left out (row accounting)
PARTIAL_RULE = ("Logs whose status is not 'success' (a run cancelled, failed or still running) are "
                "left out and counted as dropped, as inspect eval-set would re-run them: their samples "
                "are the ones that finished first, not a sample of the task. To see one, report its "
                "file on its own; --partial-runs include (Python: partial_runs='include') uses those "
                "with a header. A run with no header.json yet (in progress, or killed before Inspect "
                "wrote it) has no status, model or task to report and is always left out.")


def _status_text(status) -> str:
    return str(status)[:40] if status is not None else "unknown"


def _partial(run: _Run) -> bool:
    """A run whose log header's status is not "success" (a missing status counts as complete);
    a run in progress read with ``in_progress="read"`` has its own note instead."""
    return run.status is not None and run.status != "success" and run.in_progress is None


def _partial_text(run: _Run) -> str:
    of = "" if run.planned is None else f" of {run.planned}"
    return f"{run.file.name} (status {_status_text(run.status)}, {run.scored}{of} samples scored)"


def _partial_reason(run: _Run) -> str:
    return f"partial run of {run.task} with {run.model}: {_partial_text(run)}"


def _check_partial_runs(mode) -> None:
    if mode not in PARTIAL_RUNS:
        raise InputError(f"partial_runs must be one of {', '.join(PARTIAL_RUNS)} (got {describe(mode)}).")


#: what ``in_progress`` may be: an ``.eval`` without ``header.json`` is an error alone and
#: skipped in a folder (``"exclude"``, for reports), or read from Inspect's journal (``"read"``,
#: for ``bayeserr watch``, which watches runs in progress)
IN_PROGRESS_RUNS = ("exclude", "read")


def _check_in_progress(mode) -> None:
    if mode not in IN_PROGRESS_RUNS:
        raise InputError(f"in_progress must be one of {', '.join(IN_PROGRESS_RUNS)} (got {describe(mode)}).")


def read_inspect(path, scorer: str | None = None, cluster_field: str | None = None, *,
                 duplicate_runs: str = "error", fields=(), cluster_from_log: bool = True,
                 partial_runs: str = "exclude", among_others: bool = False,
                 human_scorer: str | None = None, in_progress: str = "exclude"):
    """Inspect AI log(s) as a results table, and the rows skipped.

    Question ids are ``"<task>/<sample id>"`` (see the module docstring).  A
    single unfinished log is an error; in a folder such logs are skipped and
    their samples counted as dropped (``[(reason, count)]``).  Re-runs of a
    task with the same model: ``duplicate_runs`` is ``"error"`` or
    ``"latest"`` (module docstring).  ``df.attrs["row_origin"]`` names the
    file and member of each row, for error messages.  Every row has its
    ``task``; ``fields`` names sample metadata fields to add as columns
    (``"x"`` or ``"metadata.x"``; dotted paths; a field no sample has gives
    no column, and ``df.attrs["fields"]`` lists the metadata fields seen).

    **Clusters.**  ``cluster_field`` names the metadata field of the
    clusters.  Without it, the field the logs' own metrics cluster by
    (``ci_clustered(cluster="repo")``, ``ci_hierarchical``, Inspect's
    ``stderr(cluster=...)``, read from the log header) is used, so the report's
    intervals are those of the log; ``cluster_from_log=False`` (``--no-cluster``)
    reads no cluster.  ``df.attrs["notes"]`` says which field was taken (or
    that the logs' metrics cluster differently from the report), and
    ``df.attrs["log_cluster"]`` names the field.

    **Folders as Inspect writes them.**  Other JSON files of a folder are
    told from logs by their first key (reading at most :data:`PEEK_BYTES`):
    Inspect's ``logs.json`` manifest and ``eval-set.json`` (``inspect
    eval-set``), bayeserr's own JSON outputs (``"schema": "bayeserr.…"``)
    and ``--save-posterior`` ``index.json`` are skipped with a note; logs a
    manifest lists that are not in the folder are named in a note.  An
    ``.eval`` archive without ``header.json`` (a run in progress or
    interrupted) is an error alone and skipped, counted as dropped, in a folder.
    ``in_progress="read"`` (``bayeserr watch``) reads such a run from Inspect's
    journal instead: the task, model and scorers from ``_journal/start.json``,
    the samples written so far in the order Inspect wrote them, and a note
    naming the run in progress with its samples written (of those planned).
    An archive that cannot be read as a zip, or a member that does not inflate
    as declared, raises :class:`DamagedArchive` (a log being written elsewhere
    than on a local disk may be caught mid-write: read it again).

    **Partial runs.**  A log whose header's status is not ``"success"``
    (``"cancelled"``, ``"error"``, ``"started"``) holds only the samples that
    finished first.  With ``partial_runs="exclude"`` (default) such logs in a
    folder are set aside before re-runs are matched, counted as dropped with
    their status and sample counts, and a note gives the rule; a log file read
    alone is used, with a note giving its status (``among_others``: it is one
    of several inputs, so it is set aside too, raising :class:`PartialLog`).
    ``partial_runs="include"`` uses them, each named in a note.

    **Human labels.**  ``human_scorer`` names a scorer whose value is a human
    label of the answer (e.g. a manual grade added with ``inspect score``):
    every row gets a ``human`` column, that value converted as scores are
    (C = 1, I = 0, ...), NaN where the sample has no score from it
    (unlabelled).  ``scorer`` still chooses the score (by default the first
    scorer other than ``human_scorer``).  Logs none of whose samples has it
    are named in a note.  ``df.attrs["scorers"]`` lists the scorers seen.
    """
    _check_duplicate_runs(duplicate_runs)
    _check_partial_runs(partial_runs)
    _check_in_progress(in_progress)
    root = Path(path)
    runs, dropped, skipped, manifests = [], [], [], []
    files = _log_files(root, ("*.eval", "*.json"))
    wanted = _Fields(fields)
    auto = cluster_field is None and cluster_from_log
    folder = root.is_dir()
    logs = []
    for f in files:
        kind = _json_kind(f) if folder and f.suffix == ".json" else None
        if kind is None:
            logs.append(f)
            continue
        skipped.append(f"{_label(f, root)} ({kind})")
        if kind == MANIFEST:
            manifests.append(f)
    set_aside = False
    for f in logs:
        try:
            runs.append(_inspect_run(f, _label(f, root), scorer, cluster_field, wanted, auto,
                                     human_scorer=human_scorer, in_progress=in_progress))
        except NotALog as exc:
            if not folder:
                raise
            skipped.append(f"{_label(f, root)} ({exc.kind})")
        except UnscoredLog as exc:
            if not folder:
                raise
            dropped.append((exc.why(f.name), exc.n_samples))
            set_aside = set_aside or isinstance(exc, UnfinishedLog) or exc.reason is not None
    notes = []
    if skipped:
        notes.append(f"Not logs, skipped: {_shown_files(skipped, 6)}.")
    notes += _manifest_notes(manifests, logs, root) if folder else []
    partial = [r for r in runs if _partial(r)]
    if partial and partial_runs == "exclude" and (folder or among_others):
        if not folder:
            (run,) = partial
            raise PartialLog(f"{path}: {_partial_text(run)}: a partial run, left out. {PARTIAL_RULE}",
                             run.n_read, _partial_reason(run))
        dropped += [(_partial_reason(r), r.n_read) for r in partial]
        runs = [r for r in runs if not _partial(r)]
        set_aside = True
    elif partial:
        how = "--partial-runs include" if partial_runs == "include" else "read on its own"
        notes.append(f"Partial run{'s' if len(partial) > 1 else ''} used ({how}): "
                     f"{'; '.join(_partial_text(r) for r in partial)}: the report covers only the "
                     "samples that finished, which may not represent the task.")
    if set_aside:
        notes.append(PARTIAL_RULE)
    running = [r for r in runs if r.in_progress is not None]
    if running:
        notes.append(f"Run{'s' if len(running) > 1 else ''} {IN_PROGRESS_NOTE} (no header.json yet): "
                     f"{'; '.join(_in_progress_text(r) for r in running)}. The samples are those written so far, "
                     "in the order Inspect wrote them.")
    if not runs:
        why = "; ".join(f"{r} ({c} samples)" for r, c in dropped) if dropped else ""
        if set_aside:
            raise InputError(f"{path}: no complete log to report ({_shorten(why)}). {PARTIAL_RULE}")
        if skipped and not dropped:
            raise InputError(f"{path}: no Inspect logs in this folder, only "
                             f"{_shown_files(skipped, 6)}. Pass a folder of logs.")
        raise InputError(f"{path}: no scored samples in any log. Score the logs (inspect score) first.")
    runs, older = _dedupe_runs(runs, duplicate_runs, root, "created")
    runs, cluster, more = _log_clusters(runs, root, scorer, cluster_field, auto, wanted, human_scorer,
                                        in_progress)
    if human_scorer is not None:
        unlabelled = [_label(r.file, root) for r in runs if not r.labelled]
        if unlabelled and len(unlabelled) < len(runs):
            more.append(f"No sample of {_shown_files(unlabelled, 6)} has a score from scorer "
                        f"'{human_scorer}' (--human-scorer): {'its' if len(unlabelled) == 1 else 'their'} "
                        "answers are unlabelled.")
    for run in runs:
        dropped += run.dropped
    more += [run.stopped for run in runs if run.stopped]
    return _frame(runs, wanted, notes + more, cluster), dropped + older


def _shorten(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


# ------------------------------------------------------------------ lm-evaluation-harness
SAMPLES_NAME = re.compile(r"samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
RESULTS_NAME = re.compile(r"results_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.json$")
LMEVAL_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
               "doc_hash", "prompt_hash", "target_hash"}
#: Largest ``results_*.json`` read (lm-eval's are kilobytes to a few megabytes: scores and task
#: configs, never the samples); a larger one is ignored with a note.
MAX_RESULTS_BYTES = 64 << 20
#: Most entries of ``group_subtasks`` read from one results file (lm-eval's full suites have hundreds).
MAX_GROUPS = 10_000
#: A published group score "fits" a weighting when recomputing it from the file's own task scores
#: this way gives it to this relative tolerance (the file holds full doubles; only summation order
#: can differ).
GROUP_FIT_TOL = 1e-9
#: the weightings lm-eval aggregates a group with (``weight_by_size: true`` / ``false``)
GROUP_WEIGHTINGS = ("size", "macro")


@dataclass
class _Results:
    """One ``results_*.json`` beside samples files, parsed (``data`` None: ignored)."""

    file: Path
    label: str
    date: str
    data: dict | None


def _lmeval_results(folder: Path, root: Path, cache: dict, notes: list) -> list[_Results]:
    """The folder's ``results_*.json`` files, read once each (``cache``: by folder).  A file
    that is too large, unreadable, not JSON or not a JSON object is ignored with a note, as the
    model name and task groups it would give are then unknown."""
    if folder in cache:
        return cache[folder]
    out = []
    for f in sorted(folder.glob("results_*.json")):
        if f.is_dir():
            continue
        label = _label(f, root)
        m = RESULTS_NAME.search(f.name)
        why = None
        try:
            size = f.stat().st_size
            if size > MAX_RESULTS_BYTES:
                why = (f"{human_bytes(size)}, above the limit of {human_bytes(MAX_RESULTS_BYTES)} "
                       "(bayeserr.data.readers.MAX_RESULTS_BYTES)")
            else:
                data = json.loads(f.read_bytes())
                if not isinstance(data, dict):
                    why = f"{describe(data)} rather than a JSON object"
        except OSError as exc:
            why = f"cannot be read ({exc})"
        except (ValueError, RecursionError) as exc:
            why = f"not valid JSON ({_shorten(str(exc), 120)})"
        if why is not None:
            notes.append(f"lm-eval results file {label} ignored: {why}; the model is named without it "
                         "and its task groups are not read.")
            data = None
        out.append(_Results(f, label, m.group("date") if m else "", data))
    cache[folder] = out
    return out


def _lmeval_model(samples_file: Path, results: list[_Results] | None = None) -> str:
    """Model name from the sibling ``results_*.json`` (``model_name`` or
    ``config.model_args``), else the folder name."""
    if results is None:
        results = _lmeval_results(samples_file.parent, samples_file.parent, {}, [])
    for res in results:
        if res.data is None:
            continue
        name = res.data.get("model_name") or _field(res.data, "config.model_args")
        if name:
            return str(name)
    return samples_file.parent.name


def _lmeval_records(path: Path) -> list[tuple[int, dict]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc}).") from None
    records = []
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}, line {lineno}"
        fix = ("Each line of a samples file is one JSON object; a partly written file means the "
               "run did not finish: re-run the task or remove the line.")
        r = _parse_json(line, where, fix)
        if not isinstance(r, dict):
            raise InputError(f"{where}: {describe(r)} rather than a JSON object. {fix}")
        if "doc_id" not in r:
            if not records:
                raise InputError(f"{path}: not an lm-evaluation-harness samples file (no 'doc_id' "
                                 f"in its first record, line {lineno}).")
            raise InputError(f"{where}: the record has no 'doc_id', so its question is unknown. "
                             "Fix or remove that line.")
        records.append((lineno, r))
    if not records:
        raise InputError(f"{path}: an empty lm-evaluation-harness samples file (no records). "
                         "Re-run the task or leave the file out.")
    return records


def _lmeval_run(path: Path, label: str, metric: str | None, filt: str | None,
                results: list[_Results] | None = None) -> tuple[_Run, str]:
    """One samples file's rows, and the ``"metric,filter"`` key they were read with (the key
    of lm-eval's published scores)."""
    m = SAMPLES_NAME.search(path.name)
    task = m.group("task") if m else path.stem
    records = _lmeval_records(path)
    filter_of = [_text(id_text(r.get("filter", "none")), "none") for _, r in records]
    filters = sorted(set(filter_of))
    chosen = filt or (filters[0] if len(filters) == 1 else None)
    if chosen is None:
        raise InputError(f"{path}: several filters ({', '.join(filters)}); choose one with --filter.")
    if chosen not in filters:
        raise InputError(f"{path}: no filter '{chosen}'.{suggest(chosen, filters)} Filters: {', '.join(filters)}.")
    first = records[0][1]
    metrics = [k for k, v in first.items() if k not in LMEVAL_KEYS and isinstance(v, (int, float, bool))]
    name = metric or ("acc" if "acc" in metrics else (metrics[0] if metrics else None))
    if name is None or name not in first:
        raise InputError(f"{path}: no metric '{name}'.{suggest(str(name), metrics)} Metrics: "
                         f"{', '.join(metrics) or 'none'}; choose with --metric.")
    model = _name(_lmeval_model(path, results), "the model name (results_*.json or folder)", path)
    run = _Run(path, task, model, m.group("date") if m else "", n_read=len(records))
    for (lineno, r), f in zip(records, filter_of):
        if f != chosen:
            continue
        run.rows.append({"model": run.model, "question_id": _question_key(task, r['doc_id']),
                         "score": r.get(name), "cluster_id": task, "task": task})
        run.origin.append(f"{label} line {lineno}")
    if len(records) > len(run.rows):
        run.dropped.append(("other lm-eval filter", len(records) - len(run.rows)))
    return run, f"{name},{chosen}"


# -------------------------------------------------- lm-eval task groups
def _number(value) -> float | None:
    """A finite real number from a results file, else None (``"N/A"``, bool, NaN, text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _count(value) -> int | None:
    x = _number(value)
    return int(x) if x is not None and x >= 0 and x == int(x) else None


def _group_tree(data: dict) -> tuple[dict, str | None]:
    """``({group: (direct children, leaf tasks)}, why malformed)`` from a results file's
    ``group_subtasks`` (group -> direct children, tasks or groups; lm-eval ≥ 0.4.2).

    Entries with no children are plain tasks (lm-eval 0.4.x lists a task run alone as
    ``"task": []``), not groups.  A child that is itself a group with children is
    flattened, so a group's leaves are the tasks lm-eval aggregates it over (it
    aggregates over leaf tasks, not over subgroup scores)."""
    tree = data.get("group_subtasks")
    if tree is None:
        return {}, None
    if not isinstance(tree, dict):
        return {}, f"'group_subtasks' is {describe(tree)}, not an object of names to lists of names"
    if len(tree) > MAX_GROUPS:
        return {}, (f"'group_subtasks' has {len(tree):,} entries, above {MAX_GROUPS:,} "
                    "(bayeserr.data.readers.MAX_GROUPS)")
    children = {}
    for name, kids in tree.items():
        if not isinstance(kids, list) or not all(isinstance(k, str) for k in kids):
            return {}, f"'group_subtasks' entry '{_shorten(str(name), 80)}' is not a list of names"
        if len(name) > MAX_NAME_CHARS or any(len(k) > MAX_NAME_CHARS for k in kids):
            return {}, f"'group_subtasks' holds a name over {MAX_NAME_CHARS:,} characters"
        if kids:
            children[name] = list(dict.fromkeys(kids))
    leaves: dict[str, list[str]] = {}
    for top, kids in children.items():  # iterative post-order walk: no recursion limit, cycles refused
        stack, on_path = [(top, iter(kids))], {top}
        while stack:
            group, it = stack[-1]
            kid = next(it, None)
            if kid is None:
                stack.pop()
                on_path.discard(group)
                if group not in leaves:
                    found = [t for k in children[group] for t in (leaves[k] if k in children else [k])]
                    leaves[group] = list(dict.fromkeys(found))
                continue
            if kid not in children or kid in leaves:
                continue
            if kid in on_path:
                return {}, f"'group_subtasks' has a cycle through the group '{_shorten(kid, 80)}'"
            stack.append((kid, iter(children[kid])))
            on_path.add(kid)
    return {g: (children[g], leaves[g]) for g in children}, None


def _task_size(data: dict, task: str) -> int | None:
    """A task's questions in a results file: ``sample_len`` (lm-eval ≥ 0.4.10), ``samples``
    (0.4.x), else ``n-samples[task].effective``."""
    entry = _field(data, "results")
    entry = entry.get(task) if isinstance(entry, dict) else None
    if isinstance(entry, dict):
        for key in ("sample_len", "samples"):
            n = _count(entry.get(key))
            if n:
                return n
    n = _field(data, "n-samples")
    n = n.get(task) if isinstance(n, dict) else None
    return _count(n.get("effective")) if isinstance(n, dict) else None


def _stderr_key(key: str) -> str:
    metric, _, filt = key.partition(",")
    return f"{metric}_stderr,{filt}"


def _published(data: dict, group: str, leaves: list, key: str) -> dict | None:
    """lm-eval's published score of ``group`` for ``key`` (``"acc,none"``) in one results
    file, with its stderr (None for "N/A"), its question count, and the weightings
    (:data:`GROUP_WEIGHTINGS`) that give the score again from the file's own task scores
    and sizes (lm-eval's ``aggregate_subtask_metrics``)."""
    entry = None
    for block in ("groups", "results"):  # "groups": groups with an aggregate; every name is in "results"
        b = data.get(block)
        if isinstance(b, dict) and isinstance(b.get(group), dict) and key in b[group]:
            entry = b[group]
            break
    score = _number(entry.get(key)) if entry else None
    if score is None:
        return None
    values, sizes = [], []
    results = data.get("results") if isinstance(data.get("results"), dict) else {}
    for t in leaves:
        v = _number(results[t].get(key)) if isinstance(results.get(t), dict) else None
        values.append(v)
        sizes.append(_task_size(data, t))
    fits = None  # unknown: the file lacks a task's score or size
    if values and all(v is not None for v in values) and all(sizes):
        again = {"size": sum(v * n for v, n in zip(values, sizes)) / sum(sizes),
                 "macro": sum(values) / len(values)}
        fits = [w for w in GROUP_WEIGHTINGS if abs(again[w] - score) <= GROUP_FIT_TOL * max(1.0, abs(score))]
    n = _count(entry.get("sample_len")) or _count(entry.get("samples"))
    if n is None and all(sizes):
        n = sum(sizes)
    return {"score": score, "stderr": _number(entry.get(_stderr_key(key))), "n": n, "fits": fits}


def _declared_weighting(data: dict, group: str, key: str) -> str | None:
    """``weight_by_size`` of a group config in the file's ``configs``, when one is there (lm-eval
    writes task configs only, but a hand-assembled or future file may hold the group's)."""
    config = _field(data, "configs")
    config = config.get(group) if isinstance(config, dict) else None
    items = config.get("aggregate_metric_list") if isinstance(config, dict) else None
    items = [items] if isinstance(items, dict) else items
    metric, _, filt = key.partition(",")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("metric") != metric:
            continue
        filters = item.get("filter_list")
        filters = [filters] if isinstance(filters, str) else filters
        if filters is None or (isinstance(filters, list) and filt in filters):
            by_size = item.get("weight_by_size", True)
            return "size" if by_size is True else "macro" if by_size is False else None
    return None


def _lmeval_groups(runs: list[_Run], keys: dict, root: Path, cache: dict, notes: list) -> dict:
    """The task groups of the results files beside the runs' samples (see :func:`read_lmeval`),
    as :func:`finish_task_groups` takes them."""
    tasks = {r.task for r in runs}
    folders = sorted({r.file.parent for r in runs})
    defined: dict[str, list] = {}  # group -> [(date, label, children, leaves)]
    files = []  # (folder, _Results) with a usable tree
    for folder in folders:
        for res in _lmeval_results(folder, root, cache, notes):
            if res.data is None:
                continue
            tree, why = _group_tree(res.data)
            if why is not None:
                notes.append(f"lm-eval results file {res.label}: task groups not read ({why}).")
                continue
            files.append((folder, res, tree))
            for g, (kids, leaves) in tree.items():
                if set(leaves) & tasks:
                    defined.setdefault(g, []).append((res.date, res.label, kids, leaves))
    groups = {}
    for g, defs in defined.items():
        defs.sort(key=lambda d: (d[0], d[1]), reverse=True)  # newest first
        _, label, kids, leaves = defs[0]
        others = sorted({d[1] for d in defs[1:] if set(d[3]) != set(leaves)})
        if others:
            notes.append(f"lm-eval results files define the group '{g}' over different tasks "
                         f"({_shown_files(others)} and {label}): the newest, {label}, is used.")
        run_keys = sorted({keys[r.file] for r in runs if r.task in leaves})
        key = run_keys[0] if len(run_keys) == 1 else None
        entry = {"tasks": list(leaves), "children": list(kids), "metric": key, "published": {},
                 "declared": None}
        if key is None:
            entry["metric_note"] = ("the group's tasks were read with different metrics "
                                    f"({', '.join(run_keys)})")
        groups[g] = entry
        if key is None:
            continue
        for folder in folders:
            mine = [r for r in runs if r.file.parent == folder and r.task in leaves]
            if not mine:
                continue
            model, dates = mine[0].model, {r.when for r in mine}
            # the files that define the group over the same tasks; the samples' own run first
            have = [(res, tree) for f, res, tree in files
                    if f == folder and g in tree and set(tree[g][1]) == set(leaves)]
            same = [(res, tree) for res, tree in have if res.date and res.date in dates]
            pick = sorted(same or have, key=lambda x: (x[0].date, x[0].label), reverse=True)
            for res, tree in pick:
                entry["declared"] = entry["declared"] or _declared_weighting(res.data, g, key)
                pub = _published(res.data, g, tree[g][1], key)
                if pub is None:
                    continue
                pub.update(file=res.label, same_run=bool(res.date) and dates == {res.date})
                old = entry["published"].get(model)
                if old is None or (pub["same_run"] and not old["same_run"]):
                    entry["published"][model] = pub
                break
    return groups


def _weighting(entry: dict) -> tuple[str | None, str]:
    """How lm-eval aggregated a group, and how that is known."""
    if entry.get("metric") is None:
        return None, entry.get("metric_note") or "no single metric for its tasks"
    if entry.get("declared") in GROUP_WEIGHTINGS:
        return entry["declared"], "the group's config (weight_by_size) in the results file"
    pubs = list(entry.get("published", {}).values())
    if not pubs:
        return None, "lm-eval published no score of the group for this metric"
    known = [p["fits"] for p in pubs if isinstance(p.get("fits"), list)]
    if not known:
        return None, "its results files lack the task scores or sizes to tell how it was aggregated"
    fits = set(GROUP_WEIGHTINGS)
    for f in known:
        fits &= set(f)
    if len(fits) == 1:
        (w,) = fits
        return w, ("its published scores are the size-weighted mean of its tasks' (weight_by_size)"
                   if w == "size" else "its published scores are the plain mean of its tasks' "
                   "(weight_by_size: false)")
    if fits:
        return "size", ("lm-eval's default, weight_by_size (its published scores fit both weightings: "
                        "tasks of equal size or equal scores)")
    return None, ("its published scores are neither the size-weighted nor the plain mean of its "
                  "tasks' published scores")


def finish_task_groups(parts, tasks=None, models=None, notes: list | None = None) -> dict:
    """The task groups of several readers (``df.attrs["task_groups"]``) as one, for the data
    loaded: groups with no task in ``tasks`` are left out; those with some are kept, their
    absent tasks listed under ``missing`` (their group score is not comparable with lm-eval's);
    published scores of models not in ``models`` are left out; the weighting is concluded
    again from every model's published score.  ``tasks``/``models`` None: all.  A group
    defined over different tasks by two parts keeps the first definition (a note says so).
    Malformed entries (a hand-made DataFrame's attrs) are skipped."""
    out: dict[str, dict] = {}
    for part in parts:
        if not isinstance(part, dict):
            continue
        for g, e in part.items():
            if not isinstance(g, str) or not isinstance(e, dict) or not isinstance(e.get("tasks"), list) \
                    or not all(isinstance(t, str) for t in e["tasks"]) or not e["tasks"]:
                continue
            pubs = e.get("published") if isinstance(e.get("published"), dict) else {}
            pubs = {str(m): dict(p) for m, p in pubs.items()
                    if isinstance(p, dict) and _number(p.get("score")) is not None}
            if g not in out:
                kids = e.get("children")
                out[g] = {"tasks": list(e["tasks"]),
                          "children": list(kids) if isinstance(kids, list) else list(e["tasks"]),
                          "metric": e.get("metric") if isinstance(e.get("metric"), str) else None,
                          "published": pubs, "declared": e.get("declared")}
                if e.get("metric_note"):
                    out[g]["metric_note"] = str(e["metric_note"])
                continue
            have = out[g]
            if have["tasks"] != list(e["tasks"]):
                if notes is not None:
                    notes.append(f"Two inputs define the lm-eval group '{g}' over different tasks: the "
                                 "first input's definition is used.")
                continue
            if e.get("metric") != have["metric"]:
                have["metric"], have["published"] = None, {}
                have["metric_note"] = "the inputs read its tasks with different metrics"
                continue
            for m, p in pubs.items():
                old = have["published"].get(m)
                if old is None or (p.get("same_run") and not old.get("same_run")):
                    have["published"][m] = p
            have["declared"] = have["declared"] or e.get("declared")
    present = None if tasks is None else {str(t) for t in tasks}
    keep = None if models is None else {str(m) for m in models}
    final = {}
    for g, e in out.items():
        if present is not None and not set(e["tasks"]) & present:
            continue
        if keep is not None:
            e["published"] = {m: p for m, p in e["published"].items() if m in keep}
        e["missing"] = [] if present is None else [t for t in e["tasks"] if t not in present]
        e["weighting"], e["weighting_from"] = _weighting(e)
        final[g] = e
    return final


def read_lmeval(path, metric: str | None = None, filt: str | None = None, *,
                duplicate_runs: str = "error"):
    """lm-evaluation-harness ``--log_samples`` output as a results table
    (the task is the cluster when several tasks are read together), and the
    rows of other filters, counted as dropped.  ``duplicate_runs`` as for
    :func:`read_inspect` (runs ordered by the date in the file name).

    **Task groups.**  The ``results_*.json`` lm-eval writes beside the samples
    (read once each, at most :data:`MAX_RESULTS_BYTES`; a file that is not a
    JSON object is ignored with a note) give the groups (``group_subtasks``:
    ``mmlu`` over ``mmlu_stem``, … over the leaf tasks).  The rows' tasks stay
    the leaf tasks (the samples files); ``df.attrs["task_groups"]`` holds
    ``{group: {"tasks": [leaf tasks, nested groups flattened], "children":
    [direct children], "metric": "acc,none", "weighting": "size" | "macro" |
    None, "weighting_from": why, "missing": [], "published": {model: {"score",
    "stderr" (None for "N/A"), "n", "file", "same_run", "fits"}}}}`` for the
    groups with a task in the data.  ``metric`` is the ``"metric,filter"`` the
    group's tasks were read with (None if they differ); ``published`` is
    lm-eval's group score of that key from the results file of the same run as
    the samples (same date in the name; ``same_run`` False: another run's);
    lm-eval does not write how a group aggregates, so ``weighting`` is the
    weighting that gives every published score again from the file's own task
    scores and sizes (``fits``), lm-eval's default ``size`` when both do, and
    None when neither does or nothing was published.
    """
    _check_duplicate_runs(duplicate_runs)
    root = Path(path)
    cache: dict = {}
    notes: list = []
    runs, keys = [], {}
    for f in _log_files(root, ("samples_*.jsonl",)):
        results = _lmeval_results(f.parent, root, cache, notes)
        run, key = _lmeval_run(f, _label(f, root), metric, filt, results)
        runs.append(run)
        keys[run.file] = key
    runs, older = _dedupe_runs(runs, duplicate_runs, root, "dated")
    other = sum(c for run in runs for _, c in run.dropped)
    groups = _lmeval_groups(runs, keys, root, cache, notes)
    df = _frame(runs)
    if df["cluster_id"].nunique() == 1:
        origin = df.attrs.pop("row_origin")  # popped first: pandas copies attrs on every operation
        df = df.drop(columns="cluster_id")
        df.attrs["row_origin"] = origin
    groups = finish_task_groups([groups], {r.task for r in runs}, {r.model for r in runs}, notes)
    if groups:
        df.attrs["task_groups"] = groups
    if notes:
        df.attrs["notes"] = list(dict.fromkeys(notes))
    return df, ([("other lm-eval filter", other)] if other else []) + older


# ------------------------------------------------------------------ choosing a reader
#: the readers ``--input-format`` names (``auto`` picks one with :func:`detect`)
READERS = ("table", "inspect", "lm-eval")
#: table formats ``--input-format`` names (otherwise chosen by file extension)
TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
STDIN = "-"


def detect(path) -> str:
    """The reader for a path: by extension, name, or (folders) contents."""
    if str(path) == STDIN:
        return "table"
    p = Path(path)
    if p.is_dir():
        if any(p.rglob("*.eval")):
            return "inspect"
        if any(p.rglob("samples_*.jsonl")):
            return "lm-eval"
        if any(p.rglob("*.json")):
            return "inspect"
        raise InputError(f"{p}: a folder with no Inspect logs (.eval, .json) or lm-eval samples "
                         "(samples_*.jsonl); pass a results file or a folder of logs.")
    if p.suffix == ".eval":
        return "inspect"
    if SAMPLES_NAME.search(p.name):
        return "lm-eval"
    if p.suffix == ".json":
        return "inspect"
    return "table"


def check_input_format(input_format) -> None:
    """``input_format`` is ``auto``, a reader of :data:`READERS` or a table format."""
    choices = ("auto",) + READERS + TABLE_FORMATS
    if not isinstance(input_format, str) or input_format not in choices:
        raise InputError(f"--input-format {describe(input_format)} is unknown."
                         f"{suggest(input_format, choices)} Use one of {', '.join(choices)}.")


def read_logs(path, input_format: str = "auto", *, scorer=None, cluster_field=None, metric=None,
              filt=None, duplicate_runs: str = "error", fields=(), cluster_from_log: bool = True,
              partial_runs: str = "exclude", among_others: bool = False, human_scorer=None,
              in_progress: str = "exclude"):
    """``(DataFrame, dropped rows)`` from an eval-log reader, or ``None`` for plain tables.

    ``input_format`` is ``auto``, a reader of :data:`READERS` or a table
    format of :data:`TABLE_FORMATS`; ``duplicate_runs`` (``"error"`` or
    ``"latest"``) decides what re-runs of a task with the same model do;
    ``fields`` (Inspect) names metadata fields to add as columns;
    ``cluster_from_log`` (Inspect) clusters by the field the logs' metrics
    use when ``cluster_field`` is not given; ``partial_runs`` (Inspect,
    ``"exclude"`` or ``"include"``) decides what logs whose status is not
    "success" do, ``among_others`` that the path is one of several inputs
    (:func:`read_inspect`); ``human_scorer`` (Inspect) names the scorer of
    the human labels (column ``human``); ``in_progress`` (Inspect, ``"exclude"``
    or ``"read"``) whether an ``.eval`` of a run in progress is read (``watch``).
    """
    check_input_format(input_format)
    _check_duplicate_runs(duplicate_runs)
    _check_partial_runs(partial_runs)
    fmt = detect(path) if input_format == "auto" else input_format
    if fmt in ("inspect", "lm-eval") and str(path) == STDIN:
        raise InputError(f"{fmt} logs are read from a file or a folder, not standard input ('-'). "
                         "Pass the path of the log(s).")
    if fmt == "inspect":
        return read_inspect(path, scorer, cluster_field, duplicate_runs=duplicate_runs, fields=fields,
                            cluster_from_log=cluster_from_log, partial_runs=partial_runs,
                            among_others=among_others, human_scorer=human_scorer, in_progress=in_progress)
    if fmt == "lm-eval":
        return read_lmeval(path, metric, filt, duplicate_runs=duplicate_runs)
    return None
