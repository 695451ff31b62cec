"""The report keeps its own rules (issue 22): the recommended interval never
leaves [0, 1], and the warnings agree with what the table recommends."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayeserr
from tests.conftest import real_file

SHAPES = ("binary", "fractional", "k_samples", "counts")


def _frame(shape: str, n: int, clusters: int, p: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """One model's results of the given input shape, scores near ``p``."""
    rng = np.random.default_rng(seed)
    q = [f"q{i}" for i in range(n)]
    codes = [f"c{i % clusters}" for i in range(n)] if clusters else None
    kw: dict = {}
    if shape == "binary":
        df = pd.DataFrame({"question_id": q, "score": (rng.random(n) < p).astype(int)})
    elif shape == "fractional":
        partial = rng.uniform(0, 0.3, n) * (rng.random(n) < 0.3)  # mostly 0 or 1, some fractional
        df = pd.DataFrame({"question_id": q, "score": np.where(rng.random(n) < p, 1 - partial, partial)})
    elif shape == "counts":
        k = rng.binomial(5, p, n)
        df = pd.DataFrame({"question_id": q, "score": k / 5, "n_correct": k, "n_samples": 5})
    else:  # K = 4 samples of 0/1 answers per question
        df = pd.DataFrame({"question_id": np.repeat(q, 4), "run": np.tile(range(4), n),
                           "score": (rng.random(4 * n) < p).astype(int)})
        kw["sample_col"] = "run"
        if codes:
            codes = list(np.repeat(codes, 4))
    if codes:
        df["cluster_id"] = codes
    df.insert(0, "model", "m")
    other = df.copy()
    other["model"] = "ref"
    return pd.concat([df, other]), kw


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(SHAPES), n=st.integers(4, 140), clusters=st.sampled_from([0, 2, 3, 5, 15]),
       p=st.sampled_from([0.0, 0.01, 0.03, 0.5, 0.97, 0.99, 1.0]), seed=st.integers(0, 2**16),
       bayes=st.sampled_from(["off", "fast"]))
def test_recommended_interval_always_inside_unit(shape, n, clusters, p, seed, bayes):
    """Property (issue 22 item 1): on every input shape — 0/1, fractional, K
    samples, counts — with or without clusters, with or without the Bayesian
    columns, the table's interval lies in [0, 1] and contains the score."""
    df, kw = _frame(shape, n, clusters, p, seed)
    scores = bayeserr.score(bayeserr.load(df, **kw), bayes=bayes)
    for s in scores:
        rec = s.recommended
        lo, hi = rec.interval
        assert 0.0 <= lo <= hi <= 1.0, (s.model, rec)
        assert rec.key in s.intervals and s.intervals[rec.key] is not None
        if not rec.cut:
            assert tuple(s.intervals[rec.key]) == rec.interval
        frame = scores.to_frame().loc[s.model]
        assert (frame["recommended_low"], frame["recommended_high"]) == rec.interval
        assert frame["recommended"] == rec.key


def test_matharena_k4_recommended_inside_unit():
    """The case of the issue: MathArena AIME with K = 4 runs, where the CR2
    interval of o3-mini (high) reached 101.6 and Claude-3.5-Sonnet's −3.8."""
    ds = bayeserr.load(real_file("matharena_aime2025_II_per_run.csv.gz"), sample_col="run")
    for bayes, fallback in (("fast", "cluster_effect_posterior"), ("off", "clustered")):
        scores = bayeserr.score(ds, bayes=bayes)
        for name in ("o3-mini (high)", "Claude-3.5-Sonnet", "gpt-4o"):
            s = scores[name]
            assert not (0 <= s.intervals["clustered"][0] and s.intervals["clustered"][1] <= 1)
            rec = s.recommended
            assert rec.key == fallback and 0 <= rec.interval[0] < s.mean < rec.interval[1] <= 1
            assert rec.cut == (bayes == "off")
        assert all(0 <= s.recommended.interval[0] and s.recommended.interval[1] <= 1 for s in scores)


