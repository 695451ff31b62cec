"""The reliability lab (bayeserr.lab.reliability): its truth, its designs, its published
section, one statistical check of the pass^k interval, and the published page's numbers."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeserr.lab import reliability as lab

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("law", ["middle", "near 1", "near 0", "mixture"])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_truth_matches_a_monte_carlo(law, k):
    d = lab.RunDesign(20, 16, law)
    theta = lab.rates(d, 100_000, np.random.default_rng(1)).ravel()
    mc = theta ** k
    assert abs(lab.truth(d, k) - mc.mean()) < 4 * mc.std() / math.sqrt(mc.size)
    # the shifted truth (the power's alternative) is the same draws moved on the logit scale
    shifted = lab._shifted(theta, -lab.SHIFT) ** k
    assert abs(lab.truth(d, k, -lab.SHIFT) - shifted.mean()) < 4 * shifted.std() / math.sqrt(shifted.size) + 1e-3


def test_clustered_design_has_one_cluster_with_half_the_questions():
    codes = lab.RunDesign(50, 4, "near 1", True).codes
    sizes = np.bincount(codes)
    assert sizes.size == lab.CLUSTERS and sizes[0] == 25 and sizes[1:].sum() == 25


def test_pass_hat_k_interval_covers_at_twenty_questions():
    """Wilson on n*: within 3 MC SEs of 95% (or above) at 20 questions × 4 runs near 1."""
    for cell in lab.run_calibration(lab.RunDesign(20, 4, "near 1"), reps=400, seed=11):
        assert cell.headline >= 0.95 - 3 * cell.headline_se, cell
        assert cell.type_one <= 0.05 + 3 * cell.type_one_se + 0.01, cell
        assert 0 < cell.power <= 1


def test_section_and_publish(tmp_path):
    df = lab.run_reliability([lab.RunDesign(20, 2, "mixture"), lab.RunDesign(20, 2, "near 1", True)],
                             reps=20, seed=1)
    assert list(df.k) == [1, 2, 1, 2]
    lines = lab.reliability_section(df, "bayeserr simulate reliability --reps 20")
    assert lines[0] == lab.SECTION_START and lines[-1] == lab.SECTION_END
    assert any(line.startswith("| 20 questions × 2 runs, mixture | 1 |") for line in lines)
    page = tmp_path / "calibration.md"
    lab.publish_reliability(df, page, "cmd")
    assert pd.read_csv(tmp_path / "calibration_reliability.csv").shape[0] == 4
    assert page.read_text().count(lab.SECTION_START) == 1


def test_the_numbers_quoted_in_the_methods_come_from_the_published_csv():
    df = pd.read_csv(DOCS / "calibration_reliability.csv")
    held = df.apply(lambda r: lab.holds(r["headline"], r["headline_se"], r["level"]), axis=1)
    rule = df.apply(lambda r: lab.holds(r["report"], r["report_se"], r["level"]), axis=1)
    methods = " ".join((DOCS / "methods.md").read_text().split())
    said = (f"it holds its level in {int(rule.sum())} of {len(df)} cells (lowest {100 * df.report.min():.1f}%), "
            f"Wilson on n* in all {len(df)} ({100 * df.headline.min():.1f}%–{100 * df.headline.max():.1f}%)")
    assert held.all() and said in methods
    over = df[df.type_one > 0.05 + 2 * df.type_one_se]
    assert f"rejects at most {100 * df.type_one.max():.1f}% under the null, more than 2 MC SEs above 5% in " \
           f"{len(over)} of {len(df)}" in methods
