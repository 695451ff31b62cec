"""The documentation builds strictly: ``sphinx-build -W --keep-going -n`` on
``docs/`` finishes with no warning (every cross-reference in the pages and the
docstrings resolves), and the modules page covers every module of the layers.

Needs the ``docs`` packages (in the ``test`` extra) and Inspect AI (the API page
documents its metrics); skips cleanly without them.  About 10–20 s.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import bayeserr

pytest.importorskip("sphinx", reason="the docs build needs sphinx (pip install -e '.[docs]')")
pytest.importorskip("myst_parser", reason="the docs build needs myst-parser (pip install -e '.[docs]')")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILD = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html"]


def _needs_inspect():
    if importlib.util.find_spec("inspect_ai") is None:
        pytest.skip("the API page documents the Inspect AI metrics: pip install -e '.[test,inspect]'")


def _conf():
    spec = importlib.util.spec_from_file_location("bayeserr_docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


@pytest.mark.slow  # the whole Sphinx build: in the full suite, not the fast tier
def test_docs_build_without_warnings(tmp_path):
    _needs_inspect()
    out = subprocess.run([*BUILD, "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
                         capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    problems = [line for line in (out.stdout + out.stderr).splitlines()
                if "WARNING" in line or "ERROR" in line or "CRITICAL" in line]
    assert out.returncode == 0 and not problems, (
        f"sphinx-build exit code {out.returncode}; fix these (the command: sphinx-build -W --keep-going -n "
        "-b html docs docs/_build/html):\n" + "\n".join(problems or [out.stderr[-3000:]]))
    for page in ("index", "getting-started", "api", "modules", "development", "methods", "calibration",
                 "guide/command-line", "guide/inputs", "guide/reports", "guide/python-api", "guide/inspect",
                 "guide/lab", "guide/configuration"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page
    api = (tmp_path / "html" / "api.html").read_text()
    assert 'id="bayeserr.data.loading.load"' in api and 'id="bayeserr.reporting.build.build_report"' in api
    cli = (tmp_path / "html" / "guide" / "command-line.html").read_text()
    assert "--cluster-correction" in cli and "bayeserr simulate coverage" in cli  # generated --help


def test_modules_page_covers_every_module_in_layer_order():
    """Every module of ``bayeserr/`` and ``models/`` is on the modules page (or,
    for the layer packages and the package API, on the API page), and the page's
    layers are those of tests/test_layers.py, bottom up."""
    from tests.test_layers import LAYERS, layer

    conf = _conf()
    listed = {m for _, modules in conf.modules_by_layer() for m in modules}
    layer_packages = {pkg for _, pkgs in conf.LAYERS for pkg in pkgs} - conf.OWN_MODULE
    pkg_root = Path(bayeserr.__file__).parent
    models_root = Path(importlib.import_module("bayeserr.models").__file__).parent
    expected = set()
    for prefix, root in (("bayeserr", pkg_root), ("bayeserr.models", models_root)):
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if prefix == "bayeserr" and parts[0] == "models":
                continue  # an installed tree: bayeserr/models is the models/ folder, counted once
            if parts[-1] == "__main__":
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            expected.add(".".join([prefix, *parts]))
    expected -= layer_packages | {"bayeserr"}
    assert expected - listed == set(), "add these to a layer in docs/conf.py LAYERS"
    assert listed - expected == set()

    order = [layer(pkg) for _, pkgs in conf.LAYERS for pkg in pkgs]
    assert order == sorted(order)
    assert {p for p in LAYERS if p != "bayeserr"} == {pkg for _, pkgs in conf.LAYERS for pkg in pkgs}

