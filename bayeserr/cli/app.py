"""The ``bayeserr`` command group and its entry point; the commands register
themselves on ``main`` from their own modules."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

import click

from bayeserr.base.errors import CONTROL, InputError


class _Group(click.Group):
    def invoke(self, ctx):
        from bayeserr.base.output import WRITTEN
        WRITTEN.clear()
        _STOPPED_BY.clear()
        given = list(ctx.args)  # the subcommand's arguments, before they are consumed
        # the late signals are held as soon as the command is over, on every path, so that one
        # arriving while the process ends neither kills it by the signal nor prints a traceback
        try:
            rv = super().invoke(ctx)
            _block_late_signals()
            return rv
        except InputError as exc:
            _block_late_signals()
            click.echo(f"error: {printable(exc)}", err=True)
            ctx.exit(2)
        except MemoryError as exc:  # what the estimates before loading did not foresee
            _block_late_signals()
            click.echo(f"error: {printable(_out_of_memory(ctx, exc, given))}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:  # every output is written atomically at the end
            _block_late_signals()
            click.echo(_interrupted(WRITTEN), err=True)
            ctx.exit(128 + (_STOPPED_BY[-1] if _STOPPED_BY else signal.SIGINT))


#: the signals that stopped this command (SIGTERM is turned into an interrupt by :func:`run`)
_STOPPED_BY: list[int] = []


def _interrupted(written) -> str:
    what = "terminated" if _STOPPED_BY and _STOPPED_BY[-1] == signal.SIGTERM else "interrupted"
    if not written:  # outputs are put in place at the very end (signals_held): usually nothing
        return f"{what}: nothing was written."
    return f"{what} after writing {', '.join(printable(p) for p in written)}."


def _terminate(signum, frame):
    """SIGTERM (``kill``, a CI job cancelled, a container stopped) as Ctrl-C: through
    whatever SIGINT handler is in force (the sampler's records it), so every
    ``finally`` runs and staged outputs are removed; the exit code is 143."""
    _STOPPED_BY.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    raise KeyboardInterrupt


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM while outputs are put in place (a few renames), so an
    interrupt cannot fall between the report and its posterior folder; one that
    arrives meanwhile acts once the block is done."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def printable(text) -> str:
    """An error message safe for a terminal: user text quoted in it (model names, values,
    archive members) cannot send escape sequences; each control character
    (:data:`~bayeserr.base.errors.CONTROL`) shows as \\xNN or \\uNNNN."""
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


#: above this many --draws, running out of memory is said to be the draws' doing first
DRAWS_NAMED = 10_000


def _out_of_memory(ctx, exc: MemoryError, given=()) -> str:
    """One line for a MemoryError: the command, what could not be allocated
    (numpy and pyarrow name the size) and what to do."""
    detail = " ".join(str(exc).split())[:200]
    command = " ".join(["bayeserr", *([ctx.invoked_subcommand] if ctx.invoked_subcommand else [])])
    draws = _option_value(list(given), "--draws")
    first = (f"Ask for fewer posterior draws (--draws {draws} was given), or load "
             if draws is not None and draws.isdigit() and int(draws) > DRAWS_NAMED else "Load ")
    return (f"{command} ran out of memory{f' ({detail})' if detail else ''}. {first}fewer models "
            "(--models), fewer rows (--where, e.g. --where task=NAME) or fewer samples per question, "
            "or run on a machine with more memory (or raise the limit: ulimit -v, the container's "
            "memory limit).")


def _option_value(args: list, option: str) -> str | None:
    """The value given to ``option`` in ``args`` (``--draws 10`` or ``--draws=10``), or None."""
    for i, a in enumerate(args):
        if a == option and i + 1 < len(args):
            return str(args[i + 1])
        if isinstance(a, str) and a.startswith(option + "="):
            return a.split("=", 1)[1]
    return None


@click.group(cls=_Group)
@click.version_option(package_name="bayeserr", prog_name="bayeserr")
@click.pass_context
def main(ctx):
    """Honest error bars for language-model evals (Miller 2024, exact tests, Bayesian models).

    Defaults can come from bayeserr.toml or [tool.bayeserr] in pyproject.toml
    (see 'bayeserr config'). Shell completion: eval "$(_BAYESERR_COMPLETE=bash_source bayeserr)".
    """
    from bayeserr.cli.defaults import apply
    apply(ctx)  # configuration files -> the defaults of report, compare, plot, power, config



def join_multi_values(argv: list[str], options=("--pass-k", "--pass-hat-k")) -> list[str]:
    """Let an option take several space-separated whole numbers, as in
    ``--pass-k 1 10``: click options take a fixed number of values, so the
    numbers after such an option are joined into ``1,10`` before parsing."""
    out, i = [], 0
    while i < len(argv):
        out.append(argv[i])
        if argv[i] in options:
            values = []
            while i + 1 < len(argv) and argv[i + 1].replace(",", "").isdigit():
                values.append(argv[i + 1])
                i += 1
            if values:
                out.append(",".join(values))
        i += 1
    return out


#: BLAS thread pools the command line keeps to one thread unless the user set them: a report's
#: array work is many small products, where extra threads spin (measured on 2 cores: the 1M-row
#: report took 4.9 s of CPU with OpenBLAS's default threads and 3.7 s with one, in the same wall time)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def run():
    """Console entry point: ``main`` with multi-value options joined."""
    import os
    for name in BLAS_THREADS:  # before NumPy is imported (every heavy import is lazy)
        os.environ.setdefault(name, "1")
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    _CONSOLE.append(True)
    for stream in (sys.stdout, sys.stderr):  # a cp1252 or latin-1 terminal: help text and messages
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "") and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")  # show what it cannot encode, never crash
    try:
        code = main.main(args=join_multi_values(sys.argv[1:]), prog_name="bayeserr", standalone_mode=False)
    except click.ClickException as exc:  # a usage error: click's own message, exit 2
        exc.show()
        code = exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):  # an interrupt outside a command's own handling
        from bayeserr.base.output import WRITTEN
        click.echo(_interrupted(WRITTEN), err=True)
        code = 128 + (_STOPPED_BY[-1] if _STOPPED_BY else signal.SIGINT)
    finally:
        _hold_late_signals()
    code = code if isinstance(code, int) else 0
    stream = sys.modules.get("bayeserr.engines.stream")
    if stream is not None and any(t.is_alive() for t in stream.ABANDONED):
        # a network call given up on still runs in a thread: Python's finalization would abort on it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _hold_late_signals() -> None:
    """Once the command has ended (its outputs in place), SIGINT and SIGTERM are held until the
    process exits: one arriving while Python shuts down killed the process by the signal, or
    printed a traceback after a complete output.  One that came meanwhile is said in one line
    and gives the usual 130/143."""
    if not _block_late_signals():
        return
    _said_late_signal()
    import atexit
    atexit.register(_said_late_signal)  # and once more as late as Python code runs


#: set by :func:`run`: the process is the command (not a test runner or a notebook calling ``main``)
_CONSOLE: list = []


def _block_late_signals() -> bool:
    """Hold SIGINT and SIGTERM in this (main) thread from now on, in the ``bayeserr`` process only;
    False where that cannot be done."""
    if not _CONSOLE or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "pthread_sigmask"):
        return False
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    return True


def _said_late_signal() -> None:
    pending = signal.sigpending() & {signal.SIGINT, signal.SIGTERM}
    if pending:
        sig = signal.SIGTERM if signal.SIGTERM in pending else signal.SIGINT
        what = "terminated" if sig == signal.SIGTERM else "interrupted"
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.write(f"{what} after the command had finished: its output is complete.\n")
            sys.stderr.flush()
        os._exit(128 + sig)
