"""The Judge section's answer (issue 28): Holm over the judge-corrected pairs, the judge-only
verdicts beside them, the human-scored leader, the models tied with it and the verdicts the
labels change — checked against scipy/statsmodels and against the pairs themselves."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import bayeserr
from bayeserr.analyses.judge import judge
from bayeserr.reporting.build import build_report


def _biased(n=400, labelled=0.35, seed=5, names=("alpha", "beta", "gamma")) -> pd.DataFrame:
    """Human 0/1 scores (beta best), a 0/1 judge that passes alpha's wrong answers half the time."""
    rng = np.random.default_rng(seed)
    truth = dict(zip(names, (0.62, 0.70, 0.55)))
    false_pass = dict(zip(names, (0.55, 0.05, 0.10)))
    u, lab, rows = rng.random(n), rng.random(n) < labelled, []
    for m in names:
        y = np.where(rng.random(n) < 0.5, rng.random(n) < truth[m], u < truth[m]).astype(float)
        f = np.where(y == 1, rng.random(n) < 0.92, rng.random(n) < false_pass[m]).astype(float)
        rows.append(pd.DataFrame({"model": m, "question_id": [f"q{i}" for i in range(n)], "score": f,
                                  "human": np.where(lab, y, np.nan)}))
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def result():
    df = _biased()
    return df, judge(bayeserr.load(df, human_col="human"))


def test_holm_over_pairs_matches_statsmodels(result):
    _, j = result
    p = np.array([q.p_value for q in j.pairs])
    assert np.allclose([q.p_holm for q in j.pairs], multipletests(p, method="holm")[1], rtol=1e-12)
    pj = np.array([q.judge_p_value for q in j.pairs])
    assert np.allclose([q.judge_p_holm for q in j.pairs], multipletests(pj, method="holm")[1], rtol=1e-12)


def test_judge_only_test_is_the_paired_t_test_of_the_judge_scores(result):
    df, j = result
    wide = df.pivot(index="question_id", columns="model", values="score")
    for q in j.pairs:
        expected = stats.ttest_rel(wide[q.a], wide[q.b]).pvalue
        assert q.judge_p_value == pytest.approx(expected, rel=1e-9)


def test_summary_follows_the_verdicts(result):
    _, j = result
    s = j.summary
    assert s.leader == j.models[0].model
    with_leader = {(q.b if q.a == s.leader else q.a): q for q in j.pairs if s.leader in (q.a, q.b)}
    assert set(s.tied_with_best) == {m for m, q in with_leader.items() if q.p_holm >= 0.05}
    judge_means = {m.model: m.result.judge_only.estimate for m in j.models}
    assert s.judge_leader == max(judge_means, key=judge_means.get)
    assert s.judge_leader_rank == [m.model for m in j.models].index(s.judge_leader) + 1
    for q in j.pairs:
        corrected = "tie" if q.p_holm >= 0.05 else ("a" if q.result.ppi.estimate > 0 else "b")
        judged = "tie" if q.judge_p_holm >= 0.05 else ("a" if q.result.judge_only.estimate > 0 else "b")
        assert ((q.a, q.b, judged, corrected) in s.changed) == (judged != corrected)
    # the design: the judge inflates alpha, so it leads by the judge but not by the labels
    assert s.judge_leader == "alpha" and s.leader == "beta" and s.changed


def test_report_says_it_in_every_format(tmp_path):
    df = _biased(names=("alpha", "be<b>ta|x", "gamma"))
    ds = bayeserr.load(df, human_col="human")
    rep = build_report(ds)
    s = rep.judge.summary
    from bayeserr.renderers import html, latex, markdown
    md = markdown.render_report(rep)
    flat = " ".join(md.split())  # Markdown wraps its paragraphs
    assert "Corrected by the human labels, be\\<b>ta\\|x has the highest human-scored mean" in flat
    assert "The judge alone would rank alpha first" in flat
    assert "be<b>ta" not in md  # every mention escaped, the Rows paragraph's per-model label counts too
    assert md.count("(judge alone:") == len(s.changed)
    page = html.render(rep)
    assert "be&lt;b&gt;ta|x has the highest" in page and "<b>ta" not in page
    tex = latex.render(rep)
    assert tex.count("(judge:") == len(s.changed)
    data = json.loads(json.dumps(bayeserr.base.jsonable.to_jsonable(rep.to_dict())))
    assert data["judge"]["summary"]["leader"] == "be<b>ta|x"
    assert len(data["judge"]["summary"]["changed"]) == len(s.changed)


