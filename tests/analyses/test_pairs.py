"""The all-pairs matrix engine equals the 1-D formulas applied to d = s_A − s_B,
pair by pair, with missing answers and clusters."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeserr
from bayeserr.stats.estimators import se_clt, se_clustered
from bayeserr.stats.pairs import pair_moments


def _random_frame(seed, n_models=5, n=80, n_clusters=11, missing=0.15, binary=False):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, n_clusters, n)
    difficulty = rng.normal(0, 1, n)
    rows = []
    for m in range(n_models):
        p = 1 / (1 + np.exp(difficulty - rng.normal(0, 0.7)))
        s = (rng.random(n) < p).astype(float) if binary else np.clip(p + rng.normal(0, 0.1, n), 0, 1)
        for i in range(n):
            if rng.random() > missing:
                rows.append((f"m{m}", f"q{i}", f"c{clusters[i]}", s[i]))
    return pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"])


@pytest.mark.parametrize("seed, binary", [(0, False), (1, True), (2, False)])
@pytest.mark.parametrize("correction", ["paper", "cr1"])
def test_engine_matches_one_dimensional_formulas(seed, binary, correction):
    df = _random_frame(seed, binary=binary)
    ds = bayeserr.load(df)
    comps = bayeserr.compare_all(ds, on_unpaired="drop", cluster_correction=correction)
    wide = df.pivot(index="question_id", columns="model", values="score")
    cl = df.drop_duplicates("question_id").set_index("question_id")["cluster_id"]
    names = list(wide.columns)
    pm = pair_moments(wide.to_numpy().T)
    assert len(comps) == 10
    for c in comps:
        both = wide[[c.a, c.b]].dropna()
        a, b = both[c.a].to_numpy(), both[c.b].to_numpy()
        d = a - b
        codes = pd.factorize(cl.loc[both.index])[0]
        assert c.n_questions == len(d)
        assert c.n_only_a == wide[c.a].notna().sum() - len(d)
        assert c.diff == pytest.approx(d.mean(), abs=1e-12)
        assert c.se_paired == pytest.approx(se_clt(d), rel=1e-9)
        assert c.se_unpaired == pytest.approx(np.hypot(se_clt(a), se_clt(b)), rel=1e-9)
        assert c.se_clustered_paired_paper == pytest.approx(se_clustered(d, codes, correction), rel=1e-9)
        assert c.correlation == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-9)
        # SPEC §3 identity Var(d) = Var(a) + Var(b) − 2 Cov(a, b): the toolkit's
        # paired SE² · n against the right-hand side computed independently
        assert c.se_paired**2 * len(d) == pytest.approx(
            np.var(a, ddof=1) + np.var(b, ddof=1) - 2 * np.cov(a, b)[0, 1], rel=1e-9)
        # ... and the moment matrices behind it, entry by entry
        i, j = names.index(c.a), names.index(c.b)
        assert pm.var[i, j] == pytest.approx(np.var(a, ddof=1), rel=1e-12)
        assert pm.var[j, i] == pytest.approx(np.var(b, ddof=1), rel=1e-12)
        assert pm.cov[i, j] == pytest.approx(np.cov(a, b)[0, 1], rel=1e-10)
        assert pm.var_d[i, j] == pytest.approx(pm.var[i, j] + pm.var[j, i] - 2 * pm.cov[i, j], rel=1e-10)
        assert pm.mean[i, j] - pm.mean[j, i] == pytest.approx(c.diff, abs=1e-15)
        lo, hi = c.ci  # headline with clusters: CR2 SE, t on the Bell–McCaffrey df (M4b)
        assert c.test == "t_cr2_bm"
        assert (hi - lo) / 2 == pytest.approx(stats.t.ppf(0.975, c.df) * c.se_clustered_paired, rel=1e-9)
        if binary:
            assert c.mcnemar.n_a_only == int(np.sum((a == 1) & (b == 0)))
            assert c.mcnemar.n_b_only == int(np.sum((a == 0) & (b == 1)))
        else:
            assert c.mcnemar is None


def test_holm_and_bh_match_statsmodels():
    from statsmodels.stats.multitest import multipletests
    comps = bayeserr.compare_all(bayeserr.load(_random_frame(3, missing=0)))
    p = np.array([c.p_value for c in comps])
    np.testing.assert_allclose([c.p_holm for c in comps], multipletests(p, method="holm")[1])
    np.testing.assert_allclose([c.p_bh for c in comps], multipletests(p, method="fdr_bh")[1])
    assert all(c.p_holm >= c.p_value for c in comps)


def test_identical_models_give_zero_gap_and_p_one():
    df = _random_frame(4, n_models=1, missing=0)
    df2 = df.assign(model="copy")
    c = bayeserr.compare(bayeserr.load(pd.concat([df, df2])), "m0", "copy")
    assert c.diff == 0 and c.se_paired == 0 and c.p_value == 1 and c.statistic == 0


def test_a_pair_with_identical_scores_is_flagged():
    """Two models with the same score on every common question: SE 0 and the
    interval [0, 0] come with a warning saying what they mean."""
    import bayeserr
    rows = [(m, f"q{i}", s) for m in ("A", "B") for i, s in enumerate([1, 0, 1])] + [("C", f"q{i}", 1) for i in range(3)]
    rep = bayeserr.report(bayeserr.load(pd.DataFrame(rows, columns=["model", "question_id", "score"])))
    c = rep.comparisons.get("A", "B")
    assert c.se_paired == 0 and c.diff == 0
    zero = [w.message for w in rep.warnings if w.code == "zero_se"]
    assert any(m.startswith("A vs B: the same score") for m in zero)
    assert not any(m.startswith("A vs C") for m in zero)
