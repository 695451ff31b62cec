"""Reliability over repeated runs (``docs/methods.md`` §6.2): pass^k per model, the pairs that
reorder from pass@1, the variance split and the flaky questions, through the API and the CLI."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeserr
from bayeserr.analyses.reliability import default_ks

from ..conftest import real_file, validate_report


def _runs(table: dict, runs: int = 4, clusters=None) -> pd.DataFrame:
    """Long rows from {model: [right runs per question]}: the first c runs right."""
    rows = []
    for model, right in table.items():
        for q, c in enumerate(right):
            for r in range(runs):
                rows.append({"model": model, "question_id": f"q{q:02d}", "sample": r, "score": float(r < c),
                             **({} if clusters is None else {"cluster_id": f"c{clusters[q]}"})})
    return pd.DataFrame(rows)


def test_tau_bench_reproduces_the_published_pass_hat_k():
    """τ-bench airline, tool-calling gpt-4o: pass^1…pass^4 = 0.420, 0.273, 0.220, 0.200 (the benchmark's README)."""
    res = bayeserr.pass_hat_k(bayeserr.load(real_file("taubench_airline_gpt4o_per_trial.csv.gz")))
    assert res.ks == (1, 2, 3, 4) and res.runs == 4
    got = [res.row("gpt-4o", k).estimate for k in res.ks]
    assert np.allclose(got, [0.420, 0.27333, 0.220, 0.200], atol=5e-6)
    for k in res.ks:
        r = res.row("gpt-4o", k)
        assert r.ci[0] < r.estimate < r.ci[1] and 0 <= r.ci[0] and r.ci[1] <= 1
        assert r.bayes is not None and r.bayes[0] < r.bayes_mean < r.bayes[1]
    # pass^4 per task is 0/1 (all four right or not): 10 of 50; Wilson on n* = p(1 − p)/SE² · (z/t_49)²
    r4 = res.row("gpt-4o", 4)
    from statsmodels.stats.proportion import proportion_confint
    se = np.sqrt(0.2 * 0.8 / 49)
    size = 0.2 * 0.8 / se**2 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 49)) ** 2
    assert r4.se == pytest.approx(se) and r4.df == 49
    assert np.allclose(r4.ci, proportion_confint(0.2 * size, size, 0.05, "wilson"), atol=1e-9)
    assert r4.method_rule == "Wilson" and np.allclose(r4.ci_rule, proportion_confint(10, 50, 0.05, "wilson"))
    assert len(res.flaky) == 26 and all(f.counts[0][1] in (1, 2, 3) for f in res.flaky)
    assert res.flaky[0].run_variance == pytest.approx(2 / 4 * 2 / 4 * 4 / 3)  # 2 of 4 right disagree the most


def test_the_estimate_and_se_are_the_mean_and_clt_se_of_the_per_question_values():
    table = {"A": [4, 4, 3, 0, 2, 4, 1, 4, 4, 3], "B": [3, 4, 4, 2, 2, 1, 1, 4, 0, 4]}
    res = bayeserr.pass_hat_k(_runs(table), [1, 2, 4], bayes="off")
    for m, right in table.items():
        for k in (1, 2, 4):
            u = np.array([stats.hypergeom(4, c, k).pmf(k) for c in right])  # C(c, k)/C(4, k)
            r = res.row(m, k)
            assert r.estimate == pytest.approx(u.mean(), abs=1e-14)
            assert r.se == pytest.approx(u.std(ddof=1) / np.sqrt(u.size), rel=1e-12)
            assert r.bayes is None


