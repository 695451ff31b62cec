"""What result collections have in common: lookup by name (or pair),
iteration, ``to_dict`` for JSON and ``to_frame`` for pandas (NaN, not
``None``, so columns stay numeric)."""

from __future__ import annotations

import math

import numpy as np

from bayeserr.base.errors import InputError, describe, suggest


def frame_value(v):
    """A JSON-style value as a DataFrame cell: ``None`` becomes NaN."""
    return np.nan if v is None else v


class ResultIndexError(InputError, IndexError):
    """A position outside the results: an :class:`InputError` that is still
    an :class:`IndexError`, as sequences promise."""


class ResultList(tuple):
    """An immutable sequence of results keyed by ``key`` (an attribute name,
    or a tuple of names for pairs)."""

    key: str | tuple = "model"

    def _key_of(self, item):
        if isinstance(self.key, tuple):
            return tuple(getattr(item, k) for k in self.key)
        return getattr(item, self.key)

    def __getitem__(self, which):
        if isinstance(which, slice):
            return tuple.__getitem__(self, which)
        if isinstance(which, (int, np.integer)) and not isinstance(which, (bool, np.bool_)):
            if -len(self) <= which < len(self):
                return tuple.__getitem__(self, which)
            raise ResultIndexError(f"no result {which}: there are {len(self)} results (positions 0 to "
                                   f"{len(self) - 1}). Look one up by position in range or by name.")
        pairs = isinstance(self.key, tuple)
        if pairs and not (isinstance(which, (tuple, list)) and len(which) == 2):
            raise InputError(f"comparisons are looked up by a pair of model names, e.g. comps['A', 'B'] "
                             f"or comps.get('A', 'B'); got {describe(which)}.")
        wanted = tuple(str(w) for w in which) if pairs else str(which)
        for item in self:
            if self._key_of(item) == wanted:
                return item
        keys = [self._key_of(i) for i in self]
        if pairs:
            shown = f"({', '.join(repr(w) for w in wanted)})"
            if wanted[::-1] in keys:  # the other orientation: B − A, as asked
                item = self[wanted[::-1]]
                if hasattr(item, "flipped"):
                    return item.flipped()
                a, b = wanted[::-1]
                raise InputError(f"{shown} is not among the results: the pair is stored as ('{a}', '{b}'), "
                                 f"estimating {a} − {b}. Look up comps['{a}', '{b}'] and flip the sign of "
                                 "its difference.")
            names = sorted({m for k in keys for m in k})
            missing = [w for w in wanted if w not in names]
            hint = (f" '{missing[0]}' is in no pair.{suggest(missing[0], names)}" if missing else
                    " The pair was not compared (it shares fewer than 2 questions, or was left out).")
            raise InputError(f"{shown} is not among the results.{hint}")
        names = [str(k) for k in keys]
        more = " and more" if len(names) > 20 else ""
        raise InputError(f"'{wanted}' is not among the results.{suggest(wanted, names)} "
                         f"Results: {', '.join(names[:20]) or 'none'}{more}.")

    def get(self, *which):
        """Look up by name, or by ``(a, b)`` for pairs (``get(a, b)`` works too)."""
        if not which:
            raise InputError(f"get takes a model name (or two for a pair), e.g. .get('A') or "
                             f".get('A', 'B'); got nothing. The results: {self!r}.")
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
