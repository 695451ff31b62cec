"""Running simulation grids and publishing them: tables, figures and the
``docs/calibration.md`` page (SPEC §7)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from bayeserr.base.formats import percent
from bayeserr.lab.settings import FEWCLUSTER_SETTINGS
from bayeserr.registries.methods import INTERVALS, label
from bayeserr.registries.pairtests import TESTS
from bayeserr.renderers.markdown import table

DEFAULT_N = (10, 20, 50, 100, 300, 1000)
DEFAULT_P = (0.05, 0.5, 0.8, 0.95)


def run_grid(designs, study, reps: int, seed: int = 0, progress=None, **kw) -> pd.DataFrame:
    """Run ``study`` (:func:`~bayeserr.lab.simulate.coverage`,
    :func:`~bayeserr.lab.simulate.error_rates` or
    :func:`~bayeserr.lab.simulate.pair_calibration`) on every design; one row
    per design × method or test.  Each cell gets its own seed
    (``seed + 1000 × cell index``), so any cell can be rerun alone."""
    rows = []
    for i, design in enumerate(designs):
        rows += [c.to_dict() for c in study(design, reps, seed=seed + 1000 * i, **kw)]
        if progress is not None:
            progress(1)
    return pd.DataFrame(rows)


def splice_section(text: str, section: str, start: str, end: str) -> str:
    """``text`` with its section between the markers ``start`` and ``end`` (included)
    replaced by ``section``, which holds both markers; appended at the end when absent."""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        return head + section + rest.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n" + section + "\n"


def publish_section(page, csv_name: str, df, lines, start: str, end: str) -> None:
    """Write ``df`` as ``csv_name`` next to ``page`` and the section ``lines`` into ``page``
    between ``start`` and ``end`` (replaced in place, or appended; a new page gets a title)."""
    from bayeserr.base.output import write_atomic
    page = Path(page)
    write_atomic(page.parent / csv_name, df.to_csv(index=False))
    text = page.read_text() if page.exists() else "# Calibration\n"
    write_atomic(page, splice_section(text, "\n".join(lines), start, end))


def kept_section(text: str, start: str, end: str) -> str | None:
    """The section of ``text`` between the markers ``start`` and ``end``, markers
    included, or None."""
    if start in text and end in text:
        return start + text.split(start, 1)[1].split(end, 1)[0] + end
    return None


def cell_label(row) -> str:
    parts = [f"n={row['n']}", f"p={row['accuracy']:g}"]
    name = row.get("name")
    if isinstance(name, str) and name:
        parts.insert(0, name)
    sizes = row.get("cluster_sizes")
    if isinstance(sizes, str) and sizes:
        parts.append(f"sizes {sizes}, icc={row['icc']:g}")
    elif row["cluster_size"] > 1:
        parts.append(f"m={row['cluster_size']}, icc={row['icc']:g}")
    icc_diff = row.get("icc_diff")
    if icc_diff is not None and not (isinstance(icc_diff, float) and math.isnan(icc_diff)):
        parts.append(f"icc of d={icc_diff:g}")
    if row["k"] > 1:
        parts.append(f"K={row['k']}")
    if "gap" in row and "test" in row:
        parts.append(f"gap={row['gap']:g}, ρ={row['rho']:g}")
    return ", ".join(parts)


def pivot_markdown(df: pd.DataFrame, value: str, key: str) -> str:
    """One line per cell, one column per method: ``value`` (±2 MC SE) in percent."""
    present = set(df[key])
    keys = [k for k in (*INTERVALS, *TESTS) if k in present]
    cells = defaultdict(dict)
    order = []
    for _, r in df.iterrows():
        name = cell_label(r)
        if name not in cells:
            order.append(name)
        cells[name][r[key]] = f"{100 * r[value]:.1f}"
    rows = [[name, *[cells[name].get(k, "–") for k in keys]] for name in order]
    return table(["cell", *[label(k) for k in keys]], rows)


#: inches: the coverage figure of a single accuracy is still this wide
COVERAGE_MIN_WIDTH = 7.0


def coverage_figure(df: pd.DataFrame, path, level: float = 0.95) -> Path:
    """Coverage against n, one line per method, a panel per accuracy and
    cluster setting, the nominal level dotted.  The figure is at least
    :data:`COVERAGE_MIN_WIDTH` inches wide (one accuracy must not squeeze the
    title and legend), laid out by constrained layout with the legend in its
    own band below the panels, so nothing is clipped or drawn on the data."""
    from matplotlib.figure import Figure
    settings = df[["cluster_size", "icc", "k"]].drop_duplicates().to_records(index=False)
    accs = sorted(df["accuracy"].unique())
    width = max(3.2 * len(accs), COVERAGE_MIN_WIDTH)
    ns = sorted(df["n"].unique())
    fig = Figure(figsize=(width, 2.8 * len(settings)), layout="constrained")
    axes = fig.subplots(len(settings), len(accs), sharex=True, sharey=True, squeeze=False)
    styles = {"exact": "--", "bayes": "-."}
    colors = {k: m.color for k, m in INTERVALS.items()}
    family = {k: styles.get(m.family, "-") for k, m in INTERVALS.items()}
    for r, (m, icc, k) in enumerate(settings):
        for c, acc in enumerate(accs):
            ax = axes[r, c]
            sub = df[(df.cluster_size == m) & (df.icc == icc) & (df.k == k) & (df.accuracy == acc)]
            for method, g in sub.groupby("method"):
                g = g.sort_values("n")
                ax.plot(g["n"], g["coverage"], marker="o", ms=3, lw=1.3, color=colors[method],
                        ls=family.get(method, "-"), label=label(method))
            ax.axhline(level, ls=":", color="k", lw=1.2)
            ax.set_xscale("log")
            ax.set_xticks(ns, [f"{n:g}" for n in ns], fontsize=8)  # the simulated n, not just powers of 10
            ax.minorticks_off()
            ax.set_ylim(max(0.4, df["coverage"].min() - 0.02), 1.0)
            title = f"p = {acc:g}" + (f", clusters of {m} (icc {icc:g})" if m > 1 else ", independent")
            ax.set_title(title, fontsize=9)
            if c == 0:
                ax.set_ylabel("coverage")
            if r == len(settings) - 1:
                ax.set_xlabel("questions n")
    handles, labels = [], []
    for ax in axes.ravel():
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    ncol = max(1, min(5, len(labels), int(width // 2.2)))
    legend_rows = -(-len(labels) // ncol)
    fig.set_size_inches(width, 2.8 * len(settings) + 0.8 + 0.2 * legend_rows)  # room for title and legend
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=8, frameon=False)
    sep = "; " if width >= 11 else "\n"  # a narrow figure takes the title on two lines
    fig.suptitle(f"Coverage of nominal {level:.0%} intervals (dotted line){sep}solid: CLT family, "
                 "dashed: exact/score, dash-dot: Bayesian", fontsize=11 if width >= 11 else 10)
    from bayeserr.renderers.plots import save
    return save(fig, path)  # stable ids and no date: regenerated files diff cleanly


def trustworthy_from(df: pd.DataFrame, method: str, tol: float = 0.02) -> int | None:
    """Smallest n from which the method never covers more than ``tol`` below
    nominal at any accuracy of the (independent-question) grid, or None.
    (Over-coverage — a conservative interval — is not counted against it.)"""
    sub = df[(df.method == method) & (df.cluster_size == 1)]
    for n in sorted(sub["n"].unique()):
        later = sub[sub["n"] >= n]
        if len(later) and (later["coverage"] >= later["level"] - tol).all():
            return int(n)
    return None


def calibration_page(cov: pd.DataFrame, rates: pd.DataFrame, figure: str, reps: int, seed: int,
                     fewclusters: pd.DataFrame | None = None, fewcluster_fig: str | None = None,
                     prior: pd.DataFrame | None = None, prior_fig: str | None = None,
                     command: str | None = None) -> str:
    """The plain-language ``docs/calibration.md`` with its tables; with
    ``fewclusters`` (from :func:`run_fewclusters`) also its "Few and unequal
    clusters" section, with ``prior`` (from :func:`run_pair_prior`) the
    calibration of the Bayesian pair model with the truth drawn from its
    prior.  ``command``: the command line that made the page (default: the
    ``calibration-docs`` call with ``reps`` and ``seed``)."""
    level = float(cov["level"].iloc[0])
    ind = cov[cov.cluster_size == 1]

    def cov_at(method, n, p, clustered=False):
        sub = cov[(cov.method == method) & (cov.n == n) & (cov.accuracy == p) &
                  ((cov.cluster_size > 1) if clustered else (cov.cluster_size == 1))]
        return float(sub["coverage"].iloc[0]) if len(sub) else float("nan")

    worst_clt = ind[ind.method == "clt"].sort_values("coverage").iloc[0]
    lines = [
        "# Calibration: do bayeserr's intervals mean what they say?",
        "",
        f"Generated by `{command or f'bayeserr simulate calibration-docs --reps {reps} --seed {seed}'}` "
        "(seeded; rerun it to reproduce every number). Each cell of the coverage and A − B tables simulates "
        f"{reps:,} evals with known true accuracy from the model in `bayeserr/lab/simulate.py` "
        "(question difficulty spread τ = 1 on the probit scale; clustered cells: clusters of 10 "
        "questions with latent intra-cluster correlation 0.3) and records how often each "
        f"nominal {level:.0%} interval contains the truth. Monte Carlo standard error of a "
        f"coverage near {level:.0%}: ±{100 * math.sqrt(level * (1 - level) / reps):.1f} points.",
        "",
        f"![coverage against n]({figure})",
        "",
        "## What the numbers say",
        "",
        f"- **The CLT interval fails on small or lopsided sets.** Its worst cell here is "
        f"n = {worst_clt['n']}, p = {worst_clt['accuracy']:g}: coverage "
        f"{100 * worst_clt['coverage']:.1f}% instead of {level:.0%}. At n = 10 and p = 0.95 it covers "
        f"{100 * cov_at('clt', 10, 0.95):.1f}% (most simulated sets score 10/10 and the interval "
        "collapses to a point).",
        f"- **Exact and Bayesian intervals hold up.** At n = 10, p = 0.95 Clopper–Pearson covers "
        f"{100 * cov_at('clopper_pearson', 10, 0.95):.1f}%, Wilson {100 * cov_at('wilson', 10, 0.95):.1f}% "
        f"and the Beta posterior {100 * cov_at('beta_posterior', 10, 0.95):.1f}%.",
    ]
    trust = []
    for method in ("clt", "wilson", "clopper_pearson", "jeffreys", "agresti_coull", "beta_posterior",
                   "bayesian_bootstrap"):
        n0 = trustworthy_from(cov, method)
        trust.append(f"{label(method)}: {'n ≥ ' + str(n0) if n0 else 'not within the grid'}")
    lines += [
        "- **From which n does each method stay within 2 points below nominal at every accuracy "
        "(independent questions; over-coverage allowed)?** " + "; ".join(trust) + ". "
        "Clopper–Pearson and Jeffreys are conservative at small n (coverage above nominal, so "
        "wider than needed); the Bayesian bootstrap of 0/1 scores is the Beta(k, n − k) posterior "
        "and collapses like the CLT at k = 0 or n.",
    ]
    if (cov.cluster_size > 1).any():
        cr2 = "clustered" in set(cov.method)
        lines += [
            f"- **Clustering breaks naive intervals.** With clusters of 10 (icc 0.3) at n = 1000, "
            f"p = 0.5, the naive CLT interval covers {100 * cov_at('clt', 1000, 0.5, True):.1f}% and "
            f"Wilson {100 * cov_at('wilson', 1000, 0.5, True):.1f}%; "
            + (f"the clustered headline ({label('clustered')}) restores "
               f"{100 * cov_at('clustered', 1000, 0.5, True):.1f}%, " if cr2 else "")
            + f"the clustered SE (paper) {100 * cov_at('clustered_paper', 1000, 0.5, True):.1f}%, CR1 "
            f"{100 * cov_at('clustered_cr1', 1000, 0.5, True):.1f}%, Wilson on n_eff "
            f"{100 * cov_at('wilson_clustered', 1000, 0.5, True):.1f}% and the hierarchical μ "
            f"{100 * cov_at('hierarchical_mu', 1000, 0.5, True):.1f}%. With few clusters "
            f"(n = 50: 5 clusters) the clustered SE is itself noisy: "
            f"{100 * cov_at('clustered_paper', 50, 0.5, True):.1f}% (paper, z), "
            f"{100 * cov_at('clustered_cr1', 50, 0.5, True):.1f}% (CR1, z)"
            + (f", {100 * cov_at('clustered', 50, 0.5, True):.1f}% for CR2 with t on the Bell–McCaffrey df"
               if cr2 else "")
            + f", against {100 * cov_at('hierarchical_mu', 50, 0.5, True):.1f}% for the hierarchical μ "
            "posterior.",
        ]
    lines += ["", "## Coverage (%)", "", pivot_markdown(cov, "coverage", "method"), "",
              "## Mean interval width (points)", "", pivot_markdown(cov, "mean_width", "method"), ""]
    if len(rates):
        lines += ["## Tests of A − B: false-positive rate (gap 0) and detection rate (gap > 0), %", "",
                  "Frequentist tests are two-sided at α = 0.05. Two Bayesian rules, with P(A > B) from "
                  "the report's Dirichlet 2×2 posterior (independent 0/1 questions): P(A > B) > 0.95 "
                  "declares A better and is one-sided, so its detection rate compares with a one-sided "
                  "5% test (roughly a two-sided 10% one); P(A > B) > 0.975 or < 0.025 is two-sided and "
                  "compares with the two-sided 5% tests (the clustered version of the rule is measured "
                  "in the few-cluster section below). ρ is the latent correlation of "
                  "the two models' question difficulties: with ρ > 0 the unpaired test is "
                  "conservative and loses power, the paired test keeps its 5%. The last row is the "
                  "n that (M9) plans for 80% power; the paired test's simulated power there checks "
                  "the formula.", "", pivot_markdown(rates, "rate", "test"), ""]
    if fewclusters is not None and len(fewclusters):
        lines += fewcluster_section(fewclusters, fewcluster_fig)
    if prior is not None and len(prior):
        lines += pair_prior_section(prior, prior_fig)
    return "\n".join(lines)


# ---------------------------------------------------------------- few and unequal clusters
#: Settings of the published few-cluster study (``simulate fewclusters`` defaults).


def run_fewclusters(reps: int, seed: int = 0, presets=None, icc_diffs=FEWCLUSTER_SETTINGS["icc_diffs"],
                    gap: float = 0.05, accuracy: float = 0.6, icc: float = 0.2, rho: float = 0.7,
                    spread: float = 1.0, alpha: float = 0.05, wild_draws: int = 999,
                    progress=None) -> pd.DataFrame:
    """The few-cluster study (SPEC §7): every preset cluster structure ×
    cluster effect on the difference, once at gap 0 (false-positive rates)
    and once at ``gap`` (coverage of the true gap, detection rates), with
    :func:`~bayeserr.lab.simulate.pair_calibration`.  One row per design ×
    test; ``preset`` names the cluster structure."""
    # size: the study's settings, each a keyword of the published run
    from bayeserr.lab import simulate as sim
    if not gap > 0:
        raise ValueError("gap must be positive (coverage and detection are measured at it)")
    kw = dict(presets=presets, icc_diffs=icc_diffs, accuracy=accuracy, icc=icc, rho=rho, spread=spread)
    designs = sim.fewcluster_designs(gap=0.0, **kw) + sim.fewcluster_designs(gap=gap, **kw)
    df = run_grid(designs, sim.pair_calibration, reps, seed, progress, alpha=alpha, wild_draws=wild_draws)
    key = {d.name: k for k, d in sim.PRESETS.items()}
    df.insert(0, "preset", df["name"].map(key))
    return df


def _pm(rate, se) -> str:
    if not math.isfinite(rate):
        return "–"
    return f"{100 * rate:.1f} ± {100 * se:.1f}"


def _fewcluster_tests(df: pd.DataFrame, interval: bool = False) -> list[str]:
    present = set(df["test"])
    keys = [k for k, t in TESTS.items() if t.fewclusters and k in present]
    if interval:
        keys = [k for k in keys if df.loc[df.test == k, "coverage"].notna().any()]
    return keys


def fewcluster_table(df: pd.DataFrame, what: str) -> str:
    """One Markdown table of the few-cluster study: ``what`` is "rate"
    (false-positive rate at gap 0), "coverage" (of the true gap) or "power"
    (detection rate at the gap); cells in percent ± one Monte Carlo SE."""
    sub = df[df.gap == 0] if what == "rate" else df[df.gap > 0]
    value, se = ("coverage", "coverage_se") if what == "coverage" else ("rate", "rate_se")
    keys = _fewcluster_tests(sub, interval=what == "coverage")
    rows = []
    for (name, icc_diff), g in sub.groupby(["name", "icc_diff"], sort=False):
        first = g.iloc[0]
        by = {r.test: r for r in g.itertuples()}
        rows.append([name, f"{icc_diff:g}", f"{first['clusters']}", f"{first['effective_clusters']:.1f}",
                     f"{first['bm_df']:.1f}", f"{first['design_effect']:.2f}",
                     *[_pm(getattr(by[k], value), getattr(by[k], se)) if k in by else "–" for k in keys]])
    return table(["design", "ICC of d", "C", "C_eff", "BM df", "deff of d̄", *[label(k) for k in keys]], rows)


def fewcluster_figure(df: pd.DataFrame, path, alpha: float = 0.05) -> Path:
    """False-positive rate against the cluster effect on the difference, a
    panel per cluster structure, a line per test (bars: ±2 MC SE), the
    nominal rate dotted."""
    from matplotlib.figure import Figure
    sub = df[df.gap == 0]
    names = list(dict.fromkeys(sub["name"]))
    cols = min(3, len(names))
    rows_ = math.ceil(len(names) / cols)
    fig = Figure(figsize=(3.6 * cols, 2.9 * rows_))
    axes = fig.subplots(rows_, cols, sharex=True, sharey=True, squeeze=False)
    top = min(1.0, max(0.3, float(sub["rate"].max()) + 0.05))
    for ax, name in zip(axes.ravel(), names):
        g = sub[sub.name == name]
        for key in _fewcluster_tests(g):
            t = g[g.test == key].sort_values("icc_diff")
            test = TESTS[key]
            ax.errorbar(t["icc_diff"], t["rate"], yerr=2 * t["rate_se"], marker="o", ms=3,
                        lw=2.2 if test.headline else 1.2, color=test.color, label=test.label, capsize=2)
        ax.axhline(alpha, ls=":", color="k", lw=1.2)
        first = g.iloc[0]
        ax.set_title(f"{name} (C = {first['clusters']}, BM df {first['bm_df']:.1f})", fontsize=9)
        ax.set_ylim(0, top)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("false-positive rate")
    for ax in axes[-1, :]:
        ax.set_xlabel("latent ICC of the difference")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(f"Tests of A − B at a true gap of 0: false-positive rate (nominal {alpha:.0%}, dotted; "
                 "bars ±2 Monte Carlo SE)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    from bayeserr.renderers.plots import save
    return save(fig, path)


#: "Clearly above (below) nominal" in the few-cluster findings: more than this
#: many Monte Carlo SEs (over 36 cells, 2 SEs would flag about one by chance).
CLEAR_SE = 3


def fewcluster_findings(df: pd.DataFrame) -> list[str]:
    """Plain-language conclusions of the few-cluster study, each computed
    from the results (a sentence is left out when its designs are not in
    ``df``)."""
    # size: one sentence per finding of the published study, each computed from the results table in turn
    null, alt = df[df.gap == 0], df[df.gap > 0]
    alpha = float(df["alpha"].iloc[0])
    gap = float(alt["gap"].iloc[0]) if len(alt) else float("nan")
    presets = set(df["preset"].dropna()) if "preset" in df else set()
    lo_icc, hi_icc = float(null["icc_diff"].min()), float(null["icc_diff"].max())

    def cells(test, frame=null, preset=None, icc_diff=None):
        g = frame[frame.test == test]
        if preset is not None:
            g = g[g.preset == preset]
        if icc_diff is not None:
            g = g[g.icc_diff == icc_diff]
        return g

    def span(g, col="rate"):
        lo, hi = float(g[col].min()), float(g[col].max())
        return percent(lo) if abs(hi - lo) < 5e-4 else f"{percent(lo)}–{percent(hi)}"

    def where(r):
        return f"{r['name']}, ICC of d {r['icc_diff']:g}"

    def above(g):  # clearly above the nominal rate
        return g[g["rate"] - alpha > CLEAR_SE * g["rate_se"]]

    out = []
    head = TESTS.get("cr2_t")
    g = cells("cr2_t")
    if len(g):
        bad = above(g)
        cov = cells("cr2_t", alt)
        cov_bad = cov[(1 - alpha) - cov["coverage"] > CLEAR_SE * cov["coverage_se"]]
        low = g.sort_values("rate").iloc[0]
        if len(bad) == 0:
            text = (f"- **The headline, {head.label}, holds its level in every design.** Its false-positive "
                    f"rate is {span(g)} over the {len(g)} null cells, none more than {CLEAR_SE} Monte Carlo SE "
                    f"above {alpha:.0%}")
        else:
            worst = bad.sort_values("rate").iloc[-1]
            text = (f"- **The headline, {head.label}, exceeds {alpha:.0%} by more than {CLEAR_SE} Monte Carlo SE in "
                    f"{len(bad)} of {len(g)} null cells** (worst: {where(worst)}: {_pm(worst['rate'], worst['rate_se'])}%); "
                    f"over all cells its rate is {span(g)}")
        if len(cov):
            text += (f"; its {1 - alpha:.0%} interval covers the true {gap:g} gap in {span(cov, 'coverage')} "
                     f"of runs" + ("" if len(cov_bad) == 0 else
                                   f" ({len(cov_bad)} cells more than {CLEAR_SE} MC SE below {1 - alpha:.0%})"))
        if low["rate"] < alpha - CLEAR_SE * low["rate_se"]:
            text += (f". It is conservative in places (lowest: {where(low)}, "
                     f"{_pm(low['rate'], low['rate_se'])}%)")
        out.append(text + ".")
    g = cells("clustered_paired")
    if len(g):
        fine = [n for n, h in g.groupby("name", sort=False) if len(above(h)) == 0]
        parts = []
        for key, what in (("swebench", "at SWE-bench Verified's sizes"), ("dominant", "with one dominant cluster"),
                          ("equal_2", "with 2 equal clusters"), ("equal_5", "with 5 equal clusters")):
            if key in presets:
                parts.append(f"{span(cells('clustered_paired', preset=key))} {what}")
        text = (f"- **The paper's clustered paired SE (M8) with a normal quantile over-rejects with few or "
                f"unequal clusters:** a nominal {alpha:.0%} test declares a false difference in "
                + "; ".join(parts) + f" (ICC of d from {lo_icc:g} to {hi_icc:g}).")
        text += (f" It stays within {CLEAR_SE} MC SE of {alpha:.0%} (or below) at every ICC of d only with: "
                 f"{', '.join(fine)}." if fine else
                 f" It is more than {CLEAR_SE} MC SE above the nominal rate in some cell of every design.")
        out.append(text)
    g1, g2 = cells("cr1_t"), cells("cr2_t")
    if len(g1) and len(g2):
        m = g1.merge(g2, on=["name", "icc_diff"], suffixes=("_1", "_2"))
        equal = m[m["name"].str.contains("equal")]
        same = len(equal) and bool((abs(equal["rate_1"] - equal["rate_2"]) < 1e-12).all())
        parts = []
        for key, what in (("swebench", "at SWE-bench sizes"), ("dominant", "with one dominant cluster")):
            h = cells("cr1_t", preset=key)
            if len(h):
                r = h.iloc[0]
                parts.append(f"{span(h)} {what} (C − 1 = {r['clusters'] - 1}, BM df {r['bm_df']:.1f})")
        text = "- **CR1 with t(C − 1)** "
        text += ("gives exactly the CR2 test when the clusters are equal" if same else
                 "is close to the CR2 test when the clusters are equal")
        if parts:
            text += ", but with unequal sizes C − 1 overstates the degrees of freedom: it rejects a true null in " \
                    + " and ".join(parts)
        out.append(text + ".")
    g = cells("wild_bootstrap")
    if len(g):
        bad = above(g)
        text = f"- **The wild cluster bootstrap** rejects a true null in {span(g)} of runs"
        if len(bad):
            worst = bad.sort_values("rate").iloc[-1]
            text += (f" ({len(bad)} of {len(g)} cells more than {CLEAR_SE} MC SE above {alpha:.0%}; worst: "
                     f"{where(worst)}, {_pm(worst['rate'], worst['rate_se'])}%)")
        det = cells("wild_bootstrap", alt)
        weak = [n for n, h in det.groupby("name", sort=False) if float(h["rate"].max()) < 2 * alpha]
        if weak:
            few, few_det = g[g.name.isin(weak)], det[det.name.isin(weak)]
            text += (f"; with {' and '.join(weak)} it is honest but nearly powerless ({span(few)} under the "
                     f"null, {span(few_det)} detection of a true {gap:g} gap)")
            if not np.isfinite(few_det["mean_width"]).all():
                text += ", and some of its intervals are unbounded"
        out.append(text + ".")
    g = cells("mcnemar_exact")
    if len(g):
        zero, top = cells("mcnemar_exact", icc_diff=lo_icc), cells("mcnemar_exact", icc_diff=hi_icc)
        worst = top.sort_values("rate").iloc[-1]
        out.append(f"- **McNemar assumes independent questions.** Without a cluster effect on the difference "
                   f"(ICC of d {lo_icc:g}) it declares a false difference in {span(zero)} of runs; at ICC of d "
                   f"{hi_icc:g} in {span(top)} (worst: {worst['name']}, {_pm(worst['rate'], worst['rate_se'])}%).")
    g = cells("paired")
    if len(g):
        zero, top = cells("paired", icc_diff=lo_icc), cells("paired", icc_diff=hi_icc)
        text = f"- **Ignoring the clusters (paired z, M7)**: {span(zero)} at ICC of d {lo_icc:g}"
        text += (f" (within {CLEAR_SE} MC SE of the nominal rate or below)" if len(above(zero)) == 0 else
                 f" ({len(above(zero))} cells more than {CLEAR_SE} MC SE above {alpha:.0%})")
        worst = top.sort_values("rate").iloc[-1]
        text += (f", {span(top)} at {hi_icc:g} (worst: {worst['name']}, deff of d̄ {worst['design_effect']:.1f}). "
                 "It misses the design effect of the mean difference, which grows with the cluster effect "
                 "on the difference and with the size of the largest clusters.")
        out.append(text)
    new, old = TESTS.get("bayes_cluster_0975"), TESTS.get("bayes_bootstrap_0975")
    g = cells("bayes_cluster_0975")
    if len(g):
        bad = above(g)
        parts = []
        for key, what in (("swebench", "at SWE-bench sizes"), ("dominant", "with one dominant cluster"),
                          ("equal_2", "with 2 equal clusters"), ("equal_5", "with 5 equal clusters"),
                          ("equal_200", "with 200 equal clusters")):
            h = cells("bayes_cluster_0975", preset=key)
            if len(h):
                parts.append(f"{span(h)} {what}")
        if len(bad) == 0:
            level_text = f"none more than {CLEAR_SE} Monte Carlo SE above {alpha:.0%}"
        else:
            worst = bad.sort_values("rate").iloc[-1]
            level_text = (f"more than {CLEAR_SE} MC SE above {alpha:.0%} in {len(bad)} (worst: {where(worst)}, "
                          f"{_pm(worst['rate'], worst['rate_se'])}%)")
        text = (f"- **The report's Bayesian rule for clustered pairs, {new.label}** (P(A > B) from the model "
                f"with a cluster random effect on the difference, `models/paired_clustered.py`): its "
                f"false-positive rate is {span(g)} over the {len(g)} null cells, {level_text}: "
                + "; ".join(parts) + ".")
        cov = cells("bayes_cluster_0975", alt)
        if len(cov):
            cov_bad = cov[(1 - alpha) - cov["coverage"] > CLEAR_SE * cov["coverage_se"]]
            text += (f" Its {1 - alpha:.0%} credible interval of Δ covers the true {gap:g} gap in "
                     f"{span(cov, 'coverage')} of runs")
            if len(cov_bad):
                low = cov_bad.sort_values("coverage").iloc[0]
                text += (f" ({len(cov_bad)} cells more than {CLEAR_SE} MC SE below {1 - alpha:.0%}; lowest: "
                         f"{where(low)}, {_pm(low['coverage'], low['coverage_se'])}%)")
            text += "."
        few = g[g["clusters"] <= 3]
        if len(few) and float(few["rate"].max()) < alpha / 2:
            text += (f" With {' or '.join(str(c) for c in sorted(set(few['clusters'])))} clusters it is "
                     f"conservative ({span(few)}): the between-cluster scale then comes mostly from its prior, "
                     "and the posterior is wide.")
        out.append(text)
    g = cells("bayes_bootstrap_0975")
    if len(g):
        parts = []
        for key, what in (("swebench", "at SWE-bench sizes"), ("dominant", "with one dominant cluster"),
                          ("equal_2", "with 2 equal clusters"), ("equal_200", "with 200 equal clusters")):
            h = cells("bayes_bootstrap_0975", preset=key)
            if len(h):
                parts.append(f"{span(h)} {what}")
        bad = above(g)
        out.append(f"- **The old rule, {old.label}** (what the report computed for clustered pairs before: "
                   f"a Bayesian bootstrap over clusters, on the same data sets) is more than {CLEAR_SE} MC SE "
                   f"above {alpha:.0%} in {len(bad)} of {len(g)} null cells: " + "; ".join(parts) + "."
                   + (" A Bayesian bootstrap over a handful of clusters treats them as the whole population "
                      "and has no small-sample correction like the t reference; that is why the report "
                      "replaced it." if len(bad) else ""))
    if len(alt) and "swebench" in presets:
        h2, h8 = cells("cr2_t", alt, preset="swebench"), cells("clustered_paired", alt, preset="swebench")
        many = cells("cr2_t", alt, preset="equal_200")
        if len(h2) and (not len(many) or h2["rate"].mean() < many["rate"].mean()):
            text = (f"- **Honest error bars cost power where clusters are few.** A true {gap:g} gap is detected "
                    f"by {head.label} in {span(h2)} of runs at SWE-bench sizes")
            if len(h8):
                text += f" (M8 z: {span(h8)}, but M8 also fires on null data)"
            hb = cells("bayes_cluster_0975", alt, preset="swebench")
            if len(hb):
                text += f", by the Bayesian cluster model's rule in {span(hb)}"
            if len(many):
                text += f", against {span(many)} with 200 equal clusters"
            out.append(text + ".")
    return out


def fewcluster_section(df: pd.DataFrame, figure: str | None = None) -> list[str]:
    """The "Few and unequal clusters" section of ``docs/calibration.md``."""
    first = df.iloc[0]
    reps = int(first["reps"])
    alpha = float(first["alpha"])
    gap = float(df.loc[df.gap > 0, "gap"].iloc[0])
    structures = []
    for _, r in df.drop_duplicates("name").iterrows():
        sizes = r["cluster_sizes"]
        structures.append(f"{r['name']} (sizes {sizes})" if isinstance(sizes, str) and sizes else
                          f"{r['name']} of {r['n'] // r['clusters']} questions")
    lines = [
        "## Few and unequal clusters",
        "",
        f"Tests of A − B where clusters are few or very unequal, with cluster effects on the difference "
        f"between the models (SPEC §7; `bayeserr simulate fewclusters`). Two models with 0/1 answers, "
        f"accuracy {first['accuracy']:g} (and {first['accuracy'] - gap:g} for the coverage and detection "
        f"runs), latent ICC {first['icc']:g} of the level, latent correlation ρ = {first['rho']:g} between the "
        f"models, and a cluster effect on the difference whose share of the latent difference's variance "
        f"(\"ICC of d\") runs from {df['icc_diff'].min():g} to {df['icc_diff'].max():g} "
        f"(`bayeserr/lab/simulate.py`). The Bayesian columns apply max(P, 1 − P) > 0.975 to P(A > B) "
        f"computed on every replicate: by the report's model with a cluster random effect on the difference "
        f"(`models/paired_clustered.py`, the same function the report calls) and, for contrast, by the "
        f"Bayesian bootstrap over clusters the report used before. Cluster structures: "
        + "; ".join(structures)
        + f". Each cell simulates {reps:,} evals; every rate is shown ± one Monte Carlo SE "
        f"(±{100 * math.sqrt(alpha * (1 - alpha) / reps):.1f} points for a rate near {alpha:.0%} or a "
        f"coverage near {1 - alpha:.0%}). C_eff = n²/Σ n_c², BM df "
        "= the Bell–McCaffrey degrees of freedom of the sizes, deff of d̄ = the measured variance of the mean "
        "difference over replicates divided by the mean squared paired SE (1: clustering costs nothing). "
        f"In the findings, \"above {alpha:.0%}\" means more than {CLEAR_SE} Monte Carlo SE above it: with "
        f"{df[df.gap == 0][['name', 'icc_diff']].drop_duplicates().shape[0]} cells per test, a 2-SE rule would "
        "flag about one by chance.",
        "",
    ]
    if figure:
        lines += [f"![false-positive rates with few clusters]({figure})", ""]
    lines += ["### What the numbers say", "", *fewcluster_findings(df), "",
              f"### False-positive rate at a true gap of 0 (%, nominal {alpha:.0%})", "",
              fewcluster_table(df, "rate"), "",
              f"### Coverage of the true gap ({gap:g}) by the nominal {1 - alpha:.0%} intervals (%)", "",
              "The wild bootstrap's interval is found by inverting its test; the Bayesian rule's is the cluster "
              "model's equal-tailed credible interval of Δ; mean widths are in the CSV.", "",
              fewcluster_table(df, "coverage"), "",
              f"### Detection rate of a true gap of {gap:g} (%, \"A better\" declared)", "",
              "Only meaningful for tests that hold their level above.", "",
              fewcluster_table(df, "power"), ""]
    return lines


# ---------------------------------------------------------------- the Bayesian pair model, truth from its prior
#: Settings of the published prior calibration (``simulate pair-prior`` defaults).
PRIOR_SETTINGS = dict(delta_range=0.1, keep_mass=0.999, level=0.95)


def run_pair_prior(reps: int, seed: int = 0, presets=None, level: float = PRIOR_SETTINGS["level"],
                   delta_range: float = PRIOR_SETTINGS["delta_range"],
                   keep_mass: float = PRIOR_SETTINGS["keep_mass"], progress=None) -> pd.DataFrame:
    """The calibration of the Bayesian pair model with the truth drawn from
    its prior (:func:`~bayeserr.lab.simulate.pair_prior_calibration`) on the
    cluster sizes of every preset (default all of
    :data:`~bayeserr.lab.simulate.PRESETS`).  One row per design × bin of
    P(A > B); ``preset`` names the cluster structure."""
    from bayeserr.lab import simulate as sim
    names = list(sim.PRESETS) if presets is None else list(presets)
    designs = [sim.preset(n) for n in names]
    df = run_grid(designs, sim.pair_prior_calibration, reps, seed, progress, level=level,
                  delta_range=delta_range, keep_mass=keep_mass)
    key = {d.name: k for k, d in sim.PRESETS.items()}
    df.insert(0, "preset", df["name"].map(key))
    return df


def _rate_se_of(rate: float, reps: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / reps)


def _pm_fine(rate, se) -> str:
    """Like :func:`_pm`, with two decimals when the SE is below 0.05 points."""
    if not math.isfinite(rate):
        return "–"
    digits = 2 if se < 5e-4 else 1
    return f"{100 * rate:.{digits}f} ± {100 * se:.{digits}f}"


def _prior_designs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per design: coverage, tails, and the two-sided rule's decisions
    (the outer bins) with their wrong-sign share, observed and expected."""
    rows = []
    for name, g in df.groupby("name", sort=False):
        first = g.iloc[0]
        top, bottom = g[g.bin_lo >= 0.975], g[g.bin_hi <= 0.025]
        declared = int(top["count"].sum() + bottom["count"].sum())
        wrong = float((top["count"] * (1 - top["freq"])).sum() + (bottom["count"] * bottom["freq"]).sum())
        expect = float((top["count"] * (1 - top["mean_p"])).sum() + (bottom["count"] * bottom["mean_p"]).sum())
        rows.append({"name": name, "clusters": first["clusters"], "effective_clusters": first["effective_clusters"],
                     "reps": int(first["reps"]), "coverage": first["coverage"], "coverage_se": first["coverage_se"],
                     "below": first["below"], "above": first["above"], "kept": int(first["kept"]),
                     "declared": declared,
                     "wrong": wrong / declared if declared else math.nan,
                     "wrong_expected": expect / declared if declared else math.nan})
    return pd.DataFrame(rows)


