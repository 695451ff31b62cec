"""LaTeX and HTML reports agree with the JSON; figures; the HTML page renders
in headless Chromium with its tables and figures and no console errors."""

import re
import shutil
import subprocess

import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.renderers import plots

from ..conftest import real_file

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def demo_report():
    return bayeserr.report(bayeserr.load(example_path()))


def _tex(x):
    """A number in a LaTeX math-mode column: the hyphen is the minus sign there."""
    return f"{100 * x:.1f}"


def _pt(x):
    return f"{100 * x:.1f}".replace("-", "−")  # every format's minus sign


def test_latex_numbers_agree_with_json(cli, cli_json):
    rep = cli_json("demo")
    tex = cli("demo", "--format", "latex").stdout
    # models, ranking, pairs, and pass^k by model (the demo runs each question 3 times)
    assert tex.count(r"\toprule") == 4 and r"\begin{tabular}" in tex and r"\caption{" in tex
    for m in rep["models"]:
        # mean with the (clustered) SE in parentheses beneath it, then n and C
        cell = rf"{_tex(m['mean'])}\\ ({_tex(m['se_clustered'])})"
        assert cell in tex and f"& {m['n_questions']} & {m['n_clusters']} &" in tex
        lo, hi = m["intervals"]["clustered"]
        assert f"[{_tex(lo)}, {_tex(hi)}]" in tex
    for c in rep["comparisons"]:
        row = next(line for line in tex.splitlines() if line.startswith(f"{c['a']} $-$ {c['b']} &"))
        assert (f"& {_tex(c['diff'])} & {_tex(c['se_clustered_paired'])} & {c['df']:.1f} & "
                f"[{_tex(c['ci'][0])}, {_tex(c['ci'][1])}]") in row
    assert "clustered SE (CR2)" in tex and r"95\%" in tex


def test_latex_escapes_special_characters(tmp_path, cli):
    path = tmp_path / "r.csv"
    path.write_text("model,question_id,score\n" + "".join(f"{m},q{i},{i % 2}\n" for m in ("gpt_4 & co", "50%_model")
                                                          for i in range(8)))
    tex = cli("report", path, "--format", "latex", "--methods", "all").stdout
    assert r"gpt\_4 \& co" in tex and r"50\%\_model" in tex and "Clopper--Pearson" in tex


def test_html_numbers_agree_with_json_and_page_is_self_contained(tmp_path, cli, cli_json):
    rep = cli_json("demo")
    out = tmp_path / "report.html"
    assert cli("demo", "--format", "html", "--output", out).exit_code == 0
    page = out.read_text()
    assert page.count("<svg") >= 4  # forest, pairs, heatmap, posterior densities
    assert not re.search(r"""(src|href)=["']https?://""", page)  # nothing fetched from the network
    for m in rep["models"]:
        assert (f"<td>{m['model']}</td><td>{m['group']}</td><td>{_pt(m['mean'])}<span class=\"se\">"
                f"({_pt(m['se_clustered'])})</span>") in page
    for c in rep["comparisons"]:
        assert f"[{_pt(c['ci'][0])}, {_pt(c['ci'][1])}]" in page
        assert f"{c['prob_a_better']:.3f}" in page
    assert "Rows read: 2400; used: 2400; dropped: 0." in page


def test_html_needs_output_file(cli):
    res = cli("demo", "--format", "html")
    assert res.exit_code == 2 and "--output" in res.output


def _judged_example(tmp_path) -> str:
    """The bundled example's scores as the human labels of a third of the questions, and a
    noisy judge's verdicts as the scores (for the judge figure)."""
    import numpy as np
    import pandas as pd
    df = pd.read_csv(example_path())
    rng = np.random.default_rng(0)
    labelled = set(rng.choice(df.question_id.unique(), 70, replace=False))
    df["human"] = np.where(df.question_id.isin(labelled), df.score, np.nan)
    df["score"] = np.where(df.score == 1, rng.random(len(df)) < 0.9, rng.random(len(df)) < 0.3).astype(int)
    path = tmp_path / "judged.csv"
    df.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("kind", plots.KINDS)
