"""Loading and validating per-question results (SPEC §1).

A results table has one row per graded answer (``model``, ``question_id``,
``score`` and optionally ``cluster_id`` and ``sample``).  :func:`load` reads it
from CSV, TSV, JSONL or Parquet (gzip or not; a file, a pipe, or ``-`` for
standard input) or takes a DataFrame, checks every rule of SPEC §1 and returns
an :class:`xarray.Dataset`::

    score    (model, question, sample)  float, NaN where there is no answer
    human    (model, question, sample)  float, a human label of the answer, NaN where
                                        unlabelled (only with human labels: see load)
    cluster  (question)                 coordinate, when clusters are given

Several inputs (a list of paths, a glob pattern, ``{model: path}``) are read
one by one and combined into one table, as if their rows were one file;
``where=`` filters rows (:mod:`bayeserr.data.filters`) with the rows removed
counted as dropped.

Nothing is fixed silently: each rule that fails raises
:class:`~bayeserr.base.errors.InputError` naming the file, the rows and the fix.
Row numbers always refer to the rows of the source (data rows counting from 1
after the header; lines for JSONL; file and member for eval logs), also after
``models=`` has left rows out.  Row accounting (read / used / dropped with the
reason) travels in ``ds.attrs["rows"]`` and is printed by every report.

Identifiers (model, question, cluster, sample) are compared as text: the
number ``1`` and the string ``"1"`` (JSONL, Parquet, a DataFrame) are one id,
and ``007`` stays ``007`` (CSV/TSV identifier columns are read as text).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayeserr.base.errors import InputError, describe, suggest
from bayeserr.data.dataset import (
    DEFAULT_COLUMNS,
    Columns,
    RowAccount,
    _build_dataset,
    _check_ids,
    _codes,
    _fail_rows,
    _MultiRows,
    _Rows,
    _select_models,
    _validated_labels,
    _validated_scores,
    resolve_columns,
)
from bayeserr.data.memory import _check_load_memory
from bayeserr.data.readers import (
    PARTIAL_RULE,
    TABLE_FORMATS,
    NotALog,
    UnscoredLog,
    check_input_format,
    finish_task_groups,
)
from bayeserr.data.readers.options import check_options
from bayeserr.data.readers.registry import ignored_options
from bayeserr.data.tables import STDIN, _check_unique_columns, _read_table

# ---------------------------------------------------------------------- public
_COLUMN_ARGS = {"model_col": "--model-col", "question_col": "--question-col", "score_col": "--score-col",
                "cluster_col": "--cluster-col", "sample_col": "--sample-col", "task_col": "--task-col",
                "human_col": "--human-col", "name": "name"}


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
         sample_col=None, task_col=None, no_cluster: bool = False, models=None, name: str | None = None,
         dropped=(), input_format: str = "auto", where=None, human_col=None, labels=None,
         **reader_options) -> xr.Dataset:
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
    task_col : str, optional
        Column with the task of each question (default: ``task`` if present;
        eval logs: the task of the run), for suite scores over several tasks
        (``docs/methods.md`` §3.12).  Each question belongs to one task.
    no_cluster : bool
        Ignore a cluster column even when present.
    models : list of str, optional
        Keep only these models (the other rows are counted as dropped).
        Row numbers in error messages still refer to the source rows.
    name : str, optional
        What to call the input in messages and reports (default: its path).
    where : str or list of str, optional
        Row filters, all of which must hold (:mod:`bayeserr.data.filters`:
        ``col=value``, ``col=a,b``, ``col!=value``, ``col<N``, ``col<=N``,
        ``col>N``, ``col>=N``), applied before ``models``; the rows removed
        are counted as dropped under ``--where EXPR``.  Columns of tables,
        and for eval logs ``task``, ``model``, ``score``, ``sample`` and any
        Inspect sample metadata field (``subject`` or ``metadata.subject``).
    input_format : {"auto", "table", "inspect", "lm-eval", "csv", "tsv", "jsonl", "parquet"}
        Reader for eval logs (:mod:`bayeserr.data.readers`); ``auto`` picks from
        the path.  ``csv``/``tsv``/``jsonl``/``parquet`` name a table format
        (for ``"-"``, which is otherwise sniffed: Parquet, JSONL, TSV, else
        CSV).
    **reader_options
        The eval-log readers' options (:data:`bayeserr.data.readers.options.OPTIONS`),
        checked once: ``scorer``, ``cluster_field`` and ``human_scorer`` (Inspect),
        ``metric`` and ``filt`` (lm-eval), and the three below; each reader takes its
        own.  Without ``cluster_field`` (and ``no_cluster``), Inspect logs are clustered
        by the metadata field their own metrics cluster by (e.g.
        ``ci_clustered(cluster="repo")``), noted in ``rows["notes"]``.
    duplicate_runs : {"error", "latest"}
        Eval logs only: two runs of one task with the same model on the same
        samples (within one input, e.g. a folder) are an error naming the
        files, or (``"latest"``) the newest run is used and the older ones
        are counted as dropped.
    partial_runs : {"exclude", "include"}
        Inspect logs whose status is not ``"success"`` (a run cancelled,
        failed or still running: only the samples that finished first).
        ``"exclude"`` (default): in a folder, or among several inputs, they
        are left out and counted as dropped with their status and sample
        counts (a note gives the rule); a log file given alone is used, with
        a note giving its status.  ``"include"``: used, each named in a note.
    in_progress : {"exclude", "read"}
        Inspect ``.eval`` logs of a run still in progress (no ``header.json``
        yet): an error alone and skipped in a folder (``"exclude"``, default),
        or read from Inspect's journal, the samples written so far, with a
        note (``"read"``: ``bayeserr watch``;
        :func:`bayeserr.data.readers.inspect_logs.read_inspect`).
        An ``.eval`` without ``header.json`` (a run in progress) is an error
        alone and skipped, counted as dropped, otherwise.
    dropped : list of (reason, count)
        Rows a caller already removed, for the row accounting.
    human_col, labels, human_scorer : optional
        **Human labels** of the answers (judge-scored evals with a
        human-labelled subset), from one of three sources:

        * ``human_col``: a column of the results table holding a human label
          of the row's answer, a number in [0, 1] like the scores, empty
          (NaN) where the answer is not labelled.  Never guessed: only a
          column named here is used.  With several table inputs, every one
          of them must have it.
        * ``labels``: a second table (a path, as for a results table, or a
          DataFrame) with one row per labelled answer, joined to the answers
          on model, question id and sample (the column names of
          ``model_col``, ``question_col`` and ``sample_col``, or their
          defaults; ids compared as text); its label column is ``human_col``
          (default ``human``).  The model column may be left out when the
          results hold one model, the sample column when each model
          answered each question once.  Every label must match an answer of
          the results read (before ``where`` and ``models``), and no answer
          may have two labels.
        * ``human_scorer`` (Inspect logs): the name of a second scorer in the
          logs whose value is the human label (e.g. a manual grade added with
          ``inspect score``), converted as the score is (C = 1, I = 0, ...); a
          sample without a score from it is unlabelled.  ``scorer`` still
          chooses the judge's score (by default the first scorer other than
          this one).

        The labels become the data variable ``human`` and
        ``columns["human"]``; ``where`` filters and ``models`` keep the labels
        of the rows they keep.  A note in ``rows["notes"]`` says how many
        answers carry a label, per model.  Labels outside [0, 1] or not
        numbers, labels of no answer, two labels for one answer, two sources
        at once, and no labelled answer at all are errors.

    Returns
    -------
    xarray.Dataset
        ``score`` on ``(model, question, sample)``, NaN where a model has no
        answer; ``human`` on the same dimensions (NaN where unlabelled) when
        human labels are given; ``cluster`` coordinate on ``question`` when clustered; attrs
        ``source``, ``inputs`` (the paths read, a labels file last), ``columns`` and ``rows``
        (the row accounting; with several inputs, ``rows["inputs"]`` holds
        each input's; ``rows["notes"]``, when present, says how the rows
        were read where that drops no row, e.g. the cluster field taken
        from an Inspect log); for lm-eval output with task groups,
        ``task_groups`` (JSON text: read it with :func:`task_groups`): the
        groups with a task in the data, their leaf tasks, lm-eval's weighting
        and published scores (:func:`bayeserr.data.readers.lmeval.read_lmeval`);
        a group some of whose tasks are not in the data (filtered out with
        ``where``, or not run) is kept with those tasks listed as ``missing``;
        with human labels, ``human_source``: where they came from, in words.

    Raises
    ------
    InputError
        For every problem with the input or the arguments (what, where, fix).
    """
    # size: the public API's keyword options; one pass over the inputs sharing the row accounting
    from bayeserr.data.filters import apply_where, parse_where_list

    args = dict(model_col=model_col, question_col=question_col, score_col=score_col,
                cluster_col=cluster_col, sample_col=sample_col, task_col=task_col, name=name,
                human_col=human_col)
    _check_arguments(args)
    check_input_format(input_format)
    reader_options = check_options(reader_options)
    human_scorer = reader_options["human_scorer"]
    _check_human_arguments(human_col, labels, human_scorer, reader_options["scorer"])
    args["reader_options"] = reader_options
    args["human_scorer"] = human_scorer
    args["human_col"] = human_col if labels is None else None  # with labels: the labels' column
    args["labels_col"] = (human_col or _HUMAN) if labels is not None else None
    models = _model_list(models)
    dropped = _dropped_list(dropped)
    conditions = parse_where_list(where)
    fields = tuple(dict.fromkeys(c.column for c in conditions))
    if labels is not None or human_scorer is not None:  # the labels' column, not a metadata field
        fields = tuple(f for f in fields if f != (human_col or _HUMAN))
    inputs = _inputs(source)
    if isinstance(labels, (str, os.PathLike)) and os.fspath(labels) == STDIN \
            and any(not isinstance(i.source, pd.DataFrame) and os.fspath(i.source) == STDIN for i in inputs):
        raise InputError("standard input ('-') is given both as results and as --labels; it can be read "
                         "once. Give the labels (or the results) as a file.")
    several = len(inputs) > 1
    parts, accounts = [], []  # accounts: (label, RowAccount or the index of its part), input order
    skipped, notes = [], []  # among several inputs: files that are not logs; notes of skipped logs
    for i, inp in enumerate(inputs):
        try:
            parts.append(_read_input(inp, args, input_format, no_cluster, fields,
                                     None if several else name, several, i))
            accounts.append((parts[-1].label, len(parts) - 1))
        except NotALog as exc:  # among several inputs (a pattern matching logs.json), skipped
            if not several:
                raise
            skipped.append(f"{os.fspath(inp.source)} ({exc.kind})")
        except UnscoredLog as exc:  # among several inputs, skipped and counted, as in a folder
            if not several:
                raise
            where = os.fspath(inp.source)
            accounts.append((where, RowAccount(exc.n_samples, 0, ((exc.why(Path(where).name),
                                                                   exc.n_samples),))))
            if exc.reason is not None:
                notes.append(PARTIAL_RULE)
    idle = ignored_options(reader_options, {p.reader for p in parts})
    if idle:
        notes.append(idle)
    if skipped:
        notes.insert(0, f"Not logs, skipped: {', '.join(skipped[:6])}"
                        f"{f' and {len(skipped) - 6} more' if len(skipped) > 6 else ''}.")
    if not parts:
        labels = [a for a, _ in accounts] or [os.fspath(i.source) for i in inputs]
        why = ("no complete log: " + "; ".join(r for _, a in accounts for r, _ in a.dropped)
               + f". {PARTIAL_RULE}") if PARTIAL_RULE in notes else \
            "no scored samples in any input. Score the logs (inspect score) first."
        raise InputError(f"{_combined_label(labels)}: {why}")
    if several:
        label = name or _combined_label([a for a, _ in accounts])
        _check_log_clusters(parts, label)
        _check_human_inputs(parts, args, label)
        df, rows = _combine(parts, args, no_cluster, label)
        book = _Book(parts, accounts, rows.part_of_row, dropped, notes)
        human_in = args["human_col"] or _HUMAN
        human_in = human_in if (args["human_col"] or human_scorer) and human_in in df.columns else None
    else:
        part = parts[0]
        df, rows, label = part.df, part.rows, part.label
        book = _Book(parts, accounts, None, dropped, notes)
        _check_human_inputs(parts, args, label)
        human_in = _HUMAN if part.log and _has_scorer_labels(part, args) else \
            None if part.log else args["human_col"]
    cols = resolve_columns(df, label, model_col=model_col, question_col=question_col,
                           score_col=score_col, cluster_col=cluster_col,
                           sample_col=sample_col, task_col=task_col, no_cluster=no_cluster,
                           human_col=human_in)
    _check_unique_columns(df, label, {c for c in asdict(cols).values() if c})
    if len(df) == 0:
        what = ("the DataFrame has no rows" if isinstance(parts[0].source, pd.DataFrame) and not several
                else "no data rows")
        raise InputError(f"{label}: {what}. A results table needs one row per graded answer.")
    labels_where = human_source = None
    if labels is not None:
        df, cols, human_source, labels_where = _join_labels(df, cols, labels, args, label,
                                                            any(p.log for p in parts))
    elif cols.human is not None:
        human_source = (f"Inspect scorer '{human_scorer}'" if any(p.log for p in parts) and human_scorer
                        else f"column '{cols.human}'")
        if several and human_scorer and args["human_col"] and any(not p.log for p in parts):
            human_source = f"column '{cols.human}' of the tables, Inspect scorer '{human_scorer}' of the logs"
    filtered = False
    if conditions:
        available = [f for p in parts for f in p.fields]
        _, drops = apply_where(df, conditions, where=label, available=available)
        keep = np.ones(len(df), dtype=bool)
        for reason, removed in drops:
            book.drop(reason, removed)
            keep &= ~removed
        filtered = not keep.all()
        df = _keep(df, keep, rows, book)
    keep = _select_models(df, cols, models, rows, left_out=[r for p in parts for r, _ in p.dropped])
    if keep is not None:
        book.drop("model not selected", ~keep)
        filtered = filtered or not keep.all()
        df = _keep(df, keep, rows, book)
    df = df.reset_index(drop=True)
    _check_load_memory(label, len(df), "index")
    _check_ids(df, cols, rows)
    scores = _validated_scores(df, cols, rows)
    human = None
    if cols.human is not None:
        human = (df[cols.human].to_numpy(dtype=np.float64) if labels is not None  # checked in the labels
                 else _validated_labels(df, cols.human, rows))
        note = _human_note(df, cols, human, human_source, label, filtered, parts, human_scorer)
        book.notes = tuple(dict.fromkeys([*book.notes, note]))
    groups = _task_groups_of(parts, df, cols, book)
    ds = _build_dataset(df, cols, scores, rows, book.account(), human=human)
    ds.attrs["inputs"] = [os.fspath(i.source) for i in inputs if not isinstance(i.source, pd.DataFrame)]
    if labels_where is not None and not isinstance(labels, pd.DataFrame):
        ds.attrs["inputs"].append(os.fspath(labels))
    if human is not None:
        ds.attrs["human_source"] = human_source
    if groups:
        ds.attrs["task_groups"] = json.dumps(groups, ensure_ascii=False)
    ds.attrs["readers"] = sorted({p.reader for p in parts})  # e.g. watch: every input an Inspect log
    kept = {str(m) for m in ds["model"].values}
    partial = [r for p in parts for r in p.partial_runs if r["model"] in kept]
    if partial:
        ds.attrs["partial_runs"] = json.dumps(partial, ensure_ascii=False)
    return ds


