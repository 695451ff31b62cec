"""The leaderboards-over-tasks lab (``docs/methods.md`` §3.15, §8): multi-task leaderboards
with known truth, to measure what the report's "Over tasks like these" section promises.

Each replicate draws M models on T + 1 tasks of n questions each: 0/1 answers with
``P(correct) = logistic(μ_j + a_t + u_jt + b_q)`` — a task difficulty ``a_t ~ N(0, 0.7²)``
shared by the models, a model × task interaction ``u_jt ~ N(0, τ²)`` (what makes the ranking
change from task to task), and a question difficulty ``b_q ~ N(0, 1)`` shared by the models
(so pairs are correlated within a task).  The μ are evenly spaced over ``spread`` (logit), or
equal under the complete null.  A model's true score over tasks like these is its mean over
the population of tasks and questions, which orders as μ_j, so its true rank is its rank in μ.

The first T tasks go through the library's own code
(:func:`bayeserr.analyses.tasks.tasks_from_values`); the last is the *new task*.  Measured,
with Monte Carlo SEs: how often each model's own rank interval holds its true rank, how
often the true best is in the set tied with the best (under the complete null: the share of
models kept), the set's mean size (its power), the coverage of each model's interval for its
mean over tasks, and how often the rank prediction interval holds the model's rank in the
new task, beside the level (T5) guarantees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.lab.blocks import publisher
from bayeserr.lab.formats import findings_head, nominal, pm

TASK_SD, QUESTION_SD = 0.7, 1.0
SECTION_START, SECTION_END = "<!-- bayeserr:tasks -->", "<!-- /bayeserr:tasks -->"


@dataclass(frozen=True)
class TaskDesign:
    """One leaderboard design: M models × T tasks × n questions per task."""

    models: int = 10
    tasks: int = 10
    n: int = 100
    spread: float = 1.0     #: range of μ on the logit scale (0: the complete null)
    interaction: float = 0.3  #: τ, sd of the model × task effect (logit)
    centre: float = 0.3

    @property
    def mu(self) -> np.ndarray:
        return self.centre + self.spread * np.linspace(0.5, -0.5, self.models)

    def label(self) -> str:
        truth = "complete null" if self.spread == 0 else f"spread {self.spread:g}"
        return f"{self.models} models × {self.tasks} tasks × {self.n} questions, τ {self.interaction:g}, {truth}"


def true_means(design: TaskDesign) -> np.ndarray:
    """Each model's mean over the population of tasks and questions (Gauss–Hermite)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    sd = math.sqrt(TASK_SD ** 2 + design.interaction ** 2 + QUESTION_SD ** 2)
    return (w[None, :] / w.sum() / (1 + np.exp(-(design.mu[:, None] + sd * x[None, :])))).sum(axis=1)


def task_means(design: TaskDesign, rng) -> np.ndarray:
    """(M, T + 1) task means of one replicate (the last task is the new one)."""
    M, T, n = design.models, design.tasks + 1, design.n
    a = rng.normal(0.0, TASK_SD, T)
    u = rng.normal(0.0, design.interaction, (M, T))
    b = rng.normal(0.0, QUESTION_SD, (T, n))
    eta = design.mu[:, None, None] + a[None, :, None] + u[:, :, None] + b[None, :, :]
    return (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).mean(axis=2)


@dataclass(frozen=True)
class TaskCell:
    """One design of the lab, with its rates (each ± one Monte Carlo SE)."""

    design: str
    models: int
    tasks: int
    n: int
    spread: float
    interaction: float
    reps: int
    rank_coverage: float       #: own rank intervals holding the true rank (mean over models)
    rank_coverage_worst: float  #: the model whose interval holds its rank least often
    rank_coverage_se: float    #: MC SE of the worst model's rate
    best_in_set: float         #: the true best in the set (complete null: share of models kept)
    best_in_set_se: float
    set_size: float            #: mean size of the set tied with the best
    mean_coverage: float       #: intervals for the mean over tasks holding it (mean over models)
    mean_coverage_se: float
    new_task: float            #: rank prediction intervals holding the new task's rank
    new_task_se: float
    new_task_guarantee: float  #: (T5)'s level at T tasks
    level: float

    def to_dict(self) -> dict:
        return dict(vars(self))


