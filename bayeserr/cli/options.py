"""Options shared by the commands, generated from the registries and
validated in one place (:mod:`bayeserr.registries.options`): a bad value is one
``error:`` line naming the option and its range, exit code 2."""

from __future__ import annotations

import click

from bayeserr.base.errors import InputError
from bayeserr.base.registry import check_range
from bayeserr.bayes.settings import MODES
from bayeserr.data.readers.options import OPTIONS  # the declarations only: light
from bayeserr.data.readers.registry import INPUT_FORMATS
from bayeserr.registries.options import ADJUSTMENTS, CLUSTER_CORRECTIONS, ON_UNPAIRED


def ranged(low=None, high=None, *, low_open=False, high_open=False, integer=False):
    """A click callback that checks a numeric option's range (None passes)."""
    def callback(ctx, param, value):
        if value is None:
            return None
        name = "--" + param.name.replace("_", "-") if not param.opts else max(param.opts, key=len)
        try:
            if param.nargs != 1 or param.multiple:
                return tuple(check_range(name, v, low, high, low_open=low_open, high_open=high_open,
                                         integer=integer) for v in value)
            return check_range(name, value, low, high, low_open=low_open, high_open=high_open,
                               integer=integer)
        except InputError as exc:
            if ctx.get_parameter_source(param.name) is not click.core.ParameterSource.DEFAULT_MAP:
                raise
            from bayeserr.data.config import read  # the value is not the user's flag: say where it is
            cfg = read()
            where = cfg.source_text(param.name) if param.name in cfg.sources else "a configuration file"
            raise InputError(f"{exc} The value comes from {where}, not from a flag: fix it there, or "
                             f"give {name} on the command line.") from None
    return callback


LEVEL = ranged(0, 1, low_open=True, high_open=True)
PROBABILITY = ranged(0, 1, low_open=True, high_open=True)
def nonempty(ctx, param, value):
    """A click callback refusing an empty value (``-o ''``: a path or list left empty by a script)."""
    if value is not None and not str(value).strip():
        name = max(param.opts, key=len) if param.opts else "--" + param.name.replace("_", "-")
        raise click.BadParameter("is empty; give a value, or leave the option out.", ctx=ctx, param_hint=name)
    return value


SEED = ranged(0, integer=True)
COUNT = ranged(1, integer=True)


def choice(registry):
    return click.Choice(registry.choices)


def stack(*opts):
    def deco(f):
        for o in reversed(opts):
            f = o(f)
        return f
    return deco


def load_options(f):
    """Column mapping and readers, shared by the commands that read results."""
    return stack(
        click.option("--model-col", help="Column with the model name [default: model]."),
        click.option("--question-col", help="Column with the question id [default: question_id]."),
        click.option("--score-col", help="Column with the score in [0, 1] [default: score]."),
        click.option("--cluster-col", help="Column with the cluster id [default: cluster_id if present]."),
        click.option("--sample-col", help="Column with the sample index [default: sample if present]."),
        click.option("--task-col", help="Column with the task of each question, for suite scores over "
                     "several tasks [default: task if present; logs: the run's task]."),
        click.option("--no-cluster", is_flag=True, help="Ignore the cluster column."),
        click.option("--input-format", type=click.Choice(INPUT_FORMATS), default="auto", show_default=True,
                     help="Results table (csv, tsv, jsonl, parquet), Inspect AI logs (.eval/.json) or "
                          "lm-eval samples; auto picks from the path (and sniffs standard input, '-')."),
        *(_reader_option(o) for o in OPTIONS.values() if o.cli and o.name != "human_scorer"),
        click.option("--human-col", metavar="NAME",
                     help="Judge-scored evals: the column with a human label of each answer, in [0, 1] like "
                          "the scores, empty where the answer is not labelled (never guessed). With --labels: "
                          "the label column of that file [default: human]."),
        click.option("--labels", metavar="FILE",
                     help="Judge-scored evals: a table of human labels (CSV, TSV, JSONL, Parquet), one row "
                          "per labelled answer, joined to the answers on model, question_id and sample (the "
                          "names of --model-col, --question-col, --sample-col); every label must match an "
                          "answer. One source of labels: not with --human-scorer or a --human-col of the "
                          "results."),
        _reader_option(OPTIONS["human_scorer"]),
    )(f)


def _reader_option(o):
    """The command-line flag of a reader option (:data:`bayeserr.data.readers.options.OPTIONS`)."""
    if o.choices:
        return click.option(o.option, o.name, type=click.Choice(o.choices), default=o.default,
                            show_default=True, help=o.help)
    return click.option(o.option, o.name, metavar=o.metavar, help=o.help)


LOAD_KEYS = ("model_col", "question_col", "score_col", "cluster_col", "sample_col", "task_col", "no_cluster",
             "input_format", "human_col", "labels", *(o.name for o in OPTIONS.values() if o.cli))


def pop_load(kw: dict) -> dict:
    """The load options out of a command's keyword arguments."""
    return {k: kw.pop(k) for k in LOAD_KEYS}


WHERE_HELP = ("Use only rows where EXPR holds, others count as dropped: col=value, col=a,b (any of), "
              "col!=value, col<N, col<=N, col>N, col>=N; repeat for AND. Columns of tables; for logs "
              "task, model, score and Inspect metadata fields (e.g. subject).")


