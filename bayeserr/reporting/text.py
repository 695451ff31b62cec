"""Plain-text pieces every renderer shares: control characters removed from
user text, Markdown escaping, numbers, p-values and intervals in percentage
points, and one table cell as text."""

from __future__ import annotations

import math
import re

from bayeserr.base import formats
from bayeserr.base.names import visible
from bayeserr.reporting.tables import Cell

#: Markdown that user text must not make: table cells (|), code (`), raw HTML (<tag), links and
#: images ([text](url), ![alt](url): a remote image is a tracking pixel where the .md is rendered;
#: escaping the "]" of "](" or "][" breaks both, and leaves plain brackets such as "[0, 1]" alone),
#: math ($…$, which GitHub and most renderers typeset) and emphasis (*…*)
_MARKUP = re.compile(r"([\\|`$*]|\](?=[(\[])|<(?=[A-Za-z/!?]))")


def plain(text) -> str:
    """Text as reports show it: control characters (ANSI/OSC escapes, newlines) as
    spaces, and the characters that make two names look the same (bidirectional
    overrides, zero-width joiners, decomposed accents) written as ``{U+XXXX}``
    (:func:`bayeserr.base.names.visible`)."""
    return visible(controls_as_spaces(text))


def controls_as_spaces(text) -> str:
    """User text with newlines, C0/C1 controls (ANSI/OSC escapes) and line separators as spaces."""
    return _C0.sub(" ", str(text).replace("\n", " ").replace("\r", " "))


#: the C0/C1 controls and line separators of CONTROL: shown as a space (the format
#: characters CONTROL also holds, such as bidirectional overrides, are shown by visible())
_C0 = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def esc(text) -> str:
    """User text safe inside a Markdown table cell or line."""
    return _MARKUP.sub(r"\\\1", plain(text))


def number(x, digits: int = 2) -> str:
    """A number with a true minus; "–" when missing or not finite (:mod:`bayeserr.base.formats`)."""
    return "–" if x is None or not math.isfinite(x) else formats.number(x, digits)


pval = formats.pvalue


def interval(ci, digits: int = 1) -> str:
    """An interval in points, ``[−1.2, 3.4]``."""
    if ci is None:
        return "–"
    return f"[{pct(ci[0], digits)}, {pct(ci[1], digits)}]"


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
        return pct(v, c.digits)
    if c.kind == "pct_se":
        return f"{pct(v, c.digits)} ({pct(c.se, c.digits)})"
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


def pct(x, digits: int = 1) -> str:
    """A score in percentage points (:func:`bayeserr.base.formats.points`; "pct" is points
    throughout the report tables); "–" when missing or not finite."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return formats.points(x, digits)
