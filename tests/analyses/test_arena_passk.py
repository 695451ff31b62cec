"""Bradley–Terry ratings and pass@k."""

import itertools
import json
from math import comb

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import bayeserr
from bayeserr.analyses import arena
from bayeserr.stats.passk import pass_at_k, pass_k_dataset

from ..conftest import real_file


@pytest.fixture(scope="module")
def crowd():
    return arena.load_votes(real_file("llmfao_pairwise_votes.csv.gz"), where={"judge_type": "crowd"},
                            cluster_col="cluster_id")


def test_mle_matches_statsmodels_glm_on_llmfao_crowd_votes(crowd):
    s = arena.fit_strengths(crowd.wins())
    m, n = crowd.n_models, crowd.a.size
    X = np.zeros((n, m))
    X[np.arange(n), crowd.a] = 1
    X[np.arange(n), crowd.b] = -1
    # ties are y = 1/2: the same score equations as half a win for each side
    fit = sm.GLM(crowd.win_a, X[:, 1:], family=sm.families.Binomial()).fit()
    ref = np.r_[0.0, fit.params]
    np.testing.assert_allclose(s, ref - ref.mean(), atol=1e-5)
    assert crowd.n_models == 59 and n == 8931
    assert crowd.rows.read == 13209 and crowd.rows.dropped == (("not judge_type=crowd", 4278),)


def test_elo_scale_and_win_probability():
    assert arena.win_probability(1200, 1000) == pytest.approx(0.7597, abs=1e-4)  # "about 0.76"
    assert arena.win_probability(1010, 1000) == pytest.approx(0.514, abs=1e-3)
    assert arena.to_elo(np.log(10) / 400 * 200) == pytest.approx(1200)
    # the fitted win probabilities are σ(s_i − s_j)
    s = np.array([0.5, -0.5])
    r = arena.to_elo(s)
    assert arena.win_probability(r[0], r[1]) == pytest.approx(1 / (1 + np.exp(-1.0)))


def test_bootstrap_intervals_ranks_and_recovery_on_simulated_votes():
    rng = np.random.default_rng(0)
    true = np.linspace(-1, 1, 6)
    a = rng.integers(0, 6, 6000)
    b = (a + rng.integers(1, 6, 6000)) % 6
    p = 1 / (1 + np.exp(-(true[a] - true[b])))
    u = rng.random(6000)
    winner = np.where(u < p * 0.9, "model_a", np.where(u < 0.9, "model_b", "tie"))
    df = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b], "winner": winner})
    r = arena.rate(arena.load_votes(df), bootstrap=300, seed=1)
    est = {m: x for m, x in zip(r.models, r.rating)}
    # the estimand: the Bradley–Terry fit to the expected score matrix, ties counting half a
    # win each (the simulated ties do not depend on strength, which pulls ratings together)
    expected = 0.9 / (1 + np.exp(-(true[:, None] - true[None, :]))) + 0.05
    np.fill_diagonal(expected, 0.0)
    s = arena.fit_strengths(expected)
    truth = {f"m{i}": arena.to_elo(v - s.mean()) for i, v in enumerate(s)}
    for m in est:
        lo, hi = r.interval[r.models.index(m)]
        assert lo < est[m] < hi
        assert abs(est[m] - truth[m]) < 3 * (hi - lo) / 3.92 + 5
    top = r.models.index("m5")
    assert r.rank_interval[top][0] == 1


