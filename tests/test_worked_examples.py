"""The worked examples of ../shared/reference, reproduced by the code.

The numbers are typed in from the reference texts (they are not computed by
bayeserr), so these tests fail if a formula is wrong.
"""

import numpy as np
import pytest

import bayeserr
from bayeserr.stats.estimators import se_bernoulli, se_clt

from .conftest import binary_frame


def test_216_of_300_has_se_0_026():
    # error-bars-explainer: p = 0.72, SE = sqrt(0.72 * 0.28 / 300) = 0.026
    s = np.r_[np.ones(216), np.zeros(84)]
    assert se_bernoulli(s.mean(), s.size) == pytest.approx(0.026, abs=5e-4)
    assert se_clt(s) == pytest.approx(0.026, abs=5e-4)
    ds = bayeserr.load(binary_frame({"m": s, "other": s[::-1]}))
    m = bayeserr.score(ds)["m"]
    assert m.mean == pytest.approx(0.72)
    assert m.se_bernoulli == pytest.approx(np.sqrt(0.72 * 0.28 / 300), rel=1e-12)
    # interval "72% ± 5 points"
    assert m.intervals["clt"][1] - m.mean == pytest.approx(0.05, abs=0.002)


def _thousand_question_example():
    # comparing-models-explainer: A 60%, B 62%, 880 agreements, B wins 70, A wins 50
    both, a_only, b_only, neither = 550, 50, 70, 330
    a = np.r_[np.ones(both), np.ones(a_only), np.zeros(b_only), np.zeros(neither)]
    b = np.r_[np.ones(both), np.zeros(a_only), np.ones(b_only), np.zeros(neither)]
    return bayeserr.load(binary_frame({"A": a, "B": b}))


def test_thousand_questions_paired_vs_unpaired():
    c = bayeserr.compare(_thousand_question_example(), "B", "A")
    assert c.diff == pytest.approx(0.02)
    assert c.se_unpaired == pytest.approx(0.022, abs=0.0005)  # "about 2.2 points"
    assert c.se_paired == pytest.approx(0.011, abs=0.0005)  # "about 1.1"
    assert c.statistic == pytest.approx(0.02 / c.se_paired)  # "nearly twice its SE"
    assert 1.7 < c.statistic < 2.0
    assert (c.mcnemar.n_a_only, c.mcnemar.n_b_only) == (70, 50)


def test_m9_n_969():
    # paper §5: omega^2 = 1/9, delta = 0.03, alpha 0.05, 80% power -> n ≈ 969
    n = bayeserr.n_required(0.03, omega2=1 / 9)
    assert np.ceil(n) == 969


@pytest.mark.parametrize("k, expected", [(1, 0.132), (10, 0.075)])
def test_m10_mde(k, expected):
    # paper §5: n = 198, omega^2 = 1/9, sigma^2 = 1/6 each: MDE 13.2% (K=1), 7.5% (K=10)
    eff = bayeserr.mde(198, 1 / 9, 1 / 6, 1 / 6, k, k)
    assert eff == pytest.approx(expected, abs=0.001)


@pytest.mark.parametrize("n, points", [(164, 8.7), (500, 5.0), (1319, 3.1), (14042, 0.9)])
def test_tie_zones_at_80_percent(n, points):
    # tie-zone essay: HumanEval, SWE-bench Verified, GSM8K, MMLU at 80% accuracy
    assert 100 * bayeserr.tie_zone(0.8, n) == pytest.approx(points, abs=0.05)


def test_about_1400_items_for_3_points_unpaired():
    # tie-zone essay: ~1,400 items to resolve 3 points at 80% accuracy, ~12,000 for one point
    assert bayeserr.n_for_tie_zone(0.03, 0.8) == pytest.approx(1400, rel=0.05)
    assert bayeserr.n_for_tie_zone(0.01, 0.8) == pytest.approx(12000, rel=0.05)
