"""Row filters (``--where``): one syntax for ``report``, ``compare``,
``power --pilot`` (through :func:`bayeserr.load`'s ``where=``) and ``arena``.

An expression names a column, an operator and a value::

    col=value        the value (text; numbers also compare as numbers: turn=2 matches 2.0)
    col=a,b,c        any of the values
    col!=value       not the value (col!=a,b: none of them); a missing value is "not equal"
    col<N  col<=N    numeric comparisons; rows with no value never match
    col>N  col>=N    (when N is not a number the values are compared as text, e.g. ISO dates;
                     N may be inf or -inf; NaN is an error, as nothing compares with it)

Integer columns compare with integer values exactly (``big=9007199254740993``
is not ``2**53``, as it would be in floating point).

``==`` is read as ``=``; a literal comma inside a value is written ``\\,``.
Several expressions must all hold (AND).  Each expression drops the rows
still present that fail it, counted under the reason ``--where EXPR``.  A
column that is not there is an error naming the columns available (with a
"did you mean"); so is a ``=``/``!=`` value that no remaining row has, and an
expression that leaves no rows.

:func:`apply_where` is pure: it returns the kept rows and, per expression,
the mask of rows it removed; it never touches the input.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError, suggest
from bayeserr.base.formats import some

#: operators, longest first (so ``<=`` is not read as ``<``)
OPERATORS = ("==", "!=", "<=", ">=", "=", "<", ">")
SYNTAX = ("COL=VALUE, COL=A,B (any of), COL!=VALUE, COL!=A,B (none of), COL<N, COL<=N, COL>N "
          "or COL>=N")
_OP_CHARS = "=!<>"


@dataclass(frozen=True)
class Condition:
    """One parsed ``--where`` expression."""

    column: str
    op: str  #: one of =, !=, <, <=, >, >=
    values: tuple  #: text; one value for the numeric operators

    @property
    def text(self) -> str:
        return f"{self.column}{self.op}{','.join(v.replace(',', chr(92) + ',') for v in self.values)}"

    @property
    def reason(self) -> str:
        """The row-accounting reason of the rows this expression drops."""
        return f"--where {self.text}"

    def mask(self, series: pd.Series) -> np.ndarray:
        """``True`` for the rows of ``series`` that satisfy the expression."""
        fast = self._numeric_mask(series)
        if fast is not None:
            return fast
        if self.op in ("=", "!="):
            return self.from_hits(self.value_hits(series), len(series))
        codes, uniques = _factorize(series)
        return np.append(self._compare(uniques), False)[codes]  # missing: no match

    def from_hits(self, hits: dict, n: int) -> np.ndarray:
        """The mask of a ``=``/``!=`` expression from :meth:`value_hits`."""
        per_row = np.zeros(n, dtype=bool)
        for hit in hits.values():
            per_row |= hit
        return ~per_row if self.op == "!=" else per_row

    def value_hits(self, series: pd.Series) -> dict:
        """``{value: rows equal to it}`` for each value of a ``=``/``!=`` expression
        (missing values equal nothing)."""
        if self._numeric_mask(series) is not None:
            if _integer_column(series):
                return {v: _integer_compare(series, "=", v) for v in self.values}
            x = series.to_numpy(dtype=float, na_value=np.nan)
            return {v: x == _number(v) for v in self.values}
        codes, index = _factorize(series)
        text = len(index) == 0 or _all_text(index)
        out = {}
        for value in self.values:
            hit = np.asarray(index == value, dtype=bool) if text else _equal_to(list(index), value)
            out[value] = np.append(hit, False)[codes]  # code -1 (missing): never equal
        return out

    def _numeric_mask(self, series: pd.Series) -> np.ndarray | None:
        """The mask in one array operation for a plain numeric column and
        numeric values (None otherwise: the general path, value by value)."""
        dtype = series.dtype
        if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype) \
                or isinstance(dtype, pd.CategoricalDtype):
            return None
        numbers = [_number(v) if self.op in ("=", "!=") else _bound(v) for v in self.values]
        if any(n is None for n in numbers):
            return None
        if _integer_column(series):  # exactly, as integers (not as floats: 2**53 + 1 is not 2**53)
            if self.op in ("=", "!="):
                hit = np.zeros(len(series), dtype=bool)
                for v in self.values:
                    hit |= _integer_compare(series, "=", v)
                return ~hit if self.op == "!=" else hit
            return _integer_compare(series, self.op, self.values[0])
        x = series.to_numpy(dtype=float, na_value=np.nan)
        if self.op in ("=", "!="):
            hit = np.isin(x, numbers)  # NaN is never among them
            return ~hit if self.op == "!=" else hit
        with np.errstate(invalid="ignore"):
            return _TEXT_CMP[self.op](x, numbers[0])  # NaN: False

    def _compare(self, uniques) -> np.ndarray:
        value = self.values[0]
        number = _bound(value)
        cmp = _TEXT_CMP[self.op]
        if not len(uniques):
            return np.zeros(0, dtype=bool)
        index = pd.Index(uniques)
        text = _all_text(index)
        if number is None:  # text comparison (ISO dates and the like)
            labels = index if text else pd.Index(np.asarray(index.map(_text), dtype=object))
            return np.asarray(_TEXT_CMP[self.op](labels, value), dtype=bool)
        if text:
            numbers = pd.to_numeric(pd.Series(index).str.strip(), errors="coerce")
        else:
            numbers = pd.Series([_number(u) for u in index], dtype=float)
        numbers = numbers.to_numpy(dtype=float, na_value=np.nan)
        bad = np.flatnonzero(~np.isfinite(numbers))
        if len(bad):
            raise InputError(f"--where {self.text}: column '{self.column}' holds text (e.g. "
                             f"'{_text(index[bad[0]])}'), which {self.op} cannot compare with the number "
                             f"{value}. Use = or != on text columns.")
        return cmp(numbers, number)


def _all_text(index: pd.Index) -> bool:
    """Whether every value is a string (checked in C, not value by value)."""
    if isinstance(index.dtype, pd.StringDtype) or str(index.dtype) in ("str", "string"):
        return True
    return index.dtype == object and pd.api.types.infer_dtype(index, skipna=False) == "string"


_TEXT_CMP = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _factorize(series: pd.Series):
    """Integer codes (missing: −1) and the distinct values, once per value."""
    if isinstance(series.dtype, pd.CategoricalDtype):  # its categories already are the values
        return np.asarray(series.cat.codes, dtype=np.int64), pd.Index(series.cat.categories)
    try:
        codes, uniques = pd.factorize(series, sort=False)
    except TypeError:  # unhashable values (lists, dicts from JSONL): compare their JSON text
        codes, uniques = pd.factorize(series.map(_text), sort=False)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


def _text(value) -> str:
    """A value as text, as ids are compared (``1`` and ``"1"`` alike)."""
    from bayeserr.data.readers import id_text
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = id_text(value)
    return "" if text is None else text


def _number(value) -> float | None:
    """A finite number from a number or numeric text; ``None`` otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        v = float(value)
    else:
        try:
            v = float(str(value).strip())
        except ValueError:
            return None
    return v if math.isfinite(v) else None


