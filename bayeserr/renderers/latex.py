"""LaTeX tables of a report, ready to paste into a paper (booktabs).

Writes out the tables of :mod:`bayeserr.reporting.document` — each score with
its standard error in parentheses beneath it, as in the paper's reporting
tables — with the caption saying which estimator and level were used; the
row accounting and the warnings follow as comments.  User text is escaped
and stripped of control characters everywhere it reaches LaTeX (names,
paths, comments), and a name over :data:`LONG_NAME` characters is cut to
its first ``NAME_HEAD``, its length and a tag (:func:`short_name`) in
cells, captions and comments, given in full in comment lines at the end.

Typesetting choices (for 2 to 100+ models):

* **Numbers** sit in math-mode columns (``>{$}c<{$}``, the ``array``
  package), so a negative number gets a real minus sign (−4.8, not the
  hyphen of text mode) while the source keeps the plain digits
  (``[-4.8, 5.5]``); undefined values are an en dash (``--``), never
  ``nan``.  Column heads are the words of the table model
  (:attr:`~bayeserr.reporting.tables.Column.latex`); long heads break over
  two or three lines.
* **Captions and notes** (:func:`caption_latex`): the caption is the
  table's title (and the ranking's short answer), a few lines at most; a
  note under the table, in a smaller size, says what every column means —
  the letter groups or the rank intervals, C_eff, df, K, the recommended
  method of each model and what that method is, the † mark — so a table
  can go into a paper as it is.
* **Width.**  A table is never split into side-by-side parts.  The renderer
  estimates each column's width (Computer Modern metrics at each design
  size) and takes the first that fits :data:`TEXT_WIDTH_PT` (the 345 pt
  text width of LaTeX's 10 pt ``article``): as it is at ``\\small`` or
  ``\\footnotesize``; for the per-model table, with the columns that hold
  one value in every row (n, C, C_eff, df, K, Method) moved into the
  caption ("the same for every model: n = 500, …"); at ``\\scriptsize``;
  then with optional columns left out one at a time (ρ and df of the
  pairs, the Bayesian rank columns, the per-model diagnostics and the
  intervals of ``--methods`` from right to left), each named in the
  caption with where to find it.  A pair's verdict is printed "A higher",
  "B higher" or "n.s.".  Long text cells wrap in a ragged-right
  ``\\parbox``: a pair as "A −" over "B" (the minus never starts a line),
  a method or verdict at the space that balances two lines.  As a safety
  net for other classes, a float is wrapped in
  ``\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{…}``
  (``graphicx``), which only ever shrinks a table that would overflow (a
  float estimated up to 5% too wide is left to it), never enlarges one.  A
  table wider than one column of a two-column layout
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

import hashlib
import itertools
import math
import re
import unicodedata
from dataclasses import replace

from bayeserr.base.names import codepoint_marks
from bayeserr.reporting import document as doc
from bayeserr.reporting.tables import Cell, Table
from bayeserr.reporting.text import cell_text, controls_as_spaces, pct, plain

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
           "–": "--", "—": "---", "−": "$-$", "<": "$<$", ">": "$>$", "|": r"$|$",
           "ρ": r"$\rho$", "σ": r"$\sigma$", "Σ": r"$\Sigma$", "²": r"$^2$", "±": r"$\pm$",
           "×": r"$\times$", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\to$", "†": r"$^\dagger$",
           "…": r"\ldots{}", "’": "'", "‘": "`", "“": "``", "”": "''", "\u00a0": "~"}

#: names longer than this (characters) are cut everywhere in the LaTeX (tables, captions, comments)
#: to their first ``NAME_HEAD`` characters, "…", their length and a tag (:func:`short_name`);
#: the full names close the output as comments
LONG_NAME = 100
NAME_HEAD = 60
#: captions get a break point after this many characters of a run without spaces
RUN = 30
#: comment lines hold at most this many characters of text (longer text continues on the next)
COMMENT_WIDTH = 1000

#: the text width the tables are laid out for (pt): LaTeX's 10 pt article
TEXT_WIDTH_PT = 345.0
#: one column of a two-column layout (pt); wider tables are table*
COLUMN_WIDTH_PT = 240.0
#: a table estimated taller than this (pt) is a longtable
FLOAT_HEIGHT_PT = 470.0
#: layouts tried in turn: (size command, font size in pt at 10 pt, \tabcolsep, widest
#: first-column and other text cells in pt before they wrap in a \parbox)
SIZES = (("small", 9.0, 4.0, 150.0, 100.0), ("footnotesize", 8.0, 4.0, 130.0, 85.0),
         ("scriptsize", 7.0, 3.0, 90.0, 60.0))
#: Computer Modern's smaller design sizes are relatively wider: a digit is 0.5 em of cmr10 but
#: 0.512 em of cmr9, 0.531 of cmr8 and 0.584 of cmr7
OPTICAL = {"small": 1.025, "footnotesize": 1.063, "scriptsize": 1.168}
#: estimated widths are scaled by this (kerning, rules, rounding)
WIDTH_FACTOR = 1.0
#: a float as much as this narrower than its estimate is still taken as fitting: its
#: \resizebox shrinks it (the estimate runs about 2% wide)
FLOAT_SHRINK = 0.95
#: tables whose single-valued columns move into the caption before the font shrinks to
#: \scriptsize (in the others only instead of leaving a column out)
FOLD_FIRST = frozenset({"models"})
#: columns that move into the caption ("the same for every model: K = 1") when they hold one
#: value in every row and the table is too wide with them
FOLDABLE = frozenset({"n", "C", "c_eff", "df", "K", "method"})
#: columns that may be left out (named in the caption) when a table is still too wide, first
#: to go first, by table key (the per-model table: design effect and CLT SE, then the
#: intervals of --methods from right to left)
OPTIONAL = {"pairs": ("rho", "df"), "ranking": ("rank_credible", "rank_expected"),
            "suite": ("size_df", "user_df", "macro_df", "size_ci", "size"),
            "judge": ("agreement", "classical_ci", "worth"), "judge_pairs": ("p",)}
#: shorter LaTeX heads than the table model's, by column key (the caption says which SE)
HEADS = {"se": "SE"}
#: what each column means, by table key: (column key, LaTeX source) in caption order
COLUMN_NOTES = {
    "models": (
        ("group", (r"Group: models sharing a letter cannot be told apart at this level after the "
                   r"multiplicity adjustment.")),
        ("c_eff", (r"$C_{\mathrm{eff}} = n^2/\sum_c n_c^2$: the effective number of clusters ($n_c$ "
                   r"questions in cluster $c$), below $C$ when clusters have unequal sizes.")),
        ("df", (r"df: Bell--McCaffrey degrees of freedom of the $t$ quantile of the clustered (CR2) "
                r"interval; few df give a wide interval.")),
        ("se_clt", r"SE (CLT): the standard error if questions were independent."),
        ("deff", r"Design effect: clustered over independent-questions variance."),
        ("K", r"$K$: answers per question (the average when it varies)."),
        ("hierarchical_mu", r"Hierarchical $\mu$: posterior of the mean accuracy of a new cluster."),
    ),
    "ranking": (
        ("rank", r"Rank: by the score, 1 the best."),
        ("rank_all", (r"Ranks (all): rank interval holding for every model at once, from the "
                      r"pairwise decisions.")),
        ("rank_own", (r"Rank interval: the model's own rank interval, from its pairs in both directions; it "
                      r"holds for that row.")),
        ("tied_best", r"Tied with best: in the confidence set for the best model."),
        ("p_best", r"$P(\mathrm{best})$: posterior probability of being the best."),
        ("rank_expected", r"$E[\mathrm{rank}]$: posterior mean rank."),
        ("rank_credible", r"Rank CrI: posterior credible interval of the rank."),
    ),
    "over_tasks": (
        ("task_mean", r"Mean over tasks: every task weighs the same; the tasks read as a sample of tasks."),
        ("task_ci", r"CI: $t$ interval on $T - 1$ df."),
        ("between_sd", r"Between-task SD: how far the model's true score moves from task to task."),
        ("within_se", r"Within-task SE: the noise of one task's mean from its questions."),
        ("rank_own", r"Rank interval: the model's own, over tasks like these."),
        ("rank_new", r"Rank in a new task: conformal prediction interval, at the level stated below."),
        ("p_best", r"$P(\mathrm{best})$: posterior probability of being the best over tasks like these."),
        ("rank_credible", r"Rank CrI: posterior credible interval of the rank."),
    ),
    "pairs": (
        ("diff", r"Diff.: $A - B$ in points."),
        ("df", r"df: Bell--McCaffrey degrees of freedom of the $t$ quantile."),
        ("rho", r"$\rho$: correlation of the two models' per-question scores."),
        ("p", r"$p$: two-sided, one pair at a time."),
        ("verdict", (r"Verdict: the model declared higher after the adjustment (A or B); n.s.: not "
                     r"declared different.")),
        ("p_better", r"$P(A>B)$: posterior probability that $A$ is higher."),
    ),
}

# Computer Modern Roman advance widths in em (rounded), for layout estimates
_EM = {**dict.fromkeys("0123456789", 0.5), **dict.fromkeys(".,;:!'`|", 0.28),
       **dict.fromkeys("()[]", 0.39), **dict.fromkeys("ijl", 0.28), **dict.fromkeys("frt", 0.39),
       **dict.fromkeys("mMW", 0.92), "w": 0.72, " ": 0.33, "-": 0.33, "–": 0.5, "—": 1.0,
       "−": 0.78, "%": 0.83, "<": 0.78, ">": 0.78, "=": 0.78, "+": 0.78, "/": 0.5, "_": 0.5}


def esc(text) -> str:
    """User text for pdflatex: LaTeX's special characters escaped, composed to
    NFC (an accent typed as a combining mark joins its letter), and every
    character pdflatex cannot typeset without extra packages — outside
    Latin-1: Greek, CJK, emoji — written as ``[U+XXXX]`` (Greek letters as
    math; the brackets braced, as "\\\\[" would start an optional argument),
    so the output always compiles.  The characters that make two names look the
    same (zero-width joiners, bidirectional overrides, the accents of a decomposed
    name) are written ``[U+XXXX]`` too, as every format shows them
    (:func:`bayeserr.base.names.codepoint_marks`)."""
    return "".join(_chars(text))


def _chars(text):
    """The characters of user text as pdflatex source (see :func:`esc`)."""
    text = controls_as_spaces(text)
    for i, (ch, marked) in enumerate(zip(text, codepoint_marks(text))):
        if ch == "-" and text[i + 1:i + 2] == "-":  # "--pairs": two hyphens, not TeX's en-dash ligature
            yield "-{}"
            continue
        yield f"{{[}}U+{ord(ch):04X}{{]}}" if marked else _char(ch)


def _char(ch: str) -> str:
    """One character of (NFC, control-free) user text as pdflatex source."""
    return SPECIAL.get(ch) or _beyond_latin1(ch)


def prose(text) -> str:
    """User text in running prose (a caption): :func:`esc`, with a break
    point after every :data:`RUN` characters of a run without spaces, so a
    long name (or a cut one) cannot stick out of the text block."""
    out, run = [], 0
    chars = controls_as_spaces(text)
    for i, (ch, piece) in enumerate(zip(chars, _chars(text))):
        out.append(piece)
        run = 0 if ch == " " else run + 1
        # never before punctuation: no line of a caption starts with a comma
        if run >= RUN and (i + 1 >= len(chars) or chars[i + 1] not in ",.;:)]"):
            out.append(r"\allowbreak{}")
            run = 0
    return "".join(out)


def _beyond_latin1(ch: str) -> str:
    if ord(ch) < 256:
        return ch
    if unicodedata.category(ch) in ("Cf", "Mn"):  # zero-width joiners, leftover combining marks
        return ""
    name = unicodedata.name(ch, "")
    if name.startswith("GREEK ") and " LETTER " in name:
        letter = _GREEK.get(name.rsplit(" ", 1)[-1].lower())
        if letter is not None:
            if "CAPITAL" not in name:
                return "o" if letter == "omicron" else f"$\\{letter}$"  # no \omicron: it is an o
            if letter.capitalize() in _GREEK_CAPITALS:
                return f"$\\{letter.capitalize()}$"
            return _LATIN_LOOKING[letter].upper()  # no macro: the glyph is the Latin capital
    return f"{{[}}U+{ord(ch):04X}{{]}}"


#: Unicode's name of a Greek letter -> LaTeX's (lamda is spelled lambda there)
_GREEK = {n: n for n in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
                         "kappa", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon",
                         "phi", "chi", "psi", "omega")} | {"lamda": "lambda"}
#: capitals LaTeX has macros for
_GREEK_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
#: capitals without a macro (their glyph is a Latin capital): the Latin letter they look like
_LATIN_LOOKING = {"omicron": "o", "alpha": "a", "beta": "b", "epsilon": "e", "zeta": "z", "eta": "h",
                  "iota": "i", "kappa": "k", "mu": "m", "nu": "n", "rho": "p", "tau": "t", "chi": "x"}


def comment(text) -> str:
    """A LaTeX comment line; control characters cannot end it early, and text
    longer than :data:`COMMENT_WIDTH` characters goes on several comment lines
    (TeX reads a line of at most 200,000 bytes)."""
    text = plain(text)
    return "\n".join("% " + text[i:i + COMMENT_WIDTH] for i in range(0, max(len(text), 1), COMMENT_WIDTH))


def stacked(top: str, bottom: str, align: str = "t") -> str:
    """Two lines in one cell (no extra package)."""
    return rf"\begin{{tabular}}[{align}]{{@{{}}c@{{}}}}{top}\\ {bottom}\end{{tabular}}"


def _minus(text: str) -> str:
    """Text-mode numbers: the minus sign (and a hyphen before a digit) as LaTeX's minus."""
    return re.sub(r"-(?=\d)", "$-$", text).replace("\u2212", "$-$")


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
    """Estimated width of plain ``text`` in em (Computer Modern), as :func:`esc` writes it:
    a character beyond Latin-1 that it writes as ``[U+XXXX]`` counts as those eight
    characters (a CJK name is about eight times wider in LaTeX than it has characters)."""
    return sum(_char_em(ch) for ch in str(text))


