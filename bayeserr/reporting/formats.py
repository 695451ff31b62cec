"""The output formats of ``bayeserr report`` and ``bayeserr compare``: each
``--format`` value and the report method that writes it.  Kept apart from
:mod:`.build` so that the command line can list them without importing the
statistics (``bayeserr --help`` starts in a fraction of a second)."""

from __future__ import annotations

from bayeserr.base.registry import Registry

FORMATS = Registry("output format", "--format", {"md": "to_markdown", "json": "to_json",
                                                  "latex": "to_latex", "html": "to_html"})
COMPARE_FORMATS = Registry("output format", "--format", {"md": "to_markdown", "json": "to_json"})
#: ``bayeserr tasks``: the leaderboard over tasks from a summary table
TASKS_FORMATS = Registry("output format", "--format", {"md": "Markdown", "json": "JSON", "html": "HTML"})
#: ``gate``, ``watch`` and ``config``: a summary for people or the JSON for programs
TEXT_FORMATS = Registry("output format", "--format", {"text": "a plain-text summary", "json": "JSON"})
#: ``bayeserr lab`` and ``simulate``: the published tables, their JSON, or the raw cells as CSV
LAB_FORMATS = Registry("output format", "--format", {"md": "Markdown tables", "json": "JSON", "csv": "CSV"})
