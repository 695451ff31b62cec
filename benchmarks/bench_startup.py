"""What a command costs before it does anything, and what a whole report costs.

Prints the CPU time (user + sys of the child process, best of 3) of:

* ``bayeserr --version``, ``--help`` and ``power`` without a pilot file
  (issue 23's target: at most 0.3 s each);
* the SWE-bench report with default options (``--format json``), side by side
  with the closest peer's whole leaderboard on the same file
  (``errorbars leaderboard FILE --json --cluster-col cluster_id``) when
  ``errorbars`` is on the PATH or named by ``$ERRORBARS`` (e.g. installed in
  its own venv: ``python3 -m venv /tmp/eb && /tmp/eb/bin/pip install errorbars==0.2.4``,
  then ``ERRORBARS=/tmp/eb/bin/errorbars``);
* a fresh interpreter that only imports pandas and reads the file (the floor).

Run: ``python benchmarks/bench_startup.py`` (needs ../shared for the SWE-bench file).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _timing, run from anywhere
from _timing import best_cpu as cpu  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SWE = ROOT.parent / "shared" / "data" / "real" / "swebench_verified_bashonly_per_instance.csv.gz"


def main() -> None:
    exe = [sys.executable, "-m", "bayeserr.cli"]
    rows = [("bayeserr --version", exe + ["--version"]),
            ("bayeserr --help", exe + ["--help"]),
            ("bayeserr power --delta 0.03 --omega2 0.111", exe + ["power", "--delta", "0.03", "--omega2", "0.111"])]
    if SWE.exists():
        import gzip
        import tempfile
        plain = Path(tempfile.mkdtemp()) / "swebench.csv"  # the peer reads no .gz: both read this copy
        plain.write_bytes(gzip.decompress(SWE.read_bytes()))
        rows += [("SWE-bench report --format json (default options)", exe + ["report", str(plain), "--format", "json"]),
                 ("SWE-bench report --format json --bayes off", exe + ["report", str(plain), "--format", "json",
                                                                      "--bayes", "off"]),
                 ("floor: python -c 'import pandas; read the file'",
                  [sys.executable, "-c", f"import pandas; pandas.read_csv({str(plain)!r})"])]
        peer = shutil.which("errorbars") or os.environ.get("ERRORBARS")
        if peer:
            rows.append(("peer: errorbars leaderboard --json --cluster-col cluster_id",
                         [peer, "leaderboard", str(plain), "--json", "--cluster-col", "cluster_id"]))
    else:
        print(f"({SWE} not found: the SWE-bench rows are skipped)")
    print(f"CPU seconds (user + sys, best of 3), {os.cpu_count()} cores")
    for name, cmd in rows:
        print(f"  {cpu(cmd):6.2f}  {name}")


if __name__ == "__main__":
    main()
