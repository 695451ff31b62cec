"""bayeserr.integrations.inspect_stopping: Inspect's early stopping driven by a confidence sequence.

Real offline Inspect runs (``mockllm`` with scripted answers, in a subprocess,
as in ``tests/integrations/test_inspect_metrics.py``) check that a task stops by itself
once its rule holds and that the log says why; the manager is also driven
directly through the protocol (fake scores) and its stop compared with
:func:`bayeserr.analyses.sequential.watch_scores` and with the sequence
computed straight from :mod:`bayeserr.stats.sequential`.  Everything that
needs Inspect skips cleanly without ``inspect_ai`` (the ``bayeserr[inspect]``
extra).
"""

import asyncio
import json
import math
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bayeserr.analyses.sequential import Rules, watch_scores
from bayeserr.base.errors import InputError
from bayeserr.stats import sequential as seq

from .test_inspect_metrics import _offline_env

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guide" / "early-stopping.md"


def _right_one(i):   # one model: 80% right
    return (i * 7) % 10 < 8


def _right_base(i):  # the baseline: 60% right
    return (i * 7) % 10 < 6


def _right_cand(i):  # the better candidate: 90% right
    return (i * 3) % 10 < 9


def _right_epochs(i):  # 90% right in every epoch
    return (i * 7) % 10 < 9


