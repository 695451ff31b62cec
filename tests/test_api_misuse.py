"""API misuse (issue 12): every public entry point, given the wrong thing,
raises :class:`bayeserr.InputError` whose message names the problem and the
fix, the same way the CLI does; never a raw KeyError, AttributeError,
TypeError or IndexError from deep inside.

Each case is one call of the public API (``bayeserr.__all__``, the arena,
pass@k and the simulation lab) with one thing wrong: the wrong type, an
unknown model, a hand-built ``xarray.Dataset`` that breaks the contract of
:func:`bayeserr.load` (missing variable or coordinate, wrong dims, empty,
values outside [0, 1], …), ``None``, negative / NaN / infinite numbers, a
level outside (0, 1), unknown method, format or correction names, pairs
naming unknown models or one model twice, lookups of results by an unknown
name, planning with impossible inputs, arena calls with bad votes tables.

Cases whose fix belongs to a module outside the API boundary are marked
``xfail(strict=True)`` with the owning module: they start passing (and the
mark must go) when that module validates its arguments.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayeserr
from bayeserr.analyses import arena
from bayeserr.base.errors import InputError
from bayeserr.lab import simulate as lab
from bayeserr.stats import passk

from .analyses.test_arena_hostile import simulate as simulate_votes

NAN, INF = float("nan"), float("inf")


# ------------------------------------------------------------------ fixtures
def _frame() -> pd.DataFrame:
    """3 models × 12 questions × 2 samples, 4 clusters, 0/1 scores."""
    rng = np.random.default_rng(12)
    return pd.DataFrame([{"model": m, "question_id": f"q{i:02d}", "cluster_id": f"c{i % 4}", "sample": k,
                          "score": int(rng.random() < 0.4 + 0.2 * j)}
                         for j, m in enumerate("ABC") for i in range(12) for k in range(2)])


@pytest.fixture(scope="module")
def ctx():
    ds = bayeserr.load(_frame())
    votes_frame = simulate_votes(["a", "b", "c"], 60, seed=1)
    return SimpleNamespace(
        ds=ds, frame=_frame(),
        scores=bayeserr.score(ds, bayes="off"), comps=bayeserr.compare_all(ds, bayes="off"),
        report=bayeserr.report(ds, bayes="off"),
        compare_report=bayeserr.compare_report(ds, "A", "B", bayes="off"),
        votes_frame=votes_frame, votes=arena.load_votes(votes_frame),
    )


def _score(ds, values) -> xr.Dataset:
    return ds.copy().assign(score=(("model", "question", "sample"), values))


def _poke(ds, value) -> xr.Dataset:
    """The dataset with its first score replaced by ``value``."""
    values = ds["score"].values.copy()
    values[0, 0, 0] = value
    return _score(ds, values)


def _silence(ds, model: int) -> xr.Dataset:
    values = ds["score"].values.copy()
    values[model] = np.nan
    return _score(ds, values)


def _rename(ds, dim, labels) -> xr.Dataset:
    return ds.assign_coords({dim: labels})


CASES = []


def case(name, call, match, owner=None):
    """One misuse: ``call(ctx)`` must raise an InputError matching ``match``."""
    marks = [pytest.mark.xfail(strict=True, reason=f"owned by {owner}")] if owner else []
    CASES.append(pytest.param(call, match, id=name, marks=marks))


def bad_dataset(name, build, match):
    """A hand-built dataset: refused alike by score, compare_all and report."""
    case(f"score: {name}", lambda c: bayeserr.score(build(c)), match)
    case(f"compare_all: {name}", lambda c: bayeserr.compare_all(build(c)), match)
    case(f"report: {name}", lambda c: bayeserr.report(build(c)), match)


# ================================================================ load (data.py)
case("load(None)", lambda c: bayeserr.load(None), "got NoneType None")
case("load(float)", lambda c: bayeserr.load(3.5), "got float 3.5")
case("load(missing file)", lambda c: bayeserr.load("no/such/results.csv"), "no such file. Check the path")
case("load(DataFrame without score)", lambda c: bayeserr.load(c.frame.drop(columns="score")),
     "no 'score' column")
case("load(models=unknown)", lambda c: bayeserr.load(c.frame, models=["Z"]), "model 'Z' is not in the data")
case("load(Dataset)", lambda c: bayeserr.load(c.ds), "got Dataset")
case("load(NaN score)", lambda c: bayeserr.load(c.frame.assign(score=np.nan)), "missing")

# ================================================================ datasets
bad_dataset("None", lambda c: None, "got NoneType None.*bayeserr.load")
bad_dataset("a DataArray", lambda c: c.ds["score"], "got DataArray.*bayeserr.load")
bad_dataset("a file path", lambda c: "results.csv", "got str.*bayeserr.load")
bad_dataset("empty Dataset", lambda c: xr.Dataset(), "no 'score' variable")
bad_dataset("score on (model, question)", lambda c: xr.Dataset(
    {"score": (("model", "question"), np.ones((2, 3)))}), r"dims \('model', 'question'\)")
bad_dataset("score on (question, model, sample)", lambda c: c.ds.transpose("question", "model", "sample"),
            r"dims \('question', 'model', 'sample'\)")
bad_dataset("score as text", lambda c: _score(c.ds, np.full(c.ds["score"].shape, "x", dtype=object)),
            "must be numbers")
bad_dataset("score above 1", lambda c: _poke(c.ds, 5.0), r"outside \[0, 1\]")
bad_dataset("negative score", lambda c: _poke(c.ds, -0.5), r"outside \[0, 1\]")
bad_dataset("infinite score", lambda c: _poke(c.ds, INF), "infinite")
bad_dataset("no models", lambda c: c.ds.isel(model=[]), "no models")
bad_dataset("no questions", lambda c: c.ds.isel(question=[]), "fewer than 2 questions")
bad_dataset("a model with no answers", lambda c: _silence(c.ds, 1), r"fewer than 2 questions.*'B'")
bad_dataset("a model named twice", lambda c: _rename(c.ds, "model", ["A", "A", "C"]), "'A'.*more than once")
bad_dataset("a question named twice", lambda c: _rename(
    c.ds, "question", ["q0", "q0"] + [f"x{i}" for i in range(10)]), "'q0'.*more than once")
bad_dataset("cluster coordinate on the models", lambda c: c.ds.drop_vars("cluster").assign_coords(
    cluster=("model", ["x", "y", "z"])), "cluster.*on 'question'")
bad_dataset("a missing cluster id", lambda c: c.ds.assign_coords(
    cluster=("question", [None] + list(c.ds["cluster"].values[1:]))), "cluster id is missing")
case("score: DataFrame without a model column", lambda c: bayeserr.score(c.frame.drop(columns="model")),
     "no 'model' column")
case("report: pass_k with n_samples but no n_correct", lambda c: bayeserr.report(c.ds.assign(
    n_samples=(("model", "question"), np.full((3, 12), 2.0))), pass_k=[1], bayes="off"),
     "n_samples.*n_correct")

# ================================================================ score
case("score(models=unknown)", lambda c: bayeserr.score(c.ds, models=["Z"]), "model 'Z' is not in the data")
case("score(models=unknown str)", lambda c: bayeserr.score(c.ds, models="Z"), "model 'Z' is not in the data")
case("score(models=[])", lambda c: bayeserr.score(c.ds, models=[]), "models is empty")
case("score(models=5)", lambda c: bayeserr.score(c.ds, models=5), "models takes a list of model names")
case("score(models=[None])", lambda c: bayeserr.score(c.ds, models=[None]), "model names")
case("score(models twice)", lambda c: bayeserr.score(c.ds, models=["A", "A"]), "'A' is listed twice")
case("score(level=1.5)", lambda c: bayeserr.score(c.ds, level=1.5), r"level must be a .*number in \(0, 1\)")
case("score(level=0)", lambda c: bayeserr.score(c.ds, level=0), r"level .*\(got 0\)")
case("score(level=nan)", lambda c: bayeserr.score(c.ds, level=NAN), r"level .*\(got nan\)")
case("score(level=None)", lambda c: bayeserr.score(c.ds, level=None), r"level .*\(got None\)")
case("score(level='high')", lambda c: bayeserr.score(c.ds, level="high"), r"level .*\(got 'high'\)")
case("score(cluster_correction=cr3)", lambda c: bayeserr.score(c.ds, cluster_correction="cr3"),
     "'cr3' is not a known cluster correction.*Choose one of: paper, cr1")
case("score(bayes=maybe)", lambda c: bayeserr.score(c.ds, bayes="maybe"), "'maybe' is not a known Bayesian mode")
case("score(bayes=1)", lambda c: bayeserr.score(c.ds, bayes=1), "bayes must be 'off', 'fast', 'full', 'mcmc'")
case("score(methods=unknown)", lambda c: bayeserr.score(c.ds, methods="wald2"), "'wald2' is not a known")
case("score(methods=5)", lambda c: bayeserr.score(c.ds, methods=5), "methods takes")
case("score(seed=-1)", lambda c: bayeserr.score(c.ds, seed=-1), "seed must be a whole number")
case("score(seed=1.5)", lambda c: bayeserr.score(c.ds, seed=1.5), "seed must be a whole number")
case("score(options='fast')", lambda c: bayeserr.score(c.ds, options="fast"), "options must be a bayeserr Options")
case("score(levle=0.9) typo", lambda c: bayeserr.score(c.ds, levle=0.9),
     "'levle' is not an option.*Did you mean 'level'")
case("score(options=..., level=2)", lambda c: bayeserr.score(c.ds, options=bayeserr.Options(), level=2),
     "level")

# ================================================================ Options / BayesSettings
case("Options(adjust=bonferroni)", lambda c: bayeserr.Options(adjust="bonferroni"),
     "'bonferroni' is not a known multiplicity adjustment")
case("Options(on_unpaired=skip)", lambda c: bayeserr.Options(on_unpaired="skip"),
     "'skip' is not a known unpaired handling")
case("Options(pairs=sideways)", lambda c: bayeserr.Options(pairs="sideways"), "--pairs must be auto")
case("Options(pass_k=[0])", lambda c: bayeserr.Options(pass_k=[0]), "pass.k must be a whole number")
case("Options(pass_k=5)", lambda c: bayeserr.Options(pass_k=5), "pass_k takes a list of whole numbers")
case("Options(prior_sensitivity='yes')", lambda c: bayeserr.Options(prior_sensitivity="yes"),
     "prior_sensitivity takes True or False")
case("BayesSettings(mode=None)", lambda c: bayeserr.BayesSettings(mode=None), "not a known Bayesian mode")
case("BayesSettings(rope=2)", lambda c: bayeserr.BayesSettings(rope=2), r"rope must be a number in \[0, 1\)")
case("BayesSettings(prior=flat)", lambda c: bayeserr.BayesSettings(prior="flat"), "'flat' is not a known prior")
case("BayesSettings(draws=0)", lambda c: bayeserr.BayesSettings(draws=0), "draws must be a whole number")

# ================================================================ compare / compare_all
case("compare(unknown model)", lambda c: bayeserr.compare(c.ds, "A", "Z"), "model 'Z' is not in the data")
case("compare(same model twice)", lambda c: bayeserr.compare(c.ds, "A", "A"), "two different models")
case("compare(None model)", lambda c: bayeserr.compare(c.ds, None, "A"), "model name")
case("compare(list for a)", lambda c: bayeserr.compare(c.ds, ["A", "B"], "C"), "model name")
case("compare(level=-0.1)", lambda c: bayeserr.compare(c.ds, "A", "B", level=-0.1), "level")
case("compare(on_unpaired=skip)", lambda c: bayeserr.compare(c.ds, "A", "B", on_unpaired="skip"),
     "'skip' is not a known unpaired handling")
case("compare(unpaired questions)", lambda c: bayeserr.compare(
    bayeserr.load(c.frame.iloc[2:]), "A", "B"), "--on-unpaired drop")
case("compare_all(one model)", lambda c: bayeserr.compare_all(c.ds, ["A"]), "at least two models")
case("compare_all(adjust=bonf)", lambda c: bayeserr.compare_all(c.ds, adjust="bonf"),
     "'bonf' is not a known multiplicity adjustment")
case("compare_all(models=unknown)", lambda c: bayeserr.compare_all(c.ds, ["A", "Y"]), "model 'Y'")
case("rank(one model)", lambda c: bayeserr.rank(c.ds, ["A"]), "at least two models")
case("gate(margin=-0.1)", lambda c: bayeserr.gate(c.ds, "A", "B", -0.1), "margin must be at least 0")
case("gate(margin='0.01')", lambda c: bayeserr.gate(c.ds, "A", "B", "0.01"), "margin must be a number")
case("gate(candidate unknown)", lambda c: bayeserr.gate(c.ds, "Z", "B", 0.01), "model 'Z' is not in the data")
case("gate(A against A)", lambda c: bayeserr.gate(c.ds, "A", "A", 0.01), "two different models")
case("gate(mode=x)", lambda c: bayeserr.gate(c.ds, "A", "B", 0.01, mode="x"), "mode must be one of")
case("gate(no candidates)", lambda c: bayeserr.gate(c.ds, [], "B", 0.01), "at least one candidate")
case("suite(no tasks)", lambda c: bayeserr.suite(c.ds), "at least two tasks")
case("over_tasks(no tasks)", lambda c: bayeserr.over_tasks(c.ds), "needs a task for each question")
case("over_tasks(level=2)", lambda c: bayeserr.over_tasks(c.ds, level=2), "level")
case("pass_hat_k(one run each)", lambda c: bayeserr.pass_hat_k(c.frame[c.frame["sample"] == 0]),
     "run at least twice")
case("pass_hat_k(k above the runs)", lambda c: bayeserr.pass_hat_k(c.ds, [1, 3]), "pass\\^3 needs 3 runs")
case("pass_hat_k(fractional)", lambda c: bayeserr.pass_hat_k(c.frame.assign(score=c.frame.score * 0.5)),
     "0/1 results per run")
case("pass_hat_k(k=0)", lambda c: bayeserr.pass_hat_k(c.ds, 0), "k must be a whole number")
case("pass_hat_k(k='x')", lambda c: bayeserr.pass_hat_k(c.ds, "x"), "k must be a whole number")
case("pass_hat_k(k=[None])", lambda c: bayeserr.pass_hat_k(c.ds, [None]), "k must be a whole number")
case("judge(no human labels)", lambda c: bayeserr.judge(c.ds), "no human labels in the data")
case("judge(level=2)", lambda c: bayeserr.judge(c.ds, level=2), "level")
case("arena_judge(unknown judge)", lambda c: bayeserr.arena_judge(
    c.votes_frame.assign(j="x", pair_id=range(len(c.votes_frame))), judge_col="j", human="x", judge="y"),
    "no votes have j=y")
case("arena_judge(no judge column)", lambda c: bayeserr.arena_judge(c.votes_frame, judge_col="j", human="x",
                                                                  judge="y"), "j")
case("sequential(model unknown)", lambda c: bayeserr.sequential(c.ds, "Z", "B"), "model 'Z' is not in the data")
case("sequential(A against A)", lambda c: bayeserr.sequential(c.ds, "A", "A"), "two different models")
case("sequential(one model, no rule)", lambda c: bayeserr.sequential(c.ds, "A"), "no gap to settle")
case("sequential(width=2)", lambda c: bayeserr.sequential(c.ds, "A", width=2), "--width must be a number in")
case("sequential(method=x)", lambda c: bayeserr.sequential(c.ds, "A", "B", method="x"), "method")
case("rank(top_k=0)", lambda c: bayeserr.rank(c.ds, top_k=0), "--top-k")
case("rank(adjust=bonf)", lambda c: bayeserr.rank(c.ds, adjust="bonf"), "'bonf' is not a known multiplicity")
case("ranking[unknown]", lambda c: bayeserr.rank(c.ds, bayes="off")["Z"], "'Z' is not among the results")

# ================================================================ results lookups
case("scores[unknown]", lambda c: c.scores["Z"], "'Z' is not among the results")
case("scores[99]", lambda c: c.scores[99], "no result 99.*3 results")
case("scores.get()", lambda c: c.scores.get(), "get takes a model name")
case("comps[unknown pair]", lambda c: c.comps["A", "Z"], r"\('A', 'Z'\) is not among the results")
case("comps.get(one name)", lambda c: c.comps.get("A"), "pair")
case("report.scores[unknown]", lambda c: c.report.scores["Q"], "'Q' is not among the results")

# ================================================================ report / compare_report
case("report(level=1)", lambda c: bayeserr.report(c.ds, level=1), r"level .*\(got 1\)")
case("report(pairs=vs=unknown)", lambda c: bayeserr.report(c.ds, pairs="vs=Z", bayes="off"),
     "--pairs vs=Z: 'Z' is not a model")
case("report(inputs=5)", lambda c: bayeserr.report(c.ds, inputs=5, bayes="off"), "inputs takes a list of paths")
case("report(inputs=missing file)", lambda c: bayeserr.report(c.ds, inputs=["no/such.csv"], bayes="off"),
     "no/such.csv: no such file")
case("report(command=5)", lambda c: bayeserr.report(c.ds, command=5, bayes="off"), "command takes text")
case("report(pass_k beyond the samples)", lambda c: bayeserr.report(c.ds, pass_k=[5], bayes="off"),
     "needs at least 5 samples")
case("report.render(pdf)", lambda c: c.report.render("pdf"), "'pdf' is not a known output format")
case("report(models=...) not an option", lambda c: bayeserr.report(c.ds, models=["A"]),
     "'models' is not an option")
case("compare_report(same model)", lambda c: bayeserr.compare_report(c.ds, "B", "B"), "two different models")
case("compare_report(unknown model)", lambda c: bayeserr.compare_report(c.ds, "A", "Z"), "model 'Z'")
case("compare_report.render(html)", lambda c: c.compare_report.render("html"),
     "'html' is not a known output format")

# ================================================================ planning (power.py / planning.py)
case("plan() with nothing", lambda c: bayeserr.plan(), "omega2")
case("plan(delta<0)", lambda c: bayeserr.plan(delta=-0.03, omega2=0.1), "delta must be a positive")
case("plan(omega2<0)", lambda c: bayeserr.plan(delta=0.03, omega2=-1), "omega2 is a variance")
case("plan(alpha=1.5)", lambda c: bayeserr.plan(delta=0.03, omega2=0.1, alpha=1.5), "alpha and power")
case("plan(icc=1.5)", lambda c: bayeserr.plan(delta=0.03, omega2=0.1, cluster_size=10, icc=1.5), "icc")
case("plan(n=0)", lambda c: bayeserr.plan(n=0, omega2=0.1), "n must be a positive")
case("plan(unpaired equal)", lambda c: bayeserr.plan(unpaired=(0.5, 0.5)), "two accuracies are equal")
case("plan(tie_p=1.5)", lambda c: bayeserr.plan(tie_p=1.5, n=100), "accuracy p")
case("plan(tie_p without n)", lambda c: bayeserr.plan(tie_p=0.5), "delta")
case("plan(pilot unknown model)", lambda c: bayeserr.plan(delta=0.03, pilot=(c.ds, "A", "Z")), "model 'Z'")
case("plan(delta as text)", lambda c: bayeserr.plan(delta="0.03", omega2=0.1), "delta")
case("plan(unpaired one value)", lambda c: bayeserr.plan(unpaired=(0.5,)), "unpaired")
case("plan(pilot=dataset)", lambda c: bayeserr.plan(delta=0.03, pilot=c.ds), "pilot")
case("plan(pilot same model)", lambda c: bayeserr.plan(delta=0.03, pilot=(c.ds, "A", "A")),
     "two different models")
case("plan(power=None)", lambda c: bayeserr.plan(delta=0.03, omega2=0.1, power=None), "power")
case("n_required(nan omega2)", lambda c: bayeserr.n_required(0.03, NAN), "omega2 is a variance")
case("n_required(alpha=0)", lambda c: bayeserr.n_required(0.03, 0.1, alpha=0), "alpha and power")
case("n_required(delta=None)", lambda c: bayeserr.n_required(None, 0.1), "delta")
case("mde(n<0)", lambda c: bayeserr.mde(-5, 0.1), "n must be a positive")
case("mde(k_a=0)", lambda c: bayeserr.mde(100, 0.1, k_a=0), "k_a")
case("mde(deff<1)", lambda c: bayeserr.mde(100, 0.1, deff=0.5), "design effect")
case("n_unpaired(p_b>1)", lambda c: bayeserr.n_unpaired(0.5, 1.2), "p_b is an accuracy")
case("n_unpaired(inf)", lambda c: bayeserr.n_unpaired(INF, 0.5), "p_a is an accuracy")
case("tie_zone(nan p)", lambda c: bayeserr.tie_zone(NAN, 100), "accuracy p")
case("tie_zone(level=1.5)", lambda c: bayeserr.tie_zone(0.5, 100, level=1.5), "level")
case("n_for_tie_zone(width=0)", lambda c: bayeserr.n_for_tie_zone(0, 0.5), "width must be positive")
case("n_for_tie_zone(level=0)", lambda c: bayeserr.n_for_tie_zone(0.03, 0.5, level=0), "level")
case("design_effect_icc(size=0)", lambda c: bayeserr.design_effect_icc(0, 0.1), "cluster size")
case("design_effect_icc(icc<0)", lambda c: bayeserr.design_effect_icc(10, -0.1), "negative estimate is noise")
case("design_effect_icc(size as text)", lambda c: bayeserr.design_effect_icc("10", 0.1), "cluster size")
case("from_pilot(unknown model)", lambda c: bayeserr.from_pilot(c.ds, "A", "Z"), "model 'Z'")
case("from_pilot(DataArray)", lambda c: bayeserr.from_pilot(c.ds["score"], "A", "B"), "bayeserr.load")
case("from_pilot(None)", lambda c: bayeserr.from_pilot(None, "A", "B"), "bayeserr.load")

# ================================================================ pass@k (passk.py)
case("pass_at_k(c > n)", lambda c: passk.pass_at_k([5], [6], 1), "correct counts must lie between")
case("pass_at_k(k=0)", lambda c: passk.pass_at_k([5], [2], 0), "whole k ≥ 1")
case("pass_at_k(k > n)", lambda c: passk.pass_at_k([5], [2], 10), "at least 10 samples")
case("pass_at_k(text counts)", lambda c: passk.pass_at_k(["a"], [1], 1), "counts must be whole numbers")
case("pass_at_k(k as text)", lambda c: passk.pass_at_k([5], [2], "2"), "whole k ≥ 1")
case("pass_at_k(shapes differ)", lambda c: passk.pass_at_k([5, 5], [1, 2, 3], 1), "same shape")
case("pass_k_dataset(None)", lambda c: passk.pass_k_dataset(None, 1), "got NoneType None.*bayeserr.load")
case("pass_k_dataset(k=0)", lambda c: passk.pass_k_dataset(c.ds, 0), "whole k ≥ 1")
case("counts(fractional scores)", lambda c: passk.counts(_poke(c.ds, 0.5)), "0/1 answers per sample")

# ================================================================ arena (arena.py)
case("load_votes(None)", lambda c: arena.load_votes(None), "got NoneType None")
case("load_votes(missing winner column)", lambda c: arena.load_votes(c.votes_frame.drop(columns="winner")),
     "no column 'winner'")
case("load_votes(bad winner)", lambda c: arena.load_votes(c.votes_frame.assign(winner="a")),
     "the winner is not one of")
case("load_votes(self-match)", lambda c: arena.load_votes(c.votes_frame.assign(model_b=c.votes_frame.model_a)),
     "matched against itself")
case("load_votes(no rows)", lambda c: arena.load_votes(c.votes_frame.iloc[:0]), "no votes to rate")
case("load_votes(where as text)", lambda c: arena.load_votes(c.votes_frame, where="lang=en"),
     "where takes a mapping")
case("load_votes(model_a_col=None)", lambda c: arena.load_votes(c.votes_frame, model_a_col=None),
     "model_a_col takes a column name")
case("load_votes(unknown where value)", lambda c: arena.load_votes(c.votes_frame, where={"winner": "x"}),
     "no votes have winner=x")
case("rate(None)", lambda c: arena.rate(None), "rate takes the votes from load_votes")
case("rate(bootstrap=0)", lambda c: arena.rate(c.votes, bootstrap=0), "bootstrap must be a whole number")
case("rate(level=2)", lambda c: arena.rate(c.votes, level=2), "level")
case("rate(by=prompt)", lambda c: arena.rate(c.votes, by="prompt"), "--bootstrap-by must be votes or cluster")
case("rate(by=cluster, no clusters)", lambda c: arena.rate(c.votes, by="cluster"), "needs a cluster column")
case("rate(DataFrame without winner)", lambda c: arena.rate(c.votes_frame.drop(columns="winner")),
     "no column 'winner'")

# ================================================================ simulation lab (lab/simulate.py)
case("Design(cluster_sizes=[0])", lambda c: lab.Design(cluster_sizes=(0, 3)), "cluster_sizes")
case("preset(unknown)", lambda c: lab.preset("swe-bench-huge"), "preset")
case("simulate(accuracy=1.5)", lambda c: lab.simulate(lab.Design(accuracy=1.5), 2), "accuracy")
case("simulate(reps=-1)", lambda c: lab.simulate(lab.Design(), -1), "reps")


# ================================================================ the test
@pytest.mark.parametrize("call, match", CASES)
def test_misuse_raises_input_error(ctx, call, match):
    with pytest.raises(InputError, match=match) as err:
        call(ctx)
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    assert len(message) >= 25 and "Traceback" not in message, message


def test_the_list_is_systematic():
    """At least the issue's 53 cases, and every public function is covered."""
    assert len(CASES) >= 53
    ids = " ".join(p.id for p in CASES)
    for name in bayeserr.__all__:
        if name not in ("__version__", "InputError"):
            assert name in ids, f"no misuse case for bayeserr.{name}"


