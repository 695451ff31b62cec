"""The report's Bayesian pair columns under clusters come from the cluster
random-effect model: never 0 or 1 from a finite sample, null with one
cluster, independent of row order."""

import numpy as np
import pandas as pd
import pytest

import bayeserr

from ..conftest import real_file


def _frame(clusters, n=40, seed=0):
    rng = np.random.default_rng(seed)
    cl = np.arange(n) % clusters
    rows = [{"model": m, "question_id": f"q{i}", "cluster_id": f"c{cl[i]}", "score": int(rng.random() < p)}
            for m, p in (("A", 0.8), ("B", 0.4)) for i in range(n)]
    return pd.DataFrame(rows)


def test_one_cluster_is_null_with_a_warning():
    rep = bayeserr.report(bayeserr.load(_frame(1)))
    (c,) = rep.comparisons
    assert c.prob_a_better is None or np.isnan(c.prob_a_better)
    assert any(w.code == "pair_single_cluster" for w in rep.warnings)
    assert rep.to_dict()["comparisons"][0]["prob_a_better"] is None


def test_two_clusters_never_certain_both_ways():
    (c,) = bayeserr.report(bayeserr.load(_frame(2))).comparisons
    assert 0 < c.prob_a_better < 1 and 0 < c.prob_tie < 1
    assert not (c.prob_a_better == 1 and c.prob_tie == 1)


def test_swebench_probabilities_inside_unit_interval_and_match_the_model():
    from bayeserr.models.paired_clustered import from_arrays
    ds = bayeserr.load(real_file("swebench_verified_bashonly_per_instance.csv.gz"))
    rep = bayeserr.report(ds)
    p = np.array([c.prob_a_better for c in rep.comparisons])
    assert ((p > 0) & (p < 1)).all()
    df = pd.read_csv(real_file("swebench_verified_bashonly_per_instance.csv.gz"))
    wide = df.pivot(index="question_id", columns="model", values="score")
    cl = df.drop_duplicates("question_id").set_index("question_id").loc[wide.index, "cluster_id"]
    c = rep.comparisons[0]
    d = (wide[c.a] - wide[c.b]).to_numpy()[None]
    post = from_arrays(d, pd.factorize(cl)[0], 0.01)
    assert c.prob_a_better == pytest.approx(float(post.prob_a_better[0]), abs=1e-9)
    assert c.prob_tie == pytest.approx(float(post.prob_tie[0]), abs=1e-9)


def test_clustered_pair_probabilities_ignore_row_order():
    df = _frame(5, n=60, seed=3)
    a = bayeserr.report(bayeserr.load(df)).to_dict()["comparisons"]
    b = bayeserr.report(bayeserr.load(df.sample(frac=1, random_state=1))).to_dict()["comparisons"]
    assert [c["prob_a_better"] for c in a] == [c["prob_a_better"] for c in b]


def test_posterior_against_the_difference_is_flagged():
    """One large cluster where A wins, many small ones where B wins: the
    question-weighted difference is positive while the cluster-level model
    leans to B; the report says so for the pairs where that happens, only."""
    rng = np.random.default_rng(1)
    sizes = [150] + [15] * 10
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    n = len(cluster)
    base = (rng.random(n) < 0.6).astype(int)
    a = base.copy()
    big = cluster == 0
    a[big] = (rng.random(big.sum()) < 0.95).astype(int)    # A far better on the big cluster
    a[~big] = (rng.random((~big).sum()) < 0.45).astype(int)  # a bit worse elsewhere
    df = pd.DataFrame({"model": np.repeat(["A", "B", "C"], n), "question_id": np.tile(np.arange(n), 3),
                       "cluster_id": np.tile(cluster, 3),
                       "score": np.concatenate([a, base, (rng.random(n) < 0.6).astype(int)])})
    rep = bayeserr.report(bayeserr.load(df))
    c = rep.comparisons.get("A", "B")
    assert c.diff > 0 and c.prob_a_better < 0.45
    flagged = {w.pair for w in rep.warnings if w.code == "pair_estimand_differs"}
    against = {(c.a, c.b) for c in rep.comparisons
               if np.sign(c.diff) * (c.prob_a_better - 0.5) < -0.3
               or (c.different and np.sign(c.diff) * (c.prob_a_better - 0.5) < -0.05)}
    assert ("A", "B") in flagged and flagged == against and len(against) < len(rep.comparisons)
    c = rep.comparisons.get("A", "C")  # +13 points, P(A > C) = 0.31: leans the other way, but not clearly
    assert 0.2 < c.prob_a_better < 0.45 and ("A", "C") not in flagged


def test_estimand_warning_threshold():
    """Issue 22 item 10: "+0.0 points but P(A > B) = 0.43" is no contradiction;
    the warning needs a difference that shows and a posterior leaning clearly
    the other way (or a pair declared different that the posterior doubts)."""
    from bayeserr.analyses.comparison import _points_the_other_way as against
    assert not against(0.0004, 0.43) and not against(-0.0004, 0.9)  # shows as ±0.0 points
    assert not against(0.02, 0.43) and not against(0.02, 0.21)
    assert against(0.02, 0.19) and against(-0.02, 0.81)
    assert against(0.02, 0.43, different=True) and not against(0.02, 0.46, different=True)
    assert not against(0.02, float("nan")) and not against(0.02, None)


def test_probabilities_without_the_interval_are_the_same():
    """``interval=False`` (the report's all-pairs P(A > B) and P(tie)) changes nothing but the interval."""
    from bayeserr.models.paired_clustered import pair_probabilities
    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 20, (30, 8)).astype(float)
    D = rng.normal(0.02, 0.1, (30, 8)) * sizes
    T = (D * D / sizes).sum(axis=1) + rng.uniform(1, 3, 30)
    full = pair_probabilities(D, sizes, 0.01, total_sq=T)
    bare = pair_probabilities(D, sizes, 0.01, total_sq=T, interval=False)
    assert np.isfinite(full.interval).all() and np.isnan(bare.interval).all()
    for name in ("prob_a_better", "prob_tie", "mean", "sd", "tau_mean"):
        assert np.array_equal(getattr(full, name), getattr(bare, name)), name
