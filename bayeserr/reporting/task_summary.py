"""The output of ``bayeserr tasks``: a leaderboard over tasks like these from a task × model
summary table (``docs/methods.md`` §3.15) — the same blocks as the report's section, a
title and the row accounting, and its JSON (schema ``bayeserr.tasks/1``)."""

from __future__ import annotations

from bayeserr.reporting import document as doc


def summary_blocks(summary, res) -> list:
    """Title, the section "Over tasks like these" and the rows line."""
    blocks = doc.over_tasks_blocks(res, None, None)
    se = ("given on every row" if summary.se_from == "se" else
          "from each row's number of questions, √(p(1 − p)/n): right for 0/1 scores of independent questions, "
          "too small when the questions come in clusters")
    rows = summary.rows
    left = sum(1 for _ in res.left_out)
    text = (f"Rows: {rows.read:,} read, {rows.used:,} used ({len(summary.models)} models × {len(summary.tasks)} tasks"
            + (f"; {left} model{'s' if left != 1 else ''} without a score in every task left out of the leaderboard"
               if left else "") + f"). Standard errors {se}. No per-question data: the readings over questions "
            "and clusters need them.")
    return [doc.Heading(f"bayeserr tasks: {summary.source}", 1), *blocks[1:], doc.Para(text, "rows", user_text=True)]


def summary_json(summary, res, provenance: dict) -> dict:
    return {"schema": "bayeserr.tasks/1", "level": res.level, "provenance": provenance,
            "columns": summary.columns, "rows": summary.rows.to_dict(), "se_from": summary.se_from,
            "over_tasks": res.to_dict()}