def test_cut_interval_is_labelled_in_the_table(cli):
    res = cli("report", real_file("matharena_aime2025_II_per_run.csv.gz"), "--sample-col", "run",
              "--bayes", "off")
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("| Claude-3.5-Sonnet |"))
    assert "[0.0, 10.5]" in row and "cut to [0, 1]" in row
    assert "-3.8" not in res.output


@pytest.mark.parametrize("bayes", ["off", "fast"])
def test_small_n_warning_agrees_with_the_table(bayes):
    """Issue 22 item 2: ``small_n`` told readers to prefer the exact or
    Bayesian intervals for models whose table interval was CR2 or Wilson; it
    now fires only where the table shows a CLT interval, and says so."""
    rng = np.random.default_rng(3)
    n = 40
    frac = pd.DataFrame({"model": np.repeat(["a", "b"], n), "question_id": np.tile(range(n), 2),
                         "score": rng.random(2 * n)})
    binary = frac.assign(score=(frac["score"] > 0.5).astype(int))
    clustered = binary.assign(cluster_id=np.tile(np.arange(n) % 8, 2))
    for df in (frac, binary, clustered):
        rep = bayeserr.report(bayeserr.load(df), bayes=bayes)
        small = {w.model: w.message for w in rep.warnings if w.code == "small_n"}
        for s in rep.scores:
            shows_clt = s.recommended.key == "clt"
            assert (s.model in small) == shows_clt, (df.columns.tolist(), bayes, s.recommended)
            if shows_clt:
                assert "--bayes" in small[s.model]


def test_one_warning_line_per_kind_in_every_format():
    """Issue 22 item 10: AlpacaEval printed 394 warnings in HTML (56
    identical few_clusters, 315 unpaired_dropped); every format now prints one
    line per kind naming what it concerns, and the JSON keeps every warning."""
    import json
    ds = bayeserr.load(real_file("alpacaeval2_per_instruction.csv.gz"))
    rep = bayeserr.report(ds, bayes="off", on_unpaired="drop")
    warnings = json.loads(rep.to_json())["warnings"]
    codes = {w["code"] for w in warnings}
    assert len(warnings) > 300 and {"few_clusters", "unpaired_dropped"} <= codes
    unpaired = [w for w in warnings if w["code"] == "unpaired_dropped"]
    few = [w for w in warnings if w["code"] == "few_clusters"]
    assert all(len(w["pair"]) == 2 for w in unpaired)
    for fmt, text in (("md", rep.to_markdown()), ("html", rep.to_html()), ("latex", rep.to_latex())):
        flat = " ".join(text.split())
        for code in codes:
            assert flat.count(f"[{code}]") == 1 if fmt != "html" else code in flat, (fmt, code)
        assert flat.count("FuseChat-Gemma-2-9B-Instruct vs") <= 2, fmt  # the pairs are counted, not listed
        assert f"{len(unpaired)} pairs" in flat and f"{len(few)} models" in flat, fmt
        assert "… and 44 more" in flat, fmt


def test_summary_lines():
    """The grouping itself: one warning reads as itself; a few distinct ones
    are printed whole on one line; many with a template give the range of
    their numbers; the list of names stops at NAMES_SHOWN."""
    from bayeserr.base.caveat import Caveat
    from bayeserr.registries import caveats

    one = Caveat("small_n", "m", "only 12 questions: ...", facts={"n": 12})
    assert caveats.summary([one]) == "m: only 12 questions: ..."
    two = [Caveat("odd", "a", "x"), Caveat("odd", "b", "y")]
    assert caveats.summary(two) == "a: x b: y"
    many = [Caveat("few_clusters", f"m{i}", "...", facts={"df": 2.0 + i, "c_eff": 3.0}) for i in range(20)]
    line = caveats.summary(many)
    assert line.startswith("20 models (m0, m1,") and "… and 8 more" in line and "m12" not in line
    assert "df 2.0–21.0" in line and "effective clusters 3.0)" in line
    assert "m19" in caveats.summary(many, None)
    same = [Caveat("single_cluster", f"m{i}", "one cluster.") for i in range(5)]
    assert caveats.summary(same) == "5 models (m0, m1, m2, m3, m4): one cluster."


