"""Reports of 25 and 100 models stay readable in every renderer.

HTML: the page keeps the window's width (wide tables scroll inside their own
box), long tables are collapsed, figures have a bounded height, the tables
sort (numbers on the value shown, '–' last) and filter, the URL fragment
sorts on load, and nothing logs to the console — checked in headless
Chromium.  LaTeX: the tables compile with pdflatex with no error, no overfull
line and no float taller than the page, show real minus signs and never
``nan``.  Figures: at most a few intervals per model, the legend off the data.

The browser and TeX checks skip when chromium or pdflatex is missing
(``.ci/run`` installs both from Debian).  Run with ``--basetemp DIR`` to keep
the screenshots and PDF pages for a look.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.registries.methods import INTERVALS
from bayeserr.renderers import html as html_renderer
from bayeserr.renderers import latex as latex_renderer
from bayeserr.renderers import plots
from bayeserr.reporting.tables import Cell, Column, Table

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PDFLATEX = shutil.which("pdflatex")
PDFTOPPM = shutil.which("pdftoppm")
PDFTOTEXT = shutil.which("pdftotext")
WINDOW = (1280, 1000)
FIGURE_MAX_PX = 1600  # no figure taller than this on the page (CSS px)
OVERFULL_TOLERANCE_PT = 5.0

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
needs_tex = pytest.mark.skipif(PDFLATEX is None or PDFTOPPM is None,
                               reason="pdflatex/pdftoppm not installed (.ci/run installs TeX Live)")


def synthetic(n_models: int, n_questions: int = 240, n_clusters: int = 30, seed: int = 0) -> pd.DataFrame:
    """0/1 answers on clustered questions; accuracies spread from 35% to 85%."""
    rng = np.random.default_rng(seed)
    cluster = np.arange(n_questions) % n_clusters
    shift = rng.normal(0, 0.8, n_clusters)[cluster]
    frames = []
    for i in range(n_models):
        acc = 0.35 + 0.5 * i / max(n_models - 1, 1)
        p = 1 / (1 + np.exp(-(np.log(acc / (1 - acc)) + shift)))
        frames.append(pd.DataFrame({"model": f"model-{i:03d}-long-name",
                                    "question_id": [f"q{j}" for j in range(n_questions)],
                                    "cluster_id": [f"c{c}" for c in cluster],
                                    "score": (rng.random(n_questions) < p).astype(float)}))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def rep25():
    ds = bayeserr.load(synthetic(25), name="/home/someone/evals/synthetic-25.csv")
    return bayeserr.report(ds, bayes="fast", methods="all", pairs="all")  # 22 columns, 300 pairs


@pytest.fixture(scope="module")
def rep100():
    ds = bayeserr.load(synthetic(100), name="/home/someone/evals/synthetic-100.csv")
    return bayeserr.report(ds, bayes="fast", methods="all")


@pytest.fixture(scope="module")
def pages(rep25, rep100, tmp_path_factory):
    """The two HTML pages, rendered once."""
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name, rep in (("r25", rep25), ("r100", rep100)):
        path = folder / f"{name}.html"
        path.write_text(rep.to_html())
        out[name] = path
    return out


# ------------------------------------------------------------------ HTML, static
class _Tables(HTMLParser):
    """Tables of a page: id -> heads [(key, text)], rows [[cell text]], enclosing tags
    ("in") and their classes."""

    def __init__(self):
        super().__init__()
        self.tables, self.stack, self.cur, self.cell = {}, [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = {"heads": [], "rows": [], "in": [t for t, _ in self.stack],
                        "classes": [c for _, c in self.stack]}
            self.tables[a.get("id")] = self.cur
        elif self.cur is not None and tag in ("th", "td"):
            self.cell = [tag, a.get("data-key"), ""]
        elif self.cur is not None and tag == "tr":
            self.cur["_row"] = []
        self.stack.append((tag, a.get("class")))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass
        if self.cur is None:
            return
        if tag in ("th", "td") and self.cell is not None:
            kind, key, text = self.cell
            if kind == "th":
                self.cur["heads"].append((key, text))
            else:
                self.cur["_row"].append(text)
            self.cell = None
        elif tag == "tr" and self.cur.get("_row"):
            self.cur["rows"].append(self.cur.pop("_row"))
        elif tag == "table":
            self.cur = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data


def parse_tables(page: str) -> dict:
    p = _Tables()
    p.feed(page)
    return p.tables


def test_html_layout_at_25_models(rep25, pages):
    page = pages["r25"].read_text()
    assert "<title>bayeserr report: synthetic-25.csv</title>" in page
    assert "<h1>bayeserr report: synthetic-25.csv</h1>" in page
    assert "/home/someone" not in page  # the base name only, never the absolute path
    assert not re.search(r"\bnan\b", page, re.IGNORECASE)
    tables = parse_tables(page)
    assert {"t-models", "t-pairs"} <= set(tables)
    for ident, t in tables.items():
        assert "scroll" in t["classes"], ident  # every table scrolls in its own box
    assert len(tables["t-models"]["heads"]) >= 17 and "details" not in tables["t-models"]["in"]
    assert len(tables["t-pairs"]["rows"]) == 300 and "details" in tables["t-pairs"]["in"]
    assert '<details class="rows"><summary>Pairwise comparisons: 300 rows' in page
    # no network, one inline script
    assert not re.search(r"""(src|href)=["']https?://""", page) and page.count("<script") == 1


