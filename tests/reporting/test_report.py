"""The report: SPEC §6 JSON schema, Markdown contents, demo, compare."""

import json
from pathlib import Path

import pytest

import bayeserr
from bayeserr.examples import example_path

from ..conftest import validate_report

MODEL_KEYS = {"model", "n_questions", "n_clusters", "effective_clusters", "df", "k_samples", "k_min",
              "k_max", "mean", "se_clt", "se_bernoulli", "se_clustered", "se_clustered_paper",
              "se_clustered_cr1", "design_effect", "intervals", "hierarchical_mu", "variance",
              "recommended", "recommended_interval", "recommended_cut", "group"}
INTERVAL_KEYS = {"clt", "clustered", "clustered_paper", "wilson", "clopper_pearson", "jeffreys",
                 "agresti_coull", "wilson_clustered", "clopper_pearson_clustered", "beta_posterior",
                 "hierarchical_posterior", "bayesian_bootstrap", "cluster_effect_posterior"}
PAIR_KEYS = {"a", "b", "n_questions", "diff", "se_unpaired", "se_paired", "se_clustered_paired",
             "se_clustered_paired_paper", "n_clusters", "effective_clusters", "test", "statistic",
             "df", "ci", "p_value", "p_holm", "p_bh", "wild_bootstrap", "correlation", "mcnemar",
             "prob_a_better", "prob_tie", "p_romano_wolf", "p_adjusted", "different", "ci_adjusted", "ci_adjusted_critical"}


ROOT = Path(__file__).resolve().parents[2]


def _check_schema(rep):
    validate_report(rep)
    assert set(rep) == {"schema", "level", "provenance", "columns", "rows", "models", "comparisons",
                        "adjustment", "ranking", "tie_zone", "warnings", "pass_at_k",
                        "reliability"}  # pass_at_k: null unless --pass-k; reliability: the demo runs each question 3 times
    assert rep["schema"] == "bayeserr.report/2"
    assert set(rep["provenance"]) == {"version", "created", "command", "inputs", "seed"}
    assert set(rep["columns"]) == {"model", "question", "score", "cluster", "sample"}
    assert set(rep["rows"]) == {"read", "used", "dropped"}
    for m in rep["models"]:
        assert set(m) == MODEL_KEYS and set(m["intervals"]) == INTERVAL_KEYS
    for c in rep["comparisons"]:
        assert set(c) == PAIR_KEYS
        if c["mcnemar"] is not None:
            assert set(c["mcnemar"]) == {"n_a_only", "n_b_only", "p_value", "p_mid"}
    assert set(rep["tie_zone"]) == {"unpaired", "paired_median", "largest_not_different", "smallest_different"}
    assert rep["pass_at_k"] is None
    for w in rep["warnings"]:
        assert set(w) == {"code", "model", "message"}


def test_demo_json_schema_and_contents(cli_json):
    rep = cli_json("demo")
    _check_schema(rep)
    assert rep["rows"] == {"read": 2400, "used": 2400, "dropped": []}
    assert rep["columns"] == {"model": "model", "question": "question_id", "score": "score",
                              "cluster": "cluster_id", "sample": "sample"}
    assert len(rep["models"]) == 4 and len(rep["comparisons"]) == 6
    means = [m["mean"] for m in rep["models"]]
    assert means == sorted(means, reverse=True)
    for m in rep["models"]:
        assert m["k_samples"] == 3 and m["n_clusters"] == 24
        assert m["variance"]["within_questions"] > 0
        assert m["intervals"]["wilson"] is None  # K > 1: no binomial interval
        lo, hi = m["intervals"]["clustered"]
        assert lo < m["mean"] < hi
    for c in rep["comparisons"]:
        assert c["ci"][0] < c["diff"] < c["ci"][1]
        assert c["p_holm"] >= c["p_value"]
        assert c["mcnemar"] is None
        assert 0 <= c["prob_a_better"] <= 1 and 0 <= c["prob_tie"] <= 1
        # a clearly positive gap is clearly probable
        if c["ci"][0] > 0:
            assert c["prob_a_better"] > 0.97


def test_json_and_markdown_agree(cli, cli_json):
    rep = cli_json("demo")
    md = cli("demo").output
    for m in rep["models"]:
        assert (f"| {m['model']} | {m['group']} | {100 * m['mean']:.1f} ({100 * m['se_clustered']:.1f}) "
                "| 200 |") in md
    c = rep["comparisons"][0]
    assert f"[{100 * c['ci'][0]:.1f}, {100 * c['ci'][1]:.1f}]".replace("-", "−") in md  # a true minus
    assert "Rows read: 2400; used: 2400; dropped: 0." in md
    assert "## Warnings" in md and "## Tie zone" in md


def test_binary_report_has_exact_and_clustered_exact_intervals(cli_json, tmp_path):
    import numpy as np
    rng = np.random.default_rng(0)
    lines = ["model,question_id,cluster_id,score"]
    for m, p in (("A", 0.7), ("B", 0.6)):
        lines += [f"{m},q{i},c{i // 5},{int(rng.random() < p)}" for i in range(150)]
    path = tmp_path / "b.csv"
    path.write_text("\n".join(lines) + "\n")
    rep = cli_json("report", path)
    for m in rep["models"]:
        assert m["se_bernoulli"] == pytest.approx(np.sqrt(m["mean"] * (1 - m["mean"]) / 150))
        for key in ("wilson", "clopper_pearson", "jeffreys", "agresti_coull", "wilson_clustered",
                    "clopper_pearson_clustered"):
            assert m["intervals"][key] is not None
        if m["design_effect"] > 1:  # effective n < n widens the interval
            w, wc = m["intervals"]["wilson"], m["intervals"]["wilson_clustered"]
            assert wc[1] - wc[0] > w[1] - w[0]
    assert rep["comparisons"][0]["mcnemar"] is not None
    assert any(w["code"] == "mcnemar_clustered" for w in rep["warnings"])
    assert any(w["code"] == "exact_not_cluster_aware" for w in rep["warnings"])


