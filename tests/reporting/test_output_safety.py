"""Output never loses data and user text never becomes markup: inputs are
never overwritten, failed writes change nothing and say why, posterior files
cannot collide, names are escaped in every format, and the same data in any
row order gives the same report."""

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.examples import example_path

HOSTILE = ["gpt|4", "a\nb # heading", "<script>alert(1)</script>", "\x1b]0;pwn\x07x\x1b[31m",
           r"$\input{/etc/hostname}$", "50%_&#x", "gpt/4", "gpt_4", "gpt 4"]


@pytest.fixture
def hostile_csv(tmp_path):
    rng = np.random.default_rng(3)
    rows = [{"model": m, "question_id": f"q{i}", "cluster_id": f"c{i % 4}", "score": int(rng.random() < 0.6)}
            for m in HOSTILE for i in range(24)]
    path = tmp_path / "hostile.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_refuses_to_overwrite_the_input(tmp_path, cli):
    path = tmp_path / "r.csv.gz"
    path.write_bytes(example_path().read_bytes())
    before = path.read_bytes()
    res = cli("report", path, "-o", path)
    assert res.exit_code == 2 and "input file" in res.output and "Traceback" not in res.output
    assert path.read_bytes() == before
    link = tmp_path / "link.md"
    link.symlink_to(path)
    assert cli("report", path, "-o", link).exit_code == 2 and path.read_bytes() == before


@pytest.mark.parametrize("target", ["nodir/x.md", "/dev/full"])
def test_failed_writes_are_clear_errors(tmp_path, cli, target):
    out = tmp_path / target if not target.startswith("/") else target
    res = cli("demo", "-o", out)
    assert res.exit_code == 2 and "error:" in res.output and "Traceback" not in res.output


def test_failed_write_leaves_the_old_file_intact(tmp_path, cli, monkeypatch):
    out = tmp_path / "r.md"
    out.write_text("old report")

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    res = cli("demo", "-o", out)
    assert res.exit_code == 2 and "No space left" in res.output
    assert out.read_text() == "old report" and os.listdir(tmp_path) == ["r.md"]


def test_existing_output_is_replaced_atomically(tmp_path, cli):
    out = tmp_path / "r.md"
    out.write_text("old")
    assert cli("demo", "-o", out).exit_code == 0
    assert out.read_text().startswith("# bayeserr report")


def test_posterior_files_cannot_collide(hostile_csv, tmp_path, cli):
    folder = tmp_path / "post"
    res = cli("report", hostile_csv, "--save-posterior", folder)
    assert res.exit_code == 0, res.output
    index = json.loads((folder / "index.json").read_text())["posteriors"]
    files = [e["file"] for e in index]
    assert len(set(files)) == len(files) == len(list(folder.glob("*.nc")))
    assert {e["model"] for e in index} == set(HOSTILE)


def test_markdown_escapes_names(hostile_csv, cli):
    md = cli("report", hostile_csv).stdout
    assert "\x1b" not in md and "\x07" not in md
    assert re.search(r"(?<!\\)<script>", md) is None  # escaped as \<script>: shown, never run
    cells = lambda line: len(re.findall(r"(?<!\\)\|", line))  # noqa: E731  unescaped separators
    for table in re.split(r"\n(?!\|)", md):
        lines = [line for line in table.splitlines() if line.startswith("|")]
        # every row of a table has as many cells as its header: names cannot add columns
        assert len({cells(line) for line in lines}) <= 1, lines
    models = [line for line in md.splitlines() if re.match(r"^\| .* \| \d+\.\d \(\d+\.\d\) \| 24 \|", line)]
    assert len(models) == len(HOSTILE)
    assert not any(line.startswith("# heading") for line in md.splitlines())


def test_latex_neutralises_names_and_paths(hostile_csv, tmp_path, cli):
    odd = tmp_path / "x\n\\input{evil}.csv"
    odd.write_bytes(hostile_csv.read_bytes())
    tex = cli("report", odd, "--format", "latex").stdout
    for line in tex.splitlines():  # the path, newline and all, stays inside one comment line
        assert ("evil" not in line and "hostname" not in line) or line.startswith("%") or \
            r"\textbackslash{}input\{" in line
    assert "% Rows read:" in tex and "% warning [" in tex  # rows and warnings in every format


def test_html_and_figures_take_names_as_text(hostile_csv, tmp_path, cli):
    page = tmp_path / "r.html"
    assert cli("report", hostile_csv, "--format", "html", "-o", page).exit_code == 0
    html = page.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert cli("plot", hostile_csv, "--kind", "posterior", "-o", tmp_path / "p.png").exit_code == 0


def test_html_and_svg_are_byte_identical_across_runs(tmp_path, cli):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert cli("demo", "--format", "html", "-o", a).exit_code == 0
    assert cli("demo", "--format", "html", "-o", b).exit_code == 0
    strip = lambda s: re.sub(r'"created": "[^"]*"', "", s)  # noqa: E731
    assert strip(a.read_text()) == strip(b.read_text())
    s1, s2 = tmp_path / "a.svg", tmp_path / "b.svg"
    for s in (s1, s2):
        assert cli("plot", example_path(), "--kind", "forest", "-o", s).exit_code == 0
    assert s1.read_bytes() == s2.read_bytes()


def test_shuffled_rows_give_the_same_report(tmp_path, cli_json):
    df = pd.read_csv(example_path())
    shuffled = tmp_path / "shuffled.csv"
    df.sample(frac=1, random_state=5).to_csv(shuffled, index=False)
    straight = tmp_path / "straight.csv"
    df.to_csv(straight, index=False)
    a = cli_json("report", straight)
    b = cli_json("report", shuffled)
    a.pop("provenance"), b.pop("provenance")
    assert a == b


def test_api_misuse_raises_input_error():
    ds = bayeserr.load(example_path())
    with pytest.raises(bayeserr.InputError, match="not in the data"):
        bayeserr.score(ds, models=["Z"])
    with pytest.raises(bayeserr.InputError, match="bayeserr.load"):
        bayeserr.report(ds["score"])
    with pytest.raises(bayeserr.InputError, match="level"):
        bayeserr.report(ds, level=1.5)
    with pytest.raises(bayeserr.InputError, match="bayes"):
        bayeserr.compare_all(ds, bayes="maybe")