def _bound(value: str) -> float | None:
    """The number of a ``<``/``>`` value, infinities included (``col<inf``: every
    number); ``None`` for text.  NaN was refused by :func:`parse_where`."""
    number = _number(value)
    if number is None:
        try:
            number = float(value.strip())
        except ValueError:
            return None
    return number


def _integer_column(series: pd.Series) -> bool:
    dtype = series.dtype
    return (pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not isinstance(dtype, pd.CategoricalDtype))


def _integer_value(value: str):
    """The exact value of numeric text (``decimal.Decimal``), ``None`` otherwise."""
    import decimal
    try:
        return decimal.Decimal(value.strip())
    except (decimal.InvalidOperation, ValueError):
        return None


def _integer_compare(series: pd.Series, op: str, value: str) -> np.ndarray:
    """``series op value`` for an integer column, exactly (no float rounding);
    missing values never match."""
    import decimal
    missing = series.isna().to_numpy()
    dtype = np.dtype(np.uint64 if pd.api.types.is_unsigned_integer_dtype(series.dtype) else np.int64)
    x = series.to_numpy(dtype=dtype, na_value=0)
    info = np.iinfo(dtype)
    exact = _integer_value(value)
    if exact is None or not exact.is_finite():
        number = _bound(value)  # an infinity (or an odd spelling float() reads)
        if number is None or math.isnan(number):
            return np.zeros(len(x), dtype=bool)
        if math.isinf(number):
            keep = (number > 0) == (op in ("<", "<="))
            return np.full(len(x), keep and op != "=", dtype=bool) & ~missing
        exact = decimal.Decimal(number)
    if exact.adjusted() >= 20:  # beyond the column's range (and no 10**999999-digit integers)
        exact = decimal.Decimal(2 ** 65 if exact > 0 else -(2 ** 65))
    elif exact.adjusted() < -1:  # between -0.1 and 0.1: only its sign matters
        exact = decimal.Decimal(0) if exact.is_zero() else decimal.Decimal("0.5").copy_sign(exact)
    if op == "=":
        if exact != exact.to_integral_value():
            return np.zeros(len(x), dtype=bool)
        bound, op = int(exact), "="
    elif op in ("<", ">="):  # x < v  <=>  x < ceil(v)
        bound = int(exact.to_integral_value(rounding=decimal.ROUND_CEILING))
    else:  # x <= v  <=>  x <= floor(v)
        bound = int(exact.to_integral_value(rounding=decimal.ROUND_FLOOR))
    if bound < info.min or bound > info.max:  # beyond every value the column can hold
        above = bound > info.max
        everything = {"=": False, "<": above, "<=": above, ">": not above, ">=": not above}[op]
        return np.full(len(x), everything, dtype=bool) & ~missing
    cmp = operator.eq if op == "=" else _TEXT_CMP[op]
    return np.asarray(cmp(x, dtype.type(bound)), dtype=bool) & ~missing


