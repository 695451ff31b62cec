"""The sufficient statistics of the Bayesian columns (bayeserr.stats.bayes_sums), each against a
direct computation from the per-question data: partitions add up to the whole, and the quantities
computed from them equal the in-memory ones."""

from __future__ import annotations

import numpy as np
import pytest

from bayeserr.models import bayesian_bootstrap as bb
from bayeserr.models import paired_clustered as pc
from bayeserr.stats import bayes_sums
from bayeserr.stats.sufficient import Sufficient, centre_of


def _cube(seed=0, m=4, n=60, k=3, clusters=5, fractional=False, missing=0.1):
    rng = np.random.default_rng(seed)
    answers = (rng.random((m, n, k)) < rng.uniform(0.2, 0.9, (m, 1, 1))).astype(float)
    if fractional:
        answers = np.round(rng.random((m, n, k)), 2)
    answers[rng.random((m, n, k)) < missing] = np.nan
    codes = rng.integers(0, clusters, n)
    return answers, codes


def _means(answers):
    """Per-question means (NaN where unanswered) without numpy's empty-slice warning."""
    k = (~np.isnan(answers)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k > 0, np.nansum(answers, axis=-1) / k, np.nan)


def _stats(answers, codes=None, parts=1, units=True):
    m = answers.shape[0]
    s = _means(answers)
    centre = centre_of(np.nanmean(s, axis=1))
    clusters = None if codes is None else tuple(range(int(codes.max()) + 1))
    total = Sufficient.empty(tuple("abcdefgh"[:m]), centre, clusters, units)
    for idx in np.array_split(np.arange(answers.shape[1]), parts):
        total = total + Sufficient.from_cube(tuple("abcdefgh"[:m]), answers[:, idx], centre,
                                             None if codes is None else codes[idx], clusters, units=units)
    return total


def test_count_table_is_each_models_questions_by_cluster_answers_and_right_answers():
    answers, codes = _cube()
    table = _stats(answers, codes, parts=4).counts
    for j in range(answers.shape[0]):
        answered = ~np.isnan(answers[j])
        n, k = answered.sum(axis=1), np.nansum(answers[j], axis=1)
        want = {}
        for c, nn, kk in zip(codes, n, k):
            if nn:
                want[(c, nn, kk)] = want.get((c, nn, kk), 0) + 1
        got = {(c, nn, kk): q for mm, c, nn, kk, q in table.tolist() if mm == j}
        assert got == want


def test_fractional_answers_stay_out_of_the_count_table():
    answers, codes = _cube(fractional=True)
    answers[0] = np.round(answers[0])  # model 0: 0/1 answers
    table = bayes_sums.count_table(answers, codes)
    assert set(table[:, 0]) == {0} and table[:, 4].sum() == (~np.isnan(answers[0])).any(axis=1).sum()


def test_unit_counts_and_question_rows_from_the_table():
    answers, codes = _cube(seed=1)
    st = _stats(answers, codes, parts=3)
    m, c = answers.shape[0], len(st.clusters)
    k_u, n_u, m_u = bayes_sums.unit_counts(st.counts, m, c)
    answered = ~np.isnan(answers)
    for j in range(m):
        for cl in range(c):
            inside = codes == cl
            assert k_u[j, cl] == np.nansum(answers[j, inside])
            assert n_u[j, cl] == answered[j, inside].sum()
            assert m_u[j, cl] == answered[j, inside].any(axis=1).sum()
    k, n, cl = bayes_sums.question_rows(st.counts, m)
    for j in range(m):
        live = answered[j].any(axis=1)
        got = sorted(zip(k[j][n[j] > 0], n[j][n[j] > 0], cl[j][n[j] > 0]))
        want = sorted(zip(np.nansum(answers[j], axis=1)[live], answered[j].sum(axis=1)[live], codes[live]))
        assert got == want
    assert bayes_sums.repeated_models(st.counts, m).all()


