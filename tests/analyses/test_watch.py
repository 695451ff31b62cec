"""Watching a running eval (issue 27): the stopping rules on a confidence
sequence, the sentence, and ``bayeserr watch`` (exit 0 stop, 1 continue, 2 bad
input; JSON; an HTML page with the figure; questions in the order they arrived)."""

import json

import numpy as np
import pandas as pd
import pytest

from bayeserr.analyses.sequential import Rules, watch_scores
from bayeserr.base.errors import InputError
from bayeserr.stats import sequential as seq


def _stream(n=800, pa=0.78, pb=0.65, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.random(n) < pa).astype(float), (rng.random(n) < pb).astype(float)


def _first(hit):
    return int(np.argmax(hit)) if hit.any() else None


def test_settle_stops_at_the_first_look_that_excludes_zero():
    a, b = _stream()
    w = watch_scores(a, b, a="new", b="prod")
    cs = seq.paired_cs(a, b)
    i = _first((cs.lower > 0) | (cs.upper < 0))
    assert i is not None and w.stop.index == i and w.stop.t == i + 1
    assert w.outcome == "better" and w.decision == "stop" and w.exit_code == 0
    assert f"after {i + 1:,} questions" in w.sentence and w.sentence.startswith("stop: new is better than prod")
    assert f"[{100 * cs.lower[i]:+.1f}, {100 * cs.upper[i]:+.1f}]" in w.sentence


def test_reversed_pair_is_worse_at_the_same_look():
    a, b = _stream()
    w, r = watch_scores(a, b, a="new", b="prod"), watch_scores(b, a, a="prod", b="new")
    assert r.stop.index == w.stop.index and r.outcome == "worse"


@pytest.mark.parametrize("margin", [0.01, 0.05])
def test_margin_tests_minus_margin_not_zero(margin):
    a, b = _stream(pa=0.70, pb=0.70, seed=4)
    w = watch_scores(a, b, rules=Rules(settle=False, margin=margin))
    cs = seq.paired_cs(a, b)
    i = _first((cs.lower > -margin) | (cs.upper < -margin))
    assert (w.stop.index if w.stop else None) == i
    if w.stop is not None:
        assert w.outcome == ("not worse" if cs.lower[i] > -margin else "worse than margin")


def test_tie_width_and_budget_rules():
    a, b = _stream(n=3000, pa=0.7, pb=0.7, seed=2)
    cs = seq.paired_cs(a, b)
    w = watch_scores(a, b, rules=Rules(settle=False, tie=0.05))
    assert w.stop.index == _first((cs.lower >= -0.05 - 1e-12) & (cs.upper <= 0.05 + 1e-12)) and w.outcome == "tie"
    w = watch_scores(a, None, rules=Rules(width=0.04))
    one = seq.betting_cs(a)
    assert w.stop.index == _first(one.upper - one.lower <= 0.08 + 1e-12) and w.outcome == "known"
    w = watch_scores(a[:200], b[:200], rules=Rules(budget=150))
    assert w.stop.t == 150 and w.outcome == "budget" and "not settled" in w.sentence


def test_continue_says_what_it_waits_for():
    a, b = _stream(n=40)
    w = watch_scores(a, b, a="A", b="B", rules=Rules(tie=0.02))
    assert w.stop is None and w.exit_code == 1
    assert w.sentence.startswith("continue: A − B") and "waiting for it to exclude 0 or to lie inside ±2.0 points." in w.sentence


def test_rules_are_checked():
    a, b = _stream(n=50)
    with pytest.raises(InputError, match="--width"):
        watch_scores(a, None, rules=Rules(width=1.5))
    with pytest.raises(InputError, match="--pair"):
        watch_scores(a, None, rules=Rules(tie=0.02, width=0.1))
    with pytest.raises(InputError, match="no gap to settle"):
        watch_scores(a, None)


def test_clusters_wait_for_whole_clusters_and_say_their_assumption():
    a, b = _stream(n=400)
    clusters = np.repeat(np.arange(40), 10)
    w = watch_scores(a, b, clusters)
    assert w.sequence.unit == "cluster" and len(w.sequence.t) == 40
    assert any("random order" in n for n in w.notes)


# ------------------------------------------------------------------ the command
def _csv(tmp_path, n=600, seed=3, order_first="new"):
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    rows = [{"model": "new", "question_id": f"q{q}", "score": int(rng.random() < 0.8)} for q in order]
    rows += [{"model": "prod", "question_id": f"q{q}", "score": int(rng.random() < 0.68)} for q in range(n)]
    df = pd.DataFrame(rows)
    if order_first == "prod":
        df = pd.concat([df[df.model == "prod"], df[df.model == "new"]])
    path = tmp_path / "run.csv"
    df.to_csv(path, index=False)
    return path, df