# ------------------------------------------------------------------ silent no-ops (item 7)
def test_unknown_output_extension_is_an_error(cli, tmp_path):
    from bayeserr.examples import example_path
    out = tmp_path / "out.pdf"
    res = cli("report", example_path(), "--bayes", "off", "-o", out)
    assert res.exit_code == 2 and not out.exists()
    assert ".pdf names no format" in res.output and ".md (md)" in res.output and "--format" in res.output
    assert "Traceback" not in res.output
    res = cli("report", example_path(), "--bayes", "off", "-o", out, "--format", "md")
    assert res.exit_code == 0 and out.read_text().startswith("# bayeserr report")
    assert cli("report", example_path(), "--bayes", "off", "-o", tmp_path / "noext").exit_code == 2


def test_methods_that_apply_to_no_model_are_named(cli):
    """--methods wilson on fractional scores showed no Wilson column and no note."""
    res = cli("report", real_file("evalperf_per_task.csv.gz"), "--bayes", "off", "--methods", "wilson,clt")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Not shown, as they apply to no model here: Wilson (--methods wilson: 0/1 scores, K = 1)" in text
    header = next(line for line in res.output.splitlines() if line.startswith("| Model"))
    assert "| CLT |" in header and "Wilson" not in header


def test_hierarchical_mu_is_a_column_when_named(cli):
    """--methods hierarchical_mu said it applied to no model (μ is kept outside a model's
    intervals, and --bayes fast left out the three-level posterior behind it): it is a column,
    each cell the API's μ interval of that model."""
    from bayeserr.examples import example_path
    res = cli("report", example_path(), "--methods", "hierarchical_mu")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    header = next(line for line in lines if line.startswith("| Model"))
    assert header.rstrip().endswith("| Hierarchical μ (new cluster) |")
    assert "Not shown" not in res.output and "not_computed" not in res.output
    assert "Hierarchical μ (new cluster): posterior of the mean accuracy of a new cluster." in " ".join(
        res.output.split())  # another estimand than the score's: the note says which
    latex = cli("report", example_path(), "--methods", "hierarchical_mu", "--format", "latex").output
    assert r"Hierarchical $\mu$: posterior of the mean accuracy of a new cluster." in latex
    scores = bayeserr.score(bayeserr.load(example_path()))
    for s in scores:
        row = next(line for line in lines if line.startswith(f"| {s.model} |"))
        lo, hi = s.hierarchical_mu
        assert row.rstrip().endswith(f"| [{100 * lo:.1f}, {100 * hi:.1f}] |"), (row, lo, hi)


@pytest.mark.parametrize("method", ["bernoulli", "clustered_cr1"])
def test_methods_the_report_cannot_show_are_refused(cli, method):
    """A method only the lab measures was accepted and then called "applies to no model"."""
    from bayeserr.examples import example_path
    res = cli("report", example_path(), "--bayes", "off", "--methods", f"clt,{method}")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"--methods {method}" in res.output and "not a column of the report" in res.output
    assert "hierarchical_mu" in res.output  # the choices offered
    with pytest.raises(bayeserr.InputError, match="not a column"):
        bayeserr.Options(methods=(method,))


def test_methods_lists_may_start_from_all_and_offer_only_columns(cli):
    """``all,hierarchical_mu``: every column and μ; an unknown name is answered with the columns
    (not the lab's methods) and all / recommended; recommended stands alone."""
    from bayeserr.examples import example_path
    res = cli("report", example_path(), "--methods", "all,hierarchical_mu")
    header = next(line for line in res.output.splitlines() if line.startswith("| Model"))
    assert res.exit_code == 0 and "| CLT |" in header and "| Hierarchical posterior |" in header
    assert header.rstrip().endswith("| Hierarchical μ (new cluster) |")
    bad = cli("report", example_path(), "--bayes", "off", "--methods", "wilsn")
    said = " ".join(bad.output.split())
    assert bad.exit_code == 2 and "Did you mean 'wilson'" in said, said
    assert "recommended, all, clt" in said and "bernoulli" not in said
    alone = cli("report", example_path(), "--bayes", "off", "--methods", "recommended,clt")
    assert alone.exit_code == 2 and "stands alone" in alone.output