# ================================================================ not misuse
def test_empty_results_give_empty_tables(ctx):
    """Empty results (a report of one model has no comparisons) are not misuse:
    ``to_frame`` / ``to_dict`` give empty tables with the usual columns."""
    one = bayeserr.report(ctx.ds.isel(model=[0]), bayes="off")
    assert len(one.comparisons) == 0
    frame = one.comparisons.to_frame()
    assert frame.empty and list(frame.columns) == list(ctx.comps.to_frame().columns)
    assert one.comparisons.to_dict() == []
    empty = type(ctx.scores)(())
    assert empty.to_frame().empty and list(empty.to_frame().columns) == list(ctx.scores.to_frame().columns)
    assert empty.to_frame().index.name == "model"


def test_a_dataframe_is_loaded_where_a_dataset_is_expected(ctx):
    """A results table in long form is accepted wherever a dataset is: the
    same numbers as loading it first."""
    direct = bayeserr.score(ctx.frame, bayes="off").to_frame()
    pd.testing.assert_frame_equal(direct, ctx.scores.to_frame())
    assert bayeserr.compare(ctx.frame, "A", "B", bayes="off").diff == ctx.comps["A", "B"].diff


def test_model_names_that_are_numbers(ctx):
    """Model labels are text; a number names the model that prints the same (as in load)."""
    ds = bayeserr.load(ctx.frame.assign(model=ctx.frame["model"].map({"A": 1, "B": 2, "C": 3})))
    assert bayeserr.compare(ds, 1, 2, bayes="off").a == "1"
    assert [s.model for s in bayeserr.score(ds, models=[3, "1"], bayes="off")] == ["3", "1"]


