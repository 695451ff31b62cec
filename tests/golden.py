"""Reports of every kind, rendered the same way by any version of the code: the guard of
a refactor that must not change a number (``tests/test_golden.py``).

``python -m tests.golden OUT`` writes every case (the bundled example, the real files of
``../shared/data/real`` and the Inspect logs when present, synthetic judge and lm-eval
inputs; each in Markdown, JSON, LaTeX and HTML with figures; the memory and stream engines;
``compare``) to the folder ``OUT``; ``python -m tests.golden OUT --check REF`` renders them
again and names every output that differs from the folder ``REF`` made by older code.
What is not a number of the report (the version, the time, the command line, the
temporary paths) is normalized first (:func:`normalize`)."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "bayeserr" / "examples" / "internal_eval.csv.gz"
SHARED = ROOT.parent / "shared" / "data"
REAL = SHARED / "real"
FORMATS = ("md", "json", "latex", "html")


def normalize(text: str, tmp: str = "") -> str:
    """The text without what changes from run to run: the time, the version, the
    temporary folder, input hashes and the recorded command line."""
    if tmp:
        text = text.replace(tmp, "TMP")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)?", "TIME", text)
    text = re.sub(r'("version": )"[^"]*"', r'\1"V"', text)
    text = re.sub(r"bayeserr \d+\.\d+[\w.+-]*", "bayeserr V", text)
    text = re.sub(r'("command": )("(?:[^"\\]|\\.)*"|null)', r'\1"CMD"', text)
    # full-precision numbers (JSON, the HTML's sort keys) cut to 8 decimals: their last bits may
    # differ between CPUs (SIMD sums), which no reader sees and no refactor should be blamed for
    return re.sub(r"(\d\.\d{8})\d+", r"\1", text)


def _judge_csv(folder: Path) -> Path:
    from tests.reporting.test_judge_report import _table
    _table().to_csv(folder / "judge.csv", index=False)
    return Path("judge.csv")


def _lmeval_dir(folder: Path) -> Path:
    from tests.analyses.test_lmeval_groups import MODELS, _scores, _write
    root = folder / "lmeval"
    root.mkdir()
    scores = _scores()
    for model in MODELS:
        _write(root, model, scores[model])
    return root.relative_to(folder)


def _parquet(src: Path, folder: Path, name: str) -> Path:
    import pandas as pd
    out = folder / f"{name}.parquet"
    pd.read_csv(src).to_parquet(out)
    return out.relative_to(folder) if src == EXAMPLE else out


def report_cases(tmp: Path, real: bool = True) -> dict:
    """name -> (arguments of ``bayeserr report`` before ``--format``, formats); the bundled
    inputs are named relative to ``tmp`` (the working folder), so the text does not depend on
    where the repository is."""
    ex = EXAMPLE.name
    cases = {
        "example": ([ex], FORMATS),
        "example_off": ([ex, "--bayes", "off"], FORMATS),
        "example_all": ([ex, "--methods", "all", "--pairs", "all", "--rank-intervals", "both",
                         "--prior-sensitivity", "--top-k", "2"], FORMATS),
        "example_strata": ([ex, "--clusters-as", "strata", "--bayes", "off"], FORMATS),
        "example_passk": ([ex, "--pass-k", "1,2", "--bayes", "off"], FORMATS),
        "example_holm": ([ex, "--adjust", "holm", "--pairs", "vs=ckpt-0412", "--bayes", "off"], FORMATS),
        "example_stream": ([str(_parquet(EXAMPLE, tmp, "example")), "--engine", "stream"], FORMATS),
        "judge": ([str(_judge_csv(tmp)), "--human-col", "human", "--bayes", "off"], FORMATS),
        "lmeval": ([str(_lmeval_dir(tmp)), "--bayes", "off"], FORMATS),
    }
    if not real or not REAL.exists():
        return cases
    swe = REAL / "swebench_verified_bashonly_per_instance.csv.gz"
    cases.update({
        "swebench": ([str(swe)], FORMATS),
        "swebench_off": ([str(swe), "--bayes", "off", "--pairs", "all"], ("md", "json", "latex")),
        "swebench_strata": ([str(swe), "--clusters-as", "strata", "--bayes", "off"], FORMATS),
        "swebench_stream": ([str(_parquet(swe, tmp, "swe")), "--engine", "stream"], FORMATS),
        "livebench": ([str(REAL / "livebench_20250113_per_question.csv.gz"), "--task-col", "category",
                       "--on-unpaired", "drop", "--bayes", "off"], FORMATS),
        "alpaca": ([str(REAL / "alpacaeval2_per_instruction.csv.gz"), "--on-unpaired", "drop", "--bayes", "off"],
                   ("md", "json")),
        "evalperf": ([str(REAL / "evalperf_per_task.csv.gz")], FORMATS),
        "matharena": ([str(REAL / "matharena_aime2025_II_per_run.csv.gz"), "--sample-col", "run",
                       "--pass-k", "1,4"], FORMATS),
        "livecodebench": ([str(REAL / "livecodebench_codegen_per_problem.csv.gz")], ("md", "json")),
        "inspect": ([str(p) for p in sorted((SHARED / "inspect-logs").glob("*popularity*"))] + ["--bayes", "off"],
                    FORMATS),
    })
    return cases


def bundled_cases() -> set:
    """The names of the cases made from the package's own example and synthetic inputs."""
    with tempfile.TemporaryDirectory() as td:
        return {*report_cases(Path(td), real=False), *compare_cases()}


