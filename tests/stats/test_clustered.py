"""Clustered SE (M4) against independent computations.

* statsmodels OLS of the score on a constant with cluster-robust covariance:
  with ``use_correction=False`` it is CR0 = Σ_c(Σe)²/n²; with the default
  correction (factor G/(G−1)·(N−1)/(N−K), K = 1) it is CR1.  The paper's
  estimator is CR0 + Σe²·(1/(n(n−1)) − 1/n²).
* a hand double loop over pairs of questions in the same cluster.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import bayeserr
from bayeserr.stats.estimators import se_clt, se_clustered

from ..conftest import real_file


def _ols_cluster_se(s, groups, correction):
    fit = sm.OLS(s, np.ones_like(s)).fit(cov_type="cluster",
                                         cov_kwds={"groups": groups, "use_correction": correction})
    return float(fit.bse[0])


def _hand_loop(s, groups):
    n, e = len(s), s - s.mean()
    total = np.sum(e**2) / (n * (n - 1))
    for i in range(n):
        for j in range(n):
            if i != j and groups[i] == groups[j]:
                total += e[i] * e[j] / n**2
    return np.sqrt(total)


def _check(s, groups):
    n, e = len(s), s - s.mean()
    cr0 = _ols_cluster_se(s, groups, False)
    paper_from_ols = np.sqrt(cr0**2 + np.sum(e**2) * (1 / (n * (n - 1)) - 1 / n**2))
    assert se_clustered(s, groups, "paper") == pytest.approx(paper_from_ols, rel=1e-10)
    assert se_clustered(s, groups, "cr1") == pytest.approx(_ols_cluster_se(s, groups, True), rel=1e-10)
    return paper_from_ols


@pytest.mark.parametrize("seed", range(5))
def test_random_data_against_statsmodels_and_hand_loop(seed):
    rng = np.random.default_rng(seed)
    n, c = 150, 17
    groups = rng.integers(0, c, n)
    s = np.clip(rng.normal(0.6, 0.2, c)[groups] + rng.normal(0, 0.25, n), 0, 1)
    paper = _check(s, groups)
    assert se_clustered(s, groups) == pytest.approx(_hand_loop(s, groups), rel=1e-10)
    assert paper > 0


def test_swebench_repositories_as_clusters():
    df = pd.read_csv(real_file("swebench_verified_bashonly_per_instance.csv.gz"))
    df = df[df["per_instance_matches_reported"]]
    ds = bayeserr.load(df[["model", "question_id", "cluster_id", "score"]])
    scores = bayeserr.score(ds)
    for m in scores:
        sub = df[df["model"] == m.model]
        s = sub["score"].to_numpy(float)
        groups = pd.factorize(sub["cluster_id"])[0]
        assert m.se_clustered_paper == pytest.approx(_check(s, groups), rel=1e-10)
        assert m.n_clusters == 12
        # the leaderboard's published percentage (some are averaged over runs)
        assert 100 * m.mean == pytest.approx(sub["reported_pct"].iloc[0], abs=0.2)
        assert m.design_effect == pytest.approx(m.se_clustered**2 / m.se_clt**2)
    # few clusters: the noisy-clustered-SE warning must fire for every model
    rep = bayeserr.report(ds)
    assert {w.model for w in rep.warnings if w.code == "few_clusters"} == {m.model for m in scores}


def test_cr1_through_the_api_and_clustered_paired_against_statsmodels():
    rng = np.random.default_rng(7)
    n, groups = 120, rng.integers(0, 9, 120)
    a = (rng.random(n) < 0.7).astype(float)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    rows = [{"model": m, "question_id": i, "cluster_id": int(groups[i]), "score": v[i]}
            for m, v in (("A", a), ("B", b)) for i in range(n)]
    ds = bayeserr.load(pd.DataFrame(rows))
    d = a - b
    for corr in ("paper", "cr1"):
        c = bayeserr.compare(ds, "A", "B", cluster_correction=corr)
        assert c.se_clustered_paired_paper == pytest.approx(se_clustered(d, groups, corr), rel=1e-9)
        assert c.test == "t_cr2_bm" and c.se == c.se_clustered_paired  # CR2 is the headline
    c = bayeserr.compare(ds, "A", "B", cluster_correction="cr1")
    assert c.se_clustered_paired_paper == pytest.approx(_ols_cluster_se(d, groups, True), rel=1e-9)
    assert c.se_paired == pytest.approx(se_clt(d), rel=1e-9)