def _equal_to(uniques, value: str) -> np.ndarray:
    number = _number(value)
    exact = _integer_value(value)
    low = value.strip().lower()
    out = np.zeros(len(uniques), dtype=bool)
    for i, u in enumerate(uniques):
        if isinstance(u, (bool, np.bool_)):
            out[i] = low in (("true", "1") if u else ("false", "0"))
        elif isinstance(u, str):
            out[i] = u == value
        elif isinstance(u, (int, np.integer)) and exact is not None and exact.is_finite():
            out[i] = int(u) == exact  # exactly: 2**53 + 1 is not 2**53
        elif isinstance(u, (int, float, np.integer, np.floating)) and number is not None:
            out[i] = float(u) == number
        else:
            out[i] = _text(u) == value or str(u) == value
    return out


def parse_where(text) -> Condition:
    """One expression (see the module docstring), or an :class:`InputError`
    showing the syntax."""
    if isinstance(text, Condition):
        return text
    if not isinstance(text, str):
        raise InputError(f"--where takes text such as COL=VALUE (got {text!r}).")
    start = next((i for i, ch in enumerate(text) if ch in _OP_CHARS), None)
    column = text[:start].strip() if start is not None else ""
    op = next((o for o in OPERATORS if start is not None and text.startswith(o, start)), None)
    if start is None or op is None or not column:
        raise InputError(f"--where takes {SYNTAX}, e.g. --where task=mmlu (got '{text}').")
    rest = text[start + len(op):]
    op = "=" if op == "==" else op
    if op in ("=", "!="):
        values = tuple(dict.fromkeys(v.replace("\0", ",").strip()
                                     for v in rest.replace("\\,", "\0").split(",")))
    else:
        if "," in rest.replace("\\,", ""):
            raise InputError(f"--where {text}: {op} takes one value (a number, or text compared as "
                             f"text); write one expression per bound, e.g. --where '{column}{op}1'.")
        values = (rest.replace("\\,", ",").strip(),)
        bound = _bound(values[0])
        if bound is not None and math.isnan(bound):
            raise InputError(f"--where {text}: '{values[0]}' is not a number {op} can compare with "
                             "(nothing is less or greater than NaN, so the expression would keep or "
                             f"drop rows by accident). Give a number, e.g. --where '{column}{op}1'.")
    if not values or any(v == "" for v in values):
        raise InputError(f"--where {text}: no value given. Use {SYNTAX}, e.g. --where {column}=VALUE.")
    return Condition(column, op, values)


