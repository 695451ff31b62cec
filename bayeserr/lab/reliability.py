"""The reliability lab (``docs/methods.md`` §6.2, §8): agents run T questions r times each with
known per-question success rates, to measure what the report's pass^k numbers promise.

Each replicate draws question success rates θ_i (i = 1…T) from a law — a Beta law centred in the
middle, near 1 or near 0, or a *mixture* the Beta model does not contain (30% of questions always
solved, 10% never, 60% Beta(2, 2)) — optionally shifted by a cluster effect ``u_c ~ N(0, 0.5²)``
on the logit scale over 8 unequal clusters (one holds half the questions), and r runs per question
``c_i ~ Binomial(r, θ_i)``.  The truth is ``E[θ^k]`` over the law (closed form for Beta laws and
the mixture; Monte Carlo with 4 million draws with clusters).

Measured for each k (1 and r), with Monte Carlo SEs:

* coverage and mean width of the report's interval for pass^k — the per-question values
  ``C(c, k)/C(r, k)`` scored by the report's own code (:func:`bayeserr.analyses.scoring.score_view`
  and the recommended-interval rule), the replicates as the models of one view;
* coverage and width of the Beta–Binomial posterior of ``E[θ^k]``
  (:func:`bayeserr.models.hierarchical.rate_moment_intervals`; not with clusters);
* the error rate of the report's paired pass^k test (z on the paired SE, or CR2 with
  Bell–McCaffrey t with clusters; §3) when a second agent has the same rates (null), and its power
  when the second agent's rates are lower by 0.8 on the logit scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.lab.blocks import publisher
from bayeserr.lab.formats import findings_head, nominal, pm

SECTION_START, SECTION_END = "<!-- bayeserr:reliability -->", "<!-- /bayeserr:reliability -->"
#: the laws of the questions' success rates: Beta (mean, concentration) or the mixture
LAWS = {"middle": (0.5, 2.0), "near 1": (0.9, 4.0), "near 0": (0.15, 4.0), "mixture": None}
MIX = (0.3, 0.1, 0.6)  #: always solved, never solved, Beta(2, 2)
CLUSTER_SD, CLUSTERS, SHIFT = 0.5, 8, 0.8


@dataclass(frozen=True)
class RunDesign:
    """T questions run r times, rates from ``law``, with or without clusters."""

    questions: int = 50
    runs: int = 4
    law: str = "near 1"
    clustered: bool = False

    def label(self) -> str:
        return f"{self.questions} questions × {self.runs} runs, {self.law}" + (", 8 clusters" if self.clustered else "")

    @property
    def codes(self) -> np.ndarray | None:
        if not self.clustered:
            return None
        half = self.questions // 2  # one cluster holds half the questions, the rest share the other half
        rest = np.arange(self.questions - half) % (CLUSTERS - 1) + 1
        return np.sort(np.concatenate([np.zeros(half, np.int64), rest]))


def _base_rates(law: str, shape, rng) -> np.ndarray:
    if LAWS[law] is None:
        kind = rng.choice(3, size=shape, p=MIX)
        return np.where(kind == 0, 1.0, np.where(kind == 1, 0.0, rng.beta(2.0, 2.0, shape)))
    mean, kappa = LAWS[law]
    return rng.beta(mean * kappa, (1 - mean) * kappa, shape)


def _shifted(theta: np.ndarray, shift) -> np.ndarray:
    """``expit(logit θ + shift)``, keeping θ = 0 and θ = 1 where they are."""
    with np.errstate(divide="ignore"):
        logit = np.log(theta) - np.log1p(-theta)
    return 1.0 / (1.0 + np.exp(-(logit + shift)))


def rates(design: RunDesign, reps: int, rng) -> np.ndarray:
    """(reps, T) success rates of one replicate set."""
    theta = _base_rates(design.law, (reps, design.questions), rng)
    if design.clustered:
        u = rng.normal(0.0, CLUSTER_SD, (reps, CLUSTERS))
        theta = _shifted(theta, u[:, design.codes])
    return theta


def truth(design: RunDesign, k: int, shift: float = 0.0) -> float:
    """``E[θ^k]`` over the design's law, its rates moved by ``shift`` on the logit scale (Monte
    Carlo with 4 million draws with clusters or a shift)."""
    from scipy import special
    if shift:
        rng = np.random.default_rng(12345)
        theta = _base_rates(design.law, 4_000_000, rng)
        cluster = rng.normal(0.0, CLUSTER_SD, 4_000_000) if design.clustered else 0.0
        return float(np.mean(_shifted(theta, cluster + shift) ** k))
    if design.clustered:
        rng = np.random.default_rng(12345)
        theta = _shifted(_base_rates(design.law, 4_000_000, rng), rng.normal(0.0, CLUSTER_SD, 4_000_000))
        return float(np.mean(theta ** k))
    if LAWS[design.law] is None:
        return MIX[0] + MIX[2] * float(np.exp(special.betaln(2 + k, 2) - special.betaln(2, 2)))
    mean, kappa = LAWS[design.law]
    a, b = mean * kappa, (1 - mean) * kappa
    return float(np.exp(special.betaln(a + k, b) - special.betaln(a, b)))


@dataclass(frozen=True)
class RunCell:
    """One (design, k) of the lab: coverage and width of each interval, error rate and power."""

    design: str
    questions: int
    runs: int
    law: str
    clustered: bool
    k: int
    reps: int
    truth: float
    headline: float  #: coverage of the section's headline, Wilson on n*
    headline_se: float
    headline_width: float
    report: float  #: coverage of the report's rule for fractional scores
    report_se: float
    report_width: float
    report_methods: str  #: the methods the report's rule picked, with their shares
    bayes: float | None  #: coverage of the Beta–Binomial posterior
    bayes_se: float | None
    bayes_width: float | None
    type_one: float  #: paired test rejections under the null (same rates)
    type_one_se: float
    power: float  #: paired test rejections with the second agent 0.8 logit worse
    gap: float  #: the true pass^k gap to that agent
    level: float

    def to_dict(self) -> dict:
        return dict(vars(self))


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def _values(c: np.ndarray, runs: int, k: int) -> np.ndarray:
    from bayeserr.stats.passk import pass_hat_k
    return pass_hat_k(np.full(c.shape, runs), c, k)


def _report_intervals(values: np.ndarray, codes, level: float, seed: int):
    """The report's recommended interval of each replicate (a replicate = a model of one view)."""
    from bayeserr.analyses.scoring import score_view
    from bayeserr.bayes.settings import BayesSettings
    from bayeserr.registries.options import Options
    from bayeserr.stats.view import DataView
    reps, T = values.shape
    clusters = None if codes is None else np.array([f"c{c}" for c in range(int(codes.max()) + 1)], dtype=object)
    view = DataView(tuple(f"r{r:05d}" for r in range(reps)), values[..., None], codes,
                    np.array([f"q{i:04d}" for i in range(T)], dtype=object), clusters)
    scores, _ = score_view(view, Options(level=level, bayes=BayesSettings(draws=1000, seed=seed)))
    recs = [s.recommended for s in scores]
    return np.array([r.interval for r in recs]), [r.key for r in recs]