def test_no_shared_labels_says_so():
    """Models on different questions (as LLMFAO's comparisons): no pair, and the sentence says
    the labels cannot tell which models are tied with the leader."""
    rng = np.random.default_rng(2)
    rows = []
    for k, m in enumerate(("a", "b")):
        y = (rng.random(60) < 0.5 + 0.2 * k).astype(float)
        rows.append(pd.DataFrame({"model": m, "question_id": [f"{m}{i}" for i in range(60)], "score": y,
                                  "human": np.where(np.arange(60) < 30, y, np.nan)}))
    ds = bayeserr.load(pd.concat(rows), human_col="human")
    from bayeserr.reporting.document import judge_answer
    j = judge(ds)
    assert not j.pairs and j.summary.not_compared == (j.models[1].model,)
    assert "No two models have 10 or more questions labelled for both" in judge_answer(j)


def _many(models=8, n=300, seed=3, labelled=0.3, clusters=None, bias_every=4):
    """``models`` models on the same questions; the judge passes wrong answers of every
    ``bias_every``-th model half the time (biased); for the others it misses 8% of right
    answers and passes just enough wrong ones to be unbiased."""
    rng = np.random.default_rng(seed)
    lab = rng.random(n) < labelled
    rows = []
    for k in range(models):
        p = 0.5 + 0.03 * k
        y = (rng.random(n) < p).astype(float)
        fp = 0.5 if k % bias_every == 0 else 0.08 * p / (1 - p)
        f = np.where(y == 1, rng.random(n) < 0.92, rng.random(n) < fp).astype(float)
        row = {"model": f"m{k}", "question_id": [f"q{i}" for i in range(n)], "score": f,
               "human": np.where(lab, y, np.nan)}
        if clusters is not None:
            row["cluster_id"] = [f"c{i % clusters}" for i in range(n)]
        rows.append(pd.DataFrame(row))
    return pd.concat(rows, ignore_index=True)


def test_constant_labels_give_no_interval_and_say_why():
    df = _many()
    df.loc[(df.model == "m7") & df.human.notna(), "human"] = 1.0   # every label of m7 is 1
    j = judge(bayeserr.load(df, human_col="human"))
    assert "m7" not in [m.model for m in j.models] and j.summary.leader != "m7"
    k = int(df[(df.model == "m7")].human.notna().sum())
    from statsmodels.stats.proportion import proportion_confint
    lo, hi = proportion_confint(k, k, alpha=0.05, method="beta")
    note = next(w for w in j.warnings if "m7" in w)
    assert f"all {k} of its labels are 1" in note and f"[{100 * lo:.1f}, {100 * hi:.1f}]" in note


def test_only_one_model_with_labels_is_not_called_the_highest():
    df = _many()
    df.loc[df.model != "m5", "human"] = np.nan
    from bayeserr.reporting.document import judge_answer
    text = judge_answer(judge(bayeserr.load(df, human_col="human")))
    assert text.startswith("Only m5 has a corrected human-scored mean") and "highest" not in text
    assert "the other 7 models have too few usable labels" in text


def test_one_cluster_is_treated_as_independent_questions_with_a_note():
    df = _many(clusters=1)
    j, j_plain = judge(bayeserr.load(df, human_col="human")), judge(bayeserr.load(df.drop(columns="cluster_id"),
                                                                                   human_col="human"))
    assert [m.result.ppi.se for m in j.models] == [m.result.ppi.se for m in j_plain.models]
    assert any("Every question is in one cluster" in w for w in j.warnings)


def test_biased_judges_are_named_with_holm_over_the_models():
    j = judge(bayeserr.load(_many(models=8, n=600, labelled=0.4), human_col="human"))
    note = next(w for w in j.warnings if w.startswith("The judge's scores are biased"))
    from bayeserr.analyses.judge import _p_value
    p = np.array([_p_value(m.result.bias) for m in j.models])
    holm = multipletests(p, method="holm")[1]
    flagged = {m.model for m, a in zip(j.models, holm) if a < 0.05}
    assert flagged and flagged <= {"m0", "m4"}                      # only the biased judges' models
    assert f"biased for {len(flagged)} of the 8 models" in note and all(m in note for m in flagged)


def test_the_shown_pairs_hold_every_changed_verdict():
    from bayeserr.analyses.judge import MAX_SHOWN_PAIRS, shown_pairs
    j = judge(bayeserr.load(_many(models=12, n=400), human_col="human"))
    assert len(j.pairs) > MAX_SHOWN_PAIRS
    shown = {(p.a, p.b) for p in shown_pairs(j)}
    assert {(a, b) for a, b, _, _ in j.summary.changed[:MAX_SHOWN_PAIRS]} <= shown


def test_markdown_escapes_math_and_emphasis_in_names():
    from bayeserr.reporting.text import esc
    assert esc("$d$ *x* a|b") == r"\$d\$ \*x\* a\|b"
