"""Configuration is trusted only from where the user put it (issue 30 item 14):
the upward search stops at the repository or home folder, files another user
could have planted are ignored (and said so), and every file used is named in
the report."""

import json
import os

import pytest

from bayeserr.data import config
from bayeserr.examples import example_path


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """outer/bayeserr.toml above a repository repo/ (with .git) holding work/."""
    outer = tmp_path / "outer"
    work = outer / "repo" / "work"
    work.mkdir(parents=True)
    (outer / "repo" / ".git").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(work)
    return outer, work


def test_search_stops_at_the_repository_root(tree):
    outer, work = tree
    (outer / "bayeserr.toml").write_text("level = 0.5\n")
    assert config.find(work) == {}
    (outer / "repo" / "bayeserr.toml").write_text("level = 0.9\n")
    assert config.find(work) == {"bayeserr.toml": outer / "repo" / "bayeserr.toml"}


def test_a_file_writable_by_others_is_ignored_and_named(tree, cli):
    outer, work = tree
    planted = work / "bayeserr.toml"
    planted.write_text("where = ['model!=ckpt-0419']\nlevel = 0.5\n")
    os.chmod(planted, 0o666)
    cfg = config.read(work)
    assert cfg.files == {} and cfg.ignored == [(planted, "writable by every user")]
    res = cli("config")
    assert "ignored, not trusted" in res.output and "writable by every user" in res.output
    rep = json.loads(cli("report", example_path(), "--bayes", "off", "--format", "json").output)
    assert rep["level"] == 0.95 and rep["provenance"]["config_ignored"][0]["path"] == str(planted)
    md = " ".join(cli("report", example_path(), "--bayes", "off").output.split())
    assert f"Ignored, not trusted: {planted} (writable by every user)" in md


def test_a_file_owned_by_another_user_is_ignored(tree, monkeypatch):
    outer, work = tree
    path = work / "bayeserr.toml"
    path.write_text("level = 0.5\n")
    if os.geteuid() == 0:
        os.chown(path, 4242, 4242)  # another user's file
    else:
        monkeypatch.setattr(os, "geteuid", lambda: os.stat(path).st_uid + 1)  # we are someone else
    cfg = config.read(work)
    assert cfg.files == {} and "owned by another user" in cfg.ignored[0][1]


def test_the_files_used_are_named_in_every_report(tree, cli):
    outer, work = tree
    mine = work / "bayeserr.toml"
    mine.write_text("level = 0.9\n")
    os.chmod(mine, 0o644)
    rep = json.loads(cli("report", example_path(), "--bayes", "off", "--format", "json").output)
    assert rep["level"] == 0.9 and rep["provenance"]["config"][0]["path"] == str(mine)
    assert len(rep["provenance"]["config"][0]["sha256"]) == 64
    md = " ".join(cli("report", example_path(), "--bayes", "off").output.split())
    assert f"Settings from: {mine}" in md


def test_compare_and_gate_name_their_configuration_and_blame_it_not_a_flag(tree, cli):
    """Review of item 14: compare applied bayeserr.toml without naming it; gate said
    '--level must be …' for a level the user never typed."""
    _, work = tree
    (work / "bayeserr.toml").write_text("level = 0.8\n")
    res = cli("compare", example_path(), "ckpt-0426", "ckpt-0419", "--bayes", "off")
    text = " ".join(res.output.split())  # Markdown prose is wrapped
    assert res.exit_code == 0 and f"Settings from: {work / 'bayeserr.toml'}" in text.replace(" / ", "/")
    assert "80% CI" in text
    out = json.loads(cli("compare", example_path(), "ckpt-0426", "ckpt-0419", "--bayes", "off",
                         "--format", "json").output)
    assert [c["path"] for c in out["config"]] == [str(work / "bayeserr.toml")]
    res = cli("gate", example_path(), "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.05")
    assert f"settings from {work / 'bayeserr.toml'}" in " ".join(res.output.split())
    assert "80% lower bound" in res.output
    (work / "bayeserr.toml").write_text("level = 0.5\n")
    res = cli("gate", example_path(), "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.05")
    assert res.exit_code == 2 and f"comes from {work / 'bayeserr.toml'}, not from a flag" in " ".join(res.output.split())


def test_latex_names_the_configuration_too(tree, cli):
    _, work = tree
    (work / "bayeserr.toml").write_text("level = 0.8\n")
    res = cli("report", example_path(), "--bayes", "off", "--format", "latex")
    assert res.exit_code == 0 and f"% Settings from: {work / 'bayeserr.toml'}" in res.output


@pytest.mark.skipif(not hasattr(os, "lchown") or os.geteuid() != 0, reason="making another user's link needs root")
def test_a_symbolic_link_planted_by_another_user_is_ignored(tree):
    """Another user's bayeserr.toml link to a root-owned file was trusted: the check followed the link
    (issue 43, item 9). The link's owner is checked too."""
    outer, work = tree
    target = outer / "root-owned.toml"
    target.write_text("level = 0.5\n")
    os.chmod(target, 0o644)  # owned by root, not world-writable: trusted on its own
    link = work / "bayeserr.toml"
    link.symlink_to(target)
    assert config.read(work).files == {"bayeserr.toml": link}  # our own link: trusted
    os.lchown(link, 4242, 4242)
    cfg = config.read(work)
    assert cfg.files == {} and "a symbolic link made by another user (uid 4242)" in cfg.ignored[0][1]
