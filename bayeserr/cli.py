"""The ``bayeserr`` command line.

Bad input never shows a traceback: an :class:`~bayeserr.errors.InputError`
prints one message to stderr and exits with code 2 (click's own usage errors
use 2 as well).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace

import click

from .errors import InputError

FORMATS = click.Choice(["md", "json"])


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


def load_options(f):
    """Column mapping and model selection, shared by the commands that read a file."""
    opts = [
        click.option("--model-col", help="Column with the model name [default: model]."),
        click.option("--question-col", help="Column with the question id [default: question_id]."),
        click.option("--score-col", help="Column with the score in [0, 1] [default: score]."),
        click.option("--cluster-col", help="Column with the cluster id [default: cluster_id if present]."),
        click.option("--sample-col", help="Column with the sample index [default: sample if present]."),
        click.option("--no-cluster", is_flag=True, help="Ignore the cluster column."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def analysis_options(f):
    opts = [
        click.option("--level", default=0.95, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
                     help="Confidence level of every interval."),
        click.option("--cluster-correction", type=click.Choice(["paper", "cr1"]), default="paper",
                     show_default=True, help="Clustered SE: the paper's (M4) or CR1 (Inspect AI, statsmodels)."),
        click.option("--on-unpaired", type=click.Choice(["error", "drop"]), default="error", show_default=True,
                     help="Models with different question sets: stop, or compare each pair on the questions both answered."),
        click.option("--format", "fmt", type=FORMATS, default="md", show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def bayes_options(f):
    opts = [
        click.option("--bayes", "bayes_mode", type=click.Choice(["off", "fast", "mcmc"]), default="fast",
                     show_default=True, help="Bayesian columns: none, closed-form/exact paths, or PyMC NUTS too."),
        click.option("--rope", type=float, default=0.01, show_default=True,
                     help="Region of practical equivalence for P(tie): |A − B| < rope."),
        click.option("--prior", default="uniform", show_default=True,
                     help="Beta prior of the conjugate model: uniform, jeffreys, or a,b."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random draw."),
        click.option("--draws", type=int, default=1000, show_default=True, help="MCMC draws per chain."),
        click.option("--save-posterior", type=click.Path(file_okay=False),
                     help="Write the posteriors to this folder as netCDF (ArviZ InferenceData)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _bayes_settings(kw, fmt):
    from .bayes import BayesSettings, parse_prior
    draws = kw.pop("draws")
    return BayesSettings(mode=kw.pop("bayes_mode"), rope=kw.pop("rope"), prior=parse_prior(kw.pop("prior")),
                         seed=kw.pop("seed"), mcmc_draws=draws, mcmc_tune=draws,
                         progress=fmt != "json")


def _load(file, models=None, **cols):
    from .data import load
    return load(file, models=models, **cols)


def _col_kwargs(kw):
    keys = ("model_col", "question_col", "score_col", "cluster_col", "sample_col", "no_cluster")
    return {k: kw.pop(k) for k in keys}


@click.group(cls=_Group)
@click.version_option(package_name="bayeserr")
def main():
    """Honest error bars for language-model evals (Miller 2024, exact tests, Bayesian models)."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@load_options
@analysis_options
@click.option("--adjust", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="Multiple-comparison adjustment shown in the pairwise table.")
@bayes_options
@click.option("--prior-sensitivity", is_flag=True,
              help="Also show the Beta posterior interval under the uniform and Jeffreys priors.")
def report(file, fmt, level, cluster_correction, on_unpaired, adjust, prior_sensitivity,
           save_posterior, **kw):
    """Per-model scores, all pairwise comparisons, warnings and row accounting for FILE."""
    bayes = _bayes_settings(kw, fmt)
    ds = _load(file, **_col_kwargs(kw))
    _print_report(ds, fmt, level, cluster_correction, on_unpaired, adjust, bayes,
                  prior_sensitivity, save_posterior)


