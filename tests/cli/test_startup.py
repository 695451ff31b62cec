"""Commands import only what they need (issue 23): ``--version``, ``--help``,
``config``, shell completion and ``power`` without a pilot file import neither
pandas, xarray, statsmodels nor scipy.stats; each is run in a fresh
interpreter, as a user's shell runs it.  Timings are measured in
``benchmarks/bench_startup.py``, not asserted here."""

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("pandas", "xarray", "statsmodels", "scipy.stats", "matplotlib", "pymc", "arviz")

PROBE = """
import json, sys
from bayeserr.cli import main
try:
    main({args!r}, prog_name="bayeserr")
except SystemExit:
    pass
sys.stdout.flush()
print("\\n@@" + json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def loaded(args, env=None) -> list:
    """The heavy modules in ``sys.modules`` after running ``bayeserr ARGS`` in a fresh interpreter."""
    code = PROBE.format(args=list(args), heavy=HEAVY)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert "@@" in res.stdout, res.stderr
    return json.loads(res.stdout.rsplit("@@", 1)[1])


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["report", "--help"], ["plot", "--help"],
                                  ["config"], ["config", "--help"], ["simulate", "--help"],
                                  ["power", "--delta", "0.03", "--omega2", "0.111"],
                                  ["power", "--delta", "0.05", "--p", "0.7", "--rho", "0.5"]])
def test_light_commands_import_nothing_heavy(args):
    assert loaded(args) == []


def test_shell_completion_imports_nothing_heavy():
    env = {"_BAYESERR_COMPLETE": "bash_complete", "COMP_WORDS": "bayeserr rep", "COMP_CWORD": "1"}
    assert loaded([], env) == []


def test_a_report_imports_what_it_uses(tmp_path):
    """The contrast: a report needs the data layer (pandas, xarray) — so the
    probe above can see a heavy import when there is one."""
    from bayeserr.examples import example_path
    heavy = loaded(["report", str(example_path()), "--bayes", "off", "-o", str(tmp_path / "r.md")])
    assert {"pandas", "xarray"} <= set(heavy) and "matplotlib" not in heavy and "pymc" not in heavy


def test_power_numbers_unchanged_by_the_light_quantile():
    """The normal quantile of the standard library agrees with scipy's to 1e-12
    over the levels and powers users give."""
    from scipy import stats

    from bayeserr.stats.estimators import normal_quantile, z_value
    for p in (0.5, 0.6, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 1 - 1e-9):
        assert normal_quantile(p) == pytest.approx(stats.norm.ppf(p), abs=1e-12)
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        assert z_value(level) == pytest.approx(stats.norm.ppf(0.5 + level / 2), abs=1e-12)