def partial_runs(ds) -> list[dict]:
    """The partial runs (Inspect logs whose status is not 'success') whose samples the dataset
    holds: ``file``, ``model``, ``task``, ``status``, ``scored``, ``planned`` and ``asked``
    (read with ``partial_runs="include"``, rather than a log read on its own); ``[]`` for other data."""
    raw = getattr(ds, "attrs", {}).get("partial_runs")
    if not raw:
        return []
    try:
        out = json.loads(raw)
    except (TypeError, ValueError):
        return []
    return [r for r in out if isinstance(r, dict) and {"model", "status"} <= set(r)]


# ------------------------------------------------------------------ human labels
#: the column of the human labels: an Inspect log's (``human_scorer``), and a labels table's default
_HUMAN = "human"
#: at most this many models are named in the note on how many answers are labelled
_NOTE_MODELS = 12


def _check_human_arguments(human_col, labels, human_scorer, scorer) -> None:
    """The human-label options on their own: one source, and a scorer other than the judge's."""
    if labels is not None and not isinstance(labels, (str, os.PathLike, pd.DataFrame)):
        raise InputError(f"labels takes the path of a table of human labels (CSV, TSV, JSONL or Parquet) "
                         f"or a pandas DataFrame; got {describe(labels)}.")
    if isinstance(labels, (str, os.PathLike)) and not os.fspath(labels).strip():
        raise InputError("--labels takes the path of a table of human labels; got an empty path.")
    if labels is not None and human_scorer is not None:
        raise InputError("human labels from two sources: --labels (a table of labels) and --human-scorer "
                         f"'{human_scorer}' (a scorer of the logs). Give one source.")
    if human_scorer is not None and human_scorer == scorer:
        raise InputError(f"--scorer and --human-scorer both name '{scorer}': the judge's score and the "
                         "human label come from two different scorers. Name the judge's with --scorer "
                         "and the human one with --human-scorer.")