def _same_interval(x, y):
    assert (x is None) == (y is None), (x, y)
    if x is not None:
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bayes", ["fast", "off"])
def test_compare_gives_each_model_what_the_report_gives_it(cli_json, bayes):
    """compare's JSON held every Bayesian interval of its two models as null (it scored them with
    --bayes off): they equal the report's (--bayes full: every posterior), and so does the
    recommended interval, so that the two commands speak with one voice."""
    from bayeserr.examples import example_path
    a, b = "ckpt-0419", "baseline-v1"
    comp = cli_json("compare", example_path(), a, b, "--bayes", bayes)
    rep = cli_json("report", example_path(), "--bayes", "full" if bayes == "fast" else "off")
    by_name = {m["model"]: m for m in rep["models"]}
    for m in comp["models"]:
        mine = by_name[m["model"]]
        assert m["intervals"].keys() == mine["intervals"].keys()
        for key in m["intervals"]:
            _same_interval(m["intervals"][key], mine["intervals"][key])
        _same_interval(m["hierarchical_mu"], mine["hierarchical_mu"])
        _same_interval(m["recommended_interval"], mine["recommended_interval"])
        assert (m["recommended"], m["recommended_cut"]) == (mine["recommended"], mine["recommended_cut"])
        assert (m["intervals"]["hierarchical_posterior"] is None) == (bayes == "off")


def test_compare_markdown_shows_each_models_interval(cli, cli_json):
    """compare's Markdown gave only the two means: it gives each model's score and the
    interval the report recommends for it, with its method."""
    from bayeserr.examples import example_path
    a, b = "ckpt-0419", "baseline-v1"
    text = " ".join(cli("compare", example_path(), a, b).output.split())
    rep = {m["model"]: m for m in cli_json("report", example_path())["models"]}
    for name in (a, b):
        lo, hi = rep[name]["recommended_interval"]
        assert f"{name} {100 * rep[name]['mean']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] (Clustered (CR2, t))" in text


