"""``bayeserr watch`` on real Inspect logs (issue 27): a run in progress read
from Inspect's journal, an archive caught mid-write, the Inspect early-stopping
manager and ``watch`` stopping at the same question, and ``baseline_scorer=``.

Real offline Inspect runs (``mockllm`` with scripted answers) in subprocesses,
as in ``tests/integrations/test_inspect_stopping.py``; everything skips without
``inspect_ai``.
"""

import json
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from bayeserr.base.errors import InputError

from .test_inspect_metrics import _offline_env

COMMON = r'''
import json, sys, threading, time, zipfile
from pathlib import Path
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate, solver

def scripted(name, right):
    def out(messages, tools, tool_choice, config):
        i = int(messages[-1].text.split()[1])
        o = ModelOutput.from_content(model=name, content="yes" if right(i) else "no")
        o.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return o
    return get_model(name, custom_outputs=out)

def questions(n, seed=1):
    d = MemoryDataset([Sample(id=i, input=f"question {i}", target="yes") for i in range(1, n + 1)])
    d.shuffle(seed=seed)
    return d
'''

# a run held open: its last three questions wait for the test's "go" on stdin, so the log on
# disk is a genuine run in progress (no header.json yet) until then
IN_PROGRESS = COMMON + r'''
gate = threading.Event()
HELD = (9, 10, 4)   # the last three of the shuffled order (seed 3)

@solver
def hold():
    async def solve(state, generate_):
        import anyio
        if int(state.input_text.split()[1]) in HELD:
            while not gate.is_set():
                await anyio.sleep(0.02)
        return state
    return solve

log_dir = Path(sys.argv[1])
task = Task(name="held", dataset=questions(12, seed=3), solver=[hold(), generate()], scorer=match())
done = []
run = threading.Thread(target=lambda: done.append(eval(
    task, model=scripted("mockllm/model", lambda i: i % 3 > 0), log_dir=str(log_dir), display="none",
    max_samples=3, log_buffer=1)[0]))
run.start()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    logs = list(log_dir.glob("*.eval"))
    if logs:
        names = zipfile.ZipFile(logs[0]).namelist()
        if sum(n.startswith("samples/") for n in names) >= 9:
            print("READY", logs[0], "header.json" in names, flush=True)
            break
    time.sleep(0.02)
sys.stdin.readline()   # the test has read the run in progress
gate.set()
run.join()
print("DONE", done[0].status, flush=True)
'''

# the manager stops a candidate (scored by includes) against a baseline scored by match; a
# one-model run in two epochs that no rule settles in its first epoch
AGREE = COMMON + r'''
from bayeserr.integrations.inspect_stopping import sequential_stopping
log_dir = Path(sys.argv[1])
base = eval(Task(name="pair", dataset=questions(200), solver=generate(), scorer=match()),
            model=scripted("mockllm/base", lambda i: (i * 7) % 10 < 6), log_dir=str(log_dir / "baseline"),
            display="none")[0]
cand = eval(Task(name="pair", dataset=questions(200), solver=generate(), scorer=includes(),
                 early_stopping=sequential_stopping(baseline=base.location, baseline_scorer="match")),
            model=scripted("mockllm/cand", lambda i: (i * 3) % 10 < 9), log_dir=str(log_dir), display="none",
            max_samples=4)[0]
epochs = eval(Task(name="epochs", dataset=questions(40), solver=generate(), scorer=match(), epochs=2,
                   early_stopping=sequential_stopping(width=0.05)),
              model=scripted("mockllm/model", lambda i: (i * 7) % 10 < 8), log_dir=str(log_dir / "epochs"),
              display="none", max_samples=2)[0]
print(json.dumps({k: {"location": v.location, "status": v.status} for k, v in
                  {"base": base, "cand": cand, "epochs": epochs}.items()}))
'''


def _run(script: str, tmp: Path, **kw):
    path = tmp / "script.py"
    path.write_text(script)
    return subprocess.Popen([sys.executable, str(path), str(tmp / "logs")], env=_offline_env(tmp), cwd=tmp,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.fixture(scope="module")
def agree(tmp_path_factory):
    pytest.importorskip("inspect_ai")
    tmp = tmp_path_factory.mktemp("watch_agree")
    proc = _run(AGREE, tmp)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-4000:]
    runs = json.loads(out.strip().splitlines()[-1])
    assert all(r["status"] == "success" for r in runs.values()), runs
    return {k: r["location"] for k, r in runs.items()}