def _has_scorer_labels(part, args) -> bool:
    """An Inspect log read with ``human_scorer`` (its rows carry ``human``)."""
    return bool(part.log and args["human_scorer"] and _HUMAN in part.df.columns and part.scorers)


def _check_human_inputs(parts: list, args, label: str) -> None:
    """The human-label options against the inputs read: a column for tables, a scorer for logs."""
    if args["human_col"] and all(p.log for p in parts):
        raise InputError(f"{label}: --human-col names a column of a results table, and the input"
                         f"{'s are' if len(parts) > 1 else ' is'} eval logs. For Inspect logs name the "
                         "scorer of the human labels with --human-scorer; for any input, join a table "
                         "of labels with --labels FILE (its label column named by --human-col).")
    if args["human_scorer"] and not any(_has_scorer_labels(p, args) for p in parts):
        raise InputError(f"{label}: --human-scorer names a scorer of Inspect logs, and no input is one. "
                         "For a results table, name its column of human labels with --human-col; for "
                         "any input, join a table of labels with --labels FILE.")


def _key_text(series: pd.Series) -> np.ndarray:
    """Each value of an id column as the text ids are compared as (:func:`_codes`); None where empty."""
    codes, labels = _codes(series)
    out = np.empty(len(codes), dtype=object)
    out[:] = None
    found = codes >= 0
    out[found] = labels[codes[found]]
    return out