def test_a_reordered_pair_and_the_test_of_the_change_in_its_gap():
    """A is steadier than B: ahead at pass@1 (runs agree less for B), behind at pass^4.  The change
    in the gap is the paired t test of (U4_A − U4_B) − (p_A − p_B) over questions."""
    rng = np.random.default_rng(1)
    a = rng.choice([1, 2, 3], 40)            # A: partial successes everywhere
    b = rng.choice([0, 4], 40, p=[0.6, 0.4])  # B: all or nothing
    a[:3] = 4
    res = bayeserr.pass_hat_k(_runs({"A": a, "B": b}), [1, 4], bayes="off")
    assert [r.model for r in res.rows][::2] == ["B", "A"]  # best first by pass^4
    (rev,) = res.reversals
    u1a, u1b = a / 4, b / 4
    u4a, u4b = (a == 4).astype(float), (b == 4).astype(float)
    assert u1a.mean() > u1b.mean() > 0 and u4b.mean() > u4a.mean()
    change = (u4a - u4b) - (u1a - u1b)
    t = stats.ttest_1samp(change, 0.0)
    assert (rev.a, rev.b, rev.k) == ("A", "B", 4)
    assert rev.diff_1 == pytest.approx(u1a.mean() - u1b.mean()) and rev.diff_k == pytest.approx(u4a.mean() - u4b.mean())
    assert rev.change_p == pytest.approx(t.pvalue, rel=1e-9) and rev.change_df == 39
    assert rev.change_p_holm == pytest.approx(t.pvalue, rel=1e-9)  # one reordered pair: Holm is the p
    assert res.n_pairs == 1
    (cmp,) = res.comparisons  # the pass^4 pair's own verdict says whether B is declared ahead
    assert rev.confirmed == (cmp.different and (cmp.diff < 0) == (cmp.a == "A"))


def test_clustered_questions_use_cr2_and_leave_out_the_beta_binomial():
    clusters = [i % 5 for i in range(30)]
    rng = np.random.default_rng(2)
    table = {"A": rng.integers(0, 5, 30), "B": rng.integers(0, 5, 30)}
    res = bayeserr.pass_hat_k(_runs(table, clusters=clusters), [1, 2])
    assert res.clustered and all(r.bayes is None for r in res.rows)
    r = res.row("A", 2)
    from scipy.stats import hypergeom

    from bayeserr.stats.fewclusters import cr2_mean
    u = np.array([hypergeom(4, c, 2).pmf(2) for c in table["A"]])
    cr = cr2_mean(u, np.array(clusters))
    assert r.se == pytest.approx(float(cr.se)) and r.df == pytest.approx(float(cr.df))
    assert any("independent" in n for n in res.notes)


def test_variance_split_adds_up():
    """Between-question variance + run noise = the spread of the per-question estimates."""
    rng = np.random.default_rng(4)
    right = rng.binomial(8, rng.beta(2, 2, 60))
    res = bayeserr.pass_hat_k(_runs({"A": right}, runs=8), [1, 4], bayes="off")
    for k in (1, 4):
        r = res.row("A", k)
        u = np.array([stats.hypergeom(8, c, k).pmf(k) for c in right])
        within = r.run_se ** 2 * u.size
        assert r.between_sd ** 2 + within == pytest.approx(u.var(ddof=1), rel=1e-9)
        assert r.run_share == pytest.approx(within / u.var(ddof=1), rel=1e-9)


def test_default_ks():
    assert default_ks(4) == (1, 2, 3, 4) and default_ks(8) == tuple(range(1, 9))
    assert default_ks(50) == (1, 2, 4, 8, 16, 32, 50) and default_ks(64) == (1, 2, 4, 8, 16, 32, 64)


def test_inputs_that_cannot_give_pass_hat_k_are_refused_with_the_fix():
    df = _runs({"A": [4, 3, 1]}, runs=4)
    with pytest.raises(bayeserr.InputError, match=r"pass\^5 needs 5 runs.*fewest is 4.*--pass-hat-k 1,4"):
        bayeserr.pass_hat_k(df, [1, 5])
    once = df[df["sample"] == 0]
    with pytest.raises(bayeserr.InputError, match="run at least twice"):
        bayeserr.pass_hat_k(once)
    frac = df.assign(score=df.score * 0.5)
    with pytest.raises(bayeserr.InputError, match="0/1 results per run"):
        bayeserr.pass_hat_k(frac)
    with pytest.raises(bayeserr.InputError, match="whole"):
        bayeserr.pass_hat_k(df, [0])