def _print_report(ds, fmt, level, cluster_correction, on_unpaired, adjust, bayes=None,
                  prior_sensitivity=False, save_posterior=None):
    from .reporting import build_report
    rep = build_report(ds, level=level, cluster_correction=cluster_correction, adjust=adjust,
                       on_unpaired=on_unpaired, bayes=bayes, prior_sensitivity=prior_sensitivity)
    click.echo(rep.to_json() if fmt == "json" else rep.to_markdown())
    if save_posterior:
        from .bayes import save_posteriors
        if not rep.posteriors:
            raise InputError("--save-posterior: there is no posterior to save (--bayes off?).")
        paths = save_posteriors(rep.posteriors, save_posterior, seed=bayes.seed if bayes else 0)
        click.echo(f"wrote {len(paths)} posterior file(s) to {save_posterior}", err=True)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("a")
@click.argument("b")
@load_options
@analysis_options
@bayes_options
def compare(file, a, b, fmt, level, cluster_correction, on_unpaired, save_posterior, **kw):
    """One pair in depth: A − B on the questions of FILE."""
    from . import comparison as cmp
    from .data import rows_of
    from .markdown import render_comparison
    from .reporting import _jsonable
    if a == b:
        raise InputError(f"compare needs two different models (got '{a}' twice).")
    bayes = _bayes_settings(kw, fmt)
    ds = _load(file, models=[a, b], **_col_kwargs(kw))
    c = cmp.compare(ds, a, b, level=level, cluster_correction=cluster_correction,
                    on_unpaired=on_unpaired)
    warnings = cmp.pair_caveats(ds, cmp.Comparisons((c,)))
    post = None
    if bayes.mode != "off":
        from .bayes import pair_posterior
        from .caveats import Caveat
        from bayeserr.models.diagnostics import problems
        post = pair_posterior(ds, c, bayes, level)
        c = replace(c, prob_a_better=post.prob_a_better, prob_tie=post.prob_tie)
        if post.diagnostics:
            warnings += [Caveat("mcmc_diagnostics", None, p) for p in problems(post.diagnostics)]
        if save_posterior:
            from pathlib import Path
            Path(save_posterior).mkdir(parents=True, exist_ok=True)
            post.idata.to_netcdf(str(Path(save_posterior) / "comparison.nc"))
    if fmt == "json":
        out = {"comparison": c.to_dict(), "level": level, "rows": rows_of(ds).to_dict(),
               "posterior": None if post is None else post.to_dict(),
               "warnings": [w.to_dict() for w in warnings]}
        click.echo(json.dumps(_jsonable(out), indent=2))
    else:
        click.echo(render_comparison(c, rows_of(ds), warnings, post))


@main.command()
@click.option("--delta", type=float, help="Difference to detect (e.g. 0.03): prints the questions needed (M9).")
@click.option("--n", "n", type=float, help="Questions available: prints the minimum detectable effect (M10), or the tie zone.")
@click.option("--omega2", type=float, help="ω² = Var(x_A) + Var(x_B) − 2 Cov(x_A, x_B).")
@click.option("--sigma2-a", type=float, default=0.0, show_default=True, help="E[σ²] of A (within-question answer variance).")
@click.option("--sigma2-b", type=float, default=0.0, show_default=True, help="E[σ²] of B.")
@click.option("--k-a", type=float, help="Samples per question for A [default: 1, or the pilot's].")
@click.option("--k-b", type=float, help="Samples per question for B [default: 1, or the pilot's].")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--power", "power_", type=float, default=0.8, show_default=True)
@click.option("--cluster-size", type=float, help="Questions per cluster m (clustered design).")
@click.option("--icc", type=float, help="Intra-cluster correlation ρ_icc (clustered design).")
@click.option("--unpaired", nargs=2, type=float, metavar="P_A P_B",
              help="Independent proportions: questions per model to tell P_A from P_B.")
@click.option("--tie-zone", "tie_p", type=float, metavar="P",
              help="Tie zone at accuracy P: with --n its half-width, with --delta the n that resolves delta.")
@click.option("--pilot", nargs=3, type=str, metavar="FILE A B",
              help="Estimate ω², σ², ρ and ρ_icc from a pilot results file.")