def _char_em(ch: str) -> float:
    if ch in _EM:
        return _EM[ch]
    if ord(ch) >= 256:
        shown = _beyond_latin1(ch)
        if shown.startswith("{[}"):
            return width_em(f"[U+{ord(ch):04X}]")
        if not shown:  # a zero-width joiner or a leftover combining mark
            return 0.0
    return 0.74 if ch.isupper() else 0.52


def _breakable(text: str, fit: float | None = None) -> str:
    """Escaped ``text`` (as :func:`esc`: characters beyond Latin-1 written
    out) that breaks at its spaces only — never after the dot of a version
    number or at the hyphen of "GPT-5" — except a word wider than ``fit`` em
    (the column; None: any word over 24 characters), which cannot fit its
    line: it may break after "-", "_" or "/", or, with none of them, wherever
    its line is full, or before a character written out as ``[U+XXXX]`` that would
    overflow it.  Never a break after the last character (what follows,
    the "−" of a pair label, stays on its line)."""
    words = controls_as_spaces(text).split(" ")
    pieces = _chars(text)
    out = []
    for w, word in enumerate(words):
        if w:
            out.append(next(pieces))  # the space
        wide = width_em(word) > fit if fit is not None else len(word) > 24
        line = 0.0
        for i, ch in enumerate(word):
            em = width_em(ch)
            if wide and fit is not None and line and em > 1 and line + em > fit:
                out.append(r"\allowbreak{}")  # before a written-out [U+XXXX] that would not fit
                line = 0.0
            out.append(next(pieces))
            line += em
            last = w == len(words) - 1 and i == len(word) - 1
            if wide and not last and (ch in "-_/" or (fit is not None and line > 0.85 * fit)):
                out.append(r"\allowbreak{}")
                line = 0.0
    return "".join(out)