def test_plot_command_writes_each_figure(kind, tmp_path, cli):
    out = tmp_path / f"{kind}.png"
    if kind == "judge":  # the example has no human labels: nothing to draw, said so
        res = cli("plot", example_path(), "--kind", kind, "--output", out)
        assert res.exit_code == 2 and "no model has a corrected human-scored interval" in res.output
        res = cli("plot", _judged_example(tmp_path), "--human-col", "human", "--kind", kind, "--output", out)
        assert res.exit_code == 0 and out.stat().st_size > 5000, res.output
        return
    res = cli("plot", example_path(), "--kind", kind, "--output", out)
    assert res.exit_code == 0 and out.stat().st_size > 5000
    svg = tmp_path / f"{kind}.svg"
    assert cli("plot", example_path(), "--kind", kind, "-o", svg).exit_code == 0
    assert svg.read_text().lstrip().startswith("<?xml")


def test_plot_rejects_unknown_suffix(tmp_path, cli):
    res = cli("plot", example_path(), "--output", tmp_path / "x.bmp")
    assert res.exit_code == 2 and ".svg, .png or .pdf" in res.output


def test_many_models_figures_stay_readable():
    rep = bayeserr.report(bayeserr.load(real_file("swebench_verified_bashonly_per_instance.csv.gz"),
                                        no_cluster=False))
    fig = plots.pairs(rep)
    assert len(fig.axes[0].get_yticklabels()) <= plots.MAX_PAIRS
    heat = plots.heatmap(rep)
    labels = [t.get_text() for t in heat.axes[0].get_yticklabels()]
    assert labels == [m.model for m in rep.scores]  # every model labelled, in ranking order
    assert max(heat.get_size_inches()) <= 16
    assert plots.svg(heat).startswith("<svg")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
def test_html_renders_in_headless_chromium(tmp_path, cli):
    page = tmp_path / "report.html"
    assert cli("demo", "--format", "html", "--output", page).exit_code == 0
    shot = tmp_path / "shot.png"
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    shot_run = subprocess.run(flags + ["--window-size=1200,2600", f"--screenshot={shot}", page.as_uri()],
                              capture_output=True, text=True, timeout=120)
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 50_000  # a real page, not a blank one
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dom.stdout.count("<table") >= 3 and dom.stdout.count("<svg") >= 4  # models, K > 1 variance, pairs
    assert "bayeserr report" in dom.stdout and "Rows read: 2400" in dom.stdout
    console = [line for line in (shot_run.stderr + dom.stderr).splitlines() if ":CONSOLE" in line]
    assert console == [], console


def test_jupyter_representations_are_scoped_fragments():
    """_repr_html_ of a report, a comparison and arena ratings: a fragment whose
    styles cannot restyle the notebook (every rule under .bayeserr, no page
    skeleton, no script), holding the numbers; __repr__ is one plain line."""
    import re

    import numpy as np
    import pandas as pd

    import bayeserr
    from bayeserr.analyses import arena
    from bayeserr.examples import example_path
    ds = bayeserr.load(example_path())
    rep = bayeserr.report(ds, bayes="off")
    cmp = bayeserr.compare_report(ds, "ckpt-0426", "baseline-v1", bayes="off")
    rng = np.random.default_rng(0)
    votes = pd.DataFrame({"model_a": rng.choice(["x", "y", "z"], 60), "model_b": "w",
                          "winner": rng.choice(["model_a", "model_b", "tie"], 60)})
    ratings = arena.rate(arena.load_votes(votes), bootstrap=50, seed=0)
    for obj, must in ((rep, [f"{rep.scores[0].mean * 100:.1f}", "ckpt-0426"]),
                      (cmp, [f"{cmp.comparison.diff * 100:.1f}"]), (ratings, ["x", "w"])):
        html = obj._repr_html_()
        assert html.startswith('<div class="bayeserr"><style>') and html.rstrip().endswith("</div>")
        assert not re.search(r"<!DOCTYPE|<html|<body|<script|<title", html, re.I)
        css = html.split("<style>", 1)[1].split("</style>", 1)[0]
        selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{[^{}]*\}", css) for sel in rule.split(",")]
        assert selectors and all(sel.startswith(".bayeserr") for sel in selectors), selectors[:5]
        assert all(m in html for m in must)
        assert "\n" not in repr(obj) and type(obj).__name__ in repr(obj)
