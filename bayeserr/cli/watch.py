"""``watch``: is a running eval settled yet? (``docs/methods.md`` §3.13; the
statistics are in :mod:`bayeserr.analyses.sequential`).

Exit codes: 0 a stopping rule holds (stop the run), 1 not yet (continue),
2 bad input or options.  ``--follow`` re-reads the inputs every
``--interval`` seconds until a rule holds (or ``--timeout``).

Inspect ``.eval`` logs of runs still in progress (no ``header.json`` yet) are
read from Inspect's journal (``read_inspect(in_progress="read")``), the
samples written so far.  An archive caught mid-write (unreadable as a zip, or
a member that does not inflate as declared) is read again: at once
:data:`QUICK_TRIES` times :data:`QUICK_PAUSE` seconds apart, and with
``--follow`` at the next intervals, up to :data:`UNREADABLE_LOOKS` reads in a
row before it is an error.
"""

from __future__ import annotations

import click

from bayeserr.cli.app import main
from bayeserr.cli.common import emit, load
from bayeserr.cli.options import load_options, nonempty, pop_load, ranged, where_option
from bayeserr.registries.options import WATCH_METHODS, WATCH_SAMPLES
from bayeserr.reporting.formats import TEXT_FORMATS

#: a damaged or half-written archive is read again this many times at once, this many seconds apart ...
QUICK_TRIES, QUICK_PAUSE = 3, 0.5
#: ... and, with --follow, at this many intervals in a row before it is an error
UNREADABLE_LOOKS = 5
#: ... and for at least this many seconds (a row appended in two writes is read whole meanwhile)
UNREADABLE_SECONDS = 5.0
#: --follow without --timeout gives up after a day (every wait has a bound)
DEFAULT_TIMEOUT = 86400.0


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(), metavar="RESULTS...")
@click.option("--pair", nargs=2, metavar="A B", help="Watch A − B on the questions both answered.")
@click.option("--model", metavar="MODEL", help="Watch one model's mean score (with --width or --budget).")
@click.option("--width", type=float, callback=ranged(0, 1, low_open=True, high_open=True), metavar="W",
              help="Stop when the quantity is known to ±W (0.02 = two points).")
@click.option("--tie", type=float, callback=ranged(0, 1, low_open=True, high_open=True), metavar="Z",
              help="Stop when A − B lies inside ±Z (a tie).")
@click.option("--margin", type=float, callback=ranged(0, 1, low_open=True, high_open=True), metavar="M",
              help="Non-inferiority: stop when A − B is shown above −M (not worse) or below −M (worse); "
                   "replaces the default rule (A − B excludes 0).")
@click.option("--budget", type=click.IntRange(1), metavar="N", help="Stop after N questions, settled or not.")
@click.option("--level", default=0.95, show_default=True, type=float,
              callback=ranged(0.5, 1, low_open=True, high_open=True),
              help="Confidence of the sequence, valid at every look at once.")
@click.option("--method", type=click.Choice(WATCH_METHODS.choices), default="auto", show_default=True,
              help="betting: valid at every sample size; asymptotic: narrower, valid as answers grow; auto: "
                   "betting per question, asymptotic per cluster (cluster-level betting rarely settles).")
@click.option("--samples", type=click.Choice(WATCH_SAMPLES.choices), default="first", show_default=True,
              help="A question answered several times (Inspect epochs): its first sample's score enters the "
                   "sequence (later epochs would change questions already in it), or the mean (finished "
                   "data, or samples written together). The baseline (B of --pair) enters with its mean.")
@click.option("--shuffle", type=click.IntRange(0), default=None, metavar="SEED",
              help="A finished file: take its questions in a random order drawn with SEED (clusters "
                   "shuffled, each cluster's questions together, with clusters), a simulation of watching "
                   "the run. Without it, the order of the file (a live log: the order of arrival).")
@click.option("--follow", is_flag=True, help="Keep re-reading the inputs until a rule holds.")
@click.option("--interval", type=float, default=30.0, show_default=True, callback=ranged(0.1),
              help="--follow: seconds between reads.")
@click.option("--timeout", type=float, default=None, callback=ranged(0),
              help="--follow: give up after this many seconds (exit 1) [default: 86400, a day].")
@click.option("--format", "fmt", type=click.Choice(TEXT_FORMATS.choices), default="text", show_default=True)
@click.option("--html", "html_out", type=click.Path(dir_okay=False), callback=nonempty, metavar="FILE",
              help="Also write an HTML page with the sequence's figure (never an input).")
