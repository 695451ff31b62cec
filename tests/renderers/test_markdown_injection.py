"""User text cannot make Markdown links, images or raw HTML, nor reverse or
break lines (issue 30 items 16 and 19)."""

import numpy as np
import pandas as pd

import bayeserr
from bayeserr.reporting.text import esc, plain


def test_links_images_and_html_are_escaped():
    assert esc("![x](https://evil.example/p.png)") == "![x\\](https://evil.example/p.png)"
    assert esc("[click](http://a)") == "[click\\](http://a)" and esc("[r][1]") == "[r\\][1]"
    assert esc("cut to [0, 1]") == "cut to [0, 1]"
    assert esc("<script>alert(1)</script>") == "\\<script>alert(1)\\</script>"
    assert esc("a|b`c") == "a\\|b\\`c"


def test_line_separators_are_spaces_and_bidi_controls_are_shown():
    """A bidi override cannot reverse the text around it, and is shown, not hidden (so
    'gpt\u202e4o' and 'gpt 4o' read differently in every table)."""
    assert plain("gpt\u202e4o") == "gpt{U+202E}4o" and plain("a\u2028b\u2029c") == "a b c"
    assert plain("x\u2066y\u2069") == "x{U+2066}y{U+2069}"


def test_look_alike_names_read_differently_in_tables_but_other_scripts_do_not_change():
    assert plain("cafe\u0301") == "cafe{U+0301}" and plain("caf\u00e9") == "caf\u00e9"
    assert plain("a\u200db") == "a{U+200D}b"
    for name in ("名前", "हिन्दी", "Ωmega", "naïve", "ok"):
        assert plain(name) == name


def test_a_report_with_hostile_names_has_no_live_markup():
    names = ["![p](https://evil.example/t.png)", "[x](javascript:alert(1))", "<img src=x>", "ok\u202eevil"]
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"model": np.repeat(names, 30), "question_id": np.tile(range(30), 4),
                       "score": (rng.random(120) < 0.6).astype(int)})
    md = bayeserr.report(bayeserr.load(df), bayes="off").to_markdown()
    assert "](https://evil" not in md.replace("\\](https://evil", "")
    assert "<img" not in md.replace("\\<img", "") and "\u202e" not in md
    assert "![p\\](https://evil.example/t.png)" in md


def test_power_with_an_impossibly_small_delta_is_an_input_error(cli):
    res = cli("power", "--delta", "1e-300", "--omega2", "0.1")
    assert res.exit_code == 2 and "too small to plan for" in res.output and "Traceback" not in res.output


def test_simulations_refuse_designs_without_two_questions_or_two_clusters(cli):
    res = cli("simulate", "coverage", "--n", "1")
    assert res.exit_code == 2 and "n must be a whole number in [2" in res.output
    res = cli("simulate", "coverage", "--n", "20", "--cluster-size", "50")
    assert res.exit_code == 2 and "fewer than two clusters" in res.output


def test_output_edge_cases(cli, tmp_path):
    """Issue 30 item 18: the bundled example is never overwritten, `-o dir/` is
    not a file named `dir`, and plot refuses an option it would ignore."""
    from bayeserr.examples import example_path
    before = example_path().read_bytes()
    res = cli("demo", "-o", example_path(), "--format", "md")
    assert res.exit_code == 2 and "input file" in res.output and example_path().read_bytes() == before
    res = cli("demo", "-o", f"{tmp_path}/newdir/")
    assert res.exit_code == 2 and "names a folder" in res.output and not (tmp_path / "newdir").exists()
    res = cli("plot", example_path(), "-o", tmp_path / "x.png", "--save-posterior", tmp_path / "post")
    assert res.exit_code == 2 and "saves no posterior" in res.output and not (tmp_path / "x.png").exists()


