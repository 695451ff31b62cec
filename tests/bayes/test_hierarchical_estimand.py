"""The hierarchical column targets the score's estimand (the question-weighted
mean of these clusters); μ, the mean rate of a new cluster, is its own key."""

import numpy as np
import pandas as pd
import pytest
from bayeserr.models import hierarchical

import bayeserr

from ..conftest import real_file


def test_swebench_hierarchical_column_matches_the_score_and_mu_is_separate():
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    df = pd.read_csv(path)
    rep = bayeserr.report(bayeserr.load(path))
    for m in list(rep.scores)[:5]:
        lo, hi = m.intervals["hierarchical_posterior"]
        assert lo < m.mean < hi  # the column's estimand is the score's
        sub = df[df["model"] == m.model].groupby("cluster_id")["score"].agg(["sum", "count"])
        post = hierarchical.fit_exact(sub["sum"].to_numpy(float), sub["count"].to_numpy(float))
        assert m.hierarchical_mu == pytest.approx(tuple(post.interval(0.95)), abs=1e-12)
        assert m.hierarchical_mu[0] < lo  # μ sits far below: django is easier than the average repo
        # independent check of the weighted mean: draws of (μ, κ) from the grid posterior, then θ
        rng = np.random.default_rng(0)
        w = post.weights.ravel() / post.weights.sum()
        pick = rng.choice(w.size, 100_000, p=w)
        grid = post.weights.shape
        mu = np.broadcast_to((1 / (1 + np.exp(-post.logit_mu)))[:, None], grid).ravel()[pick, None]
        kappa = np.broadcast_to(np.exp(post.log_kappa)[None, :], grid).ravel()[pick, None]
        k, n = sub["sum"].to_numpy(float), sub["count"].to_numpy(float)
        theta = rng.beta(mu * kappa + k, (1 - mu) * kappa + n - k)
        draws = theta @ n / n.sum()
        assert (lo, hi) == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])), abs=2e-3)
