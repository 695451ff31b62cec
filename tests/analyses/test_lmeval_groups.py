"""lm-evaluation-harness task groups (``group_subtasks`` in ``results_*.json``): the reader
finds the leaf tasks and the groups, load() keeps them (JSON text in ds.attrs), and
``group_scores`` gives lm-eval's group score again (size-weighted: to 1e-12), the macro
score (the plain mean of the task means) and the stratified SE of docs/methods.md §3.12,
which is not lm-eval's pooled stderr.  The fixture is written as lm-eval writes it: the
aggregate and its stderr computed here the way lm-eval computes them."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import bayeserr
from bayeserr.analyses.groups import group_scores
from bayeserr.base.errors import InputError
from bayeserr.data.loading import task_groups
from bayeserr.data.readers import read_lmeval
from bayeserr.stats.view import DataView

DATE = "2025-03-04T10-11-12.123456"
#: leaf tasks (unequal sizes) of two nested subgroups of mmlu_mini, and a task in no group
STEM = {"mmlu_mini_physics": 30, "mmlu_mini_math": 12}
HUMANITIES = {"mmlu_mini_law": 45, "mmlu_mini_history": 20, "mmlu_mini_logic": 8}
LEAVES = {**STEM, **HUMANITIES}
SOLO = {"arc_mini": 15}
GROUPS = {"mmlu_mini": ["mmlu_mini_humanities", "mmlu_mini_stem"],
          "mmlu_mini_humanities": list(HUMANITIES), "mmlu_mini_stem": list(STEM)}
MODELS = {"org/model-a": 0.72, "org/model-b": 0.55}


def _scores(seed=0):
    """0/1 acc per model and task (every task has both values, so every variance is > 0)."""
    rng = np.random.default_rng(seed)
    out = {}
    for m, (model, p) in enumerate(MODELS.items()):
        out[model] = {}
        for t, (task, n) in enumerate({**LEAVES, **SOLO}.items()):
            x = (rng.random(n) < np.clip(p + 0.1 * np.sin(3 * t + m), 0.1, 0.9)).astype(float)
            x[:2] = [0.0, 1.0]
            out[model][task] = x
    return out


# lm-eval's own numbers (lm_eval/api/metrics.py), written here from their definitions
def _lmeval_stderr(x):
    """``mean_stderr``: the sample standard deviation (n − 1) over sqrt(n)."""
    return math.sqrt(sum((v - x.mean()) ** 2 for v in x) / (len(x) - 1)) / math.sqrt(len(x))


def _lmeval_aggregate(values, sizes, weight_by_size):
    """``aggregate_subtask_metrics``."""
    sizes = sizes if weight_by_size else [1] * len(sizes)
    return sum(v * n for v, n in zip(values, sizes)) / sum(sizes)


def _lmeval_pooled(stderrs, sizes):
    """``pooled_sample_stderr``."""
    pooled = sum((n - 1) * s ** 2 * n for n, s in zip(sizes, stderrs)) / (sum(sizes) - len(sizes))
    return math.sqrt(pooled / sum(sizes))


def _leaves(group):
    out = []
    for child in GROUPS[group]:
        out += _leaves(child) if child in GROUPS else [child]
    return out


def _write(root: Path, model: str, scores: dict, *, layout="0.4.12", weight_by_size=None, date=DATE,
           group_subtasks=True):
    """lm-eval's output folder for one model: ``results_<date>.json`` and one
    ``samples_<task>_<date>.jsonl`` per task.  ``weight_by_size``: {group: bool} (default
    True, lm-eval's); ``layout``: "0.4.12" (``sample_len``, groups only in group_subtasks
    as keys) or "0.4.9" (``n-samples`` sizes, aliases with " - ", standalone tasks as
    ``"task": []``)."""
    weight_by_size = {g: True for g in GROUPS} | (weight_by_size or {})
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    results, groups = {}, {}
    for task, x in scores.items():
        results[task] = {"alias": task, "acc,none": float(x.mean()), "acc_stderr,none": _lmeval_stderr(x)}
        if layout == "0.4.12":
            results[task] = {"name": task, **results[task], "sample_len": len(x)}
    for g in GROUPS:
        leaves = _leaves(g)
        values = [results[t]["acc,none"] for t in leaves]
        sizes = [len(scores[t]) for t in leaves]
        agg = {"alias": g, "acc,none": _lmeval_aggregate(values, sizes, weight_by_size[g]),
               "acc_stderr,none": _lmeval_pooled([results[t]["acc_stderr,none"] for t in leaves], sizes)}
        if layout == "0.4.12":
            agg = {"name": g, **agg, "sample_len": sum(sizes), "sample_count": {"acc,none": sum(sizes)}}
        groups[g] = agg
        results[g] = dict(agg)
    tree = dict(GROUPS) if layout == "0.4.12" else {**dict(reversed(GROUPS.items())), **{t: [] for t in SOLO}}
    data = {"results": results, "groups": groups,
            "configs": {t: {"task": t, "dataset_path": "cais/mmlu", "output_type": "multiple_choice",
                            "metric_list": [{"metric": "acc", "aggregation": "mean",
                                             "higher_is_better": True}]}
                        for t in scores},
            "versions": {t: 1.0 for t in [*scores, *GROUPS]}, "n-shot": {t: 0 for t in scores},
            "higher_is_better": {t: {"acc": True} for t in [*scores, *GROUPS]},
            "n-samples": {t: {"original": len(x) + 3, "effective": len(x)} for t, x in scores.items()},
            "config": {"model": "hf", "model_args": f"pretrained={model}", "batch_size": 1, "limit": None,
                       "bootstrap_iters": 100000},
            "git_hash": "4e7e0d47f", "date": 1741082000.0, "task_hashes": {t: "h" for t in scores},
            "model_source": "hf", "model_name": model, "model_name_sanitized": model.replace("/", "__"),
            "lm_eval_version": "0.4.12" if layout == "0.4.12" else "0.4.9"}
    if group_subtasks:
        data["group_subtasks"] = tree
    else:
        data.pop("groups")
        for g in GROUPS:
            data["results"].pop(g)
    (folder / f"results_{date}.json").write_text(json.dumps(data, indent=2))
    for task, x in scores.items():
        lines = [json.dumps({"doc_id": i,
                             "doc": {"question": f"{task} q{i}", "choices": ["a", "b"], "answer": 0},
                             "target": "0", "arguments": {"gen_args_0": {"arg_0": f"Q{i}", "arg_1": " a"},
                                                          "gen_args_1": {"arg_0": f"Q{i}", "arg_1": " b"}},
                             "resps": [[["-1.5", "False"]], [["-2.5", "False"]]],
                             "filtered_resps": [["-1.5", "False"], ["-2.5", "False"]], "filter": "none",
                             "metrics": ["acc"], "doc_hash": f"d{i}", "prompt_hash": f"p{i}",
                             "target_hash": "t", "acc": v}) for i, v in enumerate(x)]
        (folder / f"samples_{task}_{date}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture
def suite_dir(tmp_path):
    scores = _scores()
    for model in MODELS:
        _write(tmp_path, model, scores[model])
    return tmp_path, scores


def _hand_se(x_by_task, weights):
    """sqrt(Σ w_t² s_t² / n_t), s_t² with ddof = 1 (the suite's S1 without clusters)."""
    return math.sqrt(sum(w * w * x.var(ddof=1) / len(x) for x, w in zip(x_by_task, weights)))


# ------------------------------------------------------------------ reader and load
@pytest.mark.parametrize("layout", ["0.4.12", "0.4.9"])
def test_reader_finds_the_leaf_tasks_and_the_groups(tmp_path, layout):
    scores = _scores()
    for model in MODELS:
        _write(tmp_path, model, scores[model], layout=layout)
    df, dropped = read_lmeval(tmp_path)
    assert dropped == []
    assert set(df["task"]) == set(LEAVES) | set(SOLO)  # tasks stay the leaf tasks
    groups = df.attrs["task_groups"]
    assert set(groups) == set(GROUPS)  # arc_mini ("arc_mini": [] in 0.4.9) is no group
    top = groups["mmlu_mini"]
    assert sorted(top["tasks"]) == sorted(LEAVES)  # nested subgroups flattened
    assert top["children"] == GROUPS["mmlu_mini"] and top["missing"] == []
    assert top["metric"] == "acc,none" and top["weighting"] == "size"
    assert set(top["published"]) == set(MODELS)
    pub = top["published"]["org/model-a"]
    assert pub["same_run"] and pub["file"].endswith(f"results_{DATE}.json")
    assert pub["n"] == sum(LEAVES.values())
    json.dumps(groups)  # JSON-serialisable as it is

    ds = bayeserr.load(tmp_path)
    assert isinstance(ds.attrs["task_groups"], str)  # text: the attrs can be written to netCDF
    assert task_groups(ds) == groups
    assert task_groups(bayeserr.load(df)) == groups  # a reader's DataFrame carries them too
    assert task_groups(ds.isel(model=[0])) == groups
    xr.Dataset(attrs={"task_groups": ds.attrs["task_groups"]}).to_netcdf(tmp_path / "attrs.nc")


def test_size_weighted_group_equals_lmeval_and_macro_is_the_plain_mean(suite_dir):
    root, scores = suite_dir
    ds = bayeserr.load(root)
    res = group_scores(DataView.from_dataset(ds), task_groups(ds))
    published = json.loads((root / "org__model-a" / f"results_{DATE}.json").read_text())["groups"]
    info = {g.group: g for g in res.groups}["mmlu_mini"]
    assert info.scored and info.weighting == "size" and info.clusters == "are the tasks"
    assert sorted(zip(info.tasks, info.task_questions)) == sorted(LEAVES.items())
    for s in res.of("mmlu_mini"):
        x = [scores[s.model][t] for t in info.tasks]
        pub = json.loads((root / s.model.replace("/", "__") / f"results_{DATE}.json").read_text())
        lm = pub["groups"]["mmlu_mini"]
        assert s.weighting == "size" and s.mean == s.size.mean
        assert abs(s.mean - lm["acc,none"]) <= 1e-12 and s.agree and abs(s.diff) <= 1e-12
        assert s.published == lm["acc,none"] and s.published_stderr == lm["acc_stderr,none"]
        assert s.published_n == sum(LEAVES.values()) == s.n_questions
        plain = float(np.mean([v.mean() for v in x]))  # macro: the plain mean of the leaf means
        assert s.macro.mean == pytest.approx(plain, abs=1e-12)
        assert abs(s.macro.mean - s.size.mean) > 1e-3
        n = np.array([len(v) for v in x])
        se = _hand_se(x, n / n.sum())  # bayeserr's stratified SE of the size-weighted score
        assert s.se == pytest.approx(se, rel=1e-12)
        assert s.macro.se == pytest.approx(_hand_se(x, np.full(len(x), 1 / len(x))), rel=1e-12)
        assert s.se != pytest.approx(s.published_stderr, rel=1e-6)  # lm-eval's pooled stderr differs
        assert s.ci[0] < s.mean < s.ci[1] and s.df > 0
    assert published["mmlu_mini"]["acc,none"] == res.of("mmlu_mini")[0].published
    frame = res.to_frame()
    assert len(frame) == len(GROUPS) * len(MODELS) and frame["agree"].all()
    assert {"macro_mean", "size_se", "published_stderr"} <= set(frame.columns)
    out = res.to_dict()
    json.dumps(out)
    assert [g["group"] for g in out["groups"]] == list(GROUPS)


def test_a_macro_group_is_scored_under_its_weighting(tmp_path):
    """A subgroup lm-eval aggregates with weight_by_size: false: the reader tells it from the
    published scores, and bayeserr's score under it is the macro one, equal to lm-eval's."""
    scores = _scores(1)
    for model in MODELS:
        _write(tmp_path, model, scores[model], weight_by_size={"mmlu_mini_humanities": False})
    ds = bayeserr.load(tmp_path)
    groups = task_groups(ds)
    assert groups["mmlu_mini_humanities"]["weighting"] == "macro"
    assert "plain mean" in groups["mmlu_mini_humanities"]["weighting_from"]
    assert groups["mmlu_mini"]["weighting"] == "size"
    res = group_scores(DataView.from_dataset(ds), groups, level=0.9)
    for s in res.of("mmlu_mini_humanities"):
        plain = np.mean([scores[s.model][t].mean() for t in HUMANITIES])
        assert s.weighting == "macro" and s.mean == s.macro.mean
        assert abs(s.mean - plain) <= 1e-12 and s.agree
    assert all(s.agree for s in res.scores)


def test_results_without_group_subtasks_give_no_groups(tmp_path):
    scores = _scores()
    _write(tmp_path, "org/model-a", scores["org/model-a"], group_subtasks=False)
    df, _ = read_lmeval(tmp_path)
    assert "task_groups" not in df.attrs
    ds = bayeserr.load(tmp_path)
    assert "task_groups" not in ds.attrs and task_groups(ds) == {}
    res = group_scores(DataView.from_dataset(ds), task_groups(ds))
    assert res.groups == () and res.scores == () and len(res.to_frame()) == 0


@pytest.mark.parametrize("text", ["{not json", "[1, 2, 3]", ""])
def test_a_malformed_results_file_is_ignored_with_a_note(tmp_path, text):
    scores = _scores()
    folder = _write(tmp_path, "org/model-a", scores["org/model-a"])
    (folder / f"results_{DATE}.json").write_text(text)
    df, _ = read_lmeval(tmp_path)
    assert "task_groups" not in df.attrs
    assert set(df["model"]) == {"org__model-a"}  # named after the folder, as before
    ds = bayeserr.load(tmp_path)
    notes = ds.attrs["rows"]["notes"]
    assert any(f"results_{DATE}.json ignored" in n for n in notes)
    assert task_groups(ds) == {}


def test_a_malformed_group_tree_is_ignored_with_a_note(tmp_path):
    scores = _scores()
    folder = _write(tmp_path, "org/model-a", scores["org/model-a"])
    path = folder / f"results_{DATE}.json"
    data = json.loads(path.read_text())
    for tree, why in [({"a": ["b"], "b": ["a", "mmlu_mini_law"]}, "cycle"),
                      ({"a": "mmlu_mini_law"}, "not a list"), (["mmlu_mini"], "not an object")]:
        path.write_text(json.dumps(data | {"group_subtasks": tree}))
        df, _ = read_lmeval(tmp_path)
        assert "task_groups" not in df.attrs and set(df["model"]) == {"org/model-a"}
        assert any("task groups not read" in n and why in n for n in df.attrs["notes"])


def test_groups_with_tasks_filtered_out_are_kept_flagged_and_not_scored(suite_dir):
    root, _ = suite_dir
    ds = bayeserr.load(root, where="task!=mmlu_mini_logic")
    groups = task_groups(ds)
    assert groups["mmlu_mini"]["missing"] == ["mmlu_mini_logic"]
    assert groups["mmlu_mini_humanities"]["missing"] == ["mmlu_mini_logic"]
    assert groups["mmlu_mini_stem"]["missing"] == []
    res = group_scores(DataView.from_dataset(ds), groups)
    info = {g.group: g for g in res.groups}
    assert not info["mmlu_mini"].scored and res.of("mmlu_mini") == []
    assert info["mmlu_mini"].task_questions[info["mmlu_mini"].tasks.index("mmlu_mini_logic")] == 0
    assert all(s.agree for s in res.of("mmlu_mini_stem"))
    # a group none of whose tasks is left is dropped; a model left out loses its published score
    only = bayeserr.load(root, where="task=arc_mini,mmlu_mini_math,mmlu_mini_physics", models=["org/model-b"])
    groups = task_groups(only)
    assert set(groups) == {"mmlu_mini", "mmlu_mini_stem"}
    assert set(groups["mmlu_mini_stem"]["published"]) == {"org/model-b"}


def test_several_inputs_and_named_models(tmp_path):
    """Two model folders as two inputs merge their groups; NAME=PATH renames the published model."""
    scores = _scores()
    a = _write(tmp_path, "org/model-a", scores["org/model-a"])
    b = _write(tmp_path, "org/model-b", scores["org/model-b"])
    ds = bayeserr.load([a, b])
    assert set(task_groups(ds)["mmlu_mini"]["published"]) == set(MODELS)
    named = bayeserr.load({"alpha": a, "beta": b})
    res = group_scores(DataView.from_dataset(named), task_groups(named))
    assert {s.model for s in res.of("mmlu_mini")} == {"alpha", "beta"}
    assert all(s.agree for s in res.scores)


def test_a_results_file_of_another_run_is_used_but_flagged(tmp_path):
    """The samples' run (date in the names) has no results file: the group comes from another
    run's, its published score flagged same_run False (it may not be these samples' score)."""
    scores = _scores()
    folder = _write(tmp_path, "org/model-a", scores["org/model-a"])
    (folder / f"results_{DATE}.json").rename(folder / "results_2025-01-01T00-00-00.000000.json")
    groups = task_groups(bayeserr.load(tmp_path))
    assert groups["mmlu_mini"]["published"]["org/model-a"]["same_run"] is False


def test_a_one_task_group_and_the_arguments(suite_dir):
    root, scores = suite_dir
    ds = bayeserr.load(root)
    groups = task_groups(ds) | {"solo": {"tasks": ["arc_mini"], "weighting": "size"}}
    res = group_scores(DataView.from_dataset(ds), groups)
    for s in res.of("solo"):
        x = scores[s.model]["arc_mini"]
        assert s.mean == pytest.approx(x.mean(), abs=1e-12)
        assert s.se == pytest.approx(math.sqrt(x.var(ddof=1) / len(x)), rel=1e-12)
        assert s.published is None and s.agree is None
    assert len(group_scores(DataView.from_dataset(ds), ds).scores) == len(GROUPS) * len(MODELS)
    assert len(group_scores(DataView.from_dataset(ds), ds.attrs["task_groups"]).scores) == 6
    with pytest.raises(InputError, match="groups takes"):
        group_scores(DataView.from_dataset(ds), [1, 2])
    with pytest.raises(InputError, match="level"):
        group_scores(DataView.from_dataset(ds), groups, level=1.5)
    bad = ds.copy()
    bad.attrs["task_groups"] = "{oops"
    with pytest.raises(InputError, match="task_groups"):
        task_groups(bad)


def test_a_rerun_takes_the_published_scores_of_its_own_run(tmp_path):
    """Two runs in one folder (--duplicate-runs latest keeps the newer samples): the group's
    published score is the one of the results file with the same date as the samples kept."""
    old, new = _scores(3), _scores(4)
    _write(tmp_path, "org/model-a", old["org/model-a"], date="2025-01-01T00-00-00.000000")
    _write(tmp_path, "org/model-a", new["org/model-a"])
    ds = bayeserr.load(tmp_path, duplicate_runs="latest")
    pub = task_groups(ds)["mmlu_mini"]["published"]["org/model-a"]
    assert pub["same_run"] and DATE in pub["file"]
    res = group_scores(DataView.from_dataset(ds), task_groups(ds))
    assert all(s.agree for s in res.scores)


def test_a_published_score_that_fits_no_weighting_leaves_the_weighting_unknown(tmp_path):
    scores = _scores()
    folder = _write(tmp_path, "org/model-a", scores["org/model-a"])
    path = folder / f"results_{DATE}.json"
    data = json.loads(path.read_text())
    data["groups"]["mmlu_mini"]["acc,none"] += 0.01
    data["results"]["mmlu_mini"]["acc,none"] += 0.01
    path.write_text(json.dumps(data))
    ds = bayeserr.load(tmp_path)
    entry = task_groups(ds)["mmlu_mini"]
    assert entry["weighting"] is None and "neither" in entry["weighting_from"]
    (s,) = group_scores(DataView.from_dataset(ds), task_groups(ds)).of("mmlu_mini")
    assert np.isnan(s.mean) and s.agree is None and s.diff is None
    assert np.isfinite(s.macro.mean) and np.isfinite(s.size.mean)
    assert s.published == pytest.approx(s.size.mean + 0.01)
