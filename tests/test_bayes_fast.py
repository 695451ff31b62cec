"""Bayesian models without a sampler: conjugate, exact hierarchical, Dirichlet
paired, Bayesian bootstrap; calibration by seeded simulation."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import bayeserr
from bayeserr.bayes import BayesSettings
from bayeserr.models import bayesian_bootstrap as bb
from bayeserr.models import beta_binomial, hierarchical, paired_dirichlet

from .conftest import binary_frame, real_file


# ------------------------------------------------------------- conjugate
def test_conjugate_matches_scipy_beta_quantiles():
    for k, n, prior, ab in [(3, 10, "uniform", (1, 1)), (7, 7, "jeffreys", (0.5, 0.5)), (5, 40, (2, 3), (2, 3))]:
        post = beta_binomial.beta_posterior(k, n, prior)
        ref = stats.beta(ab[0] + k, ab[1] + n - k)
        np.testing.assert_allclose(post.interval(0.9), ref.ppf([0.05, 0.95]), rtol=1e-12)
        assert post.mean == pytest.approx(ref.mean()) and post.sd == pytest.approx(ref.std())
        lo, hi = post.hdi(0.9)
        assert ref.cdf(hi) - ref.cdf(lo) == pytest.approx(0.9, abs=1e-6)
        assert hi - lo <= np.diff(post.interval(0.9))[0] + 1e-9


def test_langchain_uniform_prior_reference_values():
    rep = bayeserr.report(bayeserr.load(real_file("langchain_tool_use_per_question.csv.gz")))
    np.testing.assert_allclose(rep.scores["claude-2.1"].intervals["beta_posterior"], [0.8389, 0.9988], atol=1e-4)
    np.testing.assert_allclose(rep.scores["mixtral-8x7b-instruct"].intervals["beta_posterior"],
                               [0.3844, 0.7818], atol=1e-4)


def test_beta_posterior_calibrated_at_n_10():
    """Truth from the prior (uniform), n = 10: 95% intervals cover 95% of the
    time up to Monte Carlo error (4,000 replicates, ±3.5 SE ≈ ±1.2 points)."""
    rng = np.random.default_rng(1)
    reps = 4000
    p = rng.uniform(size=reps)
    k = rng.binomial(10, p)
    ci = beta_binomial.beta_intervals(k, 10, 0.95)
    cover = np.mean((ci[:, 0] <= p) & (p <= ci[:, 1]))
    assert abs(cover - 0.95) < 3.5 * math.sqrt(0.95 * 0.05 / reps)


# ------------------------------------------------------------- hierarchical, exact path
def _brute_force_mu_mean(k, n, prior=hierarchical.HierarchicalPrior()):
    """Independent check: 2-D integral of the Beta–Binomial likelihood with scipy."""
    def post(mu, log_kappa):
        kappa = math.exp(log_kappa)
        a, b = mu * kappa, (1 - mu) * kappa
        ll = sum(stats.betabinom.logpmf(ki, ni, a, b) for ki, ni in zip(k, n))
        return math.exp(ll + stats.beta.logpdf(mu, prior.mu_alpha, prior.mu_beta)
                        + stats.norm.logpdf(log_kappa, prior.log_kappa_mean, prior.log_kappa_sd))
    lims = (-6, 11)
    z = integrate.dblquad(lambda lk, mu: post(mu, lk), 0, 1, *lims, epsabs=1e-14)[0]
    m = integrate.dblquad(lambda lk, mu: mu * post(mu, lk), 0, 1, *lims, epsabs=1e-14)[0]
    return m / z


def test_exact_hierarchical_matches_brute_force_integration():
    k, n = np.array([3, 7, 2, 9]), np.array([10, 12, 8, 11])
    fit = hierarchical.fit_exact(k, n)
    assert fit.mean == pytest.approx(_brute_force_mu_mean(k, n), abs=2e-4)
    lo, hi = fit.interval()
    assert lo < fit.mean < hi and fit.hdi()[1] - fit.hdi()[0] <= hi - lo + 0.01


def test_exact_hierarchical_calibrated_with_10_questions_in_clusters():
    """Truth from the prior: 10 questions in 5 clusters of 2.  Coverage of the
    95% interval of μ over 800 replicates within ±3.5 Monte Carlo SEs."""
    rng = np.random.default_rng(2)
    prior = hierarchical.HierarchicalPrior()
    reps, hits = 800, 0
    for _ in range(reps):
        mu = rng.beta(prior.mu_alpha, prior.mu_beta)
        kappa = math.exp(rng.normal(prior.log_kappa_mean, prior.log_kappa_sd))
        theta = rng.beta(max(mu * kappa, 1e-3), max((1 - mu) * kappa, 1e-3), 5)
        k = rng.binomial(2, theta)
        lo, hi = hierarchical.fit_exact(k, np.full(5, 2), coarse=32, fine=(96, 40)).interval()
        hits += lo <= mu <= hi
    cover = hits / reps
    assert abs(cover - 0.95) < 3.5 * math.sqrt(0.95 * 0.05 / reps)


def test_hierarchical_posterior_in_the_report_on_swebench():
    df = pd.read_csv(real_file("swebench_verified_bashonly_per_instance.csv.gz"))
    df = df[df["per_instance_matches_reported"]]
    rep = bayeserr.report(bayeserr.load(df[["model", "question_id", "cluster_id", "score"]]))
    for m in rep.scores:
        lo, hi = m.intervals["hierarchical_posterior"]
        assert lo < m.mean < hi + 0.05
        # 12 clusters: wider than the naive binomial interval
        w_lo, w_hi = m.intervals["wilson"]
        assert hi - lo > w_hi - w_lo


# ------------------------------------------------------------- paired
def test_dirichlet_closed_forms_match_monte_carlo():
    d = paired_dirichlet.dirichlet_paired(12, 20, 68, rope=0.02)
    draws = d.sample(400_000, seed=3)
    assert d.prob_a_better == pytest.approx(np.mean(draws > 0), abs=0.004)
    assert d.prob_tie == pytest.approx(np.mean(np.abs(draws) < 0.02), abs=0.004)
    assert d.moments[0] == pytest.approx(draws.mean(), abs=5e-4)
    assert d.moments[1] == pytest.approx(draws.std(), rel=0.01)


def test_dirichlet_agrees_with_mcnemar_and_is_half_for_identical_models():
    from statsmodels.stats.contingency_tables import mcnemar
    for b, c in [(30, 12), (12, 30), (20, 22), (5, 0), (41, 77)]:
        p_better = paired_dirichlet.prob_a_better(b, c, 100)
        p_mc = mcnemar([[50, b], [c, 50]], exact=True).pvalue
        assert (p_better > 0.5) == (b > c)
        tail = min(p_better, 1 - p_better)
        # the posterior tail is below half the exact (conservative) two-sided p ...
        assert tail <= p_mc / 2
        # ... and with the uniform Dirichlet prior equals half the mid-p value:
        # I_½(c+1, b+1) = P(Bin(b+c+1, ½) ≤ c) = F(c; b+c) − f(c; b+c)/2 for c < b
        lo, n = min(b, c), b + c
        mid = 2 * stats.binom.cdf(lo, n, 0.5) - stats.binom.pmf(lo, n, 0.5)
        assert tail == pytest.approx(mid / 2, rel=1e-9)
    assert paired_dirichlet.prob_a_better(0, 0, 100) == pytest.approx(0.5)
    assert paired_dirichlet.prob_a_better(7, 7, 50) == pytest.approx(0.5)
    a = (np.random.default_rng(0).random(60) < 0.5).astype(float)
    rep = bayeserr.report(bayeserr.load(binary_frame({"A": a, "B": a})))
    assert rep.comparisons[0].prob_a_better == pytest.approx(0.5)


def test_bayesian_bootstrap_against_rubins_moments_and_the_clt():
    rng = np.random.default_rng(4)
    s = rng.beta(2, 3, size=(2, 300))
    means = bb.bootstrap_means(s, draws=20000, seed=1)
    # Rubin (1981): E = sample mean, Var = Σ(s−s̄)²/(n(n+1))
    n = s.shape[1]
    assert means.mean(axis=0) == pytest.approx(s.mean(axis=1), abs=1e-3)
    assert means.std(axis=0) == pytest.approx(np.sqrt(np.var(s, axis=1) * n / (n * (n + 1))), rel=0.02)
    # clustered: weights over clusters, ratio estimator; sd close to CR0 clustered SE
    codes = rng.integers(0, 40, n)
    cm = bb.bootstrap_means(s[:1], codes, draws=20000, seed=1)
    e = s[0] - s[0].mean()
    cr0 = np.sqrt(np.sum(np.bincount(codes, weights=e) ** 2)) / n
    assert cm.std() == pytest.approx(cr0, rel=0.1)


def test_fast_mode_pairs_with_unpaired_questions_use_common_questions():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame([(m, f"q{i}", float(rng.random() < p)) for m, p in (("A", .7), ("B", .5), ("C", .5))
                          for i in range(80 if m != "C" else 60)], columns=["model", "question_id", "score"])
    frame.loc[frame["model"] == "A", "score"] = frame.loc[frame["model"] == "A", "score"] * 0.9  # fractional
    rep = bayeserr.report(bayeserr.load(frame), on_unpaired="drop")
    for c in rep.comparisons:
        assert 0 <= c.prob_a_better <= 1
        if c.diff > 0.1:
            assert c.prob_a_better > 0.9


def test_bayes_off_leaves_keys_null_and_mode_validation():
    ds = bayeserr.load(real_file("langchain_tool_use_per_question.csv.gz"))
    rep = bayeserr.report(ds, bayes=BayesSettings(mode="off")).to_dict()
    assert all(m["intervals"]["beta_posterior"] is None for m in rep["models"])
    assert all(c["prob_a_better"] is None for c in rep["comparisons"])
    with pytest.raises(bayeserr.InputError):
        BayesSettings(mode="slow")


def test_cli_bayes_options_and_saving(cli, cli_json, tmp_path):
    path = real_file("langchain_tool_use_per_question.csv.gz")
    rep = cli_json("report", path, "--prior", "jeffreys", "--rope", 0.05)
    claude = next(m for m in rep["models"] if m["model"] == "claude-2.1")
    np.testing.assert_allclose(claude["intervals"]["beta_posterior"], stats.beta(20.5, 0.5).ppf([0.025, 0.975]))
    assert all(c["prob_tie"] is not None for c in rep["comparisons"])
    res = cli("report", path, "--prior", "0,1")
    assert res.exit_code == 2 and "positive" in res.output
    res = cli("report", path, "--save-posterior", tmp_path / "post")
    assert res.exit_code == 0
    files = sorted((tmp_path / "post").glob("*.nc"))
    assert len(files) == 9
    import xarray as xr
    with xr.open_dataset(files[0], group="posterior") as post:
        assert "p" in post
    out = cli_json("compare", path, "mixtral-8x7b-instruct", "gpt-4-0613 (functions)")
    assert out["posterior"]["method"].startswith("Dirichlet")
    assert out["comparison"]["prob_a_better"] == pytest.approx(
        paired_dirichlet.prob_a_better(8, 4, 8))
    md = cli("report", path, "--prior-sensitivity").output
    assert "Prior sensitivity" in md and "Beta(0.5, 0.5)" in md
