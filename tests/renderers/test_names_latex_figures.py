"""Hostile model names in the LaTeX tables and in
the figures.

(A) The LaTeX of a report compiles with pdflatex whatever the names: names
beyond Latin-1 on the path that wraps long names, a name starting with "["
(read as the optional argument of ``\\midrule`` or ``\\\\``), a
10,000-character name (cut in captions and cells, given in full in comments).

(B) Figure labels stay short and distinct: two 3,003-character names that
differ only in the middle were grown back to full length to keep them apart
(the heatmap took 24 s and 3.4 GB); every figure kind cuts names by one rule.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.renderers import latex as latex_renderer
from bayeserr.renderers import plots

PDFLATEX = shutil.which("pdflatex")
needs_tex = pytest.mark.skipif(PDFLATEX is None, reason="pdflatex not installed")

PREAMBLE = (r"\documentclass{article}\usepackage[T1]{fontenc}\usepackage[utf8]{inputenc}"
            r"\usepackage{booktabs,array,graphicx,longtable}\begin{document}")


def frame(names, questions: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"model": np.repeat(names, questions),
                         "question_id": np.tile(range(questions), len(names)),
                         "score": (rng.random(questions * len(names)) < 0.6).astype(int)})


def latex_of(names) -> str:
    return bayeserr.report(bayeserr.load(frame(names)), bayes="off").to_latex()


def compiles(tex: str, tmp_path) -> tuple[int, str]:
    """pdflatex's exit code and its error lines for ``tex`` in a T1/utf8 article."""
    (tmp_path / "doc.tex").write_text(PREAMBLE + "\n" + tex + "\n\\end{document}\n", encoding="utf-8")
    run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, timeout=300, check=False)
    out = run.stdout.decode("utf-8", "replace")
    return run.returncode, "\n".join(line for line in out.splitlines() if line.startswith("!"))


HOSTILE = {
    # a long name sends every name through the wrapping path, which skipped the escaping
    "unicode-wrapped": ["Ω", "名前", "🚀", "a\u200db", "m" * 48],
    "unicode-wrapped-pairs": ["Ωmega-" + "x" * 40, "名前-" + "y" * 40, "🚀 rocket", "e\u0301cole-a\u200db"],
    # "[" at the start of a row's first cell: \midrule / \\ read it as an optional argument
    "bracket": ["[beta] model-x", "alpha", "[x]", "*star"],
    # a 10,000-character name: "Dimension too large" in the ranking caption
    "very-long": ["z" * 10000, "small"],
    "very-long-words": ["word " * 3000, "名" * 500, "[" + "q" * 9000],
}


@needs_tex
@pytest.mark.parametrize("names", HOSTILE.values(), ids=HOSTILE.keys())
def test_latex_compiles_with_hostile_names(names, tmp_path):
    tex = latex_of(names)
    rc, errors = compiles(tex, tmp_path)
    assert rc == 0, errors


def test_wrapped_names_are_escaped_like_the_others():
    tex = latex_of(["Ω", "名前", "🚀", "a\u200db", "m" * 48])
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    assert all(ord(ch) < 256 or ch in "…" for ch in body), sorted({ch for ch in body if ord(ch) >= 256})
    assert "{[}U+540D{]}" in body and r"$\Omega$" in body and "\u200d" not in body


def test_a_cell_starting_with_a_bracket_or_star_is_protected():
    """A "[" after \\midrule or \\\\ is read as their optional argument, a "*" after \\\\ as its star."""
    tex = latex_of(["[beta] model-x", "*star", "alpha"])
    rows = [line for line in tex.splitlines() if ("beta" in line or "star" in line) and "&" in line]
    assert rows and not any(re.match(r"\s*[\[*]", line) for line in rows), rows
    assert not re.search(r"(\\\\(\[2pt\])?|\\midrule)\s*(\[beta\]|\*star)", tex)


def test_very_long_names_are_cut_in_captions_and_cells_and_given_in_full_in_comments():
    twins = ["w" * 5000 + "A" + "w" * 5000, "w" * 5000 + "B" + "w" * 5000]
    tex = latex_of([*twins, "small"])
    body = [line for line in tex.splitlines() if not line.startswith("%")]
    assert max(map(len, body)) < 5000
    assert not re.search("w{200}", "\n".join(body))
    assert "10,001 characters" in tex
    cut = {latex_renderer.short_name(n) for n in twins}
    assert len(cut) == 2  # the cut names stay apart (a tag from the whole name)
    comments = "".join(line[2:] for line in tex.splitlines() if line.startswith("% "))
    assert all(n in comments for n in twins)  # in full, on comment lines TeX can read
    assert max(map(len, tex.splitlines())) <= latex_renderer.COMMENT_WIDTH + 2


