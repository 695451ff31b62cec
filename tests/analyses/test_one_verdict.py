"""One verdict in every view (docs/methods.md §3.6): the pair table, the
letter groups, the simultaneous intervals, the rank intervals, the models
tied with the best, the tie-zone sentence, the pairs figure's colours and
the heatmap's marks all come from one set of decisions.  Checked on the
bundled example, real leaderboards and simulated ones, with Romano–Wolf and
Holm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.renderers import plots
from bayeserr.reporting.tables import verdict

from ..conftest import real_file


def _simulated(models: int, clusters: bool, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = [120, 60, 40, 30, 20, 15, 10, 5] if clusters else [300]
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    a = rng.normal(0, 1.2, len(cluster))
    rows = []
    for m in range(models):
        eff = rng.normal(0, 0.25, len(sizes))[cluster] if clusters else 0.0
        eta = 1.2 - 2.4 * m / models + a + eff
        score = (rng.random(len(cluster)) < 1 / (1 + np.exp(-eta))).astype(int)
        rows.append(pd.DataFrame({"model": f"model-{m:02d}", "question_id": np.arange(len(cluster)),
                                  "cluster_id": cluster, "score": score}))
    frame = pd.concat(rows)
    return frame if clusters else frame.drop(columns="cluster_id")


def check_one_verdict(rep):
    comps = list(rep.comparisons)
    names = [s.model for s in rep.scores]
    M = len(names)
    # pair table: the verdict column says what `different` says
    for c in comps:
        assert (verdict(c) != "not different") == c.different
        if c.ci_adjusted is not None and (c.ci_adjusted[0] > 0 or c.ci_adjusted[1] < 0):
            assert c.different, (c.a, c.b, c.ci_adjusted)
        assert c.different == (c.p_adjusted < 1 - rep.level)
    # letter groups: share a letter exactly when not declared different
    if rep.groups is not None:
        for c in comps:
            assert bool(set(rep.groups[c.a]) & set(rep.groups[c.b])) == (not c.different)
    else:
        assert rep.groups_note
    # ranking (the all-pairs family, when it is the report's): a declared order shows in the intervals
    r = rep.ranking
    if rep.comparisons.family.family == "all":
        for c in comps:
            if c.different:
                hi, lo = (c.a, c.b) if c.diff > 0 else (c.b, c.a)
                assert r[lo].rank_simultaneous[0] >= 2 and not r[lo].tied_with_best
                assert r[hi].rank_simultaneous[1] <= M - 1
                assert r[lo].rank_marginal[0] >= 2  # its own, smaller family declares it too
    # tie-zone sentence
    tz = rep.tie_zone
    if tz["largest_not_different"]:
        assert not rep.comparisons.get(tz["largest_not_different"]["a"], tz["largest_not_different"]["b"]).different
    if tz["smallest_different"]:
        assert rep.comparisons.get(tz["smallest_different"]["a"], tz["smallest_different"]["b"]).different
    # pairs figure: blue exactly for the pairs declared different
    fig = plots.pairs(rep)
    shown, _ = plots._shown_pairs(rep)
    lines = [ln for ln in fig.axes[0].lines if len(ln.get_xdata()) == 2 and ln.get_ydata()[0] == ln.get_ydata()[1]]
    assert len(lines) == len(shown)
    for ln, c in zip(lines, shown):
        assert (ln.get_color() == plots.DIFFERENT) == c.different
    # heatmap: marks exactly on the pairs declared different
    if any(c.prob_a_better is not None for c in comps):
        ax = plots.heatmap(rep).axes[0]
        if M <= 15:
            starred = {(round(t.get_position()[1]), round(t.get_position()[0])) for t in ax.texts
                       if t.get_text().endswith("*")}
        else:
            dots = ax.lines[0]
            starred = set(zip(np.round(dots.get_ydata()).astype(int), np.round(dots.get_xdata()).astype(int)))
        idx = {m: i for i, m in enumerate(names)}
        want = {(idx[x], idx[y]) for c in comps if c.different for x, y in ((c.a, c.b), (c.b, c.a))}
        assert starred == want


@pytest.mark.parametrize("adjust", ["romano-wolf", "holm"])
def test_the_example(adjust):
    rep = bayeserr.report(bayeserr.load(example_path()), adjust=adjust)
    check_one_verdict(rep)


@pytest.mark.parametrize("models, clusters", [(8, True), (20, False), (30, True)])
def test_simulated_leaderboards(models, clusters):
    rep = bayeserr.report(bayeserr.load(_simulated(models, clusters, seed=models)), bayes="fast")
    check_one_verdict(rep)
    assert any(c.different for c in rep.comparisons) and not all(c.different for c in rep.comparisons)


def test_family_vs_model_decides_only_its_pairs():
    rep = bayeserr.report(bayeserr.load(_simulated(10, True, 3)), pairs="vs=model-05", bayes="off")
    fam = rep.comparisons.family
    assert fam.family == "vs=model-05" and len(fam.rows) == 9
    for c in rep.comparisons:
        if "model-05" not in (c.a, c.b):
            assert not c.different and np.isnan(c.p_adjusted)
    assert rep.groups is None and "pairs with model-05" in rep.groups_note
    # Holm over the 9 pairs of the family, not over all 45
    from bayeserr.stats.simultaneous import holm
    rows = [c for c in rep.comparisons if "model-05" in (c.a, c.b)]
    assert [c.p_holm for c in rows] == pytest.approx(list(holm(np.array([c.p_value for c in rows]))))
    md = rep.to_markdown()
    assert "the 9 pairs with model-05" in md


def test_swebench():
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    rep = bayeserr.report(bayeserr.load(path))
    check_one_verdict(rep)
    n_rw = sum(c.different for c in rep.comparisons)
    # quoted in docs/methods.md §3.6 and the guide (all 4,096 weight vectors: no Monte Carlo error)
    assert (n_rw, sum(c.p_holm < 0.05 for c in rep.comparisons), len(rep.comparisons)) == (116, 43, 300)
    top, bottom = rep.scores[0].model, rep.scores[-1].model
    assert rep.comparisons.get(top, bottom).different


def test_alpacaeval_far_apart_pair_is_different_in_every_view():
    """The issue's example: FuseChat-Gemma (70.5) and oasst-sft-pythia-12b (1.8),
    68.7 points apart, shared a letter group under Holm over 1,540 pairs."""
    path = real_file("alpacaeval2_per_instruction.csv.gz")
    rep = bayeserr.report(bayeserr.load(path), on_unpaired="drop")
    check_one_verdict(rep)
    a, b = "FuseChat-Gemma-2-9B-Instruct", "oasst-sft-pythia-12b"
    c = rep.comparisons.get(a, b)
    assert c.p_holm == pytest.approx(0.074, abs=5e-4)  # Holm cannot separate them (quoted in the guide) ...
    assert c.different and c.ci_adjusted[0] > 0  # ... the joint step-down and its interval do
    assert not rep.ranking[b].tied_with_best and rep.ranking[b].rank_simultaneous[0] >= 2
    assert len(rep.ranking) == 56 and rep.ranking.family["size"] == 1540
    joint = rep.comparisons.family.draws  # quoted in docs/methods.md §3.9
    assert joint.weights == "webb" and joint.exact and joint.draws == 7776
    assert f"{joint.min_p:.2g}" == "0.00077"
    md = rep.to_markdown()
    assert f"| {a} − {b} |" in md or f"| {b} − {a} |" in md or "Showing" in md


def test_livebench_counts_quoted_in_the_methods():
    """docs/methods.md §3.6: on LiveBench Romano–Wolf declares about 1,890 of
    4,158 pairs different against Holm's 1,673 (4,999 random weight vectors:
    the count moves by a few with the draws)."""
    path = real_file("livebench_20250113_per_question.csv.gz")
    comps = bayeserr.compare_all(bayeserr.load(path), on_unpaired="drop", bayes="off")
    assert len(comps) == 4158 and sum(c.p_holm < 0.05 for c in comps) == 1673
    assert 1850 <= sum(c.different for c in comps) <= 1930
