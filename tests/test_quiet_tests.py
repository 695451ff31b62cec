"""The test suite prints nothing unless a test fails: no test switches pytest's
capture off (its figures go into the assertion message instead)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_no_test_disables_output_capture():
    loud = [str(p.relative_to(HERE)) for p in sorted(HERE.rglob("test_*.py"))
            if p.name != Path(__file__).name and "capsys.disabled(" in p.read_text()]
    assert not loud, f"tests printing past pytest's capture: {loud}"
