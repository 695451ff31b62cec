"""Number formats of the lab's published sections (``docs/calibration.md``), beside those
of :mod:`bayeserr.base.formats` (a share in percent, :func:`~bayeserr.base.formats.percent`):
a rate with its Monte Carlo SE, a nominal level, and the test for a missing value.  No heavy import, so a lab module can use them at import time."""

from __future__ import annotations

import math


def pm(rate: float, se: float) -> str:
    """``12.3 ± 0.4`` (points)."""
    return f"{100 * rate:.1f} ± {100 * se:.1f}"


def nominal(x: float) -> str:
    """A nominal rate as set (``5%``, ``95%``), not as measured."""
    return f"{round(100 * x, 6):g}%"


def missing(x) -> bool:
    """None or NaN (a cell of the results that does not apply)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def findings_head(command: str, findings) -> list[str]:
    """A published section's opening after its description: how to reproduce it, then
    "What the numbers say" and the ``findings`` lines."""
    return ["", f"Reproduce: `{command}`", "", "### What the numbers say", "", *findings]


def rate_cells(by: dict, keys, rate: str, flag) -> list[str]:
    """One table row's cells: ``by[key]``'s ``rate`` ± its ``rate_se`` (points) for each of
    ``keys``, in bold where ``flag(row)`` says the rate is clearly off its nominal value;
    ``–`` for a key without a row."""
    cells = []
    for key in keys:
        if key not in by:
            cells.append("–")
            continue
        text = pm(by[key][rate], by[key][rate + "_se"])
        cells.append(f"**{text}**" if flag(key, by[key]) else text)
    return cells