def parse_where_list(exprs) -> list[Condition]:
    """``exprs`` as a list of conditions: ``None``, one expression or a list of them."""
    if exprs is None:
        return []
    if isinstance(exprs, (str, Condition)):
        exprs = [exprs]
    try:
        items = list(exprs)
    except TypeError:
        raise InputError(f"where takes a list of expressions such as ['task=mmlu', 'score>0']; "
                         f"got {exprs!r}.") from None
    return [parse_where(e) for e in items]


def where_columns(exprs) -> tuple[str, ...]:
    """The columns the expressions name, in order, once each."""
    return tuple(dict.fromkeys(c.column for c in parse_where_list(exprs)))


def _shown(values, limit: int = 10) -> str:
    return some(values, limit)


def apply_where(df: pd.DataFrame, exprs, *, where: str = "input", available=None,
                unit: str = "rows") -> tuple[pd.DataFrame, list[tuple[str, np.ndarray]]]:
    """Keep the rows of ``df`` where every expression holds.

    Returns ``(kept rows, drops)``: ``drops`` has one ``(reason, mask)`` per
    expression, ``mask`` over the rows of ``df`` marking those that
    expression removed (rows already removed by an earlier one are not
    counted again), so ``sum(m.sum() for _, m in drops)`` rows were dropped.
    ``where`` names the input in messages; ``available`` lists column names
    to offer in the "unknown column" error besides those of ``df`` (e.g.
    log metadata fields not read).  The index of the kept rows is that of
    ``df``.
    """
    conds = parse_where_list(exprs)
    keep = np.ones(len(df), dtype=bool)
    drops = []
    names = [str(c) for c in df.columns]
    for cond in conds:
        if cond.column not in names:
            choices = list(dict.fromkeys(names + [str(a) for a in (available or ())]))
            raise InputError(f"{where}: --where {cond.text}: no column '{cond.column}'."
                             f"{suggest(cond.column, choices)} Columns available: {_shown(choices, 40)}.")
        series = df[cond.column]
        hits = cond.value_hits(series) if cond.op in ("=", "!=") else None
        try:
            ok = cond.mask(series) if hits is None else cond.from_hits(hits, len(series))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        if hits is not None:
            for value, hit in hits.items():
                if not (hit & keep).any():
                    codes, values = _factorize(series[keep])
                    present = sorted({_text(values[c]) for c in np.unique(codes[codes >= 0])})
                    raise InputError(
                        f"{where}: --where {cond.text}: no {unit} have {cond.column}={value}."
                        f"{suggest(value, present)} Values of '{cond.column}'"
                        f"{' in the remaining ' + unit if drops else ''}: {_shown(present) or 'none'}.")
        removed = keep & ~ok
        if not (keep & ok).any():
            raise InputError(f"{where}: --where {cond.text} leaves no {unit} "
                             f"(of {int(keep.sum())}). Check the expression.")
        drops.append((cond.reason, removed))
        keep &= ok
    return (df[keep] if len(conds) else df), drops


def where_counts(drops) -> list[tuple[str, int]]:
    """``[(reason, rows dropped)]`` from the drops of :func:`apply_where`."""
    return [(reason, int(np.count_nonzero(mask))) for reason, mask in drops]


def to_json(exprs) -> list[str]:
    """The expressions as text (for reports and the config listing)."""
    return [c.text for c in parse_where_list(exprs)]


__all__ = ["Condition", "apply_where", "parse_where", "parse_where_list", "where_columns",
           "where_counts", "SYNTAX", "OPERATORS"]
