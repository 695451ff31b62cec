"""``report``, ``compare``, ``power``, ``demo`` and ``plot``."""

from __future__ import annotations

import json

import click

from bayeserr.base.errors import InputError
from bayeserr.cli.app import main, signals_held
from bayeserr.cli.common import (
    command_line,
    emit,
    ints,
    load,
    model_list,
    output_format,
)
from bayeserr.cli.options import (
    LEVEL,
    PROBABILITY,
    adjust_option,
    analysis_options,
    bayes_options,
    bayes_settings,
    engine_option,
    load_options,
    nonempty,
    pop_load,
    ranged,
    where_option,
)
from bayeserr.registries.options import CLUSTER_READINGS, COMPARE_FAMILIES, RANK_INTERVALS, TASK_READINGS
from bayeserr.renderers import FIGURE_KINDS, FIGURE_SUFFIXES
from bayeserr.reporting.formats import COMPARE_FORMATS, FORMATS


def _write_report(rep, fmt, output, save_posterior=None, seed=0):
    """The report (to ``output`` or stdout) and, with ``--save-posterior``, its posterior
    folder: everything that can fail (rendering, the folder's checks, the netCDF files)
    happens before either is put in place."""
    text = rep.render(fmt)
    if not save_posterior:
        emit(text, output)
        return
    if not rep.posteriors:
        raise InputError("--save-posterior: there is no posterior to save (--bayes off?).")
    _with_posteriors(lambda: emit(text, output), rep.posteriors, save_posterior, seed)


def _computing_what_is_shown(options, fmt: str, save_posterior):
    """``--bayes fast`` leaves out the three-level hierarchical posterior when this report
    does not show it: not a column (``--methods``), no posterior figure (HTML), no saved
    posterior (``docs/methods.md`` §5.2, "What a report computes")."""
    from dataclasses import replace

    from bayeserr.registries.options import method_shown
    shown = fmt == "html" or save_posterior or any(method_shown(options.methods, k)
                                                   for k in ("hierarchical_posterior", "hierarchical_mu"))
    if options.bayes.mode != "fast" or shown:
        return options
    return replace(options, bayes=replace(options.bayes, only_shown=True))


def _apart(output, folder) -> None:
    """``-o`` may not be the ``--save-posterior`` folder or inside it: the folder is
    replaced as a whole, which would delete the report written there."""
    if not output or not folder:
        return
    import os
    from pathlib import Path
    out, fold = Path(os.path.realpath(output)), Path(os.path.realpath(folder))
    if out == fold or fold in out.parents:
        raise InputError(f"-o {output} is {'the' if out == fold else 'inside the'} --save-posterior folder "
                         f"{folder}, which is written (and replaced) as a whole; write the report outside it.")


def task_weights(text) -> dict | None:
    """``--task-weights``: ``NAME=W,NAME=W`` or a CSV file with columns task,weight."""
    if not text:
        return None
    from pathlib import Path
    if "=" not in text and not Path(text).is_file():
        raise InputError(f"--task-weights {text}: no such file; give NAME=W,NAME=W (e.g. math=2,code=1) "
                         "or a CSV file with columns task,weight.")
    if "=" not in text:
        import csv

        from bayeserr.base.output import protect
        protect(text)
        with open(text, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
        if not rows or not {"task", "weight"} <= set(rows[0]):
            raise InputError(f"--task-weights {text}: needs a header with the columns task and weight.")
        pairs = [(r["task"], r["weight"]) for r in rows]
    else:
        pairs = [item.rpartition("=")[::2] for item in text.split(",") if item.strip()]
        if any(not name for name, _ in pairs):
            raise InputError(f"--task-weights takes NAME=W,NAME=W (e.g. math=2,code=1) or a CSV file; "
                             f"got '{text}'.")
    out = {}
    for name, value in pairs:
        if name.strip() in out:
            raise InputError(f"--task-weights names '{name.strip()}' twice; give each task once.")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"--task-weights: the weight of '{name.strip()}' is not a number ('{value}').") from None
    return out


def _with_posteriors(write, fits, folder, seed):
    """Stage the posterior folder, then ``write()`` the report and put the folder in place."""
    from bayeserr.bayes.saving import posterior_folder, write_posteriors
    with posterior_folder(folder) as staged:
        paths = write_posteriors(fits, staged.path, seed)
        with signals_held():
            write()
            staged.commit()
    click.echo(f"wrote {len(paths)} posterior file(s) and index.json to {folder}", err=True)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(), metavar="FILE...")
