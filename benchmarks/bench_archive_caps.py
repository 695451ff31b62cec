"""Hostile and large Inspect logs: time and peak memory of ``bayeserr report``
(issue 30, items 12 and 13).

Each case is built in a temporary folder with the builders of
``tests/data/readers/test_archive_caps.py`` and read by ``bayeserr report FILE --bayes off
-o out.md`` in a fresh process; the wall time, the exit code, the peak
resident memory of that process (``VmHWM``, which exec resets) and the first
characters of its error line are printed.

Run::

    python benchmarks/bench_archive_caps.py                  # every case
    python benchmarks/bench_archive_caps.py --only issue legit
    python benchmarks/bench_archive_caps.py --readers old_readers/   # the same with other readers

``--readers DIR`` runs the cases against a copy of the package whose
``bayeserr/data/readers/`` package is DIR (e.g. ``git archive REV bayeserr/data/readers |
tar -x -C old``, then ``--readers old/bayeserr/data/readers``), for before/after figures.

Cases: ``issue`` (the issue's 33 KB archive: 8 zstd entries on one 1 GiB -
4 KiB member), ``aliased-deflate``, ``quoted-zstd``, ``quoted-deflate``
(Fifield's overlapping bomb), ``ratio-zstd``, ``ratio-deflate`` (one honest
member of 1 GiB - 4 KiB), ``liar`` (declares 1 KiB, holds 1 GiB), ``dense``
(40 members of 4 MiB of spaces), ``legit`` (one honest sample member of
``--legit-mib`` MiB of word-like text, about 4:1, and 20 small ones),
``name`` (a 1 MiB model name in the header, ``--name-samples`` samples).

Measured (2 cores, 23 GiB, Python 3.11, pandas 3.1, other jobs running;
wall time of the whole command, peak RSS of its process; the interpreter
with bayeserr loaded and no file read takes 0.6-0.8 s and 136 MiB).  Before:
the reader of commit dfcc28e; after: the overlap, ratio and name checks.

=================  =====================================  =========================
case               before                                 after
=================  =====================================  =========================
issue (34 KiB)     32.0 s, 4,232 MiB (duplicate rows)     0.67 s, 136 MiB (overlap)
aliased-deflate    3.9 s, 3,207 MiB (zipfile name check)  0.62 s, 136 MiB (overlap)
quoted-zstd        31.0 s, 4,232 MiB (duplicate rows)     0.62 s, 136 MiB (overlap)
quoted-deflate     1.8 s, 1,161 MiB (bad CRC)             0.62 s, 136 MiB (overlap)
ratio-zstd         3.9 s, 3,208 MiB                       0.62 s, 136 MiB (ratio)
ratio-deflate      3.8 s, 3,207 MiB                       0.62 s, 136 MiB (ratio)
liar               0.67 s, 138 MiB                        0.63 s, 139 MiB
dense              0.99 s, 153 MiB (duplicate rows)       0.72 s, 136 MiB (archive ratio)
legit (256 MiB)    1.9 s, 903 MiB (3.0x the member)       1.7 s, 648 MiB (2.0x)
name (5,000)       25.0 s, 8,352 MiB (report written)     0.87 s, 143 MiB (refused)
=================  =====================================  =========================
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import test_archive_caps as caps  # noqa: E402  (the builders)

CASES = ("issue", "aliased-deflate", "quoted-zstd", "quoted-deflate", "ratio-zstd", "ratio-deflate", "liar",
         "dense", "legit", "name")


def _legit(path: Path, mib: int) -> Path:
    """An honest log: one sample whose ``input`` is ``mib`` MiB of word-like
    text (zstd, about 4:1, like real logs' 5:1), and 20 ordinary samples;
    generated and compressed 16 MiB at a time."""
    import io

    import numpy as np
    import zstandard
    rng = np.random.default_rng(0)
    vocab = np.array([w.encode() for w in ("the model answer is correct because we can see that a b c "
                                           "defined value function return print error token").split()])
    buf, crc, size = io.BytesIO(), 0, 0
    with zstandard.ZstdCompressor(level=3).stream_writer(buf, closefd=False) as w:
        left = mib << 20
        for piece in (caps.PREFIX, None, caps.SUFFIX):
            while piece is None and left > 0:
                text = b" ".join(vocab[rng.integers(0, len(vocab), size=(16 << 20) // 4)].tolist())
                text = text[: min(left, 16 << 20)]
                left -= len(text)
                w.write(text)
                crc, size = caps.zlib.crc32(text, crc), size + len(text)
            if piece is not None:
                w.write(piece)
                crc, size = caps.zlib.crc32(piece, crc), size + len(piece)
    big = {"name": "samples/1_epoch_1.json", "raw": buf.getvalue(), "method": caps.ZSTD, "crc": crc,
           "size": size}
    records = [(caps.member("header.json", caps.header(), caps.ZSTD), None), (big, None)]
    records += [(caps.member(f"samples/{i}_epoch_1.json", caps.sample(i), caps.ZSTD), None)
                for i in range(2, 22)]
    return caps.write_zip(path, records)


def _name(path: Path, samples: int) -> Path:
    records = [(caps.member("header.json", caps.header(model="m" * (1 << 20))), None)]
    records += [(caps.member(f"samples/{i}_epoch_1.json", caps.sample(i, "C" if i % 3 else "I")), None)
                for i in range(1, samples + 1)]
    return caps.write_zip(path, records)


def _liar(path: Path) -> Path:
    big = {**caps.big_sample(caps.ZSTD), "name": "samples/1_epoch_1.json", "size": 1024}
    return caps.write_zip(path, [(caps.member("header.json", caps.header(), caps.ZSTD), None), (big, None)])


def _dense(path: Path) -> Path:
    m = caps.big_sample(caps.ZSTD, 4 << 20)
    records = [(caps.member("header.json", caps.header(), caps.ZSTD), None)]
    records += [({**m, "name": f"samples/{i}_epoch_1.json"}, None) for i in range(1, 41)]
    return caps.write_zip(path, records)


def build(case: str, folder: Path, args) -> Path:
    path = folder / f"{case}.eval"
    if case == "issue":
        return caps.aliased_bomb(path, caps.ZSTD)
    if case == "aliased-deflate":
        return caps.aliased_bomb(path, caps.DEFLATE)
    if case.startswith("quoted-"):
        return caps.quoted_bomb(path, caps.ZSTD if case.endswith("zstd") else caps.DEFLATE)
    if case.startswith("ratio-"):
        return caps.ratio_bomb(path, caps.ZSTD if case.endswith("zstd") else caps.DEFLATE)
    if case == "liar":
        return _liar(path)
    if case == "dense":
        return _dense(path)
    if case == "legit":
        return _legit(path, args.legit_mib)
    if case == "name":
        return _name(path, args.name_samples)
    raise ValueError(case)


def package_with(readers: Path, into: Path) -> Path:
    """A copy of the package with the folder ``readers`` as its ``bayeserr/data/readers/``."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "bayeserr", into / "bayeserr", ignore=ignore)
    shutil.rmtree(into / "bayeserr" / "data" / "readers")
    shutil.copytree(readers, into / "bayeserr" / "data" / "readers", ignore=ignore)
    return into


CHILD = """
import os, sys
from bayeserr.cli import run
sys.argv[0] = "bayeserr"
try:
    run()
finally:  # the peak resident memory of this process (VmHWM: reset by exec, unlike ru_maxrss)
    with open("/proc/self/status") as fh, open(os.environ["BENCH_HWM"], "w") as out:
        out.write(next(line for line in fh if line.startswith("VmHWM")).split()[1])
"""


def run(path: Path, out: Path, env: dict, timeout: float) -> tuple:
    """(seconds, exit code, peak RSS in MiB, first line of stderr) of one report."""
    cmd = [sys.executable, "-c", CHILD, "report", str(path), "--bayes", "off", "-o", str(out)]
    hwm = out.with_suffix(".hwm")
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        try:
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=err, env=dict(env, BENCH_HWM=str(hwm)),
                                timeout=timeout, cwd=out.parent).returncode  # cwd: PYTHONPATH wins
        except subprocess.TimeoutExpired:
            rc = "timeout"
        seconds = time.perf_counter() - t
        err.seek(0)
        line = err.read().decode(errors="replace").strip().splitlines()
    mib = int(hwm.read_text()) / 1024 if hwm.exists() else float("nan")
    return seconds, rc, mib, (line[0][:150] if line else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--readers", type=Path, help="run against this bayeserr/data/readers/ folder instead")
    parser.add_argument("--legit-mib", type=int, default=256)
    parser.add_argument("--name-samples", type=int, default=5000)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory(prefix="bench_archive_caps_") as tmp:
        tmp = Path(tmp)
        if args.readers:
            env["PYTHONPATH"] = str(package_with(args.readers, tmp / "pkg"))
        print(f"readers: {args.readers or ROOT / 'bayeserr/data/readers'}")
        base = run(tmp / "none.eval", tmp / "none.md", env, args.timeout)
        print(f"{'baseline (no file)':<18} {base[0]:7.2f} s  peak {base[2]:7.0f} MiB  rc {base[1]}")
        for case in args.only:
            t = time.perf_counter()
            path = build(case, tmp, args)
            made = time.perf_counter() - t
            seconds, rc, mib, line = run(path, tmp / f"{case}.md", env, args.timeout)
            size = path.stat().st_size
            print(f"{case:<18} {seconds:7.2f} s  peak {mib:7.0f} MiB  rc {rc}  file {size / 1024:9.0f} KiB "
                  f"(built in {made:.1f} s)  {line}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
