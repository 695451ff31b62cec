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
