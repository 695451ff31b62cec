"""The ``lm-eval`` reader: lm-evaluation-harness ``--log_samples`` output into the long
results table, with lm-eval's task groups and published group scores (:func:`read_lmeval`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bayeserr.base.errors import InputError, describe, human_bytes, suggest
from bayeserr.data.readers.options import check_options
from bayeserr.data.readers.runs import (
    _dedupe_runs,
    _frame,
    _label,
    _Run,
    _shown_files,
    log_files,
)
from bayeserr.data.readers.values import (
    MAX_NAME_CHARS,
    SAMPLES_NAME,
    _field,
    _name,
    _parse_json,
    _shorten,
    _text,
    id_text,
    question_key,
)

# ------------------------------------------------------------------ lm-evaluation-harness
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
        run.rows.append({"model": run.model, "question_id": question_key(task, r['doc_id']),
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
    :func:`~bayeserr.data.readers.inspect_logs.read_inspect` (runs ordered by the date in the file name).

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
    from bayeserr.data.readers.registry import READERS
    return lmeval_logs(path, check_options(dict(metric=metric, filt=filt, duplicate_runs=duplicate_runs),
                                           READERS["lm-eval"].options))


def lmeval_logs(path, options: Mapping):
    """:func:`read_lmeval` with its reader options checked already
    (:func:`~bayeserr.data.readers.options.check_options`)."""
    metric, filt, duplicate_runs = options["metric"], options["filt"], options["duplicate_runs"]
    root = Path(path)
    cache: dict = {}
    notes: list = []
    runs, keys = [], {}
    for f in log_files(root, ("samples_*.jsonl",)):
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
