"""Suite scores with tasks as fixed strata (bayeserr.stats.suite; issue 25 part 1):
the SE against a brute-force CR2 of the stacked regression with task fixed
effects, the df against the Welch–Satterthwaite combination of brute-force
Bell–McCaffrey df, and coverage from a seeded simulation with unequal tasks,
some with few clusters."""

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats.suite import suite_mean, task_weights


def _inv_sqrt(m):
    vals, vecs = np.linalg.eigh(m)
    return vecs @ np.diag(vals ** -0.5) @ vecs.T


def stacked_cr2(y, tasks, clusters, w, crossed=False):
    """CR2 variance of wᵀβ and its Bell–McCaffrey df (Imbens–Kolesár form, working
    covariance I) in the regression of y on task indicators, clusters = (task, cluster)
    pairs: full n×n matrices, nothing shared with the library."""
    n, T = len(y), tasks.max() + 1
    X = (tasks[:, None] == np.arange(T)[None, :]).astype(float)
    XtX_inv = np.linalg.inv(X.T @ X)
    H = X @ XtX_inv @ X.T
    e = y - H @ y
    ids = clusters if crossed else tasks * 10_000 + clusters
    meat = np.zeros((T, T))
    p = w @ XtX_inv @ X.T  # the contrast's row: wᵀβ̂ = p y
    G = []
    M = np.eye(n) - H
    for c in np.unique(ids):
        j = np.flatnonzero(ids == c)
        A = _inv_sqrt(np.eye(len(j)) - H[np.ix_(j, j)])
        u = X[j].T @ A @ e[j]
        meat += np.outer(u, u)
        G.append(M[j].T @ A @ p[j])  # n-vector
    V = XtX_inv @ meat @ XtX_inv
    G = np.array(G).T  # n × C
    lam = np.linalg.eigvalsh(G.T @ G)
    return float(w @ V @ w), float(lam.sum() ** 2 / (lam ** 2).sum())


def _suite_data(seed, sizes_by_task, p_by_task):
    rng = np.random.default_rng(seed)
    y, tasks, clusters = [], [], []
    for t, (sizes, p) in enumerate(zip(sizes_by_task, p_by_task)):
        for c, size in enumerate(sizes):
            pc = np.clip(p + rng.normal(0, 0.15), 0.02, 0.98)
            y.append((rng.random(size) < pc).astype(float))
            tasks.append(np.full(size, t))
            clusters.append(np.full(size, c))
    return np.concatenate(y), np.concatenate(tasks), np.concatenate(clusters)


TASKS = [[12, 3, 5, 30, 4], [7, 7, 6], [40, 2, 2, 3, 9, 11, 5, 8]]


@pytest.mark.parametrize("weights", ["macro", "size", [0.5, 0.2, 0.3]])
def test_se_and_df_against_the_stacked_regression(weights):
    y, tasks, clusters = _suite_data(0, TASKS, [0.6, 0.8, 0.4])
    res = suite_mean(y, tasks, clusters, weights)
    w = res.weights
    var, _ = stacked_cr2(y, tasks, clusters, w)
    assert res.se ** 2 == pytest.approx(var, rel=1e-10)
    assert res.mean == pytest.approx(sum(w[t] * y[tasks == t].mean() for t in range(3)), rel=1e-12)
    # df: Welch–Satterthwaite over each task's brute-force CR2 variance and BM df
    parts = []
    for t in range(3):
        one = tasks == t
        parts.append(stacked_cr2(y[one], np.zeros(one.sum(), int), clusters[one], np.array([1.0])))
    num = sum(w[t] ** 2 * v for t, (v, _) in enumerate(parts)) ** 2
    den = sum((w[t] ** 2 * v) ** 2 / nu for t, (v, nu) in enumerate(parts))
    assert res.df == pytest.approx(num / den, rel=1e-8)
    assert np.allclose(res.task_df, [nu for _, nu in parts], rtol=1e-8)


def test_one_task_is_the_single_task_cr2_t():
    y, tasks, clusters = _suite_data(1, TASKS[:1], [0.7])
    res = suite_mean(y, tasks, clusters)
    var, nu = stacked_cr2(y, tasks, clusters, np.array([1.0]))
    assert res.se ** 2 == pytest.approx(var, rel=1e-10) and res.df == pytest.approx(nu, rel=1e-8)


def test_without_clusters_each_task_is_its_sample_variance():
    rng = np.random.default_rng(3)
    y = rng.random(60)
    tasks = np.repeat([0, 1, 2], [10, 20, 30])
    res = suite_mean(y, tasks)
    v = [y[tasks == t].var(ddof=1) / (tasks == t).sum() for t in range(3)]
    assert res.se ** 2 == pytest.approx(sum(vt / 9 for vt in v), rel=1e-12)
    nu = [9, 19, 29]
    assert res.df == pytest.approx(sum(vt / 9 for vt in v) ** 2 / sum((vt / 9) ** 2 / k for vt, k in zip(v, nu)))


def test_rows_broadcast_and_missing_tasks_are_nan():
    y, tasks, clusters = _suite_data(2, TASKS, [0.5, 0.5, 0.5])
    Y = np.stack([y, 1 - y, y])
    Y[2, tasks == 1] = np.nan  # the third row never answered task 1
    res = suite_mean(Y, tasks, clusters)
    one = suite_mean(y, tasks, clusters)
    assert res.se[0] == pytest.approx(one.se) and res.se[1] == pytest.approx(one.se)
    assert np.isnan(res.mean[2]) and np.isnan(res.se[2])
    # a zero weight on the missing task leaves the rest estimable
    part = suite_mean(Y, tasks, clusters, [1, 0, 1])
    assert np.isfinite(part.mean[2]) and part.mean[2] == pytest.approx(part.mean[0])