def test_level_and_cr1_options(cli_json):
    r95, r80 = cli_json("demo"), cli_json("demo", "--level", 0.8)
    assert r80["level"] == 0.8
    w95 = r95["models"][0]["intervals"]["clt"]
    w80 = r80["models"][0]["intervals"]["clt"]
    assert (w80[1] - w80[0]) / (w95[1] - w95[0]) == pytest.approx(1.2815515655 / 1.959963985, rel=1e-8)
    path = example_path()
    paper = cli_json("report", path)["models"][0]
    cr1 = cli_json("report", path, "--cluster-correction", "cr1")["models"][0]
    # the headline (CR2) does not depend on the option; the labelled z interval does
    assert cr1["se_clustered"] == paper["se_clustered"]
    assert cr1["se_clustered_cr1"] != cr1["se_clustered_paper"]
    for m, key in ((paper, "se_clustered_paper"), (cr1, "se_clustered_cr1")):
        lo, hi = m["intervals"]["clustered_paper"]
        assert (hi - lo) / 2 == pytest.approx(1.959963984540054 * m[key], rel=1e-12)


def test_compare_command(cli, cli_json):
    out = cli_json("compare", example_path(), "ckpt-0426", "baseline-v1")
    c = out["comparison"]
    assert c["a"] == "ckpt-0426" and c["diff"] > 0
    assert out["rows"] == {"read": 2400, "used": 2400, "dropped": []}  # the others: the report's verdict
    rep = bayeserr.report(bayeserr.load(example_path()), bayes="off")
    pair = next(p for p in rep.comparisons if {p.a, p.b} == {"ckpt-0426", "baseline-v1"})
    assert out["report_verdict"]["different"] == pair.different
    assert out["report_verdict"]["p_adjusted"] == pytest.approx(pair.p_adjusted, abs=1e-12)
    md = cli("compare", example_path(), "ckpt-0426", "baseline-v1").output
    assert "Clustered paired (M8" in md and "Rows read: 2400; used: 2400" in md
    assert "Verdict in the report of all 4 models (default options): " in md
    md = cli("compare", example_path(), "ckpt-0426", "baseline-v1", "--family", "pair").output
    assert "Rows read: 2400; used: 1200" in md and "Verdict in the report" not in md


def test_api_results_have_frames_and_dicts():
    ds = bayeserr.load(example_path())
    s = bayeserr.score(ds)
    frame = s.to_frame()
    assert list(frame.index) == ["ckpt-0412", "ckpt-0419", "ckpt-0426", "baseline-v1"]
    assert {"mean", "se_clt", "clt_low", "clt_high"} <= set(frame.columns)
    c = bayeserr.compare(ds, "ckpt-0419", "ckpt-0412")
    assert c.to_frame().shape[0] == 1 and c.to_dict()["a"] == "ckpt-0419"
    row = c.to_frame().iloc[0]
    assert row["diff"] == pytest.approx(s["ckpt-0419"].mean - s["ckpt-0412"].mean, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(c.ci)
    text = json.dumps(bayeserr.report(ds).to_dict(), allow_nan=False)  # no NaN leaks into JSON
    assert json.loads(text)["models"][0]["model"] == "ckpt-0419"


def test_output_extension_chooses_the_format_unless_format_is_given(cli, tmp_path):
    """``-o report.html`` writes HTML (and .tex LaTeX, .json JSON) when --format
    is not given; an explicit --format wins; HTML to stdout stays an error."""
    for name, start in (("r.html", "<!DOCTYPE html"), ("r.tex", "%"), ("r.json", "{"), ("r.md", "# ")):
        res = cli("report", example_path(), "-o", tmp_path / name)
        assert res.exit_code == 0, res.output
        assert (tmp_path / name).read_text().lstrip().startswith(start), name
    res = cli("report", example_path(), "--format", "md", "-o", tmp_path / "explicit.html")
    assert res.exit_code == 0 and (tmp_path / "explicit.html").read_text().startswith("# ")
    res = cli("report", example_path(), "--format", "html")
    assert res.exit_code == 2 and "--output" in res.output


def test_demo_excerpts_are_the_demo(cli):
    """The abridged `bayeserr demo` shown in the README and in Getting started
    is the demo's own output, line for line (tables and sentences)."""
    stdout = cli("demo").stdout
    out = set(stdout.splitlines())
    paragraphs = [" ".join(p.split()) for p in stdout.split("\n\n")]  # Markdown prose is wrapped
    for page in (ROOT / "README.md", ROOT / "docs" / "getting-started.md"):
        text = page.read_text()
        block = text[text.index("```", text.index("bayeserr demo` (abridged)")):]
        block = block[3:block.index("```", 3)]
        shown = [line for line in block.splitlines()[1:]
                 if line.strip() and line.strip() != "..." and not line.startswith("```")]
        # table rows verbatim; a sentence may be cut short ("abridged")
        missing = [line for line in shown if line not in out
                   and (line.startswith("|") or not any(p.startswith(" ".join(line.split()))
                                                        for p in paragraphs))]
        assert shown and not missing, (page.name, missing)


def test_readme_stays_a_front_page():
    """The README is the two commands and a short tour (at most 15 KB); the rest is in docs/."""
    assert (ROOT / "README.md").stat().st_size <= 15_000
