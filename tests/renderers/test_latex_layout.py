"""Issue 22, item 13 and the warnings: LaTeX tables go into a paper as they
are — captions say what Group / the rank intervals, C_eff, df, K and Method
mean; a wide table fits the text width in one piece (smaller type, columns
holding one value moved into the caption, optional columns left out and
named), never split sideways into "(continued)" parts; a pair label never
leaves its "−" alone on a line; warnings are grouped as in every format.

The pdflatex checks compile the real SWE-bench and LiveBench reports and
skip when pdflatex or the data files are absent; run with ``--basetemp DIR``
to keep the PDF pages (PNG) for a look.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.renderers import latex as latex_renderer
from bayeserr.reporting import document as doc
from bayeserr.reporting.tables import Cell, Column, Table

from ..conftest import real_file

PDFLATEX = shutil.which("pdflatex")
PDFTOPPM = shutil.which("pdftoppm")
PDFTOTEXT = shutil.which("pdftotext")
needs_tex = pytest.mark.skipif(PDFLATEX is None or PDFTOPPM is None or PDFTOTEXT is None,
                               reason="pdflatex/pdftoppm/pdftotext not installed (.ci/run installs TeX Live)")

DOCUMENT = r"""\documentclass{article}
\usepackage{%s}
\begin{document}
\input{%s}
\end{document}
"""


def tables_of(tex: str) -> list[str]:
    """The source of each table (float or longtable) of a LaTeX report, with the note a
    longtable has right after it."""
    return re.findall(r"\\begin\{(?:table\*?|longtable)\}.*?\\end\{(?:table\*?|longtable)\}"
                      r"(?:\n\\nopagebreak\{\\footnotesize.*?\\par\})?", tex, re.DOTALL)


def caption_of(src: str) -> str:
    """The caption and the note under the table (what the reader reads about it)."""
    m = re.search(r"\\caption\{(.*?)\}(?:\\label|\n\\label)", src, re.DOTALL)
    assert m, src[:500]
    note = re.search(r"\{\\footnotesize\\raggedright (.*?)\\par\}", src, re.DOTALL)
    return m.group(1) + (" " + note.group(1) if note else "")


def caption_only(src: str) -> str:
    return re.search(r"\\caption\{(.*?)\}(?:\\label|\n\\label)", src, re.DOTALL).group(1)


def compile_pdf(tex: str, tmp_path, name: str):
    """pdflatex twice with the packages the output asks for; returns the log,
    the PDF's text laid out as on the page, and the page images."""
    pkgs = re.search(r"% requires \\usepackage\{([^}]*)\}", tex).group(1)
    (tmp_path / f"{name}.tex").write_text(tex)
    (tmp_path / f"{name}-doc.tex").write_text(DOCUMENT % (pkgs, name))
    for _ in range(2):
        run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{name}-doc.tex"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    log = (tmp_path / f"{name}-doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    pdf = tmp_path / f"{name}-doc.pdf"
    subprocess.run([PDFTOPPM, "-r", "70", "-png", pdf, tmp_path / f"{name}-page"], check=True, timeout=300)
    pages = sorted(tmp_path.glob(f"{name}-page-*.png"))
    text = subprocess.run([PDFTOTEXT, "-layout", pdf, "-"], capture_output=True, text=True, check=True).stdout
    return log, text, pages