@load_options
@where_option
@analysis_options(FORMATS)
@adjust_option
@bayes_options
@click.option("--prior-sensitivity", is_flag=True,
              help="Also show the Beta posterior interval under the uniform and Jeffreys priors.")
@click.option("--models", "models_text", help="Only these models (comma-separated); other rows count as dropped.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), callback=nonempty,
              help="Write the report to this file instead of the terminal (e.g. report.html); "
                   "never an input file.")
@click.option("--methods", "methods", default="recommended", show_default=True,
              help="Interval columns in text formats: recommended (one per model), all, or method "
                   "keys separated by commas (e.g. clt,wilson; hierarchical_mu: μ of a new cluster); "
                   "JSON always has every method.")
@click.option("--pairs", "pairs", default="auto", show_default=True,
              help="The family of pairs the adjustment covers and the rows shown: vs=MODEL (MODEL's "
                   "pairs), or all pairs — all, adjacent (shows neighbours in the ranking) or auto "
                   "(shows all up to 45 pairs, else adjacent; JSON: all).")
@click.option("--top-k", "top_k", type=int, default=3, show_default=True, callback=ranged(1, integer=True),
              help="Size of the ranking's top-k confidence set (≥ 1).")
@click.option("--rank-intervals", "rank_intervals", default="own", show_default=True,
              type=click.Choice(RANK_INTERVALS.choices),
              help="Rank intervals in the Ranking table: own (each model's own, holds for that row), "
                   "simultaneous (hold for every model at once) or both; JSON always has both.")
@click.option("--clusters-as", "clusters_as", default="sample", show_default=True,
              type=click.Choice(CLUSTER_READINGS.choices),
              help="sample: the clusters are a sample of clusters like these (CR2); strata: they are the whole "
                   "population of interest (a benchmark's fixed repositories) — a Suite section then ranks with "
                   "them as fixed strata, first.")
@click.option("--tasks-as", "tasks_as", default="strata", show_default=True,
              type=click.Choice(TASK_READINGS.choices),
              help="With three tasks or more: strata leads with these tasks (the Suite section); sample leads "
                   "with tasks like these (a leaderboard over tasks: t on T − 1 df, rank intervals for a new "
                   "task). Both are shown.")
@click.option("--pass-k", "pass_k_text", multiple=True,
              help="Add pass@k tables for these k (--pass-k 1 10, or 1,10); needs n_samples/n_correct "
                   "columns or 0/1 answers per sample.")
@click.option("--pass-hat-k", "pass_hat_k_text", multiple=True,
              help="pass^k (k runs of a question all succeed) for these k (--pass-hat-k 1 2 4, or 1,2,4) in the "
                   "Reliability section; default when questions were run repeatedly: every k up to the fewest "
                   "runs (up to 8), else 1, 2, 4, … and the fewest runs.")
@click.option("--task-weights", "task_weights_text", callback=nonempty,
              help="Suite scores with your task weights beside the macro and size-weighted ones: "
                   "NAME=W,NAME=W (tasks not named weigh 0) or a CSV file with columns task,weight.")
