"""``bayeserr report SWE-bench --bayes mcmc`` cold and warm, on the Python that runs this
script (issue 29: PyMC 6 on Python ≥ 3.12, PyMC 5 on 3.11).

Run it once per line, on an idle machine::

    .venv/bin/python benchmarks/bench_mcmc_lines.py          # Python 3.11: PyMC 5
    .venv-3.12/bin/python benchmarks/bench_mcmc_lines.py     # Python 3.12: PyMC 6

Cold: an empty PyTensor compile folder (``base_compiledir`` in a new temporary
folder), so every C or Numba module is built; warm: the same folder again.
Each is the whole command (``python -m bayeserr.cli``), wall and CPU seconds,
JSON to a temporary file.  Needs ../shared.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWEBENCH = ROOT.parent / "shared" / "data" / "real" / "swebench_verified_bashonly_per_instance.csv.gz"


def run(compiledir: str, out: str) -> tuple[float, float]:
    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", str(SWEBENCH), "--bayes", "mcmc",
                    "--format", "json", "-o", out], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if not SWEBENCH.exists():
        sys.exit(f"needs {SWEBENCH}")
    import arviz
    import pymc
    print(f"Python {sys.version.split()[0]}, PyMC {pymc.__version__}, ArviZ {arviz.__version__}, "
          f"{os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        compiledir, out = os.path.join(tmp, "pytensor"), os.path.join(tmp, "r.json")
        for label in ("cold (empty compile folder)", "warm", "warm again"):
            wall, cpu = run(compiledir, out)
            print(f"  {label:<28} {wall:6.1f} s wall, {cpu:6.1f} s CPU")


if __name__ == "__main__":
    main()
