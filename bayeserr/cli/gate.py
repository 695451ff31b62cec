"""``gate``: a release gate for CI (``docs/methods.md`` §3.11; the statistics are in
:mod:`bayeserr.analyses.gate`).

Exit codes: 0 every candidate passed, 1 a candidate did not (the data show it
worse than allowed, or cannot show that it is not), 2 bad input or options.
"""

from __future__ import annotations

import os

import click

from bayeserr.cli.app import main
from bayeserr.cli.common import emit, load
from bayeserr.cli.options import SEED, choice, load_options, nonempty, pop_load, ranged, where_option
from bayeserr.registries.options import GATE_BAYES, ON_UNPAIRED, SUITE_WEIGHTINGS
from bayeserr.reporting.formats import TEXT_FORMATS


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(), metavar="RESULTS...")
@click.option("--candidate", "candidates", multiple=True, required=True, metavar="MODEL",
              help="The model to gate (repeat for several: Holm over them).")
@click.option("--baseline", required=True, metavar="MODEL",
              help="The model the candidates are compared with.")
@click.option("--margin", type=float, required=True, callback=ranged(0, 1, high_open=True),
              help="m in score units (0.01 = one point): non-inferiority passes when the data show "
                   "A − B > −m, superiority when they show A − B > m.")
@click.option("--non-inferiority", "mode", flag_value="non-inferiority", default=True,
              help="H0: A − B ≤ −m against A − B > −m (the default).")
@click.option("--superiority", "mode", flag_value="superiority",
              help="H0: A − B ≤ m against A − B > m.")
@click.option("--level", default=0.95, show_default=True, type=float,
              callback=ranged(0.5, 1, low_open=True, high_open=True),
              help="Confidence of the one-sided bound, in (0.5, 1): the gate falsely passes at most "
                   "1 − level of the time.")
@click.option("--format", "fmt", type=click.Choice(TEXT_FORMATS.choices), default="text", show_default=True)
@click.option("--summary", type=click.Path(dir_okay=False), callback=nonempty, metavar="FILE",
              help="Also write the verdict as Markdown for a CI job summary (e.g. \"$GITHUB_STEP_SUMMARY\"); "
                   "appended when FILE exists (never an input).")
@click.option("--on-unpaired", type=choice(ON_UNPAIRED), default="error", show_default=True,
              help="Models with different question sets: stop, or compare on the questions both answered.")
@click.option("--bayes", "bayes_mode", type=click.Choice(GATE_BAYES.choices), default="fast", show_default=True,
              help="Show the Bayesian P(A − B > −m) (or > m) beside the verdict; it is not the decision.")
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED,
              help="Seed of the wild cluster bootstrap and the Bayesian draws (≥ 0).")
@click.option("--task", "task", metavar="TASK",
              help="Gate one task of a suite (the questions of TASK only).")
@click.option("--suite", "suite", type=click.Choice(SUITE_WEIGHTINGS.choices),
              help="Gate the suite score over every task: macro (tasks equal) or size (questions equal), "
                   "tasks as fixed strata.")
@load_options
@where_option
@click.pass_context
def gate(ctx, files, candidates, baseline, margin, mode, level, fmt, summary, on_unpaired, bayes_mode, seed,
         where, task=None, suite=None, **kw):
    """A release gate: is each candidate not worse than the baseline by more than the margin?

    A one-sided test of A − B (candidate minus baseline) on the questions
    both answered, with the report's headline test (CR2 t on Bell–McCaffrey
    df with clusters, and the wild cluster bootstrap too where that df is
    below 10; without clusters a score test for 0/1 answers, the paired z for
    fractional scores). Prints one sentence per
    candidate and exits 0 when every candidate passes, 1 when one does not,
    2 on bad input. RESULTS are read as for report.

    Example: bayeserr gate results.csv --candidate new --baseline prod --margin 0.01
    """
    # size: a click command: one parameter per option
    from bayeserr.analyses.gate import gate as run_gate
    from bayeserr.base.output import check_writable
    from bayeserr.bayes.settings import BayesSettings
    from bayeserr.registries.options import Options
    from bayeserr.reporting.text import plain
    if baseline in candidates:
        from bayeserr.base.errors import InputError
        raise InputError(f"--baseline '{baseline}' is also a --candidate; a model cannot be gated against "
                         "itself.")
    if task is not None and suite is not None:
        from bayeserr.base.errors import InputError
        raise InputError("--task gates one task and --suite all of them: give one or the other.")
    ds = load(files, models=[*dict.fromkeys(candidates), baseline], where=where, **pop_load(kw))
    if summary:
        check_writable(summary)  # an input, a folder, a missing folder: before the work
    options = Options(level=level, on_unpaired=on_unpaired, seed=seed,
                      bayes=BayesSettings(mode=bayes_mode, seed=seed))
    result = run_gate(ds, list(candidates), baseline, margin, mode=mode, suite=suite, task=task,
                      options=options)
    if summary:
        _append(summary, summary_markdown(result))
    config = ctx.find_root().meta.get("bayeserr.data.config")
    used = [str(f) for f in config.files.values()] if config is not None else []
    if used:  # defaults from configuration files are named, as in every report
        click.echo(plain(f"note: settings from {', '.join(used)} (flags override them)."), err=True)
    if fmt == "json":
        from bayeserr.base.jsonable import dumps
        emit(dumps({**result.to_dict(), **({"config": used} if used else {})}) + "\n")
    else:
        emit("\n".join(plain(line) for line in result.sentence.splitlines()) + "\n")
        for c in result.checks:
            for note in c.notes:
                click.echo(plain(f"note ({c.candidate}): {note}"), err=True)
    ctx.exit(result.exit_code)


