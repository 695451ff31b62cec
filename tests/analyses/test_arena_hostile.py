"""Hostile inputs to ``bayeserr arena``: each test builds its own votes.

Decisions tested here (see :mod:`bayeserr.analyses.arena`):

* empty cluster ids are an error naming the rows (as in ``bayeserr report``),
  never folded into some cluster;
* models that never met (several connected components) are rated, but every
  format warns, names the groups, centres each group on its own and ranks
  within groups; win probabilities across groups are left out;
* a model that won (lost) every vote keeps its ridge-set rating, flagged as
  not identified in every format, and does not shift the other ratings;
* the same votes in any row order give identical output.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeserr.analyses import arena
from bayeserr.base.errors import InputError
from bayeserr.renderers import arena as pages


def simulate(models, n, seed=0, ties=0.1, clusters=None, spread=1.0):
    """``n`` votes among ``models`` (Bradley–Terry with strengths spread over ±spread)."""
    rng = np.random.default_rng(seed)
    k = len(models)
    strength = np.linspace(-spread, spread, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    winner = np.where(u < p * (1 - ties), "model_a", np.where(u < 1 - ties, "model_b", "tie"))
    names = np.asarray(models, dtype=object)
    df = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})
    if clusters:
        df["prompt"] = [f"p{i}" for i in rng.integers(0, clusters, n)]
    return df


def write(tmp_path, df, name="votes.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def one_error_line(res):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, res.output
    return errors[0]


def cli_formats(cli, path, tmp_path, *args):
    """JSON (parsed), Markdown, LaTeX and HTML of one arena run."""
    out = {}
    for fmt in ("json", "md", "latex"):
        res = cli("arena", path, "--bootstrap", 40, "--format", fmt, *args)
        assert res.exit_code == 0, res.output
        out[fmt] = json.loads(res.stdout) if fmt == "json" else res.stdout
    page = tmp_path / "ratings.html"
    res = cli("arena", path, "--bootstrap", 40, "--format", "html", "-o", page, *args)
    assert res.exit_code == 0, res.output
    out["html"] = page.read_text()
    return out


# ------------------------------------------------------------------ empty cluster ids
def test_empty_cluster_ids_are_an_error_naming_the_rows(cli, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner,prompt\nA,B,model_a,p1\nA,B,model_b,\n"
                    "B,A,tie,p2\nA,B,model_a,  \nB,A,model_a,p1\n")
    line = one_error_line(cli("arena", path, "--cluster-col", "prompt", "--bootstrap-by", "cluster"))
    assert "cluster id is empty" in line and "data rows 2, 4" in line and "'prompt'" in line
    # not only with --bootstrap-by cluster: a cluster column with holes is always an error
    line = one_error_line(cli("arena", path, "--cluster-col", "prompt"))
    assert "data rows 2, 4" in line
    df = pd.DataFrame({"model_a": ["A", "A", "B"], "model_b": ["B", "B", "A"],
                       "winner": ["model_a", "tie", "model_b"], "prompt": ["p1", None, "p2"]})
    with pytest.raises(InputError, match=r"cluster id is empty .*\(data rows 2\)"):
        arena.load_votes(df, cluster_col="prompt")


def test_empty_cluster_rows_are_numbered_as_in_the_file_after_where(cli, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("judge,model_a,model_b,winner,prompt\ncrowd,A,B,model_a,p1\nexpert,A,B,model_b,\n"
                    "crowd,B,A,tie,\ncrowd,A,B,model_a,p2\n")
    line = one_error_line(cli("arena", path, "--where", "judge=crowd", "--cluster-col", "prompt"))
    assert "in 1 vote(s) (data rows 3)" in line  # the expert row (2) was filtered out first


def test_cluster_ids_are_text_and_hand_built_codes_are_recoded():
    df = pd.DataFrame({"model_a": ["A", "B", "A", "B"], "model_b": ["B", "A", "B", "A"],
                       "winner": ["model_a", "model_b", "tie", "model_a"], "prompt": ["007", "7", "7", "007"]})
    path_like = df.to_csv(index=False)
    from io import StringIO
    votes = arena.load_votes(pd.read_csv(StringIO(path_like), dtype=str), cluster_col="prompt")
    assert votes.clusters == ("007", "7")
    # a Votes built by hand with gaps in its cluster codes resamples the clusters that exist
    hand = arena.Votes(votes.models, votes.a, votes.b, votes.win_a, np.array([5, 9, 9, 5]), votes.rows)
    fixed, _ = arena.check_bootstrap(hand, "cluster")
    assert fixed.clusters == ("5", "9") and set(fixed.cluster) == {0, 1}
    bad = arena.Votes(votes.models, votes.a, votes.b, votes.win_a, np.array([0, -1, 1, 0]), votes.rows)
    with pytest.raises(InputError, match="missing cluster id"):
        arena.rate(bad, bootstrap=5, by="cluster")


# ------------------------------------------------------------------ groups that never met
def test_groups_that_never_met_are_named_and_ranked_separately_in_every_format(cli, tmp_path):
    df = pd.concat([simulate(["A", "B", "C"], 600, seed=1), simulate(["D", "E", "F"], 600, seed=2)])
    out = cli_formats(cli, write(tmp_path, df), tmp_path)
    js = out["json"]
    (w,) = [w for w in js["warnings"] if w["code"] == "disconnected_votes"]
    assert set(w) == {"code", "model", "message"}
    assert "group 1: A, B, C" in w["message"] and "group 2: D, E, F" in w["message"]
    assert "not identified" in w["message"]
    assert js["groups"] == [["C", "B", "A"], ["F", "E", "D"]]
    by_model = {m["model"]: m for m in js["models"]}
    assert [m["group"] for m in js["models"]] == [1, 1, 1, 2, 2, 2]
    assert [m["rank"] for m in js["models"]] == [1, 2, 3, 1, 2, 3]  # ranks within each group
    for group in ("ABC", "DEF"):
        assert np.mean([by_model[g]["rating"] for g in group]) == pytest.approx(1000)  # each centred
        assert all(by_model[g]["rank_interval"][1] <= 3 for g in group)
    matrix, names = js["win_probability"]["matrix"], js["win_probability"]["models"]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            same = by_model[a]["group"] == by_model[b]["group"]
            assert (matrix[i][j] is not None) == same
    for pair in js["not_separable"]:
        assert by_model[pair["a"]]["group"] == by_model[pair["b"]]["group"]
    assert "[disconnected_votes]" in out["md"] and "| Group |" in out["md"] and "group 2: D, E, F" in out["md"]
    assert "% warning [disconnected_votes]" in out["latex"] and "group 2: D, E, F" in out["latex"]
    assert "disconnected_votes" in out["html"] and "group 2: D, E, F" in out["html"]


def test_a_single_bridge_vote_joins_the_groups():
    df = pd.concat([simulate(["A", "B", "C"], 300, seed=1), simulate(["D", "E", "F"], 300, seed=2),
                    pd.DataFrame({"model_a": ["C", "D"], "model_b": ["D", "C"], "winner": ["model_a", "model_a"]})])
    r = arena.rate(arena.load_votes(df), bootstrap=30)
    assert r.n_groups == 1 and not any(w.code == "disconnected_votes" for w in r.warnings)


# ------------------------------------------------------------------ unbeaten / winless models
def test_unbeaten_and_winless_models_are_flagged_in_every_format(cli, tmp_path):
    core = simulate(["B", "C", "D", "E"], 2000, seed=3)
    extra = pd.DataFrame({"model_a": ["A"] * 12 + ["Z"] * 5, "model_b": list("BCDE") * 3 + ["B"] * 5,
                          "winner": ["model_a"] * 12 + ["model_b"] * 5})
    path = write(tmp_path, pd.concat([core, extra]))
    out = cli_formats(cli, path, tmp_path)
    flagged = {w["model"]: w["message"] for w in out["json"]["warnings"] if w["code"] == "rating_not_identified"}
    assert set(flagged) == {"A", "Z"}
    assert "won every one of its 12 votes" in flagged["A"] and "+∞" in flagged["A"]
    assert "lost every one of its 5 votes" in flagged["Z"] and "−∞" in flagged["Z"]
    assert all("not identified" in m and "ridge" in m for m in flagged.values())
    ident = {m["model"]: m["identified"] for m in out["json"]["models"]}
    assert ident == {"A": False, "Z": False, "B": True, "C": True, "D": True, "E": True}
    for fmt in ("md", "latex", "html"):
        assert "rating_not_identified" in out[fmt] and "won every one of its 12 votes" in out[fmt]
    # one line per kind of warning (issue 22 item 10), naming both models
    line = next(x for x in out["latex"].splitlines() if x.startswith("% warning [rating_not_identified]"))
    assert "A: won every one" in line and "Z: lost every one" in line
    # the unidentified models do not move the others: the same ratings as without them
    alone = arena.rate(arena.load_votes(core), bootstrap=20)
    both = {m["model"]: m["rating"] for m in out["json"]["models"]}
    for name, rating in zip(alone.models, alone.rating):
        assert both[name] == pytest.approx(rating, abs=0.5)


def test_a_group_that_never_lost_is_named_together():
    core = simulate(["C", "D", "E"], 900, seed=4)
    top = pd.DataFrame({"model_a": ["X", "Y", "X", "C", "Y"], "model_b": ["Y", "X", "C", "Y", "D"],
                        "winner": ["model_a", "model_a", "model_a", "model_b", "model_a"]})
    r = arena.rate(arena.load_votes(pd.concat([core, top])), bootstrap=20)
    (w,) = [w for w in r.warnings if w.code == "rating_not_identified"]
    assert w.model is None and w.message.startswith("X, Y: never lost or tied")
    assert "their ratings are not identified" in w.message
    assert list(r.identified) == [True, True, True, False, False]  # C D E X Y (sorted names)


def test_a_model_with_few_votes_gets_a_bootstrap_warning():
    core = simulate(["B", "C", "D"], 1500, seed=5)
    rare = pd.DataFrame({"model_a": ["A", "A"], "model_b": ["B", "C"], "winner": ["model_a", "model_b"]})
    r = arena.rate(arena.load_votes(pd.concat([core, rare])), bootstrap=200, seed=1)
    (w,) = [w for w in r.warnings if w.code == "bootstrap_unidentified"]
    assert w.model == "A" and "resamples" in w.message
    assert np.isfinite(r.interval).all()


# ------------------------------------------------------------------ determinism
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), by=st.sampled_from(["votes", "cluster"]))
def test_shuffled_rows_give_identical_json(seed, by):
    df = pd.concat([simulate(list("ABCDEF"), 700, seed=6, clusters=25),
                    pd.DataFrame({"model_a": ["G"] * 3, "model_b": ["A", "B", "C"],  # an unbeaten model
                                  "winner": ["model_a"] * 3, "prompt": ["p1", "p2", "p3"]})])
    shuffled = df.sample(frac=1, random_state=np.random.RandomState(seed % 2**32))
    base = arena.rate(arena.load_votes(df, cluster_col="prompt"), bootstrap=60, by=by, seed=3)
    again = arena.rate(arena.load_votes(shuffled, cluster_col="prompt"), bootstrap=60, by=by, seed=3)
    assert json.dumps(base.to_dict(), sort_keys=True) == json.dumps(again.to_dict(), sort_keys=True)
    assert pages.to_markdown(base) == pages.to_markdown(again)


def test_shuffled_file_gives_identical_output_through_the_cli(cli, tmp_path):
    df = simulate([f"model-{i}" for i in range(8)], 3000, seed=7, clusters=40)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a", df)
    second = write(tmp_path / "b", df.sample(frac=1, random_state=11))
    for args in (("--format", "json"), ("--format", "json", "--cluster-col", "prompt", "--bootstrap-by", "cluster"),
                 ("--format", "latex", "--cluster-col", "prompt", "--bootstrap-by", "cluster")):
        one = cli("arena", first, "--bootstrap", 100, "--seed", 5, *args).stdout
        two = cli("arena", second, "--bootstrap", 100, "--seed", 5, *args).stdout
        assert one.replace(str(first), "X") == two.replace(str(second), "X")
    # a different seed does change the intervals (the check above is not vacuous)
    seeds = [json.loads(cli("arena", first, "--bootstrap", 100, "--seed", seed, "--format", "json").stdout)
             for seed in (5, 6)]
    assert seeds[0]["models"] != seeds[1]["models"]


# ------------------------------------------------------------------ rows and warnings in LaTeX/HTML
def test_latex_and_html_carry_rows_and_warnings(cli, tmp_path):
    df = simulate(["A", "B", "C"], 400, seed=8)
    df["judge"] = np.where(np.arange(len(df)) % 4 == 0, "expert", "crowd")
    df = pd.concat([df, pd.DataFrame({"model_a": ["W"] * 4, "model_b": ["A"] * 4, "winner": ["model_a"] * 4,
                                      "judge": ["crowd"] * 4})])
    out = cli_formats(cli, write(tmp_path, df), tmp_path, "--where", "judge=crowd")
    rows = "Rows read: 404; used: 304; dropped: 100 (100 not judge=crowd)."
    assert out["json"]["rows"] == {"read": 404, "used": 304, "dropped": [{"reason": "not judge=crowd",
                                                                          "count": 100}]}
    assert f"% {rows}" in out["latex"]
    assert f'<p id="rows">{rows}</p>' in out["html"]
    assert rows in out["md"]
    assert "% warning [rating_not_identified] W: won every one of its 4 votes" in out["latex"]
    assert '<span class="code">[rating_not_identified]</span> W: won every one of its 4 votes' in out["html"]
    assert r"\begin{tabular}" in out["latex"] and "<h2>Warnings</h2>" in out["html"]


# ------------------------------------------------------------------ option values
@pytest.mark.parametrize("option, value", [("--bootstrap", "0"), ("--level", "1.5"), ("--seed", "-1"),
                                           ("--level", "nan"), ("--bootstrap", "2.5")])
def test_numeric_options_are_range_checked(cli, tmp_path, option, value):
    path = write(tmp_path, simulate(["A", "B"], 20))
    res = cli("arena", path, option, value)
    assert res.exit_code == 2 and option in res.output and "Traceback" not in res.output


def test_where_typos_get_a_did_you_mean(cli, tmp_path):
    df = simulate(["A", "B", "C"], 60, seed=9)
    df["judge_type"] = np.where(np.arange(60) % 2 == 0, "crowd", "expert")
    path = write(tmp_path, df)
    line = one_error_line(cli("arena", path, "--where", "judge_typ=crowd"))
    assert "no column 'judge_typ'" in line and "Did you mean 'judge_type'?" in line
    line = one_error_line(cli("arena", path, "--where", "judge_type=crwd"))
    assert "no votes have judge_type=crwd" in line and "Did you mean 'crowd'?" in line
    assert "crowd, expert" in line
    line = one_error_line(cli("arena", path, "--where", "judge_type"))
    assert "COL=VALUE" in line
    line = one_error_line(cli("arena", path, "--where", "=crowd"))
    assert "COL=VALUE" in line
    # the same column twice: either value; both counted
    res = cli("arena", path, "--where", "judge_type=crowd", "--where", "judge_type=expert", "--bootstrap", 5,
              "--format", "json")
    assert json.loads(res.stdout)["rows"]["used"] == 60


def test_where_on_numbers(cli, tmp_path):
    df = simulate(["A", "B", "C"], 90, seed=10)
    df["turn"] = np.arange(90) % 3 + 1
    votes = arena.load_votes(df, where={"turn": "2"})  # an int column of a DataFrame
    assert votes.rows.used == 30
    df["turn"] = df["turn"].astype(float)
    assert arena.load_votes(df, where={"turn": 2}).rows.used == 30
    res = cli("arena", write(tmp_path, df), "--where", "turn=2.0", "--bootstrap", 5, "--format", "json")
    assert json.loads(res.stdout)["rows"]["used"] == 30


def test_cluster_bootstrap_needs_clusters(cli, tmp_path):
    df = simulate(["A", "B", "C"], 60, seed=11)
    path = write(tmp_path, df)
    line = one_error_line(cli("arena", path, "--bootstrap-by", "cluster"))
    assert "--cluster-col" in line
    df["prompt"] = "only"
    line = one_error_line(cli("arena", write(tmp_path, df), "--bootstrap-by", "cluster", "--cluster-col", "prompt"))
    assert "one cluster ('only')" in line
    df["prompt"] = [f"p{i % 4}" for i in range(60)]
    r = arena.rate(arena.load_votes(df, cluster_col="prompt"), bootstrap=20, by="cluster")
    assert [w.code for w in r.warnings] == ["few_clusters"]
    r = arena.rate(arena.load_votes(df, cluster_col="prompt"), bootstrap=20)
    assert [w.code for w in r.warnings] == ["clusters_ignored"]


# ------------------------------------------------------------------ degenerate vote files
def test_a_single_model_is_a_clear_error(cli, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\nA,A,model_a\nA,A,tie\n")
    line = one_error_line(cli("arena", path))
    assert "against itself" in line and "data rows 1, 2" in line
    path.write_text("model_a,model_b,winner\n")
    line = one_error_line(cli("arena", path))
    assert "no votes" in line


def test_only_ties_gives_equal_ratings_and_a_warning(cli, tmp_path):
    df = pd.DataFrame({"model_a": list("ABCABC"), "model_b": list("BCACAB"), "winner": ["tie"] * 6})
    r = arena.rate(arena.load_votes(df), bootstrap=50)
    np.testing.assert_allclose(r.rating, 1000, atol=1e-9)
    assert [w.code for w in r.warnings] == ["no_decisive_votes"]
    assert (r.rank_interval == [1, 3]).all()  # tied models span every rank
    md = cli("arena", write(tmp_path, df), "--bootstrap", 20).stdout
    assert "[no_decisive_votes] all 6 votes are ties" in md


@pytest.mark.parametrize("value, expect", [("draw", "'draw'"), ("Model_A", "'Model_A'"),
                                           ("tie (bothbad)", "'tie (bothbad)'"), ("", "winner is missing")])
def test_winner_outside_the_three_values_is_an_error(cli, tmp_path, value, expect):
    path = tmp_path / "v.csv"
    path.write_text(f"model_a,model_b,winner\nA,B,model_a\nB,A, tie \nA,B,{value}\n")
    line = one_error_line(cli("arena", path))
    assert expect in line and "data rows 3" in line


def test_blank_model_names_are_missing():
    df = pd.DataFrame({"model_a": ["A", "  ", "B"], "model_b": ["B", "A", None],
                       "winner": ["model_a", "tie", "model_b"]})
    with pytest.raises(InputError, match=r"model name is missing \(column 'model_a'\) in 1 vote\(s\) "
                                         r"\(data rows 2\)"):
        arena.load_votes(df)


# ------------------------------------------------------------------ size
def test_many_votes_are_pooled_not_looped_over():
    """400,000 votes, 100 models, 50 resamples: the cost is per cell, not per vote
    (1,000,000 votes with --bootstrap 200 take a few seconds; see the report)."""
    rng = np.random.default_rng(12)
    m, n = 100, 400_000
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    names = np.array([f"m{i:03d}" for i in range(m)], dtype=object)
    df = pd.DataFrame({"model_a": names[a], "model_b": names[b],
                       "winner": rng.choice(["model_a", "model_b", "tie"], n)})
    start = time.perf_counter()
    r = arena.rate(arena.load_votes(df), bootstrap=50)
    assert time.perf_counter() - start < 60
    assert r.n_votes.sum() == 2 * n and r.draws.shape == (50, m)


def test_votes_of_several_kinds_of_judge_pooled_is_a_warning():
    """A judge_type column mixing crowd and LLM votes was pooled silently (issue 43, item 10): a
    warning names the kinds and both fixes; one kind (--where) or none gives no warning."""
    from bayeserr.analyses import arena
    votes = simulate(["a", "b", "c"], 90, seed=2)
    votes["judge_type"] = ["crowd", "gpt-4", "crowd"] * 30
    ratings = arena.rate(arena.load_votes(votes), bootstrap=20)
    (w,) = [w for w in ratings.warnings if w.code == "judges_pooled"]
    assert "2 kinds of judge in 'judge_type' (crowd 60, gpt-4 30)" in w.message
    assert "--where judge_type=crowd" in w.message and "--judge-col judge_type" in w.message
    one = arena.rate(arena.load_votes(votes, where={"judge_type": "crowd"}), bootstrap=20)
    assert "judges_pooled" not in [w.code for w in one.warnings]
