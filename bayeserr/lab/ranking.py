"""The ranking lab (``docs/methods.md`` §8, "The ranking study"): leaderboards
with known truth, to measure what §3.9–§3.10 promise.

Each replicate draws M models on the same n questions: 0/1 answers with
``P(correct) = logistic(θ_m + a_i + u_mc)``, a question difficulty ``a_i``
shared by every model (so pairs are correlated, as on real leaderboards) and
a model-by-cluster effect ``u_mc ~ N(0, τ²)`` (so each pair's differences
carry a cluster effect, as in SWE-bench's repositories).  The true score of
model m is the mean over the population of questions and clusters, which
orders as θ_m: under the **complete null** every θ is equal and every rank
is 1; under a **spread** the θ are evenly spaced.

Measured, with their Monte Carlo standard errors:

* family-wise error of each adjustment over all pairs (the share of
  replicates with any pair declared different in the wrong direction, or at
  all under the complete null);
* simultaneous coverage of the rank intervals (every model's true rank inside
  its interval at once), and how often every truly best model's simultaneous
  interval reaches rank 1 (the set tied with the best has its own study:
  :mod:`bayeserr.lab.best`);
* power: pairs correctly declared different, Romano–Wolf against Holm.

The replicates run through the library's own code (``compare_view`` and
``rank_view`` on a :class:`~bayeserr.stats.view.DataView`), not a copy of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError

#: clusters of the lab's designs: SWE-bench Verified's repositories, five
#: unequal clusters, none (500 questions each)
CLUSTERINGS = {
    "swebench": (231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1),
    "five_unequal": (250, 120, 70, 40, 20),
    "forty": (13,) * 20 + (12,) * 20,
    "none": None,
}

#: true accuracies of the leaderboard-sized designs: the spread of SWE-bench Verified's bash-only
#: leaderboard (25 models, its published per-model scores)
SWEBENCH_SPREAD = (0.744, 0.742, 0.706, 0.676, 0.66, 0.66, 0.65, 0.648, 0.61, 0.6, 0.598, 0.584, 0.564,
                   0.554, 0.554, 0.542, 0.538, 0.536, 0.45, 0.438, 0.348, 0.26, 0.21, 0.102, 0.09)


@dataclass(frozen=True)
class RankDesign:
    """One leaderboard design."""

    models: int = 10
    clusters: str = "swebench"  #: a key of :data:`CLUSTERINGS`
    n: int = 500  #: questions (with clusters: the sum of the sizes)
    spread: float = 0.0  #: range of θ on the logit scale (0: the complete null)
    centre: float = 0.3  #: mean θ (logit): about 55% correct
    question_sd: float = 1.5  #: sd of the shared question difficulty (logit)
    cluster_sd: float = 0.3  #: τ, sd of the model-by-cluster effect (logit)
    accuracies: tuple | None = None  #: true accuracies (replace ``models``, ``spread`` and ``centre``)

    def __post_init__(self):
        if self.accuracies is not None:
            object.__setattr__(self, "models", len(self.accuracies))
        if self.clusters not in CLUSTERINGS:
            raise InputError(f"clusters must be one of {', '.join(CLUSTERINGS)} (got {self.clusters!r}).")
        if int(self.models) < 2:
            raise InputError(f"a leaderboard needs at least 2 models (got {self.models}).")

    @property
    def sizes(self):
        return CLUSTERINGS[self.clusters]

    @property
    def theta(self) -> np.ndarray:
        if self.accuracies is not None:
            sd = math.hypot(self.question_sd, self.cluster_sd if self.sizes is not None else 0.0)
            return np.array([logit_for_accuracy(a, sd) for a in self.accuracies])
        return self.centre + self.spread * (np.linspace(0.5, -0.5, self.models) if self.models > 1 else 0)

    @property
    def truth(self) -> str:
        if self.accuracies is not None:
            return f"accuracies {100 * min(self.accuracies):.0f}–{100 * max(self.accuracies):.0f}%"
        return "complete null" if self.spread == 0 else f"spread {self.spread:g} logit"

    def label(self) -> str:
        what = self.truth
        return f"{self.models} models, {self.clusters.replace('_', ' ')} clusters, {what}"


def _view(design: RankDesign, rng):
    from bayeserr.stats.view import DataView
    sizes = design.sizes
    n = design.n if sizes is None else int(sum(sizes))
    codes = None if sizes is None else np.repeat(np.arange(len(sizes)), sizes)
    a = rng.normal(0.0, design.question_sd, n)
    eta = design.theta[:, None] + a[None, :]
    if codes is not None:
        eta = eta + rng.normal(0.0, design.cluster_sd, (design.models, len(sizes)))[:, codes]
    answers = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(float)[:, :, None]
    questions = np.array([f"q{i:04d}" for i in range(n)], dtype=object)
    clusters = None if codes is None else np.array([f"c{c:02d}" for c in range(len(sizes))], dtype=object)
    return DataView(models=tuple(f"m{j:03d}" for j in range(design.models)), answers=answers, codes=codes,
                    questions=questions, clusters=clusters, source="lab")


def logit_for_accuracy(accuracy: float, sd: float) -> float:
    """The θ with ``E[logistic(θ + e)] = accuracy`` for ``e ~ N(0, sd²)`` (the
    population accuracy of a model of the lab; Gauss–Hermite, bisection)."""
    x, w = np.polynomial.hermite_e.hermegauss(61)
    w = w / w.sum()
    lo, hi = -30.0, 30.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if float(np.sum(w / (1 + np.exp(-(mid + sd * x))))) < accuracy:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _true_ranks(theta: np.ndarray) -> np.ndarray:
    """Mogstad et al.'s rank: 1 + the number of models strictly better."""
    return 1 + (theta[None, :] > theta[:, None]).sum(axis=1)


