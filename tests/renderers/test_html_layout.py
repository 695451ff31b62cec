"""Issue 22, items 4 and 14 (HTML) and the warnings: the HTML report at
1400×900 shows its decision columns without scrolling sideways (secondary
columns fold away behind a "Show all columns" box), a table's note on the †
mark appears only when a column carries the mark, and warnings are grouped
as in every other format.

The browser checks render the real SWE-bench and LiveBench reports (default
options) in headless Chromium and measure the page with a script written
into the DOM; they skip when chromium or the data files are absent.  Run
with ``--basetemp DIR`` to keep the pages and screenshots for a look.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.renderers import html as html_renderer
from bayeserr.reporting import document as doc
from bayeserr.reporting.sections import report_blocks
from bayeserr.reporting.tables import Cell, Column, Table

from ..conftest import real_file

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
WINDOW = (1400, 900)

#: the columns a reader decides from, by table: visible at 1400 px without scrolling sideways
DECISION = {"t-models": ("model", "group", "score", "recommended", "method"),
            "t-ranking": ("model", "rank", "rank_score", "rank_all", "rank_own", "tied_best"),
            "t-pairs": ("pair", "diff", "ci", "ci_adj", "p", "p_adj", "verdict", "p_better", "p_tie")}

#: opens every collapsed table, measures every table head and scroll box, then ticks each
#: "Show all columns" box and measures again; the facts go into the DOM as JSON
PROBE = r"""
window.addEventListener("load", function () {
  var root = document.documentElement, W = root.clientWidth;
  function measure() {
    var out = {};
    document.querySelectorAll("table[id]").forEach(function (t) {
      var box = t.closest(".scroll"), heads = {};
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th) {
        var r = th.getBoundingClientRect();
        heads[th.getAttribute("data-key")] = [r.left, r.right, r.width];
      });
      var b = box.getBoundingClientRect();
      out[t.id] = {heads: heads, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth,
                   boxLeft: b.left, boxRight: b.right};
    });
    return out;
  }
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var facts = {viewport: W, pageScrollWidth: root.scrollWidth, before: measure()};
  facts.toggles = Array.prototype.map.call(document.querySelectorAll("input.allcols"), function (box) {
    box.click();
    return box.id;
  });
  facts.after = measure();
  document.body.setAttribute("data-facts", JSON.stringify(facts));
});
"""


def _flags(tmp_path):
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--run-all-compositor-stages-before-draw", "--virtual-time-budget=20000"]


def measure(page, tmp_path) -> tuple[dict, list]:
    """The layout facts of ``page`` at 1400×900 and the console lines; a
    screenshot of the top of the page is left next to it."""
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(page.read_text().replace("</body>", f"<script>{PROBE}</script></body>"))
    dom = subprocess.run(_flags(tmp_path) + ["--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=300, check=False)
    shot = tmp_path / f"{page.stem}.png"
    run = subprocess.run(_flags(tmp_path) + [f"--screenshot={shot}", page.as_uri()],
                         capture_output=True, text=True, timeout=300, check=False)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    m = re.search(r'data-facts="([^"]*)"', dom.stdout)
    assert m, dom.stderr[-2000:]
    console = [line for line in (dom.stderr + run.stderr).splitlines() if ":CONSOLE" in line]
    return json.loads(html.unescape(m.group(1))), console


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("name, extra", [
    ("swebench_verified_bashonly_per_instance.csv.gz", ()),
    ("livebench_20250113_per_question.csv.gz", ("--on-unpaired", "drop")),
], ids=["swebench", "livebench"])
def test_decision_columns_visible_at_1400_without_scrolling_sideways(name, extra, cli, tmp_path):
    path = real_file(name)
    page = tmp_path / "report.html"
    res = cli("report", path, *extra, "--format", "html", "-o", page)
    assert res.exit_code == 0, res.output
    facts, console = measure(page, tmp_path)
    assert console == [], console
    width = facts["viewport"]
    assert width >= 1350, facts["viewport"]  # 1400 less the page's scrollbar
    assert facts["pageScrollWidth"] <= width  # the page itself never scrolls sideways
    before = facts["before"]
    assert {"t-models", "t-pairs"} <= set(before)
    for ident, keys in DECISION.items():
        if ident not in before:
            continue
        t = before[ident]
        # the table's box does not scroll sideways: every shown column is in view
        assert t["scrollWidth"] <= t["clientWidth"], (ident, t["scrollWidth"], t["clientWidth"])
        assert t["boxRight"] <= width
        for key in keys:
            if key not in t["heads"]:
                continue  # e.g. no letter groups next to a ranking
            left, right, w = t["heads"][key]
            assert w > 0 and left >= 0 and right <= width and right <= t["boxRight"] + 0.5, (ident, key, t)
    pairs = before["t-pairs"]["heads"]
    for key in ("ci", "p", "p_adj", "p_better", "p_tie", "verdict"):
        assert key in pairs, key
    # the secondary columns are folded away, and one tick shows them
    assert pairs["se_paper"][2] == 0 and pairs["se_unpaired"][2] == 0
    assert "t-pairs-all" in facts["toggles"]
    after = facts["after"]["t-pairs"]["heads"]
    assert after["se_paper"][2] > 0 and after["se_unpaired"][2] > 0 and after["n"][2] > 0
    # no "†" note when no column carries the mark (default options show no marked method)
    text = page.read_text()
    if not re.search(r"<th[^>]*>[^<]*†</th>", text):
        assert "†" not in text


# ------------------------------------------------------------------ static checks (no browser)
def _clustered_binary(n_models: int = 4, n_questions: int = 120, n_clusters: int = 6, seed: int = 3):
    """0/1 answers on clustered questions (few clusters, so warnings repeat per model)."""
    rng = np.random.default_rng(seed)
    cluster = np.arange(n_questions) % n_clusters
    frames = []
    for i in range(n_models):
        p = 0.4 + 0.1 * i + rng.normal(0, 0.15, n_clusters)[cluster]
        frames.append(pd.DataFrame({"model": f"m{i}", "question_id": [f"q{j}" for j in range(n_questions)],
                                    "cluster_id": [f"c{c}" for c in cluster],
                                    "score": (rng.random(n_questions) < np.clip(p, 0.02, 0.98)).astype(float)}))
    return bayeserr.load(pd.concat(frames, ignore_index=True), name="clustered.csv")


@pytest.fixture(scope="module")
def clustered():
    return _clustered_binary()


def test_dagger_note_only_when_a_column_carries_the_dagger(clustered):
    # default methods: no method column, so no "†" anywhere (the note used to be printed alone)
    page = bayeserr.report(clustered).to_html()
    assert "†" not in page
    # --methods all: exact intervals are marked, and the note explains the mark
    page = bayeserr.report(clustered, methods="all").to_html()
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", page)
    assert any(h.endswith("†") for h in heads)
    assert "<p class=\"note\">† assumes independent questions" in page


def test_dagger_note_dropped_from_a_table_without_marked_columns():
    cols = (Column("model", "Model", numeric=False), Column("score", "Score"))
    rows = ((Cell("text", "a"), Cell("pct", 0.5)),)
    notes = ("Scores in points.", "† assumes independent questions (not cluster-aware).")
    page = html_renderer.render_blocks([Table("models", "Models", cols, rows, notes)], title="t")
    assert "Scores in points." in page and "†" not in page
    marked = (cols[0], Column("wilson", "Wilson", mark=True))
    page = html_renderer.render_blocks([Table("models", "Models", marked, rows, notes)], title="t")
    assert "Wilson†" in page and "† assumes independent questions" in page


@pytest.fixture(scope="module")
def many_warnings():
    """16 models on 6 clusters: a warning per model, more models than a warning line names."""
    return bayeserr.report(_clustered_binary(n_models=16, n_questions=60))


def test_html_groups_warnings_as_the_other_formats(many_warnings):
    rep = many_warnings
    codes = [w.code for w in rep.warnings]
    assert max(codes.count(c) for c in codes) >= 16, codes  # few_clusters: one per model
    # the default grouping is not the one that lists everything (so the check below means something)
    assert doc.warning_items(rep.warnings) != doc.warning_items(rep.warnings, None)
    page = rep.to_html()
    warn = page[page.index("<h2>Warnings</h2>"):page.index("<h2>Rows</h2>")]
    shown = re.findall(r'<li><span class="code">\[([^\]]+)\]</span> ([^<]*)</li>', warn)
    expected = doc.warning_items(rep.warnings)  # the default grouping of every format
    assert [(code, html.unescape(text)) for code, text in shown] == [
        (code, html.unescape(html_renderer.esc(text))) for code, text in expected]
    assert len(shown) < len(rep.warnings)


def test_secondary_columns_fold_behind_a_css_toggle(clustered):
    rep = bayeserr.report(clustered, methods="all")
    page = rep.to_html()
    # one box per table with secondary columns, before the table it controls, in the same parent
    assert '<input type="checkbox" class="allcols" id="t-pairs-all">' in page
    assert '<label class="allcols" for="t-pairs-all">Show all columns (also n, SE unpaired' in page
    assert '<input type="checkbox" class="allcols" id="t-models-all">' in page
    # the rule hides exactly the secondary columns while the box is not ticked
    style = page[page.index("<style>"):page.index("</style>")]
    rule = next(sel for sel in re.findall(r"([^{}]*)\{display:none\}", style) if "#t-pairs-all" in sel)
    assert rule.startswith("#t-pairs-all:not(:checked)~.scroll #t-pairs th:nth-child(")
    pairs = [c.key for c in next(b for b in report_blocks(rep) if getattr(b, "key", "") == "pairs").columns]
    hidden = {pairs[int(j) - 1] for j in re.findall(r"#t-pairs th:nth-child\((\d+)\)", rule)}
    assert hidden == {pairs[int(j) - 1] for j in re.findall(r"#t-pairs td:nth-child\((\d+)\)", rule)}
    assert hidden == {"n", "se_unpaired", "se_paired", "se_paper", "rho", "wild", "mcnemar"} & set(pairs)
    assert "se_clustered" not in hidden and "ci" not in hidden  # the headline SE and the decisions stay
    # the fragment for Jupyter keeps the toggle working without the script, scoped to .bayeserr
    frag = rep._repr_html_()
    assert ".bayeserr #t-pairs-all:not(:checked)~.scroll #t-pairs" in frag and "<script" not in frag


def test_pair_label_keeps_the_minus_with_the_first_model():
    cell = Cell("pair", ("<b>a</b> model", "other"))
    out = html_renderer.cell_html(cell)
    assert out == "&lt;b&gt;a&lt;/b&gt; model&nbsp;− other"  # escaped; "−" never starts a line