# ------------------------------------------------------------------ empty columns (item 11)
@pytest.fixture(scope="module")
def livebench_md():
    """LiveBench's Markdown report (93 models, fractional scores), run once for the tests below."""
    from click.testing import CliRunner

    from bayeserr.cli import main
    res = CliRunner().invoke(main, ["report", str(real_file("livebench_20250113_per_question.csv.gz")),
                                    "--on-unpaired", "drop", "--bayes", "off"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_no_column_of_dashes(cli, livebench_md):
    swe = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    res = cli("compare", swe, "Claude 4 Opus (20250514)", "Claude 4 Sonnet (20250514)")
    assert res.exit_code == 0, res.output
    assert "[–, –]" not in res.output and "HDI" not in res.output  # a quadrature posterior has no draws
    lines = livebench_md.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| A − B"))
    cols = lines[head].split("|")
    rows = [line.split("|") for line in lines[head + 2:] if line.startswith("|")]
    for j, name in enumerate(cols):
        if name.strip() and name.strip() != "A − B":
            assert any(r[j].strip() not in ("–", "") for r in rows), f"column {name.strip()} is all dashes"


def test_missing_group_column_is_explained_under_the_table(livebench_md):
    after_table = livebench_md.split("## Models")[1].split("\n\n")[2]  # the first paragraph under the table
    assert after_table.startswith("Letter groups are not shown")


# ------------------------------------------------------------------ words (items 12, 14)
def test_cluster_correction_says_what_it_changes(cli):
    from bayeserr.examples import example_path
    help_text = " ".join(cli("report", "--help").output.split())
    assert "reference clustered SE" in help_text and "CR2 headline" in help_text
    for corr, model_head, pair_head in (("paper", "Clustered (paper, z)", "SE paper (M8)"),
                                        ("cr1", "Clustered (CR1, z)", "SE CR1")):
        res = cli("report", example_path(), "--bayes", "off", "--methods", "all", "--pairs", "all",
                  "--cluster-correction", corr)
        main = res.output.split("## Reliability")[0]  # the main tables (pass^k has its own)
        heads = [line for line in main.splitlines() if line.startswith("| Model |") or
                 line.startswith("| A − B |")]
        assert model_head in heads[0] and pair_head in heads[-1]
        other = "SE CR1" if corr == "paper" else "SE paper (M8)"
        assert other not in res.output


def test_where_drops_read_as_removed(cli, tmp_path):
    from bayeserr.examples import example_path
    res = cli("report", example_path(), "--bayes", "off", "--where", "model!=baseline-v1")
    text = " ".join(res.output.split())
    assert "(600 removed by --where model!=baseline-v1)" in text


def test_markdown_prose_is_wrapped(cli):
    from bayeserr.renderers.markdown import WIDTH, wrap
    res = cli("demo")
    long = [line for line in res.output.splitlines() if len(line) > WIDTH + 2 and not line.startswith("|")]
    assert not long
    # never a line that Markdown would read as a list, heading or quote
    assert wrap("a " * 60 + "- b " + "c " * 60).count("\n- ") == 0
    assert wrap("x" * 150) == "x" * 150  # words are never broken


# ------------------------------------------------------------------ found in review
def test_pass_at_k_tables_keep_the_report_rules():
    """pass@k tables: the same in-range choice as the main table (not 'cut'
    for want of the Bayesian intervals), --methods respected, pairs selected."""
    ds = bayeserr.load(real_file("evalperf_per_task.csv.gz"))
    rep = bayeserr.report(ds, pass_k=(1,))
    scores, comps = rep.pass_at_k[1]
    assert all(0 <= s.recommended.interval[0] <= s.recommended.interval[1] <= 1 for s in scores)
    assert not any(s.recommended.cut for s in scores)
    main = {s.model: s.recommended.interval for s in rep.scores}
    same = [s for s in scores if s.recommended.key == rep.scores[s.model].recommended.key]
    assert same and all(s.recommended.interval == pytest.approx(main[s.model], abs=1e-9) for s in same)
    md = rep.to_markdown()
    section = md.split("## pass@1")[1]
    head = next(line for line in section.splitlines() if line.startswith("| Model"))
    assert head.endswith("| 95% interval | Method |")  # --methods recommended: no other columns
    assert f"Showing 33 of {len(comps):,} pairs" in " ".join(section.split())


def test_compare_without_an_estimable_posterior_prints_no_nan(cli):
    res = cli("compare", real_file("livebench_20250113_per_question.csv.gz"), "gpt-4-turbo-2024-04-09",
              "claude-3-5-sonnet-20240620_failsafe", "--on-unpaired", "drop")
    assert res.exit_code == 0, res.output
    assert "nan" not in res.output and "Not shown:" in res.output and "not estimable" in res.output
    assert "small_n" not in res.output  # the one-cluster 0/1 model gets Wilson, not a CLT interval


def test_one_cluster_binary_model_gets_wilson():
    """A 0/1 model whose answered questions all lie in one cluster gets
    Wilson, as the rule printed under the table says (it got a Bayesian one)."""
    n = 100
    codes = np.arange(n) % 5
    b = pd.DataFrame({"model": "b", "question_id": range(n), "cluster_id": codes,
                      "score": (np.arange(n) % 3 == 0).astype(int)})
    a = b[codes == 0].assign(model="a")
    scores = bayeserr.score(bayeserr.load(pd.concat([a, b])))
    assert scores["a"].n_clusters == 1 and scores["a"].recommended.key == "wilson"


def test_notes_name_only_columns_that_are_shown(cli):
    from bayeserr.examples import example_path
    plain = " ".join(cli("report", example_path(), "--bayes", "off").output.split())
    full = " ".join(cli("report", example_path(), "--bayes", "off", "--methods", "all").output.split())
    assert "Clustered (paper, z): the paper’s (M4) SE" not in plain
    assert "Clustered (paper, z): the paper’s (M4) SE" in full


def test_one_model_report_has_no_pairwise_text():
    df = pd.DataFrame({"model": "only", "question_id": range(30), "score": np.arange(30) % 2})
    md = bayeserr.report(bayeserr.load(df)).to_markdown()
    assert "Tie zone" not in md and "P(A > B)" not in md and "For one pair alone" not in md
