"""The family's adjusted intervals and p-values (docs/methods.md §3.9): never more
lenient than a pair's own test, and the JSON gives the critical value behind the
interval before its cut to [−1, 1]."""

import numpy as np
import pandas as pd
import pytest

import bayeserr
from tests.conftest import real_file


def _two_models(seed: int = 3, clusters: int = 10, n: int = 200):
    rng = np.random.default_rng(seed)
    cluster = np.arange(n) % clusters
    rows = []
    for m, p in (("A", 0.62), ("B", 0.58)):
        eff = rng.normal(0, 0.12, clusters)[cluster]
        rows.append(pd.DataFrame({"model": m, "question_id": [f"q{i}" for i in range(n)],
                                  "cluster_id": [f"c{c}" for c in cluster],
                                  "score": (rng.random(n) < np.clip(p + eff, 0.02, 0.98)).astype(int)}))
    return bayeserr.load(pd.concat(rows, ignore_index=True))


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_family_of_one_pair_is_that_pair(seed):
    """One pair: its simultaneous interval contains its own interval, its adjusted p is at
    least its own p (the joint bootstrap's tails can be lighter than the t's)."""
    rep = bayeserr.report(_two_models(seed), bayes="off")
    (c,) = rep.comparisons
    assert c.ci_adjusted[0] <= c.ci[0] + 1e-12 and c.ci_adjusted[1] >= c.ci[1] - 1e-12
    assert c.p_adjusted >= c.p_value - 1e-12
    assert c.different == (c.p_adjusted < 0.05)
    # the uncut interval is diff ± c·SE, with c at least the pair's own t quantile
    from scipy import stats
    assert c.ci_adjusted_critical >= stats.t.isf(0.025, c.df) - 1e-9
    half = c.ci_adjusted_critical * c.se_clustered_paired
    np.testing.assert_allclose(c.ci_adjusted, np.clip([c.diff - half, c.diff + half], -1, 1), atol=1e-12)


def test_the_one_pair_sentence_reads_naturally():
    text = bayeserr.report(_two_models(), bayes="off").to_markdown()
    assert "all 1 pairs" not in text and "(all 1 " not in text


def test_cut_intervals_keep_their_uncut_critical_value():
    """AlpacaEval 2 (5 clusters): some simultaneous intervals end at ±1 after the cut; the
    JSON's critical value gives back the uncut half-width."""
    rep = bayeserr.report(bayeserr.load(real_file("alpacaeval2_per_instruction.csv.gz")), bayes="off",
                          on_unpaired="drop")
    cut = [c for c in rep.comparisons if c.ci_adjusted is not None and max(abs(x) for x in c.ci_adjusted) == 1.0]
    assert cut
    for c in cut:
        half = c.ci_adjusted_critical * c.se_clustered_paired
        assert max(abs(c.diff - half), abs(c.diff + half)) > 1.0
        lo, hi = np.clip([c.diff - half, c.diff + half], -1, 1)
        assert (lo, hi) == pytest.approx(c.ci_adjusted, abs=1e-12)
    d = rep.to_dict()["comparisons"][0]
    assert "ci_adjusted_critical" in d
