"""Numbers as the early-stopping texts write them (``bayeserr watch``, its page and figure,
the Inspect manager's log, the report's note on a stopped log): a score in points with one
decimal and a true minus sign, a ``+`` on differences.  In the base layer because the data
reader quotes a stopped log's sequence in this format too."""

from __future__ import annotations

import math


def points(x: float, signed: bool = False) -> str:
    """A score (0.744) in points: 74.4; with ``signed`` (a difference) +25.1 or −0.6; "–" when
    missing or not finite."""
    if x is None or not math.isfinite(x):
        return "–"
    return f"{100 * x:{'+' if signed else ''}.1f}".replace("-", "−")


def interval(lower: float, upper: float, signed: bool = False) -> str:
    """``[lower, upper]`` in points (:func:`points`)."""
    return f"[{points(lower, signed)}, {points(upper, signed)}]"