@load_options
@where_option
@click.pass_context
def watch(ctx, files, pair, model, width, tie, margin, budget, level, method, samples, shuffle, follow, interval,
          timeout, fmt, html_out, where, **kw):
    """Is a running eval settled yet? An anytime-valid confidence sequence for
    A − B (--pair) or one model's mean (--model), checked against stopping
    rules; exit 0 when one holds (stop), 1 when not (continue), 2 on bad input.

    Questions are taken in the order they first appear in the inputs (a
    growing results file, or an Inspect log: the order they were answered);
    list the candidate's first. The sequence assumes that order is random:
    question ids that arrive sorted, clusters that arrive one after another,
    or a running estimate that leaves its own sequence are said in the
    verdict. A finished results file sorted by id is not a random order:
    --shuffle SEED replays it in one (a simulation of watching the run).
    With clusters, a cluster counts once the
    watched models answered all its questions in the data. An Inspect .eval
    log of a run in progress is read from Inspect's journal: the samples
    written so far (Inspect writes them in batches). Interrupted or cancelled
    logs are read and named (unless --partial-runs exclude), but a stop on one
    is taken (exit 0) only with --partial-runs include. Inside a run,
    bayeserr.integrations.inspect_stopping stops the run itself
    (docs/guide/early-stopping.md).

    Example: bayeserr watch logs/candidate.eval logs/baseline.eval --pair new prod --margin 0.01
    """
    # size: a click command: one parameter per option
    from bayeserr.analyses.sequential import Rules
    from bayeserr.base.errors import InputError
    from bayeserr.base.output import check_writable
    if (pair is None) == (model is None):
        raise InputError("give --pair A B (a difference) or --model MODEL (one mean), one of them.")
    unused = [f"--{k.replace('_', '-')}" for k in ("human_col", "labels", "human_scorer", "task_col")
              if kw.get(k) and ctx.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE]
    if unused:
        raise InputError(f"watch does not use {', '.join(unused)}: it watches the scores of one model or "
                         "a pair (human labels and tasks are for report).")
    for k in ("human_col", "labels", "human_scorer", "task_col"):
        kw[k] = None  # (a configuration file's defaults are for report)
    partial_asked = ctx.get_parameter_source("partial_runs") is not click.core.ParameterSource.DEFAULT
    if not partial_asked:
        kw["partial_runs"] = "include"  # a running eval's log is not finished yet (a stop on it is not taken)
    if html_out:
        check_writable(html_out)
    if shuffle is not None and follow:
        raise InputError("--shuffle replays a finished file in a random order; --follow watches a growing one "
                         "in the order its answers arrive (a new random order at every read would not be one "
                         "sequence). Give one of them.")
    if follow:
        import os
        import stat
        piped = [str(f) for f in files if str(f) == "-" or (os.path.exists(f) and stat.S_ISFIFO(os.stat(f).st_mode))]
        if piped:
            raise InputError(f"--follow reads its inputs again at every look; {piped[0]} (standard input or a pipe) "
                             "can be read once. Give the file itself, or drop --follow.")
    if follow and timeout is None:
        timeout = DEFAULT_TIMEOUT  # every wait has a bound
    a, b = (pair if pair is not None else (model, None))
    rules = Rules(settle=margin is None, tie=tie, margin=margin, width=width, budget=budget)
    rules.check(b is not None)
    w = _follow(lambda: _read_retrying(files, a, b, rules, level, method, samples, shuffle, where, kw),
                follow, interval, timeout, history=samples == "first")
    if not partial_asked:
        w = w.unasked_partial()
    _output(w, fmt, html_out, files)
    ctx.exit(w.exit_code)


def _follow(read, follow: bool, interval: float, timeout, history: bool):
    """``read()`` (again every ``interval`` s with ``follow``) until a rule holds, the runs are
    finished, or ``timeout`` passes; each wait says what it waits for.  Inputs that become
    unreadable after a good read, or whose history changes (``history``: the watched model's
    first samples, which a growing input only extends), end the watch (exit 2)."""
    import time

    from bayeserr.base.errors import InputError
    from bayeserr.reporting.text import plain
    start = time.monotonic()
    waiting = _Waiting(interval)
    w = None
    while True:
        try:
            new = read()
        except InputError as exc:
            if not follow:
                raise
            waiting.failed(exc)
            new = None
        if new is not None:
            if w is not None and history and new.history[:len(w.history)] != w.history:
                raise InputError(_rewritten(w.history, new.history))
            w = new
            waiting.read()
        if w is not None and (not follow or w.stop is not None):
            return w
        if w is not None and w.finished:
            click.echo("the runs are finished (every input an Inspect log, none still running): no rule holds, and "
                       "no more answers will come.", err=True)
            return w
        if _late(start, timeout, interval):
            if w is None:
                raise InputError(f"--timeout {timeout:g} s passed before the inputs could be read: {waiting.last}")
            default = ", the default" if timeout == DEFAULT_TIMEOUT else ""
            click.echo(f"stopped following after {timeout:g} s (--timeout{default}): no rule held.", err=True)
            return w
        if w is not None:
            click.echo(plain(w.sentence), err=True)  # progress while following
        time.sleep(interval)


