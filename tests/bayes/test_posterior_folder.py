"""``--save-posterior`` writes its folder as a whole (issue 30 item 5): staged
beside the target and renamed into place, with the umask's permissions, no
stale file of an earlier run, a folder that is not bayeserr's refused, and an
interrupt or failure (SIGTERM included) leaving nothing behind — the report
included, since everything that can fail happens before either is written."""

import json
import os
import signal

import pytest

from bayeserr.base.output import StagedFolder
from bayeserr.bayes.saving import is_posterior_folder
from bayeserr.examples import example_path


@pytest.fixture
def umask():
    """Set a umask for one test; the old one is put back."""
    before = os.umask(0o022)
    os.umask(before)
    yield lambda mask: os.umask(mask)
    os.umask(before)


@pytest.fixture
def handlers():
    """SIGINT raises KeyboardInterrupt and SIGTERM is the command line's (as ``run()`` sets it)."""
    from bayeserr.cli.app import _terminate
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    yield
    for s, h in before.items():
        signal.signal(s, h)


def _mode(path):
    return os.stat(path).st_mode & 0o777


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_folder_and_files_follow_the_umask(cli, tmp_path, umask, mask):
    umask(mask)
    post = tmp_path / "post"
    res = cli("report", example_path(), "--save-posterior", post, "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    assert _mode(post) == 0o777 & ~mask
    files = sorted(os.listdir(post))
    assert "index.json" in files and any(f.endswith(".nc") for f in files)
    assert {f: _mode(post / f) for f in files} == {f: 0o666 & ~mask for f in files}
    assert _mode(tmp_path / "r.md") == 0o666 & ~mask
    assert sorted(os.listdir(tmp_path)) == ["post", "r.md"]  # no staging folder left


def test_rerun_replaces_the_folder_without_stale_files(cli, tmp_path):
    post = tmp_path / "post"
    assert cli("report", example_path(), "--save-posterior", post).exit_code == 0
    first = set(os.listdir(post))
    res = cli("report", example_path(), "--models", "ckpt-0419", "--save-posterior", post)
    assert res.exit_code == 0, res.output
    index = json.loads((post / "index.json").read_text())["posteriors"]
    assert {e["model"] for e in index} == {"ckpt-0419"}
    assert set(os.listdir(post)) == {e["file"] for e in index} | {"index.json"}
    assert len(first) > len(os.listdir(post))  # the other models' files are gone
    assert sorted(os.listdir(tmp_path)) == ["post"]


def test_an_empty_folder_is_filled(cli, tmp_path):
    (tmp_path / "post").mkdir()
    assert cli("report", example_path(), "--save-posterior", tmp_path / "post").exit_code == 0
    assert is_posterior_folder(tmp_path / "post")


@pytest.mark.parametrize("setup", ["other_files", "extra_file_in_ours", "a_file"])
def test_a_folder_that_is_not_ours_is_refused_before_anything_is_written(cli, tmp_path, setup):
    post = tmp_path / "post"
    if setup == "a_file":
        post.write_text("mine")
    else:
        post.mkdir()
        if setup == "other_files":
            (post / "notes.txt").write_text("mine")
        else:
            (post / "index.json").write_text(json.dumps({"posteriors": [{"file": "model-0000.x.nc"}]}))
            (post / "model-0000.x.nc").write_text("x")
            (post / "thesis.tex").write_text("mine")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    out = tmp_path / "r.md"
    res = cli("report", example_path(), "--save-posterior", post, "-o", out)
    assert res.exit_code == 2 and "--save-posterior" in res.output  # a file: click's own check
    assert "Traceback" not in res.output
    assert ("not empty" in res.output) if setup != "a_file" else ("is a file" in res.output)
    assert not out.exists()
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_an_input_folder_is_refused(cli, tmp_path):
    import shutil
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(example_path(), src / "eval.csv.gz")
    res = cli("report", src, "--save-posterior", src)
    assert res.exit_code == 2 and "input" in res.output
    assert os.listdir(src) == ["eval.csv.gz"]


def test_sigterm_while_writing_leaves_nothing(cli, tmp_path, monkeypatch, handlers):
    """SIGTERM after the first netCDF file: exit 143, one line, no report, no folder,
    no staging folder."""
    from bayeserr.models import compat
    real = compat.to_netcdf
    calls = []

    def to_netcdf(idata, path):
        calls.append(path)
        real(idata, path)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGTERM)
    monkeypatch.setattr(compat, "to_netcdf", to_netcdf)
    out = tmp_path / "r.md"
    res = cli("report", example_path(), "--save-posterior", tmp_path / "post", "-o", out)
    assert res.exit_code == 143, res.output
    assert res.output.strip() == "terminated: nothing was written."
    assert len(calls) == 1 and os.listdir(tmp_path) == []


def test_sigterm_keeps_the_previous_folder_whole(cli, tmp_path, monkeypatch, handlers):
    from bayeserr.models import compat
    post = tmp_path / "post"
    assert cli("report", example_path(), "--save-posterior", post).exit_code == 0
    before = {f: (post / f).read_bytes() for f in os.listdir(post)}

    def to_netcdf(idata, path):
        signal.raise_signal(signal.SIGTERM)
    monkeypatch.setattr(compat, "to_netcdf", to_netcdf)
    res = cli("report", example_path(), "--models", "ckpt-0419", "--save-posterior", post)
    assert res.exit_code == 143
    assert {f: (post / f).read_bytes() for f in os.listdir(post)} == before
    assert os.listdir(tmp_path) == ["post"]