def test_integer_lookups_stay_sequences(ctx):
    """Out-of-range integer lookups are InputErrors that are still IndexErrors,
    so code that relies on the sequence protocol keeps working."""
    with pytest.raises(IndexError):
        ctx.scores[len(ctx.scores)]
    assert ctx.scores[-1].model == list(ctx.scores)[-1].model


def test_the_python_api_guide_first_example_runs_in_a_fresh_interpreter():
    """docs/guide/python-api.md: ``bayeserr.examples.example_path()`` right after ``import bayeserr``."""
    import subprocess
    import sys
    code = "import bayeserr; ds = bayeserr.load(bayeserr.examples.example_path()); print(len(ds.model))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"


def test_a_suggestion_prefers_the_name_holding_what_was_typed():
    """'Claude 4.5 Opus' means 'Claude 4.5 Opus medium (20251101)', not the closer-spelled
    'Claude 4 Opus (20250514)' (issue 43 item 10)."""
    from bayeserr.base.errors import suggest
    names = ["Claude 4 Opus (20250514)", "Claude 4.5 Opus medium (20251101)", "o3 (2025-04-16)"]
    assert suggest("Claude 4.5 Opus", names) == " Did you mean 'Claude 4.5 Opus medium (20251101)'?"
    assert suggest("o3", names) == " Did you mean 'o3 (2025-04-16)'?"
    assert suggest("Claude 4 Opuss", names) == " Did you mean 'Claude 4 Opus (20250514)'?"  # a typo: closest
