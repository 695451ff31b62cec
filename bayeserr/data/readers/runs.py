"""Log files and runs, for every eval-log reader: which files of a folder are logs, what a
run is, re-runs of a task with the same model (``duplicate_runs``) and the long table of
the runs kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from bayeserr.base.errors import InputError
from bayeserr.base.formats import some
from bayeserr.data.readers.values import _Fields

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


#: the first keys an Inspect .json log starts with (a logs.json that starts otherwise is a damaged manifest)
LOG_KEYS = ("version", "status", "eval", "plan", "results", "stats", "error", "samples", "reductions", "location")


def json_kind(path: Path) -> str | None:
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
    if path.name == "logs.json" and key not in LOG_KEYS:  # Inspect's manifest, damaged: the logs are read without it
        return MANIFEST + ", damaged"
    return None


def _object_kind(obj, path: Path) -> str | None:
    """:func:`json_kind` for a parsed JSON value that has no ``eval`` header."""
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


def log_files(path: Path, patterns) -> list[Path]:
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
        if f.is_file() and not (f.suffix == ".json" and json_kind(f) is not None):
            out.append(f)
    return out


def _label(f: Path, root: Path) -> str:
    return str(f.relative_to(root)) if root.is_dir() else f.name


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
    return some(dict.fromkeys(names), limit)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _owner(runs: list) -> str:
    return "the log's" if len(runs) == 1 else "the logs'"


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
