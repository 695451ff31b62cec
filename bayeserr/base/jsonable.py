"""Plain JSON: NaN and infinities become ``null``, numpy scalars and arrays
become Python numbers and lists.  Used by every result's ``to_dict`` and by
the JSON outputs of the report, the comparison and the power plan."""

from __future__ import annotations

import json
import math

import numpy as np


def as_float(x):
    """A plain float for JSON: ``None`` for NaN and infinities."""
    x = float(x)
    return x if math.isfinite(x) else None


def to_jsonable(obj):
    """Plain JSON types: NaN and infinities become ``None`` (JSON ``null``)."""
    t = type(obj)
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is dict:
        return {k: to_jsonable(v) for k, v in obj.items()}
    if t is list or t is tuple:
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.floating):
        return to_jsonable(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    return obj


def dumps(obj, indent: int | None = 2) -> str:
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False)
