"""Numbers and lists of names in text, the same in every format and command (reports,
``compare``, ``gate``, ``watch``, the lab, the Inspect manager's log): one minus sign
(U+2212, ``−0.4``), scores in percentage **points** (:func:`points`: 0.744 → ``74.4``) and
shares in **percent** (:func:`percent`: 0.05 → ``5.0%``), p-values, intervals, and "a, b
and N more".  In the base layer because the data readers quote numbers in these formats
too."""

from __future__ import annotations

import math

#: the minus sign of every number shown (the hyphen-minus only in JSON and CSV)
MINUS = "\u2212"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def number(x, digits: int = 2, signed: bool = False, grouped: bool = False) -> str:
    """``x`` with ``digits`` decimals and a true minus (``−2.31``); ``signed``: a ``+`` on
    positive values (a difference), none on zero; ``grouped``: thousands separated
    (``12,345``); "–" when missing, ``−∞`` / ``+∞`` (``∞`` unsigned) for unbounded values."""
    if _missing(x):
        return "–"
    if math.isinf(x):
        return MINUS + "∞" if x < 0 else ("+∞" if signed else "∞")
    v = round(float(x), digits)
    if v == 0:
        v = 0.0  # no "−0.0"
    text = f"{v:{'+' if signed and v != 0 else ''}{',' if grouped else ''}.{digits}f}"
    return text.replace("-", MINUS)


def points(x, digits: int = 1, signed: bool = False) -> str:
    """A score (0.744) in percentage points: ``74.4``; with ``signed`` (a difference)
    ``+25.1`` or ``−0.6`` (:func:`number`)."""
    return number(x if _missing(x) else 100 * x, digits, signed)


def interval(lower, upper, digits: int = 1, signed: bool = False) -> str:
    """``[lower, upper]`` in points (:func:`points`)."""
    return f"[{points(lower, digits, signed)}, {points(upper, digits, signed)}]"


def percent(x, digits: int = 1) -> str:
    """A share (0.05) in percent: ``5.0%``."""
    return "–" if _missing(x) else f"{number(100 * x, digits)}%"


def pvalue(p) -> str:
    """A p-value: four decimals, ``<0.0001`` below; "–" when missing."""
    if p is None or not math.isfinite(p):
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def some(items, limit: int, sep: str = ", ") -> str:
    """The first ``limit`` of ``items`` joined by ``sep``, then "and N more" when there are more."""
    items = [str(i) for i in items]
    more = len(items) - limit
    return sep.join(items[:limit]) + (f" and {more:,} more" if more > 0 else "")