def _read_labels(labels, args) -> tuple[pd.DataFrame, _Rows]:
    """The labels table, read as a results table is (id columns as text)."""
    if isinstance(labels, pd.DataFrame):
        where = "labels DataFrame"
        return _as_frame(labels, where), _Rows(where, len(labels), unit="rows",
                                               note=", positions counting from 1")
    from bayeserr.data.readers import detect
    path = os.fspath(labels)
    if path != STDIN and Path(path).is_dir():
        raise InputError(f"{path}: a folder; --labels takes one table of human labels (CSV, TSV, JSONL "
                         "or Parquet), one row per labelled answer.")
    if path != STDIN and detect(path) != "table":
        raise InputError(f"{path}: an eval log, not a table of labels. --labels takes a table (CSV, TSV, "
                         "JSONL or Parquet) with one row per labelled answer; for a scorer of Inspect "
                         "logs that holds the human labels, use --human-scorer NAME.")
    names = _label_names(args)
    ids = [names["model"], names["question"], names["sample"]]
    df, lines, fmt, where = _read_table(path, ids, check_columns=set(names.values()), empty_only=[names["human"]])
    if fmt == "jsonl":
        return df, _Rows(where, len(df), numbers=lines, unit="lines", note="")
    if fmt == "parquet":
        return df, _Rows(where, len(df), note=", counting from 1")
    return df, _Rows(where, len(df))