def test_long_model_names_are_cut_in_figures_only():
    """Issue 30 item 13: 3,000-character names made the heatmap's rotated
    labels take gigabytes; figures cut labels (distinct), tables keep names."""
    import time

    from bayeserr.renderers import plots
    names = ["x" * 2990 + f"-model-{i}" for i in range(4)]
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"model": np.repeat(names, 40), "question_id": np.tile(range(40), 4),
                       "score": (rng.random(160) < 0.6).astype(int)})
    rep = bayeserr.report(bayeserr.load(df))
    start = time.process_time()
    for kind in ("forest", "ranks", "heatmap", "pairs"):
        fig = plots.figure(rep, kind)
        labels = [line for ax in fig.axes for t in ax.get_yticklabels() + ax.get_xticklabels()
                  for line in t.get_text().split("\n") if line]
        assert labels and max(map(len, labels)) <= plots.MAX_LABEL + 12, kind  # + a score or " −" joiner
        plots.svg(fig)
    assert time.process_time() - start < 30
    assert names[0] in rep.to_markdown().replace("\\", "")


def test_a_terminal_without_utf8_gets_ascii_typography(tmp_path):
    """Issue 30 item 8: with stdout in cp1252 the report's own '−' and '–' crashed it."""
    import os
    import subprocess
    import sys

    from bayeserr.examples import example_path
    env = {**os.environ, "PYTHONIOENCODING": "cp1252"}
    res = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", str(example_path()), "--bayes", "off"],
                         capture_output=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr.decode("cp1252", "replace")
    out = res.stdout.decode("cp1252")
    assert "ckpt-0419 - baseline-v1" in out and "Traceback" not in out


def test_config_file_that_is_not_utf8_is_an_input_error(cli, tmp_path, monkeypatch):
    (tmp_path / "bayeserr.toml").write_bytes(b"level = 0.9\n# caf\xe9\n")
    monkeypatch.chdir(tmp_path)
    res = cli("config")
    assert res.exit_code == 2 and "not UTF-8" in res.output and "Traceback" not in res.output


def test_a_name_that_is_not_utf8_is_written_escaped(tmp_path):
    from bayeserr.base.output import write_atomic
    out = write_atomic(tmp_path / "r.md", "input: data-\udce9.csv\n")
    assert out.read_text(encoding="utf-8") == "input: data-\\udce9.csv\n"


def test_unwritable_cache_folder_is_replaced_before_arviz_is_imported(monkeypatch, tmp_path):
    """Issue 30 item 9: with a read-only $HOME ArviZ's import (PyMC's too) died
    creating ~/.cache/arviz; the cache moves to a temporary folder instead."""
    import os

    from bayeserr.models import diagnostics
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("PYTENSOR_FLAGS", raising=False)  # restored afterwards: the compile folder is set here
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).startswith(str(home)) else real_access(p, mode))
    diagnostics.writable_cache()
    cache = os.environ["XDG_CACHE_HOME"]
    assert not cache.startswith(str(home)) and real_access(cache, os.W_OK)
    monkeypatch.setattr(os, "access", real_access)
    monkeypatch.delenv("XDG_CACHE_HOME")
    diagnostics.writable_cache()  # a writable home: nothing changes
    assert "XDG_CACHE_HOME" not in os.environ


def test_names_that_look_alike_are_warned_about_and_written_apart(cli, tmp_path):
    """Issue 30 item 16: NFC vs NFD, a zero-width joiner and a bidi override make
    different models whose names are shown identically: one warning, in every
    format, writes each with its code points."""
    names = ["caf\u00e9", "cafe\u0301", "gpt\u202e4o", "gpt 4o", "a\u200db", "ab", "ok"]
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"model": np.repeat(names, 30), "question_id": np.tile(range(30), len(names)),
                       "score": (rng.random(30 * len(names)) < 0.6).astype(int)})
    rep = bayeserr.report(bayeserr.load(df), bayes="off")
    found = [w for w in rep.to_dict()["warnings"] if w["code"] == "look_alike_names"]
    assert len(found) == 1
    for shown in ("'cafe{U+0301}' vs 'caf{U+00E9}'", "'gpt{U+202E}4o' vs 'gpt 4o'", "'a{U+200D}b' vs 'ab'"):
        assert shown in found[0]["message"]
        for text in (rep.to_markdown(), rep.to_latex(), rep.to_html()):
            assert shown.replace("'", "") in text.replace("&#x27;", "'").replace("'", "").replace("\n  ", " ")
    assert "ok" not in found[0]["message"].split(":", 1)[1]
    # distinct-looking names (case differs, a real space) are not flagged
    plain_df = df.replace({"cafe\u0301": "Caf\u00e9", "gpt\u202e4o": "gpt4o", "a\u200db": "a b"})
    rep = bayeserr.report(bayeserr.load(plain_df), bayes="off")
    assert not [w for w in rep.to_dict()["warnings"] if w["code"] == "look_alike_names"]


