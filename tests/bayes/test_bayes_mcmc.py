"""PyMC models: NUTS agrees with the exact path; the three-level and latent
paired models recover the known truth of simulated data.  Small draws;
marked mcmc.  Tolerances: Monte Carlo SEs from ArviZ (``az.mcse``) for
NUTS-vs-exact, plus the posterior SD where a single simulated data set is
compared with the truth that generated it."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from bayeserr.models import hierarchical, paired_latent, three_level
from bayeserr.models.diagnostics import ESS_MIN, RHAT_MAX, diagnose, import_arviz
from scipy import special

from ..conftest import real_file

# The one warning these tests expect is the environment's (PyTensor built
# without BLAS); any other warning is reported.
pytestmark = [pytest.mark.mcmc,
              pytest.mark.filterwarnings("ignore:PyTensor could not link to a BLAS:UserWarning")]


def _assert_converged(idata, names):
    """The thresholds the report warns at (SPEC §5), all of them."""
    diag = diagnose(idata, names)
    assert diag["r_hat"] <= RHAT_MAX, diag
    assert min(diag["ess_bulk"], diag["ess_tail"]) >= ESS_MIN, diag
    # not an exact count (samplers differ across machines and versions): at most 1% of the draws
    draws = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
    assert diag["divergences"] <= 0.01 * draws, diag


def _agree(k, n, seed):
    """NUTS on the same model as the exact grid path: the posterior mean and
    the 2.5% / 97.5% quantiles of μ within 4 Monte Carlo SEs (az.mcse) of
    the exact ones (whose own error, ~1e-5, is far below)."""
    az = import_arviz()
    exact = hierarchical.fit_exact(k, n)
    idata = hierarchical.fit_mcmc(k, n, draws=1000, tune=700, chains=2, seed=seed)
    _assert_converged(idata, ["mu"])
    mu = idata.posterior["mu"]
    mcse_mean = float(az.mcse(idata, var_names=["mu"])["mu"])
    assert abs(float(mu.mean()) - exact.mean) < 4 * mcse_mean
    lo, hi = exact.interval()
    for prob, edge in ((0.025, lo), (0.975, hi)):
        q = float(np.quantile(mu.values, prob))
        mcse_q = float(az.mcse(idata, var_names=["mu"], method="quantile", prob=prob)["mu"])
        assert abs(q - edge) < 4 * mcse_q, (prob, q, edge, mcse_q)


def test_nuts_agrees_with_exact_on_simulated_clusters():
    rng = np.random.default_rng(0)
    n = rng.integers(5, 30, 15)
    k = rng.binomial(n, rng.beta(0.65 * 6, 0.35 * 6, 15))
    _agree(k, n, seed=1)


def test_nuts_agrees_with_exact_on_swebench_repositories():
    df = pd.read_csv(real_file("swebench_verified_bashonly_per_instance.csv.gz"))
    one = df[df["model"] == "o3 (2025-04-16)"]
    grouped = one.groupby("cluster_id")["score"].agg(["sum", "count"])
    _agree(grouped["sum"].to_numpy(), grouped["count"].to_numpy(), seed=2)


def _normal_mean(f, sd=1.0, nodes=80):
    """E[f(Z)], Z ~ N(0, sd²), by Gauss–Hermite quadrature."""
    t, w = np.polynomial.hermite_e.hermegauss(nodes)
    return float(np.sum(w * f(sd * t)) / np.sum(w))


def test_three_level_and_latent_paired_models():
    """60 questions in 12 clusters, K = 3; logit accuracies 1.0 − z (A) and
    −0.3 − z (B) with a shared difficulty z = cluster (sd 0.6) + question
    (sd 0.8) effect.  Known truth: a new cluster's mean accuracy is
    μ_A = E[expit(1 − Z)], Z ~ N(0, 1), and the population difference is
    Δ = E[expit(1 − Z) − expit(−0.3 − Z)] (quadrature).  Each posterior
    mean must lie within 3 posterior SDs (plus 4 MC SEs) of the truth."""
    az = import_arviz()
    rng = np.random.default_rng(3)
    n_q, n_c, K = 60, 12, 3
    codes = np.repeat(np.arange(n_c), n_q // n_c)
    difficulty = rng.normal(0, 0.6, n_c)[codes] + rng.normal(0, 0.8, n_q)
    p_a = special.expit(1.0 - difficulty)
    p_b = special.expit(-0.3 - difficulty)
    k_a, k_b = rng.binomial(K, p_a), rng.binomial(K, p_b)
    mu_true = _normal_mean(lambda z: special.expit(1.0 - z))
    delta_true = _normal_mean(lambda z: special.expit(1.0 - z) - special.expit(-0.3 - z))

    idata = three_level.fit_mcmc(k_a, np.full(n_q, K), codes, draws=300, tune=300, seed=4)
    assert idata.posterior["phi"].shape[-1] == n_c
    mu = idata.posterior["mu"].values
    mcse = float(az.mcse(idata, var_names=["mu"])["mu"])
    assert abs(mu.mean() - mu_true) < 3 * mu.std() + 4 * mcse, (mu.mean(), mu.std(), mu_true)

    pair = paired_latent.fit_mcmc(np.vstack([k_a, k_b]), np.full((2, n_q), K), codes,
                                  draws=300, tune=300, seed=5)
    delta = pair.posterior["delta"].values
    mcse = float(az.mcse(pair, var_names=["delta"])["delta"])
    assert abs(delta.mean() - delta_true) < 3 * delta.std() + 4 * mcse, (delta.mean(), delta.std(), delta_true)
    # the shared difficulty (true correlation 1; the LKJ(2) prior is centred
    # on 0) moves the posterior of the question-effect correlation upwards,
    # by more than its Monte Carlo error
    rho = pair.posterior["rho_question"].values
    assert rho.mean() > 4 * float(az.mcse(pair, var_names=["rho_question"])["rho_question"]), rho.mean()


def test_report_and_compare_with_bayes_mcmc(cli, tmp_path):
    """Clusters, one answer per question: the report's MCMC hierarchical
    column fits the same two-level model as the exact path, so its interval
    of μ must match fit_exact's within 4 Monte Carlo SEs of a quantile.  The
    report warns below 400 effective draws, so with no diagnostic warning the
    SE of the q-quantile is at most sqrt(q(1 − q)/400)/f(x_q), f the exact
    posterior density of μ there."""
    rng = np.random.default_rng(6)
    rows = [(m, f"q{i}", f"c{i // 5}", float(rng.random() < p)) for m, p in (("A", 0.7), ("B", 0.5))
            for i in range(60)]
    frame = pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"])
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    res = cli("report", path, "--bayes", "mcmc", "--draws", 400, "--format", "json")
    assert res.exit_code == 0
    rep = json.loads(res.stdout)  # progress output never reaches stdout
    assert not [w for w in rep["warnings"] if w["code"] == "mcmc_diagnostics"], rep["warnings"]
    for m in rep["models"]:
        grp = frame[frame["model"] == m["model"]].groupby("cluster_id")["score"].agg(["sum", "count"])
        exact = hierarchical.fit_exact(grp["sum"].to_numpy(), grp["count"].to_numpy())
        mu_grid = special.expit(exact.logit_mu)
        mass = exact.weights.sum(axis=1)
        density = mass / (np.gradient(exact.logit_mu) * mu_grid * (1 - mu_grid))  # per unit μ
        got = m.get("hierarchical_mu") or m["intervals"]["hierarchical_posterior"]
        for q, edge, value in zip((0.025, 0.975), exact.interval(0.95), got):
            f = float(np.interp(edge, mu_grid, density))
            assert abs(value - edge) < 4 * math.sqrt(q * (1 - q) / ESS_MIN) / f, (m["model"], q, value, edge)
    res = cli("compare", path, "A", "B", "--bayes", "mcmc", "--draws", 300)
    assert res.exit_code == 0 and "bivariate latent model" in res.stdout and "rho_question" in res.stdout


def test_a_report_samples_every_model_in_one_run(monkeypatch):
    """--bayes mcmc: all two-level models of a report share one PyMC graph
    and one sampler run (one compilation), and each model's slice is that
    model's own posterior (it matches a fit of that model alone, within 4
    Monte Carlo SEs of the exact quantiles: _agree's check)."""
    import pymc as pm

    import bayeserr
    from bayeserr.bayes import BayesSettings
    runs = []
    real_sample = pm.sample
    monkeypatch.setattr(pm, "sample", lambda *a, **kw: runs.append(1) or real_sample(*a, **kw))
    rng = np.random.default_rng(4)
    rows = [(m, f"q{i}", f"c{i % 8}", float(rng.random() < p)) for m, p in (("A", 0.8), ("B", 0.6), ("C", 0.3))
            for i in range(48)]
    ds = bayeserr.load(pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"]))
    rep = bayeserr.report(ds, bayes=BayesSettings(mode="mcmc", mcmc_draws=300, mcmc_tune=300))
    assert len(runs) == 1
    assert all(s.hierarchical_mu is not None for s in rep.scores)
    data = [(ds.sel(model=m)["score"].to_series().groupby(ds["cluster"].values).agg(["sum", "count"]))
            for m in ("A", "B", "C")]
    fits = hierarchical.fit_mcmc_many([(d["sum"].to_numpy(), d["count"].to_numpy()) for d in data],
                                      draws=1000, tune=700, seed=3)
    az = import_arviz()
    for d, idata in zip(data, fits):
        _assert_converged(idata, ["mu"])
        exact = hierarchical.fit_exact(d["sum"].to_numpy(), d["count"].to_numpy())
        mu = idata.posterior["mu"].values
        for prob, edge in zip((0.025, 0.975), exact.interval()):
            mcse_q = float(az.mcse(idata, var_names=["mu"], method="quantile", prob=prob)["mu"])
            assert abs(np.quantile(mu, prob) - edge) < 4 * mcse_q, (prob, edge)


def test_nuts_compiles_with_its_flags_and_restores_the_users(monkeypatch):
    """models/nuts.py: PyMC's sampler runs with ``-O2 -g0`` after the user's
    own PyTensor compiler flags, and the user's flags are back afterwards."""
    import pymc as pm
    import pytensor
    from bayeserr.models import nuts
    seen = {}
    monkeypatch.setattr(pm, "sample", lambda **kw: seen.update(flags=pytensor.config.gcc__cxxflags, kw=kw))
    with pytensor.config.change_flags(gcc__cxxflags="-DUSER_FLAG"):
        nuts.sample(draws=5, tune=5)
        assert pytensor.config.gcc__cxxflags == "-DUSER_FLAG"
    assert seen["flags"] == "-DUSER_FLAG -O2 -g0" and seen["kw"] == {"draws": 5, "tune": 5}


def test_paired_latent_beta_conditional_is_exact():
    """The paired model samples α = β + (mean effects) and draws β afterwards from its
    conditional given α (docs/methods.md §5.6): (α, drawn β) must have the joint law of
    (β + e, β), β ~ N(0, 1.5² I), e ~ N(0, Σ_q/N + Σ_c/C), to Monte Carlo error."""
    rng = np.random.default_rng(1)
    n, n_q, n_c = 200_000, 500, 12
    sd_q, rho_q, sd_c, rho_c = np.array([4.0, 3.5]), 0.97, np.array([1.1, 0.9]), 0.56

    def cov(sd, rho):
        return np.array([[sd[0] ** 2, rho * sd[0] * sd[1]], [rho * sd[0] * sd[1], sd[1] ** 2]])

    beta = rng.normal(0, paired_latent.BETA_SD, (n, 2))
    alpha = beta + rng.multivariate_normal([0, 0], cov(sd_q, rho_q) / n_q + cov(sd_c, rho_c) / n_c, n)
    draws = {"sd_question": np.tile(sd_q, (1, n, 1)), "rho_question": np.full((1, n), rho_q),
             "sd_cluster": np.tile(sd_c, (1, n, 1)), "rho_cluster": np.full((1, n), rho_c),
             "alpha_a": alpha[None, :, 0], "alpha_b": alpha[None, :, 1]}
    post = {name: type("Values", (), {"values": v})() for name, v in draws.items()}
    drawn = paired_latent.beta_draws(post, n_q, n_c, rng)[0]
    want, got = np.cov(np.c_[alpha, beta].T), np.cov(np.c_[alpha, drawn].T)
    assert np.abs(got - want).max() < 0.05, (want, got)  # entries ~2-3; MC sd ~0.01


@pytest.mark.parametrize("clustered", [True, False])
def test_paired_latent_population_difference_is_the_normal_integral(clustered):
    """Δ = E[expit(β_A + u_A + v_A)] − E[expit(β_B + u_B + v_B)] for each draw: against adaptive
    quadrature of each model's one-dimensional normal integral (the new cluster's and question's
    effects add to N(0, σ_q² + σ_c²)), latent sds from 0.05 to 15; before, 512 random points
    moved P(A > B) between seeds."""
    from scipy import integrate, stats
    rng = np.random.default_rng(3)
    draws = 6
    sd_q, sd_c = rng.uniform(0.05, 10, (1, draws, 2)), rng.uniform(0.05, 10, (1, draws, 2))
    beta = rng.uniform(-6, 6, (1, draws, 2))
    values = {"sd_question": sd_q, "sd_cluster": sd_c, "beta": beta}
    post = {name: type("Values", (), {"values": v})() for name, v in values.items()}
    idata = type("Idata", (), {"posterior": post})()
    got = paired_latent.population_difference(idata, clustered)[0]

    def mean_rate(mu, s):
        f = lambda t: special.expit(mu + s * t) * stats.norm.pdf(t)  # noqa: E731
        return sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-12, limit=400)[0]
                   for a, b in ((-40, -mu / s), (-mu / s, 40)))
    total = np.sqrt(sd_q[0] ** 2 + (sd_c[0] ** 2 if clustered else 0))
    want = [mean_rate(beta[0, d, 0], total[d, 0]) - mean_rate(beta[0, d, 1], total[d, 1]) for d in range(draws)]
    np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize("clustered", [True, False])