def _cell_plain(c: Cell) -> str:
    """What the reader sees (for width estimates)."""
    if c.kind == "pct_se" and not c.missing:
        return max(pct(c.value, c.digits), f"({pct(c.se, c.digits)})", key=len)
    return cell_text(c, escape=plain)


def cell_latex(c: Cell, math: bool = False, box: float | None = None, split: bool = False,
               em: float | None = None) -> str:
    """One cell; ``math``: the column is in math mode (numbers); ``box``: wrap
    the text in a ragged-right \\parbox of this width (pt); ``split``: a
    wrapped text cell breaks first at the space that best balances two lines
    ("Clustered" over "(CR2, t)", not "Clustered (CR2," over "t)"); ``em``:
    the size of an em in pt (a word wider than the box may break inside)."""
    text = _cell_source(c, math, box, split, em)
    # a row's first cell follows \\ or \midrule, which would read "[x]" as their optional
    # argument and "*" as their star: an empty group before it ends their look-ahead (a math
    # column's cells start with its "$")
    return "{}" + text if not math and text[:1] in ("[", "*") else text


def _cell_source(c: Cell, math: bool, box: float | None, split: bool, em: float | None = None) -> str:
    if c.kind == "pct_se" and not c.missing:
        return stacked(_minus(pct(c.value, c.digits)), f"({_minus(pct(c.se, c.digits))})")
    if c.kind in ("pair", "text"):
        if box is not None:
            halves = _balanced_split(controls_as_spaces(c.value)) if split and c.kind == "text" else None
            fit = None if em is None else box / em
            first = None if fit is None else fit - width_em(" −")  # its last word carries the " −"
            text = (f"{_breakable(c.value[0], first)}~$-$\\newline {_breakable(c.value[1], fit)}"
                    if c.kind == "pair" else
                    f"{_breakable(halves[0], fit)}\\newline {_breakable(halves[1], fit)}" if halves else
                    _breakable(c.value, fit))
            # no hyphenation, and no line break at an explicit hyphen ("GPT-5"): names break at spaces
            text = (rf"\parbox[t]{{{box:.0f}pt}}{{\raggedright\hyphenpenalty=10000\exhyphenpenalty=10000"
                    rf"\strut {text}\strut}}")
        else:
            text = f"{esc(c.value[0])} $-$ {esc(c.value[1])}" if c.kind == "pair" else esc(c.value)
        return rf"\mbox{{{text}}}" if math else text
    if math:
        return math_text(cell_text(c, escape=plain))
    if c.missing:
        return "--"
    return _minus(esc(cell_text(c, escape=plain)))


