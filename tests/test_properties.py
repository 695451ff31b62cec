"""Invariants, by property-based tests (hypothesis) and a seeded simulation."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import bayeserr
from bayeserr.estimators import se_clt, se_clustered
from bayeserr.pairs import pair_moments, paired_standard_errors

scores = arrays(float, st.integers(2, 60), elements=st.floats(0, 1, allow_nan=False))


@given(scores)
def test_singleton_clusters_equal_clt(s):
    codes = np.random.default_rng(0).permutation(s.size)
    assert se_clustered(s, codes) == pytest.approx(se_clt(s), rel=1e-9, abs=1e-12)


@given(scores, st.integers(1, 8))
def test_one_cluster_per_everything_and_cr1_nonnegative(s, c):
    codes = np.arange(s.size) % c
    assert se_clustered(s, codes) >= 0
    if c > 1 and s.size >= c:
        assert np.isfinite(se_clustered(s, codes, "cr1"))


def test_paired_equals_unpaired_when_uncorrelated_in_expectation():
    """Independent A and B: E[SE_paired²] = E[SE_unpaired²].  Over 4,000 seeded
    replicates the mean difference must be within 4 Monte Carlo SEs of 0, and a
    correlated design (ρ ≈ 0.5) must show a clear reduction."""
    rng = np.random.default_rng(11)
    reps, n = 4000, 60
    a = (rng.random((reps, n)) < 0.6).astype(float)
    b = (rng.random((reps, n)) < 0.7).astype(float)

    def gap(a, b):
        var_p = np.var(a - b, axis=1, ddof=1) / n
        var_u = (np.var(a, axis=1, ddof=1) + np.var(b, axis=1, ddof=1)) / n
        return var_p - var_u, var_u

    g, var_u = gap(a, b)
    assert abs(g.mean()) < 4 * g.std(ddof=1) / np.sqrt(reps)
    # the engine gives the same numbers as the direct formula on a replicate
    _, se_p, _ = paired_standard_errors(pair_moments(np.vstack([a[0], b[0]])))
    assert se_p[0, 1] ** 2 == pytest.approx(np.var(a[0] - b[0], ddof=1) / n)
    corr_b = np.where(rng.random((reps, n)) < 0.7, a, b)
    g2, var_u2 = gap(a, corr_b)
    assert g2.mean() < -0.3 * var_u2.mean()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_results_do_not_depend_on_row_order(seed):
    rng = np.random.default_rng(seed)
    n = 30
    rows = [(m, f"q{i}", f"c{i % 7}", float(rng.random() < 0.5 + 0.1 * j))
            for j, m in enumerate("ABC") for i in range(n)]
    df = pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"])
    shuffled = df.sample(frac=1, random_state=seed).reset_index(drop=True)
    r1 = bayeserr.report(bayeserr.load(df)).to_dict()
    r2 = bayeserr.report(bayeserr.load(shuffled)).to_dict()

    def canon(rep):
        rep["models"] = sorted(rep["models"], key=lambda m: m["model"])
        rep["comparisons"] = sorted(({**c, "pair": tuple(sorted((c["a"], c["b"])))} for c in rep["comparisons"]),
                                    key=lambda c: c["pair"])
        rep["warnings"] = sorted(rep["warnings"], key=json.dumps)
        return rep

    a, b = canon(r1), canon(r2)
    for m1, m2 in zip(a["models"], b["models"]):
        for key in ("mean", "se_clt", "se_clustered", "design_effect", "n_questions", "n_clusters"):
            assert m1[key] == pytest.approx(m2[key], rel=1e-9)
        for key, ci in m1["intervals"].items():
            assert (ci is None) == (m2["intervals"][key] is None)
            if ci is not None:
                assert ci == pytest.approx(m2["intervals"][key], rel=1e-9, abs=1e-12)
    for c1, c2 in zip(a["comparisons"], b["comparisons"]):
        sign = 1 if (c1["a"], c1["b"]) == (c2["a"], c2["b"]) else -1
        assert c1["diff"] == pytest.approx(sign * c2["diff"], abs=1e-12)
        for key in ("se_paired", "se_unpaired", "se_clustered_paired", "p_value", "correlation"):
            assert c1[key] == pytest.approx(c2[key], rel=1e-9, abs=1e-12)
    assert a["warnings"] == b["warnings"]