def test_weights_are_checked_and_normalised():
    assert task_weights([2, 2], np.array([5, 7])).tolist() == [0.5, 0.5]
    assert task_weights("size", np.array([5, 15])).tolist() == [0.25, 0.75]
    for bad in ([1, -1], [0, 0], [1, 2, 3], "median", [np.nan, 1]):
        with pytest.raises(ValueError):
            task_weights(bad, np.array([5, 7]))


@pytest.mark.parametrize("weights", ["macro", "size"])
def test_coverage_with_unequal_tasks_and_few_clusters(weights):
    """Seeded: 6 tasks of unequal sizes (two with 4 clusters, one dominant cluster),
    0/1 scores with cluster random effects; the 95% t interval (S1, S2) covers θ
    within Monte Carlo error (3 SE of a proportion over R replicates)."""
    rng = np.random.default_rng(20261201)
    design = [[30, 4, 4, 4], [10] * 8, [3, 5, 20, 7], [6] * 12, [25, 25, 10, 40, 5, 5], [8] * 5]
    p = np.array([0.55, 0.8, 0.35, 0.65, 0.9, 0.5])
    sd = 0.6  # cluster effect on the logit scale
    R = 2000
    tasks = np.concatenate([np.full(sum(s), t) for t, s in enumerate(design)])
    clusters = np.concatenate([np.repeat(np.arange(len(s)), s) for s in design])
    sizes = np.concatenate([np.asarray(s) for s in design])
    logit = np.log(p / (1 - p))
    # the true task mean: E over cluster effects of the cluster's rate (questions weight
    # clusters by size within a task, so the estimand is the expected size-weighted rate)
    grid = stats.norm.ppf((np.arange(20000) + 0.5) / 20000) * sd
    mu = np.array([np.mean(1 / (1 + np.exp(-(lg + grid)))) for lg in logit])
    n_t = np.array([sum(s) for s in design])
    w = np.full(6, 1 / 6) if weights == "macro" else n_t / n_t.sum()
    theta = w @ mu
    cl_task = np.concatenate([np.full(len(s), t) for t, s in enumerate(design)])
    eff = logit[cl_task][None, :] + rng.normal(0, sd, (R, len(sizes)))
    rate = np.repeat(1 / (1 + np.exp(-eff)), sizes, axis=1)
    y = (rng.random(rate.shape) < rate).astype(float)
    res = suite_mean(y, tasks, clusters, weights)
    crit = stats.t.ppf(0.975, res.df)
    covered = np.abs(res.mean - theta) <= crit * res.se
    cover = covered[np.isfinite(res.se)].mean()
    mc = 3 * np.sqrt(0.95 * 0.05 / R)
    assert cover >= 0.95 - mc - 0.01, cover  # CR2 + BM is at most slightly liberal here
    assert cover <= 0.995


def test_clusters_across_tasks_use_the_stacked_regressions_cr2():
    """A cluster in two tasks (e.g. a repository split by task): (S3) is the CR2 variance
    of the stacked regression with clusters crossing tasks, and (S1) when they do not cross."""
    from bayeserr.stats.suite import crossed_variance
    rng = np.random.default_rng(4)
    n = 150
    clusters = rng.integers(0, 9, n)
    tasks = rng.integers(0, 3, n)
    y = (rng.random(n) < 0.3 + 0.05 * clusters).astype(float)
    for w in (np.full(3, 1 / 3), np.bincount(tasks) / n, np.array([0.6, 0.1, 0.3])):
        var, _ = stacked_cr2(y, tasks, clusters, w, crossed=True)
        assert crossed_variance(y, tasks, clusters, w) == pytest.approx(var, rel=1e-10)
    y2, t2, c2 = _suite_data(5, TASKS, [0.6, 0.8, 0.4])
    c2 = t2 * 100 + c2  # nested: each cluster code in one task
    nested = suite_mean(y2, t2, c2)
    assert crossed_variance(y2, t2, c2, nested.weights) == pytest.approx(nested.se ** 2, rel=1e-10)


def test_coverage_when_clusters_cross_tasks():
    """12 clusters of 40 questions, each split across two tasks: treating the tasks as
    strata with clusters inside them covers about 86%; the crossed CR2 (S3) with the pooled
    clusters' BM df holds the level (the report and the gate use it when clusters cross)."""
    from bayeserr.analyses.suite import _suite_rows
    rng = np.random.default_rng(20261202)
    C, m, R = 12, 40, 2000
    codes = np.repeat(np.arange(C), m)
    tasks = np.tile(np.arange(2), C * m // 2)
    u = rng.normal(0, 0.8, (R, C))[:, codes]
    y = (rng.random((R, C * m)) < 1 / (1 + np.exp(-u))).astype(float)  # true mean 0.5 (symmetry)
    mean, se, df = _suite_rows(y, tasks, codes, "across tasks", np.array([0.5, 0.5]))
    cover = np.mean(np.abs(mean - 0.5) <= stats.t.ppf(0.975, df) * se)
    mc = 3 * np.sqrt(0.95 * 0.05 / R)
    assert 0.95 - mc <= cover <= 0.95 + mc + 0.02, cover
    false_pass = np.mean(mean - stats.t.ppf(0.95, df) * se > 0.5)
    assert false_pass <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / R), false_pass