# ------------------------------------------------------------------ figures
TWINS = ["x" * 1500 + "A" + "x" * 1502, "x" * 1500 + "B" + "x" * 1502]  # 3,003 characters each
ORDINARY = "GPT-5 mini (2025-08-07) (medium reasoning)"


@pytest.fixture(scope="module")
def twin_report():
    """Twin names; the first 20 questions also carry a human label (the score itself), so the
    judge figure draws them too."""
    df = frame([*TWINS, ORDINARY], seed=3)
    df["human"] = np.where(df.question_id < 20, df.score, np.nan)
    return bayeserr.report(bayeserr.load(df, human_col="human"))


def _labels(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.get_yticklabels() + ax.get_xticklabels()
            if t.get_text()]


def _name_parts(label: str) -> list[str]:
    """The names of a tick label ("A −" over "B", or "A − B", in the pairs figure)."""
    return [p for line in label.split("\n") for p in re.split(r" −(?: |$)", line) if p]


def test_short_names_stay_bounded_and_distinct():
    short = plots.short_names(TWINS, plots.MAX_LABEL)
    assert len(set(short.values())) == 2
    assert all(len(s) <= plots.MAX_LABEL for s in short.values())
    many = ["y" * 2000 + f"{i:03d}" + "y" * 2000 for i in range(50)]
    short = plots.short_names(many, 20)
    assert len(set(short.values())) == 50 and all(len(s) <= 20 for s in short.values())


def test_every_figure_cuts_twin_names_short_and_distinct(twin_report):
    """Labels at most MAX_LABEL + 8 characters (the ranks figure adds the score),
    distinct, and cheap to draw, in every figure kind."""
    problems = {}
    for kind in plots.KINDS:
        fig = plots.figure(twin_report, kind)
        assert not isinstance(fig, plots.Blank), kind
        labels = _labels(fig)
        names = [p for label in labels for p in _name_parts(label) if p.startswith("x")]
        axis_labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        if not names or max(map(len, names)) > plots.MAX_LABEL + 8:
            problems[kind] = f"longest label {max(map(len, names), default=0)}"
        elif len(set(axis_labels)) != len(axis_labels):
            problems[kind] = f"labels repeat: {axis_labels}"
        elif kind != "pairs" and len({label for label in axis_labels if label.startswith("x")}) != 2:
            problems[kind] = f"the twins are not both shown apart: {axis_labels}"
        elif len(plots.svg(fig)) > 3_000_000:
            problems[kind] = "SVG over 3 MB"
    assert not problems, problems


def test_every_figure_cuts_a_name_the_same_way(twin_report):
    """One cut rule (short_names at MAX_LABEL): the ranks figure adds the score
    after the cut name, the judge figure the number of labels; the pairs figure, two names a row, may cut shorter but
    tags the twins as every figure does."""
    short = plots.short_names(TWINS, plots.MAX_LABEL)
    tags = {s.rsplit(" ", 1)[-1] for s in short.values()}
    assert len(tags) == 2 and all(t.startswith("#") for t in tags)
    problems = {}
    for kind in plots.KINDS:
        parts = {re.sub(r" +\(\d+(\.\d)?\)$", "", p) for label in _labels(plots.figure(twin_report, kind))
                 for p in _name_parts(label) if p.startswith("x")}
        if kind == "pairs":
            if {p.rsplit(" ", 1)[-1] for p in parts} != tags:
                problems[kind] = parts
        elif parts != set(short.values()):
            problems[kind] = parts
    assert not problems, problems


def test_an_ordinary_name_is_shown_in_full_in_every_figure(twin_report):
    """The posterior figure cut "GPT-5 mini (2025-08… (medium reasoning)" that the others show in full."""
    cut = [kind for kind in ("forest", "ranks", "heatmap", "posterior")
           if not any(label.startswith(ORDINARY) for label in _labels(plots.figure(twin_report, kind)))]
    assert not cut, cut


# ------------------------------------------------------------------ characters the default font lacks
CJK = ["通义千问-2.5", "模型B", "gpt-x"]


def _glyph_warnings(caught) -> list:
    return [w for w in caught if "missing from font" in str(w.message)]