def _prior_pooled(df: pd.DataFrame) -> pd.DataFrame:
    """The bins of P(A > B) pooled over designs: replicates, mean P, share of
    true Δ > 0 and its Monte Carlo SE."""
    rows = []
    for (lo, hi), g in df[df["count"] > 0].groupby(["bin_lo", "bin_hi"]):
        n = int(g["count"].sum())
        mean_p = float((g["count"] * g["mean_p"]).sum() / n)
        freq = float((g["count"] * g["freq"]).sum() / n)
        se = math.sqrt(float((g["count"] * g["mean_p"] * (1 - g["mean_p"])).sum())) / n
        rows.append({"bin_lo": lo, "bin_hi": hi, "count": n, "mean_p": mean_p, "freq": freq,
                     "freq_se": max(se, 1 / n if n else math.nan)})
    return pd.DataFrame(rows)


def pair_prior_tables(df: pd.DataFrame) -> tuple[str, str]:
    """Markdown tables of the prior calibration: per design (coverage, tails,
    decisions) and the pooled bins of P(A > B)."""
    level = float(df["level"].iloc[0])
    tail = (1 - level) / 2
    per = _prior_designs(df)
    rows = [[r["name"], f"{r['clusters']}", f"{r['effective_clusters']:.1f}", f"{r['reps']:,}",
             _pm(r["coverage"], r["coverage_se"]), f"{100 * r['below']:.1f}", f"{100 * r['above']:.1f}",
             f"{100 * r['kept'] / r['reps']:.0f}",
             f"{100 * r['declared'] / r['kept']:.1f}" if r["kept"] else "–",
             (f"{100 * r['wrong']:.2f} ({100 * r['wrong_expected']:.2f})" if r["declared"] else "–")]
            for _, r in per.iterrows()]
    first = table(["design", "C", "C_eff", "data sets", f"coverage of Δ by the {level:.0%} interval (%)",
                   f"Δ below it (%, nominal {100 * tail:g})", f"Δ above it (%, nominal {100 * tail:g})",
                   "binned (%)", "declared: P > 0.975 or < 0.025 (% of binned)",
                   "wrong sign among declared, % (expected: mean of 1 − max(P, 1 − P))"], rows)
    pooled = _prior_pooled(df)
    rows = [[f"[{r.bin_lo:g}, {r.bin_hi:g}" + ("]" if r.bin_hi >= 1 else ")"), f"{int(r.count):,}",
             f"{100 * r.mean_p:.{2 if r.freq_se < 5e-4 else 1}f}", _pm_fine(r.freq, r.freq_se)]
            for r in pooled.itertuples()]
    second = table(["P(A > B)", "data sets", "mean P(A > B) (%)", "share with true Δ > 0 (%)"], rows)
    return first, second


