"""Markdown rendering of reports and comparisons (terminal default).

Scores are shown in percentage points, the SE in parentheses beside the mean
as in the paper's reporting tables.
"""

from __future__ import annotations

import math
from collections import defaultdict

from .exact import LABELS

MAX_WARNINGS_PER_CODE = 5


def pct(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{100 * x:.{digits}f}"


def interval(ci, digits: int = 1) -> str:
    if ci is None:
        return "–"
    return f"[{pct(ci[0], digits)}, {pct(ci[1], digits)}]"


def pval(p) -> str:
    if p is None or not math.isfinite(p):
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def num(x, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _interval_columns(scores) -> list[str]:
    keys = []
    for key in LABELS:
        if any(m.intervals.get(key) is not None for m in scores):
            keys.append(key)
    return keys


def models_table(scores, level: float) -> str:
    keys = _interval_columns(scores)
    clustered = any(m.n_clusters is not None for m in scores)
    header = ["Model", "Score (SE)", "n", *(["C", "SE clustered", "deff"] if clustered else []), "K"]
    header += [f"{LABELS[k]}{'†' if clustered and k in ('wilson', 'clopper_pearson', 'jeffreys', 'agresti_coull') else ''}"
               for k in keys]
    rows = []
    for m in scores:
        row = [m.model, f"{pct(m.mean)} ({pct(m.se_clt)})", str(m.n_questions)]
        if clustered:
            row += [str(m.n_clusters), pct(m.se_clustered), num(m.design_effect)]
        row.append(num(m.k_samples, 2).rstrip("0").rstrip("."))
        row += [interval(m.intervals.get(k)) for k in keys]
        rows.append(row)
    note = f"Scores and intervals in percentage points; {level:.0%} intervals."
    if clustered:
        corr = next(m.cluster_correction for m in scores if m.cluster_correction)
        note += f" Clustered SE: {'paper (M4)' if corr == 'paper' else 'CR1 finite-cluster'} formula."
        if any(m.binary for m in scores):
            note += " † assumes independent questions (not cluster-aware)."
    return table(header, rows) + "\n\n" + note


def variance_table(scores) -> str | None:
    rows = [[m.model, num(m.variance.between_questions, 4), num(m.variance.within_questions, 4),
             str(m.variance.k_recommended or "–")] for m in scores if m.variance is not None]
    if not rows:
        return None
    return table(["Model", "Var(x) between", "E[σ²] within", "K where more samples stop paying off"], rows)


def pairs_table(comps, level: float, adjust: str = "holm") -> str:
    clustered = any(c.se_clustered_paired is not None for c in comps)
    mcnemar = any(c.mcnemar is not None for c in comps)
    bayes = any(c.prob_a_better is not None for c in comps)
    adj = "Holm p" if adjust == "holm" else "BH p"
    header = ["A − B", "n", "Diff", "SE unpaired", "SE paired", *(["SE clustered"] if clustered else []),
              f"{level:.0%} CI", "ρ", "p", adj, *(["McNemar p (mid-p)"] if mcnemar else []),
              *(["P(A > B)", "P(tie)"] if bayes else [])]
    rows = []
    for c in comps:
        row = [f"{c.a} − {c.b}", str(c.n_questions), pct(c.diff), pct(c.se_unpaired), pct(c.se_paired)]
        if clustered:
            row.append(pct(c.se_clustered_paired))
        row += [interval(c.ci), num(c.correlation), pval(c.p_value),
                pval(c.p_holm if adjust == "holm" else c.p_bh)]
        if mcnemar:
            row.append("–" if c.mcnemar is None else f"{pval(c.mcnemar.p_value)} ({pval(c.mcnemar.p_mid)})")
        if bayes:
            row += [num(c.prob_a_better, 3), num(c.prob_tie, 3)]
        rows.append(row)
    basis = "clustered paired SE (M8)" if clustered else "paired SE (M7)"
    return table(header, rows) + f"\n\nDifferences in points; CI, z and p use the {basis}."


def bayes_note(settings, clustered: bool) -> str:
    """Which Bayesian model produced the posterior columns."""
    from bayeserr.models.beta_binomial import prior_label
    hier = ("PyMC NUTS (three levels with clusters and K > 1)" if settings.mode == "mcmc"
            else "exact quadrature")
    pairs = ("Bayesian bootstrap of the paired differences over clusters" if clustered else
             "Dirichlet 2×2 posterior (0/1, K = 1) or Bayesian bootstrap over questions")
    return (f"Bayesian columns (--bayes {settings.mode}): Beta posterior with prior "
            f"{prior_label(settings.prior)}; hierarchical Beta–Binomial posterior of the mean by "
            f"{hier}; P(A > B) and P(tie) (|A − B| < {100 * settings.rope:g} pt) from the "
            f"{pairs}.")


def sensitivity_table(rows, level: float) -> str:
    priors = [k for k in rows[0] if k != "model"]
    return table(["Model", *[f"{p} {level:.0%}" for p in priors]],
                 [[r["model"], *[interval(r[p]) for p in priors]] for r in rows])


def warnings_block(warnings) -> str:
    if not warnings:
        return "No warnings."
    grouped = defaultdict(list)
    for w in warnings:
        grouped[w.code].append(w)
    lines = []
    for code, items in grouped.items():
        for w in items[:MAX_WARNINGS_PER_CODE]:
            who = f"{w.model}: " if w.model else ""
            lines.append(f"- [{code}] {who}{w.message}")
        if len(items) > MAX_WARNINGS_PER_CODE:
            lines.append(f"- [{code}] … and {len(items) - MAX_WARNINGS_PER_CODE} more like this "
                         "(all are in --format json).")
    return "\n".join(lines)


def rows_block(rows) -> str:
    text = f"Rows read: {rows.read}; used: {rows.used}; dropped: {rows.read - rows.used}"
    if rows.dropped:
        text += " (" + "; ".join(f"{c} {r}" for r, c in rows.dropped) + ")"
    return text + "."


def render_report(rep) -> str:
    parts = [f"# bayeserr report: {rep.source}", "", "## Models", "", models_table(rep.scores, rep.level)]
    if rep.bayes is not None:
        parts += ["", bayes_note(rep.bayes, any(m.n_clusters for m in rep.scores))]
    if rep.prior_sensitivity:
        parts += ["", "### Prior sensitivity (Beta posterior)", "",
                  sensitivity_table(rep.prior_sensitivity, rep.level)]
    var = variance_table(rep.scores)
    if var:
        parts += ["", "### Variance within and between questions (K > 1)", "", var]
    if len(rep.comparisons):
        parts += ["", "## Pairwise comparisons", "", pairs_table(rep.comparisons, rep.level, rep.adjust)]
    for k, (scores, comps) in (rep.pass_at_k or {}).items():
        parts += ["", f"## pass@{k} (unbiased estimator, per problem)", "", models_table(scores, rep.level)]
        if len(comps):
            parts += ["", pairs_table(comps, rep.level, rep.adjust)]
    tz = rep.tie_zone
    parts += ["", "## Tie zone", "",
              f"Gaps smaller than {pct(tz['unpaired'])} points (unpaired) or "
              f"{pct(tz['paired_median'])} points (paired, median over pairs) cannot be ranked "
              f"at {rep.level:.0%}."]
    parts += ["", "## Warnings", "", warnings_block(rep.warnings), "", "## Rows", "", rows_block(rep.rows)]
    return "\n".join(parts) + "\n"


def posterior_block(post, level: float) -> list[str]:
    rows = []
    for name, s in post.summary.items():
        scale = 100 if name == "delta" else 1
        fmt = (lambda v: f"{scale * v:.2f}")
        rows.append([name + (" (points)" if name == "delta" else ""), fmt(s["mean"]), fmt(s["sd"]),
                     f"[{fmt(s['eti'][0])}, {fmt(s['eti'][1])}]", f"[{fmt(s['hdi'][0])}, {fmt(s['hdi'][1])}]"])
    lines = [f"## Posterior ({post.method})", "",
             table(["", "mean", "sd", f"{level:.0%} equal-tailed", f"{level:.0%} HDI"], rows), "",
             f"P(A > B) = {post.prob_a_better:.3f}; P(|A − B| < {100 * post.rope:g} pt) = "
             f"{post.prob_tie:.3f}", ""]
    if post.diagnostics:
        d = post.diagnostics
        lines += [f"Diagnostics: max R-hat {d['r_hat']:.3f}, min ESS bulk {d['ess_bulk']:.0f}, "
                  f"tail {d['ess_tail']:.0f}, divergences {d['divergences']}", ""]
    return lines


def render_comparison(c, rows, warnings, post=None) -> str:
    """``bayeserr compare``: one pair in depth."""
    lines = [f"# {c.a} − {c.b}", "",
             f"- {c.a}: {pct(c.mean_a)}; {c.b}: {pct(c.mean_b)}; difference {pct(c.diff)} points "
             f"on {c.n_questions} common questions"]
    if c.n_only_a or c.n_only_b:
        lines.append(f"- dropped (--on-unpaired drop): {c.n_only_a} answered only by {c.a}, "
                     f"{c.n_only_b} only by {c.b}")
    lines += [f"- correlation of per-question scores ρ = {num(c.correlation, 3)}", ""]
    rows_se = [["Unpaired (M5/M6)", pct(c.se_unpaired, 2)], ["Paired (M7)", pct(c.se_paired, 2)]]
    if c.se_clustered_paired is not None:
        rows_se.append([f"Clustered paired (M8, {c.cluster_correction}, C = {c.n_clusters})",
                        pct(c.se_clustered_paired, 2)])
    lines += [table(["Standard error of A − B", "points"], rows_se), ""]
    lines += [f"Headline ({'M8' if c.se_clustered_paired is not None else 'M7'}): "
              f"{c.level:.0%} CI {interval(c.ci, 2)}, z = {num(c.z)}, p = {pval(c.p_value)}", ""]
    if c.mcnemar is not None:
        mc = c.mcnemar
        lines += [table(["", f"{c.b} right", f"{c.b} wrong"],
                        [[f"{c.a} right", str(mc.n_both), str(mc.n_a_only)],
                         [f"{c.a} wrong", str(mc.n_b_only), str(mc.n_neither)]]), "",
                  f"McNemar exact p = {pval(mc.p_value)}, mid-p = {pval(mc.p_mid)}", ""]
    if post is not None:
        lines += posterior_block(post, c.level)
    lines += ["## Warnings", "", warnings_block(warnings), "", "## Rows", "", rows_block(rows)]
    return "\n".join(lines) + "\n"
