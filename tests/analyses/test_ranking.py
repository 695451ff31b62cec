"""Letter groups, the recommended interval and the choice of pairs shown."""

import itertools

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.registries.methods import recommended
from bayeserr.stats.ranking import letter_groups


@pytest.mark.parametrize("seed", range(40))
def test_letters_shared_exactly_when_not_significant(seed):
    """Brute force: every pair of models shares a letter iff it does not differ."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    means = np.sort(rng.normal(size=m))[::-1]
    # interval-like significance (differences larger than a threshold), plus random flips
    differs = np.abs(means[:, None] - means[None, :]) > rng.uniform(0.3, 1.5)
    flips = np.triu(rng.random((m, m)) < 0.1, 1)
    differs ^= flips | flips.T
    names = [f"m{i}" for i in range(m)]
    letters, complete = letter_groups(names, differs)
    assert complete
    for i, j in itertools.combinations(range(m), 2):
        share = bool(set(letters[names[i]]) & set(letters[names[j]]))
        assert share == (not differs[i, j]), (i, j, letters)
    assert all(letters[n] for n in names)


def test_no_differences_is_one_group_and_all_different_is_one_each():
    names = ["a", "b", "c"]
    assert letter_groups(names, np.zeros((3, 3), bool))[0] == {"a": "a", "b": "a", "c": "a"}
    every = ~np.eye(3, dtype=bool)
    assert letter_groups(names, every)[0] == {"a": "a", "b": "b", "c": "c"}


def test_report_groups_follow_the_report_decisions(cli_json):
    """Two models share a letter exactly when their pair is not declared
    different, whichever adjustment decides (Romano–Wolf by default, BH)."""
    rep = cli_json("demo")
    groups = {m["model"]: m["group"] for m in rep["models"]}
    for c in rep["comparisons"]:
        share = bool(set(groups[c["a"]]) & set(groups[c["b"]]))
        assert share == (not c["different"]) == (c["p_romano_wolf"] >= 0.05)
    bh = cli_json("report", example_path(), "--adjust", "bh")
    groups = {m["model"]: m["group"] for m in bh["models"]}
    for c in bh["comparisons"]:
        assert bool(set(groups[c["a"]]) & set(groups[c["b"]])) == (c["p_bh"] >= 0.05)


def test_recommended_interval_rule():
    rng = np.random.default_rng(0)
    small = pd.DataFrame({"model": np.repeat(["A", "B"], 30), "question_id": np.tile(np.arange(30), 2),
                          "score": (rng.random(60) < 0.7).astype(int)})
    scores = bayeserr.score(bayeserr.load(small))
    assert {recommended(s) for s in scores} == {"wilson"}
    frac = small.assign(score=rng.random(60))
    assert {recommended(s) for s in bayeserr.score(bayeserr.load(frac))} == {"bayesian_bootstrap"}
    assert {recommended(s) for s in bayeserr.score(bayeserr.load(frac), bayes="off")} == {"clt"}
    clustered = small.assign(cluster_id=np.tile(np.arange(30) % 5, 2))
    assert {recommended(s) for s in bayeserr.score(bayeserr.load(clustered))} == {"clustered"}
    perfect = clustered.assign(score=1)
    assert {recommended(s) for s in bayeserr.score(bayeserr.load(perfect))} == {"clopper_pearson_clustered"}
    # near 1 with one dominant cluster: the CR2 interval passes 100%, so the rule moves to CP on n_eff
    cluster = np.where(np.arange(30) < 20, 0, np.arange(30) % 4 + 1)
    near = pd.DataFrame({"model": "A", "question_id": np.arange(30), "cluster_id": cluster,
                         "score": (np.arange(30) != 25).astype(int)})
    (s,) = bayeserr.score(bayeserr.load(near))
    assert s.intervals["clustered"][1] > 1 and recommended(s) == "clopper_pearson_clustered"
    lo, hi = s.intervals["clopper_pearson_clustered"]
    assert 0 <= lo < s.mean < hi <= 1
    # counts (n_correct of n_samples) in two clusters near 1: the cluster-effect posterior instead
    # (the same estimand as CR2, the mean over a population of clusters, kept inside [0, 1])
    n_s = np.full(30, 20)
    n_c = np.where(np.arange(30) % 7 == 0, 12, 20)
    counts = pd.DataFrame({"model": "A", "question_id": np.arange(30), "cluster_id": np.arange(30) % 2,
                           "score": n_c / n_s, "n_samples": n_s, "n_correct": n_c})
    (s,) = bayeserr.score(bayeserr.load(counts))
    assert s.intervals["clustered"][1] > 1 and recommended(s) == "cluster_effect_posterior"
    lo, hi = s.intervals["cluster_effect_posterior"]
    assert 0 <= lo < s.mean < hi <= 1
    rep = bayeserr.report(bayeserr.load(small)).to_dict()
    assert {m["recommended"] for m in rep["models"]} == {"wilson"}


def test_pairs_option_chooses_what_is_printed(cli, cli_json):
    md = cli("demo").stdout
    assert md.count(" − ") >= 6
    adj = cli("report", example_path(), "--pairs", "adjacent").stdout.split("## Reliability")[0]  # main pairs
    rows = [line for line in adj.splitlines()
            if line.startswith("| ") and " − " in line.split("|")[1] and "A − B" not in line]
    assert len(rows) == 3 and "Showing 3 of 6 pairs" in adj
    vs = cli_json("report", example_path(), "--pairs", "vs=baseline-v1")
    assert len(vs["comparisons"]) == 3 and all("baseline-v1" in (c["a"], c["b"]) for c in vs["comparisons"])
    assert len(cli_json("report", example_path())["comparisons"]) == 6  # JSON: all by default
    res = cli("report", example_path(), "--pairs", "vs=nobody")
    assert res.exit_code == 2 and "not a model" in res.output


def _models_header(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("| Model |"))


def test_methods_option(cli):
    assert "Clustered (paper, z)" not in _models_header(cli("demo").stdout)
    full = _models_header(cli("report", example_path(), "--methods", "all").stdout)
    assert "| Clustered (paper, z) |" in full and "| Hierarchical posterior |" in full
    some = _models_header(cli("report", example_path(), "--methods", "clt").stdout)
    assert some.endswith("| Method | CLT |")