def test_vote_validation_through_the_cli(cli, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\nA,B,model_a\nA,B,draw\n")
    res = cli("arena", path, "--bootstrap", 10)
    assert res.exit_code == 2 and "winner is not one of" in res.output and "rows 2" in res.output
    path.write_text("model_a,model_b,winner\nA,B,model_a\nA,A,tie\n")
    res = cli("arena", path)
    assert res.exit_code == 2 and "against itself" in res.output
    path.write_text("model_a,model_b,winner\nA,,model_a\n")
    res = cli("arena", path)
    assert res.exit_code == 2 and "model name is missing" in res.output
    res = cli("arena", path, "--where", "judge=crowd")
    assert res.exit_code == 2 and "no column 'judge'" in res.output


def test_arena_cli_formats(cli, tmp_path):
    path = real_file("llmfao_pairwise_votes.csv.gz")
    res = cli("arena", path, "--where", "judge_type=crowd", "--bootstrap", 50, "--format", "json",
              "--cluster-col", "cluster_id", "--bootstrap-by", "cluster")
    out = json.loads(res.stdout)
    assert out["schema"] == "bayeserr.arena/1" and len(out["models"]) == 59
    ratings = [m["rating"] for m in out["models"]]
    assert ratings == sorted(ratings, reverse=True) and np.mean(ratings) == pytest.approx(1000)
    assert out["rows"]["used"] == 8931 and out["bootstrap"]["by"] == "cluster"
    assert len(out["win_probability"]["matrix"]) == 59
    tex = cli("arena", path, "--where", "judge_type=crowd", "--bootstrap", 20, "--format", "latex").stdout
    assert r"\toprule" in tex and "GPT 4" in tex


@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore")
def test_bayesian_and_bootstrap_intervals_broadly_agree(crowd):
    r = arena.rate(crowd, bootstrap=300, seed=2, bayes=True,
                   bayes_kwargs={"draws": 500, "tune": 500, "seed": 2})
    boot_w = r.interval[:, 1] - r.interval[:, 0]
    bayes_w = r.bayes_interval[:, 1] - r.bayes_interval[:, 0]
    assert 0.5 < np.median(bayes_w / boot_w) < 1.5
    centres = (r.bayes_interval[:, 0] + r.bayes_interval[:, 1]) / 2
    assert np.corrcoef(centres, r.rating)[0, 1] > 0.9


# ------------------------------------------------------------------ pass@k
def _brute(n, c, k):
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


def test_pass_at_k_against_brute_force_and_product_form():
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(_brute(n, c, k), abs=1e-12)
    n, c = np.array([200, 200, 50]), np.array([3, 150, 0])
    product = [1 - np.prod(1 - 10 / np.arange(ni - ci + 1, ni + 1)) for ni, ci in zip(n, c)]
    np.testing.assert_allclose(pass_at_k(n, c, 10), product, rtol=1e-10)
    assert pass_at_k(10, 4, 1) == pytest.approx(0.4)  # k = 1: the plain mean
    assert 1 - comb(6, 3) / comb(10, 3) == pytest.approx(pass_at_k(10, 4, 3))


def test_pass_at_k_on_evalperf(cli_json):
    path = real_file("evalperf_per_task.csv.gz")
    df = pd.read_csv(path)
    ds = bayeserr.load(path)
    p1 = {m.model: m for m in bayeserr.score(pass_k_dataset(ds, 1))}
    p10 = {m.model: m for m in bayeserr.score(pass_k_dataset(ds, 10))}
    expected = (df["n_correct"] / df["n_samples"]).groupby(df["model"]).mean()
    for model, value in expected.items():
        assert p1[model].mean == pytest.approx(value, abs=1e-12)
        assert p10[model].mean >= p1[model].mean
    rep = cli_json("report", path, "--pass-k", "1,10")
    assert set(rep["pass_at_k"]) == {"1", "10"}
    for c in rep["pass_at_k"]["10"]["comparisons"][:5]:
        assert c["ci"][0] <= c["diff"] <= c["ci"][1]


def test_pass_at_k_from_per_sample_rows():
    rows = [("A", f"p{i}", s, float(s < i % 4)) for i in range(12) for s in range(5)]
    rows += [("B", f"p{i}", s, float(s < 2)) for i in range(12) for s in range(5)]
    ds = bayeserr.load(pd.DataFrame(rows, columns=["model", "question_id", "sample", "score"]))
    pk = pass_k_dataset(ds, 2)
    a = bayeserr.score(pk)["A"]
    assert a.mean == pytest.approx(np.mean([pass_at_k(5, i % 4, 2) for i in range(12)]))
    c = bayeserr.compare(pk, "B", "A")
    assert c.n_questions == 12


def test_pass_k_takes_space_separated_values():
    import subprocess
    import sys

    from bayeserr.cli import join_multi_values
    assert join_multi_values(["report", "f.csv", "--pass-k", "1", "10", "--format", "json"]) == \
        ["report", "f.csv", "--pass-k", "1,10", "--format", "json"]
    assert join_multi_values(["--pass-k", "1,5", "x.csv"]) == ["--pass-k", "1,5", "x.csv"]
    path = real_file("evalperf_per_task.csv.gz")
    out = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", str(path), "--pass-k", "1", "10",
                          "--format", "json", "--bayes", "off"], capture_output=True, text=True, check=True)
    assert set(json.loads(out.stdout)["pass_at_k"]) == {"1", "10"}
