"""compare --bayes mcmc in Markdown and JSON: what was sampled, how, and whether it can be
trusted (docs/methods.md §5.3, §5.6).  The sampler is replaced: no MCMC here."""

import json

import numpy as np
import pandas as pd
import pytest


def _posterior(diag):
    from bayeserr.bayes.pairs import PairPosterior
    summary = {"delta": {"mean": -0.014, "sd": 0.038, "eti": [-0.096, 0.057], "hdi": [-0.097, 0.054]},
               "rho_question": {"mean": 0.9712, "sd": 0.0213, "eti": [0.91, 0.998], "hdi": [0.92, 0.999]}}
    return PairPosterior("bivariate latent model (PyMC NUTS)", summary, 0.36, 0.21, 0.01, diag)


@pytest.fixture
def pair_file(tmp_path):
    rng = np.random.default_rng(3)
    rows = [(m, f"q{i}", f"c{i % 6}", float(rng.random() < p)) for m, p in (("A", 0.7), ("B", 0.6))
            for i in range(60)]
    path = tmp_path / "r.csv"
    pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "score"]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("failing", [False, True])
def test_compare_mcmc_says_how_it_sampled_and_whether_it_passed(cli, pair_file, monkeypatch, failing):
    """The diagnostics line names the chains, draws, tuning steps and target acceptance and
    says whether the thresholds pass; a failing fit gives ONE mcmc_diagnostics warning whose
    problems are separated (before, two warnings of the code ran together as '…(now 300) ESS
    124 < 400…'); delta's estimand is said; correlations get two decimals, not '1.0 (0.0)'."""
    from bayeserr.bayes import pairs
    diag = {"r_hat": 1.019 if failing else 1.002, "ess_bulk": 124.0 if failing else 702.0,
            "ess_tail": 128.0 if failing else 1118.0, "divergences": 0,
            "sampler": {"chains": 2, "draws": 300, "tune": 150, "target_accept": 0.9}}
    monkeypatch.setattr(pairs, "pair_posterior", lambda view, c, settings, level=0.95: _posterior(diag))
    md = cli("compare", pair_file, "A", "B", "--bayes", "mcmc", "--draws", 300)
    assert md.exit_code == 0, md.output
    text = " ".join(md.stdout.split())
    assert "Diagnostics (2 chains × 300 draws after 150 tuning steps, target acceptance 0.9)" in text
    assert ("fails the thresholds" in text) == failing and ("within the thresholds" in text) != failing
    assert "difference in mean accuracy on a new question" in text
    assert "| rho_question | 0.97 | 0.02 |" in text
    rep = json.loads(cli("compare", pair_file, "A", "B", "--bayes", "mcmc", "--draws", 300,
                         "--format", "json").stdout)
    found = [w for w in rep["warnings"] if w["code"] == "mcmc_diagnostics"]
    if not failing:
        assert not found
        return
    (w,) = found
    assert "R-hat 1.019 > 1.01" in w["message"] and "; ESS 124 < 400" in w["message"]
    assert w["message"].endswith(".") and "may not be trustworthy" in w["message"]
