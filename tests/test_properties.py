"""Invariants, by property-based tests (hypothesis) and a seeded simulation."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import bayeserr
from bayeserr.bayes import BayesSettings
from bayeserr.stats.estimators import se_clt, se_clustered
from bayeserr.stats.pairs import pair_moments, paired_standard_errors

scores = arrays(float, st.integers(2, 60), elements=st.floats(0, 1, allow_nan=False))


@given(scores)
def test_singleton_clusters_equal_clt(s):
    codes = np.random.default_rng(0).permutation(s.size)
    assert se_clustered(s, codes) == pytest.approx(se_clt(s), rel=1e-9, abs=1e-12)


@given(scores)
def test_one_cluster_shrinks_the_paper_se_by_sqrt_n(s):
    """All questions in one cluster: its residual sum is Σ e_i = 0, so (M4)
    leaves SE_clt² − Σ e²/n² = SE_clt²/n; CR1 is undefined (C = 1)."""
    codes = np.zeros(s.size, dtype=int)
    assert se_clustered(s, codes) == pytest.approx(se_clt(s) / np.sqrt(s.size), rel=1e-9, abs=1e-12)
    assert np.isnan(se_clustered(s, codes, "cr1"))


@settings(max_examples=60)
@given(scores, st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_clustered_ses_against_a_groupby_and_invariances(s, c, seed):
    """(M4) and CR1 of bayeserr against pandas group sums of the residuals,
    and unchanged by relabelling the clusters, by reordering the questions
    with their clusters, and by shifting every score."""
    if s.size < c:
        return
    rng = np.random.default_rng(seed)
    codes = rng.permutation(np.arange(s.size) % c)
    n, e = s.size, s - s.mean()
    sums = pd.Series(e).groupby(codes).sum().to_numpy()
    paper2 = np.var(s, ddof=1) / n + ((sums**2).sum() - (e**2).sum()) / n**2
    assert se_clustered(s, codes) == pytest.approx(np.sqrt(max(paper2, 0.0)), rel=1e-9, abs=1e-12)
    assert se_clustered(s, codes, "cr1") == pytest.approx(np.sqrt(c / (c - 1) * (sums**2).sum()) / n,
                                                          rel=1e-9, abs=1e-12)
    relabel = rng.permutation(c)[codes] + 3
    order = rng.permutation(n)
    for corr in ("paper", "cr1"):
        ref = se_clustered(s, codes, corr)
        assert se_clustered(s, relabel, corr) == pytest.approx(ref, rel=1e-9, abs=1e-12)
        assert se_clustered(s[order], codes[order], corr) == pytest.approx(ref, rel=1e-9, abs=1e-12)
        assert se_clustered(s + 0.25, codes, corr) == pytest.approx(ref, rel=1e-6, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 80))
def test_pairing_removes_shared_question_effects(seed, n):
    """Adding the same per-question effect u_i to both models changes their
    unpaired SE but leaves the paired SE, the gap and the clustered paired
    SE of bayeserr's all-pairs engine unchanged (d_i does not move); and
    swapping A and B changes only the sign of the gap."""
    rng = np.random.default_rng(seed)
    s = rng.random((2, n))
    u = rng.normal(0, 3, n)
    codes = rng.integers(0, 5, n)
    pm, pm_u = pair_moments(s, codes), pair_moments(s + u, codes)
    se, se_u = paired_standard_errors(pm), paired_standard_errors(pm_u)
    assert se_u[1][0, 1] == pytest.approx(se[1][0, 1], rel=1e-9, abs=1e-12)
    assert se_u[2][0, 1] == pytest.approx(se[2][0, 1], rel=1e-9, abs=1e-12)
    assert pm_u.mean[0, 1] - pm_u.mean[1, 0] == pytest.approx(pm.mean[0, 1] - pm.mean[1, 0], abs=1e-12)
    for k in range(3):
        assert se[k][0, 1] == se[k][1, 0]  # symmetric in A and B
    assert pm.mean[0, 1] - pm.mean[1, 0] == -(pm.mean[1, 0] - pm.mean[0, 1])


def test_paired_equals_unpaired_in_expectation_when_independent():
    """bayeserr's SEs over 4,000 seeded replicates of 60 questions: with
    independent A and B, E[SE_paired²] = E[SE_unpaired²] (mean gap within 4
    Monte Carlo SEs of 0); per replicate, SE_paired² = SE_unpaired² −
    2 Cov(a, b)/n to machine precision (the SPEC §3 identity, Cov by numpy);
    with correlated answers (ρ ≈ 0.5) the paired SE² is clearly smaller."""
    rng = np.random.default_rng(11)
    reps, n, chunk = 4000, 60, 200
    a = (rng.random((reps, n)) < 0.6).astype(float)
    b_ind = (rng.random((reps, n)) < 0.7).astype(float)
    b_cor = np.where(rng.random((reps, n)) < 0.7, a, b_ind)

    def toolkit_ses(b):
        """(SE_paired², SE_unpaired²) of pair (a_r, b_r) for every replicate r,
        from bayeserr's engine on chunks of replicates stacked as models."""
        out = np.empty((reps, 2))
        idx = np.arange(chunk)
        for start in range(0, reps, chunk):
            rows = np.vstack([a[start:start + chunk], b[start:start + chunk]])
            se_u, se_p, _ = paired_standard_errors(pair_moments(rows))
            out[start:start + chunk] = np.c_[se_p[idx, idx + chunk] ** 2, se_u[idx, idx + chunk] ** 2]
        return out

    ind = toolkit_ses(b_ind)
    g = ind[:, 0] - ind[:, 1]
    assert abs(g.mean()) < 4 * g.std(ddof=1) / np.sqrt(reps)
    cov = np.sum((a - a.mean(axis=1, keepdims=True)) * (b_ind - b_ind.mean(axis=1, keepdims=True)), axis=1) / (n - 1)
    np.testing.assert_allclose(ind[:, 0], ind[:, 1] - 2 * cov / n, rtol=1e-9, atol=1e-15)
    cor = toolkit_ses(b_cor)
    assert (cor[:, 1] - cor[:, 0]).mean() > 0.3 * cor[:, 1].mean()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_results_do_not_depend_on_row_order(seed):
    rng = np.random.default_rng(seed)
    n = 30
    rows = [(m, f"q{i}", f"c{i % 7}", float(rng.random() < 0.5 + 0.1 * j))
            for j, m in enumerate("ABC") for i in range(n)]
    df = pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"])
    shuffled = df.sample(frac=1, random_state=seed).reset_index(drop=True)
    r1 = bayeserr.report(bayeserr.load(df), bayes=BayesSettings(mode="off")).to_dict()
    r2 = bayeserr.report(bayeserr.load(shuffled), bayes=BayesSettings(mode="off")).to_dict()

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
