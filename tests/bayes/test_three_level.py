"""The three-level model (cluster → question → answer, ``docs/methods.md`` §5.2):
its deterministic grid posterior against an independent Monte Carlo brute
force and against NUTS of the same non-centred model, the report's use of it,
and the sampler options (``--chains``, ``--tune``, ``--draws``,
``--target-accept``).  NUTS tests are marked mcmc and keep draws small."""

import json

import numpy as np
import pandas as pd
import pytest
from bayeserr.models import three_level
from bayeserr.models.diagnostics import ESS_MIN, RHAT_MAX, diagnose, import_arviz
from scipy import special, stats

import bayeserr
from bayeserr.bayes import BayesSettings

from ..conftest import real_file

MCMC = [pytest.mark.mcmc,
        pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")]
MATHARENA = "matharena_aime2025_II_per_run.csv.gz"
#: MathArena's cluster_id is the problem itself; for an unequal clustering the
#: 15 problems (in AIME order, roughly by difficulty) are grouped 1–2, 3–4, 5–8, 9–10, 11–15
PROBLEM_GROUP_STARTS = [3, 5, 9, 11]


def _matharena(model: str):
    """Right answers and answers (4 runs) per problem, and each problem's group."""
    df = pd.read_csv(real_file(MATHARENA))
    grp = df[df["model"] == model].groupby("question_id")["score"].agg(["sum", "count"]).sort_index()
    codes = np.searchsorted(PROBLEM_GROUP_STARTS, grp.index.to_numpy(), side="right")
    return grp["sum"].to_numpy(), grp["count"].to_numpy(), codes


def example40(seed: int = 2):
    """40 questions with K in 1..8 in 5 unequal clusters (3, 5, 7, 10, 15
    questions); logit accuracy 0.6 + cluster (SD 0.3) + question (SD 1) effects.
    The centred three-level model had 12 divergent transitions here (seed 2)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(5), [3, 5, 7, 10, 15])
    K = rng.integers(1, 9, 40)
    p = special.expit(0.6 + rng.normal(0, 0.3, 5)[codes] + rng.normal(0, 1.0, 40))
    return rng.binomial(K, p), K, codes


# ------------------------------------------------------------------ grid vs brute force
def _prior_importance_sample(k, n, codes, draws, seed):
    """Brute force: draws of (η, τ, κ_q, z) from the prior, weighted by the
    likelihood (scipy's Beta–Binomial); returns weights, μ and W per draw."""
    rng = np.random.default_rng(seed)
    codes = np.unique(codes, return_inverse=True)[1]
    m = np.bincount(codes).astype(float)
    eta, tau = rng.normal(0, 1.5, draws), np.abs(rng.normal(0, 1, draws))
    kappa = np.exp(rng.normal(2.5, 1.5, draws))
    phi = special.expit(eta[:, None] + tau[:, None] * rng.normal(0, 1, (draws, m.size)))
    p = phi[:, codes]
    loglik = stats.betabinom.logpmf(k, n, p * kappa[:, None], (1 - p) * kappa[:, None]).sum(axis=1)
    w = np.exp(loglik - loglik.max())
    t, tw = np.polynomial.hermite_e.hermegauss(80)
    mu = special.expit(eta[:, None] + tau[:, None] * t) @ (tw / tw.sum())
    return w / w.sum(), mu, phi @ m / m.sum()


@pytest.mark.slow  # 200,000 importance draws
def test_grid_matches_brute_force_on_a_tiny_example():
    """3 clusters of 1, 2 and 3 questions, K = 2..4.  (1) Against importance
    sampling from the prior (10⁶ draws, independent code): at the grid's
    2.5%, 50% and 97.5% quantiles of μ and of W the weighted CDF is within
    4 SEs (√(q(1 − q)/ESS)) of q, and the means within 4 SEs.  (2) The
    default grid against one four to eight times finer: within 1e-3."""
    k, n = np.array([2, 1, 3, 0, 2, 4]), np.array([2, 3, 4, 2, 3, 4])
    codes = np.array([0, 1, 1, 2, 2, 2])
    post = three_level.fit_exact(k, n, codes)
    w, mu, W = _prior_importance_sample(k, n, codes, 1_000_000, seed=7)
    ess = 1 / np.sum(w * w)
    assert ess > 25_000
    q = np.array([0.025, 0.5, 0.975])
    for draws, grid_q, grid_mean in ((mu, post.quantiles(q), post.mean),
                                     (W, post.weighted_mean_quantiles(q), post.weighted_mean_moments()[0])):
        cdf = np.array([w[draws <= x].sum() for x in grid_q])
        assert np.all(np.abs(cdf - q) < 4 * np.sqrt(q * (1 - q) / ess)), (cdf, q)
        sd = np.sqrt(w @ (draws - w @ draws) ** 2)
        assert abs(w @ draws - grid_mean) < 4 * sd / np.sqrt(ess)
    finer = three_level.fit_exact(k, n, codes, fine=(81, 49, 57))
    np.testing.assert_allclose(post.quantiles(q), finer.quantiles(q), atol=1e-3)
    np.testing.assert_allclose(post.weighted_mean_quantiles(q), finer.weighted_mean_quantiles(q), atol=1e-3)


def test_grid_posterior_basics():
    """Deterministic; the order of questions does not matter; clusters given by
    any labels; unanswered questions ignored; W's interval lies inside [0, 1]."""
    k, n, codes = example40()
    a = three_level.fit_exact(k, n, codes)
    perm = np.random.default_rng(0).permutation(40)
    labels = np.array(list("abcde"))[codes]
    b = three_level.fit_exact(np.append(k[perm], 0), np.append(n[perm], 0), np.append(labels[perm], "z"))
    np.testing.assert_allclose(a.interval(), b.interval(), rtol=1e-12)
    np.testing.assert_allclose(a.weighted_mean_interval(), b.weighted_mean_interval(), rtol=1e-12)
    lo, hi = a.weighted_mean_interval()
    assert 0 < lo < a.weighted_mean_moments()[0] < hi < 1
    assert a.n_clusters == 5 and a.n_questions == 40 and a.n_answers == n.sum()
    d = a.sample(2000, seed=1)
    assert set(d) >= {"mu", "eta", "tau", "kappa_question"} and np.all(d["tau"] >= 0)


def test_windowed_likelihood_drops_only_negligible_points():
    """Two sharply separated clusters (100 answers per question): the x grid
    is evaluated only within each cluster's region above max − X_TRIM; every
    point left out is below that in the full evaluation, every point kept is
    exact, and each region is much narrower than the grid."""
    rng = np.random.default_rng(4)
    codes = np.repeat([0, 1], [60, 90])
    n = np.full(150, 100)
    k = rng.binomial(n, np.where(codes == 0, 0.95, 0.3))
    data = three_level._prepare(k, n, codes)
    x = np.arange(-6, 6, 0.01)
    lk = np.array([0.5, 2.5, 6.0])
    xs, ll = three_level._windowed_loglik(data, x, lk)
    a = int(np.searchsorted(x, xs[0]))
    full = three_level._loglik(data, x, lk)
    part = full[:, :, a:a + xs.size]
    kept = np.isfinite(ll)
    np.testing.assert_allclose(ll[kept], part[kept], rtol=1e-12)
    top = full.max(axis=2, keepdims=True)
    assert np.all(np.broadcast_to(part - top, ll.shape)[~kept] < -three_level.X_TRIM)
    outside = np.ones(x.size, bool)
    outside[a:a + xs.size] = False
    assert np.all(full[:, :, outside] - top < -three_level.X_TRIM)
    assert kept.any(axis=1).sum(axis=1).max() < x.size / 3  # per cluster, a fraction of the grid


def test_fit_many_matches_one_at_a_time_and_restores_blas_threads():
    """Data sets fitted side by side on threads give exactly the one-at-a-time
    posteriors, in order, and BLAS's thread count is what it was before."""
    from threadpoolctl import threadpool_info
    sets = [example40(seed) for seed in (2, 3, 5)]
    before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    posts = three_level.fit_many(sets, workers=2, quantiles=(0.025, 0.975))
    assert [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"] == before
    for post, (k, n, codes) in zip(posts, sets):
        one = three_level.fit_exact(k, n, codes, quantiles=(0.025, 0.975))
        np.testing.assert_array_equal(post.interval(), one.interval())
        np.testing.assert_array_equal(post.weighted_mean_interval(), one.weighted_mean_interval())
    w, mu = three_level.intervals(sets)
    np.testing.assert_array_equal(mu[1], posts[1].interval())


# ------------------------------------------------------------------ grid vs NUTS
def _mcse(idata, name, prob=None):
    az = import_arviz()
    kw = {} if prob is None else dict(method="quantile", prob=prob)
    return float(az.mcse(idata, var_names=[name], **kw)[name])


@pytest.mark.parametrize("model", ["DeepSeek-R1-Distill-70B", "gemini-2.0-flash"])
@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")
def test_grid_matches_nuts_on_matharena(model):
    """MathArena AIME 2025 II, 4 runs per problem, problems in 5 unequal groups:
    the grid's mean and 2.5% / 97.5% quantiles of μ and of W = Σ m_c φ_c / Σ m_c
    within 4 ArviZ MCSEs of NUTS on the same (non-centred) model, which
    passes every diagnostic threshold."""
    k, n, codes = _matharena(model)
    post = three_level.fit_exact(k, n, codes)
    idata = three_level.fit_mcmc(k, n, codes, draws=1000, tune=600, seed=3)
    diag = diagnose(idata, ["mu", "phi"])
    assert diag["divergences"] <= 3 and diag["r_hat"] <= RHAT_MAX, diag  # few, not exactly none
    assert min(diag["ess_bulk"], diag["ess_tail"]) >= ESS_MIN, diag
    m = np.bincount(codes).astype(float)
    from bayeserr.models import compat  # a DataTree (ArviZ 1) takes no (dims, values) tuple
    compat.add_variable(idata, "W", ("chain", "draw"), idata.posterior["phi"].values @ m / m.sum())
    for name, grid_q, grid_mean in (("mu", post.interval(), post.mean),
                                    ("W", post.weighted_mean_interval(), post.weighted_mean_moments()[0])):
        x = idata.posterior[name].values
        assert abs(x.mean() - grid_mean) < 4 * _mcse(idata, name), (name, x.mean(), grid_mean)
        for prob, edge in zip((0.025, 0.975), grid_q):
            assert abs(np.quantile(x, prob) - edge) < 4 * _mcse(idata, name, prob), (name, prob, edge)


@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")
def test_non_centred_nuts_has_no_divergences():
    """40 questions, K in 1..8, 5 unequal clusters: the centred model had 12
    divergent transitions (47 on the issue's example); the non-centred one,
    with the default sampler settings, none."""
    k, n, codes = example40()
    kw = BayesSettings(mode="mcmc", mcmc_draws=1000, mcmc_tune=1000, seed=1).sampler()
    idata = three_level.fit_mcmc(k, n, codes, **kw)
    diag = diagnose(idata, ["mu", "phi"])
    # not an exact count: samplers differ across machines and versions (one divergence was seen
    # on another machine); the centred model had 12 on this example, the non-centred at most a few
    assert diag["divergences"] <= 3, diag
    assert diag["r_hat"] <= RHAT_MAX, diag
    assert diag["sampler"] == {"chains": 2, "draws": 1000, "tune": 1000, "target_accept": 0.95}


# ------------------------------------------------------------------ reports and options
def test_report_three_level_column_holds_the_score_on_matharena():
    """MathArena with its own clusters (one problem each) and 4 runs: the
    report fits the three-level model (no sampler) for every model, and the
    column for the score's estimand contains the score."""
    ds = bayeserr.load(real_file(MATHARENA), sample_col="run")
    rep = bayeserr.report(ds)
    for s in rep.scores:
        assert isinstance(rep.posteriors[s.model]["hierarchical"], three_level.ThreeLevelPosterior)
        lo, hi = s.intervals["hierarchical_posterior"]
        assert lo < s.mean < hi, (s.model, s.mean, lo, hi)
        mu_lo, mu_hi = s.hierarchical_mu
        assert 0 < mu_lo < mu_hi < 1


def test_hierarchical_misfit_is_flagged_on_evalperf():
    """EvalPerf (pass rates of 50 samples per task, 2 clusters): o1-mini's task
    accuracies are U-shaped (50 of 89 MBPP tasks all right, 6 all wrong), the
    Beta model fits them poorly and its posterior misses the score: the report
    says so for that model and no other."""
    sc = bayeserr.score(bayeserr.load(real_file("evalperf_per_task.csv.gz")))
    from bayeserr.registries.caveats import for_model
    flagged = {s.model for s in sc for c in for_model(s) if c.code == "hierarchical_misfit"}
    missed = {s.model for s in sc if s.intervals["hierarchical_posterior"] is not None
              and not s.intervals["hierarchical_posterior"][0] <= s.mean <= s.intervals["hierarchical_posterior"][1]}
    assert flagged == missed == {"o1-mini-2024-09-12"}
    from bayeserr.registries.methods import recommended
    o1 = next(s for s in sc if s.model == "o1-mini-2024-09-12")
    assert recommended(o1) == "cluster_effect_posterior"  # not the interval the warning distrusts
    assert "hierarchical_posterior" not in {recommended(s) for s in sc}  # 2 clusters: population estimand


def test_sampler_options_are_validated(cli):
    path = real_file(MATHARENA)
    for option, value in (("--target-accept", 1.0), ("--target-accept", 0), ("--chains", 0),
                          ("--tune", -1), ("--draws", 0)):
        res = cli("report", path, "--bayes", "mcmc", option, value)
        assert res.exit_code == 2 and option in res.output, (option, value, res.output)
    with pytest.raises(bayeserr.InputError, match="--target-accept"):
        BayesSettings(mode="mcmc", target_accept=1.5)


@pytest.mark.mcmc
@pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")
def test_sampler_options_reach_the_sampler(cli, tmp_path):
    """``--chains/--tune/--draws/--target-accept`` reach NUTS (the fit's sizes,
    tuning steps and attrs), and the diagnostic caveat names the option to
    change with its value."""
    rng = np.random.default_rng(5)
    rows = [("A", f"q{i}", f"c{i % 3}", j, int(rng.random() < 0.6)) for i in range(12) for j in range(3)]
    frame = pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "sample", "score"])
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    settings = BayesSettings(mode="mcmc", chains=1, mcmc_tune=60, mcmc_draws=40, target_accept=0.85)
    rep = bayeserr.report(bayeserr.load(path), bayes=settings)
    idata = rep.posteriors["A"]["hierarchical"]
    assert idata.posterior.sizes["chain"] == 1 and idata.posterior.sizes["draw"] == 40
    assert idata.sample_stats.attrs["tuning_steps"] == 60 and idata.attrs["target_accept"] == 0.85
    assert "phi" in idata.posterior and "eta" in idata.posterior  # the three-level model
    res = cli("report", path, "--bayes", "mcmc", "--chains", 1, "--tune", 60, "--draws", 40,
              "--target-accept", 0.85, "--format", "json")
    assert res.exit_code == 0, res.output
    notes = [w["message"] for w in json.loads(res.stdout)["warnings"] if w["code"] == "mcmc_diagnostics"]
    assert any("--draws (now 40)" in m and "--chains (now 1)" in m for m in notes), notes


def test_bayes_mcmc_without_a_sampler_says_so(cli, tmp_path):
    """The bundled example reduced to 0/1, K = 1, no clusters: every Bayesian
    column is a closed form, and ``--bayes mcmc`` says that nothing was sampled."""
    from bayeserr.examples import example_path
    df = pd.read_csv(example_path())
    path = tmp_path / "k1.csv"
    df[df["sample"] == 0].drop(columns=["sample", "cluster_id"]).to_csv(path, index=False)
    res = cli("report", path, "--bayes", "mcmc", "--format", "json")
    assert res.exit_code == 0, res.output
    codes = [w["code"] for w in json.loads(res.stdout)["warnings"]]
    assert codes.count("mcmc_not_needed") == 1
    md = cli("report", path, "--bayes", "mcmc").stdout
    assert "no model needed a sampler" in md and "by PyMC NUTS" not in md


# ------------------------------------------------------------------ what a report computes
def _example():
    from importlib.resources import files
    return str(files("bayeserr.examples") / "internal_eval.csv.gz")


def _hier(rep):
    return {m["model"]: (m["intervals"]["hierarchical_posterior"], m["hierarchical_mu"]) for m in rep["models"]}


def _without(rep, drop=("hierarchical_posterior", "hierarchical_mu", "provenance", "warnings")):
    """The report with the three-level posterior's values, the provenance and the warnings left out."""
    if isinstance(rep, dict):
        return {k: _without(v, drop) for k, v in rep.items() if k not in drop}
    if isinstance(rep, list):
        return [_without(v, drop) for v in rep]
    return rep


def test_fast_report_leaves_out_the_three_level_posterior_it_does_not_show(cli_json):
    """The bundled example (clusters, 3 answers per question: the three-level model for every
    model): ``report --bayes fast`` in JSON leaves the posterior out and says so; ``--bayes full``
    computes it, equal to the API's ``score`` (which computes everything), and every other
    number of the two reports is the same."""
    fast, full = cli_json("report", _example()), cli_json("report", _example(), "--bayes", "full")
    assert set(_hier(fast).values()) == {(None, None)}
    notes = [w for w in fast["warnings"] if w["code"] == "not_computed"]
    assert len(notes) == 1 and "of 4 models" in notes[0]["message"] and "--bayes full" in notes[0]["message"]
    assert not any(w["code"] == "not_computed" for w in full["warnings"])
    api = {s.model: s for s in bayeserr.score(bayeserr.load(_example()))}
    for model, (iv, mu) in _hier(full).items():
        assert np.allclose(iv, api[model].intervals["hierarchical_posterior"], rtol=1e-12, atol=0)
        assert np.allclose(mu, api[model].hierarchical_mu, rtol=1e-12, atol=0)
        assert iv[0] < api[model].mean < iv[1]
    assert _without(fast) == _without(full)
    kept = [w for w in fast["warnings"] if w["code"] != "not_computed"]
    assert kept == [w for w in full["warnings"] if w["code"] != "hierarchical_misfit"]


@pytest.mark.parametrize("shows", [("--methods", "all"), ("--methods", "clt,hierarchical_posterior"),
                                   ("--format", "html"), ("--save-posterior", "{tmp}/post")])
def test_fast_report_computes_the_three_level_posterior_where_it_shows_it(cli, tmp_path, shows):
    """A column (``--methods``), the HTML posterior figure and ``--save-posterior`` show the
    three-level posterior, so ``--bayes fast`` computes it there: no ``not_computed`` warning,
    and the hierarchical interval in the Markdown column or the saved folder."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in shows]
    out = tmp_path / ("r.html" if "html" in args else "r.md")
    res = cli("report", _example(), *args, "-o", out)
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "not_computed" not in text and "was not computed" not in text
    if args[0] == "--methods":
        assert "Hierarchical posterior" in text
    if args[0] == "--save-posterior":
        index = json.loads((tmp_path / "post" / "index.json").read_text())
        assert "hierarchical" in json.dumps(index)


def test_fast_markdown_report_names_what_it_left_out(cli, tmp_path):
    out = tmp_path / "r.md"
    assert cli("report", _example(), "-o", out).exit_code == 0
    text = " ".join(out.read_text().split())
    assert "[not_computed] the three-level hierarchical posterior" in text
    assert "(left out where it has three levels and no table shows it: warning not_computed; " \
           "--bayes full computes it)" in text
    assert "Bayesian intervals (--bayes fast; in the JSON," in text


def test_a_model_in_one_cluster_keeps_the_three_level_posterior_the_table_may_show(cli_json, tmp_path):
    """A model whose questions lie in one cluster (under 100 questions, 3 runs each): the interval
    rule may show its hierarchical posterior, so ``--bayes fast`` computes it there, and its
    recommended interval is ``--bayes full``'s; the models in several clusters are left out."""
    rng = np.random.default_rng(4)
    rows = []
    for m, p in (("a", 0.7), ("b", 0.6), ("solo", 0.65)):
        for i in range(120):
            if m == "solo" and i % 4:
                continue  # 30 questions, all in cluster c0
            for run in range(3):
                rows.append({"model": m, "question_id": f"q{i}", "cluster_id": f"c{i % 4}", "run": run,
                             "score": float(rng.random() < p)})
    path = tmp_path / "one_cluster.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    args = ("report", path, "--sample-col", "run", "--on-unpaired", "drop")
    fast, full = cli_json(*args), cli_json(*args, "--bayes", "full")
    hier = _hier(fast)
    assert hier["solo"][0] is not None and hier["a"] == hier["b"] == (None, None)
    (note,) = [w["message"] for w in fast["warnings"] if w["code"] == "not_computed"]
    assert "of 2 models" in note
    rec = {m["model"]: (m["recommended"], m["intervals"][m["recommended"]]) for m in fast["models"]}
    assert rec == {m["model"]: (m["recommended"], m["intervals"][m["recommended"]]) for m in full["models"]}
    assert rec["solo"][0] == "hierarchical_posterior"


@pytest.mark.parametrize("clustered", [False, True])
def test_compare_bayes_mcmc_on_fractional_scores_says_nothing_was_sampled(cli, tmp_path, clustered):
    """Fractional scores: the bivariate latent model (0/1 answers) does not apply, so
    ``compare --bayes mcmc`` gives the closed-form pair posterior of ``--bayes fast`` and
    says so in a warning (before, only ``posterior.method`` named it); the posterior is
    that of ``--bayes fast``, number for number."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"model": np.repeat(["A", "B"], 40), "question_id": np.tile([f"q{i}" for i in range(40)], 2),
                       "cluster_id": np.tile([f"c{i % 5}" for i in range(40)], 2),
                       "score": np.round(rng.uniform(size=80), 2)})
    path = tmp_path / "frac.csv"
    df.drop(columns=[] if clustered else ["cluster_id"]).to_csv(path, index=False)
    runs = {mode: cli("compare", path, "A", "B", "--bayes", mode, "--format", "json") for mode in ("mcmc", "fast")}
    assert all(r.exit_code == 0 for r in runs.values()), runs["mcmc"].output
    mcmc, fast = (json.loads(runs[m].stdout) for m in ("mcmc", "fast"))
    notes = [w["message"] for w in mcmc["warnings"] if w["code"] == "mcmc_not_needed"]
    method = mcmc["posterior"]["method"].split(";")[0]
    assert len(notes) == 1 and "not all 0 or 1" in notes[0] and method in notes[0], mcmc["warnings"]
    assert ("cluster random effect" in method) == clustered
    assert mcmc["posterior"] == fast["posterior"]
    assert not [w for w in fast["warnings"] if w["code"] == "mcmc_not_needed"]
