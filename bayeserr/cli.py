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
REPORT_FORMATS = click.Choice(["md", "json", "latex", "html"])


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
        click.option("--input-format", type=click.Choice(["auto", "table", "inspect", "lm-eval"]),
                     default="auto", show_default=True,
                     help="Results table, Inspect AI logs (.eval/.json) or lm-eval samples; auto picks from the path."),
        click.option("--scorer", help="Inspect: the scorer whose score is used [default: the first]."),
        click.option("--cluster-field", help="Inspect: sample metadata field used as cluster (dotted path)."),
        click.option("--metric", help="lm-eval: the metric used as score [default: acc]."),
        click.option("--filter", "filt", help="lm-eval: the filter whose rows are used."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def analysis_options(formats=FORMATS):
    """Level, cluster correction, unpaired handling and output format."""
    def deco(f):
        return _analysis_options(f, formats)
    return deco


def _analysis_options(f, formats):
    opts = [
        click.option("--level", default=0.95, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
                     help="Confidence level of every interval."),
        click.option("--cluster-correction", type=click.Choice(["paper", "cr1"]), default="paper",
                     show_default=True, help="Clustered SE: the paper's (M4) or CR1 (Inspect AI, statsmodels)."),
        click.option("--on-unpaired", type=click.Choice(["error", "drop"]), default="error", show_default=True,
                     help="Models with different question sets: stop, or compare each pair on the questions both answered."),
    ]
    if formats is not None:
        opts.append(click.option("--format", "fmt", type=formats, default="md", show_default=True))
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
    keys = ("model_col", "question_col", "score_col", "cluster_col", "sample_col", "no_cluster",
            "input_format", "scorer", "cluster_field", "metric", "filt")
    return {k: kw.pop(k) for k in keys}


@click.group(cls=_Group)
@click.version_option(package_name="bayeserr")
def main():
    """Honest error bars for language-model evals (Miller 2024, exact tests, Bayesian models)."""


@main.command()
@click.argument("file", type=click.Path())
@load_options
@analysis_options(REPORT_FORMATS)
@click.option("--adjust", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="Multiple-comparison adjustment shown in the pairwise table.")
@bayes_options
@click.option("--prior-sensitivity", is_flag=True,
              help="Also show the Beta posterior interval under the uniform and Jeffreys priors.")
@click.option("--models", "models_text", help="Only these models (comma-separated); other rows count as dropped.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the report to this file instead of the terminal (e.g. report.html).")
@click.option("--pass-k", "pass_k_text", multiple=True,
              help="Add pass@k tables for these k (--pass-k 1 10, or 1,10); needs n_samples/n_correct "
                   "columns or 0/1 answers per sample.")
def report(file, fmt, level, cluster_correction, on_unpaired, adjust, prior_sensitivity,
           save_posterior, models_text, output, pass_k_text, **kw):
    """Per-model scores, all pairwise comparisons, warnings and row accounting for FILE.

    FILE is a results table (CSV, TSV, JSONL, Parquet, optionally .gz), an
    Inspect AI log or folder of logs, or lm-evaluation-harness samples.
    """
    bayes = _bayes_settings(kw, fmt)
    models = [m.strip() for m in models_text.split(",")] if models_text else None
    if fmt == "html" and not output:
        raise InputError("--format html writes a page: give it a file with --output report.html.")
    ds = _load(file, models=models, **_col_kwargs(kw))
    pass_k = [k for text in pass_k_text for k in _ints(text, "pass-k")]
    _print_report(ds, fmt, level, cluster_correction, on_unpaired, adjust, bayes,
                  prior_sensitivity, save_posterior, output, pass_k)


def _print_report(ds, fmt, level, cluster_correction, on_unpaired, adjust, bayes=None,
                  prior_sensitivity=False, save_posterior=None, output=None, pass_k=()):
    from .reporting import build_report
    rep = build_report(ds, level=level, cluster_correction=cluster_correction, adjust=adjust,
                       on_unpaired=on_unpaired, bayes=bayes, prior_sensitivity=prior_sensitivity,
                       pass_k=pass_k)
    text = rep.render(fmt)
    if output:
        from pathlib import Path
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    if save_posterior:
        from .bayes import save_posteriors
        if not rep.posteriors:
            raise InputError("--save-posterior: there is no posterior to save (--bayes off?).")
        paths = save_posteriors(rep.posteriors, save_posterior, seed=bayes.seed if bayes else 0)
        click.echo(f"wrote {len(paths)} posterior file(s) to {save_posterior}", err=True)


@main.command()
@click.argument("file", type=click.Path())
@click.argument("a")
@click.argument("b")
@load_options
@analysis_options()
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
@click.option("--format", "fmt", type=REPORT_FORMATS, default="md", show_default=True)
@click.option("--level", default=0.95, show_default=True, type=float)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to this file.")
def demo(fmt, level, output):
    """Run the report on the bundled example (a fictional internal eval set)."""
    from .examples import example_path
    from .data import load
    if fmt == "html" and not output:
        raise InputError("--format html writes a page: give it a file with --output report.html.")
    ds = load(example_path(), name="bundled example: internal_eval.csv.gz")
    _print_report(ds, fmt, level, "paper", "error", "holm", output=output)


@main.command()
@click.argument("file", type=click.Path())
@load_options
@analysis_options(formats=None)
@bayes_options
@click.option("--kind", type=click.Choice(["forest", "pairs", "heatmap", "posterior"]), default="forest",
              show_default=True, help="Per-model intervals, pairwise differences, P(A > B) heatmap, posteriors.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="Figure file: .svg, .png or .pdf.")
def plot(file, kind, output, level, cluster_correction, on_unpaired, save_posterior, **kw):
    """Draw one figure of the report for FILE."""
    from . import plots
    from .reporting import build_report
    bayes = _bayes_settings(kw, "json")
    ds = _load(file, **_col_kwargs(kw))
    rep = build_report(ds, level=level, cluster_correction=cluster_correction, on_unpaired=on_unpaired,
                       bayes=bayes)
    plots.save(plots.figure(rep, kind), output)
    click.echo(f"wrote {output}", err=True)





# ------------------------------------------------------------------ arena
@main.command()
@click.argument("votes_file", type=click.Path())
@click.option("--model-a-col", default="model_a", show_default=True)
@click.option("--model-b-col", default="model_b", show_default=True)
@click.option("--winner-col", default="winner", show_default=True,
              help="Column with model_a, model_b or tie.")
@click.option("--cluster-col", help="Column to resample whole clusters of (prompt, annotator).")
@click.option("--where", "where_text", multiple=True, metavar="COL=VALUE",
              help="Use only votes with this value (e.g. --where judge_type=crowd); others count as dropped.")
@click.option("--bootstrap", type=click.IntRange(0), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--bootstrap-by", type=click.Choice(["votes", "cluster"]), default="votes", show_default=True)
@click.option("--bayes", "bayes_flag", is_flag=True, help="Also fit the Bayesian Bradley–Terry model (PyMC).")
@click.option("--level", type=float, default=0.95, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--format", "fmt", type=REPORT_FORMATS, default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write to this file.")
def arena(votes_file, model_a_col, model_b_col, winner_col, cluster_col, where_text, bootstrap, bootstrap_by,
          bayes_flag, level, seed, fmt, output):
    """Bradley–Terry ratings (Elo scale) with bootstrap and rank intervals from pairwise votes."""
    from . import arena as ar
    where = {}
    for item in where_text:
        if "=" not in item:
            raise InputError(f"--where takes COL=VALUE (got '{item}').")
        col, value = item.split("=", 1)
        where[col] = value
    votes = ar.load_votes(votes_file, model_a_col=model_a_col, model_b_col=model_b_col,
                          winner_col=winner_col, cluster_col=cluster_col, where=where)
    if fmt == "html" and not output:
        raise InputError("--format html writes a page: give it a file with --output ratings.html.")
    with click.progressbar(length=bootstrap, label="bootstrap", file=sys.stderr) as bar:
        bayes_kw = {"progressbar": fmt != "json", "seed": seed}
        from .bayes import sampling_output, BayesSettings
        with sampling_output(BayesSettings(progress=fmt != "json")):
            ratings = ar.rate(votes, bootstrap=bootstrap, by=bootstrap_by, level=level, seed=seed,
                              progress=bar.update, bayes=bayes_flag, bayes_kwargs=bayes_kw)
    text = {"md": ar.to_markdown, "latex": ar.to_latex, "html": ar.to_html,
            "json": lambda r: json.dumps(_jsonable(r.to_dict()), indent=2) + "\n"}[fmt](ratings)
    if output:
        from pathlib import Path
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


def _jsonable(obj):
    from .reporting import _jsonable as j
    return j(obj)


# ------------------------------------------------------------------ simulation lab
def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} takes comma-separated numbers (got '{text}').") from None


def _ints(text: str, name: str) -> list[int]:
    values = _floats(text, name)
    if any(v != int(v) or v < 1 for v in values):
        raise InputError(f"--{name} takes positive whole numbers (got '{text}').")
    return [int(v) for v in values]


def grid_options(f):
    opts = [
        click.option("--n", "n_text", default="10,20,50,100,300,1000", show_default=True,
                     help="Questions per eval (comma-separated)."),
        click.option("--p", "p_text", default="0.05,0.5,0.8,0.95", show_default=True,
                     help="True accuracies (comma-separated)."),
        click.option("--cluster-size", "m_text", default="1,10", show_default=True,
                     help="Questions per cluster; 1 = independent questions (comma-separated)."),
        click.option("--icc", type=float, default=0.3, show_default=True,
                     help="Latent intra-cluster correlation of clustered cells."),
        click.option("--k", "k_text", default="1", show_default=True, help="Answers per question (comma-separated)."),
        click.option("--spread", type=float, default=1.0, show_default=True,
                     help="τ: spread of question difficulty on the probit scale."),
        click.option("--fractional", is_flag=True, help="Scores are probabilities, not 0/1 answers."),
        click.option("--reps", type=click.IntRange(10), default=2000, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--format", "fmt", type=click.Choice(["md", "json", "csv"]), default="md", show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _designs(n_text, p_text, m_text, icc, k_text, spread, fractional, **extra):
    from . import simulate as sim
    ps = _floats(p_text, "p")
    if any(not 0 < p < 1 for p in ps):
        raise InputError("--p: accuracies must lie strictly between 0 and 1.")
    if not 0 <= icc < 1:
        raise InputError(f"--icc must be in [0, 1) (got {icc}).")
    axes = dict(n=_ints(n_text, "n"), accuracy=ps, cluster_size=_ints(m_text, "cluster-size"),
                k=_ints(k_text, "k"), **extra)
    return [d if d.cluster_size > 1 else sim.replace(d, icc=0.0)
            for d in sim.grid(**axes, icc=[icc], spread=[spread], fractional=[fractional])]


def _run(designs, study, reps, seed, **kw):
    from .lab import run_grid
    with click.progressbar(length=len(designs), label="simulating", file=sys.stderr) as bar:
        return run_grid(designs, study, reps, seed, progress=bar.update, **kw)


def _emit(df, fmt, value, key):
    from .lab import pivot_markdown
    if fmt == "json":
        click.echo(df.to_json(orient="records", indent=2))
    elif fmt == "csv":
        click.echo(df.to_csv(index=False), nl=False)
    else:
        click.echo(pivot_markdown(df, value, key))


@main.group()
def simulate():
    """Simulation lab: measured coverage of intervals and error rates of tests."""


@simulate.command("coverage")
@grid_options
@click.option("--level", type=float, default=0.95, show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the coverage figure (svg, png or pdf).")
def simulate_coverage(n_text, p_text, m_text, icc, k_text, spread, fractional, reps, seed, fmt, level, plot):
    """Coverage and mean width of every interval method over a grid (md table: coverage %)."""
    from . import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional)
    df = _run(designs, sim.coverage, reps, seed, level=level)
    _emit(df, fmt, "coverage", "method")
    if plot:
        from .lab import coverage_figure
        coverage_figure(df, plot, level)


@simulate.command("power")
@grid_options
@click.option("--gap", "gap_text", default="0,0.03", show_default=True, help="True gaps μ_A − μ_B (comma-separated).")
@click.option("--rho", "rho_text", default="0,0.5", show_default=True,
              help="Latent correlation of the models' question difficulties (comma-separated).")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--plan", "plan_power", type=float,
              help="Validate (M9): for each cell with a gap, simulate at the n that (M9) plans for this power.")
def simulate_power(n_text, p_text, m_text, icc, k_text, spread, fractional, reps, seed, fmt, gap_text,
                   rho_text, alpha, plan_power):
    """False-positive rate (gap 0) and detection rate (gap > 0) of every test (md table: rate %)."""
    from . import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional,
                       gap=_floats(gap_text, "gap"), rho=_floats(rho_text, "rho"))
    if plan_power is not None:
        designs = [sim.planned(d, plan_power, alpha) for d in designs if d.gap > 0]
        if not designs:
            raise InputError("--plan needs a positive --gap.")
    df = _run(designs, sim.error_rates, reps, seed, alpha=alpha)
    _emit(df, fmt, "rate", "test")


@simulate.command("calibration-docs")
@click.option("--output", type=click.Path(file_okay=False), default="docs", show_default=True)
@click.option("--reps", type=click.IntRange(10), default=2000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def calibration_docs(output, reps, seed):
    """Regenerate docs/calibration.md and its figure (the published coverage study)."""
    from pathlib import Path
    from . import lab, simulate as sim
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    cov = _run(_designs("10,20,50,100,300,1000", "0.05,0.5,0.8,0.95", "1,10", 0.3, "1", 1.0, False),
               sim.coverage, reps, seed)
    rate_designs = _designs("100,300,1000", "0.75", "1", 0.0, "1", 1.0, False, gap=[0.0, 0.03], rho=[0.0, 0.8])
    rate_designs += [sim.planned(sim.Design(accuracy=0.75, gap=0.03, rho=0.8), 0.8, 0.05)]
    rates = _run(rate_designs, sim.error_rates, reps, seed)
    lab.coverage_figure(cov, out / "calibration_coverage.svg")
    cov.to_csv(out / "calibration_coverage.csv", index=False)
    rates.to_csv(out / "calibration_rates.csv", index=False)
    (out / "calibration.md").write_text(lab.calibration_page(cov, rates, "calibration_coverage.svg", reps, seed))
    click.echo(f"wrote {out / 'calibration.md'}")


def join_multi_values(argv: list[str], options=("--pass-k",)) -> list[str]:
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


def run():
    """Console entry point: ``main`` with multi-value options joined."""
    return main(args=join_multi_values(sys.argv[1:]), prog_name="bayeserr")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