def test_evalperf_o1_mini_falls_from_first_and_the_fall_is_tested():
    """EvalPerf (counts of 50–100 samples per task): o1-mini is #1 by pass@1 and #7 by pass^10;
    its gap to deepseek-chat-v3 changes significantly (questions independent)."""
    ds = bayeserr.load(real_file("evalperf_per_task.csv.gz"), no_cluster=True)
    res = bayeserr.pass_hat_k(ds, [1, 10, 50], bayes="off")
    first = max(res.models, key=lambda m: res.row(m, 1).estimate)
    assert first == "o1-mini-2024-09-12"
    assert res.ranking["o1-mini-2024-09-12"].rank == 12 and res.compare_k == 50
    at10 = sorted(res.models, key=lambda m: -res.row(m, 10).estimate)
    assert at10.index("o1-mini-2024-09-12") == 6 and at10[0] == "deepseek-chat-v3"
    rev = {(r.a, r.b): r for r in res.reversals}
    assert rev["o1-mini-2024-09-12", "deepseek-chat-v3"].significant
    assert len(res.comparisons) == 561 and res.n_pairs == 561


def test_report_section_json_and_cli_option(cli, tmp_path):
    path = real_file("taubench_airline_gpt4o_per_trial.csv.gz")
    out = tmp_path / "r.json"
    cli("report", path, "--pass-hat-k", "1,3", "-o", out)
    rep = validate_report(json.loads(out.read_text()))
    rel = rep["reliability"]
    assert rel["ks"] == [1, 3] and [m["k"] for m in rel["models"]] == [1, 3]
    assert rel["models"][1]["estimate"] == pytest.approx(0.22)
    md = cli("report", path).output
    assert "## Reliability over repeated runs (pass^k)" in md and "| airline-13 |" in md
    bad = cli("report", path, "--pass-hat-k", "9")
    assert bad.exit_code == 2 and "pass^9 needs 9 runs" in bad.output and "Traceback" not in bad.output


def test_some_questions_run_once_is_said_not_silent(cli_json):
    table = _runs({"A": [4, 3, 2, 1, 0, 4], "B": [2, 2, 2, 4, 4, 0]})
    once = table[~((table.question_id == "q05") & (table["sample"] > 0))]  # q05 run once
    rep = bayeserr.report(bayeserr.load(once), bayes="off").to_dict()
    assert rep["reliability"] is None
    (w,) = [w for w in rep["warnings"] if w["code"] == "pass_hat_k_not_shown"]
    assert "1 of 6 questions was run once for some model (e.g. 'q05' of 'A')" in w["message"]
    with pytest.raises(bayeserr.InputError, match="1 of 6 questions was run once.*drop them"):
        bayeserr.pass_hat_k(once)


def test_misfit_and_few_clusters_are_warnings():
    """All-or-nothing questions: the Beta–Binomial misses the estimate, and the column is empty
    there; two clusters: the section says its SEs rest on few degrees of freedom."""
    flaky = {"steady": [4] * 15 + [0] * 45, "flaky": [2] * 60}
    rep = bayeserr.report(bayeserr.load(_runs(flaky)))
    codes = [w.code for w in rep.warnings]
    assert "pass_hat_k_misfit" in codes
    row = rep.sections["reliability"].row("flaky", 4)
    assert row.estimate == 0 and row.bayes_misfit
    assert "| flaky | 0.0 | [0.0, " in rep.to_markdown() and " | – | " in rep.to_markdown()
    clustered = _runs({"A": [4, 3, 1, 0] * 5, "B": [2, 2, 2, 4] * 5}, clusters=[i % 2 for i in range(20)])
    rep = bayeserr.report(bayeserr.load(clustered), bayes="off")
    assert "pass_hat_k_few_clusters" in [w.code for w in rep.warnings]
