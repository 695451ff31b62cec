"""Output edge cases (issue 30 item 18): names the file system cannot take are
clear errors, legal long names work, and standard output that cannot take the
report — full, closed, or a pipe whose reader left — never loses it silently."""

import os
import subprocess
import sys

import pytest

from bayeserr.base.errors import InputError
from bayeserr.base.output import write_atomic

CLI = [sys.executable, "-m", "bayeserr.cli"]


def test_a_symlink_loop_is_a_clear_error(cli, tmp_path):
    (tmp_path / "a.md").symlink_to(tmp_path / "b.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    res = cli("demo", "-o", tmp_path / "a.md")
    assert res.exit_code == 2 and "loop of symbolic links" in res.output
    res = cli("report", tmp_path / "a.md", "--bayes", "off", "--save-posterior", tmp_path / "a.md")
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_a_name_too_long_is_a_clear_error(cli, tmp_path):
    res = cli("demo", "-o", tmp_path / ("a" * 300 + ".md"))
    assert res.exit_code == 2 and "too long" in res.output and "Traceback" not in res.output
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["b" * 252 + ".md", "é" * 126 + ".md", "名" * 83 + ".md"])
def test_the_longest_legal_names_are_written(tmp_path, name):
    """255 bytes is the usual limit per name: the temporary name beside it must fit too."""
    assert len(name.encode()) in (255, 252) and len(name.encode()) <= 255
    write_atomic(tmp_path / name, "x")
    assert os.listdir(tmp_path) == [name] and (tmp_path / name).read_text() == "x"


def test_a_file_in_the_path_is_a_clear_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="cannot write here|does not exist"):
        write_atomic(tmp_path / "f" / "r.md", "x")


def _run(stdout, shell_suffix=""):
    return subprocess.run(CLI + ["demo"], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_is_an_error():
    with open("/dev/full", "w") as full:
        res = _run(full)
    assert res.returncode == 2 and "could not write to standard output" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_closed_stdout_is_an_error():
    res = subprocess.run(["bash", "-c", 'exec "$@" >&-', "bash", *CLI, "demo"],
                         stderr=subprocess.PIPE, text=True, timeout=120)
    assert res.returncode == 2 and "standard output is closed" in res.stderr


def test_a_pipe_whose_reader_left_ends_quietly():
    """``bayeserr demo | head -0``: exit 141 (128 + SIGPIPE) and no traceback."""
    r, w = os.pipe()
    os.close(r)  # no reader: the first write fails with EPIPE
    try:
        res = subprocess.run(CLI + ["demo"], stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert res.returncode == 141 and res.stderr == ""


def test_help_on_a_cp1252_terminal_does_not_crash():
    """Review of issue 30 item 8: `report --help` printed '−' and crashed on cp1252."""
    for args in (["report", "--help"], ["arena", "x", "--help"], ["gate", "--help"]):
        res = subprocess.run(CLI + args, capture_output=True, timeout=120,
                             env=dict(os.environ, PYTHONIOENCODING="cp1252"))
        assert res.returncode == 0 and b"Traceback" not in res.stderr and b"Usage" in res.stdout


def test_a_read_only_home_moves_every_cache(monkeypatch, tmp_path):
    """Review of item 9: PyTensor's compile folder (~/.pytensor) and matplotlib's config
    folder were left in a read-only $HOME, so --bayes mcmc failed with a traceback."""
    from bayeserr.models import compat
    home = tmp_path / "home"
    home.mkdir()
    for name in ("XDG_CACHE_HOME", "PYTENSOR_FLAGS", "MPLCONFIGDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).startswith(str(home)) else real(p, mode))
    compat.writable_cache()
    assert "base_compiledir=" in os.environ["PYTENSOR_FLAGS"]
    for value in (os.environ["XDG_CACHE_HOME"], os.environ["MPLCONFIGDIR"],
                  os.environ["PYTENSOR_FLAGS"].split("base_compiledir=")[1]):
        assert not value.startswith(str(home)) and os.path.isdir(value)
    monkeypatch.setenv("PYTENSOR_FLAGS", "base_compiledir=/mine")  # the user's own choice is kept
    compat.writable_cache()
    assert os.environ["PYTENSOR_FLAGS"] == "base_compiledir=/mine"


def test_a_reader_that_leaves_mid_stream_is_not_exit_0(tmp_path):
    """Review: `report … --format json | head -c 100` exited 0 with the output cut (one large
    write into a closed pipe loses its error); output goes out piece by piece now."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(0)
    models = [f"model-{i:02d}" for i in range(30)]
    df = pd.DataFrame({"model": np.repeat(models, 200), "question_id": np.tile(range(200), 30),
                       "score": (rng.random(6000) < 0.6).astype(int)})
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    proc = subprocess.Popen(CLI + ["report", str(path), "--bayes", "off", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141 and b"Traceback" not in err


def test_each_pymc_line_compiles_into_its_own_user_cache_folder(monkeypatch, tmp_path):
    """Issue 41: the compile cache lives in the user cache folder, one subfolder per
    PyTensor version and Python (PyMC 5 and PyMC 6 never share modules), and a folder the
    user chose (PYTENSOR_FLAGS or a .pytensorrc) is kept."""
    import sys
    from importlib import metadata

    from bayeserr.models import compat
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTENSORRC", str(tmp_path / "no-rc"))
    monkeypatch.delenv("PYTENSOR_FLAGS", raising=False)
    compat.writable_cache()
    folder = tmp_path / "cache" / "bayeserr" / (f"pytensor-{metadata.version('pytensor')}-"
                                                f"py{sys.version_info[0]}.{sys.version_info[1]}")
    assert os.environ["PYTENSOR_FLAGS"] == f"base_compiledir={folder}" and folder.is_dir()
    monkeypatch.setenv("PYTENSOR_FLAGS", "floatX=float64,compiledir=/mine")  # writable ~/.pytensor: kept
    compat.writable_cache()
    assert os.environ["PYTENSOR_FLAGS"] == "floatX=float64,compiledir=/mine"
    (tmp_path / "rc").write_text("[global]\nbase_compiledir = /mine\n")
    monkeypatch.setenv("PYTENSORRC", str(tmp_path / "rc"))
    monkeypatch.delenv("PYTENSOR_FLAGS")
    compat.writable_cache()
    assert "PYTENSOR_FLAGS" not in os.environ
