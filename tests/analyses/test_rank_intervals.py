"""Rank intervals (docs/methods.md §3.10) against an independent implementation
of Mogstad, Romano, Shaikh & Wilhelm's (2024) algorithm, written here from
the paper's formulas on given estimates and covariance matrices; the
posterior ranks against a brute-force count; the ranking of a report."""

from __future__ import annotations

import numpy as np
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.stats.ranking import posterior_ranks, rank_bounds, rank_intervals

TOL = 1e-5  # the step-down's tie tolerance (relative)


def mogstad(theta, sigma, z, alpha, simultaneous=True):
    """The paper's procedure, as csranks computes it with the parametric
    bootstrap: for the ordered pairs (j, k), T_jk = (θ_j − θ_k)/sd_jk and
    T*_jk = (Z_j − Z_k)/sd_jk; step-down: reject every remaining H_jk
    ("θ_j ≤ θ_k") whose T_jk is above the bootstrap (1 − α) point of the
    maximum over the remaining ones, repeat on the rest until none is
    rejected (count form: fewer than αB draws reach T_jk).  Family: every
    ordered pair (simultaneous), or those with model j (marginal, per j).
    Rank interval of j: [1 + #{k: H_kj rejected}, M − #{k: H_jk rejected}]."""
    m = len(theta)
    z = np.asarray(z, float)
    B = len(z)

    def stat(j, k, x):
        sd = np.sqrt(sigma[j, j] + sigma[k, k] - 2 * sigma[j, k])
        return (x[..., j] - x[..., k]) / sd

    def step_down(family):
        remaining, rejected = set(family), set()
        while True:
            draws = np.max(np.stack([stat(j, k, z) for j, k in remaining]), axis=0)
            draws = draws.astype(np.float32).astype(float)
            new = set()
            for j, k in remaining:
                t = stat(j, k, theta)
                if t > 0 and np.sum(draws >= t - TOL * abs(t)) < alpha * B:
                    new.add((j, k))
            if not new:
                return rejected
            rejected |= new
            remaining -= new

    pairs = [(j, k) for j in range(m) for k in range(m) if j != k]
    if simultaneous:
        rej = step_down(pairs)
        return np.array([[1 + sum((k, j) in rej for k in range(m)), m - sum((j, k) in rej for k in range(m))]
                         for j in range(m)])
    out = []
    for j in range(m):
        rej = step_down([(a, b) for a, b in pairs if j in (a, b)])
        out.append([1 + sum((k, j) in rej for k in range(m)), m - sum((j, k) in rej for k in range(m))])
    return np.array(out)


CASES = {
    "spread": (np.array([0.80, 0.74, 0.71, 0.70, 0.62, 0.55]), 0.0004, 0.5),
    "ties": (np.array([0.60, 0.60, 0.52, 0.52, 0.40]), 0.0003, 0.3),
    "two": (np.array([0.7, 0.6]), 0.001, 0.2),
    "two_tied": (np.array([0.5, 0.5]), 0.001, 0.2),
    "far_apart": (np.array([0.9, 0.5, 0.1, 0.45]), 0.0002, 0.6),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rank_intervals_match_the_paper_algorithm(name):
    theta, var, rho = CASES[name]
    m = len(theta)
    rng = np.random.default_rng(len(name))
    sd = np.sqrt(var * rng.uniform(0.5, 1.5, m))
    corr = np.full((m, m), rho) + (1 - rho) * np.eye(m)
    sigma = corr * np.outer(sd, sd)
    z = rng.multivariate_normal(np.zeros(m), sigma, size=3000)
    marginal, simultaneous = rank_intervals(theta, sigma, level=0.95, z=z)
    assert simultaneous.tolist() == mogstad(theta, sigma, z, 0.05).tolist()
    assert marginal.tolist() == mogstad(theta, sigma, z, 0.05, simultaneous=False).tolist()
    # marginal intervals are never wider than simultaneous ones, and both hold the estimate's rank
    assert np.all(marginal[:, 0] >= simultaneous[:, 0]) and np.all(marginal[:, 1] <= simultaneous[:, 1])
    est_rank = 1 + (theta[None, :] > theta[:, None]).sum(axis=1)
    assert np.all((simultaneous[:, 0] <= est_rank) & (est_rank <= simultaneous[:, 1]))


def test_known_cases():
    theta = CASES["far_apart"][0]
    sigma = np.eye(4) * 1e-6  # every gap is enormous: the ranks are known
    _, sim = rank_intervals(theta, sigma, z=np.random.default_rng(0).normal(0, 1e-3, (2000, 4)))
    assert sim.tolist() == [[1, 1], [2, 2], [4, 4], [3, 3]]
    _, tied = rank_intervals(np.array([0.5, 0.5]), np.eye(2) * 1e-3, seed=1)
    assert tied.tolist() == [[1, 2], [1, 2]]  # equal estimates: never ordered


def test_rank_bounds_by_hand():
    better = np.zeros((4, 4), bool)
    better[0, 2] = better[0, 3] = better[1, 3] = True  # 0 > 2, 0 > 3, 1 > 3
    low, high = rank_bounds(better)
    assert low.tolist() == [1, 1, 2, 3] and high.tolist() == [2, 3, 4, 4]


def test_posterior_ranks_by_brute_force():
    rng = np.random.default_rng(4)
    draws = rng.normal([0.5, 0.45, 0.45, 0.2], 0.05, (500, 4))
    draws[0, 1] = draws[0, 2]  # a tie within a draw
    p_best, mean, cred = posterior_ranks(draws, 0.9)
    ranks = np.array([[1 + sum(d[k] > d[j] for k in range(4)) for j in range(4)] for d in draws])
    assert p_best == pytest.approx((ranks == 1).mean(axis=0))
    assert mean == pytest.approx(ranks.mean(axis=0))
    for j in range(4):
        assert cred[j, 0] == np.quantile(ranks[:, j], 0.05, method="lower")
        assert cred[j, 1] == np.quantile(ranks[:, j], 0.95, method="higher")


def test_rank_api_gives_the_report_ranking():
    ds = bayeserr.load(example_path())
    ranking = bayeserr.rank(ds)
    report = bayeserr.report(ds).ranking
    assert ranking.to_dict() == report.to_dict()
    frame = ranking.to_frame()
    assert list(frame.model) == [r.model for r in report]
    assert {"rank_simultaneous_low", "rank_marginal_high", "p_best", "tied_with_best"} <= set(frame.columns)
    assert frame.p_best.sum() == pytest.approx(1.0, abs=0.01)
    assert ranking["baseline-v1"].rank == 4
    off = bayeserr.rank(ds, bayes="off")
    assert off["ckpt-0419"].p_best is None and off.to_frame().p_best.isna().all()
