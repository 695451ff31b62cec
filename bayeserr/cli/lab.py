"""``simulate``: the simulation lab's commands (coverage, error rates, the
few-cluster study, the Bayesian pair model's prior calibration, the ranking,
the release gate's, the confidence sequences' and the judge-scored evals'
studies, the published calibration page)."""

from __future__ import annotations

import sys

import click

from bayeserr.base.errors import InputError
from bayeserr.cli.app import main
from bayeserr.cli.common import emit, floats, ints
from bayeserr.cli.options import LEVEL, PROBABILITY, SEED, ranged
from bayeserr.reporting.formats import LAB_FORMATS


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
        click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def study_options(csv: str):
    """``--seed``, ``--jobs``, ``--format`` and ``--publish`` of a published study whose table
    is ``csv``."""
    def deco(f):
        for o in reversed([
            click.option("--seed", type=int, default=0, show_default=True, callback=SEED),
            click.option("--jobs", type=click.IntRange(1), default=2, show_default=True,
                         help="Worker processes (the numbers do not depend on it)."),
            click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md",
                         show_default=True),
            click.option("--publish", type=click.Path(),
                         help="Write the section into this calibration page (a Markdown file, or a folder's "
                              f"calibration.md), and {csv} beside it."),
        ]):
            f = o(f)
        return f
    return deco


def _designs(n_text, p_text, m_text, icc, k_text, spread, fractional, **extra):
    from bayeserr.lab import simulate as sim
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
    from bayeserr.lab.publish import run_grid
    with click.progressbar(length=len(designs), label="simulating", file=sys.stderr) as bar:
        return run_grid(designs, study, reps, seed, progress=bar.update, **kw)


def _emit(df, fmt, markdown):
    """The results as JSON records, CSV, or the Markdown ``markdown(df)`` makes."""
    if fmt == "json":
        emit(df.to_json(orient="records", indent=2))
    elif fmt == "csv":
        emit(df.to_csv(index=False))
    else:
        emit(markdown(df))


def _pivot(value, key):
    from bayeserr.lab.publish import pivot_markdown
    return lambda df: pivot_markdown(df, value, key)


@main.group()
def simulate():
    """Simulation lab: measured coverage of intervals and error rates of tests."""


@simulate.command("coverage")
@grid_options
@click.option("--level", type=float, default=0.95, show_default=True, callback=LEVEL)
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the coverage figure (svg, png or pdf).")
def simulate_coverage(n_text, p_text, m_text, icc, k_text, spread, fractional, reps, seed, fmt, level, plot):
    """Coverage and mean width of every interval method over a grid (md table: coverage %)."""
    # size: a click command: one parameter per option
    from bayeserr.lab import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional)
    df = _run(designs, sim.coverage, reps, seed, level=level)
    _emit(df, fmt, _pivot("coverage", "method"))
    if plot:
        from bayeserr.lab.publish import coverage_figure
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
    # size: a click command: one parameter per option
    from bayeserr.lab import simulate as sim
    designs = _designs(n_text, p_text, m_text, icc, k_text, spread, fractional,
                       gap=floats(gap_text, "gap"), rho=floats(rho_text, "rho"))
    if plan_power is not None:
        designs = [sim.planned(d, plan_power, alpha) for d in designs if d.gap > 0]
        if not designs:
            raise InputError("--plan needs a positive --gap.")
    df = _run(designs, sim.error_rates, reps, seed, alpha=alpha)
    _emit(df, fmt, _pivot("rate", "test"))