def _paired_rejections(da: np.ndarray, codes, level: float) -> np.ndarray:
    """The report's pair test on per-question differences (reps × T): z on the paired SE (M7),
    or CR2 with Bell–McCaffrey t with clusters (§3)."""
    from bayeserr.stats.estimators import se_clt
    from bayeserr.stats.fewclusters import cr2_mean, t_test
    if codes is None:
        est, se, df = da.mean(axis=1), se_clt(da), np.inf
    else:
        cr = cr2_mean(da, codes)
        est, se, df = cr.mean, cr.se, cr.df
    p = t_test(est, se, df, level).p_value
    return np.nan_to_num(p, nan=1.0) < 1 - level


def run_calibration(design: RunDesign, reps: int, seed: int = 0, level: float = 0.95) -> list[RunCell]:
    """Seeded replicates of ``design``: one cell per k in (1, r)."""
    from collections import Counter
    rng = np.random.default_rng(seed)
    theta = rates(design, reps, rng)
    r = design.runs
    c_a = rng.binomial(r, theta)
    c_null = rng.binomial(r, theta)
    c_worse = rng.binomial(r, _shifted(theta, -SHIFT))
    cells = []
    for k in sorted({1, r}):
        t = truth(design, k)
        va = _values(c_a, r, k)
        iv, keys = _report_intervals(va, design.codes, level, seed + k)
        hit = (iv[:, 0] <= t) & (t <= iv[:, 1])
        from bayeserr.analyses.reliability import headline_intervals
        hv = headline_intervals(va, design.codes, level)[0]
        h_hit = (hv[:, 0] <= t) & (t <= hv[:, 1])
        shares = Counter(keys)
        methods = ", ".join(f"{m} {100 * n / reps:.0f}%" for m, n in shares.most_common())
        b_cov = b_se = b_w = None
        if not design.clustered:
            from bayeserr.models.hierarchical import rate_moment_intervals
            post = rate_moment_intervals(c_a, np.full(c_a.shape, r), [k], level)[:, 0]
            b_hit = (post[:, 1] <= t) & (t <= post[:, 2])
            b_cov, b_w = float(b_hit.mean()), float((post[:, 2] - post[:, 1]).mean())
            b_se = _se(b_cov, reps)
        type_one = float(_paired_rejections(va - _values(c_null, r, k), design.codes, level).mean())
        power = float(_paired_rejections(va - _values(c_worse, r, k), design.codes, level).mean())
        cells.append(RunCell(design.label(), design.questions, r, design.law, design.clustered, k, reps, t,
                             float(h_hit.mean()), _se(float(h_hit.mean()), reps), float((hv[:, 1] - hv[:, 0]).mean()),
                             float(hit.mean()), _se(float(hit.mean()), reps), float((iv[:, 1] - iv[:, 0]).mean()),
                             methods, b_cov, b_se, b_w, type_one, _se(type_one, reps), power,
                             t - truth(design, k, -SHIFT), level))
    return cells


