"""The gate's and the watch's sentence modules (bayeserr.analyses.gate_text, .watch_text)."""

import math

import numpy as np

from bayeserr.analyses.gate_text import digits, pct, points, pv, round_up
from bayeserr.analyses.watch_text import caution, waiting_sentence, watch_sentence
from bayeserr.base.formats import MINUS
from bayeserr.stats.sequential import ConfidenceSequence


def test_gate_formats():
    assert points(-0.004) == MINUS + "0.4" and points(0.02, 2) == "+2.00"
    assert digits((0.0104, 0.01)) == 2          # 1.0 vs 1.0 at one decimal: needs two
    assert digits((0.0123, 0.0)) == 1
    assert digits((0.01001, 0.01)) == 3         # never more than three
    assert pct(0.95) == "95%" and pct(0.0004) == "less than 0.1%" and pct(0.8) == "80%"
    assert pv(0.01234) == "p = 0.012" and pv(0.000512) == "p = 0.0005" and pv(1e-6) == "p < 0.0001"
    assert pv(math.nan) == "p = –"
    assert [round_up(x) for x in (0, 7.2, 123, 1001, 45678)] == [0, 8, 130, 1100, 46000]


def _cs(est, lo, hi, n=50):
    t = np.arange(1, n + 1)
    full = lambda v: np.full(n, v)  # noqa: E731
    return ConfidenceSequence(t, full(est), full(lo), full(hi), "betting", 0.95, t)


def test_watch_sentence_names_what_it_waits_for():
    from bayeserr.analyses.sequential import Rules
    text = watch_sentence("A", "B", _cs(0.05, -0.1, 0.2), Rules(), None, "")
    assert text.startswith("continue: A − B = +5.0 points, 95% confidence sequence [" + MINUS + "10.0, +20.0]")
    assert "after 50 questions" in text and "waiting for it to exclude 0" in text
    assert "no cluster is complete yet (7 questions answered in 3 clusters" in waiting_sentence(7, 3)
    assert caution([]) == ""
    assert caution(["x", "y", "z"]).startswith(" Caution: x, y and z: not a random order")