def _fewcluster_options(f):
    from bayeserr.lab.settings import FEWCLUSTER_SETTINGS as S
    opts = [
        click.option("--designs", "designs_text", default="all", show_default=True,
                     help="Cluster structures (comma-separated): equal_2, equal_3, equal_5, equal_10, "
                          "equal_20, equal_50, equal_200, swebench, dominant; or all."),
        click.option("--icc-diff", "icc_diff_text", default=",".join(f"{v:g}" for v in S["icc_diffs"]),
                     show_default=True,
                     help="Cluster effects on the difference: the share of the latent A − B variance "
                          "between clusters (comma-separated, in [0, 1))."),
        click.option("--gap", type=float, default=S["gap"], show_default=True,
                     help="True gap μ_A − μ_B of the coverage and detection runs (the false-positive runs use 0)."),
        click.option("--accuracy", type=float, default=S["accuracy"], show_default=True,
                     help="Accuracy μ_A of model A."),
        click.option("--icc", type=float, default=S["icc"], show_default=True,
                     help="Latent intra-cluster correlation of each model's difficulty (the level)."),
        click.option("--rho", type=float, default=S["rho"], show_default=True,
                     help="Latent correlation of the two models' question difficulties."),
        click.option("--wild-draws", type=click.IntRange(99), default=999, show_default=True,
                     help="Weight vectors of the wild cluster bootstrap (all patterns when fewer)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run_fewclusters(reps, seed, designs_text="all", icc_diff_text="0,0.02,0.05,0.1", gap=0.05,
                     accuracy=0.6, icc=0.2, rho=0.7, wild_draws=999, alpha=0.05):
    from bayeserr.lab import publish
    from bayeserr.lab import simulate as sim
    presets = _presets(designs_text)
    icc_diffs = floats(icc_diff_text, "icc-diff")
    if not 0 < accuracy < 1 or not 0 < accuracy - gap < 1:
        raise InputError(f"--accuracy {accuracy:g} and --gap {gap:g}: both accuracies (μ_A and μ_A − gap) "
                         "must lie strictly between 0 and 1.")
    if not gap > 0:
        raise InputError(f"--gap must be positive (got {gap:g}); the false-positive runs use a gap of 0.")
    if not 0 <= icc < 1 or not -1 < rho < 1:
        raise InputError("--icc must be in [0, 1) and --rho in (−1, 1).")
    try:
        designs = sim.fewcluster_designs(presets, icc_diffs, 0.0, accuracy, icc, rho)
    except ValueError as e:
        raise InputError(f"--icc-diff: {e}") from None
    with click.progressbar(length=2 * len(designs), label="simulating", file=sys.stderr) as bar:
        return publish.run_fewclusters(reps, seed, presets, icc_diffs, gap, accuracy, icc, rho,
                                       alpha=alpha, wild_draws=wild_draws, progress=bar.update)


@simulate.command("fewclusters")
@_fewcluster_options
@click.option("--alpha", type=float, default=0.05, show_default=True, callback=PROBABILITY)
@click.option("--reps", type=click.IntRange(10), default=2000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the false-positive-rate figure (svg, png or pdf).")
def simulate_fewclusters(designs_text, icc_diff_text, gap, accuracy, icc, rho, wild_draws, alpha, reps, seed,
                         fmt, plot):
    """Tests of A − B with few or unequal clusters and cluster effects on the
    difference: false-positive rate, coverage of the true gap and detection
    rate of paired z, M8 z, CR1 t, CR2 t, wild bootstrap, McNemar, the
    report's Bayesian rule (cluster random-effect model) and the old cluster
    bootstrap rule (md: the tables, ± one Monte Carlo SE)."""
    # size: a click command: one parameter per option
    from bayeserr.lab import publish
    df = _run_fewclusters(reps, seed, designs_text, icc_diff_text, gap, accuracy, icc, rho, wild_draws, alpha)
    _emit(df, fmt, lambda d: "\n".join(publish.fewcluster_section(d)[2:]))
    if plot:
        publish.fewcluster_figure(df, plot, alpha)


@simulate.command("pair-prior")
@click.option("--designs", "designs_text", default="all", show_default=True,
              help="Cluster structures (comma-separated): equal_2, equal_3, equal_5, equal_10, "
                   "equal_20, equal_50, equal_200, swebench, dominant; or all.")
@click.option("--delta-range", type=float, default=0.1, show_default=True,
              callback=ranged(0, 1, low_open=True), help="The true Δ is uniform on ±this (in place of the model's flat prior).")
@click.option("--level", type=float, default=0.95, show_default=True, callback=LEVEL)
@click.option("--reps", type=click.IntRange(10), default=4000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the calibration figure (svg, png or pdf).")
def simulate_pair_prior(designs_text, delta_range, level, reps, seed, fmt, plot):
    """The Bayesian pair model (cluster random effect on the difference) on
    data drawn from its own prior: coverage of its credible interval of Δ
    and calibration of P(A > B) (md: the tables)."""
    from bayeserr.lab import publish
    df = _run_pair_prior(reps, seed, designs_text, delta_range, level)
    _emit(df, fmt, lambda d: "\n".join(publish.pair_prior_section(d)[2:]))
    if plot:
        publish.pair_prior_figure(df, plot)


def _presets(designs_text):
    from bayeserr.lab import simulate as sim
    if designs_text.strip().lower() == "all":
        return list(sim.PRESETS)
    presets = [x.strip() for x in designs_text.split(",") if x.strip()]
    unknown = [x for x in presets if x not in sim.PRESETS]
    if unknown:
        raise InputError(f"--designs: unknown design {', '.join(unknown)}; choose from "
                         f"{', '.join(sim.PRESETS)} or all.")
    return presets


def _run_pair_prior(reps, seed, designs_text="all", delta_range=0.1, level=0.95):
    from bayeserr.lab import publish
    presets = _presets(designs_text)
    with click.progressbar(length=len(presets), label="simulating", file=sys.stderr) as bar:
        return publish.run_pair_prior(reps, seed, presets, level, delta_range, progress=bar.update)


@simulate.command("ranking")
@click.option("--models", "models_text", default="10,50", show_default=True, help="Models per leaderboard (comma-separated).")
@click.option("--clusters", "clusters_text", default="swebench,five_unequal,none", show_default=True,
              help="Cluster structures (comma-separated): swebench (SWE-bench Verified's 12 repositories), "
                   "five_unequal, none.")
@click.option("--spread", "spread_text", default="0,1", show_default=True,
              help="Range of the true logits (comma-separated); 0 is the complete null.")
@click.option("--reps", type=click.IntRange(10), default=400, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True)
@click.option("--publish", type=click.Path(file_okay=False),
              help="Write calibration_ranking.csv and the ranking section of calibration.md in this folder.")
def simulate_ranking(models_text, clusters_text, spread_text, reps, seed, fmt, publish):
    """Leaderboards with known truth: family-wise error of Romano–Wolf and
    Holm over all pairs, simultaneous coverage of the rank intervals, the
    tied-with-the-best set, and power (md: the table, ± one Monte Carlo SE)."""
    from bayeserr.lab import ranking as lab
    clusters = [c.strip() for c in clusters_text.split(",") if c.strip()]
    unknown = [c for c in clusters if c not in lab.CLUSTERINGS]
    if unknown:
        raise InputError(f"--clusters: unknown structure {', '.join(unknown)}; choose from "
                         f"{', '.join(lab.CLUSTERINGS)}.")
    models = ints(models_text, "models")
    if any(m < 2 for m in models):
        raise InputError("--models: a leaderboard needs at least 2 models.")
    spreads = floats(spread_text, "spread")
    if any(not s >= 0 for s in spreads):
        raise InputError("--spread: the range of the true logits must be ≥ 0.")
    designs = lab.published_designs(models, clusters, spreads)
    with click.progressbar(length=len(designs) * reps, label="simulating", file=sys.stderr) as bar:
        df = lab.run_ranking(designs, reps, seed, progress=bar.update)
    command = (f"bayeserr simulate ranking --models {models_text} --clusters {clusters_text} "
               f"--spread {spread_text} --reps {reps} --seed {seed}")
    if publish:
        lab.publish_ranking(df, publish, command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(lab.ranking_section(d, command)[2:-1]))


@simulate.command("best-set")
@click.option("--reps", type=click.IntRange(10), default=400, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True)
@click.option("--publish", type=click.Path(),
              help="Write calibration_best_set.csv and the best-set section of this calibration page "
                   "(or of calibration.md in this folder).")
def simulate_best_set(reps, seed, fmt, publish):
    """Which confidence set for the best model holds its guarantee and says
    the most: the report's one-sided set against the alternatives, at
    SWE-bench's spread and twelve repositories, five, forty and no clusters,
    10, 25 and 56 models (md: the table, ± one Monte Carlo SE)."""
    from bayeserr.lab import best as lab
    page = _publish_page(publish, "calibration_best_set.csv")
    designs = lab.published_best_designs()
    with click.progressbar(length=len(designs) * reps, label="simulating", file=sys.stderr) as bar:
        df = lab.run_best(designs, reps, seed, progress=bar.update)
    command = f"bayeserr simulate best-set --reps {reps} --seed {seed}"
    if page is not None:
        lab.publish_best(df, page, command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(lab.best_section(d, command)[2:-1]))


@simulate.command("tasks")
@click.option("--reps", type=click.IntRange(10), default=400, show_default=True,
              help="Data sets per design.")
@study_options("calibration_tasks.csv")
def simulate_tasks(reps, seed, jobs, fmt, publish):
    """Leaderboards over tasks like these (the report's "Over tasks like these"
    section) with known truth: 10, 30 and 60 models × 5–40 tasks × 50 and 500
    questions per task, with task and model × task effects; how often the own
    rank intervals hold the true rank, the true best is in the set tied with it,
    the interval for the mean over tasks covers it, and the rank prediction
    interval holds the rank in a new task (md: the section, ± one Monte Carlo SE)."""
    from bayeserr.lab import tasks as lab
    _run_study("tasks", "calibration_tasks.csv", (lab.published_task_designs(), lab.run_tasks, lab.publish_tasks,
                                                  lab.tasks_section), reps, seed, jobs, fmt, publish)


@simulate.command("reliability")
@click.option("--reps", type=click.IntRange(10), default=1000, show_default=True,
              help="Data sets per design.")
@study_options("calibration_reliability.csv")
def simulate_reliability(reps, seed, jobs, fmt, publish):
    """pass^k over repeated runs (the report's Reliability section) with known
    success rates: 20, 50 and 200 questions × 2, 4 and 16 runs, rates near 1,
    near 0, in the middle or from a mixture the Beta model does not contain,
    with and without clusters; coverage of the section's interval, of the
    report's rule and of the Beta–Binomial posterior, and the paired test's
    error rate and power (md: the section, ± one Monte Carlo SE)."""
    from bayeserr.lab import reliability as lab
    _run_study("reliability", "calibration_reliability.csv", (lab.published_run_designs(), lab.run_reliability,
                                                              lab.publish_reliability, lab.reliability_section),
               reps, seed, jobs, fmt, publish)


def _run_study(name, csv_name, study, reps, seed, jobs, fmt, publish):
    """One study of the lab — ``study``: its designs and its run, publish and section functions —
    run over worker processes with a progress bar, published with ``--publish`` (its CSV and its
    section of the calibration page) and printed."""
    designs, run, publish_study, section = study
    page = _publish_page(publish, csv_name)
    with click.progressbar(length=len(designs) * reps, label="simulating", file=sys.stderr) as bar:
        df = run(designs, reps, seed, jobs=jobs, progress=bar.update)
    command = f"bayeserr simulate {name} --reps {reps} --seed {seed}"
    if page is not None:
        publish_study(df, page, command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(section(d, command)[2:-1]))


def _gate_page(publish):
    """The page ``--publish`` names: a Markdown file, or a folder's calibration.md."""
    from pathlib import Path
    path = Path(publish)
    return path / "calibration.md" if path.is_dir() or path.suffix.lower() != ".md" else path


def _publish_page(publish, csv_name: str):
    """The page ``--publish`` names, with it and its CSV checked writable before the run
    (not after it); None without ``--publish``."""
    if not publish:
        return None
    from bayeserr.base.output import check_writable
    page = check_writable(_gate_page(publish))
    check_writable(page.parent / csv_name)
    return page


def _run_gate(reps, seed, n_text="100,500", clusters_text="none,swebench,suite", tau_text="0,0.05",
              margin_text="0.01,0.02,0.05"):
    from bayeserr.lab import gate as lab
    clusters = [c.strip() for c in clusters_text.split(",") if c.strip()]
    unknown = [c for c in clusters if c not in lab.CLUSTERS]
    if unknown:
        raise InputError(f"--clusters: unknown structure {', '.join(unknown)}; choose from "
                         f"{', '.join(lab.CLUSTERS)}.")
    ns, taus, margins = ints(n_text, "n"), floats(tau_text, "tau"), floats(margin_text, "margin")
    least = {"none": 2, "swebench": len(lab.SWEBENCH_SIZES), "suite": 2 * len(lab.SWEBENCH_SIZES) + 2}
    if any(n < least[c] for n in ns for c in clusters):
        raise InputError(f"--n: at least 2 questions, {len(lab.SWEBENCH_SIZES)} with SWE-bench's clusters and "
                         f"{least['suite']} in a suite.")
    if any(not t >= 0 for t in taus):
        raise InputError("--tau: the sd of the cluster effect must be ≥ 0.")
    if any(not 0 <= m < lab.DISAGREE for m in margins):
        raise InputError(f"--margin: margins must be in [0, {lab.DISAGREE:g}) (the models' disagreement rate).")
    grid = lab.designs(ns, clusters, taus, margins)
    with click.progressbar(length=len(grid) * reps, label="simulating", file=sys.stderr) as bar:
        return lab.run_gate(grid, reps, seed, progress=bar.update)


@simulate.command("gate")
@click.option("--n", "n_text", default="100,500", show_default=True, help="Questions per eval (comma-separated).")
@click.option("--clusters", "clusters_text", default="none,swebench,suite", show_default=True,
              help="Cluster structures (comma-separated): none, swebench (SWE-bench Verified's 12 "
                   "repositories, scaled to n), or suite (two tasks of n/2 questions, SWE-bench's clusters "
                   "in one, gated with --suite macro).")
@click.option("--tau", "tau_text", default="0,0.05", show_default=True,
              help="sd of the cluster effect on A − B, score units (comma-separated; with clusters only).")
@click.option("--margin", "margin_text", default="0.01,0.02,0.05", show_default=True,
              help="Margins of the gate, score units (comma-separated).")
@click.option("--reps", type=click.IntRange(10), default=10_000, show_default=True, help="Data sets per cell.")
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
@click.option("--format", "fmt", type=click.Choice(LAB_FORMATS.choices), default="md", show_default=True)
@click.option("--publish", type=click.Path(),
              help="Write the gate's section into this calibration page (a Markdown file, or a folder's "
                   "calibration.md), and calibration_gate.csv beside it.")
def simulate_gate(n_text, clusters_text, tau_text, margin_text, reps, seed, fmt, publish):
    """The release gate (bayeserr gate) with known truth: its pass rate when the
    true A − B is exactly at −margin (non-inferiority) or +margin (superiority),
    its size, and at 0 (non-inferiority), its power (md: the section, ± one
    Monte Carlo SE)."""
    from bayeserr.lab import gate as lab
    df = _run_gate(reps, seed, n_text, clusters_text, tau_text, margin_text)
    command = (f"bayeserr simulate gate --n {n_text} --clusters {clusters_text} --tau {tau_text} "
               f"--margin {margin_text} --reps {reps} --seed {seed}")
    if (n_text, clusters_text, tau_text, margin_text) == ("100,500", "none,swebench,suite", "0,0.05",
                                                          "0.01,0.02,0.05"):
        command = f"bayeserr simulate gate --reps {reps} --seed {seed}"  # the published grid
    if publish:
        lab.publish_gate(df, _gate_page(publish), command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(lab.gate_section(d, command)[2:-1]))


def _run_sequential(reps, seed, saved_reps, jobs=2):
    from bayeserr.lab import sequential as lab
    grid = lab.cells()
    total = sum(reps if c.study == "error" else saved_reps for c in grid)
    with click.progressbar(length=total, label="simulating", file=sys.stderr) as bar:
        return lab.run_sequential(reps, seed, saved_reps=saved_reps, grid=grid, jobs=jobs, progress=bar.update)


@simulate.command("sequential")
@click.option("--reps", type=click.IntRange(10), default=5000, show_default=True,
              help="Data sets per cell of the error study (true A − B of 0).")
@click.option("--saved-reps", type=click.IntRange(10), default=2000, show_default=True,
              help="Data sets per cell of the questions-saved study (true gaps of 5, 10 and 20 points).")
@study_options("calibration_sequential.csv")
def simulate_sequential(reps, saved_reps, seed, jobs, fmt, publish):
    """Anytime-valid confidence sequences (bayeserr watch) with known truth: how
    often the 95% sequence of A − B, or of one model's mean, ever excludes the
    truth over n = 10…5,000 (betting and asymptotic, without and with
    SWE-bench's clusters), beside naive peeking at the fixed-n test every 10
    questions; and the questions the settle rule needs at true gaps of 5, 10
    and 20 points against the fixed-n design with 80% power (md: the section,
    ± one Monte Carlo SE)."""
    from bayeserr.lab import sequential as lab
    page = _publish_page(publish, "calibration_sequential.csv")
    df = _run_sequential(reps, seed, saved_reps, jobs)
    command = f"bayeserr simulate sequential --reps {reps} --saved-reps {saved_reps} --seed {seed}"
    if page is not None:
        lab.publish_sequential(df, page, command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(lab.sequential_section(d, command)[2:-1]))


def _run_judge(reps, seed, jobs=2):
    from bayeserr.lab import judge as lab
    with click.progressbar(length=len(lab.CLUSTERS) * reps, label="simulating", file=sys.stderr) as bar:
        return lab.run_judge(reps, seed, jobs=jobs, progress=bar.update)


@simulate.command("judge")
@click.option("--reps", type=click.IntRange(10), default=10_000, show_default=True,
              help="Data sets per cluster structure (each gives every label count, quantity and interval).")
@study_options("calibration_judge.csv")
def simulate_judge(reps, seed, jobs, fmt, publish):
    """Judge-scored evals (the report's Judge section) with known truth: how often
    the PPI++, labelled-only, judge-only and Rogan–Gladen intervals cover the
    human-scored mean of a model whose judge is 10 points too generous, of one
    whose judge is unbiased but noisy, and their paired difference, with 50, 100
    and 300 human labels of 1,000 questions, without clusters, with 40 unequal
    clusters and with SWE-bench's 12; mean widths and the labels the judge was
    worth (md: the section, ± one Monte Carlo SE)."""
    from bayeserr.lab import judge as lab
    page = _publish_page(publish, "calibration_judge.csv")
    df = _run_judge(reps, seed, jobs)
    command = f"bayeserr simulate judge --reps {reps} --seed {seed}"
    if page is not None:
        lab.publish_judge(df, page, command + f" --publish {publish}")
    _emit(df, fmt, lambda d: "\n".join(lab.judge_section(d, command)[2:-1]))


@simulate.command("calibration-docs")
@click.option("--output", type=click.Path(file_okay=False), default="docs", show_default=True)
@click.option("--reps", type=click.IntRange(10), default=2000, show_default=True)
@click.option("--fewcluster-reps", type=click.IntRange(10), default=None,
              help="Replicates per cell of the few-cluster study (default: --reps).")
@click.option("--prior-reps", type=click.IntRange(10), default=4000, show_default=True,
              help="Data sets per design of the Bayesian pair model's prior calibration.")
@click.option("--gate-reps", type=click.IntRange(10), default=10_000, show_default=True,
              help="Data sets per cell of the release gate's study.")
@click.option("--sequential-reps", type=click.IntRange(10), default=5000, show_default=True,
              help="Data sets per cell of the confidence sequences' error study.")
@click.option("--sequential-saved-reps", type=click.IntRange(10), default=2000, show_default=True,
              help="Data sets per cell of the confidence sequences' questions-saved study.")
@click.option("--judge-reps", type=click.IntRange(10), default=10_000, show_default=True,
              help="Data sets per cluster structure of the judge-scored evals' study.")
@click.option("--seed", type=int, default=0, show_default=True, callback=SEED)
def calibration_docs(output, reps, fewcluster_reps, prior_reps, gate_reps, sequential_reps, sequential_saved_reps,
                     judge_reps, seed):
    """Regenerate docs/calibration.md, its figures and CSVs (the published
    coverage study, tests of A − B, the few-cluster study, the Bayesian
    pair model's calibration with the truth from its prior, the release
    gate's size, the confidence sequences' error and questions saved, and
    the judge-scored evals' coverage of the human-scored mean);
    the sections of the ranking, best-set, tasks and reliability studies (their own
    commands' --publish) are kept as they are."""
    from pathlib import Path

    from bayeserr.base.output import write_atomic
    from bayeserr.lab import publish
    from bayeserr.lab import simulate as sim
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    # clusters of 10 from n = 20: the simulations refuse fewer than two clusters
    cov_designs = (_designs("10,20,50,100,300,1000", "0.05,0.5,0.8,0.95", "1", 0.3, "1", 1.0, False)
                   + _designs("20,50,100,300,1000", "0.05,0.5,0.8,0.95", "10", 0.3, "1", 1.0, False))
    cov = _run(sorted(cov_designs, key=lambda d: (d.n, d.accuracy, d.cluster_size)), sim.coverage, reps, seed)
    rate_designs = _designs("100,300,1000", "0.75", "1", 0.0, "1", 1.0, False, gap=[0.0, 0.03], rho=[0.0, 0.8])
    rate_designs += [sim.planned(sim.Design(accuracy=0.75, gap=0.03, rho=0.8), 0.8, 0.05)]
    rates = _run(rate_designs, sim.error_rates, reps, seed)
    few = _run_fewclusters(fewcluster_reps or reps, seed)
    prior = _run_pair_prior(prior_reps, seed)
    gate_df = _run_gate(gate_reps, seed)
    seq_df = _run_sequential(sequential_reps, seed, sequential_saved_reps)
    judge_df = _run_judge(judge_reps, seed)
    publish.coverage_figure(cov, out / "calibration_coverage.svg")
    publish.fewcluster_figure(few, out / "calibration_fewclusters.svg")
    publish.pair_prior_figure(prior, out / "calibration_pair_prior.svg")
    write_atomic(out / "calibration_coverage.csv", cov.to_csv(index=False))
    write_atomic(out / "calibration_rates.csv", rates.to_csv(index=False))
    write_atomic(out / "calibration_fewclusters.csv", few.to_csv(index=False))
    write_atomic(out / "calibration_pair_prior.csv", prior.to_csv(index=False))
    command = (f"bayeserr simulate calibration-docs --reps {reps}"
               + (f" --fewcluster-reps {fewcluster_reps}" if fewcluster_reps else "")
               + (f" --prior-reps {prior_reps}" if prior_reps != 4000 else "") + f" --seed {seed}")
    from bayeserr.lab import gate as gate_lab
    from bayeserr.lab import ranking as ranking_lab
    page_path = out / "calibration.md"
    page = publish.calibration_page(cov, rates, "calibration_coverage.svg", reps, seed, few,
                                    "calibration_fewclusters.svg", prior, "calibration_pair_prior.svg",
                                    command=command)
    # the ranking, best-set and tasks studies are published by their own commands: their sections stay
    from bayeserr.lab import best as best_lab
    from bayeserr.lab import reliability as reliability_lab
    from bayeserr.lab import tasks as tasks_lab
    old = page_path.read_text() if page_path.is_file() else ""
    for start, end in ((ranking_lab.SECTION_START, ranking_lab.SECTION_END),
                       (best_lab.SECTION_START, best_lab.SECTION_END),
                       (tasks_lab.SECTION_START, tasks_lab.SECTION_END),
                       (reliability_lab.SECTION_START, reliability_lab.SECTION_END)):
        kept = publish.kept_section(old, start, end)
        if kept:
            page = publish.splice_section(page, kept, start, end)
    write_atomic(out / "calibration_gate.csv", gate_df.to_csv(index=False))
    gate_command = f"bayeserr simulate gate --reps {gate_reps} --seed {seed} --publish {page_path}"
    page = publish.splice_section(page, "\n".join(gate_lab.gate_section(gate_df, gate_command)),
                                  gate_lab.SECTION_START, gate_lab.SECTION_END)
    from bayeserr.lab import sequential as seq_lab
    write_atomic(out / "calibration_sequential.csv", seq_df.to_csv(index=False))
    seq_command = (f"bayeserr simulate sequential --reps {sequential_reps} --saved-reps {sequential_saved_reps} "
                   f"--seed {seed} --publish {page_path}")
    page = publish.splice_section(page, "\n".join(seq_lab.sequential_section(seq_df, seq_command)),
                                  seq_lab.SECTION_START, seq_lab.SECTION_END)
    from bayeserr.lab import judge as judge_lab
    write_atomic(out / "calibration_judge.csv", judge_df.to_csv(index=False))
    judge_command = f"bayeserr simulate judge --reps {judge_reps} --seed {seed} --publish {page_path}"
    page = publish.splice_section(page, "\n".join(judge_lab.judge_section(judge_df, judge_command)),
                                  judge_lab.SECTION_START, judge_lab.SECTION_END)
    write_atomic(page_path, page)
    click.echo(f"wrote {out / 'calibration.md'}")