def test_a_failed_netcdf_write_writes_no_report(cli, tmp_path, monkeypatch):
    from bayeserr.models import compat

    def full_disk(idata, path):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(compat, "to_netcdf", full_disk)
    out = tmp_path / "r.md"
    res = cli("report", example_path(), "--save-posterior", tmp_path / "post", "-o", out)
    assert res.exit_code == 2 and "No space left on device" in res.output
    assert os.listdir(tmp_path) == []


def test_compare_writes_an_index_and_refuses_impossible_folders(cli, tmp_path):
    post = tmp_path / "cmp"
    res = cli("compare", example_path(), "ckpt-0419", "ckpt-0426", "--no-cluster", "--save-posterior", post)
    assert res.exit_code == 0, res.output
    index = json.loads((post / "index.json").read_text())["posteriors"]
    assert [e["model"] for e in index] == ["ckpt-0419 − ckpt-0426"]
    assert set(os.listdir(post)) == {index[0]["file"], "index.json"}
    for bad in ("/proc/x", "/proc/self/status", "/proc/1/x/y"):  # not creatable; a file; no folder
        res = cli("compare", example_path(), "ckpt-0419", "ckpt-0426", "--no-cluster", "--save-posterior", bad)
        assert res.exit_code == 2 and "--save-posterior" in res.output, res.output
        assert "Traceback" not in res.output


def test_compare_without_draws_says_so(cli, tmp_path):
    res = cli("compare", example_path(), "ckpt-0419", "ckpt-0426", "--bayes", "off",
              "--save-posterior", tmp_path / "p")
    assert res.exit_code == 2 and "no posterior" in res.output and os.listdir(tmp_path) == []
    # clustered: the exact quadrature posterior has no draws (it used to be skipped silently)
    res = cli("compare", example_path(), "ckpt-0419", "ckpt-0426", "--save-posterior", tmp_path / "p")
    assert res.exit_code == 2 and "--bayes mcmc" in res.output and os.listdir(tmp_path) == []


def test_signals_are_held_while_outputs_are_put_in_place(handlers):
    from bayeserr.cli.app import signals_held
    done = []
    with pytest.raises(KeyboardInterrupt):
        with signals_held():
            signal.raise_signal(signal.SIGTERM)
            done.append("report")
            done.append("folder")
    assert done == ["report", "folder"]


def test_staged_folder_needs_commit(tmp_path):
    with StagedFolder(tmp_path / "a" / "b", lambda p: False) as staged:
        (staged.path / "f").write_text("x")
        assert staged.path.parent == tmp_path  # staged in the nearest existing folder
    assert os.listdir(tmp_path) == []
    with StagedFolder(tmp_path / "a" / "b", lambda p: False) as staged:
        (staged.path / "f").write_text("x")
        staged.commit()
    assert (tmp_path / "a" / "b" / "f").read_text() == "x"
    assert os.listdir(tmp_path) == ["a"]


def test_the_report_may_not_go_inside_the_posterior_folder(cli, tmp_path):
    """Review: -o inside (or at) the --save-posterior folder was written, then deleted
    when the folder was replaced (exit 0)."""
    (tmp_path / "out").mkdir()
    for output, folder in ((tmp_path / "out" / "r.html", tmp_path / "out"), (tmp_path / "pp", tmp_path / "pp")):
        res = cli("report", example_path(), "--save-posterior", folder, "-o", output)
        assert res.exit_code == 2 and "--save-posterior folder" in res.output
    assert sorted(os.listdir(tmp_path)) == ["out"] and os.listdir(tmp_path / "out") == []


def test_a_link_to_the_folder_is_followed_and_kept(cli, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert cli("report", example_path(), "--save-posterior", tmp_path / "link").exit_code == 0
    assert cli("report", example_path(), "--models", "ckpt-0419", "--save-posterior", tmp_path / "link").exit_code == 0
    assert (tmp_path / "link").is_symlink() and is_posterior_folder(tmp_path / "real")
    index = json.loads((tmp_path / "real" / "index.json").read_text())["posteriors"]
    assert {e["model"] for e in index} == {"ckpt-0419"}
    assert sorted(os.listdir(tmp_path)) == ["link", "real"]


def test_a_private_folder_stays_private(cli, tmp_path, umask):
    umask(0o022)
    post = tmp_path / "post"
    assert cli("report", example_path(), "--save-posterior", post).exit_code == 0
    os.chmod(post, 0o700)
    assert cli("report", example_path(), "--save-posterior", post).exit_code == 0
    assert _mode(post) == 0o700


def test_outputs_written_into_a_log_folder_do_not_block_the_next_run(cli, tmp_path):
    """Review: every file of an input folder was protected, so re-running
    `report L -o L/report.md` (or --save-posterior L/post) was refused."""
    import shutil
    logs = tmp_path / "L"
    logs.mkdir()
    from ..conftest import SHARED
    log = SHARED / "data" / "inspect-logs" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    if not log.exists():
        pytest.skip("needs ../shared/data/inspect-logs")
    shutil.copy(log, logs / "a.eval")
    for _ in range(2):
        for out in ("report.md", "report.json"):
            res = cli("report", logs, "--bayes", "off", "-o", logs / out)
            assert res.exit_code == 0, res.output
        res = cli("report", logs, "--save-posterior", logs / "post", "-o", tmp_path / "r.md")
        assert res.exit_code == 0, res.output
    res = cli("report", logs, "--bayes", "off", "-o", logs / "a.eval")  # the log itself stays protected
    assert res.exit_code == 2 and "input file" in res.output
