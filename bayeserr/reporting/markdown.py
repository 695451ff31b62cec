"""Markdown: the terminal default.  Writes out the neutral blocks of
:mod:`bayeserr.reporting.document`; scores in percentage points, the SE in
parentheses beside the mean as in the paper's reporting tables.

User text (model names, paths, warnings) is data: control characters are
removed and Markdown's table and markup characters escaped.
"""

from __future__ import annotations

import math
import re

from . import document as doc
from .tables import Cell, Table

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MARKUP = re.compile(r"([\\|`]|<(?=[A-Za-z/!?]))")


def plain(text) -> str:
    """Text with control characters (ANSI/OSC escapes, newlines) removed."""
    return _CONTROL.sub(" ", str(text).replace("\n", " ").replace("\r", " "))


def esc(text) -> str:
    """User text safe inside a Markdown table cell or line."""
    return _MARKUP.sub(r"\\\1", plain(text))


def number(x, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def pval(p) -> str:
    if p is None or not math.isfinite(p):
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def interval(ci, digits: int = 1) -> str:
    if ci is None:
        return "–"
    return f"[{doc.pct(ci[0], digits)}, {doc.pct(ci[1], digits)}]"


def cell_text(c: Cell, escape=esc) -> str:
    """A cell as plain text (escaped user text); shared by the HTML renderer."""
    v = c.value
    if c.kind == "text":
        return escape(v)
    if c.kind == "pair":
        return f"{escape(v[0])} − {escape(v[1])}"
    if c.missing:
        return "–"
    if c.kind == "pct":
        return doc.pct(v, c.digits)
    if c.kind == "pct_se":
        return f"{doc.pct(v, c.digits)} ({doc.pct(c.se, c.digits)})"
    if c.kind == "interval":
        return interval(v, c.digits)
    if c.kind == "p":
        return pval(v)
    if c.kind == "pvalues":
        return f"{pval(v[0])} ({pval(v[1])})"
    if c.kind == "int":
        return str(int(v))
    if c.kind == "num":
        return number(v, c.digits)
    if c.kind == "range":
        return f"[{number(v[0], c.digits)}, {number(v[1], c.digits)}]"
    if c.kind == "span":
        return f"{int(v[0])}–{int(v[1])}"
    raise ValueError(f"unknown cell kind {c.kind!r}")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render_table(t: Table, notes: bool = True) -> str:
    header = [plain(c.head) + ("†" if c.mark else "") for c in t.columns]
    text = table(header, [[cell_text(c) for c in row] for row in t.rows])
    if notes and t.notes:
        text += "\n\n" + " ".join(t.notes)
    return text


def render_blocks(blocks) -> str:
    parts = []
    for b in blocks:
        if isinstance(b, doc.Heading):
            parts.append("#" * b.level + " " + esc(b.text))
        elif isinstance(b, Table):
            parts.append(render_table(b))
        elif isinstance(b, doc.Para):
            parts.append(plain(b.text))
        elif isinstance(b, doc.Bullets):
            parts.append("\n".join(f"- [{esc(code)}] {esc(text)}" if code else f"- {esc(text)}"
                                   for code, text in b.items))
    return "\n\n".join(parts) + "\n"


def render_report(rep) -> str:
    return render_blocks(doc.report_blocks(rep))
