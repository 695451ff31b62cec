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
  no/false = 0, numbers as they are); an optional metadata field as cluster.
* ``lm-eval`` — lm-evaluation-harness ``--log_samples`` output
  (``samples_<task>_<date>.jsonl``), a file or an output folder with one
  subfolder per model; rows keyed on ``(doc_id, filter)``; one metric.
* ``table`` — CSV / TSV / JSONL / Parquet results tables (the default).
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path

import pandas as pd

from .errors import InputError, suggest

ZSTD_METHOD = 93  # zip compression method id of Zstandard

# ------------------------------------------------------------------ Inspect AI
INSPECT_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
INSPECT_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def inspect_value_to_float(value, where: str) -> float:
    """Inspect's ``value_to_float``: letters C/I/P/N, yes/no, true/false,
    numbers and numeric strings.  Anything else is an error, not a silent 0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
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
    raise InputError(f"{where}: score value {value!r} is not one Inspect maps to a number "
                     "(C, I, P, N, yes/no, true/false or a number). Pick another --scorer.")


def _zip_member(path: Path, info: zipfile.ZipInfo, archive: zipfile.ZipFile) -> bytes:
    """One archive member; zstd members are read raw and decompressed here
    (Python's zipfile reads them only from 3.14 on)."""
    if info.compress_type != ZSTD_METHOD:
        return archive.read(info)
    import zstandard
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(30)
        if header[:4] != b"PK\x03\x04":
            raise InputError(f"{path}: damaged archive (bad local header for {info.filename}).")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        raw = fh.read(info.compress_size)
    return zstandard.ZstdDecompressor().decompress(raw, max_output_size=max(info.file_size, 1))


def _read_eval_archive(path: Path) -> tuple[dict, list[dict]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise InputError(f"{path}: not a readable .eval archive (zip). Check the file.") from None
    with archive:
        infos = {i.filename: i for i in archive.infolist()}
        if "header.json" not in infos:
            raise InputError(f"{path}: no header.json in the archive: the run did not finish "
                             "writing its log. Re-run or finish the evaluation first.")
        header = json.loads(_zip_member(path, infos["header.json"], archive))
        samples = [json.loads(_zip_member(path, info, archive)) for name, info in sorted(infos.items())
                   if name.startswith("samples/") and name.endswith(".json")]
    return header, samples


def _read_json_log(path: Path) -> tuple[dict, list[dict]]:
    try:
        log = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc}).") from None
    if not isinstance(log, dict) or "eval" not in log:
        raise InputError(f"{path}: not an Inspect log (no 'eval' header).")
    return log, log.get("samples") or []


def _field(obj: dict, dotted: str):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _inspect_rows(path: Path, scorer: str | None, cluster_field: str | None) -> list[dict]:
    header, samples = _read_eval_archive(path) if path.suffix == ".eval" else _read_json_log(path)
    model = _field(header, "eval.model") or "unknown-model"
    if not samples:
        raise InputError(f"{path}: the log has no samples (status: {header.get('status')}). "
                         "The run may be unfinished; re-run it or drop this log.")
    scored = [s for s in samples if s.get("scores")]
    if not scored:
        raise UnscoredLog(f"{path}: none of its {len(samples)} samples has a score (status: "
                          f"{header.get('status')}): the run looks unfinished or was never scored. "
                          "Score it (inspect score) or leave this log out.", len(samples))
    names = list(scored[0]["scores"])
    name = scorer or names[0]
    rows = []
    for s in samples:
        scores = s.get("scores") or {}
        if name not in scores:
            raise InputError(f"{path}: sample {s.get('id')} (epoch {s.get('epoch')}) has no score "
                             f"from scorer '{name}'.{suggest(name, names)} Scorers: {', '.join(names)}.")
        value = scores[name].get("value") if isinstance(scores[name], dict) else scores[name]
        row = {"model": model, "question_id": str(s.get("id")), "sample": int(s.get("epoch", 1)),
               "score": inspect_value_to_float(value, f"{path}: sample {s.get('id')}")}
        if cluster_field:
            cluster = _field(s.get("metadata") or {}, cluster_field)
            if cluster is None:
                raise InputError(f"{path}: sample {s.get('id')} has no metadata field "
                                 f"'{cluster_field}' for --cluster-field.")
            row["cluster_id"] = str(cluster)
        rows.append(row)
    return rows


def _log_files(path: Path, patterns) -> list[Path]:
    if path.is_dir():
        files = sorted(p for pat in patterns for p in path.rglob(pat))
        if not files:
            raise InputError(f"{path}: no {' or '.join(patterns)} files in this folder.")
        return files
    if not path.exists():
        raise InputError(f"{path}: no such file or folder. Check the path.")
    return [path]


class UnscoredLog(InputError):
    """A log with no scored samples (an unfinished or unscored run)."""

    def __init__(self, message: str, n_samples: int):
        super().__init__(message)
        self.n_samples = n_samples


