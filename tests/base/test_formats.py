"""bayeserr.base.formats: one minus sign, one meaning of points and percent, in every format."""

import math

import pytest

from bayeserr.base.formats import MINUS, interval, number, percent, points, pvalue, some


@pytest.mark.parametrize("x, digits, signed, text", [
    (-2.314, 2, False, MINUS + "2.31"),
    (2.315, 1, True, "+2.3"),
    (0.0, 1, True, "0.0"),            # no sign on zero
    (-0.0004, 2, True, "0.00"),       # rounds to zero: never "−0.00"
    (-0.004, 2, False, "0.00"),
    (12345.6, 0, False, "12346"),
    (math.inf, 1, True, "+∞"),
    (-math.inf, 1, False, MINUS + "∞"),
    (math.inf, 1, False, "∞"),
    (None, 1, False, "–"),
    (float("nan"), 1, False, "–"),
])
def test_number(x, digits, signed, text):
    assert number(x, digits, signed) == text


def test_number_never_prints_a_hyphen_or_a_negative_zero():
    for x in (-1e-9, -0.04, -0.05, -1.0, -123.456):
        for d in (0, 1, 2, 3):
            out = number(x, d, signed=True)
            assert "-" not in out
            assert out.lstrip(MINUS + "+") == f"{abs(round(x, d)):.{d}f}"
            assert out.startswith(MINUS) == (round(x, d) != 0)


def test_grouped_thousands():
    assert number(1234567, 0, grouped=True) == "1,234,567"
    assert number(-1234.5, 1, grouped=True) == MINUS + "1,234.5"


def test_points_percent_and_interval_scale_by_100():
    assert points(0.744) == "74.4"
    assert points(-0.006, signed=True) == MINUS + "0.6"
    assert points(0.251, signed=True) == "+25.1"
    assert percent(0.05) == "5.0%"
    assert percent(None) == "–"
    assert interval(-0.0123, 0.0456, signed=True) == f"[{MINUS}1.2, +4.6]"


def test_pvalue_and_some():
    assert pvalue(0.01234) == "0.0123"
    assert pvalue(3e-5) == "<0.0001"
    assert pvalue(float("nan")) == pvalue(None) == "–"
    assert some("abcde", 2) == "a, b and 3 more"
    assert some(range(3), 5) == "0, 1, 2"
    assert some(range(1002), 1) == "0 and 1,001 more"