class _Waiting:
    """Reads that failed while following: a log not written yet is waited for (one line per new
    reason); a log caught mid-write, or any input after a good read (rewritten, truncated, deleted),
    gets :data:`UNREADABLE_LOOKS` reads in a row, then is an error."""

    def __init__(self, interval: float):
        self.interval, self.looks, self.unreadable, self.last, self.since = interval, 0, 0, None, None

    def read(self) -> None:
        self.looks, self.unreadable, self.since = self.looks + 1, 0, None

    def failed(self, exc) -> None:
        import time

        from bayeserr.base.errors import InputError
        from bayeserr.data.readers import DamagedArchive
        from bayeserr.reporting.text import plain
        self.unreadable = self.unreadable + 1 if isinstance(exc, DamagedArchive) or self.looks else 0
        if self.unreadable == 1:
            self.since = time.monotonic()
        # a few reads and a few seconds: a log or a row half written is read whole at a later look
        if self.unreadable >= UNREADABLE_LOOKS and time.monotonic() - self.since >= UNREADABLE_SECONDS:
            changed = (f" The inputs were read {self.looks} time{'s' if self.looks > 1 else ''} before: a file was "
                       "replaced, truncated or deleted while watched, or rows that are not valid were appended."
                       if self.looks else "")
            raise InputError(f"{exc} (Still unreadable after {self.unreadable} reads over "
                             f"{time.monotonic() - self.since:.0f} s, so not a file caught mid-write: check the "
                             f"file.){changed}") from None
        first = str(exc).split(". ")[0]
        if first != self.last:  # a log not written yet: wait for it (one line per new reason)
            click.echo(f"waiting: {plain(first[:300])}.", err=True)
            self.last = first


def _rewritten(before: tuple, after: tuple) -> str:
    """Where a later look's history departs from the earlier one's."""
    i = next((i for i, (x, y) in enumerate(zip(before, after)) if x != y), min(len(before), len(after)))
    what = (f"question '{before[i][0]}' (answer {i + 1}) reads differently now" if i < len(after) else
            f"{len(before) - len(after)} answers that were read before are gone")
    return (f"the inputs were rewritten while watched: {what}. The looks already taken rested on answers that "
            "no longer stand, so the sequence is not one sequence any more; start watching again (a growing "
            "file must only be appended to).")


def _late(start: float, timeout, interval: float) -> bool:
    import time
    return timeout is not None and time.monotonic() - start + interval > timeout


def _read_retrying(files, a, b, rules, level, method, samples, shuffle, where, kw):
    """:func:`_watch_once`, read again (:data:`QUICK_TRIES`) when an archive is caught mid-write."""
    import time

    from bayeserr.data.readers import DamagedArchive
    for attempt in range(QUICK_TRIES):
        try:
            return _watch_once(files, a, b, rules, level, method, samples, shuffle, where, kw)
        except DamagedArchive:
            if attempt == QUICK_TRIES - 1:
                raise
            time.sleep(QUICK_PAUSE)


def _watch_once(files, a, b, rules, level, method, samples, shuffle, where, kw):
    from bayeserr.analyses.sequential import watch
    opts = dict(kw)
    no_cluster = opts.get("no_cluster", False)
    ds = load(files, models=[a] + ([b] if b is not None else []), where=where, in_progress="read",
              **pop_load(opts))
    return watch(ds, a, b, rules=rules, level=level, method=method, clusters=not no_cluster, samples=samples,
                 shuffle=shuffle)


def _output(w, fmt, html_out, files) -> None:
    from bayeserr.reporting.text import plain
    if html_out:
        from bayeserr.base.output import write_atomic
        from bayeserr.renderers.watch import render_html
        write_atomic(html_out, render_html(w, ", ".join(map(str, files))))
        click.echo(f"wrote {html_out}", err=True)
    if fmt == "json":
        from bayeserr.base.jsonable import dumps
        emit(dumps(w.to_dict()) + "\n")
        return
    emit(plain(w.sentence) + "\n")
    for note in w.notes:
        click.echo(plain(f"note: {note}"), err=True)
