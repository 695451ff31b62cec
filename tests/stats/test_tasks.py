"""bayeserr.stats.tasks (tasks as a sample, docs/methods.md §3.15) against scipy and hand
formulas, and its guarantees checked by seeded simulation with Monte Carlo error."""

import math

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats.tasks import (competition_ranks, conformal_k, conformal_rank_interval, leave_one_task_out,
                                  task_sample)


def test_task_sample_is_the_t_interval_over_task_values():
    rng = np.random.default_rng(0)
    d = rng.normal(0.6, 0.1, (3, 7))
    v = rng.uniform(0.001, 0.004, (3, 7))
    res = task_sample(d, v, 0.9)
    for r in range(3):
        lo, hi = stats.t.interval(0.9, 6, loc=d[r].mean(), scale=stats.sem(d[r]))
        assert res.lower[r] == pytest.approx(lo, rel=1e-10) and res.upper[r] == pytest.approx(hi, rel=1e-10)
        s2 = d[r].var(ddof=1)
        assert res.between[r] == pytest.approx(max(0.0, s2 - v[r].mean()), abs=1e-15)
        half = stats.t.ppf(0.95, 6) * math.sqrt(s2 * (1 + 1 / 7))
        assert res.new_upper[r] - res.mean[r] == pytest.approx(half, rel=1e-10)
    assert res.df == 6.0
    with pytest.raises(ValueError):
        task_sample(d[:, :1], v[:, :1])


def test_competition_ranks_match_scipy_min_ranks():
    x = np.array([[0.5, 0.2], [0.7, 0.2], [0.5, 0.9], [0.1, 0.2]])
    want = np.column_stack([stats.rankdata(-x[:, t], method="min") for t in range(2)])
    np.testing.assert_array_equal(competition_ranks(x), want)


@pytest.mark.parametrize("T, level, k, attained", [(18, 0.95, 1, 1 - 2 / 19), (39, 0.95, 1, 0.95),
                                                   (99, 0.9, 5, 0.9), (4, 0.8, 1, 0.6)])
def test_conformal_k(T, level, k, attained):
    assert conformal_k(T, level) == (k, pytest.approx(attained))


def test_conformal_interval_is_the_kth_order_statistics():
    ranks = np.array([[3, 1, 4, 1, 5, 9, 2, 6, 5], [2, 7, 1, 8, 2, 8, 1, 8, 2]])
    lo, hi, attained = conformal_rank_interval(ranks, 0.8)   # T = 9: k = 1
    assert lo.tolist() == [1, 1] and hi.tolist() == [9, 8] and attained == pytest.approx(0.8)
    cov, cases, guarantee = leave_one_task_out(np.array([[1.0, 2.0, 3.0], [0.0, 0.5, 4.0]]), 0.5)
    # every task: model 0 ranks 1 in tasks 0, 1 and 2 in task 2 … the intervals from two tasks are their range
    assert cases == 6 and guarantee == pytest.approx(1 / 3)
    ranks = competition_ranks(np.array([[1.0, 2.0, 3.0], [0.0, 0.5, 4.0]]))
    hits = sum(int(min(np.delete(ranks[m], t)) <= ranks[m, t] <= max(np.delete(ranks[m], t)))
               for m in range(2) for t in range(3))
    assert cov == pytest.approx(hits / 6)


def _tasks(rng, reps, M, T, n, tau=0.5, spread=1.0):
    """0/1 scores: model j on task t has p = expit(μ_j + a_t + u_jt); returns per-task means,
    their variances and the models' true means over the population of tasks."""
    mu = np.linspace(-spread / 2, spread / 2, M)
    a = rng.normal(0, 0.7, (reps, 1, T))
    u = rng.normal(0, tau, (reps, M, T))
    p = 1 / (1 + np.exp(-(mu[None, :, None] + a + u)))
    y = rng.binomial(n, p) / n
    v = y * (1 - y) / (n - 1)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    sd = math.sqrt(0.7 ** 2 + tau ** 2)
    truth = (w[None, :] / w.sum() / (1 + np.exp(-(mu[:, None] + sd * x[None, :])))).sum(axis=1)
    return y, v, truth


def test_interval_over_tasks_covers_the_mean_over_the_task_population():
    # few tasks, 0/1 scores of unequal noise: t on T − 1 holds its level (within 2.6 MC SE)
    rng = np.random.default_rng(7)
    reps = 4000
    y, v, truth = _tasks(rng, reps, 2, 5, 40)
    d = y[:, 0] - y[:, 1]
    res = task_sample(d, v[:, 0] + v[:, 1], 0.95)
    cover = np.mean((res.lower <= truth[0] - truth[1]) & (truth[0] - truth[1] <= res.upper))
    assert abs(cover - 0.95) < 2.6 * math.sqrt(0.95 * 0.05 / reps), cover


def test_rank_prediction_covers_a_new_task_at_its_guarantee():
    # T observed tasks and one new task, exchangeable: the new task's rank lies in the
    # interval with probability ≥ 1 − 2k/(T + 1) (equality without ties)
    rng = np.random.default_rng(11)
    reps, M, T = 3000, 8, 9
    y, _, _ = _tasks(rng, reps, M, T + 1, 60)
    hits = []
    for r in range(reps):
        ranks = competition_ranks(y[r])
        lo, hi, attained = conformal_rank_interval(ranks[:, :T], 0.8)
        hits.append(((ranks[:, T] >= lo) & (ranks[:, T] <= hi)).mean())
    cover = float(np.mean(hits))
    se = math.sqrt(attained * (1 - attained) / reps)   # conservative: models of one replicate go together
    assert cover > attained - 2 * se, (cover, attained)


def test_order_statistic_interval_is_exact_without_ties():
    # continuous values (no ties): the coverage is exactly 1 − 2k/(T + 1), within MC error both ways
    rng = np.random.default_rng(5)
    reps, T = 20000, 19
    x = rng.gamma(2.0, size=(reps, T + 1))
    lo, hi, attained = conformal_rank_interval(x[:, :T], 0.9)          # k = 1: 0.9
    cover = np.mean((x[:, T] >= lo) & (x[:, T] <= hi))
    assert attained == pytest.approx(0.9)
    assert abs(cover - attained) < 3 * math.sqrt(attained * (1 - attained) / reps), cover
