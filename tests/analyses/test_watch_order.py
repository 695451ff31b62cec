"""bayeserr watch on questions that did not arrive in random order (review of issue 27):
sorted ids, clusters one after another, a running estimate outside its own sequence,
``--shuffle SEED`` for a finished file; the figure's user text kept literal for
matplotlib; one number format for the sentence and the page; a baseline folder of
several tasks for the Inspect manager."""

import json
import shutil

import numpy as np
import pytest

from bayeserr.analyses.sequential import Rules, _shuffled, order_findings, points, watch_scores

from ..conftest import SHARED, real_file

SWE = "swebench_verified_bashonly_per_instance.csv.gz"
OPUS = "Claude 4.5 Opus medium (20251101)"
LOGS = SHARED / "data" / "inspect-logs"


def test_sorted_ids_and_contiguous_clusters_are_found_random_order_is_not():
    ids = [f"q{i}" for i in range(1, 41)]  # natural order: q2 before q10
    assert [c for c, _ in order_findings(ids)] == ["the questions arrived sorted by id"]
    assert [c for c, _ in order_findings(ids[::-1])] == ["the questions arrived sorted by id"]
    rng = np.random.default_rng(0)
    mixed = list(rng.permutation(ids))
    assert order_findings(mixed) == []
    grouped = np.repeat([f"c{k}" for k in rng.permutation(8)], 5).tolist()
    found = [c for c, _ in order_findings(mixed, grouped)]
    assert found == ["the questions arrived cluster by cluster"]
    assert order_findings(mixed, grouped, cluster_units=True) == []  # clusters whole: the cluster order counts
    by_name = np.repeat([f"c{k}" for k in range(8)], 5).tolist()
    assert [c for c, _ in order_findings(mixed, by_name, cluster_units=True)] == [
        "the clusters arrived sorted by name"]
    assert order_findings(ids[:5]) == []  # too few to tell


def test_shuffle_by_cluster_keeps_each_cluster_together_and_is_seeded():
    clusters = np.repeat(np.array(list("abcdefgh")), 6)
    perm = _shuffled(len(clusters), clusters, 3)
    assert sorted(perm.tolist()) == list(range(len(clusters)))
    seq_ = clusters[perm]
    assert 1 + int((seq_[1:] != seq_[:-1]).sum()) == 8  # each cluster in one run
    assert np.array_equal(perm, _shuffled(len(clusters), clusters, 3))
    assert not np.array_equal(perm, _shuffled(len(clusters), clusters, 4))


def test_an_estimate_outside_its_sequence_is_said_in_the_verdict():
    rng = np.random.default_rng(5)
    x = np.concatenate([(rng.random(40) < 0.4), (rng.random(460) < 0.78)]).astype(float)  # hard first
    w = watch_scores(x, rules=Rules(width=0.01))
    assert "left its own sequence after" in w.sentence and "Caution:" in w.sentence
    assert any("its own confidence sequence" in n for n in w.notes) and "no stop is called" in w.sentence
    calm = watch_scores(np.random.default_rng(1).permutation(x), rules=Rules(width=0.01))
    assert "Caution" not in calm.sentence


def test_swebench_sorted_by_repository_is_said_and_shuffle_replays_it(cli):
    path = real_file(SWE)
    res = cli("watch", path, "--model", OPUS, "--width", "0.05", "--no-cluster", "--format", "json")
    got = json.loads(res.stdout)
    assert res.exit_code == 1 and "the questions arrived sorted by id" in got["sentence"]
    assert "left its own sequence" in got["sentence"] and "--shuffle SEED" in got["sentence"]
    assert got["order_warnings"] and got["shuffle"] is None
    est, up = np.array(got["sequence"]["estimate"]), np.array(got["sequence"]["upper"])
    assert (est > up + 1e-9).any()  # what the review saw: the estimate above its own upper bound
    res = cli("watch", path, "--model", OPUS, "--width", "0.05", "--no-cluster", "--shuffle", "1",
              "--format", "json")
    got = json.loads(res.stdout)
    assert "Caution" not in got["sentence"] and "in a random order (seed 1)" in got["sentence"]
    assert got["shuffle"] == 1 and got["order_warnings"] == []
    assert any("seed 1" in n and "simulation" in n for n in got["notes"])
    clustered = cli("watch", path, "--model", OPUS, "--width", "0.05")
    assert "the clusters arrived sorted by name" in clustered.stdout
    refused = cli("watch", path, "--model", OPUS, "--width", "0.05", "--shuffle", "1", "--follow")
    assert refused.exit_code == 2 and "--shuffle replays a finished file" in refused.output


