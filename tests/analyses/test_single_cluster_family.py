"""The family adjustment when pairs' questions lie in one cluster (found by a reviewer: every
pair was declared different with Romano–Wolf p = 0 and inverted simultaneous intervals).
All pairs in one cluster: each pair's test is the paired z (M7) and the joint draws are the
normal ones; some pairs in one cluster beside clustered pairs: the level is split, Holm
(statsmodels) over the one-cluster pairs at α·m0/m, Romano–Wolf over the others at α·m1/m
(docs/methods.md §3.9)."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import bayeserr


def _frame(models, one_cluster_model=None, all_one=False, n=300, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for m, p in models.items():
        for i in range(n):
            c = "c0" if all_one else f"c{i % 6}"
            if m == one_cluster_model and c != "c0":
                continue
            rows.append((m, f"q{i}", c, int(rng.random() < p)))
    return pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"])


def test_every_question_in_one_cluster_uses_the_normal_joint_draws():
    rep = bayeserr.report(bayeserr.load(_frame({"A": 0.6, "B": 0.62, "C": 0.65}, all_one=True)), bayes="off")
    fam = rep.comparisons.family.to_dict()
    assert fam["joint"]["method"] == "gaussian" and fam["one_cluster_pairs"] == 0
    for c in rep.comparisons:
        assert c.test == "z_paired"
        assert c.p_romano_wolf >= c.p_value - 1e-12          # an adjusted p is never below the raw one
        assert c.ci_adjusted[0] < c.diff < c.ci_adjusted[1]  # not inverted
        assert not c.different                                # gaps of 2–5 points on 300 questions


def test_some_pairs_in_one_cluster_split_the_level():
    ds = bayeserr.load(_frame({"A": 0.6, "B": 0.62, "C": 0.7}, one_cluster_model="A"))
    rep = bayeserr.report(ds, bayes="off", on_unpaired="drop")
    fam = rep.comparisons.family.to_dict()
    comps = list(rep.comparisons)
    ones = [c for c in comps if c.test == "z_paired"]
    multi = [c for c in comps if c.test == "t_cr2_bm"]
    assert fam["joint"]["method"] == "wild_cluster" and fam["one_cluster_pairs"] == len(ones) == 2
    m = len(comps)
    holm = multipletests([c.p_value for c in ones], method="holm")[1]
    for c, h in zip(ones, holm):
        assert c.p_romano_wolf == pytest.approx(min(1.0, h * m / len(ones)), rel=1e-12)
    for c in comps:
        assert c.p_romano_wolf >= c.p_value - 1e-12  # never below the raw p
        lo, hi = c.ci_adjusted
        assert lo < c.diff < hi and (lo > 0 or hi < 0) == c.different
    # the clustered pair: its Romano–Wolf p (a family of one: its own wild bootstrap p) times m/m1
    assert multi[0].p_romano_wolf <= 1.0 and multi[0].p_romano_wolf >= multi[0].p_value
    assert "the level is split" in " ".join(rep.to_markdown().split())  # Markdown wraps
