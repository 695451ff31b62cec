"""Markdown: the terminal default.  Writes out the neutral blocks of
:mod:`bayeserr.reporting.document`; scores in percentage points, the SE in
parentheses beside the mean as in the paper's reporting tables.

User text (model names, paths, warnings) is data: control characters are
removed and Markdown's table and markup characters escaped.
"""

from __future__ import annotations

import re

from bayeserr.reporting import document as doc
from bayeserr.reporting.sections import report_blocks
from bayeserr.reporting.tables import Table
from bayeserr.reporting.text import cell_text, esc, plain

#: prose lines wrap at this width (tables cannot: a Markdown table row is one line)
WIDTH = 100
#: a line must not start with what Markdown would read as a list item, heading, quote or rule
_MARKUP_START = re.compile(r"^(?:[-+*]|\d+[.)]|#+|>|=+|-+)$")


def wrap(text: str, indent: str = "") -> str:
    """``text`` as lines of at most :data:`WIDTH` characters where its words
    allow, continuation lines indented by ``indent``; never breaks a word,
    and never starts a line with a word Markdown would read as markup."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > WIDTH - len(indent) and not _MARKUP_START.match(word):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return ("\n" + indent).join(lines)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render_table(t: Table, notes: bool = True) -> str:
    header = [plain(c.head) + ("†" if c.mark else "") for c in t.columns]
    text = table(header, [[cell_text(c) for c in row] for row in t.rows])
    if notes and t.notes:
        text += "\n\n" + wrap(" ".join(t.notes))
    return text


def render_blocks(blocks) -> str:
    parts = []
    for b in doc.flatten(blocks):
        if isinstance(b, doc.Heading):
            parts.append("#" * b.level + " " + esc(b.text))
        elif isinstance(b, Table):
            parts.append(render_table(b))
        elif isinstance(b, doc.Para):
            parts.append(wrap(esc(b.text) if b.user_text else plain(b.text)))
        elif isinstance(b, doc.Bullets):
            parts.append("\n".join(wrap(f"- [{esc(code)}] {esc(text)}" if code else f"- {esc(text)}", "  ")
                                   for code, text in b.items))
    return "\n\n".join(parts) + "\n"


def render_report(rep) -> str:
    return render_blocks(report_blocks(rep))