def _append(path, text: str) -> None:
    """Add ``text`` to the end of ``path`` (a CI job summary collects the steps' outputs).
    The file is locked for the append (``flock``), so two gates writing one summary at once
    both land, and its earlier bytes are never read back or rewritten (a summary holding bytes
    that are not UTF-8 keeps them); a blank line separates the new text from the old."""
    from bayeserr.base.errors import InputError
    from bayeserr.base.output import check_writable
    p = check_writable(path)
    data = text.encode("utf-8", errors="backslashreplace")
    try:
        with open(p, "a+b") as fh:
            _lock(fh)
            end = fh.seek(0, 2)
            if end and p.is_file():
                fh.seek(end - 1)
                last = fh.read(1)
                data = (b"\n" if last == b"\n" else b"\n\n") + data
            fh.write(data)  # "a" mode: at the end, whatever the position
            fh.flush()
            if p.is_file():
                os.fsync(fh.fileno())
    except OSError as exc:
        raise InputError(f"--summary {path}: could not append ({exc.strerror or exc}).") from None
    click.echo(f"wrote the summary to {path}", err=True)


def _lock(fh) -> None:
    """An exclusive advisory lock on an open file, released when it is closed (POSIX; elsewhere
    the append goes unlocked)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    except OSError:  # a device or a file system without locks: append unlocked
        pass


def summary_markdown(result) -> str:
    """The verdict as GitHub-flavoured Markdown (a job summary): a heading, one table row
    per candidate, the sentences and notes.  Model names are escaped."""
    from bayeserr.analyses.gate import points
    from bayeserr.reporting.text import esc

    def p(x):
        return "–" if x is None else ("< 0.0001" if x < 1e-4 else f"{x:.4f}")

    mode, k = result.mode, len(result.checks)
    word = "non-inferior" if mode == "non-inferiority" else "superior"
    n_pass = sum(c.passed for c in result.checks)
    holm = k > 1
    lines = [
        (f"### bayeserr gate{f' ({esc(result.scope)})' if result.scope else ''} "
         f"{'passed' if result.passed else 'failed'}: {n_pass} of {k} "
         f"candidate{'s' if k > 1 else ''} {word}"),
        "",
        (f"{mode.capitalize()} against **{esc(result.baseline)}**, margin {points(result.null)} points, "
         f"one-sided at {100 * result.level:g}%" + (f", Holm over {k} candidates." if holm else ".")),
        "",
        ("| candidate | verdict | A − B (points) | lower bound (level) | margin | test | p the verdict reads "
         + ("| Holm p " if holm else "") + "| P(A − B > margin), Bayesian |"),
        "|---|---|---|---|---|---|---|" + ("---|" if holm else "") + "---|",
    ]
    for c in result.checks:
        small = "; too small" if c.too_small and c.finding == "not shown" else ""
        verdict = f"{'**pass**' if c.passed else '**fail**'} ({c.finding}{small})"
        test = (f"CR2 t, df {c.df:.1f}" if c.test == "t_cr2_bm" else
                f"suite t ({c.test.rsplit('_', 1)[1]} weights), df {c.df:.1f}" if c.test.startswith("t_suite")
                else "Tango score" if c.test == "score_tango" else "paired z")
        pv = p(c.p_decision)
        if c.wild is not None:  # the decision reads the larger of the two (docs/methods.md §3.11)
            test += " + wild bootstrap"
            pv += f" (the larger of t {p(c.p_value)} and wild {p(c.wild['p_value'])})"
        clusters = f" in {c.n_clusters} clusters" if c.n_clusters and c.n_clusters >= 2 else ""
        prob = "–" if c.prob is None else f"{c.prob:.3f}"
        lines.append(
            f"| {esc(c.candidate)} | {verdict} | {points(c.diff, 2)} | {points(c.bound, 2)} "
            f"({100 * c.bound_level:.3g}%) | {points(result.null, 2)} | {test}, {c.n_questions:,} "
            f"questions{clusters} | {pv} " + (f"| {p(c.p_adjusted)} " if holm else "") + f"| {prob} |")
    lines.append("")
    for c in result.checks:
        lines.append(f"- {esc(c.sentence)}")
        lines += [f"  - note: {esc(n)}" for n in c.notes]
    if result.partial_runs:  # a verdict on a run that did not finish says so where it is read
        from bayeserr.analyses.gate_text import partial_sentence
        lines += ["", f"**{esc(partial_sentence(result.partial_runs))}**"]
    if any(c.too_small and c.finding == "not shown" for c in result.checks):
        lines += ["", ("*Too small*: even if the candidate equals the baseline, this eval would pass it less "
                       "than half the time at this margin; add questions (the sentence says how many) or "
                       "gate on a wider margin.")]
    lines += ["", ("<sub>The Bayesian column is shown beside the test and is not the decision "
                   "(bayeserr gate; docs/methods.md §3.11).</sub>"), ""]
    return "\n".join(lines)
