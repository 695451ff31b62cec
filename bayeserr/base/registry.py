"""Named things a user can choose (interval methods, output formats, figure
kinds, cluster corrections, …): one registry each, one lookup with a
"did you mean" error, and the list of choices the CLI offers; and the one
check of numeric option ranges every command uses."""

from __future__ import annotations

import math

from bayeserr.base.errors import InputError, suggest


class Registry(dict):
    """An ordered ``name -> item`` mapping whose lookups fail helpfully.

    ``what`` names the kind of thing in messages; ``option`` the CLI flag
    that chooses it, so the error says which option was wrong.
    """

    def __init__(self, what: str, option: str | None = None, items=()):
        super().__init__(items)
        self.what = what
        self.option = option

    def add(self, name: str, item):
        if name in self:
            raise ValueError(f"{self.what} '{name}' is registered twice")
        self[name] = item
        return item

    def get_checked(self, name):
        """The item called ``name``; an :class:`InputError` naming the choices if none."""
        if name in self:
            return self[name]
        where = f"{self.option} " if self.option else ""
        raise InputError(f"{where}'{name}' is not a known {self.what}.{suggest(name, self)} "
                         f"Choose one of: {', '.join(self)}.")

    def check(self, name) -> str:
        self.get_checked(name)
        return name

    @property
    def choices(self) -> list[str]:
        return list(self)


def check_range(option: str, value, low=None, high=None, *, low_open=False, high_open=False,
                integer=False):
    """Return ``value`` if it is a finite number in the range, else an
    :class:`InputError` naming ``option`` and the range."""
    def text():
        lo = "−∞" if low is None else f"{low:g}"
        hi = "∞" if high is None else f"{high:g}"
        kind = "a whole number" if integer else "a number"
        if low == 0 and low_open:
            kind = "a positive " + kind.split(" ", 1)[1]
        return (f"{option} must be {kind} in {'(' if low_open or low is None else '['}{lo}, "
                f"{hi}{')' if high_open or high is None else ']'} (got {value!r}).")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(text()) from None
    if isinstance(value, bool) or not math.isfinite(v) or (integer and v != int(v)):
        raise InputError(text())
    if low is not None and (v < low or (low_open and v == low)):
        raise InputError(text())
    if high is not None and (v > high or (high_open and v == high)):
        raise InputError(text())
    return int(v) if integer else v


def check_level(value, option: str = "--level") -> float:
    return check_range(option, value, 0, 1, low_open=True, high_open=True)
