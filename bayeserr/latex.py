"""LaTeX tables of a report, ready to paste into a paper (booktabs).

The per-model table follows the paper's reporting tables: each score with its
standard error in parentheses beneath it, the number of questions and of
clusters beside it; the caption says which estimator and level were used.
Needs ``\\usepackage{booktabs}`` only.
"""

from __future__ import annotations

from .exact import LABELS
from .markdown import pct, pval

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
           "–": "--", "—": "---", "−": "$-$"}
LATEX_INTERVALS = ("clt", "clustered", "wilson", "clopper_pearson", "wilson_clustered",
                   "clopper_pearson_clustered", "beta_posterior", "hierarchical_posterior")


def esc(text) -> str:
    return "".join(SPECIAL.get(ch, ch) for ch in str(text))


def stacked(top: str, bottom: str) -> str:
    """Two lines in one cell (no extra package)."""
    return rf"\begin{{tabular}}[t]{{@{{}}c@{{}}}}{top}\\ {bottom}\end{{tabular}}"


def ci(interval) -> str:
    return "--" if interval is None else f"[{pct(interval[0])}, {pct(interval[1])}]"


def models_table(rep) -> str:
    scores = list(rep.scores)
    clustered = any(s.n_clusters is not None for s in scores)
    keys = [k for k in LATEX_INTERVALS if any(s.intervals.get(k) is not None for s in scores)]
    head = ["Model", "Score", "$n$", *(["$C$"] if clustered else []), *[esc(LABELS[k]) for k in keys]]
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "c" * (len(head) - 1) + "}", r"\toprule", " & ".join(head) + r" \\",
             r"\midrule"]
    for s in scores:
        se = s.se_clustered if s.se_clustered is not None else s.se_clt
        row = [esc(s.model), stacked(pct(s.mean), f"({pct(se)})"), str(s.n_questions)]
        if clustered:
            row.append(str(s.n_clusters) if s.n_clusters is not None else "--")
        row += [ci(s.intervals.get(k)) for k in keys]
        lines.append(" & ".join(row) + r" \\")
    corr = next((s.cluster_correction for s in scores if s.cluster_correction), None)
    se_text = ("clustered standard errors (" + ("Miller 2024, eq. 4" if corr == "paper" else "CR1") + ")"
               if clustered else "standard errors (CLT, Miller 2024, eq. 1)")
    k_note = ""
    if any(s.k_samples > 1 for s in scores):
        k_note = " Scores average the answers to each question; standard errors are over questions."
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{Scores (\%) with {se_text} in parentheses; $n$ questions"
              + (", $C$ clusters" if clustered else "") + rf"; {rep.level:.0%}".replace("%", r"\%")
              + r" intervals by method." + k_note + "}",
              r"\label{tab:bayeserr-models}", r"\end{table}"]
    return "\n".join(lines)


def pairs_table(rep) -> str:
    comps = list(rep.comparisons)
    clustered = any(c.se_clustered_paired is not None for c in comps)
    bayes = any(c.prob_a_better is not None for c in comps)
    adj = "Holm $p$" if rep.adjust == "holm" else "BH $p$"
    head = ["$A - B$", "Diff.", "Clustered paired SE" if clustered else "Paired SE", f"{rep.level:.0%}".replace("%", r"\%") + " CI",
            r"$\rho$", "$p$", adj, *([r"$P(A>B)$"] if bayes else [])]
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * (len(head) - 1) + "}", r"\toprule", " & ".join(head) + r" \\",
             r"\midrule"]
    for c in comps:
        row = [f"{esc(c.a)} $-$ {esc(c.b)}", pct(c.diff), pct(c.se), ci(c.ci),
               f"{c.correlation:.2f}", pval(c.p_value), pval(c.p_holm if rep.adjust == "holm" else c.p_bh)]
        if bayes:
            row.append(f"{c.prob_a_better:.3f}" if c.prob_a_better is not None else "--")
        lines.append(" & ".join(row).replace("<", "$<$") + r" \\")
    se_name = "clustered paired SE (Miller 2024, eq. 8)" if clustered else "paired SE (Miller 2024, eq. 7)"
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{Pairwise differences in points; the {se_name} gives the interval and "
              rf"the two-sided $p$; $\rho$ is the correlation of per-question scores; {esc(adj.replace('$', ''))} "
              r"adjusts for all pairs.}", r"\label{tab:bayeserr-pairs}", r"\end{table}"]
    return "\n".join(lines)


def render(rep) -> str:
    parts = [f"% bayeserr report: {rep.source}", "% requires \\usepackage{booktabs}", models_table(rep)]
    if len(rep.comparisons):
        parts.append(pairs_table(rep))
    return "\n\n".join(parts) + "\n"
