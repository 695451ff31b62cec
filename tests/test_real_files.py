"""Exact intervals and McNemar on the real LangChain file; K samples on MathArena."""


import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

import bayeserr
from bayeserr.stats.estimators import se_clt

from .conftest import real_file


@pytest.fixture(scope="module")
def langchain():
    return bayeserr.load(real_file("langchain_tool_use_per_question.csv.gz"))


def test_exact_intervals_match_statsmodels_and_scipy(langchain):
    df = pd.read_csv(real_file("langchain_tool_use_per_question.csv.gz"))
    for m in bayeserr.score(langchain):
        k = int(df.loc[df["model"] == m.model, "score"].sum())
        assert m.n_questions == 20 and m.binary
        for key, method in [("wilson", "wilson"), ("clopper_pearson", "beta"),
                            ("jeffreys", "jeffreys"), ("agresti_coull", "agresti_coull")]:
            expected = list(proportion_confint(k, 20, 0.05, method))
            if key == "jeffreys":  # Brown, Cai & DasGupta's endpoints at 0/n and n/n
                expected = [0.0 if k == 0 else expected[0], 1.0 if k == 20 else expected[1]]
            np.testing.assert_allclose(m.intervals[key], expected, rtol=1e-12)
        # Clopper–Pearson from scipy's beta quantiles, independently of statsmodels
        lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, 20 - k + 1)
        hi = 1.0 if k == 20 else stats.beta.ppf(0.975, k + 1, 20 - k)
        np.testing.assert_allclose(m.intervals["clopper_pearson"], [lo, hi], atol=1e-10)
        # Wilson by hand
        p, z = k / 20, stats.norm.ppf(0.975)
        centre = (p + z**2 / 40) / (1 + z**2 / 20)
        half = z / (1 + z**2 / 20) * np.sqrt(p * (1 - p) / 20 + z**2 / 1600)
        np.testing.assert_allclose(m.intervals["wilson"], [centre - half, centre + half], rtol=1e-10)


def test_degenerate_clt_warning_fires_for_20_of_20_and_0_of_20(langchain):
    rep = bayeserr.report(langchain)
    degenerate = {w.model for w in rep.warnings if w.code == "degenerate_clt"}
    assert degenerate == {"claude-2.1", "llama-v2-13b-chat"}
    top = rep.scores["claude-2.1"]
    assert top.se_clt == 0 and top.intervals["clt"][0] == top.intervals["clt"][1] == 1.0
    assert top.intervals["clopper_pearson"][0] < 0.85  # exact interval does not collapse
    # 20 questions each, but the table shows Wilson, not a CLT interval: no small_n (issue 22 item 2)
    assert {s.recommended.key for s in rep.scores} == {"wilson"}
    assert not [w for w in rep.warnings if w.code == "small_n"]


def test_mcnemar_matches_statsmodels_on_every_pair(langchain):
    df = pd.read_csv(real_file("langchain_tool_use_per_question.csv.gz"))
    wide = df.pivot(index="question_id", columns="model", values="score")
    comps = bayeserr.compare_all(langchain)
    assert len(comps) == 36
    for c in comps:
        a, b = wide[c.a].to_numpy(), wide[c.b].to_numpy()
        table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
                 [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]
        ref = mcnemar(table, exact=True)
        assert c.mcnemar.p_value == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
        assert [[c.mcnemar.n_both, c.mcnemar.n_a_only], [c.mcnemar.n_b_only, c.mcnemar.n_neither]] == table
        # mid-p: exact p minus the point probability of the observed statistic
        n_disc, lo = table[0][1] + table[1][0], min(table[0][1], table[1][0])
        assert c.mcnemar.p_mid == pytest.approx(min(1, ref.pvalue - stats.binom.pmf(lo, n_disc, 0.5))
                                                if lo * 2 != n_disc else 1.0)
        assert c.mcnemar.p_mid <= c.mcnemar.p_value


def test_matharena_se_over_15_problem_means_not_60_answers():
    path = real_file("matharena_aime2025_II_per_run.csv.gz")
    ds = bayeserr.load(path, sample_col="run", no_cluster=True)
    df = pd.read_csv(path)
    for m in bayeserr.score(ds):
        answers = df[df["model"] == m.model]
        per_problem = answers.groupby("question_id")["score"].mean().to_numpy()
        assert m.n_questions == 15 and m.k_samples == 4
        assert m.se_clt == pytest.approx(se_clt(per_problem), rel=1e-12)
        assert m.se_bernoulli is None and m.intervals.get("wilson") is None
        pooled = answers["score"].std(ddof=1) / np.sqrt(60)
        if per_problem.std() > 0 and 0 < m.mean < 1:
            assert m.se_clt != pytest.approx(pooled, rel=1e-3)
        assert m.variance is not None
    # cluster_id = problem there: one question per cluster, so clustered = plain
    ds_c = bayeserr.load(path, sample_col="run")
    for m in bayeserr.score(ds_c):
        assert m.se_clustered == pytest.approx(m.se_clt, rel=1e-12, abs=1e-15)


def test_pair_probabilities_stay_in_the_unit_interval_on_livecodebench():
    """The cluster model's P(A > B) is a mixture whose weights sum to 1 up to rounding: three
    LiveCodeBench pairs (51 clusters) had P(A > B) = 1.0000000000000002 in the JSON."""
    ds = bayeserr.load(real_file("livecodebench_codegen_per_problem.csv.gz"))
    comps = bayeserr.compare_all(ds, on_unpaired="drop")
    better = np.array([c.prob_a_better for c in comps], float)
    tie = np.array([c.prob_tie for c in comps], float)
    assert np.isfinite(better).sum() > 100 and better.max() > 0.999  # pairs decided beyond doubt
    assert np.nanmin(better) >= 0 and np.nanmax(better) <= 1 and np.nanmin(tie) >= 0 and np.nanmax(tie) <= 1
