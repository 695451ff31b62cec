"""Shared timing helpers for the benchmark scripts."""

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compile_bytecode() -> None:
    """bayeserr's bytecode, as an installed package has it (pip compiles it at install): where
    PYTHONDONTWRITEBYTECODE is set (this sandbox), every timed run would otherwise compile
    bayeserr's modules from source (0.15 CPU s)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "bayeserr"), str(ROOT / "models")],
                   check=True, env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})


def best_of(repeat, fn):
    """Fastest wall-clock time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_cpu(cmd: list, repeat: int = 3) -> float:
    """Best CPU time (user + sys) of ``repeat`` runs of ``cmd`` in a child process, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best
