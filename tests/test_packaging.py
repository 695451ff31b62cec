"""Packaging: bayeserr.models ships inside the wheel; import stays light."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code, **kw):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, **kw)


def test_models_importable_from_the_current_install():
    out = _run("import bayeserr.models, pathlib; print(pathlib.Path(bayeserr.models.__file__).parent.name)")
    assert out.stdout.strip() == "models"


def test_regular_wheel_install(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path / "wheel"), str(ROOT)], check=True, capture_output=True)
    wheel = next((tmp_path / "wheel").glob("bayeserr-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "bayeserr/models/__init__.py" in names
    assert "bayeserr/examples/internal_eval.csv.gz" in names
    assert not any(n.startswith("models/") for n in names)
    # every package of the source tree ships (a subpackage missing from pyproject's list would not)
    folders = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "bayeserr").rglob("__init__.py")}
    assert folders - {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")} == set()
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    code = ("import bayeserr, bayeserr.models, bayeserr.examples; "
            "print(bayeserr.__file__); print(bayeserr.models.__file__); "
            "print(bayeserr.examples.example_path().is_file()); "
            "print(len(bayeserr.report(bayeserr.load(bayeserr.examples.example_path()), bayes='off').scores))")
    out = _run(code, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    lines = out.stdout.split()
    assert lines[0].startswith(str(target)) and lines[1].startswith(str(target))
    assert lines[2] == "True" and lines[3] == "4"  # the installed wheel runs a report


def test_import_does_not_load_pymc_or_arviz():
    out = _run("import sys, bayeserr; bayeserr.load; bayeserr.report; "
               "print('pymc' in sys.modules, 'arviz' in sys.modules)")
    assert out.stdout.split() == ["False", "False"]
