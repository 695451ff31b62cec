"""bayeserr.integrations.inspect_metrics: the intervals as Inspect AI metrics.

The main test runs real Inspect tasks offline (the ``mockllm`` model with
scripted answers, a handful of samples, epochs, clusters) in a subprocess,
reads the metrics back from the ``.eval`` log it wrote, and checks them
against ``bayeserr report`` on the same log.  Everything that needs Inspect
skips cleanly when ``inspect_ai`` is not installed (it is the optional extra
``bayeserr[inspect]``).
"""

import json
import math
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

#: Same numbers, same code path: the metric and the report call the same
#: bayeserr functions on the same arrays, so agreement is to rounding.
TOL = 1e-12
KEYS = ("clustered", "wilson", "clopper_pearson", "beta_posterior", "hierarchical_posterior")


def _offline_env(tmp) -> dict:
    """Environment of the Inspect subprocess: no model API but mockllm, any HTTP
    request sent to a closed loopback port, Inspect's data files in ``tmp``."""
    env = dict(os.environ)
    env.update({
        "INSPECT_DISABLE_MODEL_API": "1",       # only mockllm may generate
        "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "",
        "HF_HUB_OFFLINE": "1",
        "XDG_DATA_HOME": str(tmp / "data"), "XDG_CACHE_HOME": str(tmp / "cache"),
        "INSPECT_LOG_DIR": str(tmp / "logs"),
    })
    for key in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        env.pop(key, None)
    return env