def test_paired_latent_scaled_intercepts_keep_the_prior_of_alpha(clustered):
    """NUTS samples α̃_j = α_j / c_j, c_j = sqrt(1 + π(σ_q,j² + σ_c,j²)/8) (docs/methods.md
    §5.6): at fixed sds and correlations the model's log density of (α̃_A, α̃_B) must be
    that of α ~ N2(0, BETA_SD² I + Σ_q/N + Σ_c/C) at α = (c_A α̃_A, c_B α̃_B) plus the
    Jacobian log c_A + log c_B, exactly (a wrong scale, conditional mean or Jacobian is
    off by far more than 1e-8)."""
    from scipy import stats
    n_q, n_c = 6, 3
    codes = np.arange(n_q) % n_c if clustered else None
    model = paired_latent.build_pymc_model(np.ones((2, n_q)), np.full((2, n_q), 2), codes)
    logp = model.compile_logp(vars=[model["alpha_a_scaled"], model["alpha_b_scaled"]])
    rng = np.random.default_rng(5)
    for sd_q, rho_q, sd_c, rho_c in [((4.0, 0.3), 0.9, (1.1, 2.0), -0.5), ((0.2, 2.5), -0.7, (0.05, 3.0), 0.99)]:
        point = model.initial_point()
        point.update(sd_question_log__=np.log(sd_q), r_question_logodds__=special.logit((rho_q + 1) / 2))
        var = np.square(sd_q) + (np.square(sd_c) if clustered else 0)
        sd_cov = [(np.asarray(sd_q), rho_q, n_q)]
        if clustered:
            point.update(sd_cluster_log__=np.log(sd_c), r_cluster_logodds__=special.logit((rho_c + 1) / 2))
            sd_cov.append((np.asarray(sd_c), rho_c, n_c))
        cov = paired_latent.BETA_SD**2 * np.eye(2) + sum(
            np.outer(sd, sd) * np.array([[1, rho], [rho, 1]]) / size for sd, rho, size in sd_cov)
        c = np.sqrt(1 + np.pi / 8 * var)
        np.testing.assert_allclose(paired_latent.probit_scale(var), c)
        for scaled in rng.normal(0, 2, (5, 2)):
            point.update(alpha_a_scaled=scaled[0], alpha_b_scaled=scaled[1])
            want = stats.multivariate_normal([0, 0], cov).logpdf(c * scaled) + np.log(c).sum()
            assert abs(logp(point) - want) < 1e-8, (logp(point), want)


