"""One self-contained HTML page for a report: tables, figures as inline SVG,
warnings and the row accounting.  No network: no scripts, fonts or images
are fetched."""

from __future__ import annotations

import html as _html

from . import plots
from .exact import LABELS
from .markdown import bayes_note, interval, num, pct, pval, rows_block

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.88rem}
th,td{padding:.25rem .6rem;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
th{border-bottom:2px solid #999;background:#fafafa}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:.85rem;max-width:60rem}.se{color:#666;font-size:.8rem;display:block}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
.warn li{margin:.2rem 0}.code{font-family:monospace;color:#a33}
"""


def esc(x) -> str:
    return _html.escape(str(x))


def table(header, rows, cls="") -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def models_table(rep) -> str:
    scores = list(rep.scores)
    clustered = any(s.n_clusters is not None for s in scores)
    keys = [k for k in LABELS if any(s.intervals.get(k) is not None for s in scores)]
    header = ["Model", "Score (SE)", "n", *(["C", "SE clustered", "deff"] if clustered else []), "K",
              *[esc(LABELS[k]) for k in keys]]
    rows = []
    for s in scores:
        row = [esc(s.model), f'{pct(s.mean)}<span class="se">({pct(s.se_clt)})</span>', s.n_questions]
        if clustered:
            row += [s.n_clusters, pct(s.se_clustered), num(s.design_effect)]
        row.append(num(s.k_samples, 2).rstrip("0").rstrip("."))
        row += [interval(s.intervals.get(k)) for k in keys]
        rows.append(row)
    return table(header, rows, "models")


def pairs_table(rep) -> str:
    comps = list(rep.comparisons)
    clustered = any(c.se_clustered_paired is not None for c in comps)
    mcn = any(c.mcnemar is not None for c in comps)
    bayes = any(c.prob_a_better is not None for c in comps)
    adj = "Holm p" if rep.adjust == "holm" else "BH p"
    header = ["A − B", "n", "Diff", "SE unpaired", "SE paired", *(["SE clustered"] if clustered else []),
              f"{rep.level:.0%} CI", "ρ", "p", adj, *(["McNemar p"] if mcn else []),
              *(["P(A &gt; B)", "P(tie)"] if bayes else [])]
    rows = []
    for c in comps:
        row = [f"{esc(c.a)} − {esc(c.b)}", c.n_questions, pct(c.diff), pct(c.se_unpaired), pct(c.se_paired)]
        if clustered:
            row.append(pct(c.se_clustered_paired))
        row += [interval(c.ci), num(c.correlation), esc(pval(c.p_value)),
                esc(pval(c.p_holm if rep.adjust == "holm" else c.p_bh))]
        if mcn:
            row.append("–" if c.mcnemar is None else esc(pval(c.mcnemar.p_value)))
        if bayes:
            row += [num(c.prob_a_better, 3), num(c.prob_tie, 3)]
        rows.append(row)
    return table(header, rows, "pairs")


def render(rep, figures: bool = True) -> str:
    tz = rep.tie_zone
    parts = [f"<h1>bayeserr report: {esc(rep.source)}</h1>",
             f'<p class="note">Scores and intervals in percentage points; {rep.level:.0%} intervals. '
             "Standard errors are over questions (Miller 2024, eq. 1); clustered ones by "
             f"{'eq. 4 (paper)' if rep.cluster_correction == 'paper' else 'CR1'} where clusters exist.</p>",
             "<h2>Models</h2>", models_table(rep)]
    if rep.bayes is not None:
        parts.append(f'<p class="note">{esc(bayes_note(rep.bayes, any(s.n_clusters for s in rep.scores)))}</p>')
    if figures:
        parts.append(f'<figure id="fig-forest">{plots.svg(plots.forest(rep))}</figure>')
    if len(rep.comparisons):
        parts += ["<h2>Pairwise comparisons</h2>", pairs_table(rep)]
        if figures:
            parts.append(f'<figure id="fig-pairs">{plots.svg(plots.pairs(rep))}</figure>')
            if rep.bayes is not None:
                parts.append(f'<figure id="fig-heatmap">{plots.svg(plots.heatmap(rep))}</figure>')
    if figures and rep.posteriors:
        parts.append(f'<figure id="fig-posterior">{plots.svg(plots.posterior(rep))}</figure>')
    parts += ["<h2>Tie zone</h2>",
              f"<p>Gaps smaller than {pct(tz['unpaired'])} points (unpaired) or {pct(tz['paired_median'])} "
              f"points (paired, median over pairs) cannot be ranked at {rep.level:.0%}.</p>",
              "<h2>Warnings</h2>"]
    if rep.warnings:
        items = "".join(f'<li><span class="code">[{esc(w.code)}]</span> '
                        f"{esc(w.model + ': ') if w.model else ''}{esc(w.message)}</li>" for w in rep.warnings)
        parts.append(f'<ul class="warn">{items}</ul>')
    else:
        parts.append("<p>No warnings.</p>")
    parts += ["<h2>Rows</h2>", f'<p id="rows">{esc(rows_block(rep.rows))}</p>']
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>bayeserr report: {esc(rep.source)}</title><style>{CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n")
