"""The confidence set for the best model, the top-k set and the models' own
rank intervals (bayeserr.stats.best; docs/methods.md §3.10), each checked
against an independent computation (scipy.stats, a hand formula)."""

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats.best import (
    best_set,
    covariance_from_pairs,
    difference_draws,
    nearest_psd,
    normal_equivalent,
)

DRAWS = 4999
#: Monte Carlo SE of a share near p from DRAWS draws, times 4
def mc_tol(p: float) -> float:
    return 4 * np.sqrt(max(p * (1 - p), 1e-4) / DRAWS)


def test_normal_equivalent_is_the_normal_quantile_of_the_t_tail():
    t = np.array([-3.0, 0.0, 1.5, 7.3, 25.0])
    df = np.array([3.3, 5.0, 12.0, 3.3, 40.0])
    want = stats.norm.isf(stats.t.sf(t, df))
    np.testing.assert_allclose(normal_equivalent(t, df), want, rtol=1e-10)
    # infinite df: the statistic is already normal
    np.testing.assert_allclose(normal_equivalent(t, np.inf), t)


def test_covariance_from_pairs_reproduces_the_pair_variances():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    cov = A @ A.T
    V = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    sigma = covariance_from_pairs(V)
    back = np.diag(sigma)[:, None] + np.diag(sigma)[None, :] - 2 * sigma
    np.testing.assert_allclose(back, V, atol=1e-10)
    assert np.linalg.eigvalsh(sigma).min() > -1e-10
    # a PSD matrix is its own nearest PSD matrix
    np.testing.assert_allclose(nearest_psd(cov), cov, atol=1e-10)


def test_a_pair_never_compared_gets_a_finite_variance():
    V = np.array([[0, 1.0, 2.0], [1.0, 0, np.nan], [2.0, np.nan, 0]])
    sigma = covariance_from_pairs(V)
    assert np.isfinite(sigma).all()


def test_two_models_p_is_the_one_sided_t_test():
    # with two models the candidate has one comparison: p = P(t > t_obs) on the pair's df
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    t, df = 2.1, 6.0
    z = np.full((2, 2), np.nan)
    z[0, 1] = normal_equivalent(t, df)   # model 0 above model 1
    z[1, 0] = normal_equivalent(-t, df)
    res = best_set(cov, z, selection=False)
    want = stats.t.sf(t, df)
    assert abs(res.p_best[1] - want) < mc_tol(want)
    assert abs(res.p_best[0] - stats.t.sf(-t, df)) < mc_tol(0.97)


def test_least_favourable_p_is_the_maximum_of_equicorrelated_normals():
    # M independent means of equal variance: the M − 1 differences against a candidate
    # are equicorrelated with ρ = ½; P(max ≥ c) from scipy's multivariate normal CDF
    m = 5
    cov = np.eye(m)
    z = np.full((m, m), -5.0)
    np.fill_diagonal(z, np.nan)
    z[:, 4] = [2.2, 1.0, 0.5, -0.3, np.nan]  # models above the candidate 4
    corr = np.full((m - 1, m - 1), 0.5) + 0.5 * np.eye(m - 1)
    want = 1 - stats.multivariate_normal(mean=np.zeros(m - 1), cov=corr).cdf(np.full(m - 1, 2.2))
    res = best_set(cov, z, selection=False)
    assert abs(res.p_best[4] - want) < mc_tol(want)


def test_two_step_drops_models_far_below_the_candidate():
    # one model above (z = 2.4), twenty far below: the first step takes them out of the
    # maximum, so p ≈ β + P(Z > 2.4) instead of the maximum of 21 normals
    m = 22
    cov = np.eye(m)
    z = np.full((m, m), np.nan)
    z[0, 21], z[21, 0] = 2.4, -2.4
    for k in range(1, 21):
        z[k, 21], z[21, k] = -12.0, 12.0
    beta = 0.05 / 10
    two_step = best_set(cov, z)
    lfc = best_set(cov, z, selection=False)
    want = beta + stats.norm.sf(2.4)
    assert abs(two_step.p_best[21] - want) < mc_tol(want)
    assert lfc.p_best[21] > two_step.p_best[21] + 0.01


def test_far_apart_models_get_their_exact_ranks_and_a_set_of_one():
    m = 4
    cov = np.eye(m) * 1e-4
    means = np.array([0.9, 0.6, 0.3, 0.1])
    se = np.sqrt(2e-4)
    z = (means[:, None] - means[None, :]) / se
    np.fill_diagonal(z, np.nan)
    res = best_set(cov, z, top_k=2)
    assert res.in_set.tolist() == [True, False, False, False]
    assert res.in_top_k.tolist() == [True, True, False, False]
    assert res.rank_own.tolist() == [[1, 1], [2, 2], [3, 3], [4, 4]]


def test_equal_models_are_all_kept_and_ranks_span_everything():
    m = 6
    z = np.zeros((m, m))
    np.fill_diagonal(z, np.nan)
    res = best_set(np.eye(m), z, top_k=3)
    assert res.in_set.all() and res.in_top_k.all()
    assert (res.rank_own == [1, m]).all()