def _label_names(args) -> dict:
    """The columns of a labels table: the id columns of the results (options or defaults)
    and the label column (``human_col``, default ``human``)."""
    return {"model": args["model_col"] or DEFAULT_COLUMNS["model"],
            "question": args["question_col"] or DEFAULT_COLUMNS["question"],
            "sample": args["sample_col"] or DEFAULT_COLUMNS["sample"],
            "human": args["labels_col"]}


def _join_labels(df: pd.DataFrame, cols, labels, args, label: str, logs: bool):
    """The results with the labels of a labels table in a column of their own.

    Returns ``(df, cols, source in words, where the labels came from)``.  Every
    label must match one answer; a label without a sample column matches the
    answers of its model and question, so only when there is one.
    """
    column = args["labels_col"]
    names = _label_names(args)
    if column in df.columns:
        raise InputError(f"{label}: human labels from two sources: the results have a column '{column}', "
                         f"and --labels gives labels in its column '{column}'. Give one source: drop "
                         f"--labels to use the results' column (--human-col {column}), or remove or "
                         "rename that column of the results to use the labels table.")
    lab, rows = _read_labels(labels, args)
    where = rows.where
    present = [str(c) for c in lab.columns]
    n_models = len(pd.unique(df[cols.model].dropna()))
    layout = (f"The labels table has one row per labelled answer: the ids of the answer as in the "
              f"results ({names['model']}, {names['question']}, and {names['sample']} when a model "
              f"answered a question more than once) and the label in '{column}' (--human-col names it).")
    for key, need in (("question", True), ("human", True), ("model", n_models > 1)):
        if need and names[key] not in present:
            what = {"question": "the question id", "human": "the human label",
                    "model": f"the model (the results hold {n_models} models)"}[key]
            raise InputError(f"{where}: no '{names[key]}' column for {what}. {layout}"
                             f"{suggest(names[key], present)} Columns present: {', '.join(present) or 'none'}.")
    if len(lab) == 0:
        raise InputError(f"{where}: no labels (the table has no rows). {layout}")
    has_model = names["model"] in present
    has_sample = names["sample"] in present
    if has_sample and cols.sample is None:
        raise InputError(f"{where}: the labels have a '{names['sample']}' column, but the results have "
                         "no samples (one answer per model and question). Remove that column from the "
                         "labels, or name the results' sample column with --sample-col.")
    lab_cols = Columns(model=names["model"] if has_model else None, question=names["question"],
                       score=column, sample=names["sample"] if has_sample else None)
    _check_ids(lab, lab_cols, rows)
    values = _validated_labels(lab, column, rows)
    keys = [k for k, used in (("model", has_model), ("question", True), ("sample", has_sample)) if used]
    right = pd.DataFrame({k: _key_text(lab[getattr(lab_cols, k)]) for k in keys})
    fields = ", ".join(names[k] for k in keys)
    dup = right.duplicated(keep=False).to_numpy()
    _fail_rows(rows, dup, f"two labels for one answer ({fields})",
               "Give each answer one label: remove the repeated rows"
               + (f" (several answers to one question: add the '{names['sample']}' column)."
                  if not has_sample and cols.sample is not None else "."))
    left = pd.DataFrame({k: _key_text(df[getattr(cols, k)]) for k in keys})
    left["_row"] = np.arange(len(df))
    right["_label"] = np.arange(len(lab))
    matched = left.merge(right, on=keys, how="inner", sort=False)
    counts = np.bincount(matched["_label"].to_numpy(), minlength=len(lab))
    if cols.sample is not None and not has_sample:
        _fail_rows(rows, counts > 1, f"a label without a '{names['sample']}' matches several answers "
                   "(samples) of its model and question",
                   f"Add the '{names['sample']}' column to the labels: the sample of each labelled answer, "
                   "as in the results.")
    unmatched = np.flatnonzero(counts == 0)
    if len(unmatched):
        shown = "; ".join(", ".join(f"{names[k]} '{right[k].iat[i]}'" for k in keys) for i in unmatched[:3])
        hint = (" (the question ids of eval logs are '<task>/<sample id>', e.g. 'popularity/3')"
                if logs else "")
        raise InputError(f"{where}: {len(unmatched)} of {len(lab)} label(s) match no answer of the results "
                         f"({rows.describe(unmatched)}), e.g. {shown}. Labels are joined to the answers on "
                         f"({fields}), compared as text{hint}. Check those ids, or remove the labels of "
                         "answers that are not in the results.")
    human = np.full(len(df), np.nan)
    human[matched["_row"].to_numpy()] = values[matched["_label"].to_numpy()]
    df = df.assign(**{column: human})
    source = f"{where}, column '{column}', joined on {fields}"
    return df, replace(cols, human=column), source, where