def _se(p: float, n: float) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def task_calibration(design: TaskDesign, reps: int, seed: int = 0, level: float = 0.95,
                     progress=None) -> TaskCell:
    """Seeded replicates of ``design`` through the report's own leaderboard over tasks."""
    from bayeserr.analyses.tasks import tasks_from_values
    from bayeserr.stats.tasks import competition_ranks
    rng = np.random.default_rng(seed)
    M, T = design.models, design.tasks
    names = [f"m{j:03d}" for j in range(M)]
    position = {m: j for j, m in enumerate(names)}
    true_rank = 1 + (design.mu[None, :] > design.mu[:, None] + 1e-12).sum(axis=1)
    truth = true_means(design)
    held = np.zeros(M)
    covered = np.zeros(M)
    best, size, new = [], [], []
    for _ in range(reps):
        y = task_means(design, rng)
        var = y[:, :T] * (1 - y[:, :T]) / (design.n - 1)
        res = tasks_from_values(names, tuple(range(T)), y[:, :T], var, level)
        new_rank = competition_ranks(y)[:, T]
        in_set = np.zeros(M, dtype=bool)
        for m in res.models:
            j = position[m.model]
            held[j] += m.rank_own[0] <= true_rank[j] <= m.rank_own[1]
            covered[j] += m.ci[0] <= truth[j] <= m.ci[1]
            in_set[j] = m.tied_with_best
            new.append(m.rank_new[0] <= new_rank[j] <= m.rank_new[1])
        best.append(in_set.mean() if design.spread == 0 else in_set[0])
        size.append(in_set.sum())
        if progress is not None:
            progress(1)
    rate = held / reps
    worst = int(np.argmin(rate))
    best_rate, new_rate = float(np.mean(best)), float(np.mean(new))
    from bayeserr.stats.tasks import conformal_k
    return TaskCell(design.label(), M, T, design.n, design.spread, design.interaction, reps, float(rate.mean()), float(rate[worst]),
                    _se(float(rate[worst]), reps), best_rate, _se(best_rate, reps), float(np.mean(size)),
                    float((covered / reps).mean()), _se(float((covered / reps).mean()), reps),  # models of a replicate move together
                    new_rate, _se(new_rate, reps), conformal_k(T, level)[1], level)


def published_task_designs() -> list[TaskDesign]:
    """The grid on the calibration page: 10, 30 and 60 models; 5, 10, 20 and 40 tasks; 50 and
    500 questions per task; a spread of 1 logit (plus a twice larger interaction and the complete
    null at 10 models)."""
    out = [TaskDesign(models=m, tasks=t, n=n) for m in (10, 30, 60) for t in (5, 10, 20, 40) for n in (50, 500)]
    out += [TaskDesign(models=10, tasks=t, n=100, interaction=0.6) for t in (5, 10)]  # the order moves more
    return out + [TaskDesign(models=10, tasks=t, n=100, spread=0.0) for t in (5, 20)]


def _block(task) -> dict:
    design, reps, seed, _ = task
    return task_calibration(design, reps, seed).to_dict()


def run_tasks(designs, reps: int, seed: int = 0, jobs: int = 1, progress=None):
    """One row per design (each its own seed, ``seed + 1000 × index``, so the numbers do not
    depend on ``jobs``), the largest designs first over ``jobs`` worker processes."""
    import pandas as pd

    from bayeserr.lab.blocks import run_blocks
    tasks = [(i, (d, reps, seed + 1000 * i, 0)) for i, d in enumerate(designs)]
    tasks.sort(key=lambda kt: -kt[1][0].models * kt[1][0].tasks)
    out = run_blocks(_block, tasks, jobs=jobs, progress=progress)
    return pd.DataFrame([out[(i, 0)] for i in range(len(designs))])


