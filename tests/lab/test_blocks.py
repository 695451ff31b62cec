"""bayeserr.lab.blocks (replicate blocks, one publisher per study) and bayeserr.lab.formats."""

import pandas as pd

from bayeserr.lab.blocks import publisher, run_blocks
from bayeserr.lab.formats import findings_head, missing, nominal, pm, rate_cells


def _square(task):
    return task[2] ** 2


def test_run_blocks_in_process_keys_and_progress():
    seen = []
    tasks = [("a", (None, 10, 3, 0)), ("a", (None, 5, 4, 1)), ("b", (None, 1, 5, 0))]
    out = run_blocks(_square, tasks, jobs=1, progress=seen.append)
    assert out == {("a", 0): 9, ("a", 1): 16, ("b", 0): 25}
    assert seen == [10, 5, 1]


def test_publisher_writes_csv_and_replaces_only_its_section(tmp_path):
    start, end = "<!-- s -->", "<!-- /s -->"
    publish = publisher("calibration_x.csv", lambda df, cmd: [start, f"rows {len(df)} by `{cmd}`", end],
                        start, end)
    page = tmp_path / "calibration.md"
    page.write_text("# Calibration\n\nkept above\n")
    publish(pd.DataFrame({"v": [1, 2]}), page, "cmd one")
    publish(pd.DataFrame({"v": [1, 2, 3]}), page, "cmd two")
    text = page.read_text()
    assert text.count(start) == 1 and "rows 3 by `cmd two`" in text and "kept above" in text
    assert pd.read_csv(tmp_path / "calibration_x.csv")["v"].tolist() == [1, 2, 3]
    assert "calibration_x.csv" in publish.__doc__


def test_lab_formats():
    assert pm(0.0512, 0.0031) == "5.1 ± 0.3" and nominal(0.95) == "95%" and nominal(0.025) == "2.5%"
    assert missing(None) and missing(float("nan")) and not missing(0.0)
    by = {"x": {"rate": 0.06, "rate_se": 0.003}, "y": {"rate": 0.05, "rate_se": 0.003}}
    cells = rate_cells(by, ["x", "y", "z"], "rate", lambda k, r: r["rate"] > 0.055)
    assert cells == ["**6.0 ± 0.3**", "5.0 ± 0.3", "–"]
    assert findings_head("go", ["one."]) == ["", "Reproduce: `go`", "", "### What the numbers say", "", "one."]