def test_html_glossary_explains_every_column(rep25, pages):
    page = pages["r25"].read_text()
    glossary = page[page.index('<h2 id="glossary">'):]
    terms = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", glossary)
    defined = {t for t, _ in terms}
    for t in parse_tables(page).values():
        for key, head in t["heads"]:
            if key != "model":
                assert html_renderer.esc(head.rstrip("†")) in defined, head
    text = dict(terms)
    shown = {k for t in parse_tables(page).values() for k, _ in t["heads"]}
    for key in shown & set(INTERVALS):
        m = INTERVALS[key]
        assert html_renderer.esc(m.applies) in text[html_renderer.esc(m.label)]
        assert m.reference in text[html_renderer.esc(m.label)]
    for symbol in ("n", "C", "C_eff", "df", "K", "deff", "ρ", "p", "RW p", "P(A &gt; B)", "P(tie)",
                   "Rank interval", "Tied with best", "Verdict", "Simultaneous CI"):
        assert symbol in defined, symbol
    # the same text is the tooltip of each column head
    assert 'data-key="c_eff" data-type="num" title="Effective number of clusters' in page


def test_figures_stay_bounded_and_legend_is_off_the_data(rep100):
    demo = bayeserr.report(bayeserr.load(example_path()))
    for rep in (demo, rep100):
        for kind in plots.KINDS:
            fig = plots.figure(rep, kind)
            if isinstance(fig, plots.Blank):  # no human labels here: the judge figure has nothing to draw
                assert kind == "judge"
                continue
            assert fig.get_figheight() <= plots.MAX_HEIGHT, (kind, fig.get_figheight())
    fig = plots.forest(demo)
    fig.draw_without_rendering()
    ax = fig.axes[0]
    labelled = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert 1 < len(labelled) <= 4  # a few headline methods per model, not all of them
    legend = ax.get_legend().get_window_extent()
    assert legend.y0 >= ax.get_window_extent().y1 - 1  # above the axes, never on the intervals
    fig = plots.forest(rep100)
    intervals = [line for line in fig.axes[0].get_lines() if len(line.get_xdata()) == 2]
    assert len(intervals) == 100  # one interval per model at 100 models
    fig = plots.heatmap(rep100)
    sizes = {t.get_fontsize() for t in fig.axes[0].get_yticklabels()}
    assert len(fig.axes[0].get_yticklabels()) == 100 and min(sizes) >= 4


# ------------------------------------------------------------------ HTML in Chromium
PROBE = r"""
window.addEventListener("load", function () {
  var P = %s, W = window.innerWidth, facts = {innerWidth: W,
      scrollWidth: document.documentElement.scrollWidth, overflowing: [], clicks: []};
  document.querySelectorAll("body *").forEach(function (el) {
    var host = el.parentElement && el.parentElement.closest(".scroll, figure.wide, svg");
    if (host) { return; }
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1) { facts.overflowing.push(el.tagName + "#" + el.id); }
  });
  facts.figures = Array.prototype.map.call(document.querySelectorAll("figure"), function (f) {
    return [f.id, Math.round(f.getBoundingClientRect().height)];
  });
  (P.clicks || []).forEach(function (c) {
    var t = document.getElementById(c[0]);
    var th = t.querySelector('th[data-key="' + c[1] + '"]');
    th.click();
    var j = Array.prototype.indexOf.call(th.parentNode.cells, th);
    facts.clicks.push(Array.prototype.map.call(t.tBodies[0].rows, function (r) {
      return r.cells[j].textContent; }));
  });
  if (P.filter) {
    var t = document.getElementById(P.filter[0]);
    t.bayeserrTools.input.value = P.filter[1];
    t.bayeserrTools.input.dispatchEvent(new Event("input"));
    facts.filtered = Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; }).length;
  }
  document.body.setAttribute("data-facts", JSON.stringify(facts));
});
"""