def holds(row, slack_se: float = 2.0) -> bool:
    """The worst model's own rank interval within ``slack_se`` MC SEs of the level."""
    return row["rank_coverage_worst"] >= row["level"] - slack_se * row["rank_coverage_se"]


def tasks_table(df) -> list[str]:
    lines = ["| design | own rank interval: mean (worst model) | true best in the set | set size | "
             "mean over tasks covered | new-task rank (guarantee) |", "|---|---|---|---|---|---|"]
    for _, r in df.iterrows():
        worst = pm(r["rank_coverage_worst"], r["rank_coverage_se"])
        worst = worst if holds(r) else f"**{worst}**"
        lines.append(f"| {r['design']} | {100 * r['rank_coverage']:.1f} ({worst}) | "
                     f"{pm(r['best_in_set'], r['best_in_set_se'])} | {r['set_size']:.1f} | "
                     f"{pm(r['mean_coverage'], r['mean_coverage_se'])} | "
                     f"{pm(r['new_task'], r['new_task_se'])} ({100 * r['new_task_guarantee']:.1f}) |")
    return lines


def tasks_findings(df) -> list[str]:
    """What the numbers say, computed from them."""
    ok = df.apply(holds, axis=1)
    spread = df[df.spread > 0]
    low = df.loc[df.mean_coverage.idxmin()]
    out = [f"The own rank intervals over tasks like these hold their {nominal(df.level.iloc[0])} level for every "
           f"model in {int(ok.sum())} of {len(df)} designs (worst model within 2 MC SEs)"
           + ("." if ok.all() else f"; not in: {', '.join(df.loc[~ok, 'design'])}.")]
    out.append(f"The intervals for the mean over tasks cover it {100 * df.mean_coverage.min():.1f}%–"
               f"{100 * df.mean_coverage.max():.1f}% of the time (lowest: {low['design']}).")
    below = df[df.new_task < df.new_task_guarantee - 2 * df.new_task_se]
    out.append(f"The rank prediction interval for a new task holds its rank {100 * df.new_task.min():.1f}%–"
               f"{100 * df.new_task.max():.1f}% of the time, "
               + ("never more than 2 MC SEs below its guarantee." if below.empty else
                  f"more than 2 MC SEs below its guarantee in: {', '.join(below.design)}."))
    base = spread[(spread.n == spread.n.min()) & (spread.interaction == spread.interaction.min())]
    sizes = []
    for m, g in base.groupby("models"):
        few, many = g.loc[g.tasks.idxmin()], g.loc[g.tasks.idxmax()]
        sizes.append(f"{few.set_size:.1f} of {m} models with {few.tasks} tasks and {many.set_size:.1f} with {many.tasks}")
    out.append(f"Power: with the true means spread over 1 logit and {base.n.min()} questions per task, the set tied "
               f"with the best holds {'; '.join(sizes)}; more questions per task move it a little, more tasks a lot.")
    return out


def tasks_section(df, command: str) -> list[str]:
    reps = int(df.reps.iloc[0])
    return [SECTION_START, "## Leaderboards over tasks like these", "",
            "Simulated multi-task leaderboards with known truth (`bayeserr.lab.tasks`): 0/1 answers with a task "
            "difficulty (sd 0.7 logit), a model × task interaction (sd 0.3) and a question difficulty (sd 1) "
            "shared by the models; the true means evenly spaced over 1 logit, or equal (the complete null). The "
            "report's own leaderboard over tasks (§3.15) reads T tasks; a new task is drawn beside them. "
            f"{reps:,} data sets per design; rates ± one Monte Carlo SE; a worst-model rate in **bold** is more "
            "than 2 SEs below the level.",
            *findings_head(command, tasks_findings(df)), "", "### Rates (%)", "", *tasks_table(df), SECTION_END]


publish_tasks = publisher("calibration_tasks.csv", tasks_section, SECTION_START, SECTION_END)
