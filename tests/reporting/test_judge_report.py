"""Judge-scored evals in the report (issue 28): data with a human label on some answers get
a Judge section in every format and a ``judge`` block in the JSON (validated against the
shipped schema) whose numbers are those of :mod:`bayeserr.stats.ppi` on the same arrays,
with warnings when the labels are few, in few clusters, or chosen rather than random."""

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.analyses.judge import judge
from bayeserr.base.errors import InputError
from bayeserr.stats.ppi import ppi_mean, ppi_paired


def _table(seed=0, n=400, share=0.25, clusters=40, pick=None):
    rng = np.random.default_rng(seed)
    rows = []
    for m, p, bias in [("gpt-x", 0.62, 0.12), ("llama-y", 0.55, 0.0)]:
        for q in range(n):
            h = float(rng.random() < p)
            j = h if rng.random() < 0.85 else 1 - h
            if rng.random() < bias:
                j = 1.0
            labelled = (rng.random() < share) if pick is None else pick(q, j)
            rows.append({"model": m, "question_id": f"q{q:03d}", "cluster_id": f"c{q % clusters}",
                         "score": j, "human": h if labelled else np.nan})
    return pd.DataFrame(rows)


def test_json_judge_block_equals_the_statistics_on_the_same_arrays(tmp_path, cli_json):
    df = _table()
    path = tmp_path / "judged.csv"
    df.to_csv(path, index=False)
    rep = cli_json("report", path, "--human-col", "human", "--bayes", "off")  # validated against the schema
    got = {m["model"]: m for m in rep["judge"]["models"]}
    assert rep["judge"]["clustered"] is True
    wide = {c: df.pivot(index="question_id", columns="model", values=c) for c in ("score", "human")}
    codes = df.drop_duplicates("question_id").set_index("question_id").loc[wide["score"].index, "cluster_id"]
    for m in ("gpt-x", "llama-y"):
        want = ppi_mean(wide["human"][m].to_numpy(), wide["score"][m].to_numpy(), codes.to_numpy())
        assert got[m]["ppi"]["estimate"] == pytest.approx(want.ppi.estimate, abs=1e-12)
        assert got[m]["ppi"]["lower"] == pytest.approx(want.ppi.lower, abs=1e-12)
        assert got[m]["judge_only"]["estimate"] == pytest.approx(df[df.model == m].score.mean(), abs=1e-12)
        assert got[m]["n_labelled"] == int(df[df.model == m].human.notna().sum())
        assert got[m]["agreement"]["kind"] == "kappa" and got[m]["rogan_gladen"] is not None
    pair = rep["judge"]["pairs"][0]
    a, b = pair["a"], pair["b"]
    want = ppi_paired(wide["human"][a].to_numpy(), wide["score"][a].to_numpy(), wide["human"][b].to_numpy(),
                      wide["score"][b].to_numpy(), codes.to_numpy())
    assert pair["ppi"]["estimate"] == pytest.approx(want.ppi.estimate, abs=1e-12)


def test_every_format_has_the_judge_section(tmp_path, cli):
    path = tmp_path / "judged.csv"
    _table().to_csv(path, index=False)
    md = cli("report", path, "--human-col", "human", "--bayes", "off")
    assert md.exit_code == 0, md.output
    section = md.stdout.split("## Judge", 1)[1]
    assert "| gpt-x |" in section and "Human-scored (PPI++)" in section and "Judge-corrected comparisons" in section
    tex = cli("report", path, "--human-col", "human", "--bayes", "off", "--format", "latex")
    assert r"\label{tab:bayeserr-judge}" in tex.stdout and r"\label{tab:bayeserr-judge_pairs}" in tex.stdout
    out = tmp_path / "r.html"
    assert cli("report", path, "--human-col", "human", "--bayes", "off", "-o", out).exit_code == 0
    assert "<h2>Judge</h2>" in out.read_text()


def test_chosen_labels_few_clusters_and_few_labels_are_warned(tmp_path):
    chosen = _table(pick=lambda q, j: j == 1 and q % 3 == 0)  # labels only where the judge said 1
    res = judge(bayeserr.load(chosen, human_col="human"))
    assert any("looks chosen, not random" in w for w in res.warnings)
    few = _table(pick=lambda q, j: q % 40 in (0, 1) and q < 200)  # 10 labels in 2 clusters
    res = judge(bayeserr.load(few, human_col="human"))
    assert any("Few human labels" in w for w in res.warnings)
    assert any("concentrate in few clusters" in w for w in res.warnings)
    fine = judge(bayeserr.load(_table(), human_col="human"))
    assert not fine.warnings


def test_without_labels_there_is_no_judge_and_the_api_says_how(tmp_path, cli_json):
    df = _table().drop(columns="human")
    assert "judge" not in cli_json("report", _save(df, tmp_path), "--bayes", "off")
    with pytest.raises(InputError, match="--human-col"):
        bayeserr.judge(bayeserr.load(df))


def _save(df, tmp_path):
    path = tmp_path / "plain.csv"
    df.to_csv(path, index=False)
    return path


def test_one_models_labels_in_one_cluster_do_not_stop_the_report(tmp_path, cli):
    df = _table()
    one = (df.model == "llama-y") & df.human.notna() & (df.cluster_id != "c0")
    df.loc[one, "human"] = np.nan  # llama-y's labels all in cluster c0
    df.loc[(df.model == "llama-y") & (df.cluster_id == "c0"), "human"] = 1.0
    path = _save(df, tmp_path)
    res = cli("report", path, "--human-col", "human", "--bayes", "off")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "No corrected interval for llama-y" in text and "| gpt-x |" in res.stdout.split("## Judge", 1)[1]


def test_few_labels_get_no_interval_and_intervals_stay_possible(tmp_path, cli_json):
    df = _table(clusters=400, pick=lambda q, j: q % 50 == 0)  # 8 labels per model: under the minimum of 10
    rep = cli_json("report", _save(df, tmp_path), "--human-col", "human", "--bayes", "off")
    assert rep["judge"]["models"] == [] and rep["judge"]["pairs"] == []
    assert any(w["code"] == "judge_labels" and "fewer than 10" in w["message"] for w in rep["warnings"])