def test_seeded_and_independent_of_the_model_order():
    rng = np.random.default_rng(0)
    m = 7
    A = rng.normal(size=(m, m))
    cov = A @ A.T / m
    means = rng.normal(size=m)
    sd = np.sqrt(np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov + np.eye(m))
    z = (means[:, None] - means[None, :]) / sd
    np.fill_diagonal(z, np.nan)
    names = np.array([f"m{i}" for i in range(m)], dtype=object)
    a = best_set(cov, z, order=np.argsort(names), top_k=2)
    perm = rng.permutation(m)
    b = best_set(cov[np.ix_(perm, perm)], z[np.ix_(perm, perm)], order=np.argsort(names[perm]), top_k=2)
    np.testing.assert_allclose(a.p_best[perm], b.p_best)
    assert (a.rank_own[perm] == b.rank_own).all()


def test_difference_draws_have_the_asked_covariance():
    cov = np.array([[1.0, 0.5, 0.2], [0.5, 2.0, 0.1], [0.2, 0.1, 0.5]])
    Z = difference_draws(cov, draws=200_000, seed=1)
    np.testing.assert_allclose(np.cov(Z.T), cov, atol=0.02)


@pytest.mark.slow
def test_lab_keeps_each_model_under_the_complete_null():
    """Seeded leaderboards where every model is the best (SWE-bench's 12 unequal
    repositories, the fewest effective clusters of the lab): each model is kept at
    least 95% of the time, within 3 Monte Carlo SEs."""
    from bayeserr.lab.best import best_calibration
    from bayeserr.lab.ranking import RankDesign
    reps = 150
    cell = best_calibration(RankDesign(models=10, clusters="swebench"), reps, seed=11,
                            procedures=("one_sided",))[0]
    kept = cell.mean_size / 10
    assert kept >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps), kept


def test_published_best_set_study_holds_and_is_the_page():
    """docs/calibration.md quotes the best-set study: the report's procedure keeps its
    guarantee in every published design, the previous set is larger at SWE-bench's size,
    and the page's section is the one its CSV gives."""
    from pathlib import Path

    import pandas as pd

    from bayeserr.lab import best
    docs = Path(__file__).resolve().parents[2] / "docs"
    df = pd.read_csv(docs / "calibration_best_set.csv")
    ours = df[df.procedure == "one_sided"]
    assert len(ours) == len(best.published_best_designs())
    for _, r in ours.iterrows():
        assert best.holds_null(r) if r.truth == "complete null" else best.holds(r), r.design
    swe = df[(df.truth != "complete null") & (df.clusters == "swebench") & (df.cluster_sd == 0.1)]
    size = dict(zip(swe.procedure, swe.mean_size))
    assert size["one_sided"] < size["own_two_sided"] < size["simultaneous_wild"]
    assert 1.9 < swe.pair_se.iloc[0] < 2.3  # the real file's noise (median pair SE about 2.1 points)
    page = (docs / "calibration.md").read_text()
    section = best.best_section(df, "x")
    assert all(line in page for line in section if line.startswith("| ") or line.startswith("The report"))


def test_identical_models_get_identical_verdicts():
    """Five models with the same scores (all 0) and one better: the pairs among the five have zero
    variance, which the eigenvalue clipping left at ~1e-9; dividing by it once gave some of them
    rank 1 and the set for the best (a reviewer's find, common for pass^k at large k)."""
    import pandas as pd

    import bayeserr
    best = [int(c) for c in "010010000001000000000011000000100111000100000000010000101000"]  # the find's data
    rows = [{"model": m, "question_id": f"q{i:02d}", "score": float(best[i]) if m == "best" else 0.0}
            for m in ["agent-00", "best", "agent-03", "agent-15", "agent-36", "agent-39"] for i in range(60)]
    ranking = bayeserr.rank(pd.DataFrame(rows).replace({"best": "agent-01"}), bayes="off")
    zeros = [r for r in ranking if r.model != "agent-01"]
    assert {(r.rank_marginal, r.tied_with_best) for r in zeros} == {((2, 6), False)}
    assert ranking["agent-01"].tied_with_best and ranking["agent-01"].rank_marginal == (1, 1)


def test_mirrored_step_down_is_the_step_down_over_both_directions():
    """The two-sided step-down reads the draws of "k below j" as −draws without building
    them: the same rejections as over the concatenated [draws, −draws], ties, −inf columns
    (a model's own, zero-variance pairs) and unusable hypotheses included."""
    from bayeserr.stats.best import _step_down
    rng = np.random.default_rng(4)
    rejected = 0
    for _ in range(300):
        m = int(rng.integers(2, 25))
        draws = rng.standard_normal((300, m))
        draws[:, rng.random(m) < 0.15] = -np.inf
        obs = rng.standard_normal(m) * rng.uniform(0, 4)
        obs[1] = obs[0]  # a tie
        usable = np.concatenate([rng.random(m) < 0.9] * 2)
        stat = np.concatenate([obs, -obs])
        with np.errstate(invalid="ignore"):  # a quantile between two −inf draws
            want = _step_down(stat, np.concatenate([draws, -draws], axis=1), usable, 0.05)
            assert np.array_equal(_step_down(stat, draws, usable, 0.05, mirrored=True), want)
        rejected += want.sum()
    assert rejected > 50  # the comparison is not between empty sets