@engine_option
def report(files, fmt, level, cluster_correction, on_unpaired, adjust, prior_sensitivity,
           save_posterior, models_text, output, methods, pairs, top_k, pass_k_text, where,
           pass_hat_k_text=(), task_weights_text=None, rank_intervals="own", clusters_as="sample", tasks_as="strata", engine="auto", scheduler=None,
           workers=None, worker_memory="4GiB", **kw):
    """Per-model scores, all pairwise comparisons, warnings and row accounting for FILE.

    FILE is a results table (CSV, TSV, JSONL, Parquet, optionally .gz), an
    Inspect AI log or folder of logs, or lm-evaluation-harness samples.
    Several FILEs (or a quoted pattern such as 'logs/*.eval') are combined
    into one table, rows accounted per input; NAME=PATH makes NAME the
    model of every row of PATH (a table without a model column, or a log
    whose model name is replaced).
    """
    # size: a click command: one parameter per option
    from bayeserr.registries.options import Options
    from bayeserr.reporting import build_report
    _apart(output, save_posterior)
    fmt = output_format(fmt, output)
    bayes = bayes_settings(kw, fmt)
    options = Options(level=level, cluster_correction=cluster_correction, adjust=adjust,
                      on_unpaired=on_unpaired, bayes=bayes, prior_sensitivity=prior_sensitivity,
                      pass_k=tuple(k for text in pass_k_text for k in ints(text, "pass-k")),
                      pass_hat_k=tuple(k for text in pass_hat_k_text for k in ints(text, "pass-hat-k")),
                      seed=bayes.seed, methods=methods, pairs=pairs, top_k=top_k,
                      rank_intervals=rank_intervals, cluster_reading=clusters_as, task_reading=tasks_as,
                      task_weights=task_weights(task_weights_text))
    options = _computing_what_is_shown(options, fmt, save_posterior)
    config = click.get_current_context().find_root().meta.get("bayeserr.data.config")
    if engine == "auto":
        engine = _auto_engine(files, kw, where=where, models=models_text,
                              memory_only=clusters_as == "strata" or tasks_as == "sample")
    if engine != "memory" and clusters_as == "strata":
        raise InputError(f"--clusters-as strata needs --engine memory; --engine {engine} has no "
                         "suite section. Drop --clusters-as, or --engine.")
    if engine != "memory" and task_weights_text:
        raise InputError(f"--task-weights weighs the tasks of a suite, which --engine {engine} does not compute "
                         "(it keeps no per-task sums). Drop --task-weights, or use --engine memory.")
    if engine != "memory" and tasks_as == "sample":
        raise InputError(f"--tasks-as sample needs --engine memory; --engine {engine} keeps no "
                         "per-task scores. Drop --tasks-as, or --engine.")
    from bayeserr.engines.registry import ENGINES
    chosen = ENGINES.get_checked(engine)
    cluster = {"scheduler": scheduler, "workers": workers}
    chosen.check_options(cluster)
    if not chosen.per_question:
        if engine == "dask":
            cluster["worker_memory"] = worker_memory
        load_kw = chosen.check_load(pop_load(kw), where=where, models=models_text)
        rep = build_report(list(files), options=options, command=command_line(), config=config, engine=engine,
                           load=load_kw, **{k: v for k, v in cluster.items() if v is not None})
        _write_report(rep, fmt, output, save_posterior, bayes.seed)
        return
    ds = load(files, models=model_list(models_text), where=where, **pop_load(kw))
    rep = build_report(ds, options=options, inputs=ds.attrs["inputs"], command=command_line(), config=config)
    _write_report(rep, fmt, output, save_posterior, bayes.seed)


def _auto_engine(files, kw, *, memory_only: bool, **asked) -> str:
    """``--engine auto``: the stream engine for Parquet too large to read whole comfortably
    (:func:`bayeserr.engines.registry.auto_engine`, said in a note), when nothing asked for needs
    the memory engine (``memory_only``, or options the stream engine does not take); else memory."""
    from bayeserr.engines.registry import ENGINES, auto_engine
    if memory_only:
        return "memory"
    try:
        ENGINES["stream"].check_load(pop_load(dict(kw)), **asked)
    except InputError:
        return "memory"  # an option only the loader takes: the loader's own memory check decides
    engine, note = auto_engine(files)
    if note:
        from bayeserr.reporting.text import plain
        click.echo(plain(f"note: {note}"), err=True)
    return engine


@main.command()
@click.argument("items", nargs=-1, required=True, type=click.Path(), metavar="FILE... A B")
@load_options
@where_option
@analysis_options(COMPARE_FORMATS)
@bayes_options
@click.option("--family", "family", type=click.Choice(COMPARE_FAMILIES.choices), default="report", show_default=True,
              help="report: also the verdict the report of every model in FILE gives this pair (its family "
                   "and adjustment; reads every model); pair: this pair alone (reads only A and B).")
def compare(items, fmt, level, cluster_correction, on_unpaired, save_posterior, where, family="report", **kw):
    """One pair in depth: A − B on the questions of FILE.

    The last two arguments are the models A and B; every argument before
    them is an input, as for report (several files, a quoted pattern,
    NAME=PATH).
    """
    from bayeserr.registries.options import Options
    from bayeserr.reporting import build_comparison
    if len(items) < 3:
        raise click.UsageError(f"compare takes FILE... A B: one or more inputs, then the two models "
                               f"(got {len(items)} argument{'s' if len(items) != 1 else ''}).")
    files, a, b = items[:-2], items[-2], items[-1]
    if a == b:
        raise InputError(f"compare needs two different models (got '{a}' twice).")
    bayes = bayes_settings(kw, fmt)
    options = Options(level=level, cluster_correction=cluster_correction, on_unpaired=on_unpaired,
                      bayes=bayes, seed=bayes.seed)
    ds = load(files, models=[a, b] if family == "pair" else None, where=where, **pop_load(kw))
    if family == "report":
        from bayeserr.base.errors import suggest
        missing = [m for m in (a, b) if m not in ds["score"].coords["model"].values]
        if missing:
            raise InputError(f"model '{missing[0]}' is not in the data."
                             f"{suggest(missing[0], [str(m) for m in ds['score'].coords['model'].values])}")
    rep = build_comparison(ds, a, b, options=options, family=family,
                           config=click.get_current_context().find_root().meta.get("bayeserr.data.config"))
    text = rep.render(fmt)
    if not save_posterior:
        emit(text)
    elif rep.posterior is None:
        raise InputError("--save-posterior: there is no posterior to save (--bayes off?).")
    elif rep.posterior.idata is None:
        raise InputError(f"--save-posterior: this comparison's posterior ({rep.posterior.method}) is "
                         "computed exactly and has no draws to save; --bayes mcmc samples one.")
    else:
        _with_posteriors(lambda: emit(text), {f"{a} − {b}": {"paired": rep.posterior.idata}},
                         save_posterior, bayes.seed)


