"""The watch's sentences (:mod:`bayeserr.analyses.sequential`): ``stop`` or ``continue`` in one
sentence, with the estimate, its confidence sequence and the rule that held, and the caution
when the answers did not arrive in a random order.

They sit beside the analysis, not in the reporting layer, because the sentence is part of
what :func:`bayeserr.sequential` returns (``Watch.sentence``, the JSON ``sentence``) and an analysis
never imports the layer above it; nothing here computes a statistic."""

from __future__ import annotations

from bayeserr.base.formats import points


def watch_sentence(a, b, s, rules, stop, outcome: str, seed: int | None = None) -> str:
    """What ``watch`` says at the stop (or the last look): ``stop: …`` or ``continue: …``, the
    estimate and its confidence sequence, and after a stop the latest estimate."""
    i = len(s.t) - 1 if stop is None else stop.index
    est, lo, hi, n = s.estimate[i], s.lower[i], s.upper[i], int(s.t[i])
    what = f"{a} − {b}" if b is not None else f"{a}'s mean score"

    def fmt(x):
        return points(x, signed=b is not None)
    k = int(s.units[i])
    unit = "" if s.unit == "question" else f" in {k:,} complete cluster{'s' if k != 1 else ''}"
    shuffled = "" if seed is None else f" taken in a random order (seed {seed})"
    cs = (f"{what} = {fmt(est)} points, {s.level:.0%} confidence sequence [{fmt(lo)}, {fmt(hi)}] "
          f"after {n:,} question{'s' if n != 1 else ''}{unit}{shuffled}")
    valid = ("valid at every look" if s.method == "betting" else
             "valid at every look as the number of " + ("clusters" if s.unit == "cluster" else "answers")
             + " grows")
    if stop is None:
        wanted = []
        if b is not None and rules.margin is not None:
            wanted.append(f"it to leave −{100 * rules.margin:.1f}")
        elif b is not None and rules.settle:
            wanted.append("it to exclude 0")
        if rules.tie is not None:
            wanted.append(f"{'to lie' if wanted else 'it to lie'} inside ±{100 * rules.tie:.1f} points")
        if rules.width is not None:
            wanted.append(f"a width of ±{100 * rules.width:.1f} points")
        if rules.budget is not None:
            wanted.append(f"the budget of {rules.budget:,} questions")
        return f"continue: {cs}; waiting for {' or '.join(wanted)}."
    said = {"better": f"{a} is better than {b}", "worse": f"{a} is worse than {b}",
            "tie": f"{a} and {b} are tied within ±{100 * (rules.tie or 0):.1f} points",
            "not worse": f"{a} is not worse than {b} by more than {100 * (rules.margin or 0):.1f} points",
            "worse than margin": f"{a} is worse than {b} by more than the {100 * (rules.margin or 0):.1f}-point "
                                 "margin",
            "known": f"{what} is known to ±{100 * (rules.width or 0):.1f} points",
            "budget": f"the budget of {rules.budget or 0:,} questions is spent, not settled"}[outcome]
    last = len(s.t) - 1
    now = ("" if i == last else
           f" Since then: {fmt(s.estimate[last])} points, [{fmt(s.lower[last])}, {fmt(s.upper[last])}] after "
           f"{int(s.t[last]):,} questions (an estimate at a data-dependent stop is biased; the latest is the one to read).")
    return f"stop: {said} ({cs}; {valid}).{now}"


def waiting_sentence(n: int, k: int) -> str:
    """``continue`` before any cluster is complete (``n`` answers in ``k`` clusters)."""
    return (f"continue: no cluster is complete yet ({n:,} questions answered in {k:,} clusters, none "
            "whole); the sequence starts with the first complete cluster.")


def caution(findings) -> str:
    """The verdict's closing sentence when the order looks not random."""
    if not findings:
        return ""
    said = findings[0] if len(findings) == 1 else ", ".join(findings[:-1]) + " and " + findings[-1]
    return (f" Caution: {said}: not a random order, so the sequence's guarantee may not hold (a finished "
            "file: --shuffle SEED replays it in a random order).")


def partial_block(runs, asked: bool, stopped: bool) -> str:
    """The verdict's words on partial runs (Inspect logs that ended 'error' or 'cancelled'): named
    always; a stop on them is taken only when partial runs were asked for."""
    from bayeserr.analyses.gate_text import partial_text
    said = f"Caution: {partial_text(runs)}: the sequence read only the samples that finished."
    if stopped and not asked:
        said += (" The stop is not taken (exit 1): the run did not complete. Re-run it, or pass --partial-runs "
                 "include to accept a stop on the samples that finished.")
    return said
