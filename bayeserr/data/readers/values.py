"""Values, ids and JSON text of eval logs: Inspect's score values as numbers, question ids
("<task>/<id>"), names and the sample metadata fields asked for as columns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bayeserr.base.errors import InputError

#: the name lm-eval gives its samples files (``samples_<task>_<date>.jsonl``)
SAMPLES_NAME = re.compile(r"samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
#: Longest model or task name read from a log header (names are short
#: identifiers such as ``openai/gpt-4o``; every row carries them).
MAX_NAME_CHARS = 4096

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


def question_key(task: str, sample_id) -> str:
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
            "(bayeserr.data.readers.values.MAX_NAME_CHARS); names are short identifiers such as 'openai/gpt-4o', so "
            f"this one is damaged or was edited ({_shorten(name, 40)}). Fix the name in the log, or leave "
            "the log out.")
    return name


#: the longest model or task name a results table may hold, in every engine (a log's names stop at
#: MAX_NAME_CHARS; a table's long names are cut on the page and given whole in its comments, but a
#: 1 MB name is carried by every row and every partition: the dask workers died on one)
MAX_TABLE_NAME_CHARS = 65_536


def long_name_error(where, key: str, column: str, longest: int) -> InputError:
    """The error for a model or task name in a table column past :data:`MAX_TABLE_NAME_CHARS`
    (every engine refuses the same names)."""
    return InputError(f"{where}: a {key} name in the column '{column}' is {longest:,} characters long, above the "
                      f"limit of {MAX_TABLE_NAME_CHARS:,}; names are short identifiers such as 'openai/gpt-4o', so "
                      "this one is damaged. Fix it in the file, or leave its rows out.")


def _shorten(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + " …"