def test_the_command_takes_questions_in_the_order_they_arrived(tmp_path, cli):
    path, df = _csv(tmp_path)
    res = cli("watch", path, "--pair", "new", "prod", "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    new = df[df.model == "new"].set_index("question_id").score
    prod = df[df.model == "prod"].set_index("question_id").score
    d = (new - prod.loc[new.index]).to_numpy(float)  # the candidate's order: it comes first in the file
    np.testing.assert_allclose(got["sequence"]["estimate"], np.cumsum(d) / np.arange(1, len(d) + 1), atol=1e-12)
    assert got["decision"] == "stop" and got["outcome"] == "better"


def test_exit_codes_and_messages(tmp_path, cli):
    path, _ = _csv(tmp_path)
    assert cli("watch", path, "--pair", "new", "prod").exit_code == 0
    small, _ = _csv(tmp_path / "small" if (tmp_path / "small").mkdir() is None else tmp_path, n=30)
    assert cli("watch", small, "--pair", "new", "prod", "--budget", "700", "--tie", "0.001").exit_code == 1
    bad = cli("watch", path, "--pair", "new", "nope")
    assert bad.exit_code == 2 and "'nope' is not in the data" in bad.output and "Traceback" not in bad.output
    both = cli("watch", path, "--pair", "new", "prod", "--model", "new")
    assert both.exit_code == 2 and "one of them" in both.output
    one = cli("watch", path, "--model", "new")
    assert one.exit_code == 2 and "--width" in one.output


def test_follow_gives_up_at_the_timeout_when_not_settled(tmp_path, cli):
    path, _ = _csv(tmp_path, n=30)
    res = cli("watch", path, "--pair", "new", "prod", "--follow", "--interval", "0.1", "--timeout", "0.3")
    assert res.exit_code == 1 and res.stdout.startswith("continue:")


@pytest.mark.parametrize("option, value", [("--timeout", "nan"), ("--timeout", "inf"), ("--timeout", "-1"),
                                           ("--interval", "nan"), ("--interval", "0.01")])
def test_follow_bounds_are_finite_numbers(tmp_path, cli, option, value):
    """A --timeout of nan never fires, so a watch would wait forever (issue 43, item 1): refused."""
    path, _ = _csv(tmp_path, n=30)
    res = cli("watch", path, "--pair", "new", "prod", "--follow", option, value)
    assert res.exit_code == 2 and option in res.output and "Traceback" not in res.output


def test_follow_waits_for_a_missing_input(tmp_path, cli):
    res = cli("watch", tmp_path / "later.csv", "--pair", "a", "b", "--follow", "--interval", "0.1",
              "--timeout", "0.25")
    assert res.exit_code == 2 and "waiting:" in res.output and "--timeout" in res.output


def test_html_page_has_the_figure_and_escapes_names(tmp_path, cli):
    path, df = _csv(tmp_path)
    df["model"] = df.model.replace({"new": "<script>x</script>"})
    df.to_csv(path, index=False)
    out = tmp_path / "watch.html"
    res = cli("watch", path, "--pair", "<script>x</script>", "prod", "--html", out)
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "<svg" in page and "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "Looks" in page and ">stop<" in page
    refused = cli("watch", path, "--pair", "<script>x</script>", "prod", "--html", path)
    assert refused.exit_code == 2 and "input" in refused.output


def test_the_api_takes_a_dataframe_and_rule_keywords(tmp_path):
    import bayeserr
    path, df = _csv(tmp_path)
    w = bayeserr.sequential(df, "new", "prod", margin=0.02)
    cli_like = bayeserr.sequential(bayeserr.load(path), "new", "prod", rules=Rules(settle=False, margin=0.02))
    assert w.stop == cli_like.stop and w.outcome in ("not worse", "worse than margin")
    with pytest.raises(InputError, match="not both"):
        bayeserr.sequential(df, "new", "prod", margin=0.02, rules=Rules())
    with pytest.raises(InputError, match="named by text"):
        bayeserr.sequential(df, 3, "prod")
    with pytest.raises(InputError, match="level"):
        bayeserr.sequential(df, "new", "prod", level=1.5)
    frame = w.to_frame()
    assert list(frame.columns[:5]) == ["t", "units", "estimate", "lower", "upper"] and len(frame) == len(df) // 2


def test_paired_clusters_bet_with_the_largest_expected_size_fixed_before_the_run():
    a, b = _stream(n=300)
    clusters = np.repeat(np.arange(30), 10)
    clusters[-10:] = 29
    expected = {c: int((clusters == c).sum()) for c in np.unique(clusters)}
    expected[5] = 40  # a cluster still open (10 of 40 answered): it waits, and sets the bet's scale
    got = seq.paired_cs(a, b, clusters=clusters, expected_sizes=expected)
    want = seq.paired_cs(a, b, clusters=clusters, expected_sizes=expected, max_size=40)
    np.testing.assert_array_equal(got.lower, want.lower)
    assert len(got.t) == 29
    w = watch_scores(a, b, clusters, expected_sizes=expected, max_size=60, method="betting")
    wider = seq.paired_cs(a, b, clusters=clusters, expected_sizes=expected, max_size=60)
    np.testing.assert_array_equal(w.sequence.upper, wider.upper)


def test_auto_is_betting_per_question_and_asymptotic_per_cluster():
    a, b = _stream(n=400)
    clusters = np.repeat(np.arange(40), 10)
    assert watch_scores(a, b).sequence.method == "betting"
    w = watch_scores(a, b, clusters)
    assert w.sequence.method == "asymptotic" and w.sequence.unit == "cluster"
    bet = watch_scores(a, b, clusters, method="betting")
    floor = [n for n in bet.notes if "cannot exclude a gap smaller than" in n]
    assert floor and f"about {100 * 2 * 10 * np.log(20) / 400:.0f} points" in floor[0]
    with pytest.raises(InputError, match="method must be one of auto, betting, asymptotic"):
        watch_scores(a, b, method="bet")


def test_a_stream_that_is_not_in_random_order_never_stops():
    rng = np.random.default_rng(5)
    x = np.concatenate([(rng.random(150) < 0.8), (rng.random(450) < 0.3)]).astype(float)  # easy first
    w = watch_scores(x, rules=Rules(width=0.05))
    assert w.stop is None and w.exit_code == 1
    assert any("not in random order" in n for n in w.notes)
    shuffled = watch_scores(np.random.default_rng(11).permutation(x), rules=Rules(width=0.2))
    assert not any("not in random order" in n for n in shuffled.notes)


def test_a_stop_before_the_end_also_gives_the_latest_sequence():
    a, b = _stream()
    w = watch_scores(a, b, a="new", b="prod")
    s = w.sequence
    assert w.stop.index < len(s.t) - 1
    latest = f"Since then: {100 * s.estimate[-1]:+.1f} points, [{100 * s.lower[-1]:+.1f}, {100 * s.upper[-1]:+.1f}]"
    assert latest.replace("-", "−") in w.sentence and "after 800 questions" in w.sentence


def test_clusters_of_a_growing_file_wait_for_all_their_questions(tmp_path, cli):
    rng = np.random.default_rng(2)
    sizes = [60, 20, 20, 10, 10, 10, 10, 10, 10, 10]
    cl = np.repeat([f"c{k}" for k in range(len(sizes))], sizes)
    q = [f"q{i}" for i in range(len(cl))]
    base = pd.DataFrame({"model": "prod", "question_id": q, "cluster_id": cl,
                         "score": (rng.random(len(cl)) < 0.6).astype(int)})
    order = rng.permutation(len(cl))[:100]  # the candidate has answered 100 of 180, clusters interleaved
    cand = pd.DataFrame({"model": "new", "question_id": np.array(q)[order], "cluster_id": cl[order],
                         "score": (rng.random(100) < 0.7).astype(int)})
    path = tmp_path / "grow.csv"
    pd.concat([cand, base]).to_csv(path, index=False)
    res = cli("watch", path, "--pair", "new", "prod", "--format", "json")
    got = json.loads(res.stdout)
    answered = pd.Series(cl[order]).value_counts()
    complete = sum(answered.get(f"c{k}", 0) == n for k, n in enumerate(sizes))
    assert got["unit"] == "cluster" and got["n_units"] == complete and res.exit_code == 1
    none_yet = pd.concat([cand.iloc[:5], base])  # five answers: no cluster whole
    none_yet.to_csv(path, index=False)
    res = cli("watch", path, "--pair", "new", "prod")
    assert res.exit_code == 1 and res.stdout.startswith("continue: no cluster is complete yet")


def test_watch_refuses_options_it_does_not_use(tmp_path, cli):
    path, _ = _csv(tmp_path)
    for opt in (("--human-col", "h"), ("--task-col", "t")):
        res = cli("watch", path, "--pair", "new", "prod", *opt)
        assert res.exit_code == 2 and "watch does not use" in res.output


def _watch_follow(path, *extra):
    """``bayeserr watch --follow`` in a subprocess (a real process that may wait: the test bounds it)."""
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-m", "bayeserr.cli", "watch", str(path), "--pair", "new", "prod",
                             "--follow", "--interval", "0.2", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("change", ["rewritten", "garbage", "deleted"])
def test_follow_ends_when_the_file_is_rewritten_replaced_or_deleted(tmp_path, change):
    """A watched file that changes its history, turns into garbage or disappears ends the watch with
    exit 2 and a reason — before, --follow waited for ever (issue 43, items 1 and 8)."""
    import time
    path, df = _csv(tmp_path, n=30)  # not settled: --follow keeps looking
    proc = _watch_follow(path)
    time.sleep(2.5)
    assert proc.poll() is None  # still following
    if change == "rewritten":
        df.sample(frac=1.0, random_state=3).to_csv(path, index=False)
    elif change == "garbage":
        path.write_bytes(b"\x00\xff garbage, not a table \x00")
    else:
        path.unlink()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    if change == "rewritten":
        assert "rewritten while watched" in err
    else:
        assert "replaced, truncated or deleted while watched" in err


def test_follow_has_a_default_bound(cli):
    assert "default: 86400" in " ".join(cli("watch", "--help").output.split())


def test_follow_on_standard_input_is_refused(cli):
    res = cli("watch", "-", "--pair", "new", "prod", "--follow")
    assert res.exit_code == 2 and "standard input or a pipe" in res.output