# --------------------------------------------------------------------------- #
# without Inspect too
# --------------------------------------------------------------------------- #
def test_import_bayeserr_never_imports_the_manager():
    code = ("import sys, bayeserr; bayeserr.load; bayeserr.report; import bayeserr.analyses.sequential; "
            "print(sorted(m for m in sys.modules if m == 'inspect_ai' or m.startswith('inspect_ai.') "
            "or m.endswith('inspect_stopping')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_inspect_is_a_clear_import_error():
    code = textwrap.dedent("""
        import sys
        sys.modules["inspect_ai"] = None          # as if it were not installed
        sys.modules["inspect_ai.util"] = None
        try:
            import bayeserr.integrations.inspect_stopping
        except ImportError as exc:
            print(exc)
        else:
            print("imported")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "bayeserr[inspect]"' in out.stdout


# --------------------------------------------------------------------------- #
# real Inspect runs, offline
# --------------------------------------------------------------------------- #
RUN_TASKS = r'''
import json, sys
from pathlib import Path
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate
from bayeserr.integrations.inspect_stopping import sequential_stopping

RIGHT = {
    "one": lambda i: (i * 7) % 10 < 8,
    "base": lambda i: (i * 7) % 10 < 6,
    "cand": lambda i: (i * 3) % 10 < 9,
    "epochs": lambda i: (i * 7) % 10 < 9,
}

def scripted(name, right):
    def out(messages, tools, tool_choice, config):
        i = int(messages[-1].text.split()[1])
        o = ModelOutput.from_content(model=name, content="yes" if right(i) else "no")
        o.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return o
    return get_model(name, custom_outputs=out)

def questions(n):
    return MemoryDataset([Sample(id=i, input=f"question {i}", target="yes") for i in range(1, n + 1)])

def task(name, n, stopping=None, epochs=1):
    return Task(name=name, dataset=questions(n), solver=generate(), scorer=match(), epochs=epochs,
                early_stopping=stopping)

log_dir = Path(sys.argv[1])
runs = {}
# (a) one model, 400 questions, 80% right, one at a time: stops once known to +-10 points
runs["one"] = eval(task("one", 400, sequential_stopping(width=0.1)),
                   model=scripted("mockllm/model", RIGHT["one"]), log_dir=str(log_dir),
                   display="none", max_samples=1)[0]
# three epochs: the first epoch feeds the sequence; the later ones are skipped after the stop
runs["epochs"] = eval(task("epochs", 150, sequential_stopping(width=0.1), epochs=3),
                      model=scripted("mockllm/model", RIGHT["epochs"]), log_dir=str(log_dir),
                      display="none", max_samples=2)[0]
# (b) a baseline's complete run, then candidates against its log, three samples at a time
runs["baseline"] = eval(task("pair", 200), model=scripted("mockllm/base", RIGHT["base"]),
                        log_dir=str(log_dir / "baseline"), display="none")[0]
runs["better"] = eval(task("pair", 200, sequential_stopping(baseline=runs["baseline"].location)),
                      model=scripted("mockllm/cand", RIGHT["cand"]), log_dir=str(log_dir),
                      display="none", max_samples=3)[0]
runs["equal"] = eval(task("pair", 200, sequential_stopping(baseline=str(log_dir / "baseline"), budget=60)),
                     model=scripted("mockllm/cand", RIGHT["base"]), log_dir=str(log_dir),
                     display="none", max_samples=3)[0]

print(json.dumps({name: {"status": log.status, "location": log.location,
                         "error": str(log.error) if log.error else None}
                  for name, log in runs.items()}))
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run the tasks once (subprocess: Inspect's global logging and event loop
    stay out of the test process); ``{run: path of its .eval log}``."""
    pytest.importorskip("inspect_ai")
    tmp = tmp_path_factory.mktemp("inspect_stopping")
    script = tmp / "run_tasks.py"
    script.write_text(RUN_TASKS)
    res = subprocess.run([sys.executable, str(script), str(tmp / "logs")], capture_output=True,
                         text=True, env=_offline_env(tmp), cwd=tmp, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    for name, run in out.items():
        assert run["status"] == "success", (name, run["error"])
    return {name: run["location"] for name, run in out.items()}


def _log(path):
    from inspect_ai.log import read_eval_log
    return read_eval_log(path)


def _scores_by_id(log) -> dict:
    return {(s.id, s.epoch): s.scores["match"].value for s in log.samples}


def test_one_model_stops_once_its_mean_is_known(runs):
    from bayeserr.integrations.inspect_stopping import MANAGER
    log = _log(runs["one"])
    es = log.results.early_stopping
    meta = es.metadata
    assert es.manager == MANAGER
    assert meta["decision"] == "stop" and meta["outcome"] == "known" and meta["settled"] is True
    assert meta["sentence"].startswith("stop: mockllm/model's mean score is known to ±10.0 points")
    # the stream: questions 1, 2, ... in order (one at a time); its first look known to ±10 points,
    # computed here straight from the betting sequence
    x = np.array([1.0 if _right_one(i) else 0.0 for i in range(1, 401)])
    _, lo, hi = seq.betting_bounds(x, alpha=0.05)
    t = seq.first_width(lo, hi, 0.1)
    assert 100 < t < 400
    assert meta["stop"]["t"] == t and meta["stop"]["rule"] == "width"
    assert meta["stop"]["lower"] == pytest.approx(lo[t - 1])
    assert meta["stop"]["upper"] == pytest.approx(hi[t - 1])
    assert meta["stopped_after"] == t
    # the run stopped there: at most the one sample in flight finished after it
    done = sorted(s.id for s in log.samples)
    assert t <= len(done) <= t + 1 and done == list(range(1, len(done) + 1))
    assert log.results.completed_samples == len(done)
    assert {e.id for e in es.early_stops} == set(range(len(done) + 1, 401))
    assert all(e.reason == meta["sentence"] and e.metadata["rule"] == "width" for e in es.early_stops)
    assert all(_scores_by_id(log)[(i, 1)] == ("C" if x[i - 1] else "I") for i in done)
    # the interval at the end includes the sample in flight
    assert meta["n_questions"] == len(done) and meta["samples"]["entered"] == len(done)
    assert meta["samples"]["planned"] == 400 and meta["samples"]["skipped_by_stop"] == 400 - len(done)
    assert "not shuffled" in " ".join(meta["notes"])
    json.dumps(meta, allow_nan=False)


def test_epochs_the_first_feeds_the_sequence_and_later_ones_are_skipped(runs):
    log = _log(runs["epochs"])
    es = log.results.early_stopping
    meta = es.metadata
    x = np.array([1.0 if _right_epochs(i) else 0.0 for i in range(1, 151)])
    _, lo, hi = seq.betting_bounds(x, alpha=0.05)
    t = seq.first_width(lo, hi, 0.1)
    assert t < 150 and meta["decision"] == "stop" and meta["epochs"] == 3
    done = {(s.id, s.epoch) for s in log.samples}
    assert {e for _, e in done} == {1}                   # Inspect runs epoch 1 of every sample first
    assert t <= len(done) <= t + 2                        # two samples at a time
    stopped = {(e.id, e.epoch) for e in es.early_stops}
    assert stopped | done == {(i, e) for i in range(1, 151) for e in (1, 2, 3)}
    # with two at a time the order may differ a little from 1, 2, ...; the stop is within one swap
    assert abs(meta["stop"]["t"] - t) <= 2


def test_candidate_clearly_better_than_the_baseline_stops_better(runs):
    log = _log(runs["better"])
    meta = log.results.early_stopping.metadata
    assert meta["decision"] == "stop" and meta["outcome"] == "better"
    assert meta["sentence"].startswith("stop: mockllm/cand is better than mockllm/base (")
    assert meta["a"] == "mockllm/cand" and meta["b"] == "mockllm/base"
    assert meta["baseline"]["source"] == runs["baseline"] and meta["baseline"]["shared"] == 200
    assert meta["baseline"]["task"] == "pair" and meta["baseline"]["model"] == "mockllm/base"
    t = meta["stop"]["t"]
    assert meta["stop"]["lower"] > 0 and t < 100
    assert t <= log.results.completed_samples <= t + 3
    # the stream as it arrived: its first exclusion of 0 from the paired sequence is the stop
    stream = sorted(log.samples, key=lambda s: s.completed_at)
    d = np.array([float(s.scores["match"].value == "C") - float(_right_base(s.id)) for s in stream])
    _, lo, hi = seq.betting_bounds((d + 1) / 2, alpha=0.05)
    if len({s.completed_at for s in stream}) == len(stream):  # completion times tell the order
        assert seq.first_exclusion(2 * lo - 1, 2 * hi - 1, 0.0) == t


def test_equal_candidate_stops_at_the_budget_not_settled(runs):
    log = _log(runs["equal"])
    meta = log.results.early_stopping.metadata
    assert meta["decision"] == "stop" and meta["outcome"] == "budget" and meta["settled"] is False
    assert "the budget of 60 questions is spent, not settled" in meta["sentence"]
    assert meta["stop"]["t"] == 60 and meta["stop"]["lower"] < 0 < meta["stop"]["upper"]
    assert 60 <= log.results.completed_samples <= 63
    assert meta["baseline"]["source"].endswith("baseline")  # a folder of logs


def test_report_of_a_stopped_log_warns_that_its_fixed_n_numbers_ignore_the_stop(runs, cli, tmp_path):
    """bayeserr report on a log the manager stopped: in every format, a note (and the
    early_stopped warning) that the fixed-n interval and p ignore the optional stop, quoting
    the anytime-valid sequence the log records."""
    from bayeserr.data.readers import EARLY_STOP_NOTE
    from bayeserr.registries.caveats import early_stopped
    meta = _log(runs["better"]).results.early_stopping.metadata
    stop = meta["stop"]
    quoted = (f"[{100 * stop['lower']:+.1f}, {100 * stop['upper']:+.1f}] at the stop ({stop['t']} questions)"
              .replace("-", "−"))
    args = ("report", runs["better"], runs["baseline"], "--on-unpaired", "drop", "--bayes", "off")
    got = json.loads(cli(*args, "--format", "json").stdout)
    (note,) = [n for n in got["rows"]["notes"] if EARLY_STOP_NOTE in n]
    assert f"after {stop['t']} of its 200 planned questions" in note and quoted in note
    assert "do not account for the data-dependent stop" in note and "optimistic" in note
    assert [c.code for c in early_stopped(got["rows"])] == ["early_stopped"]
    warned = [w for w in got["warnings"] if w.get("code") == "early_stopped"]
    assert all(quoted in w["message"] for w in warned)  # the report's warnings, where build.py adds them
    for fmt in ("md", "html", "latex"):
        out = tmp_path / f"report.{fmt}"
        assert cli(*args, "--format", fmt, "-o", out).exit_code == 0
        page = " ".join(out.read_text().split())  # md wraps its lines
        assert EARLY_STOP_NOTE in page and "optimistic" in page, fmt
    base = json.loads(cli("report", runs["baseline"], "--bayes", "off", "--format", "json").stdout)
    assert not any(EARLY_STOP_NOTE in n for n in base["rows"].get("notes") or [])


def test_a_baseline_of_another_task_is_refused(runs):
    """The baseline's log must share sample ids with the task."""
    from bayeserr.integrations.inspect_stopping import sequential_stopping
    other = [_sample(f"x{i}") for i in range(5)]
    m = sequential_stopping(baseline=runs["baseline"])
    with pytest.raises(InputError, match="shares no sample id with task 'other'"):
        asyncio.run(m.start_task(_task("other"), other, 1))
    m = sequential_stopping(baseline=runs["baseline"])
    with pytest.raises(InputError, match="shares no sample id with task 'pair'"):
        asyncio.run(m.start_task(_task("pair"), other, 1))
    # the same ids under another task name: compared, with a note
    m = sequential_stopping(baseline=runs["baseline"])
    asyncio.run(m.start_task(_task("renamed"), [_sample(i) for i in range(1, 11)], 1))
    notes = " ".join(m.summary()["notes"])
    assert "The baseline's task is 'pair', this run's 'renamed'" in notes


@pytest.mark.slow  # a second Inspect subprocess (~10 s); the runs above cover the same ground
def test_the_guide_example_runs_offline(tmp_path):
    """docs/guide/early-stopping.md's offline example, as printed there, with the network cut off."""
    pytest.importorskip("inspect_ai")
    from ..data.readers.test_inspect_logs import _offline
    text = DOCS.read_text()
    (code,) = re.findall(r"```python\n(# stop_early\.py\n.*?)```", text, re.DOTALL)
    (shown,) = re.findall(r"```text\n\$ python stop_early\.py\n(.*?)```", text, re.DOTALL)
    (tmp_path / "stop_early.py").write_text(code)
    res = subprocess.run([sys.executable, "stop_early.py"], capture_output=True, text=True,
                         env=_offline(tmp_path), cwd=tmp_path, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    counts, sentence = res.stdout.strip().splitlines()[-2:]
    found = re.fullmatch(r"(\d+) of (\d+) questions run, (\d+) skipped", counts)
    run, total, skipped = map(int, found.groups())
    assert total == 200 and run + skipped == total
    assert sentence.startswith("stop: mockllm/candidate is not worse than mockllm/baseline by more than 1.0 "
                               "points (")
    t = int(re.search(r"after (\d+) questions", sentence).group(1))
    assert t <= run <= t + 4
    assert shown.splitlines()[1].startswith("stop: mockllm/candidate is not worse than mockllm/baseline")


# --------------------------------------------------------------------------- #
# the manager through the protocol, without Inspect's runner
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def ism():
    pytest.importorskip("inspect_ai")
    import bayeserr.integrations.inspect_stopping as ism
    return ism


def _task(name="t", model="mockllm/model", scorers=("match",), shuffled=True):
    return SimpleNamespace(task=name, model=model, scorers=[SimpleNamespace(name=s) for s in scorers],
                           dataset=SimpleNamespace(shuffled=shuffled),
                           config=SimpleNamespace(sample_shuffle=None))


def _sample(i, **meta):
    from inspect_ai.dataset import Sample
    return Sample(id=i, input=f"question {i}", target="yes", metadata=meta or None)


def _scores(value, sid, scorer="match"):
    from inspect_ai.scorer import SampleScore, Score
    return {scorer: SampleScore(score=Score(value=value), sample_id=sid)}


def _drive(manager, samples, answers, epochs=1, task=None):
    """Inspect's loop, one sample at a time: ``answers[(id, epoch)]`` is the score value;
    returns (ids completed in order, early stops)."""
    async def run():
        await manager.start_task(task or _task(), samples, epochs)
        done, stops = [], []
        for epoch in range(1, epochs + 1):
            for s in samples:
                stop = await manager.schedule_sample(s.id, epoch)
                if stop is not None:
                    stops.append(stop)
                    continue
                await manager.complete_sample(s.id, epoch, _scores(answers[(s.id, epoch)], s.id))
                done.append((s.id, epoch))
        return done, stops, await manager.complete_task()
    return asyncio.run(run())


def test_one_model_stop_equals_watch_scores_and_the_sequence(ism):
    rng = np.random.default_rng(7)
    n = 500
    x = (rng.random(n) < 0.9).astype(float)
    samples = [_sample(i) for i in range(1, n + 1)]
    done, stops, meta = _drive(ism.sequential_stopping(width=0.05, check_every=1), samples,
                               {(i, 1): float(x[i - 1]) for i in range(1, n + 1)})
    w = watch_scores(x, rules=Rules(width=0.05), a="mockllm/model")
    _, lo, hi = seq.betting_bounds(x, alpha=0.05)
    t = seq.first_width(lo, hi, 0.05)
    assert w.stop is not None and w.stop.t == t
    at_stop = w.sentence.split(" Since then:")[0]  # the manager's stream ends at the stop
    assert meta["stop"] == w.stop.to_dict() and meta["sentence"] == at_stop
    assert len(done) == t and len(stops) == n - t       # checked after every answer: stopped at once
    assert stops[0].reason == at_stop and stops[0].metadata["questions"] == t
    assert meta["decision"] == "stop" and meta["outcome"] == "known"
    json.dumps(meta, allow_nan=False)


def test_the_default_cadence_finds_the_same_stop_a_little_later(ism):
    rng = np.random.default_rng(8)
    n = 3000
    x = (rng.random(n) < 0.9).astype(float)
    samples = [_sample(i) for i in range(1, n + 1)]
    done, _, meta = _drive(ism.sequential_stopping(width=0.03), samples,
                           {(i, 1): float(x[i - 1]) for i in range(1, n + 1)})
    _, lo, hi = seq.betting_bounds(x, alpha=0.05)
    t = seq.first_width(lo, hi, 0.03)
    assert t > ism.EVERY_ANSWER_UP_TO and meta["stop"]["t"] == t
    assert t <= len(done) <= t + max(1, int(t * ism.CHECK_GROWTH)) + 1


def test_pair_stop_equals_watch_scores_in_completion_order(ism):
    """A − B in the order the candidate finishes (shuffled), against a mapping baseline that
    lacks some questions; letters, bools and numbers map as the reader maps them."""
    rng = np.random.default_rng(11)
    n = 400
    a = (rng.random(n) < 0.75).astype(float)
    b = (rng.random(n) < 0.55).astype(float)
    baseline = {i: ("C" if b[i - 1] else "I") for i in range(1, n + 1) if i % 10}  # ids 10, 20, ... missing
    order = list(range(1, n + 1))
    random.Random(3).shuffle(order)
    values = {(i, 1): [bool(a[i - 1]), "C" if a[i - 1] else "I", int(a[i - 1])][i % 3] for i in order}
    samples = [_sample(i) for i in order]
    done, stops, meta = _drive(ism.sequential_stopping(baseline=baseline, check_every=1), samples, values)
    shared = [i for i in order if i % 10]
    ya, yb = a[np.array(shared) - 1], b[np.array(shared) - 1]
    w = watch_scores(ya, yb, rules=Rules(), a="mockllm/model", b="baseline")
    _, lo, hi = seq.betting_bounds((ya - yb + 1) / 2, alpha=0.05)
    t = seq.first_exclusion(2 * lo - 1, 2 * hi - 1, 0.0)
    assert w.stop is not None and w.stop.t == t and meta["stop"] == w.stop.to_dict()
    assert meta["outcome"] == ("better" if w.stop.lower > 0 else "worse") == w.outcome
    at_stop = w.sentence.split(" Since then:")[0]  # the manager's stream ends at the stop
    assert meta["sentence"] == at_stop and stops[0].reason == at_stop
    assert meta["baseline"] == {"source": "mapping", "questions": len(baseline), "shared": len(shared)}
    # the candidate's questions the baseline lacks ran but did not enter
    assert len([i for i, _ in done if i % 10]) == t
    assert meta["samples"]["not_in_baseline"] == len([i for i, _ in done if not i % 10])
    assert any("not in the baseline" in note for note in meta["notes"])


def test_margin_tie_and_width_rules_reach_the_watch(ism):
    rng = np.random.default_rng(5)
    n = 400
    a = (rng.random(n) < 0.7).astype(float)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)               # close to a: a near-tie
    baseline = {i: float(b[i - 1]) for i in range(1, n + 1)}
    samples = [_sample(i) for i in range(1, n + 1)]
    answers = {(i, 1): float(a[i - 1]) for i in range(1, n + 1)}
    for kw in ({"margin": 0.05}, {"tie": 0.08, "settle": False}, {"width": 0.06}, {"tie": 0.1, "budget": 50}):
        _, _, meta = _drive(ism.sequential_stopping(baseline=baseline, check_every=1, **kw), samples, answers)
        w = watch_scores(a, b, rules=Rules(**kw), a="mockllm/model", b="baseline")
        assert meta["stop"] == (w.stop and w.stop.to_dict()) and meta["outcome"] == (w.outcome or None), kw
        assert meta["rules"] == Rules(**kw).to_dict()


def test_asymptotic_method(ism):
    rng = np.random.default_rng(2)
    x = (rng.random(500) < 0.6).astype(float)
    _, _, meta = _drive(ism.sequential_stopping(width=0.06, method="asymptotic", level=0.9, check_every=1),
                        [_sample(i) for i in range(1, 501)], {(i, 1): float(x[i - 1]) for i in range(1, 501)})
    w = watch_scores(x, rules=Rules(width=0.06), method="asymptotic", level=0.9, a="mockllm/model")
    assert meta["stop"] == w.stop.to_dict() and meta["method"] == "asymptotic" and meta["level"] == 0.9


def test_clusters_wait_for_their_last_question(ism):
    """Clusters in random order, their questions together; one question unscored: its cluster
    completes without it.  The stop equals the cluster sequence computed directly."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 7, size=120)
    labels = [f"r{c}" for c, k in enumerate(sizes) for _ in range(k)]
    n = len(labels)
    p = rng.beta(8, 2, size=len(sizes))
    x = np.array([float(rng.random() < p[int(lab[1:])]) for lab in labels])
    x[5] = np.nan                                              # Score.unscored() for the sixth question
    samples = [_sample(i, info={"repo": labels[i - 1]}) for i in range(1, n + 1)]
    answers = {(i, 1): x[i - 1] for i in range(1, n + 1)}
    done, stops, meta = _drive(ism.sequential_stopping(width=0.08, cluster="info.repo", check_every=1,
                                                       method="betting"), samples, answers)
    keep = ~np.isnan(x)
    expected = {lab: int(np.sum((np.array(labels) == lab) & keep)) for lab in set(labels)}
    w = watch_scores(x[keep], clusters=np.array(labels)[keep], rules=Rules(width=0.08), a="mockllm/model",
                     expected_sizes=expected, method="betting")
    sums, ns, t = seq.cluster_totals(x[keep], np.array(labels)[keep], expected)
    _, lo, hi = seq.cluster_betting_bounds(sums, ns, 0.05, max_size=max(expected.values()))
    k = seq.first_width(lo, hi, 0.08)
    assert w.stop is not None and w.stop.index == k - 1 and w.stop.t == t[k - 1]
    assert meta["stop"] == w.stop.to_dict() and meta["unit"] == "cluster"
    assert meta["samples"]["unscored"] == 1 and meta["cluster"] == "info.repo"
    assert len(done) == t[k - 1] + 1                            # + the unscored question
    assert len(stops) == n - len(done)
    assert any("finish in random order" in note for note in meta["notes"])


def test_pair_with_clusters_equals_watch_scores(ism):
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 9, size=150)
    labels = [f"r{c}" for c, k in enumerate(sizes) for _ in range(k)]
    n = len(labels)
    a = (rng.random(n) < 0.8).astype(float)
    b = (rng.random(n) < 0.55).astype(float)
    samples = [_sample(i, repo=labels[i - 1]) for i in range(1, n + 1)]
    manager = ism.sequential_stopping(baseline={i: b[i - 1] for i in range(1, n + 1)}, cluster="repo",
                                      check_every=1)
    done, _, meta = _drive(manager, samples, {(i, 1): a[i - 1] for i in range(1, n + 1)})
    expected = {lab: labels.count(lab) for lab in set(labels)}
    w = watch_scores(a, b, np.array(labels), rules=Rules(), a="mockllm/model", b="baseline",
                     expected_sizes=expected)
    assert w.stop is not None and meta["stop"] == w.stop.to_dict() and meta["outcome"] == "better"
    assert len(done) == w.stop.t and meta["unit"] == "cluster" and meta["estimand"] == "difference"


def test_a_cluster_in_progress_is_not_counted(ism):
    m = ism.sequential_stopping(width=0.1, cluster="repo", check_every=1)
    samples = [_sample(i, repo="a" if i <= 3 else "b") for i in range(1, 7)]
    asyncio.run(m.start_task(_task(), samples, 1))
    for i in (1, 2, 4):
        asyncio.run(m.complete_sample(i, 1, _scores("C", i)))
    meta = m.summary()
    assert meta["decision"] == "continue" and "no complete cluster" in meta["sentence"]
    asyncio.run(m.complete_sample(3, 1, _scores("I", 3)))
    meta = m.summary()
    assert meta["n_units"] == 1 and meta["n_questions"] == 4 and meta["estimate"] == pytest.approx(2 / 3)


def test_epochs_after_the_first_are_left_out_and_skipped_after_the_stop(ism):
    rng = np.random.default_rng(9)
    n = 300
    x = (rng.random((n, 2)) < 0.9).astype(float)
    samples = [_sample(i) for i in range(1, n + 1)]
    answers = {(i, e): float(x[i - 1, e - 1]) for i in range(1, n + 1) for e in (1, 2)}
    done, stops, meta = _drive(ism.sequential_stopping(width=0.06, check_every=1), samples, answers, epochs=2)
    w = watch_scores(x[:, 0], rules=Rules(width=0.06), a="mockllm/model")
    assert meta["stop"] == w.stop.to_dict() and meta["epochs"] == 2
    assert all(e == 1 for _, e in done) and {s.epoch for s in stops} == {1, 2}
    # not stopped in the first epoch: the second runs and is not used
    m = ism.sequential_stopping(width=0.01, check_every=1)
    done, stops, meta = _drive(m, samples, answers, epochs=2)
    assert len(done) == 2 * n and not stops and meta["samples"]["later_epochs"] == n
    assert meta["decision"] == "continue" and meta["settled"] is False
    assert meta["sentence"].startswith("continue: ") and meta["n_questions"] == n


def test_unscored_failed_and_repeated_samples(ism):
    m = ism.sequential_stopping(width=0.2, check_every=1)
    asyncio.run(m.start_task(_task(), [_sample(i) for i in range(1, 6)], 1))
    asyncio.run(m.complete_sample(1, 1, _scores(math.nan, 1)))     # Score.unscored()
    asyncio.run(m.complete_sample(2, 1, {}))                        # failed: no score
    asyncio.run(m.complete_sample(3, 1, _scores("C", 3)))
    asyncio.run(m.complete_sample(3, 1, _scores("I", 3)))          # requeued: the first score stays
    asyncio.run(m.complete_sample(99, 1, _scores("C", 99)))        # not one of the task's samples
    meta = asyncio.run(m.complete_task())
    assert meta["n_questions"] == 1 and meta["estimate"] == 1.0
    assert {k: meta["samples"][k] for k in ("unscored", "no_score", "repeated", "unknown_sample")} == \
        {"unscored": 1, "no_score": 1, "repeated": 1, "unknown_sample": 1}


def test_no_answer_and_the_first_scorer(ism):
    m = ism.sequential_stopping(width=0.1)
    asyncio.run(m.start_task(_task(scorers=()), [_sample(1), _sample(2)], 1))
    meta = m.summary()
    assert meta["decision"] == "continue" and meta["sentence"].startswith("continue: no answer")
    json.dumps(meta, allow_nan=False)
    # no scorer declared, none given: the first of the sample's scores, with a note when there are several
    both = {**_scores("I", 1, "exact"), **_scores("C", 1, "match")}
    asyncio.run(m.complete_sample(1, 1, both))
    meta = m.summary()
    assert meta["scorer"] == "exact" and meta["estimate"] == 0.0
    assert any("the first of exact, match" in note for note in meta["notes"])
    m = ism.sequential_stopping(width=0.1, scorer="match")
    asyncio.run(m.start_task(_task(scorers=("exact", "match")), [_sample(1)], 1))
    asyncio.run(m.complete_sample(1, 1, both))
    assert m.summary()["estimate"] == 1.0


def test_a_new_run_starts_afresh_and_two_at_once_are_refused(ism):
    m = ism.sequential_stopping(width=0.3, check_every=1)
    done, stops, _ = _drive(m, [_sample(i) for i in range(1, 201)], {(i, 1): 1.0 for i in range(1, 201)})
    assert stops and m.stopped
    done, stops2, meta = _drive(m, [_sample(i) for i in range(1, 201)], {(i, 1): 1.0 for i in range(1, 201)})
    assert len(stops2) == len(stops) and meta["samples"]["entered"] == len(done)
    asyncio.run(m.start_task(_task(model="mockllm/a"), [_sample(1)], 1))
    for _ in range(2):  # refused, and the run under way keeps the manager
        with pytest.raises(InputError, match="one run at a time"):
            asyncio.run(m.start_task(_task(model="mockllm/b"), [_sample(1)], 1))
    asyncio.run(m.complete_sample(1, 1, _scores("C", 1)))
    assert asyncio.run(m.complete_task())["model"] == "mockllm/a"
    # a run that fails to start leaves the manager free
    m = ism.sequential_stopping(width=0.3, cluster="repo")
    with pytest.raises(InputError, match="no metadata field 'repo'"):
        asyncio.run(m.start_task(_task(model="mockllm/a"), [_sample(1)], 1))
    assert asyncio.run(m.start_task(_task(model="mockllm/b"), [_sample(1, repo="r")], 1)) == ism.MANAGER


# --------------------------------------------------------------------------- #
# bad arguments
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("kwargs, message", [
    ({"width": 0}, r"width= must be a number in \(0, 1\)"),
    ({"width": 1.5}, r"width= must be a number in \(0, 1\)"),
    ({"width": "0.1"}, r"width= must be a number in \(0, 1\)"),
    ({"width": True}, r"width= must be a number in \(0, 1\)"),
    ({"budget": 0}, r"budget= must be a whole number"),
    ({"budget": 10.5}, r"budget= must be a whole number"),
    ({"tie": 0.02}, r"tie= and margin= compare a candidate with a baseline"),
    ({"margin": 0.02}, r"tie= and margin= compare a candidate with a baseline"),
    ({}, r"one model has no gap to settle"),
    ({"width": 0.1, "level": 95}, r"level= must be a number in \(0, 1\)"),
    ({"width": 0.1, "method": "bet"}, r"method= must be one of auto, betting, asymptotic.*Did you mean 'betting'"),
    ({"width": 0.1, "check_every": 0}, r"check_every= must be a whole number"),
    ({"width": 0.1, "cluster": ""}, r"cluster= must be a name"),
    ({"baseline": {1: "C"}, "margin": -0.01}, r"margin= must be a number in \(0, 1\)"),
    ({"baseline": {1: "C"}, "settle": False}, r"settle=False leaves no rule"),
    ({"baseline": {}}, r"baseline= is an empty mapping"),
    ({"baseline": {1: "maybe"}}, r"maybe"),
    ({"baseline": {1: 2.0}}, r"outside \[0, 1\]"),
    ({"baseline": 3}, r"baseline= must be the path"),
    ({"baseline": "no/such/baseline.eval"}, r"baseline='no/such/baseline.eval' does not exist"),
])
def test_bad_arguments_are_input_errors(ism, kwargs, message):
    with pytest.raises(InputError, match=message):
        ism.sequential_stopping(**kwargs)


def test_bad_inputs_at_run_time(ism):
    # an unknown scorer: when the sample arrives (the task declared none) ...
    m = ism.sequential_stopping(width=0.1, scorer="accuracy")
    asyncio.run(m.start_task(_task(scorers=()), [_sample(1)], 1))
    with pytest.raises(InputError, match=r"sample 1 has no score from scorer 'accuracy'\..*scorers: match"):
        asyncio.run(m.complete_sample(1, 1, _scores("C", 1)))
    # ... or when the task starts (it declared its scorers)
    m = ism.sequential_stopping(width=0.1, scorer="mach")
    with pytest.raises(InputError, match="task 't' has no scorer 'mach'. Did you mean 'match'"):
        asyncio.run(m.start_task(_task(), [_sample(1)], 1))
    # a score Inspect does not map, or outside [0, 1]
    m = ism.sequential_stopping(width=0.1)
    asyncio.run(m.start_task(_task(), [_sample(1), _sample(2)], 1))
    with pytest.raises(InputError, match="'maybe' is not one Inspect maps to a number"):
        asyncio.run(m.complete_sample(1, 1, _scores("maybe", 1)))
    with pytest.raises(InputError, match=r"score 3 lies outside \[0, 1\]"):
        asyncio.run(m.complete_sample(2, 1, _scores(3, 2)))
    # a sample without the cluster field
    m = ism.sequential_stopping(width=0.1, cluster="repo")
    with pytest.raises(InputError, match="sample 2 of task 't' has no metadata field 'repo'"):
        asyncio.run(m.start_task(_task(), [_sample(1, repo="a"), _sample(2)], 1))
    # a mapping baseline with no id of the task
    m = ism.sequential_stopping(baseline={"a": 1, "b": 0})
    with pytest.raises(InputError, match="shares no sample id with task 't'"):
        asyncio.run(m.start_task(_task(), [_sample(1), _sample(2)], 1))
    # before start_task
    with pytest.raises(InputError, match="before start_task"):
        asyncio.run(ism.sequential_stopping(width=0.1).complete_sample(1, 1, _scores("C", 1)))