def published_run_designs() -> list[RunDesign]:
    """The grid on the calibration page: 20, 50 and 200 questions × 2, 4 and 16 runs for rates
    near 1 and the mixture; 4 runs for rates in the middle and near 0; 4 runs with 8 unequal clusters."""
    out = [RunDesign(t, r, law) for law in ("near 1", "mixture") for t in (20, 50, 200) for r in (2, 4, 16)]
    out += [RunDesign(t, 4, law) for law in ("middle", "near 0") for t in (20, 50, 200)]
    return out + [RunDesign(t, 4, "near 1", True) for t in (20, 50, 200)]


def _block(task) -> list:
    design, reps, seed, _ = task
    return [c.to_dict() for c in run_calibration(design, reps, seed)]


def run_reliability(designs, reps: int, seed: int = 0, jobs: int = 1, progress=None):
    """One row per (design, k); each design its own seed (``seed + 1000 × index``)."""
    import pandas as pd

    from bayeserr.lab.blocks import run_blocks
    tasks = [(i, (d, reps, seed + 1000 * i, 0)) for i, d in enumerate(designs)]
    tasks.sort(key=lambda kt: -kt[1][0].questions * (not kt[1][0].clustered))
    out = run_blocks(_block, tasks, jobs=jobs, progress=progress)
    return pd.DataFrame([row for i in range(len(designs)) for row in out[(i, 0)]])


def holds(rate: float, se: float, level: float, slack_se: float = 2.0) -> bool:
    return rate >= level - slack_se * se