@main.command()
@click.option("--delta", type=float, callback=ranged(0, 1, low_open=True),
              help="Difference to detect (e.g. 0.03): prints the questions needed (M9).")
@click.option("--n", "n", type=float, callback=ranged(2),
              help="Questions available: prints the minimum detectable effect (M10), or the tie zone.")
@click.option("--omega2", type=float, callback=ranged(0, low_open=True),
              help="ω² = Var(x_A) + Var(x_B) − 2 Cov(x_A, x_B).")
@click.option("--sigma2-a", type=float, default=0.0, show_default=True, callback=ranged(0),
              help="E[σ²] of A (within-question answer variance).")
@click.option("--sigma2-b", type=float, default=0.0, show_default=True, callback=ranged(0), help="E[σ²] of B.")
@click.option("--k-a", type=float, callback=ranged(1), help="Samples per question for A [default: 1, or the pilot's].")
@click.option("--k-b", type=float, callback=ranged(1), help="Samples per question for B [default: 1, or the pilot's].")
@click.option("--alpha", type=float, default=0.05, show_default=True, callback=PROBABILITY)
@click.option("--power", "power_", type=float, default=0.8, show_default=True, callback=PROBABILITY)
@click.option("--cluster-size", type=float, callback=ranged(1), help="Questions per cluster m (clustered design).")
@click.option("--icc", type=float, callback=ranged(0, 1, high_open=True),
              help="Intra-cluster correlation ρ_icc (clustered design).")
@click.option("--p", "p", type=float, metavar="P", callback=PROBABILITY,
              help="0/1 scores: baseline accuracy (the other model's is P + delta); with --rho, "
                   "ω² follows from the two accuracies (docs/methods.md §4.6).")
@click.option("--rho", type=float, metavar="R", callback=ranged(-1, 1),
              help="0/1 scores: correlation of the two models' answers on the same question "
                   "(the report's ρ; Miller: 0.3–0.7 for frontier models); with --p.")
@click.option("--unpaired", nargs=2, type=float, metavar="P_A P_B", callback=PROBABILITY,
              help="Independent proportions: questions per model to tell P_A from P_B "
                   "(the same as --baseline P_A --target P_B).")
@click.option("--baseline", type=float, metavar="P", callback=PROBABILITY,
              help="Independent samples: the baseline accuracy; with --target, questions per model.")
@click.option("--target", type=float, metavar="P", callback=PROBABILITY,
              help="Independent samples: the accuracy to tell from --baseline.")
@click.option("--tie-zone", "tie_p", type=float, metavar="P", callback=PROBABILITY,
              help="Tie zone at accuracy P: with --n its half-width, with --delta the n that resolves delta.")
@click.option("--judge-corr", type=float, metavar="R", callback=ranged(-1, 1),
              help="Judge-scored evals: the judge–human correlation; with --half-width W the human labels "
                   "needed for a PPI++ interval of ±W, with --n N the half-width N labels give "
                   "(with --sd S or --p P; docs/methods.md §3.14).")
@click.option("--half-width", type=float, metavar="W", callback=ranged(0, 1, low_open=True),
              help="Judge-scored evals: the target half-width of the corrected interval (0.03 = ±3 points).")
@click.option("--sd", type=float, metavar="S", callback=ranged(0, low_open=True),
              help="Judge-scored evals: the SD of the human score (0/1 scores: give --p instead).")
@click.option("--n-total", type=float, metavar="N", callback=ranged(2),
              help="Judge-scored evals: questions in all (the judge scores every one) [default: unlimited].")
