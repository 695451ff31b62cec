"""Task × model summary tables, as multi-task leaderboards publish them (HELM, MTEB style):
one row per (model, task) with a score and its standard error or its number of questions,
where the per-question results are not public (``docs/methods.md`` §3.15).

:func:`load_task_summary` reads one (CSV, TSV, JSONL, Parquet; a file or a DataFrame) and
checks it: every score a number in [0, 1] (a percentage is an error that says to divide by
100), one row per (model, task), a standard error ≥ 0 or a number of questions ≥ 2 on every
row.  Where only n is given the SE is the Bernoulli one, √(p(1 − p)/n) — right for
accuracies over independent questions, too small with clusters (the summary says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError, row_list, suggest
from bayeserr.data.dataset import RowAccount


@dataclass(frozen=True)
class TaskSummary:
    """A validated summary: task means and their sampling variances, models × tasks
    (NaN where a model has no row for a task)."""

    models: tuple
    tasks: tuple
    means: np.ndarray       #: (M, T)
    var: np.ndarray         #: (M, T) squared standard errors
    rows: RowAccount
    source: str
    se_from: str            #: "se" (given) or "n" (Bernoulli, from the number of questions)
    columns: dict


def load_task_summary(source, *, model_col: str = "model", task_col: str = "task", score_col: str = "score",
                      se_col: str | None = "se", n_col: str | None = "n", name: str | None = None) -> TaskSummary:
    """Read and validate a task × model summary table (module docstring).  ``se_col`` or
    ``n_col`` must be present (the SE wins where both are); errors name the rows (data rows
    counting from 1 after the header) and the fix."""
    if isinstance(source, pd.DataFrame):
        df, label = source.reset_index(drop=True), name or "DataFrame"
    else:
        from bayeserr.data.tables import read_table
        label = name or str(source)
        df = read_table(source, id_columns=(model_col, task_col))
    for c in (model_col, task_col, score_col):
        if c not in df.columns:
            raise InputError(f"{label}: no column '{c}'.{suggest(c, df.columns)} Columns present: "
                             f"{', '.join(map(str, df.columns))}. Name it with --{_flag(c, model_col, task_col)}.")
    have_se, have_n = se_col in df.columns if se_col else False, n_col in df.columns if n_col else False
    if not (have_se or have_n):
        raise InputError(f"{label}: each row needs its standard error or its number of questions: no column "
                         f"'{se_col}' or '{n_col}'. Columns present: {', '.join(map(str, df.columns))}. Name "
                         "them with --se-col or --n-col.")
    if len(df) == 0:
        raise InputError(f"{label}: the table has no data rows.")
    line = np.arange(1, len(df) + 1)
    model, task = df[model_col].astype("string"), df[task_col].astype("string")
    _fail(label, line, (model.isna() | (model.str.strip() == "")).to_numpy(), f"the model ('{model_col}') is empty",
          "Fill in every row's model, or remove those rows.")
    _fail(label, line, (task.isna() | (task.str.strip() == "")).to_numpy(), f"the task ('{task_col}') is empty",
          "Fill in every row's task, or remove those rows.")
    score = _numbers(df, score_col, label, line)
    _fail(label, line, (score < 0) | (score > 1), f"the score ('{score_col}') is outside [0, 1]",
          "Scores are shares in [0, 1]: divide percentages by 100.")
    se_from = "se" if have_se else "n"
    if have_se:
        se = _numbers(df, se_col, label, line, missing_ok=have_n)
        if have_n:  # the SE where given, else from n
            se = np.where(np.isnan(se), _bernoulli_se(score, _numbers(df, n_col, label, line)), se)
        _fail(label, line, se < 0, f"the standard error ('{se_col}') is negative", "Standard errors are ≥ 0.")
    else:
        n = _numbers(df, n_col, label, line)
        _fail(label, line, n < 2, f"the number of questions ('{n_col}') is below 2", "Each task needs ≥ 2 questions.")
        se = _bernoulli_se(score, n)
    key = model.str.cat(task, sep="\x00")
    dup = key.duplicated(keep=False).to_numpy()
    _fail(label, line, dup, "a (model, task) pair has more than one row",
          "Keep one row per model and task (average runs before, or name the run in the model).")
    models, tasks = tuple(sorted(set(model))), tuple(sorted(set(task)))
    mi = pd.Index(models).get_indexer(model)
    ti = pd.Index(tasks).get_indexer(task)
    means = np.full((len(models), len(tasks)), np.nan)
    var = np.full_like(means, np.nan)
    means[mi, ti], var[mi, ti] = score, se * se
    return TaskSummary(models, tasks, means, var, RowAccount(len(df), len(df)), label, se_from,
                       {"model": model_col, "task": task_col, "score": score_col,
                        "se": se_col if have_se else None, "n": n_col if have_n else None})


def _bernoulli_se(p, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(p * (1 - p) / n)


def _numbers(df, col, label, line, missing_ok: bool = False) -> np.ndarray:
    raw = df[col]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = np.isnan(values) & raw.notna().to_numpy()
    _fail(label, line, bad, f"'{col}' is not a number", f"Write '{col}' as a number.")
    if not missing_ok:
        _fail(label, line, np.isnan(values), f"'{col}' is missing", f"Fill in '{col}' on every row.")
    _fail(label, line, np.isinf(values), f"'{col}' is infinite", f"Write '{col}' as a finite number.")
    return values


def _flag(c, model_col, task_col) -> str:
    return "model-col" if c == model_col else "task-col" if c == task_col else "score-col"


def _fail(label, line, mask, problem, fix) -> None:
    mask = np.asarray(mask, dtype=bool)
    if mask.any():
        rows = line[np.flatnonzero(mask)]
        raise InputError(f"{label}: {problem} in {len(rows)} row(s) (data rows {row_list(rows)}). {fix}")
