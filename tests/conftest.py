import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bayeserr.cli import main

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
REAL = SHARED / "data" / "real"


def real_file(name: str) -> Path:
    """A file of ../shared/data/real, or skip the test when it is absent."""
    path = REAL / name
    if not path.exists():
        pytest.skip(f"{path} not available (../shared is absent)")
    return path


@pytest.fixture
def cli():
    """Run the CLI in-process; returns the click Result."""
    runner = CliRunner()

    def run(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run


def validate_report(rep: dict) -> dict:
    """Check a JSON report against the JSON Schema shipped in the package."""
    import jsonschema
    schema = json.loads((files("bayeserr.schema") / "report-2.json").read_text())
    jsonschema.validate(rep, schema)
    return rep


@pytest.fixture
def cli_json(cli):
    """Run a command with --format json; every report is validated against the schema."""
    def run(*args):
        res = cli(*args, "--format", "json")
        assert res.exit_code == 0, res.output
        out = json.loads(res.output)
        if out.get("schema", "").startswith("bayeserr.report"):
            validate_report(out)
        return out

    return run


def binary_frame(scores: dict, clusters=None) -> pd.DataFrame:
    """Long-format frame from {model: 0/1 array}, optional per-question clusters."""
    rows = []
    for m, s in scores.items():
        for i, v in enumerate(np.asarray(s)):
            row = {"model": m, "question_id": f"q{i}", "score": float(v)}
            if clusters is not None:
                row["cluster_id"] = f"c{clusters[i]}"
            rows.append(row)
    return pd.DataFrame(rows)