@click.option("--pilot", nargs=3, type=str, metavar="FILE A B",
              help="Estimate ω², σ², ρ and ρ_icc from a pilot results file (read with the same "
                   "column and format options as report).")
@load_options
@where_option
@click.option("--format", "fmt", type=click.Choice(COMPARE_FORMATS.choices), default="md", show_default=True)
@click.pass_context
def power(ctx, pilot, fmt, power_, where, **kw):
    """Plan an eval: questions needed (M9), minimum detectable effect (M10), tie zones.

    Run with no options for examples.
    """
    from bayeserr.analyses.power import USAGE, plan
    cols = pop_load(kw)
    if not pilot and all(kw[k] is None for k in ("delta", "n", "omega2", "p", "rho", "unpaired",
                                                    "baseline", "target", "tie_p", "judge_corr", "half_width")):
        click.echo(f"{ctx.get_usage()}\n\n{USAGE}\n\nTry 'bayeserr power --help' for every option.",
                   err=True)
        ctx.exit(2)
    if pilot:
        file, a, b = pilot
        pilot = (load(file, models=[a, b], where=where, **cols), a, b)
    elif where and ctx.get_parameter_source("where") is click.core.ParameterSource.COMMANDLINE:
        # (a configured `where` is for data files; a plan without a pilot has none)
        raise InputError("--where filters the rows of a pilot file: give --pilot FILE A B too.")
    result = plan(pilot=pilot, power=power_, **kw)
    emit(json.dumps(result.to_dict(), indent=2) if fmt == "json" else result.to_markdown())


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS.choices), default="md", show_default=True)
@click.option("--level", default=0.95, show_default=True, type=float, callback=LEVEL)
@click.option("--output", "-o", type=click.Path(dir_okay=False), callback=nonempty,
              help="Write the report to this file.")
def demo(fmt, level, output):
    """Run the report on the bundled example (a fictional internal eval set)."""
    from bayeserr.base.output import protect
    from bayeserr.data.loading import load as _load
    from bayeserr.examples import example_path
    from bayeserr.reporting import build_report
    protect(example_path())  # the package's own data is an input too: never overwritten
    fmt = output_format(fmt, output)
    ds = _load(example_path(), name="bundled example: internal_eval.csv.gz")
    _write_report(build_report(ds, level=level, inputs=[example_path()], command=command_line()),
                  fmt, output)


@main.command()
@click.argument("file", type=click.Path())
@load_options
@where_option
@analysis_options()
@bayes_options
@adjust_option
@click.option("--pairs", "pairs", default="auto", show_default=True,
              help="The family of pairs the adjustment covers (as for report): vs=MODEL or all pairs.")
@click.option("--top-k", "top_k", type=int, default=3, show_default=True, callback=ranged(1, integer=True),
              help="Size of the ranking's top-k confidence set (≥ 1).")
@click.option("--kind", type=click.Choice(FIGURE_KINDS), default="forest", show_default=True,
              help="forest (per-model intervals), ranks (rank intervals), pairs (pairwise differences), "
                   "heatmap (P(A > B)), posterior or judge (human-scored against judge-only, with labels).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), callback=nonempty, required=True,
              help="Figure file: .svg, .png or .pdf.")
def plot(file, kind, output, level, cluster_correction, on_unpaired, adjust, pairs, top_k, save_posterior, **kw):
    """Draw one figure of the report for FILE."""
    from pathlib import Path

    from bayeserr.base.output import check_writable
    from bayeserr.registries.options import Options
    from bayeserr.renderers import plots
    from bayeserr.reporting import build_report
    if Path(output).suffix.lower() not in FIGURE_SUFFIXES:  # before any work
        raise InputError(f"{output}: write figures as .svg, .png or .pdf.")
    if save_posterior:  # a figure writes no posterior: say so rather than ignore the option
        raise InputError("plot draws a figure and saves no posterior: drop --save-posterior, or run "
                         "'bayeserr report FILE --bayes mcmc --save-posterior DIR'.")
    bayes = bayes_settings(kw, "json")
    options = Options(level=level, cluster_correction=cluster_correction, on_unpaired=on_unpaired,
                      bayes=bayes, adjust=adjust, pairs=pairs, top_k=top_k)
    ds = load(file, where=kw.pop("where"), **pop_load(kw))
    check_writable(output)
    notes: list = []
    plots.save(plots.figure(build_report(ds, options=options), kind), output, notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"wrote {output}", err=True)