@dataclass(frozen=True)
class RankCell:
    """One design × adjustment of the ranking lab."""

    design: str
    adjust: str
    reps: int
    fwer: float  #: share of replicates with a false claim (any claim under the complete null)
    fwer_se: float
    coverage: float  #: every true rank inside its simultaneous interval
    coverage_se: float
    best_coverage: float  #: every true best (all of them under the null): simultaneous interval reaches 1
    power: float  #: share of truly different pairs declared different, in the right direction
    mean_width: float  #: mean width of the simultaneous rank intervals (ranks)

    def to_dict(self) -> dict:
        return dict(vars(self))


def _se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / reps)


def rank_calibration(design: RankDesign, reps: int, seed: int = 0, adjusts=("romano-wolf", "holm"),
                     level: float = 0.95, progress=None) -> list[RankCell]:
    """Seeded replicates of ``design``; one cell per adjustment (the
    replicates are shared, so the adjustments are compared on the same data)."""
    from dataclasses import replace

    from bayeserr.analyses.comparison import Comparisons, compare_view
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.registries.options import Options
    if int(reps) < 1:
        raise InputError(f"reps must be at least 1 (got {reps}).")
    theta = design.theta
    truth = _true_ranks(theta)
    true_sign = np.sign(theta[:, None] - theta[None, :])
    tally = {a: {"false": 0, "cover": 0, "best": 0, "hits": 0, "width": 0.0} for a in adjusts}
    n_true = int((true_sign != 0).sum() // 2)
    best = set(np.flatnonzero(theta == theta.max()))
    rng = np.random.default_rng(seed)
    for r in range(int(reps)):
        view = _view(design, rng)
        pos = {m: j for j, m in enumerate(view.models)}
        opts = Options(level=level, adjust=adjusts[0], bayes="off", seed=seed + r)
        comps = compare_view(view, opts, ranking=True, second_opinion=False)
        for adjust in adjusts:  # one joint pass gives every adjustment's p-values
            fam = replace(comps.family, adjust=adjust)
            ranked = Comparisons(list(comps), comps.skipped, fam,
                                 [replace(d, adjust=adjust) for d in comps.rank_decisions])
            ranking = rank_view(view, ranked, replace(opts, adjust=adjust))
            t = tally[adjust]
            claimed = np.sign([c.diff for c in comps]) * fam.different
            truth_sign = np.array([true_sign[pos[c.a], pos[c.b]] for c in comps])
            t["false"] += bool(np.any((claimed != 0) & (claimed != truth_sign)))
            t["hits"] += int(np.sum((claimed != 0) & (claimed == truth_sign)))
            lo = np.array([ranking[m].rank_simultaneous[0] for m in view.models])
            hi = np.array([ranking[m].rank_simultaneous[1] for m in view.models])
            t["cover"] += bool(np.all((lo <= truth) & (truth <= hi)))
            t["best"] += best <= {j for j in range(len(lo)) if lo[j] == 1}
            t["width"] += float(np.mean(hi - lo + 1))
        if progress is not None:
            progress(1)
    out = []
    for adjust in adjusts:
        t = tally[adjust]
        fwer, cover = t["false"] / reps, t["cover"] / reps
        out.append(RankCell(design.label(), adjust, int(reps), fwer, _se(fwer, reps), cover, _se(cover, reps),
                            t["best"] / reps, t["hits"] / (reps * n_true) if n_true else float("nan"),
                            t["width"] / reps))
    return out


def published_designs(models=(10, 50), clusterings=("swebench", "five_unequal", "none"),
                      spreads=(0.0, 1.0)) -> list:
    """The grid published in ``docs/calibration.md``."""
    return [RankDesign(models=m, clusters=c, spread=s) for m in models for c in clusterings for s in spreads]


# --------------------------------------------------------------------------- #
# running and publishing
# --------------------------------------------------------------------------- #
#: markers around the ranking section of docs/calibration.md
SECTION_START, SECTION_END = "<!-- ranking-lab:start -->", "<!-- ranking-lab:end -->"
#: the promises checked in the published table, with this many Monte Carlo SEs of slack
SLACK_SE = 2.0


def run_ranking(designs, reps: int, seed: int = 0, progress=None):
    """Every design's cells as one DataFrame (one row per design × adjustment)."""
    import pandas as pd
    rows = []
    for i, design in enumerate(designs):
        for cell in rank_calibration(design, reps, seed + 1000 * i, progress=progress):
            rows.append({"models": design.models, "clusters": design.clusters, "spread": design.spread,
                         **cell.to_dict()})
    return pd.DataFrame(rows)


def holds(row, level: float = 0.95) -> bool:
    """The promise of a published cell, within Monte Carlo error: family-wise
    error ≤ 1 − level and simultaneous rank coverage ≥ level (FWER-holding
    adjustments)."""
    fwer_ok = row["fwer"] <= (1 - level) + SLACK_SE * math.sqrt(level * (1 - level) / row["reps"])
    cover_ok = row["coverage"] >= level - SLACK_SE * math.sqrt(level * (1 - level) / row["reps"])
    return bool(fwer_ok and cover_ok)


def ranking_section(df, command: str) -> list[str]:
    """The ranking study as Markdown lines, between :data:`SECTION_START` and
    :data:`SECTION_END`."""
    names = {"romano-wolf": "Romano–Wolf", "holm": "Holm"}
    lines = [SECTION_START, "## Rank intervals and the family-wise error of the adjustments", "",
             "Leaderboards with known truth (`bayeserr.lab.ranking`; `docs/methods.md` §3.9–3.10): M models "
             "answer 500 questions with a shared question difficulty and a model-by-cluster effect "
             "(τ = 0.3 on the logit scale); under the *complete null* every model is equally good, under "
             "a *spread* the true logits are evenly spaced over 1. Per design and adjustment: the "
             "family-wise error over all pairs (the share of data sets with any wrong claim \"A > B\"), the "
             "simultaneous coverage of the rank intervals (every true rank inside its interval at once), "
             "how often every truly best model's simultaneous interval reaches rank 1 (the set tied with the best "
             "has its own study below), the power (share of truly "
             "different pairs declared, in the right direction) and the mean width of the rank intervals. "
             f"± one Monte Carlo SE. \"holds\": error ≤ 5% and coverage ≥ 95% within {SLACK_SE:g} SEs.",
             "", f"Reproduce: `{command}`", "",
             "| models | clusters | truth | adjustment | reps | family-wise error | rank coverage | "
             "best reaches rank 1 | power | mean width | holds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in df.iterrows():
        truth = "complete null" if r["spread"] == 0 else f"spread {r['spread']:g}"
        power = "–" if r["power"] != r["power"] else f"{100 * r['power']:.1f}%"
        lines.append(f"| {r['models']} | {r['clusters'].replace('_', ' ')} | {truth} | "
                     f"{names.get(r['adjust'], r['adjust'])} | {r['reps']} | "
                     f"{100 * r['fwer']:.1f}% ± {100 * r['fwer_se']:.1f} | "
                     f"{100 * r['coverage']:.1f}% ± {100 * r['coverage_se']:.1f} | "
                     f"{100 * r['best_coverage']:.1f}% | {power} | {r['mean_width']:.1f} | "
                     f"{'yes' if holds(r) else 'no'} |")
    null = df[(df.spread == 0) & (df.adjust == "romano-wolf")]
    if len(null):
        z = (null.fwer - 0.05) / (0.05 * 0.95 / null.reps) ** 0.5  # SE at the nominal 5%
        lines += ["", f"Romano–Wolf's family-wise error under the complete null: {100 * null.fwer.min():.1f}%–"
                  f"{100 * null.fwer.max():.1f}% over {len(null)} designs (mean {100 * null.fwer.mean():.1f}%), "
                  f"each within {z.abs().max():.1f} Monte Carlo SEs of 5%; Holm's stays far below 5% with "
                  "clusters, where it cannot use the pairs' dependence."]
    spread = df[df.spread > 0]
    if len(spread):
        gain = []
        for (m, c), g in spread.groupby(["models", "clusters"], sort=False):
            by = dict(zip(g.adjust, g.power))
            if "romano-wolf" in by and "holm" in by:
                gain.append(f"{m} models, {c.replace('_', ' ')} clusters: {100 * by['romano-wolf']:.1f}% "
                            f"against {100 * by['holm']:.1f}%")
        lines += ["", "Power of Romano–Wolf against Holm on the same data sets (spread designs): "
                  + "; ".join(gain) + "."]
    lines.append(SECTION_END)
    return lines


def publish_ranking(df, folder, command: str) -> None:
    """Write ``calibration_ranking.csv`` and the ranking section of
    ``calibration.md`` in ``folder`` (the section is replaced, or appended)."""
    from pathlib import Path

    from bayeserr.base.output import write_atomic
    folder = Path(folder)
    write_atomic(folder / "calibration_ranking.csv", df.to_csv(index=False))
    page = folder / "calibration.md"
    text = page.read_text() if page.exists() else "# Calibration\n"
    section = "\n".join(ranking_section(df, command))
    if SECTION_START in text and SECTION_END in text:
        head, rest = text.split(SECTION_START, 1)
        text = head + section + rest.split(SECTION_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    write_atomic(page, text)