def test_the_figure_draws_user_text_literally_and_the_page_uses_the_sentence_numbers():
    import pandas as pd

    import bayeserr
    from bayeserr.renderers.watch import figure, looks_table, render_html
    rng = np.random.default_rng(3)
    a, b = "<b>evil</b> | `x` $y$ & co", "base_line#1 %50"
    order = [f"q{q}" for q in rng.permutation(300)]
    df = pd.DataFrame([{"model": m, "question_id": q, "score": int(rng.random() < p)}
                       for m, p in ((a, 0.8), (b, 0.6)) for q in order])
    w = bayeserr.sequential(df, a, b, tie=0.05)
    ax = figure(w).axes[0]
    for t in [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_legend().get_texts()]:
        assert t.get_parse_math() is False
    assert "$y$" in ax.title.get_text()
    s = w.sequence
    i = w.stop.index
    cells = {r[-1].value: r for r in looks_table(w).rows}["stop"]
    shown = cells[2].value
    assert shown == f"[{points(s.lower[i], signed=True)}, {points(s.upper[i], signed=True)}]" and shown in w.sentence
    assert "−" in points(-0.006, signed=True) and points(0.251, signed=True) == "+25.1"
    assert "$y$" in render_html(w, "x.csv").replace("&amp;", "&")


def test_continue_sentence_reads_as_english():
    rng = np.random.default_rng(1)
    a, b = (rng.random(40) < 0.7).astype(float), (rng.random(40) < 0.6).astype(float)
    w = watch_scores(a, b, a="A", b="B", rules=Rules(tie=0.05))
    assert "waiting for it to exclude 0 or to lie inside ±5.0 points." in w.sentence
    w = watch_scores(a, b, a="A", b="B", rules=Rules(settle=False, tie=0.05))
    assert "waiting for it to lie inside ±5.0 points." in w.sentence


# ------------------------------------------------------------------ the manager's baseline folder
def _start(baseline, task, ids):
    import asyncio
    from types import SimpleNamespace

    from inspect_ai.dataset import Sample

    from bayeserr.integrations.inspect_stopping import sequential_stopping
    m = sequential_stopping(baseline=str(baseline), budget=5)
    t = SimpleNamespace(task=task, model="mockllm/m", scorers=[SimpleNamespace(name="match")],
                        dataset=SimpleNamespace(shuffled=True), config=SimpleNamespace(sample_shuffle=None))
    asyncio.run(m.start_task(t, [Sample(id=i, input="q", target="a") for i in ids], 1))
    return m


def test_a_baseline_folder_of_several_tasks_gives_the_run_of_this_task(tmp_path):
    pytest.importorskip("inspect_ai")
    from bayeserr.base.errors import InputError
    if not LOGS.is_dir():
        pytest.skip("../shared/data/inspect-logs absent")
    scored = LOGS / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    m = _start(LOGS, "popularity", range(1, 11))
    meta = m.summary()
    assert meta["baseline"]["file"] == str(scored) and meta["baseline"]["shared"] == 10
    note = next(n for n in meta["notes"] if "holds 4 logs" in n)
    assert "unscored" in note and "cancelled" in note and "inspect_evals/mmlu_0_shot" in note
    with pytest.raises(InputError, match=r"holds no run of task 'popular'.*'inspect_evals/mmlu_0_shot' \(1 log\), "
                                         r"'popularity' \(3 logs\)\. Did you mean 'popularity'"):
        _start(LOGS, "popular", range(1, 11))
    for name in ("a.eval", "b.eval"):
        shutil.copy(scored, tmp_path / name)
    with pytest.raises(InputError, match="holds 2 finished, scored runs of task 'popularity' by "
                                         "openai/gpt-4o-mini: a.eval .*; b.eval .*give its log as baseline="):
        _start(tmp_path, "popularity", range(1, 11))
    for name in ("a.eval", "b.eval"):
        (tmp_path / name).unlink()
    shutil.copy(LOGS / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval", tmp_path / "c.eval")
    with pytest.raises(InputError, match="no finished, scored run of task 'popularity': c.eval .*unscored"):
        _start(tmp_path, "popularity", range(1, 11))