def _meta(path):
    from inspect_ai.log import read_eval_log
    return read_eval_log(path, header_only=True).results.early_stopping.metadata


# --------------------------------------------------------------------------- #
# a run in progress
# --------------------------------------------------------------------------- #
def test_watch_reads_a_run_in_progress_and_follows_it_to_the_end(tmp_path, cli):
    pytest.importorskip("inspect_ai")
    proc = _run(IN_PROGRESS, tmp_path, stdin=subprocess.PIPE)
    try:
        ready = proc.stdout.readline().split()
        assert ready[:1] == ["READY"], proc.stderr.read()[-4000:] if proc.poll() is not None else ready
        log, has_header = Path(ready[1]), ready[2] == "True"
        assert not has_header  # Inspect writes header.json only when the run ends
        names = zipfile.ZipFile(log).namelist()
        assert names[0] == "_journal/start.json" and any(n.startswith("_journal/summaries/") for n in names)

        # report keeps refusing it; watch reads the samples written so far, and says so
        rep = cli("report", log)
        assert rep.exit_code == 2 and "still in progress" in rep.output and "Traceback" not in rep.output
        res = cli("watch", log, "--model", "mockllm/model", "--budget", "12", "--format", "json")
        assert res.exit_code == 1, res.output
        got = json.loads(res.stdout)
        k = got["n_questions"]
        assert 9 <= k < 12 and got["decision"] == "continue"
        note = next(n for n in got["notes"] if "in progress" in n)
        assert f"{k} of 12 samples written so far" in note and "task held with mockllm/model" in note
        # the questions in the order Inspect wrote them: the shuffled order, not by id
        order = [int(n.split("/")[1].split("_")[0]) for n in zipfile.ZipFile(log).namelist()
                 if n.startswith("samples/")]
        assert order[:9] == [2, 8, 11, 1, 7, 12, 5, 6, 3]

        # --follow: continue while the run is held, stop once every question is in (budget 12)
        release = threading.Timer(1.0, lambda: (proc.stdin.write("go\n"), proc.stdin.flush()))
        release.start()
        res = cli("watch", log, "--model", "mockllm/model", "--budget", "12", "--follow", "--interval", "0.2",
                  "--timeout", "60")
        release.join()
        assert res.exit_code == 0, res.output
        assert res.stdout.startswith("stop: the budget of 12 questions is spent")
        # the stop needs all 12 answers: read from the finished log, or from the last flush just before
        # Inspect wrote its header (a race the test does not control; both are the whole run)
        assert "continue:" in res.stderr and "after 12 questions" in res.stdout
    finally:
        if proc.poll() is None:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()[-4000:]
    assert proc.stdout.read().split()[:2] == ["DONE", "success"]


def _half_written(src: Path, dest: Path, keep: float) -> Path:
    dest.write_bytes(src.read_bytes()[:int(src.stat().st_size * keep)])
    return dest


def test_an_archive_caught_mid_write_is_read_again_then_a_clear_error(agree, tmp_path, cli, monkeypatch):
    import bayeserr.cli.watch as watch_cli
    monkeypatch.setattr(watch_cli, "QUICK_PAUSE", 0.01)  # the quick re-reads, without their pause
    cand = Path(agree["cand"])
    cut = _half_written(cand, tmp_path / "cut.eval", 0.6)  # no central directory: not a zip yet
    res = cli("watch", cut, "--pair", "mockllm/cand", "mockllm/base")
    assert res.exit_code == 2 and "not a readable .eval archive" in res.output and "Traceback" not in res.output
    res = cli("watch", cut, "--model", "mockllm/cand", "--width", "0.1", "--follow", "--interval", "0.1")
    assert res.exit_code == 2 and "waiting: " in res.output and "Still unreadable after" in res.output

    # caught mid-write, then written whole: --follow waits and reads it at the next look
    def finish():
        cut.write_bytes(cand.read_bytes())
    writer = threading.Timer(0.3, finish)
    writer.start()
    res = cli("watch", cut, Path(agree["base"]), "--pair", "mockllm/cand", "mockllm/base", "--follow",
              "--interval", "0.5", "--timeout", "30")
    writer.join()
    assert res.exit_code == 0 and res.stdout.startswith("stop: mockllm/cand is better than mockllm/base")