def _human_note(df, cols, human, source, label, filtered, parts, human_scorer) -> str:
    """The row-accounting note on how many answers carry a human label (per model when
    several); an error when none does."""
    labelled = ~np.isnan(human)
    n = int(labelled.sum())
    if n == 0:
        after = " (of the answers --where and models kept)" if filtered else ""
        scorers = list(dict.fromkeys(s for p in parts for s in p.scorers))
        if filtered:
            fix = ("The answers with a label were all left out: keep some of them (check --where and "
                   "the models selected), or drop the human-label option.")
        elif human_scorer and scorers:
            fix = (f"No sample has a score from scorer '{human_scorer}'.{suggest(human_scorer, scorers)} "
                   f"Scorers in the logs: {', '.join(scorers)}.")
        else:
            fix = ("Fill in the labels of the labelled answers (empty where an answer is not "
                   "labelled), or check the column.")
        raise InputError(f"{label}: none of the {len(df):,} answers used has a human label ({source})"
                         f"{after}. {fix}")
    note = f"{n:,} of {len(df):,} answers have a human label ({source})"
    codes, models = _codes(df[cols.model])
    if len(models) > 1:
        have = np.bincount(codes, weights=labelled, minlength=len(models)).astype(int)
        total = np.bincount(codes, minlength=len(models))
        each = [f"{m} {h:,} of {t:,}" for m, h, t in zip(models, have, total)]
        more = len(each) - _NOTE_MODELS
        note += "; per model: " + ", ".join(each[:_NOTE_MODELS]) + (f" and {more} more" if more > 0 else "")
    return note + "."


def _task_groups_of(parts: list, df: pd.DataFrame, cols, book) -> dict:
    """The lm-eval task groups of the inputs, for the tasks and models left after ``where`` and
    ``models`` (:func:`bayeserr.data.readers.lmeval.finish_task_groups`); notes go to the row accounting."""
    found = [p.task_groups for p in parts if p.task_groups]
    if not found or cols.task is None:
        return {}
    notes: list = []
    groups = finish_task_groups(found, pd.unique(df[cols.task].astype(str)),
                                pd.unique(df[cols.model].astype(str)), notes)
    if notes:
        book.notes = tuple(dict.fromkeys([*book.notes, *notes]))
    return groups


def task_groups(ds) -> dict:
    """The lm-eval task groups of a loaded dataset (``{}`` when there are none).

    :func:`load` keeps them in ``ds.attrs["task_groups"]`` as JSON text (dataset attributes
    must be text or numbers to be written to netCDF); this gives them back as a dict
    ``{group: {"tasks", "children", "metric", "weighting", "weighting_from", "missing",
    "published": {model: {"score", "stderr", "n", "file", "same_run", "fits"}}, "declared"}}``
    (:func:`bayeserr.data.readers.lmeval.read_lmeval`).  ``missing`` lists the group's tasks not in
    the data (a ``where`` filter or a task not run): such a group's score is not lm-eval's.
    """
    raw = getattr(ds, "attrs", {}).get("task_groups")
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        out = json.loads(raw)
    except (TypeError, ValueError):
        raise InputError("the dataset's 'task_groups' attribute is not the JSON text bayeserr.load "
                         "writes; drop it (del ds.attrs['task_groups']) or load the data again.") from None
    if not isinstance(out, dict):
        raise InputError("the dataset's 'task_groups' attribute is not a JSON object; drop it or load "
                         "the data again.")
    return out


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
    notes: list = field(default_factory=list)  #: reader notes for the row accounting
    log_cluster: str | None = None  #: Inspect: the metadata field the clusters came from
    task_groups: dict | None = None  #: lm-eval: the task groups (readers.read_lmeval)
    scorers: list = field(default_factory=list)  #: Inspect: the scorers of the samples
    reader: str = "table"  #: the reader it was read by (a name of the reader registry)
    partial_runs: list = field(default_factory=list)  #: Inspect: the partial runs used (inspect_logs._partial_record)

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

    def __init__(self, parts: list, accounts: list, part_of_row, dropped, notes=()):
        self.labels = [label for label, _ in accounts]
        self.accounts = [parts[a].account() if isinstance(a, int) else a for _, a in accounts]
        self.index = np.array([i for i, (_, a) in enumerate(accounts) if isinstance(a, int)])
        self.part_of_row = part_of_row
        self.extra = list(dropped)  # rows the caller removed before load()
        self.notes = tuple(dict.fromkeys([*notes, *(n for p in parts for n in p.notes)]))

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
                           sum(a.used for a in self.accounts), tuple(dropped), notes=self.notes)
        if self.part_of_row is None:
            return total
        return RowAccount(total.read, total.used, total.dropped, tuple(zip(self.labels, self.accounts)),
                          self.notes)


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


