"""Sufficient statistics (bayeserr.stats.sufficient): partition invariance and
the headline numbers from sums equal the in-memory formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeserr.stats.estimators import se_clt, se_clustered, variance_components
from bayeserr.stats.fewclusters import cr2_mean
from bayeserr.stats.sufficient import ModelSums, Sufficient, centre_of


def _table(seed, m=4, n=30, k=2, c=5, missing=0.1, zero_one=False):
    rng = np.random.default_rng(seed)
    answers = rng.integers(0, 2, (m, n, k)).astype(float) if zero_one else rng.random((m, n, k))
    answers[rng.random((m, n, k)) < missing] = np.nan
    answers[:, :2, 0] = 0.5 if not zero_one else 1.0  # every model answers the first questions
    codes = rng.integers(0, c, n)
    return answers, codes


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), parts=st.integers(1, 6), zero_one=st.booleans(),
       missing=st.sampled_from([0.0, 0.2]))
def test_partition_invariance(seed, parts, zero_one, missing):
    """Statistics of a random partition of the questions, combined, equal the whole's."""
    answers, codes = _table(seed, zero_one=zero_one, missing=missing)
    models, clusters = ("a", "b", "c", "d"), tuple(f"c{i}" for i in range(5))
    centre = centre_of(np.nanmean(np.nanmean(answers, axis=2), axis=1))
    whole = Sufficient.from_cube(models, answers, centre, codes, clusters)
    part = np.random.default_rng(seed + 1).integers(0, parts, answers.shape[1])
    total = Sufficient.empty(models, centre, clusters)
    for p in np.random.default_rng(seed + 2).permutation(parts):
        keep = part == p
        total = total + Sufficient.from_cube(models, answers[:, keep], centre, codes[keep], clusters)
    assert total.equal(whole, 1e-12)


def test_a_question_in_two_partitions_is_refused():
    answers, codes = _table(0)
    models, centre = ("a", "b", "c", "d"), np.zeros(4)
    q = [f"q{i}" for i in range(answers.shape[1])]
    one = Sufficient.from_cube(models, answers[:, :20], centre, questions=q[:20])
    two = Sufficient.from_cube(models, answers[:, 15:], centre, questions=q[15:])
    with pytest.raises(ValueError, match="partition the rows by question"):
        one + two


def test_model_sums_equal_the_array_formulas():
    answers, codes = _table(3, missing=0.0)
    s = answers.mean(axis=2)
    ms = ModelSums.of_scores(s, codes)
    np.testing.assert_allclose(ms.se_clt, se_clt(s), rtol=1e-12)
    for corr in ("paper", "cr1"):
        np.testing.assert_allclose(ms.se_clustered(corr), se_clustered(s, codes, corr), rtol=1e-12)
    ref, got = cr2_mean(s, codes), ms.cr2()
    for f in ("se", "df", "effective_clusters", "n_clusters"):
        np.testing.assert_allclose(getattr(got, f), getattr(ref, f), rtol=1e-12)


def test_variance_split_from_sums():
    answers, codes = _table(5, k=4, missing=0.15)
    centre = np.zeros(4)
    stats = Sufficient.from_cube(("a", "b", "c", "d"), answers, centre)
    for j in range(4):
        got, ref = stats.variance(j), variance_components(answers[j][~np.isnan(answers[j]).all(axis=1)])
        assert got.k_recommended == ref.k_recommended and got.between_clamped == ref.between_clamped
        np.testing.assert_allclose([got.within_questions, got.between_questions],
                                   [ref.within_questions, ref.between_questions], rtol=1e-12, atol=1e-15)


def test_cr2_depends_on_cluster_sizes_only():
    """The intercept-only CR2 factor 1/(1 − p_c) and the BM df are functions of n_c."""
    from bayeserr.stats.fewclusters import bm_df
    sizes = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1], float)
    assert bm_df(sizes) == pytest.approx(3.33, abs=0.01)
    codes = np.repeat(np.arange(12), sizes.astype(int))
    rng = np.random.default_rng(0)
    s = rng.random((2, codes.size))
    # the explicit CR2 sandwich with (I − H_cc)^(−1/2) equals the closed form from sums
    X = np.ones((codes.size, 1))
    e = s - s.mean(axis=1, keepdims=True)
    meat = np.zeros(2)
    for c in range(12):
        idx = codes == c
        h = X[idx] @ X[idx].T / codes.size
        w, v = np.linalg.eigh(np.eye(idx.sum()) - h)
        a = v @ np.diag(1 / np.sqrt(np.clip(w, 1e-300, None))) @ v.T
        meat += (e[:, idx] @ a @ X[idx])[:, 0] ** 2
    np.testing.assert_allclose(ModelSums.of_scores(s, codes).cr2().se, np.sqrt(meat) / codes.size, rtol=1e-10)
