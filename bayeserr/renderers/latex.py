"""LaTeX tables of a report, ready to paste into a paper (booktabs).

Writes out the tables of :mod:`bayeserr.reporting.document` — each score with
its standard error in parentheses beneath it, as in the paper's reporting
tables — with the caption saying which estimator and level were used; the
row accounting and the warnings follow as comments.  User text is escaped
and stripped of control characters everywhere it reaches LaTeX (names,
paths, comments).

Typesetting choices (for 2 to 100+ models):

* **Numbers** sit in math-mode columns (``>{$}c<{$}``, the ``array``
  package), so a negative number gets a real minus sign (−4.8, not the
  hyphen of text mode) while the source keeps the plain digits
  (``[-4.8, 5.5]``); undefined values are an en dash (``--``), never
  ``nan``.  Column heads are the words of the table model
  (:attr:`~bayeserr.reporting.tables.Column.latex`); long heads break over
  two lines.
* **Width.**  Rather than shrinking a wide table until it is unreadable, the
  renderer estimates each column's width (Computer Modern metrics) and picks
  ``\\small``, else ``\\footnotesize`` (``\\tabcolsep`` 4 pt); a table still
  wider than :data:`TEXT_WIDTH_PT` (the 345 pt text width of LaTeX's 10 pt
  ``article``) is *wrapped*: its columns are split into blocks stacked in
  the same table, each block repeating the first (name) column under its
  own header row.  Long text cells (a pair "A − B", letter groups) wrap in a
  ``\\parbox``.  As a safety net for other classes, a float is wrapped in
  ``\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{…}``
  (``graphicx``), which only ever shrinks a table that would overflow, never
  enlarges one.  A table wider than one column of a two-column layout
  (:data:`COLUMN_WIDTH_PT`) is a ``table*``, which spans both columns there
  and is an ordinary table in one-column documents.
* **Length.**  A table taller than about a page
  (:data:`FLOAT_HEIGHT_PT`) is a ``longtable`` (package ``longtable``) that
  breaks across pages and repeats a "continued" line; longtable needs
  one-column mode (in a two-column paper put it in a ``\\onecolumn``
  appendix or use ``--pairs adjacent``).

The first comment lines say which packages the output needs
(``% requires \\usepackage{booktabs,array,graphicx}``, plus ``longtable``
when used).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import replace

from bayeserr.reporting import document as doc
from bayeserr.reporting.tables import Cell, Table
from bayeserr.reporting.text import cell_text, pct, plain

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
           "–": "--", "—": "---", "−": "$-$", "<": "$<$", ">": "$>$", "|": r"$|$",
           "ρ": r"$\rho$", "σ": r"$\sigma$", "Σ": r"$\Sigma$", "²": r"$^2$", "±": r"$\pm$",
           "×": r"$\times$", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\to$", "†": r"$^\dagger$",
           "…": r"\ldots{}", "’": "'", "‘": "`", "“": "``", "”": "''", "\u00a0": "~"}

#: the text width the tables are laid out for (pt): LaTeX's 10 pt article
TEXT_WIDTH_PT = 345.0
#: one column of a two-column layout (pt); wider tables are table*
COLUMN_WIDTH_PT = 240.0
#: a table estimated taller than this (pt) is a longtable
FLOAT_HEIGHT_PT = 470.0
#: font sizes tried in turn: (command, size in pt at 10 pt)
SIZES = (("small", 9.0), ("footnotesize", 8.0))
TABCOLSEP_PT = 4.0
#: text cells wider than this wrap in a \parbox (the first column, the others)
LABEL_MAX_PT, TEXT_MAX_PT = 150.0, 100.0

# Computer Modern Roman advance widths in em (rounded), for layout estimates
_EM = {**dict.fromkeys("0123456789", 0.5), **dict.fromkeys(".,;:!'`|", 0.28),
       **dict.fromkeys("()[]", 0.39), **dict.fromkeys("ijl", 0.28), **dict.fromkeys("frt", 0.39),
       **dict.fromkeys("mMW", 0.92), "w": 0.72, " ": 0.33, "-": 0.33, "–": 0.5, "—": 1.0,
       "−": 0.78, "%": 0.83, "<": 0.78, ">": 0.78, "=": 0.78, "+": 0.78, "/": 0.5, "_": 0.5}


def esc(text) -> str:
    return "".join(SPECIAL.get(ch, ch) for ch in plain(text))


def comment(text) -> str:
    """A LaTeX comment line; control characters cannot end it early."""
    return "% " + plain(text)


def stacked(top: str, bottom: str, align: str = "t") -> str:
    """Two lines in one cell (no extra package)."""
    return rf"\begin{{tabular}}[{align}]{{@{{}}c@{{}}}}{top}\\ {bottom}\end{{tabular}}"


def _minus(text: str) -> str:
    """Text-mode numbers: a hyphen before a digit becomes a minus sign."""
    return re.sub(r"-(?=\d)", "$-$", text)


def math_text(text: str) -> str:
    """A formatted number (plain text) for a math-mode column: the hyphen is
    already a minus there; en dashes and words stay text."""
    if text in ("", "–"):
        return r"\mbox{--}"
    out = []
    for i, ch in enumerate(text):
        if ch == "–":
            out.append(r"\mbox{--}")
        elif ch == "−":
            out.append("-")
        elif ch == " ":
            out.append(" " if i and text[i - 1] == "," else r"\ ")
        elif ch.isalpha():
            out.append(r"\mathrm{" + ch + "}")
        else:
            out.append(SPECIAL.get(ch, ch) if ch in "%&#_{}$\\~^" else ch)
    return "".join(out)


def width_em(text: str) -> float:
    """Estimated width of plain ``text`` in em (Computer Modern)."""
    w = 0.0
    for ch in str(text):
        if ch in _EM:
            w += _EM[ch]
        elif ch.isupper():
            w += 0.74
        else:
            w += 0.52
    return w


def _breakable(text: str) -> str:
    """Escaped ``text`` with break points after punctuation and inside long runs."""
    out, run = [], 0
    for ch in plain(text):
        out.append(SPECIAL.get(ch, ch))
        run = 0 if ch == " " else run + 1
        if ch in "-_/]),.:;" or run >= 10:
            out.append(r"\allowbreak{}")
            run = 0
    return "".join(out)


def _cell_plain(c: Cell) -> str:
    """What the reader sees (for width estimates)."""
    if c.kind == "pct_se" and not c.missing:
        return max(pct(c.value, c.digits), f"({pct(c.se, c.digits)})", key=len)
    return cell_text(c, escape=plain)


def cell_latex(c: Cell, math: bool = False, box: float | None = None) -> str:
    """One cell; ``math``: the column is in math mode (numbers); ``box``: wrap
    the text in a ragged-right \\parbox of this width (pt)."""
    if c.kind == "pct_se" and not c.missing:
        return stacked(_minus(pct(c.value, c.digits)), f"({_minus(pct(c.se, c.digits))})")
    if c.kind in ("pair", "text"):
        if box is not None:
            text = (f"{_breakable(c.value[0])}~$-$\\newline {_breakable(c.value[1])}" if c.kind == "pair"
                    else _breakable(c.value))
            text = rf"\parbox[t]{{{box:.0f}pt}}{{\raggedright {text}}}"
        else:
            text = f"{esc(c.value[0])} $-$ {esc(c.value[1])}" if c.kind == "pair" else esc(c.value)
        return rf"\mbox{{{text}}}" if math else text
    if math:
        return math_text(cell_text(c, escape=plain))
    if c.missing:
        return "--"
    return _minus(esc(cell_text(c, escape=plain)))


# ------------------------------------------------------------------ layout
def _head_source(c) -> str:
    return (c.latex if c.latex is not None else esc(c.head)) + ("$^\\dagger$" if c.mark else "")


def _top_level_spaces(src: str) -> list[int]:
    """Positions of spaces outside math and braces in LaTeX source."""
    spots, depth, math = [], 0, False
    for i, ch in enumerate(src):
        if ch == "$" and (i == 0 or src[i - 1] != "\\"):
            math = not math
        elif ch == "{" and (i == 0 or src[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and (i == 0 or src[i - 1] != "\\"):
            depth -= 1
        elif ch == " " and depth == 0 and not math:
            spots.append(i)
    return spots


def _visible(src: str) -> str:
    """Rough visible text of LaTeX source (for width estimates)."""
    s = re.sub(r"\\(mathrm|textit|emph|text)\b", "", src)
    s = re.sub(r"\\[A-Za-z]+\s?", "x", s)
    return re.sub(r"[${}^_\\]", "", s)


def _head(c, cells_em: float) -> tuple[str, float, int]:
    """(LaTeX head, width in em, lines): long heads break at the top-level
    space that best balances the two lines."""
    src = _head_source(c)
    full = width_em(_visible(src))
    spots = _top_level_spaces(src)
    if full <= max(cells_em, 2.5) * 1.15 or not spots:
        return src, full, 1
    best = min(spots, key=lambda i: max(width_em(_visible(src[:i])), width_em(_visible(src[i + 1:]))))
    top, bottom = src[:best], src[best + 1:]
    return stacked(top, bottom, "b"), max(width_em(_visible(top)), width_em(_visible(bottom))), 2


class Layout:
    """Column widths, blocks, size and float/longtable choice of one table."""

    def __init__(self, t: Table, size: str, pt: float):
        self.size, self.pt = size, pt
        cols = t.columns
        self.box = [None] * len(cols)
        self.heads, self.widths, self.head_lines = [], [], []
        for j, c in enumerate(cols):
            cells = [_cell_em(row[j]) for row in t.rows] or [0.0]
            cell_em = max(cells)
            limit = (LABEL_MAX_PT if j == 0 else TEXT_MAX_PT) / pt
            if (not c.numeric or j == 0) and cell_em > limit:
                pair = all(row[j].kind == "pair" for row in t.rows)
                longest = max(_pair_line_em(row[j]) for row in t.rows) if pair else limit
                cell_em = min(limit, longest)
                self.box[j] = cell_em * pt * 1.08
            head, head_em, lines = _head(c, cell_em)
            self.head_lines.append(lines)
            self.heads.append(head)
            self.widths.append(max(cell_em, head_em) * pt * 1.04 + 2 * TABCOLSEP_PT)
        self.blocks = self._partition()
        tall = [2 if any(c.kind == "pct_se" for c in row) else 1 for row in t.rows]
        for j, b in enumerate(self.box):  # wrapped text cells take several lines
            if b is not None:
                tall = [max(h, _lines(row[j], b / pt)) for h, row in zip(tall, t.rows)]
        line = 1.2 * pt
        body = sum(tall) * line + 1.5 * len(t.rows)
        self.height = sum(body + max(self.head_lines[j] for j in b) * line + 8 for b in self.blocks)
        self.width = max(self.block_width(b) for b in self.blocks)

    def block_width(self, block) -> float:
        return sum(self.widths[j] for j in block)

    def _partition(self) -> list[list[int]]:
        """The fewest blocks (runs of columns, each led by the first column)
        that fit :data:`TEXT_WIDTH_PT`, as even as possible: the widest
        block is as narrow as it can be (linear partition)."""
        n = len(self.widths)
        if n <= 2 or self.block_width(range(n)) <= TEXT_WIDTH_PT:
            return [list(range(n))]
        first, rest = self.widths[0], self.widths[1:]
        k = 1  # greedy count: the fewest blocks
        width = first
        for w in rest:
            if width + w > TEXT_WIDTH_PT and width > first:
                k, width = k + 1, first
            width += w
        m = len(rest)
        prefix = [0.0, *itertools.accumulate(rest)]
        # cost[i][b]: the smallest widest block putting rest[:i] into b blocks
        inf = float("inf")
        cost = [[inf] * (k + 1) for _ in range(m + 1)]
        cut = [[0] * (k + 1) for _ in range(m + 1)]
        cost[0][0] = 0.0
        for b in range(1, k + 1):
            for i in range(1, m + 1):
                for a in range(b - 1, i):
                    c = max(cost[a][b - 1], first + prefix[i] - prefix[a])
                    if c < cost[i][b]:
                        cost[i][b], cut[i][b] = c, a
        blocks, i = [], m
        for b in range(k, 0, -1):
            a = cut[i][b]
            blocks.append([0, *range(a + 1, i + 1)])
            i = a
        return blocks[::-1]


def _cell_em(c: Cell) -> float:
    return width_em(_cell_plain(c))


def _pair_line_em(c: Cell) -> float:
    """The wider line of a pair cell set on two lines ("A −" over "B")."""
    a, b = c.value
    return max(width_em(f"{plain(a)} −"), width_em(plain(b)))


def _lines(c: Cell, box_em: float) -> int:
    if c.kind == "pair":
        return sum(max(1, math.ceil(width_em(plain(v)) / box_em)) for v in c.value)
    return max(1, math.ceil(_cell_em(c) / box_em))


def layout(t: Table) -> Layout:
    """The first size at which the table fits in one block on a page, else
    the first at which it fits in one block (a longtable), else the smallest
    (wrapped in blocks)."""
    tries = [Layout(t, size, pt) for size, pt in SIZES]
    for lay in tries:
        if len(lay.blocks) == 1 and lay.height <= FLOAT_HEIGHT_PT:
            return lay
    return next((lay for lay in tries if len(lay.blocks) == 1), tries[-1])


def _block(t: Table, lay: Layout, block) -> tuple[str, str, list[str]]:
    """(column spec, header line, body lines) of one block."""
    math = [pos > 0 and t.columns[j].numeric for pos, j in enumerate(block)]
    spec = "".join(">{$}c<{$}" if m else ("l" if pos == 0 else "c") for pos, m in enumerate(math))
    heads = [rf"\multicolumn{{1}}{{c}}{{{lay.heads[j]}}}" if m else lay.heads[j]
             for m, j in zip(math, block)]
    body = [" & ".join(cell_latex(row[j], math=m, box=lay.box[j]) for m, j in zip(math, block)) + r" \\"
            for row in t.rows]
    return spec, " & ".join(heads) + r" \\", body


def render_table(t: Table, label: str | None = None) -> tuple[str, set]:
    """A table as LaTeX source, and the packages it needs."""
    lay = layout(t)
    label = label or "tab:bayeserr-" + t.key
    size = [rf"\{lay.size}", rf"\setlength{{\tabcolsep}}{{{TABCOLSEP_PT:g}pt}}"]
    caption = rf"\caption{{{esc(t.caption)}}}"
    blocks = [_block(t, lay, b) for b in lay.blocks]
    if lay.height > FLOAT_HEIGHT_PT:
        lines = [r"\begingroup", *size]
        for k, ((spec, head, body), n) in enumerate(zip(blocks, map(len, lay.blocks))):
            first = caption + rf"\label{{{label}}}\\" if k == 0 else r"\caption[]{(continued)}\\"
            if k:
                lines.append(r"\addtocounter{table}{-1}")
            lines += [rf"\begin{{longtable}}{{{spec}}}", first, r"\toprule", head, r"\midrule",
                      r"\endfirsthead",
                      rf"\multicolumn{{{n}}}{{l}}{{\emph{{Table~\thetable{{}} (continued)}}}}\\",
                      r"\toprule", head, r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot",
                      *body, r"\end{longtable}"]
        lines.append(r"\endgroup")
        return "\n".join(lines), {"booktabs", "array", "longtable"}
    env = "table*" if lay.width > COLUMN_WIDTH_PT else "table"
    lines = [rf"\begin{{{env}}}[t]", r"\centering", *size]
    for k, (spec, head, body) in enumerate(blocks):
        if k:
            lines += ["", r"\medskip"]
        lines += [r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
                  rf"\begin{{tabular}}{{{spec}}}", r"\toprule" if k == 0 else r"\midrule[\heavyrulewidth]",
                  head, r"\midrule", *body, r"\bottomrule", r"\end{tabular}}"]
    lines += [caption, rf"\label{{{label}}}", rf"\end{{{env}}}"]
    return "\n".join(lines), {"booktabs", "array", "graphicx"}


ORDER = ("booktabs", "array", "graphicx", "longtable")


def render_blocks(blocks, header: str) -> str:
    parts, needs = [], set()
    for b in blocks:
        if isinstance(b, Table):
            text, pkgs = render_table(b)
            parts.append(text)
            needs |= pkgs
        elif isinstance(b, doc.Para) and b.role in ("rows", "note"):
            parts.append(comment(b.text))
        elif isinstance(b, doc.Bullets):
            parts.append("\n".join(comment(f"warning [{code}] {text}") for code, text in b.items))
    pkgs = ",".join(p for p in ORDER if p in needs) or "booktabs"
    head = [comment(header), f"% requires \\usepackage{{{pkgs}}}"]
    if "longtable" in needs:
        head.append("% (longtable: one-column mode only; see bayeserr.renderers.latex)")
    return "\n\n".join(head + parts) + "\n"


def render(rep) -> str:
    """The per-model table (the recommended interval, plus the methods
    ``--methods`` names, as in every format) and the compact pairwise table
    (the pairs ``--pairs`` selects), then the row accounting and warnings
    as comments."""
    from bayeserr.reporting import tables
    kw = {"methods": rep.methods or "recommended"}
    if getattr(rep, "groups", None) is not None:
        kw["groups"] = rep.groups
    blocks = [tables.models_table(rep.scores, rep.level, bayes=rep.bayes is not None, **kw)]
    if getattr(rep, "ranking", None) is not None:
        r = rep.ranking
        table = tables.ranking_table(r)
        # the answer belongs in the printed caption, not only in a comment
        table = replace(table, caption=f"{table.caption} {doc.ranking_sentence(r)}")
        blocks += [table, doc.Para(f"Decisions: {doc.family_text(r.family)}", "note")]
    if len(rep.comparisons):
        shown = tables.select_pairs(rep.comparisons, rep.scores, rep.pairs)
        blocks.append(tables.pairs_table(shown, rep.level, rep.adjust, compact=True,
                                         family=rep.comparisons.family))
        if len(shown) < len(rep.comparisons):
            blocks.append(doc.Para(f"Showing {len(shown)} of {len(rep.comparisons)} pairs; --pairs all "
                                   "prints every pair.", "note"))
    blocks += [doc.Para(doc.rows_text(rep.rows), "rows"), *doc.warnings_blocks(rep.warnings, None)]
    return render_blocks(blocks, f"bayeserr report: {rep.source}")