def pair_prior_figure(df: pd.DataFrame, path) -> Path:
    """Two small panels: the calibration of P(A > B) (share of true Δ > 0
    against the mean P per bin, pooled over designs, bars ±2 MC SE) and the
    coverage of the credible interval per design (bars ±2 MC SE)."""
    from matplotlib.figure import Figure
    level = float(df["level"].iloc[0])
    pooled, per = _prior_pooled(df), _prior_designs(df)
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    left.plot([0, 1], [0, 1], ls=":", color="k", lw=1.2)
    left.errorbar(pooled["mean_p"], pooled["freq"], yerr=2 * pooled["freq_se"], marker="o", ms=4, lw=1.3,
                  color="#9467bd", capsize=2)
    left.set_xlabel("P(A > B) (mean in bin)")
    left.set_ylabel("share of data sets with true Δ > 0")
    left.set_title("P(A > B) against the truth (pooled)", fontsize=9)
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    y = np.arange(len(per))
    right.errorbar(100 * per["coverage"], y, xerr=200 * per["coverage_se"], fmt="o", ms=4, color="#9467bd",
                   capsize=2)
    right.axvline(100 * level, ls=":", color="k", lw=1.2)
    right.set_yticks(y, per["name"], fontsize=8)
    right.invert_yaxis()
    right.set_xlabel(f"coverage of the true Δ by the {level:.0%} interval (%)")
    right.set_title("Credible interval coverage per design", fontsize=9)
    fig.suptitle("Bayesian pair model, truth drawn from its prior (bars ±2 Monte Carlo SE)", fontsize=10)
    from bayeserr.renderers.plots import save
    return save(fig, path)


