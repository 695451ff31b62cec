"""``--bayes mcmc`` on SWE-bench, cold and warm, on the Python that runs this script
(issue 29: PyMC 6 on Python ≥ 3.12, PyMC 5 on 3.11; issue 41: the pair too).

Run it once per line (best on an idle machine; say what else ran)::

    .venv/bin/python benchmarks/bench_mcmc_lines.py          # Python 3.11: PyMC 5
    .venv-3.12/bin/python benchmarks/bench_mcmc_lines.py     # Python 3.12: PyMC 6
    ... bench_mcmc_lines.py --only compare --repeat 3 --seeds 0,1,2,3,4

Two commands, each the whole ``python -m bayeserr.cli`` process, JSON to a file:

* ``compare``: the SWE-bench pair of the two best models (the bivariate latent model of
  ``docs/methods.md`` §5.3, by NUTS), with its diagnostics (max R-hat, min bulk and tail
  ESS, divergences) against the thresholds of §5.6;
* ``report``: all 24 models (the two-level model, one graph), with the number of
  ``mcmc_diagnostics`` warnings.

Cold: an empty PyTensor compile folder (``base_compiledir`` in a new temporary folder), so
every C or Numba module is built; warm: the same folder again (the second run and later).
Wall and CPU seconds (user + sys of the child process tree); with ``--repeat N`` each is the
best of N (a new empty folder for every cold run).  ``--seeds`` runs the warm pair once per
seed and prints its diagnostics.  Needs ../shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _timing, run from anywhere
from _timing import compile_bytecode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SWEBENCH = ROOT.parent / "shared" / "data" / "real" / "swebench_verified_bashonly_per_instance.csv.gz"
PAIR = ("Claude 4.5 Opus medium (20251101)", "Gemini 3 Pro Preview (2025-11-18)")
COMMANDS = {
    "compare": ["compare", str(SWEBENCH), *PAIR, "--bayes", "mcmc", "--format", "json"],
    "report": ["report", str(SWEBENCH), "--bayes", "mcmc", "--format", "json"],
}


def run(command: str, compiledir: str, seed: int = 0) -> tuple[float, float, dict]:
    """Wall and CPU seconds of one run, and what its output says about the diagnostics."""
    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={compiledir}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "bayeserr.cli", *COMMANDS[command], "--seed", str(seed)],
                         check=True, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, diagnostics(json.loads(res.stdout))


def diagnostics(out: dict) -> dict:
    warned = [w for w in out.get("warnings", []) if w["code"] == "mcmc_diagnostics"]
    diag = (out.get("posterior") or {}).get("diagnostics") or {}
    return {**{k: diag[k] for k in ("r_hat", "ess_bulk", "ess_tail", "divergences") if k in diag},
            "warnings": len(warned)}


def show(diag: dict) -> str:
    if "r_hat" not in diag:
        return f"{diag['warnings']} mcmc_diagnostics warning(s)"
    return (f"R-hat {diag['r_hat']:.4f}, ESS bulk {diag['ess_bulk']:.0f} / tail {diag['ess_tail']:.0f}, "
            f"{diag['divergences']} divergence(s), {diag['warnings']} warning(s)")


def bench(command: str, repeat: int, tmp: str) -> None:
    cold, warm = [], []
    for i in range(repeat):
        compiledir = os.path.join(tmp, f"{command}-{i}")
        cold.append(run(command, compiledir))
        warm.append(run(command, compiledir))
    for label, runs in (("cold (empty compile folder)", cold), ("warm", warm)):
        wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        print(f"  {command:<8} {label:<28} {wall:6.1f} s wall, {cpu:6.1f} s CPU (best of {len(runs)}); "
              f"{show(runs[-1][2])}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(COMMANDS), help="time one command only")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each (cold, warm) [default: 2]")
    ap.add_argument("--seeds", default="", help="seeds of warm pair runs whose diagnostics are shown")
    args = ap.parse_args()
    if not SWEBENCH.exists():
        sys.exit(f"needs {SWEBENCH}")
    compile_bytecode()
    from importlib import metadata
    print(f"Python {sys.version.split()[0]}, PyMC {metadata.version('pymc')}, "
          f"PyTensor {metadata.version('pytensor')}, ArviZ {metadata.version('arviz')}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for command in [args.only] if args.only else list(COMMANDS):
            bench(command, args.repeat, tmp)
        for seed in [int(s) for s in args.seeds.split(",") if s.strip()]:
            wall, cpu, diag = run("compare", os.path.join(tmp, "compare-0"), seed)
            print(f"  compare seed {seed}: {wall:5.1f} s wall, {cpu:5.1f} s CPU; {show(diag)}", flush=True)


if __name__ == "__main__":
    main()
