"""What result collections have in common: lookup by name (or pair),
iteration, ``to_dict`` for JSON and ``to_frame`` for pandas (NaN, not
``None``, so columns stay numeric)."""

from __future__ import annotations

import math

import numpy as np

from .errors import InputError, suggest


def frame_value(v):
    """A JSON-style value as a DataFrame cell: ``None`` becomes NaN."""
    return np.nan if v is None else v


class ResultList(tuple):
    """An immutable sequence of results keyed by ``key`` (an attribute name,
    or a tuple of names for pairs)."""

    key: str | tuple = "model"

    def _key_of(self, item):
        if isinstance(self.key, tuple):
            return tuple(getattr(item, k) for k in self.key)
        return getattr(item, self.key)

    def __getitem__(self, which):
        if isinstance(which, (int, np.integer, slice)):
            return tuple.__getitem__(self, which)
        for item in self:
            if self._key_of(item) == which:
                return item
        names = [str(self._key_of(i)) for i in self]
        raise InputError(f"'{which}' is not among the results.{suggest(str(which), names)}")

    def get(self, *which):
        """Look up by name, or by ``(a, b)`` for pairs (``get(a, b)`` works too)."""
        return self[which[0] if len(which) == 1 else tuple(which)]

    def to_dict(self) -> list[dict]:
        return [item.to_dict() for item in self]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} results)"

    def _repr_html_(self) -> str:
        """Jupyter shows the results as their table."""
        return self.to_frame()._repr_html_()


def finite_or_none(x):
    """``None`` for missing or non-finite numbers, else a float."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