def pair_prior_findings(df: pd.DataFrame) -> list[str]:
    """Plain-language conclusions of the prior calibration, computed from it."""
    level = float(df["level"].iloc[0])
    tail = (1 - level) / 2
    per, pooled = _prior_designs(df), _prior_pooled(df)
    out = []
    off = per[(per["coverage"] - level).abs() > CLEAR_SE * per["coverage_se"]]
    lo, hi = per["coverage"].min(), per["coverage"].max()
    total = int(per["reps"].sum())
    pooled_cov = float((per["coverage"] * per["reps"]).sum() / total)
    flagged = ", ".join(f"{r['name']}, {_pm(r['coverage'], r['coverage_se'])}%" for _, r in off.iterrows())
    text = (f"- **The credible interval covers at its nominal rate.** Over the {len(per)} designs its "
            f"{level:.0%} interval contains the true Δ in {percent(lo)}–{percent(hi)} of data sets "
            + (f"(each within {CLEAR_SE} Monte Carlo SE of {level:.0%})" if len(off) == 0 else
               f"({len(off)} design{'s' if len(off) > 1 else ''} more than {CLEAR_SE} MC SE from "
               f"{level:.0%}: {flagged})")
            + f"; pooled over the designs, {_pm(pooled_cov, _rate_se_of(pooled_cov, total))}%. Δ falls below "
            f"it in {percent(per['below'].min())}–{percent(per['below'].max())} and above it in "
            f"{percent(per['above'].min())}–{percent(per['above'].max())} (nominal {percent(tail)} each).")
    out.append(text)
    if len(pooled):
        off = pooled[(pooled["freq"] - pooled["mean_p"]).abs() > CLEAR_SE * pooled["freq_se"]]
        mid = pooled[(pooled.bin_lo >= 0.025) & (pooled.bin_hi <= 0.975)]
        text = (f"- **P(A > B) means what it says.** Binned by P(A > B) and pooled over the designs "
                f"({int(pooled['count'].sum()):,} data sets), the share with a true Δ > 0 is within {CLEAR_SE} MC SE "
                f"of the bin's mean P in {len(pooled) - len(off)} of {len(pooled)} bins")
        if len(mid):
            text += (f" (between 2.5% and 97.5%: {', '.join(f'{100 * r.mean_p:.0f}% → {100 * r.freq:.0f}%' for r in mid.itertuples())})")
        declared = per["declared"].sum()
        if declared:
            wrong = float((per["wrong"] * per["declared"]).sum() / declared)
            expect = float((per["wrong_expected"] * per["declared"]).sum() / declared)
            text += (f". When the two-sided rule declares a difference (P > 0.975 or < 0.025; "
                     f"{declared:,} data sets), the sign is wrong in {100 * wrong:.2f}% of them "
                     f"(the posterior's own expectation: {100 * expect:.2f}%; at most 2.5% by construction)")
        out.append(text + ".")
    return out