def test_in_progress_reading_is_only_for_watch(agree, tmp_path):
    from bayeserr.data.readers import read_inspect
    with pytest.raises(InputError, match="in_progress must be one of exclude, read"):
        read_inspect(agree["cand"], in_progress="yes")


# --------------------------------------------------------------------------- #
# the manager and watch agree
# --------------------------------------------------------------------------- #
def test_watch_on_the_stopped_log_stops_where_the_manager_did(agree, cli):
    meta = _meta(agree["cand"])
    assert meta["decision"] == "stop" and meta["outcome"] == "better"
    assert meta["baseline"]["scorer"] == "match" and meta["scorer"] == "includes"
    res = cli("watch", agree["cand"], agree["base"], "--pair", "mockllm/cand", "mockllm/base", "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    # each log's own scorer (includes, match); the same question count, rule and bounds at the stop
    assert got["stop"]["t"] == meta["stop"]["t"] and got["stop"]["rule"] == meta["stop"]["rule"]
    assert got["stop"]["lower"] == pytest.approx(meta["stop"]["lower"], abs=1e-12)
    assert got["stop"]["upper"] == pytest.approx(meta["stop"]["upper"], abs=1e-12)
    # the answers that finished after the stop (already running) are in both
    assert got["n_questions"] == meta["samples"]["entered"]
    assert got["estimate"] == pytest.approx(meta["estimate"], abs=1e-12)


def test_epochs_watch_takes_the_first_as_the_manager_does(agree, cli):
    meta = _meta(agree["epochs"])
    assert meta["decision"] == "continue" and meta["samples"]["later_epochs"] == 40
    args = ("watch", agree["epochs"], "--model", "mockllm/model", "--width", "0.05", "--format", "json")
    first = json.loads(cli(*args).stdout)
    assert first["n_questions"] == 40 and first["decision"] == "continue"
    assert (first["estimate"], first["lower"], first["upper"]) == pytest.approx(
        (meta["estimate"], meta["lower"], meta["upper"]), abs=1e-12)
    assert any("first sample (Inspect: its first epoch" in n for n in first["notes"])
    mean = json.loads(cli(*args, "--samples", "mean").stdout)
    assert any("its mean over samples" in n for n in mean["notes"])


# --------------------------------------------------------------------------- #
# baseline_scorer=
# --------------------------------------------------------------------------- #
def _begin(manager, scorers=("includes",)):
    from inspect_ai.dataset import Sample
    task = SimpleNamespace(task="pair", model="mockllm/cand", scorers=[SimpleNamespace(name=s) for s in scorers],
                           dataset=SimpleNamespace(shuffled=True), config=SimpleNamespace(sample_shuffle=None))
    return manager.begin(task, [Sample(id=i, input="q", target="yes") for i in range(1, 11)], 1)


def test_baseline_scorer_missing_or_wrong_is_an_error_naming_the_scorers(agree):
    from bayeserr.integrations.inspect_stopping import MANAGER, sequential_stopping
    base = agree["base"]
    with pytest.raises(InputError, match=r"has no score from 'includes', the scorer this run watches\. Its "
                                         r"scorers: match\. .*give baseline_scorer='match'"):
        _begin(sequential_stopping(baseline=base))
    with pytest.raises(InputError, match=r"no score from baseline_scorer='mach'.*Did you mean 'match'.*Its "
                                         r"scorers: match"):
        _begin(sequential_stopping(baseline=base, baseline_scorer="mach"))
    m = sequential_stopping(baseline=base, baseline_scorer="match")
    assert _begin(m) == MANAGER and m.summary()["baseline"]["scorer"] == "match"
    assert any("baseline_scorer=" in n for n in m.summary()["notes"])
    with pytest.raises(InputError, match="baseline_scorer= names the scorer of the baseline's Inspect log"):
        sequential_stopping(baseline={1: 1.0}, baseline_scorer="match")
    with pytest.raises(InputError, match="baseline_scorer= must be a name"):
        sequential_stopping(baseline=base, baseline_scorer="")