def _read_input(inp: _Input, args, input_format, no_cluster, fields, name,
                several: bool, index: int) -> _Part:
    source = inp.source
    if isinstance(source, pd.DataFrame):
        if input_format not in ("auto", "table"):
            raise InputError(f"input_format={input_format!r} reads files; a DataFrame is already a table "
                             "(drop input_format, or give 'table').")
        label = name or (f"DataFrame {index + 1}" if several else "DataFrame")
        df = _as_frame(source, label)
        part = _Part(source, df, _Rows(label, len(df), unit="rows", note=", positions counting from 1"),
                     [], label, False, None, [], task_groups=_attrs_groups(source))
    else:
        path = os.fspath(source)
        if not isinstance(path, str) or not path.strip():
            raise InputError(f"load() needs the path of a results file (or '-' for standard input); "
                             f"got {describe(source)}.")
        df, rows, more, log, seen, notes = _read_source(path, name, args, input_format, no_cluster, fields,
                                                        several)
        part = _Part(source, df, rows, more, rows.where, log, path, seen, notes["notes"],
                     notes["log_cluster"], notes["task_groups"], notes["scorers"], notes["reader"],
                     notes.get("partial_runs", []))
    if inp.model is not None:
        part.df = _name_model(part, inp.model, args)
        part.partial_runs = [{**r, "model": inp.model} for r in part.partial_runs]
        if part.task_groups:  # the published scores are the named model's (the input holds one)
            renamed = {}
            for g, e in part.task_groups.items():
                pubs = list(e.get("published", {}).values())
                renamed[g] = {**e, "published": {inp.model: pubs[0]} if pubs else {}}
            part.task_groups = renamed
    return part


def _attrs_groups(df: pd.DataFrame) -> dict | None:
    """The task groups a DataFrame from a reader carries (``df.attrs["task_groups"]``)."""
    groups = df.attrs.get("task_groups")
    return groups if isinstance(groups, dict) and groups else None


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


def _read_source(path, name, args, input_format, no_cluster, fields=(), several: bool = False):
    """``(DataFrame, _Rows, dropped, read by a log reader, metadata fields seen, reader notes)``
    from a path or ``-``; the notes are ``{"notes": [...], "log_cluster": field or None}``.

    Inspect logs without ``--cluster-field`` are clustered by the field their
    own metrics cluster by (:func:`bayeserr.data.readers.inspect_logs.read_inspect`);
    ``no_cluster`` reads no cluster field at all."""
    from types import MappingProxyType

    from bayeserr.data.readers.registry import READERS, detect, read_logs
    options = args["reader_options"]
    if no_cluster:  # checked already: only a value taken away
        options = MappingProxyType({**options, "cluster_field": None})
    # the reader, chosen once (a folder is searched once): the part keeps its name
    reader = input_format if input_format in READERS else detect(path) if input_format == "auto" else "table"
    logs = read_logs(path, reader, options, fields=[f for f in fields if f not in _LOG_COLUMNS],
                     cluster_from_log=not no_cluster, among_others=several)
    if logs is not None:
        df, dropped = logs
        origin = df.attrs.pop("row_origin", None)  # first: pandas copies attrs on every operation
        seen = df.attrs.pop("fields", [])
        notes = {"notes": list(df.attrs.pop("notes", [])), "log_cluster": df.attrs.pop("log_cluster", None),
                 "task_groups": df.attrs.pop("task_groups", None),
                 "scorers": list(df.attrs.pop("scorers", [])), "reader": reader,
                 "partial_runs": list(df.attrs.pop("partial_runs", []))}
        where = name or path
        return df, _Rows(where, len(df), origin=origin), list(dropped), True, list(seen), notes
    ids = [args[k] or DEFAULT_COLUMNS[f] for k, f in
           (("model_col", "model"), ("question_col", "question"), ("cluster_col", "cluster"),
            ("sample_col", "sample"), ("task_col", "task"))]
    used = set(ids) | {args["score_col"] or "score", args["sample_col"] or "sample",
                       DEFAULT_COLUMNS["n_samples"], DEFAULT_COLUMNS["n_correct"]} | set(fields)
    if args.get("human_col"):
        used.add(args["human_col"])
    if no_cluster and not args["cluster_col"]:
        used.discard(DEFAULT_COLUMNS["cluster"])
    fmt = input_format if input_format in TABLE_FORMATS else None
    df, lines, fmt, where = _read_table(path, ids, fmt=fmt, check_columns=used, categorical=True,
                                        empty_only=[args["human_col"]] if args.get("human_col") else [])
    where = name or where
    if fmt == "jsonl":
        rows = _Rows(where, len(df), numbers=lines, unit="lines", note="")
    elif fmt == "parquet":
        rows = _Rows(where, len(df), note=", counting from 1")
    else:
        rows = _Rows(where, len(df))
    return df, rows, [], False, [], {"notes": [], "log_cluster": None, "task_groups": None, "scorers": [],
                                     "reader": "table"}