def reliability_table(df) -> list[str]:
    lines = ["| design | k | truth | Wilson on n*: coverage (width) | report's rule: coverage (width) | methods picked | "
             "Beta–Binomial: coverage (width) | paired test: error rate | power (true gap) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in df.iterrows():
        head = pm(r["headline"], r["headline_se"])
        head = head if holds(r["headline"], r["headline_se"], r["level"]) else f"**{head}**"
        rep = pm(r["report"], r["report_se"])
        rep = rep if holds(r["report"], r["report_se"], r["level"]) else f"**{rep}**"
        bayes = "–"
        if r["bayes"] is not None and not (isinstance(r["bayes"], float) and math.isnan(r["bayes"])):
            bayes = pm(r["bayes"], r["bayes_se"])
            bayes = (bayes if holds(r["bayes"], r["bayes_se"], r["level"]) else f"**{bayes}**") + \
                f" ({100 * r['bayes_width']:.1f})"
        t1 = pm(r["type_one"], r["type_one_se"])
        t1 = t1 if r["type_one"] <= 1 - r["level"] + 2 * r["type_one_se"] else f"**{t1}**"
        lines.append(f"| {r['design']} | {r['k']} | {100 * r['truth']:.1f} | {head} ({100 * r['headline_width']:.1f}) | "
                     f"{rep} ({100 * r['report_width']:.1f}) | {r['report_methods']} | {bayes} | {t1} | "
                     f"{100 * r['power']:.1f} ({100 * r['gap']:.1f}) |")
    return lines


def reliability_findings(df) -> list[str]:
    """What the numbers say, computed from them."""
    def cells(rows) -> str:
        return "; ".join(rows.design + " k " + rows.k.astype(str))
    ok = df.apply(lambda r: holds(r["headline"], r["headline_se"], r["level"]), axis=1)
    rule = df.apply(lambda r: holds(r["report"], r["report_se"], r["level"]), axis=1)
    out = [f"The Reliability section's pass^k interval (Wilson on n*) holds its {nominal(df.level.iloc[0])} level "
           f"(within 2 MC SEs) in {int(ok.sum())} of {len(df)} cells" + ("" if ok.all() else f" (not in: {cells(df[~ok])})")
           + f", coverage {100 * df.headline.min():.1f}%–{100 * df.headline.max():.1f}%; the report's rule for "
           f"fractional scores, applied to the same per-question values, holds in {int(rule.sum())} "
           f"(lowest {100 * df.report.min():.1f}%, {df.loc[df.report.idxmin(), 'design']} k "
           f"{df.loc[df.report.idxmin(), 'k']}), which is why the section does not use it."]
    b = df[df.bayes.notna()]
    if len(b):
        bok = b.apply(lambda r: holds(r["bayes"], r["bayes_se"], r["level"]), axis=1)
        mix = b[b.law == "mixture"]
        out.append(f"The Beta–Binomial posterior of a new question's pass^k holds it in {int(bok.sum())} of {len(b)} "
                   f"cells; under the mixture the Beta model does not contain, its coverage is "
                   f"{100 * mix.bayes.min():.1f}%–{100 * mix.bayes.max():.1f}%, so it stays a second opinion beside "
                   "the report's interval, not the headline.")
    over = df[df.type_one > 1 - df.level + 2 * df.type_one_se]
    out.append(f"The paired pass^k test rejects {100 * df.type_one.min():.1f}%–{100 * df.type_one.max():.1f}% of the "
               f"time under the null" + (", never more than 2 MC SEs above the nominal rate." if over.empty else
                                          f"; above it in: {'; '.join(over.design + ' k ' + over.k.astype(str))}."))
    one = df[df.k == 1]
    out.append(f"Power against a second agent 0.8 logit worse on every question: {100 * one.power.min():.0f}%–"
               f"{100 * one.power.max():.0f}% at k = 1 (true gaps {100 * one.gap.min():.1f}–{100 * one.gap.max():.1f} "
               "points); at k = r the true gap shrinks where most questions are always or never solved (the mixture), "
               "and the power with it — the table gives both.")
    return out


def reliability_section(df, command: str) -> list[str]:
    reps = int(df.reps.iloc[0])
    return [SECTION_START, "## Reliability over repeated runs (pass^k)", "",
            "Simulated agents with known per-question success rates (`bayeserr.lab.reliability`): T questions run "
            "r times; rates from a Beta law in the middle (mean 0.5), near 1 (0.9) or near 0 (0.15), or a mixture "
            "the Beta model does not contain (30% always solved, 10% never, 60% Beta(2, 2)); with clusters, a "
            "cluster effect (sd 0.5 logit) over 8 clusters, one holding half the questions. The truth is E[θ^k]. "
            f"{reps:,} data sets per design; rates ± one Monte Carlo SE; a coverage in **bold** is more than 2 SEs "
            "below the level, an error rate in **bold** more than 2 SEs above it.",
            *findings_head(command, reliability_findings(df)), "", "### Rates (%)", "", *reliability_table(df),
            SECTION_END]


publish_reliability = publisher("calibration_reliability.csv", reliability_section, SECTION_START, SECTION_END)
