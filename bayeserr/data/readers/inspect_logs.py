"""The ``inspect`` reader: Inspect AI logs (``.eval`` archives and ``.json`` logs, a file
or a folder of them) into the long results table (:func:`read_inspect`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bayeserr.base.errors import InputError, describe, suggest
from bayeserr.data.readers.archive import EvalArchive
from bayeserr.data.readers.options import check_options
from bayeserr.data.readers.runs import (
    MANIFEST,
    MAX_MANIFEST_BYTES,
    _and,
    _created,
    _dedupe_runs,
    _frame,
    _label,
    _n,
    _object_kind,
    _owner,
    _Run,
    _shown_files,
    json_kind,
    log_files,
)
from bayeserr.data.readers.values import (
    _field,
    _Fields,
    _name,
    _parse_json,
    _shorten,
    _text,
    _text_of,
    id_text,
    inspect_value_to_float,
    question_key,
)

#: the member an unfinished ``.eval`` has from its start (the run's ``eval`` header)
JOURNAL_START = "_journal/start.json"


def _is_sample_member(name: str) -> bool:
    return name.startswith("samples/") and name.endswith(".json")


def _eval_members(archive: EvalArchive) -> tuple[dict, list]:
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
    archive = EvalArchive(path)
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


def _journal_header(archive: EvalArchive, infos: dict, fix: str) -> dict:
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
            return points(x, signed=bool(meta.get("b")))
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


def _unfinished_archive(archive: EvalArchive, infos: dict):
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
        row = {"model": model, "question_id": question_key(task, s.id), "sample": s.epoch,
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
    told from logs by their first key (reading at most :data:`~bayeserr.data.readers.runs.PEEK_BYTES`):
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
    as declared, raises :class:`~bayeserr.data.readers.archive.DamagedArchive` (a log being written elsewhere
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
    from bayeserr.data.readers.registry import READERS
    opts = check_options(dict(scorer=scorer, cluster_field=cluster_field, duplicate_runs=duplicate_runs,
                              partial_runs=partial_runs, human_scorer=human_scorer, in_progress=in_progress),
                         READERS["inspect"].options)
    return inspect_logs(path, opts, fields=fields, cluster_from_log=cluster_from_log, among_others=among_others)


def inspect_logs(path, options: Mapping, *, fields=(), cluster_from_log: bool = True, among_others: bool = False):
    """:func:`read_inspect` with its reader options checked already
    (:func:`~bayeserr.data.readers.options.check_options`)."""
    scorer, cluster_field, human_scorer = options["scorer"], options["cluster_field"], options["human_scorer"]
    duplicate_runs, partial_runs = options["duplicate_runs"], options["partial_runs"]
    in_progress = options["in_progress"]
    root = Path(path)
    runs, dropped, skipped, manifests = [], [], [], []
    files = log_files(root, ("*.eval", "*.json"))
    wanted = _Fields(fields)
    auto = cluster_field is None and cluster_from_log
    folder = root.is_dir()
    logs = []
    for f in files:
        kind = json_kind(f) if folder and f.suffix == ".json" else None
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
    df = _frame(runs, wanted, notes + more, cluster)
    partial_used = [_partial_record(r, root, partial_runs == "include") for r in runs if _partial(r)]
    if partial_used:
        df.attrs["partial_runs"] = partial_used  # for the decisions read from these data (gate, watch)
    return df, dropped + older


def _partial_record(run: _Run, root: Path, asked: bool) -> dict:
    """A partial run used: its file, model, task, status, samples scored and planned, and whether
    the user asked for partial runs (``partial_runs="include"``) or it was read on its own."""
    return {"file": _label(run.file, root), "model": run.model, "task": run.task,
            "status": _status_text(run.status), "scored": run.scored, "planned": run.planned, "asked": asked}