def _flags(tmp_path):
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
            f"--window-size={WINDOW[0]},{WINDOW[1]}", "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=20000"]


def browse(page, tmp_path, fragment: str = "", probe: dict | None = None, shot_height: int | None = None):
    """Dump the DOM (with the probe's facts) and optionally take a screenshot."""
    probed = tmp_path / f"probed-{page.name}"
    text = page.read_text()
    probed.write_text(text.replace("</body>", f"<script>{PROBE % json.dumps(probe or {})}</script></body>"))
    url = probed.as_uri() + fragment
    dom = subprocess.run(_flags(tmp_path) + ["--dump-dom", url], capture_output=True, text=True, timeout=300)
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    if shot_height:
        shot = tmp_path / f"{page.stem}.png"
        flags = [f for f in _flags(tmp_path) if not f.startswith("--window-size")]
        run = subprocess.run(flags + [f"--window-size={WINDOW[0]},{shot_height}", f"--screenshot={shot}",
                                      page.as_uri()], capture_output=True, text=True, timeout=300)
        console += [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    m = re.search(r'data-facts="([^"]*)"', dom.stdout)
    assert m, dom.stderr[-2000:]
    import html
    return json.loads(html.unescape(m.group(1))), dom.stdout, console


def _number(text: str) -> float | None:
    text = text.replace("−", "-").strip()
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    if text in ("", "–") or m is None:
        return None
    return float(m.group()) - (1e-12 if text.startswith("<") else 0)


def _check_layout(facts, console):
    assert console == [], console
    assert facts["scrollWidth"] <= facts["innerWidth"], facts  # no page-wide horizontal scroll
    assert facts["overflowing"] == [], facts["overflowing"]  # only scroll boxes hold wide content
    assert facts["figures"] and max(h for _, h in facts["figures"]) <= FIGURE_MAX_PX, facts["figures"]


@needs_chromium
@pytest.mark.slow  # a browser
def test_html_25_models_in_chromium(pages, rep25, tmp_path):
    probe = {"clicks": [["t-models", "model"], ["t-models", "score"], ["t-models", "score"]],
             "filter": ["t-pairs", "model-003-"]}
    facts, dom, console = browse(pages["r25"], tmp_path, "#sort=pairs.p_adj", probe, shot_height=4200)
    _check_layout(facts, console)
    names, up, down = facts["clicks"]
    assert names == sorted(s.model for s in rep25.scores)
    assert [_number(x) for x in up] == sorted(_number(x) for x in up)  # numeric, not text, order
    assert [_number(x) for x in down] == sorted((_number(x) for x in down), reverse=True)
    assert facts["filtered"] == 24  # every pair with model-003
    # the fragment sorted the pairwise table by Holm p on load (and opened it)
    pairs = parse_tables(dom)["t-pairs"]
    col = [k for k, _ in pairs["heads"]].index("p_adj")
    values = [_number(r[col]) for r in pairs["rows"]]
    assert values == sorted(values) and len(values) == 300
    assert re.search(r'<details class="rows" open=""', dom)


@needs_chromium
@pytest.mark.slow  # a browser
def test_html_100_models_in_chromium(pages, tmp_path):
    facts, dom, console = browse(pages["r100"], tmp_path, "#sort=models.score.desc", {}, shot_height=3000)
    _check_layout(facts, console)
    models = parse_tables(dom)["t-models"]
    col = [k for k, _ in models["heads"]].index("score")
    scores = [_number(r[col]) for r in models["rows"]]
    assert len(scores) == 100 and scores == sorted(scores, reverse=True)


@needs_chromium
def test_html_sort_puts_missing_values_last(tmp_path):
    cols = (Column("model", "Model", numeric=False), Column("x", "x"), Column("p", "p"))
    rows = [("a", 0.5, 0.2), ("b", None, 1e-6), ("c", -0.25, None), ("d", 0.1, 0.03), ("e", float("nan"), 0.5)]
    table = Table("models", "Models", cols,
                  tuple((Cell("text", m), Cell("pct", x), Cell("p", p)) for m, x, p in rows))
    page = tmp_path / "small.html"
    page.write_text(html_renderer.render_blocks([table], title="t"))
    probe = {"clicks": [["t-models", "x"], ["t-models", "x"], ["t-models", "p"], ["t-models", "p"]]}
    facts, _, console = browse(page, tmp_path, "", probe)
    assert console == []
    up, down, p_up, p_down = facts["clicks"]
    assert up == ["−25.0", "10.0", "50.0", "–", "–"] and down == ["50.0", "10.0", "−25.0", "–", "–"]
    assert p_up == ["<0.0001", "0.0300", "0.2000", "0.5000", "–"]
    assert p_down == ["0.5000", "0.2000", "0.0300", "<0.0001", "–"]


# ------------------------------------------------------------------ LaTeX
DOCUMENT = r"""\documentclass{article}
\usepackage{booktabs,array,graphicx,longtable}
\begin{document}
\input{%s}
\end{document}
"""


def compile_latex(tex: str, tmp_path, name: str):
    """pdflatex twice (longtable settles its column widths); returns the log,
    the PDF's text and the PNG of its first page."""
    (tmp_path / f"{name}.tex").write_text(tex)
    (tmp_path / f"{name}-doc.tex").write_text(DOCUMENT % name)
    for _ in range(2):
        run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{name}-doc.tex"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    log = (tmp_path / f"{name}-doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    pdf = tmp_path / f"{name}-doc.pdf"
    subprocess.run([PDFTOPPM, "-r", "80", "-png", "-f", "1", "-l", "2", pdf, tmp_path / name],
                   check=True, timeout=300)
    pngs = sorted(tmp_path.glob(f"{name}-*.png"))
    assert pngs and pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = ""
    if PDFTOTEXT:
        text = subprocess.run([PDFTOTEXT, pdf, "-"], capture_output=True, text=True, check=True).stdout
    return log, text


def _check_latex(tex, log, text):
    assert not re.search(r"\bnan\b", tex, re.IGNORECASE)
    assert not re.search(r"^! ", log, re.MULTILINE)
    overfull = [float(x) for x in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert all(x <= OVERFULL_TOLERANCE_PT for x in overfull), overfull
    assert "Float too large" not in log
    if text:
        assert not re.search(r"(?<![\w-])-\d", text)  # a negative number has a minus, not a hyphen
    first = tex.splitlines()[2]
    assert first.startswith("% requires \\usepackage{booktabs,array")


@needs_tex
def test_latex_demo_compiles(tmp_path):
    rep = bayeserr.report(bayeserr.load(example_path()))
    tex = rep.to_latex()
    log, text = compile_latex(tex, tmp_path, "demo")
    _check_latex(tex, log, text)
    assert r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}" in tex
    assert "[-4.8, 5.5]" in tex and (not text or "[−4.8, 5.5]" in text)  # source digits, real minus


@needs_tex
@pytest.mark.parametrize("which", ["rep25", "rep100"])
def test_latex_many_models_compiles(which, request, tmp_path):
    rep = request.getfixturevalue(which)
    tex = rep.to_latex()
    log, text = compile_latex(tex, tmp_path, which)
    _check_latex(tex, log, text)
    assert r"\begin{longtable}" in tex and "longtable}" in tex.splitlines()[2]
    if text:
        assert "model-000-long-name" in text and "−" in text


def test_latex_heads_in_words_and_no_nan():
    cols = (Column("pair", "A − B", "$A - B$", numeric=False), Column("diff", "Diff", "Diff."),
            Column("p", "p", "$p$"), Column("what", "Method", "Method", numeric=False))
    rows = ((Cell("pair", ("x_1", "y&z")), Cell("pct", -0.034), Cell("p", float("nan")), Cell("text", "a < b")),
            (Cell("pair", ("u", "v")), Cell("pct", None), Cell("p", 1e-7), Cell("text", "ρ²")))
    tex, pkgs = latex_renderer.render_table(Table("pairs", "t", cols, rows, caption="ρ ≥ 0 – fine"))
    assert "nan" not in tex.lower() and r"\mbox{--}" in tex
    assert r"x\_1 $-$ y\&z & -3.4 & \mbox{--} & a $<$ b \\" in tex  # math column: -3.4 is a minus
    assert r"\caption{$\rho$ $\geq$ 0 -- fine}" in tex and r"$\rho$$^2$" in tex
    assert "<0.0001" in tex and pkgs == {"booktabs", "array", "graphicx"}