def pair_prior_section(df: pd.DataFrame, figure: str | None = None) -> list[str]:
    """The "Bayesian pair model: truth drawn from its prior" section of ``docs/calibration.md``."""
    from bayeserr.models import paired_clustered as pc
    first = df.iloc[0]
    level, reps, rng_ = float(first["level"]), int(first["reps"]), float(first["delta_range"])
    keep = float(PRIOR_SETTINGS["keep_mass"])
    nu0, s0 = pc.SIGMA_PRIOR
    per_design, pooled = pair_prior_tables(df)
    lines = [
        "## The Bayesian pair model with the truth drawn from its prior",
        "",
        "The tables above hold the truth fixed (a gap of 0 or "
        "of the coverage runs' gap) and use 0/1 answers, which the model only approximates. Here the data "
        "come from the model itself (`models/paired_clustered.py`, `bayeserr/lab/simulate.py`: "
        "`pair_prior_calibration`), on the same cluster sizes: "
        f"ρ = τ/σ ~ half-Student-t with {pc.PRIOR_DF:g} df and scale {pc.PRIOR_SCALE:g}, "
        f"σ² ~ Scaled-Inv-χ²({nu0:g}, {s0:g}²), "
        "cluster effects Δ_c ~ N(Δ, τ²), differences d_i ~ N(Δ_c, σ²), "
        f"and the true Δ uniform on ±{rng_:g} in place of the model's flat prior. The model is fitted "
        "by the function the report uses (cluster sums of d and d²). If the computation is right, the "
        f"{level:.0%} interval covers Δ in {level:.0%} of data sets — whatever the distribution of Δ, "
        "since under the flat prior the posterior of Δ − Δ_true does not depend on Δ_true — and among data "
        "sets with P(A > B) ≈ p, a share p has Δ > 0. The second check needs the proper uniform prior: "
        f"only data sets whose posterior puts at least {keep:g} of its mass inside ±{rng_:g} are binned "
        "(a condition on the data alone, which keeps the binned shares calibrated; there the model's "
        f"P(A > B) is within {1 - keep:g} of the exact one under the uniform prior); the table says what "
        f"share that is. {reps:,} data sets per design; Monte Carlo SE of a coverage near {level:.0%}: "
        f"±{100 * math.sqrt(level * (1 - level) / reps):.1f} points.",
        "",
    ]
    if figure:
        lines += [f"![Bayesian pair model, truth from its prior]({figure})", ""]
    lines += ["### What the numbers say", "", *pair_prior_findings(df), "",
              "### Coverage and decisions per design", "", per_design, "",
              "### Calibration of P(A > B), pooled over the designs", "", pooled, ""]
    return lines