def test_arena_markdown_has_no_live_markup_and_warns_about_look_alikes(cli, tmp_path):
    models = np.array(["<script>alert(1)</script>", "![p](https://e.x/t.png)", "caf\u00e9", "cafe\u0301"])
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 400)
    b = (a + rng.integers(1, 4, 400)) % 4
    votes = pd.DataFrame({"model_a": models[a], "model_b": models[b],
                          "winner": rng.choice(["model_a", "model_b", "tie"], 400)})
    votes.to_csv(tmp_path / "votes.csv", index=False)
    res = cli("arena", tmp_path / "votes.csv", "--format", "md")
    assert res.exit_code == 0, res.output
    assert "<script" not in res.output.replace("\\<script", "") and "](https" not in res.output.replace("\\](", "")
    assert "'cafe{U+0301}' vs 'caf{U+00E9}'" in res.output.replace("\n  ", " ")


def test_a_very_long_name_is_cut_in_the_html_page_and_whole_one_click_away():
    """Issue 30 item 13: a 10,000-character name filled the HTML tables and prose.
    Table cells show its first 60 characters and open to the whole name; prose
    shows the cut name with the whole one in its tooltip; short names are untouched."""
    import html as _html
    import re
    long = "Superlongname" * 800  # 10,400 characters
    names = [long, "gpt-4o", "claude"]
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"model": np.repeat(names, 60), "question_id": np.tile(range(60), 3),
                       "score": (rng.random(180) < 0.6).astype(int)})
    page = bayeserr.report(bayeserr.load(df), bayes="off").to_html(figures=False)
    whole = [m.start() for m in re.finditer(re.escape(long), page)]
    opened = re.findall(r'<details class="name"><summary>([^<]*)</summary>' + re.escape(long) + "</details>",
                        page)
    tips = re.findall(r'<span title="' + re.escape(long) + r'">([^<]*)</span>', page)
    assert opened and all(s == _html.escape(long[:60]) + "… (10,400 characters)" for s in opened)
    assert tips and set(tips) == {long[:60] + "…"}
    assert len(whole) == len(opened) + len(tips)  # every full occurrence is folded or a tooltip
    assert "<td>gpt-4o</td>" in page and "gpt-4o" in page


def test_letters_of_other_scripts_drawn_like_latin_ones_are_look_alikes():
    """A Cyrillic о, a Greek Ο and a non-breaking hyphen (U+2011) draw like o, O and '-':
    such names are grouped with their Latin twin (a part of UTS #39's confusables), while
    names in another script that look different (модель, 通义千问) and 0/O are not."""
    from bayeserr.base.names import codepoints, look_alike
    names = ["gpt-4o", "gpt-4\u043e", "gpt\u20114o", "\u039fpus", "Opus", "\u043c\u043e\u0434\u0435\u043b\u044c",
             "model", "\u901a\u4e49\u5343\u95ee", "Qwen", "Qwen-0", "Qwen-O", "a\u2014b", "a-b"]
    assert look_alike(names) == [("gpt-4o", "gpt-4\u043e", "gpt\u20114o"), ("\u039fpus", "Opus")]
    assert [codepoints(n) for n in look_alike(names)[0]] == ["gpt-4o", "gpt-4{U+043E}", "gpt{U+2011}4o"]
