"""``simulate``: the simulation lab's commands (coverage, error rates, the
published calibration page)."""

from __future__ import annotations

import sys

import click

from ..errors import InputError
from . import main
from .common import floats, ints
from .options import LEVEL, PROBABILITY, SEED


def grid_options(f):
    opts = [
        click.option("--n", "n_text", default="10,20,50,100,300,1000", show_default=True,
                     help="Questions per eval (comma-separated)."),
        click.option("--p", "p_text", default="0.05,0.5,0.8,0.95", show_default=True,
                     help="True accuracies (comma-separated)."),
        click.option("--cluster-size", "m_text", default="1,10", show_default=True,
                     help="Questions per cluster; 1 = independent questions (comma-separated)."),
        click.option("--icc", type=float, default=0.3, show_default=True,
                     help="Latent intra-cluster correlation of clustered cells, in [0, 1)."),
        click.option("--k", "k_text", default="1", show_default=True, help="Answers per question (comma-separated)."),
        click.option("--spread", type=float, default=1.0, show_default=True,
                     help="τ: spread of question difficulty on the probit scale."),
        click.option("--fractional", is_flag=True, help="Scores are probabilities, not 0/1 answers."),
        click.option("--reps", type=click.IntRange(10), default=2000, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True, callback=SEED),
        click.option("--format", "fmt", type=click.Choice(["md", "json", "csv"]), default="md", show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _designs(n_text, p_text, m_text, icc, k_text, spread, fractional, **extra):
    from ..lab import simulate as sim
    ps = floats(p_text, "p")
    if any(not 0 < p < 1 for p in ps):
        raise InputError("--p: accuracies must lie strictly between 0 and 1.")
    if not 0 <= icc < 1:
        raise InputError(f"--icc must be in [0, 1) (got {icc}).")
    if not spread >= 0:
        raise InputError(f"--spread must be ≥ 0 (got {spread}).")
    for gap in extra.get("gap", ()):
        if any(not 0 < p - gap < 1 for p in ps):
            raise InputError(f"--gap {gap:g} with --p {p_text}: the second model's accuracy "
                             "p − gap must lie strictly between 0 and 1.")
    for rho in extra.get("rho", ()):
        if not -1 < rho < 1:
            raise InputError(f"--rho must be in (−1, 1) (got {rho}).")
    axes = dict(n=ints(n_text, "n"), accuracy=ps, cluster_size=ints(m_text, "cluster-size"),
                k=ints(k_text, "k"), **extra)
    return [d if d.cluster_size > 1 else sim.replace(d, icc=0.0)
            for d in sim.grid(**axes, icc=[icc], spread=[spread], fractional=[fractional])]


def _run(designs, study, reps, seed, **kw):
    from ..lab.publish import run_grid
    with click.progressbar(length=len(designs), label="simulating", file=sys.stderr) as bar:
        return run_grid(designs, study, reps, seed, progress=bar.update, **kw)


def _emit(df, fmt, value, key):
    from ..lab.publish import pivot_markdown
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
@click.option("--level", type=float, default=0.95, show_default=True, callback=LEVEL)
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the coverage figure (svg, png or pdf).")
def simulate_coverage(n_text, p_text, m_text, icc, k_text, spread, fractional, reps, seed, fmt, level, plot):
    """Coverage and mean width of every interval method over a grid (md table: coverage %)."""
    from ..lab import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional)
    df = _run(designs, sim.coverage, reps, seed, level=level)
    _emit(df, fmt, "coverage", "method")
    if plot:
        from ..lab.publish import coverage_figure
        coverage_figure(df, plot, level)


@simulate.command("power")
@grid_options
@click.option("--gap", "gap_text", default="0,0.03", show_default=True, help="True gaps μ_A − μ_B (comma-separated).")
@click.option("--rho", "rho_text", default="0,0.5", show_default=True,
              help="Latent correlation of the models' question difficulties (comma-separated).")
@click.option("--alpha", type=float, default=0.05, show_default=True, callback=PROBABILITY)
@click.option("--plan", "plan_power", type=float, callback=PROBABILITY,
              help="Validate (M9): for each cell with a gap, simulate at the n that (M9) plans for this power.")
def simulate_power(n_text, p_text, m_text, icc, k_text, spread, fractional, reps, seed, fmt, gap_text,
                   rho_text, alpha, plan_power):
    """False-positive rate (gap 0) and detection rate (gap > 0) of every test (md table: rate %)."""
    from ..lab import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional,
                       gap=floats(gap_text, "gap"), rho=floats(rho_text, "rho"))
    if plan_power is not None:
        designs = [sim.planned(d, plan_power, alpha) for d in designs if d.gap > 0]
        if not designs:
            raise InputError("--plan needs a positive --gap.")
    df = _run(designs, sim.error_rates, reps, seed, alpha=alpha)
    _emit(df, fmt, "rate", "test")


@simulate.command("calibration-docs")
@click.option("--output", type=click.Path(file_okay=False), default="docs", show_default=True)
@click.option("--reps", type=click.IntRange(10), default=2000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
def calibration_docs(output, reps, seed):
    """Regenerate docs/calibration.md and its figure (the published coverage study)."""
    from pathlib import Path
    from ..lab import publish, simulate as sim
    from ..output import write_atomic
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    cov = _run(_designs("10,20,50,100,300,1000", "0.05,0.5,0.8,0.95", "1,10", 0.3, "1", 1.0, False),
               sim.coverage, reps, seed)
    rate_designs = _designs("100,300,1000", "0.75", "1", 0.0, "1", 1.0, False, gap=[0.0, 0.03], rho=[0.0, 0.8])
    rate_designs += [sim.planned(sim.Design(accuracy=0.75, gap=0.03, rho=0.8), 0.8, 0.05)]
    rates = _run(rate_designs, sim.error_rates, reps, seed)
    publish.coverage_figure(cov, out / "calibration_coverage.svg")
    write_atomic(out / "calibration_coverage.csv", cov.to_csv(index=False))
    write_atomic(out / "calibration_rates.csv", rates.to_csv(index=False))
    write_atomic(out / "calibration.md", publish.calibration_page(cov, rates, "calibration_coverage.svg", reps, seed))
    click.echo(f"wrote {out / 'calibration.md'}")
