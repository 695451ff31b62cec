"""PyMC models: NUTS agrees with the exact path; the three-level and latent
paired models run and recover what they should.  Small draws; marked mcmc."""

import json

import numpy as np
import pandas as pd
import pytest

from bayeserr.models import hierarchical, paired_latent, three_level
from bayeserr.models.diagnostics import diagnose, import_arviz, problems

from .conftest import real_file

pytestmark = [pytest.mark.mcmc, pytest.mark.filterwarnings("ignore")]


def _agree(k, n, seed):
    az = import_arviz()
    exact = hierarchical.fit_exact(k, n)
    idata = hierarchical.fit_mcmc(k, n, draws=1000, tune=700, chains=2, seed=seed)
    mu = idata.posterior["mu"]
    mcse_mean = float(az.mcse(idata, var_names=["mu"])["mu"])
    assert abs(float(mu.mean()) - exact.mean) < 4 * mcse_mean + 1e-3
    lo, hi = exact.interval()
    for prob, edge in ((0.025, lo), (0.975, hi)):
        q = float(np.quantile(mu.values, prob))
        mcse_q = float(az.mcse(idata, var_names=["mu"], method="quantile", prob=prob)["mu"])
        assert abs(q - edge) < 4 * mcse_q + 2e-3
    assert not problems(diagnose(idata, ["mu", "kappa"])) or diagnose(idata, ["mu"])["r_hat"] < 1.02


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


def test_three_level_and_latent_paired_models():
    rng = np.random.default_rng(3)
    n_q, n_c, K = 60, 12, 3
    codes = np.repeat(np.arange(n_c), n_q // n_c)
    difficulty = rng.normal(0, 0.6, n_c)[codes] + rng.normal(0, 0.8, n_q)
    p_a = 1 / (1 + np.exp(difficulty - 1.0))
    p_b = 1 / (1 + np.exp(difficulty + 0.3))
    k_a, k_b = rng.binomial(K, p_a), rng.binomial(K, p_b)
    idata = three_level.fit_mcmc(k_a, np.full(n_q, K), codes, draws=300, tune=300, seed=4)
    mu = idata.posterior["mu"].values
    assert 0.5 < mu.mean() < 0.9 and idata.posterior["phi"].shape[-1] == n_c
    pair = paired_latent.fit_mcmc(np.vstack([k_a, k_b]), np.full((2, n_q), K), codes,
                                  draws=300, tune=300, seed=5)
    delta = pair.posterior["delta"].values
    assert np.mean(delta > 0) > 0.95  # A is clearly better (true gap ≈ 0.25)
    observed = (k_a - k_b).mean() / K
    assert abs(delta.mean() - observed) < 0.1
    assert pair.posterior["rho_question"].values.mean() > 0  # shared difficulty


def test_report_and_compare_with_bayes_mcmc(cli, tmp_path):
    rng = np.random.default_rng(6)
    rows = [(m, f"q{i}", f"c{i // 5}", s, float(rng.random() < p)) for m, p in (("A", 0.7), ("B", 0.5))
            for i in range(40) for s in range(2)]
    path = tmp_path / "r.csv"
    pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "sample", "score"]).to_csv(path, index=False)
    res = cli("report", path, "--bayes", "mcmc", "--draws", 300, "--format", "json")
    assert res.exit_code == 0
    rep = json.loads(res.stdout)  # progress output never reaches stdout
    for m in rep["models"]:
        lo, hi = m["intervals"]["hierarchical_posterior"]
        assert lo < m["mean"] < hi
    res = cli("compare", path, "A", "B", "--bayes", "mcmc", "--draws", 300)
    assert res.exit_code == 0 and "bivariate latent model" in res.stdout and "rho_question" in res.stdout