@click.option("--format", "fmt", type=FORMATS, default="md", show_default=True)
def power(delta, n, omega2, sigma2_a, sigma2_b, k_a, k_b, alpha, power_, cluster_size, icc,
          unpaired, tie_p, pilot, fmt):
    """Plan an eval: questions needed (M9), minimum detectable effect (M10), tie zones."""
    from . import planning as pw
    out, text = _plan(pw, delta, n, omega2, sigma2_a, sigma2_b, k_a, k_b, alpha, power_,
                      cluster_size, icc, unpaired, tie_p, pilot)
    if fmt == "json":
        from .reporting import _jsonable
        click.echo(json.dumps(_jsonable(out), indent=2))
    else:
        click.echo(text)


def _need(**kw):
    missing = [k.replace("_", "-") for k, v in kw.items() if v is None]
    if missing:
        raise InputError(f"power: give --{' and --'.join(missing)}.")


def _plan(pw, delta, n, omega2, s2a, s2b, k_a, k_b, alpha, power_, m, icc, unpaired, tie_p, pilot):
    if tie_p is not None:
        level = 1 - alpha
        if n is not None:
            hw = pw.tie_zone(tie_p, n, level)
            return {"tie_zone": hw, "p": tie_p, "n": n, "level": level}, \
                f"Tie zone at accuracy {tie_p:g} with n = {n:g}: ±{100 * hw:.1f} points ({level:.0%})."
        _need(delta=delta)
        need = math.ceil(pw.n_for_tie_zone(delta, tie_p, level))
        return {"n_required": need, "p": tie_p, "delta": delta, "level": level}, \
            f"{need} questions shrink the unpaired tie zone at accuracy {tie_p:g} to {100 * delta:g} points."
    if unpaired:
        need = math.ceil(pw.n_unpaired(*unpaired, alpha=alpha, power=power_))
        return {"n_required": need, "p_a": unpaired[0], "p_b": unpaired[1], "alpha": alpha, "power": power_}, \
            f"{need} questions per model (unpaired, alpha {alpha:g}, power {power_:.0%})."
    extra = {}
    deff = 1.0
    if pilot:
        from .data import load
        file, a, b = pilot
        est = pw.from_pilot(load(file, models=[a, b]), a, b)
        omega2, s2a, s2b = est.omega2, est.sigma2_a, est.sigma2_b
        k_a, k_b = k_a or est.k_a, k_b or est.k_b
        if est.icc is not None:
            m, icc = m or est.cluster_size, icc if icc is not None else est.icc
        extra["pilot"] = est.to_dict()
    _need(omega2=omega2)
    k_a, k_b = k_a or 1.0, k_b or 1.0
    if m is not None and icc is not None:
        deff = pw.design_effect_icc(m, icc)
        extra.update(cluster_size=m, icc=icc, design_effect=deff)
    common = dict(omega2=omega2, sigma2_a=s2a, sigma2_b=s2b, k_a=k_a, k_b=k_b, alpha=alpha, power=power_)
    if delta is not None:
        need = math.ceil(pw.n_required(delta, omega2, s2a, s2b, k_a, k_b, alpha=alpha, power=power_, deff=deff))
        out = {"n_required": need, "delta": delta, **common, **extra}
        text = f"{need} questions to detect a paired difference of {100 * delta:g} points " \
               f"(alpha {alpha:g}, power {power_:.0%}, variance {pw.paired_variance(omega2, s2a, s2b, k_a, k_b):.4f}"
        if deff != 1.0:
            out["clusters_required"] = math.ceil(need / m)
            text += f", design effect {deff:.2f}: {out['clusters_required']} clusters of {m:g}"
        return out, text + ")."
    _need(n=n)
    eff = pw.mde(n, omega2, s2a, s2b, k_a, k_b, alpha=alpha, power=power_, deff=deff)
    return {"mde": eff, "n": n, **common, **extra}, \
        f"Minimum detectable effect with {n:g} questions: {100 * eff:.1f} points (alpha {alpha:g}, power {power_:.0%})."


@main.command()
@click.option("--format", "fmt", type=FORMATS, default="md", show_default=True)
@click.option("--level", default=0.95, show_default=True, type=float)
def demo(fmt, level):
    """Run the report on the bundled example (a fictional internal eval set)."""
    from .examples import example_path
    from .data import load
    ds = load(example_path(), name="bundled example: internal_eval.csv.gz")
    _print_report(ds, fmt, level, "paper", "error", "holm")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