@pytest.mark.parametrize("divergences, target", [(0, 0.9), (3, 0.99)])
def test_paired_latent_fit_that_fails_its_diagnostics_is_rerun_once(monkeypatch, divergences, target):
    """compare's paired model: a first run that fails §5.6's thresholds is run once more with
    twice the draws (at target acceptance 0.99 only if it diverged), the report's diagnostics
    are the second run's and a ``mcmc_rerun`` warning says so; a run that passes is not
    repeated (docs/methods.md §5.6).  The sampler is replaced: no MCMC here."""
    from bayeserr.bayes import pairs
    from bayeserr.bayes.settings import BayesSettings
    from bayeserr.models import diagnostics
    runs = []
    monkeypatch.setattr(paired_latent, "fit_mcmc", lambda k, n, codes, **kw: runs.append(kw) or len(runs))
    bad = {"r_hat": 1.003, "ess_bulk": 283.0, "ess_tail": 445.0, "divergences": divergences,
           "sampler": {"chains": 2, "draws": 1200, "tune": 600, "target_accept": 0.9}}
    good = {**bad, "ess_bulk": 702.0, "ess_tail": 1118.0, "divergences": 0}
    monkeypatch.setattr(diagnostics, "diagnose", lambda idata, names: bad if idata == 1 else good)
    idata, diag, notes = pairs._latent_fit(None, None, None, BayesSettings(mode="mcmc"), ["beta"])
    assert [kw["draws"] for kw in runs] == [1200, 2400] and runs[1]["target_accept"] == target
    assert runs[1]["seed"] == runs[0]["seed"] and runs[1]["tune"] == runs[0]["tune"] == 600
    assert idata == 2 and diag is good
    (note,) = notes
    assert note.code == "mcmc_rerun" and "ESS 283 < 400" in note.message and f"{target:g}" in note.message
    # one level of parentheses, thousands separated, a full stop (the warnings join sentences)
    assert "(ESS 283 < 400, too few effective draws" in note.message and "2,400 draws" in note.message
    assert note.message.endswith(".")
    runs.clear()
    monkeypatch.setattr(diagnostics, "diagnose", lambda idata, names: good)
    assert pairs._latent_fit(None, None, None, BayesSettings(mode="mcmc"), ["beta"]) == (1, good, ())
    assert len(runs) == 1
    # sampler options of the user's own are run as given: no re-run, the diagnostics warn
    monkeypatch.setattr(diagnostics, "diagnose", lambda idata, names: bad)
    for own in ({"mcmc_draws": 300}, {"mcmc_tune": 200}, {"chains": 4}, {"target_accept": 0.95}):
        runs.clear()
        assert pairs._latent_fit(None, None, None, BayesSettings(mode="mcmc", **own), ["beta"]) == (1, bad, ())
        assert len(runs) == 1, own
    assert BayesSettings(mode="mcmc", mcmc_draws=1200).default_sampler  # the default, named
