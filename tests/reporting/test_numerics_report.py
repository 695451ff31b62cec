"""Report-level behaviours that had no test: BH in rendered reports, the
interval-outside-[0, 1] warning, prior-sensitivity numbers, saved
hierarchical posteriors, zero SE with a non-zero difference, K min/max, and
the early memory refusal for too many pairs."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeserr
from bayeserr.examples import example_path


def test_bh_adjustment_in_every_rendered_format(cli, cli_json, tmp_path):
    rep = cli_json("report", example_path(), "--adjust", "bh")
    md = cli("report", example_path(), "--adjust", "bh").stdout
    assert "| BH p |" in md and "| Holm p |" not in md
    for c in rep["comparisons"]:
        p_bh = c["p_bh"]
        assert (f"| {p_bh:.4f} |" if p_bh >= 1e-4 else "| <0.0001 |") in md
    tex = cli("report", example_path(), "--adjust", "bh", "--format", "latex").stdout
    assert "BH $p$" in tex
    page = tmp_path / "r.html"
    assert cli("report", example_path(), "--adjust", "bh", "--format", "html", "-o", page).exit_code == 0
    assert "BH p" in page.read_text()


def test_interval_outside_unit_warning():
    df = pd.DataFrame({"model": ["A"] * 10, "question_id": range(10), "score": [1] * 9 + [0]})
    rep = bayeserr.report(bayeserr.load(df))
    (w,) = [w for w in rep.warnings if w.code == "interval_outside_unit"]
    lo, hi = rep.scores["A"].intervals["clt"]
    assert hi > 1 and w.model == "A" and f"{hi:.4f}" in w.message


def test_prior_sensitivity_numbers(cli_json):
    df = pd.DataFrame({"model": ["A"] * 20, "question_id": range(20), "score": [1] * 15 + [0] * 5})
    rep = bayeserr.report(bayeserr.load(df), prior_sensitivity=True)
    (row,) = rep.prior_sensitivity
    from bayeserr.models.beta_binomial import prior_label
    assert row[prior_label("uniform")] == pytest.approx(stats.beta.ppf([0.025, 0.975], 16, 6), rel=1e-12)
    assert row[prior_label("jeffreys")] == pytest.approx(stats.beta.ppf([0.025, 0.975], 15.5, 5.5), rel=1e-12)


def test_saved_hierarchical_posteriors_round_trip(tmp_path, cli):
    folder = tmp_path / "post"
    assert cli("report", example_path(), "--save-posterior", folder).exit_code == 0
    index = json.loads((folder / "index.json").read_text())["posteriors"]
    entry = next(e for e in index if e["model"] == "ckpt-0426" and e["kind"] == "hierarchical")
    import arviz as az
    idata = az.from_netcdf(str(folder / entry["file"]))
    mu = idata.posterior["mu"].values.ravel()
    rep = bayeserr.report(bayeserr.load(example_path()))
    lo, hi = rep.scores["ckpt-0426"].hierarchical_mu
    # draws from the saved posterior reproduce its interval within Monte Carlo error
    se = np.sqrt(0.025 * 0.975 / mu.size) / stats.norm.pdf(stats.norm.ppf(0.025)) * mu.std()
    assert np.quantile(mu, 0.025) == pytest.approx(lo, abs=5 * se)
    assert np.quantile(mu, 0.975) == pytest.approx(hi, abs=5 * se)


def test_zero_se_with_a_difference_is_consistent_everywhere(cli, cli_json, tmp_path):
    rows = [{"model": m, "question_id": i, "score": v}
            for i in range(30) for m, v in (("A", 0.75), ("B", 0.25))]
    path = tmp_path / "r.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    rep = cli_json("report", path)
    (c,) = rep["comparisons"]
    assert c["statistic"] is None and c["p_value"] == 0 and c["ci"] == [0.5, 0.5]
    assert any(w["code"] == "zero_se" for w in rep["warnings"])
    assert "zero_se" in cli("report", path).stdout
    same = bayeserr.compare(bayeserr.load(path), "A", "B")
    assert same.statistic == np.inf


def test_k_min_and_max(cli_json):
    rep = cli_json("demo")
    assert all(m["k_min"] == m["k_max"] == 3 and isinstance(m["k_min"], int) for m in rep["models"])


def test_too_many_pairs_fail_at_once(monkeypatch):
    rng = np.random.default_rng(0)
    m, q = 3000, 3
    df = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(m)], q),
                       "question_id": np.tile(np.arange(q), m), "score": rng.integers(0, 2, m * q)})
    ds = bayeserr.load(df)
    from bayeserr.reporting import build

    def never(*a, **k):
        raise AssertionError("scored before refusing")
    monkeypatch.setattr(build, "score_view", never)  # the refusal comes before any work
    with pytest.raises(bayeserr.InputError, match="pairs of 3,000 models"):
        bayeserr.report(ds, bayes="off")
