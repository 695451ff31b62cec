"""One self-contained HTML page: the blocks of :mod:`bayeserr.reporting.document`
with figures as inline SVG.  No network: no scripts, fonts or images are
fetched.  User text is escaped with :func:`html.escape` after control
characters are removed."""

from __future__ import annotations

import html as _html

from . import document as doc
from .markdown import cell_text, plain
from .tables import Cell, Table

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.88rem}
th,td{padding:.25rem .6rem;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
th{border-bottom:2px solid #999;background:#fafafa}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:.85rem;max-width:60rem}.se{color:#666;font-size:.8rem;display:block}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
.warn li{margin:.2rem 0}.code{font-family:monospace;color:#a33}
"""


def esc(x) -> str:
    return _html.escape(plain(x))


def cell_html(c: Cell) -> str:
    if c.kind == "pct_se" and not c.missing:
        return f'{doc.pct(c.value, c.digits)}<span class="se">({doc.pct(c.se, c.digits)})</span>'
    return cell_text(c, escape=esc) if c.kind in ("text", "pair") else esc(cell_text(c))


def render_table(t: Table) -> str:
    head = "".join(f"<th>{esc(c.head)}{'†' if c.mark else ''}</th>" for c in t.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell_html(c)}</td>" for c in row) + "</tr>" for row in t.rows)
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in t.notes)
    return f'<table class="{t.key}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}'


def render_blocks(blocks, rep=None, title: str = "bayeserr report") -> str:
    parts = []
    for b in blocks:
        if isinstance(b, doc.Heading):
            parts.append(f"<h{b.level}>{esc(b.text)}</h{b.level}>")
        elif isinstance(b, Table):
            parts.append(render_table(b))
        elif isinstance(b, doc.Para):
            attr = ' id="rows"' if b.role == "rows" else (' class="note"' if b.role == "note" else "")
            parts.append(f"<p{attr}>{esc(b.text)}</p>")
        elif isinstance(b, doc.Bullets):
            items = "".join(f'<li><span class="code">[{esc(code)}]</span> {esc(text)}</li>' if code
                            else f"<li>{esc(text)}</li>" for code, text in b.items)
            parts.append(f'<ul class="warn">{items}</ul>')
        elif isinstance(b, doc.Figure) and rep is not None:
            from . import plots
            parts.append(f'<figure id="fig-{b.kind}">{plots.svg(plots.figure(rep, b.kind))}</figure>')
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n")


def render(rep, figures: bool = True) -> str:
    return render_blocks(doc.report_blocks(rep, figures=figures, warning_limit=None), rep,
                         f"bayeserr report: {rep.source}")