def test_select_renumbers_and_drops_models():
    answers, codes = _cube(seed=2)
    st = _stats(answers, codes)
    sub = st.select([2, 0])
    assert set(sub.counts[:, 0]) == {0, 1}
    np.testing.assert_array_equal(sub.counts[sub.counts[:, 0] == 0, 1:],
                                  st.counts[st.counts[:, 0] == 2, 1:])


def test_unit_multiset_gives_the_in_memory_bootstrap_draws_exactly():
    """The stream engine's unit multiset (added over partitions) gives exactly the draws of the
    Bayesian bootstrap over the questions themselves, for one model and for pairs."""
    answers, _ = _cube(seed=3, fractional=True, k=1)
    s = answers[..., 0]
    st = _stats(answers, parts=5)
    values, mult = bayes_sums.units_as_scores(st.units)
    assert mult.sum() == (~np.isnan(s)).any(axis=0).sum()
    for j in range(s.shape[0]):
        keep = ~np.isnan(s[j])
        direct = bb.weighted_means(s[j][keep][:, None], np.ones((keep.sum(), 1)), 300, 7)
        live = ~np.isnan(values[j])
        got = bb.weighted_means(values[j][live][:, None], np.ones((live.sum(), 1)), 300, 7, mult=mult[live])
        np.testing.assert_array_equal(direct, got)
    both = ~np.isnan(s[:2]).any(axis=0)
    common = ~np.isnan(values[:2]).any(axis=0)
    np.testing.assert_array_equal(bb.bootstrap_means(s[:2][:, both], None, 200, 1),
                                  bb.bootstrap_means(values[:2][:, common], None, 200, 1, mult=mult[common]))


def test_unit_multiset_is_dropped_past_its_bound(monkeypatch):
    answers, _ = _cube(seed=4, fractional=True, k=1, n=200)
    monkeypatch.setattr(bayes_sums, "UNIT_BYTES", 2000)
    assert _stats(answers, parts=3).units is None
    assert _stats(answers, parts=1, units=False).units is None


def test_pair_square_totals_and_covariance_sums_against_the_questions():
    answers, codes = _cube(seed=5, fractional=True)
    s = _means(answers)
    for clustered in (False, True):
        st = _stats(answers, codes if clustered else None, parts=3)
        ia, ib = np.triu_indices(s.shape[0], 1)
        d = s[ia] - s[ib]
        np.testing.assert_allclose(bayes_sums.pair_square_totals(st.N, st.SA, st.QA, st.XX, st.centre, ia, ib),
                                   np.nansum(d * d, axis=1), rtol=1e-12)
        n, cross, S, sizes = st.covariance_sums()
        w = ~np.isnan(s)
        r = np.where(w, s - np.nanmean(s, axis=1)[:, None], 0.0)
        if clustered:
            for cl in range(S.shape[1]):
                np.testing.assert_allclose(S[:, cl], r[:, codes == cl].sum(axis=1), atol=1e-12)
        else:
            np.testing.assert_allclose(cross, r @ r.T, rtol=1e-10, atol=1e-12)


def test_cluster_effect_posterior_from_totals_equals_per_cluster_sums():
    """Only the total of squares enters the cluster-effect models: the per-cluster and the
    total forms give the same posterior (mean and pair)."""
    answers, codes = _cube(seed=6, fractional=True, k=1, missing=0.0)
    s = answers[..., 0]
    D, sizes, Q = pc._cluster_arrays(s, codes)
    a = pc.pair_probabilities(D, sizes, 0.01, sum_sq=Q)
    b = pc.pair_probabilities(D, sizes, 0.01, total_sq=Q.sum(axis=1))
    np.testing.assert_allclose(a.prob_a_better, b.prob_a_better, rtol=1e-12)
    np.testing.assert_allclose(a.interval, b.interval, rtol=1e-12)
    np.testing.assert_allclose(pc.mean_from_arrays(s, codes).interval,
                               pc.mean_from_sums(D, sizes, Q.sum(axis=1)).interval, rtol=1e-12)
    with pytest.raises(ValueError, match="sums of d"):
        pc.pair_probabilities(D, sizes, 0.01, total_sq=np.zeros(len(D)))
