"""Errors that carry a message meant for the person at the keyboard.

Every :class:`InputError` names the problem, where it is (file, rows) and the
fix.  The CLI prints the message and exits with code 2, never a traceback.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input data or arguments; the message says what and how to fix it."""


def _row_list(rows, limit: int = 5) -> str:
    """Format data-file row numbers (1-based, header = line 1) for a message."""
    rows = list(rows)
    shown = ", ".join(str(r) for r in rows[:limit])
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"{shown}{more}"


def suggest(name: str, choices) -> str:
    """A "did you mean" hint for an unknown name, or an empty string."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1)
    return f" Did you mean '{close[0]}'?" if close else ""