def read_inspect(path, scorer: str | None = None, cluster_field: str | None = None):
    """Inspect AI log(s) as a results table, and the rows skipped.

    A single unfinished log is an error; in a folder such logs are skipped
    and their samples counted as dropped (``[(reason, count)]``).
    """
    rows, dropped = [], []
    files = _log_files(Path(path), ("*.eval", "*.json"))
    for f in files:
        try:
            rows += _inspect_rows(f, scorer, cluster_field)
        except UnscoredLog as exc:
            if len(files) == 1:
                raise
            dropped.append((f"unscored log {f.name}", exc.n_samples))
    if not rows:
        raise InputError(f"{path}: no scored samples in any log.")
    return pd.DataFrame(rows), dropped


# ------------------------------------------------------------------ lm-evaluation-harness
SAMPLES_NAME = re.compile(r"samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
LMEVAL_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
               "doc_hash", "prompt_hash", "target_hash"}


def _lmeval_model(samples_file: Path) -> str:
    """Model name from the sibling ``results_*.json`` (``model_name`` or
    ``config.model_args``), else the folder name."""
    for res in sorted(samples_file.parent.glob("results_*.json")):
        try:
            data = json.loads(res.read_text())
        except json.JSONDecodeError:
            continue
        name = data.get("model_name") or _field(data, "config.model_args")
        if name:
            return str(name)
    return samples_file.parent.name


def _lmeval_rows(path: Path, metric: str | None, filt: str | None) -> list[dict]:
    m = SAMPLES_NAME.search(path.name)
    task = m.group("task") if m else path.stem
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records or "doc_id" not in records[0]:
        raise InputError(f"{path}: not an lm-evaluation-harness samples file (no 'doc_id').")
    filters = sorted({r.get("filter", "none") for r in records})
    chosen = filt or (filters[0] if len(filters) == 1 else None)
    if chosen is None:
        raise InputError(f"{path}: several filters ({', '.join(filters)}); choose one with --filter.")
    if chosen not in filters:
        raise InputError(f"{path}: no filter '{chosen}'.{suggest(chosen, filters)} Filters: {', '.join(filters)}.")
    metrics = [k for k, v in records[0].items() if k not in LMEVAL_KEYS and isinstance(v, (int, float, bool))]
    name = metric or ("acc" if "acc" in metrics else (metrics[0] if metrics else None))
    if name is None or name not in records[0]:
        raise InputError(f"{path}: no metric '{name}'.{suggest(str(name), metrics)} Metrics: "
                         f"{', '.join(metrics) or 'none'}; choose with --metric.")
    model = _lmeval_model(path)
    kept = [{"model": model, "question_id": f"{task}/{r['doc_id']}", "score": r.get(name),
             "cluster_id": task} for r in records if r.get("filter", "none") == chosen]
    return kept, len(records) - len(kept)


def read_lmeval(path, metric: str | None = None, filt: str | None = None):
    """lm-evaluation-harness ``--log_samples`` output as a results table
    (the task is the cluster when several tasks are read together), and the
    rows of other filters, counted as dropped."""
    rows, dropped = [], 0
    for f in _log_files(Path(path), ("samples_*.jsonl",)):
        kept, other = _lmeval_rows(f, metric, filt)
        rows += kept
        dropped += other
    df = pd.DataFrame(rows)
    if df["cluster_id"].nunique() == 1:
        df = df.drop(columns="cluster_id")
    return df, ([("other lm-eval filter", dropped)] if dropped else [])


# ------------------------------------------------------------------ choosing a reader
READERS = ("table", "inspect", "lm-eval")


def detect(path) -> str:
    """The reader for a path: by extension, name, or (folders) contents."""
    p = Path(path)
    if p.is_dir():
        if any(p.rglob("*.eval")):
            return "inspect"
        if any(p.rglob("samples_*.jsonl")):
            return "lm-eval"
        if any(p.rglob("*.json")):
            return "inspect"
        raise InputError(f"{p}: a folder with no Inspect logs or lm-eval samples; pass a results file.")
    if p.suffix == ".eval":
        return "inspect"
    if SAMPLES_NAME.search(p.name):
        return "lm-eval"
    if p.suffix == ".json":
        return "inspect"
    return "table"


def read_logs(path, input_format: str = "auto", *, scorer=None, cluster_field=None, metric=None,
              filt=None):
    """``(DataFrame, dropped rows)`` from an eval-log reader, or ``None`` for plain tables."""
    fmt = detect(path) if input_format == "auto" else input_format
    if fmt not in READERS:
        raise InputError(f"--input-format '{input_format}' is unknown.{suggest(input_format, READERS)} "
                         f"Use auto or one of {', '.join(READERS)}.")
    if fmt == "inspect":
        return read_inspect(path, scorer, cluster_field)
    if fmt == "lm-eval":
        return read_lmeval(path, metric, filt)
    return None