# --------------------------------------------------------------------------- #
# without Inspect too
# --------------------------------------------------------------------------- #
def test_import_bayeserr_never_imports_inspect():
    code = ("import sys, bayeserr; bayeserr.load; bayeserr.report; import bayeserr.data.readers; "
            "print(any(m == 'inspect_ai' or m.startswith('inspect_ai.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_inspect_is_a_clear_import_error():
    code = textwrap.dedent("""
        import sys
        sys.modules["inspect_ai"] = None          # as if it were not installed
        sys.modules["inspect_ai.scorer"] = None
        try:
            import bayeserr.integrations.inspect_metrics
        except ImportError as exc:
            print(exc)
        else:
            print("imported")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "bayeserr[inspect]"' in out.stdout


# --------------------------------------------------------------------------- #
# a real Inspect run, offline
# --------------------------------------------------------------------------- #
RUN_TASKS = r'''
import json, sys
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import (CORRECT, INCORRECT, PARTIAL, Score, Target, accuracy, match, scorer,
                               stderr)
from inspect_ai.solver import TaskState, generate
from bayeserr.integrations.inspect_metrics import ci_pass_hat_k, interval_metrics

N = 24

def scripted(answer):
    """A mockllm output function: answer(question, attempt) -> text, attempts counted per question
    (so each question's set of answers is fixed whatever order the epochs run in)."""
    calls = {}
    def out(messages, tools, tool_choice, config):
        i = int(messages[-1].text.split()[1])
        calls[i] = calls.get(i, 0) + 1
        o = ModelOutput.from_content(model="mockllm/model", content=answer(i, calls[i]))
        o.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return o
    return get_model("mockllm/model", custom_outputs=out)

def samples(nested=False):
    # five clusters of unequal size (4, 4, 4, 4, 8): fractional Bell-McCaffrey df
    out = []
    for i in range(1, N + 1):
        c = min((i - 1) // 4, 4)
        meta = {"info": {"repo": f"r{c}"}} if nested else {"repo": c}
        out.append(Sample(id=i, input=f"question {i}", target="yes", metadata=meta))
    return MemoryDataset(out)

@scorer(metrics=[accuracy()])
def graded():
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value={"yes": CORRECT, "half": PARTIAL}.get(text, INCORRECT))
    return score

runs = {}
log_dir = sys.argv[1]

# 1. 0/1 scores, one epoch, integer cluster ids: every interval applies
task = Task(name="binary", dataset=samples(), solver=generate(), scorer=match(),
            metrics=[accuracy(), stderr(cluster="repo"), *interval_metrics(cluster="repo")])
model = scripted(lambda i, k: "yes" if (i * 7) % 10 < 7 - (i > 16) else "no")
runs["binary"] = eval(task, model=model, log_dir=log_dir, display="none")[0]

# 2. 0/1 scores, three epochs reduced by "max" for accuracy; the bayeserr metrics
#    still see every epoch; nested cluster field
task = Task(name="epochs", dataset=samples(nested=True), solver=generate(), scorer=match(),
            metrics=[accuracy(), *interval_metrics(cluster="info.repo"), ci_pass_hat_k(k=3, cluster="info.repo"),
                     ci_pass_hat_k(k=2)], epochs=Epochs(3, "max"))
model = scripted(lambda i, k: "yes" if (i + k) % 3 != 0 or i % 5 == 0 else "no")
runs["epochs"] = eval(task, model=model, log_dir=log_dir, display="none")[0]

# 3. partial credit (P = 0.5), two epochs, no cluster: only the clustered interval
#    (each question its own cluster) applies
task = Task(name="partial", dataset=samples(), solver=generate(), scorer=graded(),
            metrics=[accuracy(), *interval_metrics()], epochs=2)
model = scripted(lambda i, k: ("yes", "half", "no")[(i + k) % 3] if i % 4 else "yes")
runs["partial"] = eval(task, model=model, log_dir=log_dir, display="none")[0]

print(json.dumps({name: {"status": log.status, "location": log.location,
                         "error": str(log.error) if log.error else None}
                  for name, log in runs.items()}))
'''

CLUSTER_FIELD = {"binary": "repo", "epochs": "info.repo", "partial": None}


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    """Run the three tasks once (subprocess: Inspect's global logging and event
    loop stay out of the test process); ``{run: path of its .eval log}``."""
    pytest.importorskip("inspect_ai")
    tmp = tmp_path_factory.mktemp("inspect")
    script = tmp / "run_tasks.py"
    script.write_text(RUN_TASKS)
    res = subprocess.run([sys.executable, str(script), str(tmp / "logs")], capture_output=True,
                         text=True, env=_offline_env(tmp), cwd=tmp, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    runs = json.loads(res.stdout.strip().splitlines()[-1])
    for name, run in runs.items():
        assert run["status"] == "success", (name, run["error"])
    return {name: run["location"] for name, run in runs.items()}


def _logged_metrics(path) -> dict:
    """The metrics as Inspect wrote them in the log file: ``{name: value}`` (None -> NaN)."""
    from inspect_ai.log import read_eval_log
    log = read_eval_log(path, header_only=True)
    out = {}
    for score in log.results.scores:
        for name, m in score.metrics.items():
            out[name] = math.nan if m.value is None else float(m.value)
    return out


def _report(cli_json, path, field):
    args = ["report", path, "--bayes", "full"] + (["--cluster-field", field] if field else [])
    (model,) = cli_json(*args)["models"]
    return model


def _same(metric_value, report_value):
    if report_value is None or not math.isfinite(report_value):
        return math.isnan(metric_value)
    return abs(metric_value - report_value) <= TOL


@pytest.mark.parametrize("run", ["binary", "epochs", "partial"])
def test_metrics_in_the_log_equal_bayeserr_report(inspect_logs, cli_json, run):
    path = inspect_logs[run]
    logged = _logged_metrics(path)
    model = _report(cli_json, path, CLUSTER_FIELD[run])
    for key in KEYS:
        lo, hi = logged[f"{key}_lower"], logged[f"{key}_upper"]
        iv = model["intervals"][key]
        if key == "clustered" and CLUSTER_FIELD[run] is None:
            continue  # the report has no clustered column without --cluster-field (checked below)
        if iv is None:
            assert math.isnan(lo) and math.isnan(hi), (run, key, lo, hi)
        else:
            assert _same(lo, iv[0]) and _same(hi, iv[1]), (run, key, (lo, hi), iv)


def test_each_run_exercises_what_it_should(inspect_logs, cli_json):
    """Guard the fixture: the runs differ the way the comparisons need."""
    binary = _report(cli_json, inspect_logs["binary"], "repo")
    assert all(binary["intervals"][k] is not None for k in KEYS)
    assert binary["k_samples"] == 1 and binary["n_clusters"] == 5
    assert not float(binary["df"]).is_integer()          # unequal clusters: fractional BM df
    assert 0.2 < binary["mean"] < 0.8

    epochs = _report(cli_json, inspect_logs["epochs"], "info.repo")
    assert epochs["k_samples"] == 3
    assert epochs["intervals"]["hierarchical_posterior"] is not None
    assert epochs["intervals"]["clopper_pearson"] is None and epochs["intervals"]["beta_posterior"] is None
    # accuracy used the "max" reducer; the bayeserr metrics averaged every epoch, like the report
    logged = _logged_metrics(inspect_logs["epochs"])
    assert logged["accuracy"] > epochs["mean"]
    lo, hi = logged["clustered_lower"], logged["clustered_upper"]
    assert lo < epochs["mean"] < hi and (lo + hi) / 2 == pytest.approx(epochs["mean"], abs=TOL)

    partial = _report(cli_json, inspect_logs["partial"], None)
    assert all(partial["intervals"][k] is None for k in KEYS)  # fractional, no clusters
    assert partial["k_samples"] == 2


def test_pass_hat_k_in_the_log_equals_the_reliability_section(inspect_logs, cli_json):
    """ci_pass_hat_k (each epoch a run) logs what the report's Reliability section says: pass^3
    clustered by the nested field, pass^2 without clusters."""
    logged = _logged_metrics(inspect_logs["epochs"])
    for k, field in ((3, "info.repo"), (2, None)):
        args = ["report", inspect_logs["epochs"], "--pass-hat-k", str(k)] + (["--cluster-field", field] if field
                                                                             else ["--no-cluster"])
        (row,) = cli_json(*args)["reliability"]["models"]
        assert logged[f"pass_hat_{k}"] == pytest.approx(row["estimate"], abs=TOL)
        assert logged[f"pass_hat_{k}_lower"] == pytest.approx(row["ci"][0], abs=TOL)
        assert logged[f"pass_hat_{k}_upper"] == pytest.approx(row["ci"][1], abs=TOL)
        assert 0 < row["estimate"] < 1 and row["ci"][0] < row["estimate"] < row["ci"][1]
    assert logged["pass_hat_3"] < logged["pass_hat_2"]


def test_unclustered_interval_is_t_over_questions(inspect_logs, cli_json):
    """Without ``cluster`` each question is its own cluster: CR2 is then the CLT SE over
    per-question means (epochs averaged first) and the interval uses t on n − 1 df."""
    model = _report(cli_json, inspect_logs["partial"], None)
    logged = _logged_metrics(inspect_logs["partial"])
    half = stats.t.ppf(0.975, model["n_questions"] - 1) * model["se_clt"]
    assert logged["clustered_lower"] == pytest.approx(model["mean"] - half, abs=TOL)
    assert logged["clustered_upper"] == pytest.approx(model["mean"] + half, abs=TOL)


def test_log_metrics_are_grouped_and_named(inspect_logs):
    """Each interval is two entries of the log's results, grouped under its metric's name,
    with the metric's arguments recorded (so Inspect can rebuild it)."""
    from inspect_ai.log import read_eval_log
    log = read_eval_log(inspect_logs["binary"], header_only=True)
    entries = {name: m for s in log.results.scores for name, m in s.metrics.items()}
    assert entries["clustered_lower"].group == "ci_clustered"
    assert entries["clustered_upper"].params == {"cluster": "repo", "level": 0.95}
    assert entries["clopper_pearson_lower"].group == "ci_exact"
    assert entries["hierarchical_posterior_upper"].group == "ci_hierarchical"
    # Inspect namespaces a metric by its installed package ("bayeserr/ci_clustered"); run
    # from a source tree whose *.egg-info shadows the install, the name is bare
    names = {m.name.split("/")[-1] for m in log.eval.metrics}
    assert {"ci_clustered", "ci_exact", "ci_beta", "ci_hierarchical", "accuracy"} <= names


def test_recomputed_from_log_samples(inspect_logs):
    """The metrics rebuilt from the definitions recorded in the log (name and
    arguments) and fed the log's own per-epoch sample scores, in any order, give
    the logged values again."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import SampleScore

    import bayeserr.integrations.inspect_metrics as im
    log = read_eval_log(inspect_logs["epochs"])
    scores = [SampleScore(score=s.scores["match"], sample_id=s.id, sample_metadata=s.metadata)
              for s in log.samples]
    assert len(scores) == 3 * 24
    random.Random(0).shuffle(scores)   # epoch order must not matter
    logged = _logged_metrics(inspect_logs["epochs"])
    rebuilt = [getattr(im, d.name.split("/")[-1])(**d.options) for d in log.eval.metrics
               if d.name.split("/")[-1].startswith("ci_")]
    assert len(rebuilt) == 7  # the five intervals and two pass^k
    for metric in rebuilt:
        for key, v in metric(scores).items():
            assert _same(v, logged[key]), (key, v, logged[key])


# --------------------------------------------------------------------------- #
# the metrics on hand-made scores
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def im():
    pytest.importorskip("inspect_ai")
    import bayeserr.integrations.inspect_metrics as im
    return im


def _scores(rows, clusters=None, field="repo"):
    """``rows[i]`` = the answers (epochs) of question i, as unreduced SampleScores."""
    from inspect_ai.scorer import SampleScore, Score
    out = []
    for i, answers in enumerate(rows):
        meta = {} if clusters is None else {field: clusters[i]}
        for a in answers:
            out.append(SampleScore(score=Score(value=a), sample_id=i + 1, sample_metadata=meta))
    return out


def test_values_are_mapped_like_bayeserr(im):
    from bayeserr.stats.fewclusters import cr2_mean, t_test
    rows = [["C"], ["I"], ["P"], ["N"], [1], [0.25], ["yes"], [False], [True], ["0.75"]]
    got = im.ci_clustered()(_scores(rows))
    s = np.array([1, 0, 0.5, 0, 1, 0.25, 1, 0, 1, 0.75])
    cr2 = cr2_mean(s[None], np.arange(10))
    lo, hi = t_test(cr2.mean, cr2.se, cr2.df, 0.95).ci[0]
    assert got == pytest.approx({"clustered_lower": lo, "clustered_upper": hi}, abs=TOL)
    with pytest.raises(ValueError, match="maybe"):
        im.ci_clustered()(_scores([["C"], ["maybe"]]))
    with pytest.raises(ValueError, match=r"metrics=\{'\*'"):
        im.ci_clustered()(_scores([[{"a": 1}], ["C"]]))
    # unscored answers (NaN) are left out, as Inspect leaves them out of its metrics
    assert im.ci_exact()(_scores([["C"], [math.nan], ["I"], ["C", math.nan]])) == \
        im.ci_exact()(_scores([["C"], ["I"], ["C"]]))


def test_epochs_are_averaged_per_question_first(im):
    """Three questions answered twice: SE over the 3 question means, not the 6 answers."""
    rows = [[1, 0], [1, 1], [0, 0]]
    got = im.ci_clustered()(_scores(rows))
    s = np.array([0.5, 1.0, 0.0])
    half = stats.t.ppf(0.975, 2) * s.std(ddof=1) / np.sqrt(3)
    assert got["clustered_lower"] == pytest.approx(0.5 - half, abs=TOL)
    assert got["clustered_upper"] == pytest.approx(0.5 + half, abs=TOL)
    shuffled = _scores(rows)
    random.Random(1).shuffle(shuffled)
    assert im.ci_clustered()(shuffled) == got


def test_exact_beta_hierarchical_match_bayeserr_functions(im):
    from bayeserr.models.beta_binomial import beta_posterior
    from bayeserr.models.hierarchical import fit_exact

    from bayeserr.stats.exact import proportion_interval
    rng = np.random.default_rng(3)
    x = (rng.random(30) < 0.7).astype(int)
    clusters = [f"c{i % 6}" for i in range(30)]
    scores = _scores([[v] for v in x], clusters)
    for method in ("clopper_pearson", "wilson", "jeffreys", "agresti_coull"):
        got = im.ci_exact(method=method, level=0.9)(scores)
        lo, hi = proportion_interval(x.sum(), 30, 0.9, method)
        assert got == pytest.approx({f"{method}_lower": lo, f"{method}_upper": hi}, abs=TOL)
    got = im.ci_beta(prior="jeffreys")(scores)
    assert list(got.values()) == pytest.approx(list(beta_posterior(x.sum(), 30, "jeffreys").interval(0.95)),
                                               abs=TOL)
    assert im.ci_beta(prior=(2, 3))(scores) == pytest.approx(
        dict(zip(got, beta_posterior(x.sum(), 30, (2, 3)).interval(0.95))), abs=TOL)
    got = im.ci_hierarchical(cluster="repo")(scores)
    k = np.bincount(np.arange(30) % 6, weights=x)
    n = np.bincount(np.arange(30) % 6).astype(float)
    # the report's column: the question-weighted mean of these clusters (docs/methods.md §5.2)
    assert list(got.values()) == pytest.approx(list(fit_exact(k, n).weighted_mean_interval(0.95, weights=n)),
                                               abs=TOL)


def test_not_applicable_is_nan(im):
    nan2 = lambda d: len(d) == 2 and all(math.isnan(v) for v in d.values())  # noqa: E731
    fractional = _scores([[1], [0.5], [0]])
    twice = _scores([[1, 0], [1, 1], [0, 1]])
    assert nan2(im.ci_exact()(fractional)) and nan2(im.ci_exact()(twice))
    assert nan2(im.ci_beta()(fractional)) and nan2(im.ci_beta()(twice))
    assert nan2(im.ci_hierarchical()(fractional))
    assert nan2(im.ci_hierarchical()(_scores([[1], [0], [1]])))  # no clusters, one answer each
    assert not nan2(im.ci_hierarchical()(twice))                  # epochs > 1: groups are questions
    assert nan2(im.ci_clustered(cluster="repo")(_scores([[1], [0], [1]], ["a", "a", "a"])))  # one cluster
    for m in (im.ci_clustered(), im.ci_exact(), im.ci_beta(), im.ci_hierarchical()):
        assert nan2(m([]))  # Inspect calls a metric with no scores for an all-unscored task


def test_cluster_ids_and_fields(im):
    ints = im.ci_clustered(cluster="repo")(_scores([[1], [0], [1], [1]], [1, 2, 1, 2]))
    text = im.ci_clustered(cluster="repo")(_scores([[1], [0], [1], [1]], ["1", "2", "1", "2"]))
    assert ints == text   # ids compared as text, as bayeserr does
    nested = _scores([[1], [0], [1], [1]], [{"repo": c} for c in "abab"], field="info")
    flat = _scores([[1], [0], [1], [1]], list("abab"))
    assert im.ci_clustered(cluster="info.repo")(nested) == im.ci_clustered(cluster="repo")(flat)
    with pytest.raises(ValueError, match="no metadata field 'repo'"):
        im.ci_clustered(cluster="repo")(_scores([[1], [0]]))
    with pytest.raises(ValueError, match="no metadata field 'repo'"):
        im.ci_hierarchical(cluster="repo")(_scores([[1], [0]], ["a", None]))


def test_bad_arguments_fail_when_the_task_is_defined(im):
    with pytest.raises(ValueError, match="level"):
        im.ci_clustered(level=95)
    with pytest.raises(ValueError, match="Did you mean|use one of"):
        im.ci_exact(method="clopper-pearson")
    with pytest.raises(ValueError, match="prior"):
        im.ci_beta(prior="flat")
    with pytest.raises(ValueError, match="positive"):
        im.ci_beta(prior=(0, 1))


def test_interval_metrics_lists_every_interval_once(im):
    from inspect_ai._util.registry import registry_info, registry_params
    ms = im.interval_metrics(cluster="repo", level=0.9)
    assert [registry_info(m).name.split("/")[-1] for m in ms] == [
        "ci_clustered", "ci_exact", "ci_exact", "ci_beta", "ci_hierarchical"]
    assert all(registry_params(m)["level"] == 0.9 for m in ms)
    keys = [k for m in ms for k in m(_scores([[1], [0], [1], [1]], list("abab")))]
    assert len(keys) == len(set(keys)) == 10
