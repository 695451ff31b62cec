"""Task × model summary tables (bayeserr.data.summaries) and ``bayeserr tasks``: the checks
of every row, the SE from n, and the same leaderboard as the report's section from the
per-question data the summary was made of."""

import json

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.analyses.tasks import over_tasks_summary, tasks_view
from bayeserr.base.errors import InputError
from bayeserr.data.summaries import load_task_summary
from bayeserr.stats.view import DataView

from ..analyses.test_tasks import _frame


def _summary(df, se=True):
    g = df.groupby(["model", "task"]).score
    out = pd.DataFrame({"score": g.mean(), "n": g.count()}).reset_index()
    if se:
        out["se"] = (g.var() / g.count()).pow(0.5).to_numpy()
    return out


def test_the_summary_gives_the_reports_leaderboard():
    df = _frame(seed=4, models=6, tasks=7, n=40)
    per_question = tasks_view(DataView.from_dataset(bayeserr.load(df, task_col="task")), 0.95, bayes=False)
    res = over_tasks_summary(load_task_summary(_summary(df)))
    assert [m.model for m in res.models] == [m.model for m in per_question.models]
    for a, b in zip(res.models, per_question.models):
        assert a.mean == pytest.approx(b.mean, abs=1e-12) and a.se == pytest.approx(b.se, rel=1e-10)
        assert a.rank_own == b.rank_own and a.tied_with_best == b.tied_with_best and a.rank_new == b.rank_new
    assert [r.key for r in res.readings] == ["sample", "strata_se", "bootstrap"]


def test_se_from_n_is_bernoulli():
    s = load_task_summary(pd.DataFrame({"model": ["a", "a"], "task": ["x", "y"], "score": [0.25, 0.5],
                                        "n": [100, 40]}))
    np.testing.assert_allclose(s.var[0], [0.25 * 0.75 / 100, 0.25 / 40])
    assert s.se_from == "n"
    mixed = load_task_summary(pd.DataFrame({"model": ["a", "a"], "task": ["x", "y"], "score": [0.25, 0.5],
                                            "se": [0.01, None], "n": [100, 40]}))
    np.testing.assert_allclose(mixed.var[0], [1e-4, 0.25 / 40])


@pytest.mark.parametrize("rows, message", [
    ({"model": ["a"], "task": ["x"], "score": [55.0], "se": [1.0]}, "divide percentages by 100"),
    ({"model": ["a", "a"], "task": ["x", "x"], "score": [0.5, 0.6], "se": [0.1, 0.1]}, "more than one row"),
    ({"model": ["a"], "task": ["x"], "score": [0.5]}, "standard error or its number of questions"),
    ({"model": ["a"], "task": ["x"], "score": [0.5], "se": [-0.1]}, "negative"),
    ({"model": ["a"], "task": ["x"], "score": ["high"], "se": [0.1]}, "not a number"),
    ({"model": [""], "task": ["x"], "score": [0.5], "se": [0.1]}, "model ('model') is empty"),
    ({"model": ["a"], "task": ["x"], "score": [0.5], "n": [1]}, "below 2"),
])
def test_bad_rows_are_named(rows, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_task_summary(pd.DataFrame(rows))


def test_cli_formats_and_errors(tmp_path, cli):
    df = _frame(seed=2, models=4, tasks=5, n=30)
    path = tmp_path / "summary.csv"
    _summary(df).assign(model=lambda d: d.model.where(d.model != "M0", "<b>M0</b>")).to_csv(path, index=False)
    md = cli("tasks", path)
    assert md.exit_code == 0 and "Over tasks like these" in md.stdout and "Rows: 20 read, 20 used" in md.stdout
    out = tmp_path / "s.json"
    assert cli("tasks", path, "-o", out).exit_code == 0
    rep = json.loads(out.read_text())
    assert rep["schema"] == "bayeserr.tasks/1" and rep["rows"]["used"] == 20
    html = tmp_path / "s.html"
    assert cli("tasks", path, "-o", html).exit_code == 0
    assert "<b>M0</b>" not in html.read_text() and "&lt;b&gt;M0&lt;/b&gt;" in html.read_text()
    two = tmp_path / "two.csv"
    _summary(_frame(tasks=2)).to_csv(two, index=False)
    res = cli("tasks", two)
    assert res.exit_code == 2 and "at least 3 tasks" in res.output and "Traceback" not in res.output
    assert cli("tasks", path, "--score-col", "acc").exit_code == 2