def test_characters_no_font_has_give_one_note_not_a_warning_per_glyph(monkeypatch, tmp_path, cli):
    """No fallback font installed (forced): the CJK characters of the names are drawn as
    boxes, and the HTML figure, ``plots.save`` and ``bayeserr plot`` say so once, naming
    the characters, instead of matplotlib's warning per glyph and draw (30 lines for three
    names before); other warnings still pass."""
    import warnings
    monkeypatch.setattr(plots, "FALLBACK_FONTS", ())
    rep = bayeserr.report(bayeserr.load(frame(CJK)), bayes="off")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        markup = plots.svg(plots.figure(rep, "forest"))
        notes: list = []
        plots.save(plots.figure(rep, "ranks"), tmp_path / "ranks.png", notes)
    assert not _glyph_warnings(caught)
    expected = "6 characters of the names (义 千 型 模 通 问) are drawn as boxes"
    assert expected in markup and markup.count("drawn as boxes") == 1
    assert len(notes) == 1 and expected in notes[0] and "Noto Sans CJK" in notes[0]
    path = tmp_path / "cjk.csv"
    frame(CJK).to_csv(path, index=False)
    res = cli("plot", path, "-o", tmp_path / "f.svg", "--kind", "forest")
    assert res.exit_code == 0 and f"note: {expected}" in res.output, res.output
    with pytest.warns(UserWarning, match="not about glyphs"):
        with plots.drawing(set()):
            warnings.warn("not about glyphs", UserWarning)


def test_an_installed_fallback_font_draws_what_the_default_font_lacks(monkeypatch):
    """The fallback chain works glyph by glyph: a character the default font lacks and
    matplotlib's own STIXGeneral has (ℊ, U+210A, with matplotlib's DejaVu Sans; found by
    search where the system's default font differs) is drawn with no note once STIXGeneral
    is in FALLBACK_FONTS, and is reported missing without it; the user's ``font.family``
    comes first."""
    from matplotlib import font_manager, ft2font

    def font(family):
        return ft2font.FT2Font(font_manager.findfont(font_manager.FontProperties(family=[family])))

    default, stix = font("sans-serif"), font("STIXGeneral")
    lacking = next((chr(cp) for cp in range(0x2100, 0x2C00)
                    if stix.get_char_index(cp) and not default.get_char_index(cp)), None)
    if lacking is None:
        pytest.skip("the default font has every character STIXGeneral has here")
    rep = bayeserr.report(bayeserr.load(frame([f"model {lacking}", "other"])), bayes="off")
    monkeypatch.setattr(plots, "FALLBACK_FONTS", ("STIXGeneral",))
    assert plots._font_family()[-1] == "STIXGeneral"
    assert "drawn as boxes" not in plots.svg(plots.figure(rep, "forest"))
    monkeypatch.setattr(plots, "FALLBACK_FONTS", ())
    assert f"1 character of the names ({lacking}) is drawn as boxes" in plots.svg(plots.figure(rep, "forest"))


def test_the_note_on_missing_characters_names_a_font_for_them():
    """The advice fits the characters: Noto Sans CJK for Chinese, Japanese or Korean, a black
    and white emoji font for emoji (matplotlib draws no colour emoji, and a font it is not
    told to try is never used: both are in FALLBACK_FONTS); before, an emoji-only note
    advised Noto Sans CJK."""
    assert {"Noto Emoji", "Symbola"} <= set(plots.FALLBACK_FONTS)
    emoji = plots.missing_note({"🚀", "🤖"})
    assert "Noto Emoji or Symbola" in emoji and "CJK" not in emoji
    cjk = plots.missing_note({"模", "한", "カ"})
    assert "Noto Sans CJK" in cjk and "Emoji" not in cjk
    both = plots.missing_note({"模", "🔥"})
    assert "Noto Sans CJK" in both and "Noto Emoji" in both
    assert plots.missing_note(set()) is None


def test_an_html_page_gives_the_note_on_missing_characters_once(monkeypatch):
    """Five figures draw the same names: the page says once which characters are boxes."""
    monkeypatch.setattr(plots, "FALLBACK_FONTS", ())
    page = bayeserr.report(bayeserr.load(frame(CJK))).to_html()
    assert page.count("drawn as boxes in the figure") == 1


@needs_tex
def test_chinese_and_japanese_names_break_inside_their_columns(tmp_path):
    """Characters written out as [U+XXXX] count as the eight characters they become and a
    line breaks before one that would overflow its column: a review's 25-model file had
    a table cell 79.6 pt too wide (no break point in 日本語モデル); now no box is overfull."""
    names = ["通义千问 Qwen-Max 大模型", "文心一言 4.0", "日本語モデル ELYZA-7B", "カナ テスト モデル",
             "한국어 모델 HyperCLOVA X", "gpt-4o"]
    tex = latex_of(names)
    (tmp_path / "doc.tex").write_text(PREAMBLE + "\n" + tex + "\n\\end{document}\n", encoding="utf-8")
    subprocess.run([PDFLATEX, "-interaction=nonstopmode", "doc.tex"], cwd=tmp_path, capture_output=True,
                   timeout=300, check=False)
    log = (tmp_path / "doc.log").read_text(encoding="utf-8", errors="replace")
    assert "Output written" in log and "Overfull \\hbox" not in log, [
        line for line in log.splitlines() if "Overfull" in line]