# ------------------------------------------------------------------ layout
def _head_source(c, mark: bool = True) -> str:
    head = HEADS.get(c.key, c.latex if c.latex is not None else esc(c.head))
    return head + ("$^\\dagger$" if c.mark and mark else "")


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
    spaces that best balance the lines (two, or three when two lines are
    still much wider than the column's cells)."""
    src = _head_source(c)
    full = width_em(_visible(src))
    spots = _top_level_spaces(src)
    room = max(cells_em, 2.5) * 1.15
    if full <= room or not spots:
        return src, full, 1

    def lines_of(cut) -> list[str]:
        bounds = [-1, *cut, len(src)]
        return [src[a + 1:b] for a, b in itertools.pairwise(bounds)]

    def widest(cut) -> float:
        return max(width_em(_visible(x)) for x in lines_of(cut))

    cuts = [(i,) for i in spots]
    if len(spots) >= 2 and min(map(widest, cuts)) > room:
        cuts = [(i, k) for i in spots for k in spots if i < k]
    best = min(cuts, key=widest)
    lines = lines_of(best)
    head = r"\begin{tabular}[b]{@{}c@{}}" + "\\\\ ".join(lines) + r"\end{tabular}"
    return head, widest(best), len(lines)


class Layout:
    """Column widths, size and float/longtable choice of one table (one block:
    a table is never split into side-by-side parts)."""

    def __init__(self, t: Table, size: str, pt: float, sep: float = 4.0,
                 label_max: float = 150.0, text_max: float = 100.0, caption: str = ""):
        self.size, self.pt, self.sep = size, pt, sep
        em = pt * OPTICAL.get(size, 1.0)  # widths: the design size's glyphs are relatively wider
        cols = t.columns
        self.box = [None] * len(cols)
        self.heads, self.widths, self.head_lines = [], [], []
        for j, c in enumerate(cols):
            cells = [_cell_em(row[j], math=j > 0 and c.numeric) for row in t.rows] or [0.0]
            cell_em = max(cells)
            limit = (label_max if j == 0 else text_max) / em
            if (not c.numeric or j == 0) and cell_em > limit:
                if all(row[j].kind == "pair" for row in t.rows):
                    cell_em = min(limit, max(_pair_line_em(row[j]) for row in t.rows))
                elif j > 0:  # a method or verdict: two balanced lines
                    cell_em = min(limit, max(_two_lines_em(row[j]) for row in t.rows))
                else:  # the model names: wrapped at their spaces in a column of the limit's width
                    cell_em = limit
                self.box[j] = cell_em * em * 1.08
            head, head_em, lines = _head(c, cell_em)
            self.head_lines.append(lines)
            self.heads.append(head)
            self.widths.append(max(self.box[j] or 0.0, max(cell_em, head_em) * em * WIDTH_FACTOR) + 2 * sep)
        self.blocks = [list(range(len(cols)))]
        tall = [2 if any(c.kind == "pct_se" for c in row) else 1 for row in t.rows]
        for j, b in enumerate(self.box):  # wrapped text cells take several lines
            if b is not None:
                tall = [max(h, _lines(row[j], b / em)) for h, row in zip(tall, t.rows)]
        line = 1.2 * pt
        body = sum(tall) * line + 1.5 * len(t.rows)
        # the caption (10 pt, about 0.47 em a character on the text width) sits in the float too
        caption_lines = math.ceil(len(caption) * 0.47 * 10 / TEXT_WIDTH_PT) if caption else 0
        self.height = body + max(self.head_lines or [1]) * line + 8 + 12 * caption_lines + 10
        self.width = self.block_width(self.blocks[0])

    def block_width(self, block) -> float:
        return sum(self.widths[j] for j in block)

    @property
    def float(self) -> bool:
        """Short enough for a float (else a longtable)."""
        return self.height <= FLOAT_HEIGHT_PT

    @property
    def fits(self) -> bool:
        """As wide as the text, or a float that ``\\resizebox`` shrinks by at most
        :data:`FLOAT_SHRINK` (a longtable cannot be shrunk)."""
        return self.width <= TEXT_WIDTH_PT / (FLOAT_SHRINK if self.float else 1.0)


def _cell_em(c: Cell, math: bool = False) -> float:
    """Estimated width in em; ``math``: in a math-mode column, where a hyphen is a minus sign."""
    text = _cell_plain(c)
    return width_em(text.replace("-", "−") if math and c.kind not in ("text", "pair") else text)


def _pair_line_em(c: Cell) -> float:
    """The wider line of a pair cell set on two lines ("A −" over "B")."""
    a, b = c.value
    return max(width_em(f"{plain(a)} −"), width_em(plain(b)))


def _balanced_split(text: str) -> tuple[str, str] | None:
    """``text`` in two lines at the space that best balances them (None: one word)."""
    spots = [i for i, ch in enumerate(text) if ch == " "]
    if not spots:
        return None
    best = min(spots, key=lambda i: max(width_em(text[:i]), width_em(text[i + 1:])))
    return text[:best], text[best + 1:]


def _two_lines_em(c: Cell) -> float:
    """The wider line of a text cell broken at the space that best balances two lines."""
    text = plain(cell_text(c, escape=plain))
    halves = _balanced_split(text)
    return width_em(text) if halves is None else max(map(width_em, halves))


def _lines(c: Cell, box_em: float) -> int:
    if c.kind == "pair":
        return sum(max(1, math.ceil(width_em(plain(v)) / box_em)) for v in c.value)
    return max(1, math.ceil(_cell_em(c) / box_em))


def layout(t: Table, caption: str = "", sizes=SIZES) -> Layout:
    """The first size at which the table fits the text width and a page (a
    float), else the first at which it fits the width (a longtable), else
    the smallest."""
    tries = [Layout(t, *size, caption=caption) for size in sizes]
    for lay in tries:
        if lay.fits and lay.float:
            return lay
    return next((lay for lay in tries if lay.fits), tries[-1])


# ------------------------------------------------------------------ fitting and captions
def _short_verdicts(t: Table) -> Table:
    """The verdict of a pair as "A higher", "B higher" or "n.s." (the pair
    column names A and B), so the column stays narrow."""
    keys = [c.key for c in t.columns]
    if "verdict" not in keys or not t.columns or t.columns[0].key != "pair":
        return t
    j = keys.index("verdict")
    rows = []
    for row in t.rows:
        a, b = row[0].value if row[0].kind == "pair" else (None, None)

        def short(word):
            return ("A higher" if word == f"{a} higher" else "B higher" if word == f"{b} higher" else
                    "n.s." if word == "not different" else word)
        word, _, judged = row[j].value.partition(" (judge alone: ")  # the Judge section's changed verdicts
        word = short(word) + (f" (judge: {short(judged[:-1])})" if judged.endswith(")") else "")
        rows.append(row[:j] + (Cell("text", word),) + row[j + 1:])
    return replace(t, rows=tuple(rows))


def _without(t: Table, keys) -> Table:
    keep = [j for j, c in enumerate(t.columns) if c.key not in keys]
    return replace(t, columns=tuple(t.columns[j] for j in keep),
                   rows=tuple(tuple(row[j] for j in keep) for row in t.rows))


def _constant_columns(t: Table) -> list:
    """Columns of :data:`FOLDABLE` holding one value in every row: ``(column, text)``."""
    out = []
    for j, c in enumerate(t.columns):
        if c.key in FOLDABLE and len(t.rows) > 1:
            values = {cell_text(row[j], escape=plain) for row in t.rows}
            if len(values) == 1:
                out.append((c, values.pop()))
    return out


def _optional(t: Table) -> list[str]:
    """Keys of the columns that may be left out to fit the page, first to go first."""
    from bayeserr.registries.methods import INTERVALS
    keys = [c.key for c in t.columns]
    if t.key == "models":
        methods = [k for k in keys if k in INTERVALS]
        return [k for k in ("deff", "se_clt") if k in keys] + methods[::-1]
    return [k for k in OPTIONAL.get(t.key, ()) if k in keys]


def fit(t: Table) -> tuple[Table, Layout, list, list]:
    """The table as printed and its layout, in one block (never split into
    side-by-side parts), the first of: as it is at ``\\small`` or
    ``\\footnotesize``; for the per-model table, with the columns holding one
    value in every row (:data:`FOLDABLE`) moved into the caption; at
    ``\\scriptsize``; with optional columns (``_optional``) left out one
    at a time, each named in the caption (one holding a single value is
    folded into the caption instead).  Returns ``(table, layout, folded,
    omitted)``."""
    t = _short_verdicts(t)
    # the height counts the caption and the note under the table (in a smaller size: 0.8 of a
    # caption character), the column meanings included
    keys = {c.key for c in t.columns}
    note = " ".join([*t.latex_notes, *(text for key, text in COLUMN_NOTES.get(t.key, ()) if key in keys)])
    caption = t.caption + " " * int(0.8 * len(note))
    lay = layout(t, caption, SIZES[:-1])
    if lay.fits:
        return t, lay, [], []
    folded = _constant_columns(t) if t.key in FOLD_FIRST else []
    t = _without(t, {c.key for c, _ in folded})
    lay = layout(t, caption)
    omitted = []
    for key in _optional(t):
        if lay.fits:
            break
        same = [(c, v) for c, v in _constant_columns(t) if c.key == key]
        if same:
            folded += same
        else:
            omitted.append(next(c for c in t.columns if c.key == key))
        t = _without(t, {key})
        lay = layout(t, caption)
    return t, lay, folded, omitted


def _mark_note(t: Table) -> str:
    return r" $^\dagger$~Assumes independent questions (not cluster-aware)." if any(
        c.mark for c in t.columns) else ""


def _method_note(t: Table, folded=()) -> str:
    """What the Method column holds (or held, when it was folded into the
    caption): the method recommended for each model's data, with the meaning
    of each method that appears."""
    from bayeserr.registries.methods import INTERVALS
    keys = [c.key for c in t.columns]
    if "method" in keys:
        j = keys.index("method")
        shown = {str(row[j].value) for row in t.rows}
    else:
        shown = {v for c, v in folded if c.key == "method"}
    if not shown:
        return ""
    about = [f"{esc(m.label)}: {esc(m.meaning.rstrip('.'))}" for m in INTERVALS.values()
             if m.label in shown and m.meaning]
    return (" Method: the method of the interval column, the one recommended for each model's data"
            + (" (" + "; ".join(about) + ")." if about else "."))


def caption_latex(t: Table, folded=(), omitted=(), explain: bool = True) -> tuple[str, str]:
    """``(caption, note)`` as LaTeX source.  The caption is the table's own
    (its title and, for the ranking, the short answer), at most about three
    lines; the note, printed under the table in a smaller size, says
    (``explain``) what each column means (:data:`COLUMN_NOTES`, the methods,
    the † mark; so the table can go into a paper as it is), the values common
    to every row, the columns left out to fit the page and the table's own
    LaTeX notes (``latex_notes``, first)."""
    keys = {c.key for c in t.columns} | {c.key for c, _ in folded}
    parts = [prose(n) for n in getattr(t, "latex_notes", ())]
    if explain:
        parts += [text for key, text in COLUMN_NOTES.get(t.key, ()) if key in keys]
    text = " ".join(parts)
    if explain:
        text += _method_note(t, folded) + _mark_note(t)
    if folded:
        who = "model" if t.key == "models" else "pair" if t.key == "pairs" else "row"
        same = ", ".join(rf"\mbox{{{_head_source(c)} $= {math_text(v)}$}}" if c.numeric else
                         f"{_head_source(c)}: {esc(v)}" for c, v in folded)
        text += f" The same for every {who}: {same}."
    if omitted:
        names = ", ".join(_head_source(c, mark=False) for c in omitted)
        text += (f" Left out to fit the page: {names} (in the Markdown, HTML and JSON reports; "
                 "choose the intervals with \\texttt{--methods})." if t.key == "models" else
                 f" Left out to fit the page: {names} (in the Markdown, HTML and JSON reports).")
    return prose(t.caption), text.strip()


def _block(t: Table, lay: Layout, block) -> tuple[str, str, list[str]]:
    """(column spec, header line, body lines) of one block."""
    math = [pos > 0 and t.columns[j].numeric for pos, j in enumerate(block)]
    spec = "".join(">{$}c<{$}" if m else ("l" if pos == 0 else "c") for pos, m in enumerate(math))
    heads = [rf"\multicolumn{{1}}{{c}}{{{lay.heads[j]}}}" if m else lay.heads[j]
             for m, j in zip(math, block)]
    end = r" \\[2pt]" if any(lay.box[j] is not None for j in block) else r" \\"  # air between wrapped rows
    em = lay.pt * OPTICAL.get(lay.size, 1.0)

    def split(pos, j, cell) -> bool:  # break at the balanced space only a cell too wide for its box
        return pos > 0 and lay.box[j] is not None and _cell_em(cell) * em > lay.box[j]
    body = [" & ".join(cell_latex(row[j], math=m, box=lay.box[j], split=split(pos, j, row[j]), em=em)
                       for pos, (m, j) in enumerate(zip(math, block))) + end
            for row in t.rows]
    return spec, " & ".join(heads) + r" \\", body


def render_table(t: Table, label: str | None = None, explain: bool = False) -> tuple[str, set]:
    """A table as LaTeX source, and the packages it needs; ``explain``: the
    caption also says what each column means (as in a report)."""
    t, lay, folded, omitted = fit(t)
    label = label or "tab:bayeserr-" + t.key
    size = [rf"\{lay.size}", rf"\setlength{{\tabcolsep}}{{{lay.sep:g}pt}}"]
    title, note = caption_latex(t, folded, omitted, explain)
    caption = rf"\caption{{{title}}}"
    spec, head, body = _block(t, lay, lay.blocks[0])
    n = len(lay.blocks[0])
    if lay.height > FLOAT_HEIGHT_PT:
        # the note: a paragraph right under the table (a longtable row as wide as the note would
        # widen the table's last column)
        after = [rf"\nopagebreak{{\footnotesize\raggedright {note}\par}}"] if note else []
        lines = [r"\begingroup", *size, rf"\begin{{longtable}}{{{spec}}}", caption + rf"\label{{{label}}}\\",
                 r"\toprule", head, r"\midrule", r"\endfirsthead",
                 rf"\multicolumn{{{n}}}{{l}}{{\emph{{Table~\thetable{{}} (continued)}}}}\\",
                 r"\toprule", head, r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot",
                 *body, r"\end{longtable}", *after, r"\endgroup"]
        return "\n".join(lines), {"booktabs", "array", "longtable"}
    env = "table*" if lay.width > COLUMN_WIDTH_PT else "table"
    under = [rf"\par\smallskip{{\footnotesize\raggedright {note}\par}}"] if note else []
    lines = [rf"\begin{{{env}}}[t]", r"\centering", *size,
             r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule", head, r"\midrule", *body, r"\bottomrule",
             r"\end{tabular}}", caption, rf"\label{{{label}}}", *under, rf"\end{{{env}}}"]
    return "\n".join(lines), {"booktabs", "array", "graphicx"}


ORDER = ("booktabs", "array", "graphicx", "longtable")


def short_name(name) -> str:
    """``name`` when at most :data:`LONG_NAME` characters, else its first
    ``NAME_HEAD`` characters, "…", its length and a tag from a hash of
    the whole name (two names that differ only after the cut stay apart):
    ``"xxxx… (10,000 characters, #3fa2c1)"``."""
    name = str(name)
    if len(name) <= LONG_NAME:
        return name
    # the figures tag cut names that meet with the first 4 of these digits (plots.short_names)
    tag = hashlib.blake2b(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"{name[:NAME_HEAD]}… ({len(name):,} characters, #{tag})"


def _cut_long_names(blocks) -> tuple[list, dict]:
    """The blocks with every name over :data:`LONG_NAME` characters (a table's
    first column holds the names, as text or pair cells) cut by
    :func:`short_name` in cells ("A higher" too), captions, notes and
    warnings; and ``{full name: cut}``."""
    names = {}
    for b in blocks:
        if isinstance(b, Table):
            for row in b.rows:
                c = row[0] if row else Cell("num", None)
                for v in c.value if c.kind == "pair" else (c.value,) if c.kind == "text" else ():
                    if isinstance(v, str) and len(v) > LONG_NAME:
                        names.setdefault(v, short_name(v))
    if not names:
        return list(blocks), {}
    longest_first = sorted(names, key=len, reverse=True)

    def text(s):
        if not isinstance(s, str):
            return s
        for n in longest_first:
            if n in s:
                s = s.replace(n, names[n])
        return s

    def cell(c: Cell) -> Cell:
        if c.kind == "pair":
            return replace(c, value=tuple(names.get(v, v) if isinstance(v, str) else v for v in c.value))
        if c.kind == "text" and isinstance(c.value, str):
            return replace(c, value=text(c.value))
        return c
    out = []
    for b in blocks:
        if isinstance(b, Table):
            b = replace(b, caption=text(b.caption), rows=tuple(tuple(map(cell, row)) for row in b.rows),
                        latex_notes=tuple(map(text, b.latex_notes)))
        elif isinstance(b, doc.Para):
            b = replace(b, text=text(b.text))
        elif isinstance(b, doc.Bullets):
            b = replace(b, items=tuple((code, text(t)) for code, t in b.items))
        out.append(b)
    return out, names


def latex_blocks(blocks) -> list:
    """The blocks as LaTeX shows them: each table's LaTeX variant where it has one, the
    paragraphs said otherwise in LaTeX left out, and each fold's tables with its title
    in their captions (LaTeX has no place for the fold's title)."""
    out = []
    for b in blocks:
        if isinstance(b, doc.Fold):
            out += [replace(t, caption=f"{b.title}. {t.caption}") if isinstance(t, Table) else t
                    for t in latex_blocks(b.blocks)]
        elif isinstance(b, Table):
            out.append(b.latex_variant or b)
        elif not (isinstance(b, doc.Para) and not b.latex):
            out.append(b)
    return out


def render_blocks(blocks, header: str, explain: bool = False) -> str:
    """The blocks as LaTeX: tables (``explain``: captions that say what each
    column means), notes, row accounting and warnings as comments."""
    blocks, cut = _cut_long_names(latex_blocks(blocks))
    parts, needs, seen = [], set(), {}
    for b in blocks:
        if isinstance(b, Table):
            seen[b.key] = seen.get(b.key, 0) + 1  # each task's tables repeat the keys: labels stay unique
            label = f"tab:bayeserr-{b.key}" + (f"-{seen[b.key]}" if seen[b.key] > 1 else "")
            text, pkgs = render_table(b, label, explain=explain)
            parts.append(text)
            needs |= pkgs
        elif isinstance(b, doc.Para) and b.role in ("rows", "note", "verdict"):
            parts.append(comment(b.text))
        elif isinstance(b, doc.Bullets):
            parts.append("\n".join(comment(f"warning [{code}] {text}") for code, text in b.items))
    if cut:
        parts.append("\n".join([comment(f"Names over {LONG_NAME} characters are cut above to their first "
                                         f"{NAME_HEAD}, their length and a tag; in full:"),
                                 *(comment(f"{label}: {name}") for name, label in cut.items())]))
    pkgs = ",".join(p for p in ORDER if p in needs) or "booktabs"
    head = [comment(header), f"% requires \\usepackage{{{pkgs}}}"]
    if "longtable" in needs:
        head.append("% (longtable: one-column mode only; see bayeserr.renderers.latex)")
    return "\n\n".join(head + parts) + "\n"


def render(rep) -> str:
    """The report's sections as the LaTeX tables show them (:func:`latex_blocks`): each table
    with a caption that says what its columns mean, notes, row accounting and warnings as
    comments."""
    from bayeserr.reporting.sections import report_blocks
    return render_blocks(report_blocks(rep, latex=True), f"bayeserr report: {rep.source}", explain=True)
