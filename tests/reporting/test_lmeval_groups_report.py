"""lm-eval groups in the report (issue 25): the JSON's ``task_groups`` block (validated
against the shipped schema), the "lm-eval groups" table in Markdown and LaTeX, and the
note naming a group that cannot be scored (a task filtered out)."""

import json

import numpy as np
import pytest

from ..analyses.test_lmeval_groups import MODELS, _lmeval_aggregate, _scores, _write


@pytest.fixture
def lm_dir(tmp_path):
    scores = _scores()
    for model in MODELS:
        _write(tmp_path, model, scores[model])
    return tmp_path, scores


def test_json_holds_each_group_with_lmevals_score_given_back(lm_dir, cli_json):
    root, scores = lm_dir
    rep = cli_json("report", root, "--bayes", "off")  # validated against the schema
    groups = {g["group"]: g for g in rep["task_groups"]["groups"]}
    assert set(groups) == {"mmlu_mini", "mmlu_mini_humanities", "mmlu_mini_stem"}
    for g in groups.values():
        assert g["weighting"] == "size" and not g["missing"]
        tasks = [t["task"] for t in g["tasks"]]
        for m in g["models"]:
            x = scores[m["model"]]
            want = _lmeval_aggregate([np.mean(x[t]) for t in tasks], [len(x[t]) for t in tasks], True)
            assert m["mean"] == pytest.approx(want, abs=1e-12) and m["agree"] is True
            assert m["published"]["score"] == pytest.approx(want, abs=1e-12)
            assert m["se"] != pytest.approx(m["published"]["stderr"], rel=1e-6)  # pooled ≠ stratified


def test_markdown_and_latex_show_the_groups_table(lm_dir, cli):
    root, _ = lm_dir
    md = cli("report", root, "--bayes", "off")
    assert md.exit_code == 0, md.output
    section = md.stdout.split("### lm-eval groups", 1)[1].split("## Pairwise", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| mmlu_mini")]
    assert len(rows) == 3 * len(MODELS) and all(r.rstrip().endswith("| yes |") for r in rows)
    rep = json.loads(cli("report", root, "--bayes", "off", "--format", "json").stdout)
    first = rep["task_groups"]["groups"][0]["models"][0]
    assert f"{100 * first['mean']:.1f} ({100 * first['se']:.1f})" in rows[0]
    tex = cli("report", root, "--bayes", "off", "--format", "latex")
    assert tex.exit_code == 0 and r"\label{tab:bayeserr-task_groups}" in tex.stdout
    assert "pools the group" in tex.stdout  # the note, as a comment


def test_a_group_with_a_task_filtered_out_is_named_not_scored(lm_dir, cli):
    root, _ = lm_dir
    res = cli("report", root, "--bayes", "off", "--where", "task!=mmlu_mini_logic")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "Not scored, since their score would not be lm-eval's: mmlu_mini (not in the data: mmlu_mini_logic)" in text
    assert "| mmlu_mini_stem |" in res.stdout and "| mmlu_mini |" not in res.stdout


def test_a_table_without_groups_has_no_block(tmp_path, cli_json):
    path = tmp_path / "plain.csv"
    path.write_text("model,question_id,score\na,q1,1\na,q2,0\nb,q1,1\nb,q2,1\n")
    assert "task_groups" not in cli_json("report", path, "--bayes", "off")