def compare_cases() -> dict:
    ex = EXAMPLE.name
    return {"compare_example": ([ex, "ckpt-0412", "ckpt-0419"], ("md", "json")),
            "compare_example_pair": ([ex, "ckpt-0412", "ckpt-0419", "--family", "pair", "--bayes", "off"],
                                     ("md", "json"))}


def render_all(out: Path, real: bool = True, only=None) -> list[str]:
    """Write every case to ``out``; the names written."""
    from bayeserr.cli import main
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    written = []
    with tempfile.TemporaryDirectory() as td, contextlib.chdir(td):
        tmp = Path(td)
        shutil.copy(EXAMPLE, tmp / EXAMPLE.name)
        jobs = [("report", n, a, f) for n, (a, f) in report_cases(tmp, real).items()]
        jobs += [("compare", n, a, f) for n, (a, f) in compare_cases().items()]
        for command, name, args, formats in jobs:
            if only and name not in only:
                continue
            for fmt in formats:
                page = tmp / "page.html"
                extra = ["-o", str(page)] if fmt == "html" else []
                res = runner.invoke(main, [command, *args, "--format", fmt, *extra], catch_exceptions=False)
                text = page.read_text() if fmt == "html" and page.exists() else res.output
                page.unlink(missing_ok=True)
                text = normalize(text, td) + f"\n[exit {res.exit_code}]\n"
                (out / f"{name}.{fmt}").write_text(text)
                written.append(f"{name}.{fmt}")
                print(f"{name}.{fmt}", file=sys.stderr, flush=True)
    return written


def same(a: str, b: str, name: str, rtol: float = 1e-9) -> bool:
    """Text equal; JSON equal up to ``rtol`` in each number."""
    if a == b:
        return True
    if not name.endswith(".json"):
        return False
    strip = lambda t: t.rsplit("\n[exit", 1)[0]  # noqa: E731
    try:
        return _close(json.loads(strip(a)), json.loads(strip(b)), rtol)
    except ValueError:
        return False


def _close(x, y, rtol) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and list(x) == list(y) and all(_close(x[k], y[k], rtol) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(_close(a, b, rtol) for a, b in zip(x, y))
    if isinstance(x, float) and isinstance(y, (int, float)) and not isinstance(y, bool):
        return abs(x - y) <= rtol * max(abs(x), abs(y), 1e-12)
    return x == y


#: packages whose versions the stored digests depend on (their numbers and figures)
PINNED = ("numpy", "scipy", "pandas", "matplotlib", "statsmodels")


def digests(folder: Path, names) -> dict:
    import hashlib
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


def versions() -> dict:
    from importlib.metadata import version
    return {p: version(p) for p in PINNED}


if __name__ == "__main__":
    target = Path(sys.argv[1])
    names = render_all(target)
    if "--manifest" in sys.argv:  # the digests tests/test_golden.py compares with (bundled inputs only)
        local = [n for n in names if n.split(".")[0] in bundled_cases()]
        manifest = {"versions": versions(), "digests": digests(target, local)}
        (ROOT / "tests" / "golden_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if "--check" in sys.argv:
        ref = Path(sys.argv[sys.argv.index("--check") + 1])
        bad = [n for n in names if not same((ref / n).read_text(), (target / n).read_text(), n)]
        print("differ: " + (", ".join(bad) if bad else "none"))
        sys.exit(1 if bad else 0)
