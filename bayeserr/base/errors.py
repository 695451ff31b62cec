"""Errors that carry a message meant for the person at the keyboard.

Every :class:`InputError` names the problem, where it is (file, member, rows)
and the fix.  The CLI prints the message and exits with code 2, never a
traceback.
"""

from __future__ import annotations

import re

#: characters user text must not carry into a report or a terminal: C0/C1 controls (escape
#: sequences start with one) other than newline and tab, the Unicode line separators, and the
#: bidirectional controls (U+202E would reverse the rest of a name)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class InputError(ValueError):
    """Bad input data or arguments; the message says what and how to fix it."""


def row_list(rows, limit: int = 5) -> str:
    """Format data-file row numbers (1-based, header = line 1) for a message,
    or any other list of places (``"a.eval samples/3_epoch_1.json"``)."""
    from bayeserr.base.formats import some
    return some(rows, limit)


def human_bytes(n: float) -> str:
    """``3221225472`` -> ``"3.0 GiB"`` (binary units, for size limits in messages)."""
    n = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{int(n)} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def describe(value) -> str:
    """A short description of an unexpected argument for a message: its type and value."""
    text = " ".join(repr(value).split())  # one line: a DataFrame's or Dataset's repr has many
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def suggest(name: str, choices) -> str:
    """A "did you mean" hint for an unknown name, or an empty string."""
    import difflib

    names = [str(c) for c in choices]
    typed = str(name).lower()
    # a name holding what was typed first ('Claude 4.5 Opus' is 'Claude 4.5 Opus medium (20251101)',
    # not the closer-spelled 'Claude 4 Opus (20250514)'): the one that starts with it, else the shortest
    holding = sorted((c for c in names if len(typed) >= 2 and typed in c.lower()),
                     key=lambda c: (not c.lower().startswith(typed), len(c)))
    close = holding[:1] or difflib.get_close_matches(str(name), names, n=1)
    return f" Did you mean '{close[0]}'?" if close else ""
