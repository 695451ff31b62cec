"""``tasks``: a leaderboard over tasks like these from a task × model summary table."""

from __future__ import annotations

import click

from bayeserr.cli.app import main
from bayeserr.cli.common import emit, output_format
from bayeserr.cli.options import LEVEL, SEED, nonempty
from bayeserr.reporting.formats import TASKS_FORMATS


@main.command()
@click.argument("summary_file", type=click.Path())
@click.option("--model-col", default="model", show_default=True)
@click.option("--task-col", default="task", show_default=True)
@click.option("--score-col", default="score", show_default=True, help="Each task's score, a share in [0, 1].")
@click.option("--se-col", default="se", show_default=True, help="Its standard error.")
@click.option("--n-col", default="n", show_default=True,
              help="Its number of questions, for rows without a standard error (Bernoulli SE).")
@click.option("--bayes", "bayes_flag", is_flag=True,
              help="Also the models × tasks posterior: P(best) and rank credible intervals (a sampler, seconds).")
@click.option("--level", type=float, default=0.95, show_default=True, callback=LEVEL)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(TASKS_FORMATS.choices), default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), callback=nonempty, help="Write to this file.")
def tasks(summary_file, model_col, task_col, score_col, se_col, n_col, bayes_flag, level, seed, fmt, output):
    """A leaderboard over tasks like these from SUMMARY_FILE, a table of one row per
    model and task with its score and standard error (or number of questions), as
    HELM- or MTEB-style leaderboards publish them.

    Each model's mean over tasks with a t interval on T − 1 df, rank intervals, the
    models tied with the best, each model's rank prediction interval for a new task,
    and the readings beside it (docs/methods.md §3.15).  For per-question results use
    `bayeserr report FILE --task-col TASK`, which adds the readings over questions."""
    # size: a click command: one parameter per option
    from bayeserr.analyses.tasks import over_tasks_summary
    from bayeserr.base.jsonable import dumps
    from bayeserr.data.summaries import load_task_summary
    from bayeserr.reporting.task_summary import summary_blocks, summary_json
    fmt = output_format(fmt, output)
    summary = load_task_summary(summary_file, model_col=model_col, task_col=task_col, score_col=score_col,
                                se_col=se_col, n_col=n_col)
    res = over_tasks_summary(summary, level=level, seed=seed, bayes=bayes_flag)
    if fmt == "json":
        from bayeserr.base.version import __version__
        provenance = {"version": __version__, "command": "bayeserr tasks", "input": summary.source, "seed": seed}
        emit(dumps(summary_json(summary, res, provenance)) + "\n", output)
        return
    blocks = summary_blocks(summary, res)
    if fmt == "html":
        from bayeserr.renderers.html import render_blocks
        emit(render_blocks(blocks, title="bayeserr tasks", source=summary.source), output)
    else:
        from bayeserr.renderers.markdown import render_blocks
        emit(render_blocks(blocks), output)
