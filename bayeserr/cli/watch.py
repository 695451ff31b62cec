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
              help="--follow: give up after this many seconds (exit 1).")
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
    logs are read (--partial-runs include is the default here). Inside a run,
    bayeserr.integrations.inspect_stopping stops the run itself
    (docs/guide/early-stopping.md).

    Example: bayeserr watch logs/candidate.eval logs/baseline.eval --pair new prod --margin 0.01
    """
    # size: a click command: one parameter per option
    import time

    from bayeserr.analyses.sequential import Rules
    from bayeserr.base.errors import InputError
    from bayeserr.base.output import check_writable
    from bayeserr.reporting.text import plain
    if (pair is None) == (model is None):
        raise InputError("give --pair A B (a difference) or --model MODEL (one mean), one of them.")
    unused = [f"--{k.replace('_', '-')}" for k in ("human_col", "labels", "human_scorer", "task_col")
              if kw.get(k) and ctx.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE]
    if unused:
        raise InputError(f"watch does not use {', '.join(unused)}: it watches the scores of one model or "
                         "a pair (human labels and tasks are for report).")
    for k in ("human_col", "labels", "human_scorer", "task_col"):
        kw[k] = None  # (a configuration file's defaults are for report)
    if ctx.get_parameter_source("partial_runs") is click.core.ParameterSource.DEFAULT:
        kw["partial_runs"] = "include"  # a running eval's log is not finished yet
    if html_out:
        check_writable(html_out)
    if shuffle is not None and follow:
        raise InputError("--shuffle replays a finished file in a random order; --follow watches a growing one "
                         "in the order its answers arrive (a new random order at every read would not be one "
                         "sequence). Give one of them.")
    a, b = (pair if pair is not None else (model, None))
    rules = Rules(settle=margin is None, tie=tie, margin=margin, width=width, budget=budget)
    rules.check(b is not None)
    from bayeserr.data.readers import DamagedArchive
    start = time.monotonic()
    last_error = None
    unreadable = 0
    while True:
        try:
            w = _read_retrying(files, a, b, rules, level, method, samples, shuffle, where, kw)
            unreadable = 0
        except InputError as exc:
            if not follow:
                raise
            unreadable = unreadable + 1 if isinstance(exc, DamagedArchive) else 0
            if unreadable >= UNREADABLE_LOOKS:
                raise InputError(f"{exc} (Still unreadable after {unreadable} reads {interval:g} s apart, so not "
                                 "a log caught mid-write: check the file.)") from None
            first = str(exc).split(". ")[0]
            if first != last_error:  # a log not written yet: wait for it (one line per new reason)
                click.echo(f"waiting: {plain(first[:300])}.", err=True)
                last_error = first
            w = None
        if w is not None and (not follow or w.stop is not None or _late(start, timeout, interval)):
            break
        if w is not None:
            click.echo(plain(w.sentence), err=True)  # progress while following
        if _late(start, timeout, interval):
            raise InputError(f"--timeout {timeout:g} s passed before the inputs could be read: {last_error}")
        time.sleep(interval)
    _output(w, fmt, html_out, files)
    ctx.exit(w.exit_code)


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