# ------------------------------------------------------------------ real reports through pdflatex
@pytest.mark.slow
@needs_tex
@pytest.mark.parametrize("name, extra", [
    ("swebench_verified_bashonly_per_instance.csv.gz", ()),
    ("livebench_20250113_per_question.csv.gz", ("--on-unpaired", "drop")),
], ids=["swebench", "livebench"])
def test_real_reports_compile_in_one_piece_with_explained_captions(name, extra, cli, tmp_path):
    path = real_file(name)
    res = cli("report", path, *extra, "--format", "latex")
    assert res.exit_code == 0, res.output
    tex = res.stdout
    log, text, pages = compile_pdf(tex, tmp_path, "report")
    assert pages and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pages)
    # every table fits the text width (no overfull line) and the page (no float too large)
    assert not re.search(r"^! ", log, re.MULTILINE) and "Float too large" not in log
    overfull = [float(x) for x in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert all(x <= 1.0 for x in overfull), overfull
    # one piece per table: a single header, never a sideways "(continued)" part
    found = tables_of(tex)
    assert len(found) == 3  # models, ranking, pairs
    assert r"\caption[]{(continued)}" not in tex and r"\midrule[\heavyrulewidth]" not in tex
    for src in found:
        assert src.count(r"\toprule") == (2 if "longtable" in src else 1)  # longtable: first head + repeat
        assert src.count(r"\caption{") == 1
    models, ranking, pairs = found
    # captions explain the columns, or give the single value they had
    cap = caption_of(models)
    for words in (r"$C_{\mathrm{eff}} = n^2/\sum_c n_c^2$", "df: Bell--McCaffrey", "$K$: answers per question",
                  "Method: the method of the interval column", "Clustered (CR2, t): "):
        assert words in cap, words
    cap = caption_of(ranking)
    for words in ("Rank interval: ", "Tied with best: "):
        assert words in cap, words
    cap = caption_of(pairs)
    for words in ("Verdict: ", "n.s.: not declared different", "$p$: two-sided"):
        assert words in cap, words
    # a pair label never leaves "−" alone on a line (in the source: no break before it; on the page)
    assert not re.search(r"\\allowbreak\{\}~\$-\$", tex)
    assert "−" in text and not [line for line in text.splitlines() if line.strip() in ("−", "-")]
    # paper-ready: captions of at most three lines, no line starting with a comma, no name broken
    # after the dot of a version number ("4." / "5") or at its hyphen ("GPT-" / "5")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*Table \d+: ", line):
            length = next(k for k, rest in enumerate(lines[i:] + [""]) if not rest.strip())
            assert length <= 3, lines[i:i + length]
    assert not [line for line in lines if line.lstrip().startswith(",")]
    # (a word too wide for the names column — over 20 characters without a space — may break
    # after a hyphen)
    long_runs = [w for m in bayeserr.load(path).coords["model"].values for w in str(m).split() if len(w) > 20]
    broken = [(a, b) for a, b in zip(lines, lines[1:])
              if re.search(r"\d\.$|[A-Za-z0-9]-$", a.rstrip()) and re.match(r"\s*[A-Za-z0-9]", b)]
    assert not [(a, b) for a, b in broken
                if not any(a.split()[-1] in w for w in long_runs)], broken


# ------------------------------------------------------------------ layout without TeX
def _long_named(n_models: int = 25, n_questions: int = 200, n_clusters: int = 10, seed: int = 1):
    """0/1 answers on clustered questions, long model names, the same questions for all."""
    rng = np.random.default_rng(seed)
    cluster = np.arange(n_questions) % n_clusters
    frames = []
    for i in range(n_models):
        p = np.clip(0.3 + 0.5 * i / n_models + rng.normal(0, 0.1, n_clusters)[cluster], 0.05, 0.95)
        frames.append(pd.DataFrame({"model": f"provider-model-{i:02d} (2025-08-07) (medium reasoning)",
                                    "question_id": [f"q{j}" for j in range(n_questions)],
                                    "cluster_id": [f"c{c}" for c in cluster],
                                    "score": (rng.random(n_questions) < p).astype(float)}))
    return bayeserr.load(pd.concat(frames, ignore_index=True), name="long.csv")


@pytest.fixture(scope="module")
def long_named():
    return _long_named()


@pytest.fixture(scope="module")
def long_tex(long_named):
    return bayeserr.report(long_named).to_latex()


@pytest.fixture(scope="module")
def long_all_tex(long_named):
    return bayeserr.report(long_named, methods="all").to_latex()


def test_wide_tables_are_never_split_sideways(long_tex, long_all_tex):
    for tex in (long_tex, long_all_tex):
        assert r"\caption[]{(continued)}" not in tex and r"\midrule[\heavyrulewidth]" not in tex
        for src in tables_of(tex):
            assert src.count(r"\caption{") == 1
            assert src.count(r"\toprule") == (2 if "longtable" in src else 1)
    # --methods all cannot fit 345 pt: the intervals left out are named, with how to choose them
    models = tables_of(long_all_tex)[0]
    cap = caption_of(models)
    assert "Left out to fit the page: " in cap and r"\texttt{--methods}" in cap
    left_out = cap[cap.index("Left out to fit the page: "):]
    for head in ("Wilson", "Jeffreys", "Agresti--Coull"):
        assert head in left_out or head in models.split(r"\caption{")[0]  # printed, or named as left out


def test_single_valued_columns_move_into_the_caption(long_tex):
    models = tables_of(long_tex)[0]
    head = models[models.index(r"\toprule"):models.index(r"\midrule")]
    cap = caption_of(models)
    # every model has n = 200, C = 10 and K = 1: said once in the caption, not in 25 rows
    assert r"\mbox{$n$ $= 200$}" in cap and r"\mbox{$C$ $= 10$}" in cap and r"\mbox{$K$ $= 1$}" in cap
    assert "$n$" not in head and "$K$" not in head
    assert "Score" in head and r"95\% interval" in head


def test_captions_say_what_each_column_means():
    tex = bayeserr.report(bayeserr.load(example_path())).to_latex()
    models, ranking, pairs, _ = tables_of(tex)  # and pass^k by model (3 samples per question)
    cap = caption_of(models)
    assert "Group: models sharing a letter cannot be told apart" in cap
    assert r"$C_{\mathrm{eff}} = n^2/\sum_c n_c^2$" in cap and "df: Bell--McCaffrey" in cap
    assert "$K$: answers per question" in cap and "Method: the method of the interval column" in cap
    assert "Clustered (CR2, t): Mean over a population of clusters" in cap
    cap = caption_of(ranking)
    assert "Rank interval: the model's own rank interval" in cap
    assert "Tied with best: in the confidence set for the best model" in cap
    assert "Ranks (all)" not in cap  # the simultaneous intervals: --rank-intervals simultaneous or both
    assert r"$P(\mathrm{best})$: posterior probability of being the best" in cap
    cap = caption_of(pairs)
    assert r"Diff.: $A - B$ in points" in cap and "Verdict: the model declared higher" in cap
    # the verdict names A or B (the pair column says which is which), so the column stays narrow
    rows = [line for line in pairs.splitlines() if " $-$ " in line and line.endswith("\\\\")]
    verdicts = {re.split(r" & ", line)[-2] for line in rows}
    assert verdicts <= {"A higher", "B higher", "n.s."} and len(rows) == 6


def test_dagger_explained_in_the_caption_when_a_column_carries_it(long_named):
    tex = bayeserr.report(long_named, methods="wilson,clustered").to_latex()
    cap = caption_of(tables_of(tex)[0])
    assert r"Wilson$^\dagger$" in tables_of(tex)[0] and r"$^\dagger$~Assumes independent questions" in cap
    tex = bayeserr.report(long_named).to_latex()
    assert r"\dagger" not in tex


def test_pair_label_keeps_its_minus_with_the_first_model():
    cell = Cell("pair", ("GPT-5 (2025-08-07) (medium reasoning)", "Claude 4 Sonnet (20250514)"))
    src = latex_renderer.cell_latex(cell, box=90.0)
    first, second = src.split(r"\newline")
    assert first.endswith("reasoning)~$-$")  # no break point between the name and its minus
    assert r"\allowbreak{}~$-$" not in src and "Claude 4 Sonnet" in second.replace(r"\allowbreak{}", "")
    # a method wraps at the space that balances its two lines
    src = latex_renderer.cell_latex(Cell("text", "Clustered (CR2, t)"), box=40.0, split=True)
    assert r"Clustered\newline (CR2," in src


def test_latex_groups_warnings_as_the_other_formats():
    # 16 models on 6 clusters: few_clusters for each, more models than a warning line names
    rep = bayeserr.report(_long_named(n_models=16, n_questions=60, n_clusters=6))
    assert doc.warning_items(rep.warnings) != doc.warning_items(rep.warnings, None)
    tex = rep.to_latex()
    shown = [line for line in tex.splitlines() if line.startswith("% warning [")]
    expected = [latex_renderer.comment(f"warning [{code}] {text}") for code, text in doc.warning_items(rep.warnings)]
    assert shown == expected and len(shown) < len(rep.warnings)


def test_render_table_keeps_a_given_caption_and_explains_on_request():
    cols = (Column("model", "Model", numeric=False), Column("K", "K", "$K$"))
    table = Table("models", "Models", cols, ((Cell("text", "a"), Cell("num", 1.0, digits=0)),), caption="Plain.")
    assert r"\caption{Plain.}" in latex_renderer.render_table(table)[0]
    src = latex_renderer.render_table(table, explain=True)[0]
    assert r"\caption{Plain.}" in src and r"\footnotesize\raggedright $K$: answers per question" in src


# ------------------------------------------------------------------ names outside Latin-1 (issue 30 item 17)
def test_names_outside_latin1_are_escaped():
    esc = latex_renderer.esc
    assert esc("Ωmega") == r"$\Omega$mega" and esc("λ-model") == r"$\lambda$-model"
    assert esc("模型") == "{[}U+6A21{]}{[}U+578B{]}" and esc("😀 bot") == "{[}U+1F600{]} bot"
    # the characters that make names look alike are shown, as in every format (issue 30 item 16)
    assert esc("e\u0301cole") == "e{[}U+0301{]}cole" and esc("a\u200db") == "a{[}U+200D{]}b"
    assert esc("\u00e9cole") == "école"
    assert all(ord(c) < 256 for c in esc("ℓ Ω 模 😀 Ꭰ"))


@pytest.mark.slow
@needs_tex
def test_report_with_names_outside_latin1_compiles(tmp_path):
    names = ["Ωmega-7B", "模型-一", "😀 bot", "e\u0301cole", "a\u200db-zwj", "ok"]
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"model": np.repeat(names, 40), "question_id": np.tile(range(40), len(names)),
                       "score": (rng.random(40 * len(names)) < 0.6).astype(int)})
    tex = bayeserr.report(bayeserr.load(df), bayes="off").to_latex()
    log, text, _ = compile_pdf(tex, tmp_path, "unicode")
    assert "[U+6A21]" in text and "mega-7B" in text and "cole" in text  # glyphs as pdftotext reads them