def where_option(f):
    """``--where EXPR`` (repeatable, all must hold; :mod:`bayeserr.data.filters`); the
    value reaches the command as ``where`` (a tuple of expressions)."""
    return click.option("--where", "where", multiple=True, metavar="EXPR", help=WHERE_HELP)(f)


def analysis_options(formats=None):
    """Level, cluster correction, unpaired handling and (optionally) output format."""
    opts = [
        click.option("--level", default=0.95, show_default=True, type=float, callback=LEVEL,
                     help="Confidence level of every interval, in (0, 1)."),
        click.option("--cluster-correction", type=choice(CLUSTER_CORRECTIONS), default="paper",
                     show_default=True, help="The reference clustered SE shown beside the CR2 headline (which it never changes): "
                          "the paper's (M4)/(M8), or CR1 (Inspect AI, statsmodels)."),
        click.option("--on-unpaired", type=choice(ON_UNPAIRED), default="error", show_default=True,
                     help="Models with different question sets: stop, or compare each pair on the questions both answered."),
    ]
    if formats is not None:
        opts.append(click.option("--format", "fmt", type=click.Choice(list(formats)), default="md",
                                 show_default=True))
    return stack(*opts)


def bayes_options(f):
    return stack(
        click.option("--bayes", "bayes_mode", type=choice(MODES), default="fast", show_default=True,
                     help="Bayesian columns: off; fast (closed forms and exact quadrature; a report computes "
                          "the three-level posterior only where it shows it); full (every posterior); "
                          "mcmc (PyMC NUTS too)."),
        click.option("--rope", type=float, default=0.01, show_default=True,
                     callback=ranged(0, 1, high_open=True),
                     help="Region of practical equivalence for P(tie): |A − B| < rope."),
        click.option("--prior", default="uniform", show_default=True,
                     help="Beta prior of the conjugate model: uniform, jeffreys, or a,b."),
        click.option("--seed", type=int, default=0, show_default=True, callback=SEED,
                     help="Seed of every random draw (≥ 0)."),
        click.option("--draws", type=int, default=1200, show_default=True, callback=COUNT,
                     help="MCMC draws per chain (≥ 1)."),
        click.option("--tune", type=int, default=None, callback=ranged(0, integer=True),
                     help="MCMC tuning steps per chain (≥ 0) [default: half of --draws]."),
        click.option("--chains", type=int, default=2, show_default=True, callback=COUNT,
                     help="MCMC chains (≥ 1)."),
        click.option("--target-accept", type=float, default=None, callback=PROBABILITY,
                     help="NUTS target acceptance rate in (0, 1); raise it (e.g. 0.99) when a fit "
                          "reports divergent transitions [default: 0.8 two-level, 0.95 three-level, "
                          "0.9 paired model]."),
        click.option("--save-posterior", type=click.Path(file_okay=False),
                     help="Write the posteriors to this folder as netCDF (ArviZ InferenceData), "
                          "with index.json mapping files to models."),
    )(f)


def bayes_settings(kw: dict, fmt: str):
    """A BayesSettings from the Bayesian options (popped from ``kw``)."""
    from bayeserr.bayes.settings import BayesSettings
    draws, tune = kw.pop("draws"), kw.pop("tune")
    return BayesSettings(mode=kw.pop("bayes_mode"), rope=kw.pop("rope"), prior=kw.pop("prior"),
                         seed=kw.pop("seed"), mcmc_draws=draws, mcmc_tune=draws // 2 if tune is None else tune,
                         chains=kw.pop("chains"), target_accept=kw.pop("target_accept"),
                         progress=fmt != "json")


def adjust_option(f):
    return click.option("--adjust", type=choice(ADJUSTMENTS), default="romano-wolf", show_default=True,
                        help="Multiple-comparison adjustment over the family of --pairs: Romano–Wolf "
                             "step-down from the joint bootstrap of the pairs, Holm, Benjamini–Hochberg "
                             "or none. Every view (pair table, ranks, groups, figures) uses it.")(f)




def engine_option(f):
    """``--engine memory|stream|dask`` and the dask cluster's options (``docs/guide/scale.md``)."""
    f = click.option("--worker-memory", "worker_memory", default="4GiB", show_default=True,
                     help="--engine dask without --scheduler: the memory limit of each local worker.")(f)
    f = click.option("--workers", "workers", type=int, default=None, callback=ranged(1, integer=True),
                     help="--engine dask without --scheduler: local worker processes "
                          "[default: the cores, at most 4].")(f)
    f = click.option("--scheduler", "scheduler", default=None, metavar="ADDRESS",
                     help="--engine dask: the address of a running dask scheduler (tcp://host:8786); "
                          "without it a local cluster is started and closed.")(f)
    from bayeserr.engines.registry import ENGINE_CHOICES, ENGINES
    return click.option("--engine", type=click.Choice(ENGINE_CHOICES), default="auto", show_default=True,
                        help="auto: memory, unless the input is Parquet too large to read whole comfortably "
                             "(then stream, said in a note). "
                        + " ".join(f"{e.name}: {e.summary}." for e in ENGINES.values())
                        + " See docs/guide/scale.md.")(f)
