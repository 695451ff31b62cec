"""LaTeX tables of a report, ready to paste into a paper (booktabs).

Writes out the tables of :mod:`bayeserr.reporting.document` — each score with
its standard error in parentheses beneath it, as in the paper's reporting
tables — with the caption saying which estimator and level were used; the
row accounting and the warnings follow as comments.  Needs
``\\usepackage{booktabs}`` only.  User text is escaped and stripped of
control characters everywhere it reaches LaTeX (names, paths, comments).
"""

from __future__ import annotations

from . import document as doc
from .markdown import cell_text, plain
from .tables import Cell, Table

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
           "–": "--", "—": "---", "−": "$-$"}


def esc(text) -> str:
    return "".join(SPECIAL.get(ch, ch) for ch in plain(text))


def comment(text) -> str:
    """A LaTeX comment line; control characters cannot end it early."""
    return "% " + plain(text)


def stacked(top: str, bottom: str) -> str:
    """Two lines in one cell (no extra package)."""
    return rf"\begin{{tabular}}[t]{{@{{}}c@{{}}}}{top}\\ {bottom}\end{{tabular}}"


def cell_latex(c: Cell) -> str:
    if c.kind == "pct_se" and not c.missing:
        return stacked(doc.pct(c.value, c.digits), f"({doc.pct(c.se, c.digits)})")
    if c.kind == "pair":
        return f"{esc(c.value[0])} $-$ {esc(c.value[1])}"
    if c.kind == "text":
        return esc(c.value)
    if c.missing:
        return "--"
    return esc(cell_text(c)).replace("<", "$<$")


def render_table(t: Table, label: str | None = None) -> str:
    head = [(c.latex if c.latex is not None else esc(c.head)) + ("$^\\dagger$" if c.mark else "")
            for c in t.columns]
    align = "".join("l" if not c.numeric else "c" for c in t.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{align}}}",
             r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
    lines += [" & ".join(cell_latex(c) for c in row) + r" \\" for row in t.rows]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{esc(t.caption)}}}",
              rf"\label{{{label or 'tab:bayeserr-' + t.key}}}", r"\end{table}"]
    return "\n".join(lines)


def render_blocks(blocks, header: str) -> str:
    parts = [comment(header), "% requires \\usepackage{booktabs}"]
    for b in blocks:
        if isinstance(b, Table):
            parts.append(render_table(b))
        elif isinstance(b, doc.Para) and b.role == "rows":
            parts.append(comment(b.text))
        elif isinstance(b, doc.Bullets):
            parts.append("\n".join(comment(f"warning [{code}] {text}") for code, text in b.items))
    return "\n\n".join(parts) + "\n"


def render(rep) -> str:
    from . import tables
    blocks = [tables.models_table(rep.scores, rep.level, bayes=rep.bayes is not None)]
    if len(rep.comparisons):
        blocks.append(tables.pairs_table(rep.comparisons, rep.level, rep.adjust, compact=True))
    blocks += [doc.Para(doc.rows_text(rep.rows), "rows"), *doc.warnings_blocks(rep.warnings, None)]
    return render_blocks(blocks, f"bayeserr report: {rep.source}")