_FIELDS = ("model", "question", "score", "cluster", "sample", "task")


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
    human = args["human_col"] or _HUMAN  # the column of the human labels in the combined table
    with_human = bool(args["human_col"] or args.get("human_scorer"))
    frames, resolved = [], []
    for p in parts:
        flags = {} if p.log else {f"{f}_col": args[f"{f}_col"] for f in _FIELDS}
        own = (_HUMAN if _has_scorer_labels(p, args) else None) if p.log else args["human_col"]
        cols = resolve_columns(p.df, p.label, no_cluster=no_cluster, human_col=own, **flags)
        _check_unique_columns(p.df, p.label, {c for c in asdict(cols).values() if c})
        rename = {}
        if own is not None and own != human:
            if human in p.df.columns:
                raise InputError(f"{p.label}: the column '{own}' holds the human labels, and the column "
                                 f"'{human}' (the human labels of the other inputs) is there too; rename or "
                                 "remove one of them.")
            rename[own] = human
        elif own is None and with_human and human in p.df.columns:
            raise InputError(f"{p.label}: a column '{human}', the name the human labels of the other inputs "
                             "are given, is not this input's human labels: rename or remove it, or give "
                             f"--human-col {human} to use it as this table's human labels.")
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
        df = _fill_labels(df, targets, "cluster", np.asarray(has_cluster)[part_of_row])
    has_task = [c.task is not None for c in resolved]
    if any(has_task) and not all(has_task):
        df = _fill_labels(df, targets, "task", np.asarray(has_task)[part_of_row])
        if df[targets["task"]].isna().any() and not args["task_col"]:
            df = df.drop(columns=targets["task"])  # tasks only where every question has one
    _check_across_inputs(df, targets, bool(with_sample), rows, [p.label for p in parts])
    return df, rows


def _check_log_clusters(parts: list[_Part], label: str) -> None:
    """Inputs clustered by the fields their logs' metrics name must name one field."""
    found = {p.log_cluster: p.label for p in parts if p.log_cluster is not None}
    if len(found) > 1:
        shown = ", ".join(f"'{f}' ({where})" for f, where in found.items())
        raise InputError(f"{label}: the logs' metrics cluster by different metadata fields: {shown}; "
                         "the report uses one cluster for every input. Choose it: --cluster-field FIELD "
                         "clusters by a metadata field, --no-cluster by none.")


def _first_sample(columns):
    """The sample id inputs without a sample column get: the smallest of the others'."""
    values = pd.concat([c.dropna() for c in columns], ignore_index=True)
    numbers = pd.to_numeric(values, errors="coerce")
    if len(values) and numbers.notna().all():
        low = numbers.min()
        return int(low) if float(low).is_integer() else float(low)
    return values.iloc[0] if len(values) else 0


def _fill_labels(df, targets, key: str, labelled_row: np.ndarray) -> pd.DataFrame:
    """Rows of inputs without clusters (``key="cluster"``) or tasks take their
    question's label from the other inputs."""
    column, question = targets[key], targets["question"]
    values = df[column].astype(object)
    q_text = df[question].astype(str)
    known = labelled_row & values.notna().to_numpy()
    of_question = pd.Series(values[known].to_numpy(), index=q_text[known].to_numpy())
    of_question = of_question[~of_question.index.duplicated()]
    need = ~labelled_row
    values[need] = q_text[need].map(of_question).to_numpy()
    return df.assign(**{column: values})


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
