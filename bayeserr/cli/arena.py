"""``arena``: Bradley–Terry ratings from pairwise votes."""

from __future__ import annotations

import contextlib
import json
import sys

import click

from bayeserr.base.errors import InputError
from bayeserr.cli.app import main
from bayeserr.cli.common import emit, output_format
from bayeserr.cli.options import LEVEL, SEED, nonempty, ranged
from bayeserr.registries.options import BOOTSTRAP_UNITS
from bayeserr.reporting.formats import FORMATS


@main.command()
@click.argument("votes_file", type=click.Path())
@click.option("--model-a-col", default="model_a", show_default=True)
@click.option("--model-b-col", default="model_b", show_default=True)
@click.option("--winner-col", default="winner", show_default=True,
              help="Column with model_a, model_b or tie.")
@click.option("--cluster-col", help="Column to resample whole clusters of (prompt, annotator); every vote "
                                   "needs an id (empty ids are an error naming the rows).")
@click.option("--where", "where_text", multiple=True, metavar="COL=VALUE",
              help="Use only votes with this value (e.g. --where judge_type=crowd, or judge_type=crowd,expert "
                   "for any of them); others count as dropped. Repeat for more columns (all must match) or "
                   "more values of one column (any may match).")
@click.option("--bootstrap", type=int, default=1000, show_default=True, callback=ranged(1, integer=True),
              help="Bootstrap resamples (≥ 1).")
@click.option("--bootstrap-by", type=click.Choice(BOOTSTRAP_UNITS.choices), default="votes", show_default=True,
              help="Resample single votes, or whole clusters of --cluster-col (at least 2); with --judge, votes "
                   "and items both resample comparison items (labelled and unlabelled separately).")
@click.option("--judge-col", help="Column saying who voted (e.g. judge_type): with --human and --judge, the "
                                  "judge's verdicts on every item corrected by the human votes (docs/methods.md "
                                  "§5.5.1).")
@click.option("--human", "human_value", metavar="VALUE", help="Value of --judge-col marking human votes (e.g. crowd).")
@click.option("--judge", "judge_value", metavar="VALUE", help="Value of --judge-col marking the judge (e.g. gpt-4).")
@click.option("--item-col", default="pair_id", show_default=True,
              help="With --judge: the column naming the comparison item (one pair of answers to one prompt) "
                   "that the human votes and the judge's verdict share.")
@click.option("--lam", type=float, help="With --judge: a fixed λ (0: human votes alone, 1: plain PPI); "
                                        "default: power-tuned.")
@click.option("--bayes", "bayes_flag", is_flag=True, help="Also fit the Bayesian Bradley–Terry model (PyMC).")
@click.option("--level", type=float, default=0.95, show_default=True, callback=LEVEL)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(FORMATS.choices), default="md",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), callback=nonempty, help="Write to this file.")
def arena(votes_file, model_a_col, model_b_col, winner_col, cluster_col, where_text, bootstrap, bootstrap_by,
          judge_col, human_value, judge_value, item_col, lam, bayes_flag, level, seed, fmt, output):
    """Bradley–Terry ratings (Elo scale) with bootstrap and rank intervals from pairwise votes.

    With --judge-col, --human and --judge: an LLM judge's verdicts on every comparison
    item corrected by human votes on a random subset of the items (prediction-powered
    Bradley–Terry), beside the human-only and judge-only ratings.

    Warns (in every format) when the votes do not identify what is shown: groups of
    models that never met, a model that won or lost every vote, all votes tied.
    The same votes in any row order give the same output for the same --seed."""
    # size: a click command: one parameter per option
    from bayeserr.analyses import arena as ar
    from bayeserr.base.jsonable import to_jsonable
    from bayeserr.base.output import protect
    from bayeserr.bayes.sampling import sampling_output
    from bayeserr.data.filters import parse_where
    from bayeserr.renderers import arena as pages
    where = {}
    for item in where_text:
        cond = parse_where(item)  # the syntax of report's --where; the arena takes = (any of the values)
        if cond.op != "=":
            raise InputError(f"arena --where takes COL=VALUE or COL=A,B (any of them); {cond.op} is for "
                             f"report and compare (got '{item}').")
        where.setdefault(cond.column, []).extend(cond.values)  # the same column twice: either value
    if bootstrap_by == "cluster" and not cluster_col:
        raise InputError("--bootstrap-by cluster needs the cluster column: add --cluster-col COLUMN "
                         "(for example the prompt or annotator id).")
    judged = any(v is not None for v in (judge_col, human_value, judge_value))
    if judged and None in (judge_col, human_value, judge_value):
        raise InputError("a judge-corrected arena needs all three of --judge-col COLUMN, --human VALUE and "
                         "--judge VALUE (e.g. --judge-col judge_type --human crowd --judge gpt-4).")
    if not judged and lam is not None:
        raise InputError("--lam is for a judge-corrected arena: add --judge-col, --human and --judge.")
    if not judged and bootstrap_by == "items":
        raise InputError("--bootstrap-by items is for a judge-corrected arena (--judge); use votes or cluster.")
    if judged and bayes_flag:
        raise InputError("--bayes is not available with --judge (the correction has no Bayesian fit); drop one.")
    if judged:
        from bayeserr.analyses import arena_judge as aj
        lam = aj.check_lam(lam)  # before the file is read
    fmt = output_format(fmt, output, "ratings.html")
    protect(votes_file)
    if judged:
        items = aj.load_judged(votes_file, judge_col=judge_col, human=human_value, judge=judge_value,
                               item_col=item_col, model_a_col=model_a_col, model_b_col=model_b_col,
                               winner_col=winner_col, cluster_col=cluster_col, where=where)
        # every argument, and λ against these items (convexity), before the progress bar and the
        # bootstrap: a bad value is one error line
        aj.check_judged(items, lam=lam, bootstrap=bootstrap, by=bootstrap_by, level=level, seed=seed)
        with click.progressbar(length=bootstrap, label="bootstrap", file=sys.stderr) as bar:
            res = aj.rate_judged(items, lam=lam, bootstrap=bootstrap, by=bootstrap_by, level=level, seed=seed,
                                 progress=bar.update)
        text = {"md": pages.judge_to_markdown, "latex": pages.judge_to_latex, "html": pages.judge_to_html,
                "json": lambda r: json.dumps(to_jsonable(r.to_dict()), indent=2) + "\n"}[fmt](res)
        emit(text, output)
        return
    votes = ar.load_votes(votes_file, model_a_col=model_a_col, model_b_col=model_b_col,
                          winner_col=winner_col, cluster_col=cluster_col, where=where)
    ar.check_bootstrap(votes, bootstrap_by)  # before the progress bar: a bad choice is one error line
    with click.progressbar(length=bootstrap, label="bootstrap", file=sys.stderr) as bar:
        # only a Bayesian fit samples (sampling_output imports PyMC: 4 s)
        with sampling_output(fmt != "json") if bayes_flag else contextlib.nullcontext():
            ratings = ar.rate(votes, bootstrap=bootstrap, by=bootstrap_by, level=level, seed=seed,
                              progress=bar.update, bayes=bayes_flag,
                              bayes_kwargs={"progressbar": fmt != "json", "seed": seed})
    text = {"md": pages.to_markdown, "latex": pages.to_latex, "html": pages.to_html,
            "json": lambda r: json.dumps(to_jsonable(r.to_dict()), indent=2) + "\n"}[fmt](ratings)
    emit(text, output)
