"""One self-contained HTML page: the blocks of :mod:`bayeserr.reporting.document`
with figures as inline SVG.  No network: nothing is fetched (no fonts, images
or external scripts); one small inline script makes the tables sortable and
filterable.  User text is escaped with :func:`html.escape` after control
characters are removed.

Written for 2 to 100+ models:

* the page uses the window's width (up to 1,800 px; prose stays at a
  readable measure);
* every table sits in a scroll container (``div.scroll``, ``overflow:auto``,
  bounded height) with a sticky header row and a sticky first column, so a
  wide or long table scrolls inside its box and never widens the page;
* the decision columns fit a 1,400 px window without scrolling sideways:
  model names, pairs, verdicts and methods wrap (a pair as "A −" over "B",
  the minus never starting a line), and the secondary columns of a table
  (:data:`SECONDARY`: the pairs' n, unpaired, paired and paper SEs, ρ, wild
  bootstrap and McNemar p; the models' CLT SE and design effect) are hidden
  until its "Show all columns" box is ticked (CSS only, so it works without
  the script, e.g. in Jupyter);
* a table's note on the † mark is printed only when a column carries it;
* clicking a column head sorts by it (numerically on the first number shown,
  so ``83.2 (2.4)`` sorts by 83.2 and ``[60.1, 80.2]`` by 60.1; ``–`` last in
  both directions; text columns in natural order); tables with more than a
  few rows get a filter box (text, or ``> x`` / ``< x`` on a chosen column);
* tables with more than :data:`COLLAPSE_ROWS` rows other than the per-model
  table are collapsed in a ``<details>`` element;
* the URL fragment can set the state, e.g. ``report.html#sort=pairs.p_adj``,
  ``#sort=models.score.desc`` or ``#filter=pairs:model-a`` (``&`` joins
  several; tables are ``models``, ``pairs``, … and ``models-2`` for the second
  table of a kind);
* figures wider than the page (the heatmap at many models) keep their size
  in a horizontal scroll box instead of being shrunk until unreadable;
* a glossary at the end explains every column on the page (the interval
  methods from :data:`bayeserr.registries.methods.INTERVALS`: label, when it applies,
  its section of docs/methods.md), and each column head carries the same
  text as a tooltip.

The page title and the top heading name the input by its base name, never
its absolute path.  The page is byte-identical across runs (no dates, no
random ids).
"""

from __future__ import annotations

import html as _html
import re

from bayeserr.reporting import document as doc
from bayeserr.reporting.sections import report_blocks
from bayeserr.reporting.tables import Cell, Table
from bayeserr.reporting.text import cell_text, pct, plain

#: tables with more rows than this (except the per-model and ranking tables) start collapsed
COLLAPSE_ROWS = 40
#: tables with more rows than this get a filter box
FILTER_ROWS = 8
#: a figure wider than this (points) keeps its size in a horizontal scroll box
WIDE_FIGURE_PT = 960
#: columns hidden until the table's "Show all columns" box is ticked, by table key:
#: the secondary standard errors and diagnostics, so that the decision columns (the
#: pair, difference, headline SE and df, intervals, p, adjusted p, verdict, P(A > B), P(tie);
#: a model's score, interval and method) fit a 1,024 px window without scrolling sideways (the
#: pair names wrap in a narrower column than the models' names)
SECONDARY = {"pairs": ("n", "se_unpaired", "se_paired", "se_clustered", "se_paper", "rho",
                       "wild", "mcnemar"),
             "models": ("se_clt", "deff")}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5rem auto;max-width:1800px;color:#222;padding:0 1.25rem}
h1{font-size:1.5rem;overflow-wrap:anywhere}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
p,li,dd{overflow-wrap:anywhere}p,ul.warn{max-width:72rem}
.scroll{overflow:auto;width:fit-content;max-width:100%;max-height:80vh;margin:.5rem 0;border:1px solid #e4e4e4}
table{border-collapse:separate;border-spacing:0;font-size:.88rem;width:max-content}
th,td{padding:.25rem .6rem;text-align:right;border-bottom:1px solid #eee;white-space:nowrap;background:#fff}
thead th{position:sticky;top:0;z-index:2;background:#fafafa;border-bottom:2px solid #999;vertical-align:bottom}
td:first-child,th:first-child{text-align:left;position:sticky;left:0;z-index:1;border-right:1px solid #eee}
td:first-child{white-space:normal;min-width:8rem;max-width:22rem;overflow-wrap:anywhere}
thead th:first-child{z-index:3}
table.pairs th,table.pairs td{padding:.25rem .4rem}table.pairs td:first-child{max-width:13rem}
th[data-type=text]{text-align:left}
tbody tr:hover td{background:#f3f7fb}
th.sortable{cursor:pointer}th.sortable:hover{background:#eef3f8}
th[aria-sort=ascending]::after{content:" \\25B2";font-size:.7em}th[aria-sort=descending]::after{content:" \\25BC";font-size:.7em}
.tools{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap;font-size:.85rem;margin:.6rem 0 .2rem}
.tools input{width:16rem;max-width:100%}.tools .count{color:#666}
label.allcols{font-size:.85rem;color:#245;cursor:pointer;margin-left:.3rem}input.allcols{margin:.6rem 0 0}
details.rows>summary{cursor:pointer;color:#245;margin:.4rem 0}
details.fold{margin:.6rem 0}details.fold>summary{cursor:pointer;font-weight:600;color:#245}
details.name,details.name>summary{display:inline}details.name>summary{cursor:pointer;text-decoration:underline dotted}details.name[open]{display:block;overflow-wrap:anywhere;max-height:20rem;overflow-y:auto}
.note{color:#555;font-size:.85rem;max-width:60rem}.se{color:#666;font-size:.8rem;display:block}
figure{margin:1rem 0;max-width:100%}figure svg{max-width:100%;height:auto}
figure.wide{overflow:auto}figure.wide svg{max-width:none}
.warn li{margin:.2rem 0}.code{font-family:monospace;color:#a33}
dl.glossary{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;font-size:.88rem}
dl.glossary dt{font-weight:600}dl.glossary dd{margin:0;color:#333}
"""

#: sorting, filtering, state from the URL fragment; no network, no globals
SCRIPT = r"""
(function () {
  "use strict";
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  var NUMBER = /-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/i;

  function sortKey(cell, numeric) {
    var t = cell ? cell.textContent.replace(/\u2212/g, "-").trim() : "";
    if (t === "" || t === "\u2013") { return null; }
    if (!numeric) { return t; }
    var m = t.match(NUMBER);
    if (!m) { return null; }
    var v = parseFloat(m[0]);
    if (t.charAt(0) === "<") { v -= Math.abs(v) * 1e-9 + 1e-300; }
    return v;
  }

  function isText(th) { return th.getAttribute("data-type") === "text"; }

  function sortTable(table, col, dir) {
    var heads = table.tHead.rows[0].cells;
    var numeric = !isText(heads[col]);
    var body = table.tBodies[0];
    var items = Array.prototype.map.call(body.rows, function (row, i) {
      return {row: row, key: sortKey(row.cells[col], numeric), i: i};
    });
    items.sort(function (a, b) {
      if (a.key === null || b.key === null) {
        return (a.key === null) - (b.key === null) || a.i - b.i;
      }
      var c = numeric ? a.key - b.key : collator.compare(a.key, b.key);
      return dir * c || a.i - b.i;
    });
    var frag = document.createDocumentFragment();
    items.forEach(function (it) { frag.appendChild(it.row); });
    body.appendChild(frag);
    Array.prototype.forEach.call(heads, function (th, j) {
      if (j === col) { th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending"); }
      else { th.removeAttribute("aria-sort"); }
    });
  }

  function clickSort(table, col) {
    var th = table.tHead.rows[0].cells[col];
    sortTable(table, col, th.getAttribute("aria-sort") === "ascending" ? -1 : 1);
  }

  function applyFilter(table) {
    var tools = table.bayeserrTools;
    if (!tools) { return; }
    var q = tools.input.value.trim().toLowerCase();
    var col = tools.select.value === "" ? -1 : parseInt(tools.select.value, 10);
    var cmp = col >= 0 ? q.replace(/\u2212/g, "-").match(/^([<>]=?)\s*(-?\d+(?:\.\d+)?)$/) : null;
    var numeric = col >= 0 && !isText(table.tHead.rows[0].cells[col]);
    var shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i], keep = true;
      if (q !== "") {
        if (cmp && numeric) {
          var v = sortKey(row.cells[col], true), x = parseFloat(cmp[2]);
          keep = v !== null && (cmp[1] === "<" ? v < x : cmp[1] === "<=" ? v <= x :
                                cmp[1] === ">" ? v > x : v >= x);
        } else {
          var text = col >= 0 ? (row.cells[col] ? row.cells[col].textContent : "") : row.textContent;
          keep = text.toLowerCase().indexOf(q) >= 0;
        }
      }
      row.hidden = !keep;
      if (keep) { shown++; }
    }
    tools.count.textContent = (q === "" ? rows.length + " rows" :
                               "showing " + shown + " of " + rows.length + " rows");
  }

  function addTools(table) {
    var heads = table.tHead.rows[0].cells;
    var bar = document.createElement("div");
    bar.className = "tools";
    var label = document.createElement("label");
    label.textContent = "Filter ";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "text; with a column: > 50, < 0.05";
    label.appendChild(input);
    var select = document.createElement("select");
    select.setAttribute("aria-label", "column to filter");
    var all = document.createElement("option");
    all.value = "";
    all.textContent = "all columns";
    select.appendChild(all);
    Array.prototype.forEach.call(heads, function (th, j) {
      var o = document.createElement("option");
      o.value = String(j);
      o.textContent = th.textContent;
      select.appendChild(o);
    });
    var count = document.createElement("span");
    count.className = "count";
    bar.appendChild(label);
    bar.appendChild(select);
    bar.appendChild(count);
    var box = table.parentNode;
    box.parentNode.insertBefore(bar, box);
    table.bayeserrTools = {input: input, select: select, count: count};
    input.addEventListener("input", function () { applyFilter(table); });
    select.addEventListener("change", function () { applyFilter(table); });
    applyFilter(table);
  }

  function column(table, key) {
    var heads = table.tHead.rows[0].cells;
    for (var j = 0; j < heads.length; j++) {
      if (heads[j].getAttribute("data-key") === key) { return j; }
    }
    return -1;
  }

  function reveal(table) {
    var d = table.closest("details");
    if (d) { d.open = true; }
  }

  function fromHash() {
    var hash;
    try { hash = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    hash.split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq < 0) { return; }
      var name = part.slice(0, eq), value = part.slice(eq + 1);
      if (name === "sort") {
        var dot = value.indexOf(".");
        if (dot < 0) { return; }
        var table = document.getElementById("t-" + value.slice(0, dot));
        var key = value.slice(dot + 1), dir = 1;
        if (/\.(asc|desc)$/.test(key)) { dir = /desc$/.test(key) ? -1 : 1; key = key.replace(/\.(asc|desc)$/, ""); }
        var col = table && table.tHead ? column(table, key) : -1;
        if (col >= 0) { sortTable(table, col, dir); reveal(table); }
      } else if (name === "filter") {
        var colon = value.indexOf(":");
        if (colon < 0) { return; }
        var target = value.slice(0, colon).split(".");
        var t = document.getElementById("t-" + target[0]);
        if (!t || !t.bayeserrTools) { return; }
        var c = target.length > 1 ? column(t, target.slice(1).join(".")) : -1;
        t.bayeserrTools.select.value = c >= 0 ? String(c) : "";
        t.bayeserrTools.input.value = value.slice(colon + 1);
        applyFilter(t);
        reveal(t);
      }
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, j) {
      th.classList.add("sortable");
      th.tabIndex = 0;
      th.addEventListener("click", function () { clickSort(table, j); });
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); clickSort(table, j); }
      });
    });
    if (table.tBodies[0].rows.length > FILTER_ROWS) { addTools(table); }
  });
  fromHash();
  window.addEventListener("hashchange", fromHash);
})();
"""

#: what each column of the report's tables means, by column key (the interval
#: methods come from bayeserr.registries.methods.INTERVALS, see ``_describe``)
GLOSSARY = {
    "group": "Models sharing a letter cannot be told apart at this level after the multiplicity "
             "adjustment.",
    "score": "Mean score in percentage points; beneath it, in parentheses, its standard error "
             "(the clustered CR2 SE when clusters are given, else the CLT SE).",
    "n": "Number of questions: answered by the model (per-model tables) or by both models "
         "(pairwise tables).",
    "C": "Number of clusters (groups of related questions, e.g. questions on one passage).",
    "c_eff": "Effective number of clusters, n²/Σ n_c² (n_c: questions in cluster c); below C "
             "when clusters have unequal sizes.",
    "df": "Degrees of freedom of the t quantile (Bell–McCaffrey df of the CR2 SE); few df "
          "means a wider interval.",
    "se_clt": "Standard error assuming independent questions (CLT), in points.",
    "deff": "Design effect: clustered variance over the variance assuming independent "
            "questions (SE clustered² / SE CLT²); n / deff questions carry the information.",
    "K": "Answers per question (samples); the average when it varies.",
    "recommended": "The interval of the method recommended for this model's data (Method column).",
    "method": "The interval method used for the recommended interval.",
    "pair": "The two models compared; differences are the first minus the second.",
    "diff": "Difference of the two scores, A − B, in points.",
    "se": "Standard error of the paired difference (clustered when clusters are given), in points.",
    "se_unpaired": "SE of A − B as if the two scores were independent: √(Var_A/n + Var_B/n).",
    "se_paired": "SE of the mean per-question difference (both models on the same questions); "
                 "smaller than the unpaired SE when ρ > 0.",
    "se_clustered": "Clustered (CR2) SE of the paired differences; with the df column it gives "
                    "the CI and p when clusters are given.",
    "se_paper": "The paper's clustered paired SE (M8), for reference: too small with few "
                "effective clusters.",
    "ci": "Confidence interval of A − B from the headline SE (CR2 with t when clustered, else "
          "the paired SE with z).",
    "rho": "Correlation of the two models' per-question scores.",
    "ci_adj": "Interval of A − B adjusted over the family as the p-values are: simultaneous (Romano–Wolf: "
              "max |t| from the joint bootstrap; Holm: Bonferroni) or false-coverage-rate adjusted (BH); one "
              "that excludes 0 belongs to a pair declared different.",
    "verdict": "The report's one decision for the pair at this level after the multiplicity adjustment: "
               "which model is higher, or not different. The letter groups, the simultaneous rank intervals, "
               "the pairs figure and the heatmap's marks use it (the set tied with the best and each model's "
               "own rank interval use its own comparisons); the Suite and Judge comparisons answer other "
               "estimands (tasks weighted; human-scored) with their own.",
    "rank": "Rank of the model's score (1 = best; equal scores share the better rank).",
    "rank_score": "Mean score in percentage points.",
    "rank_all": "Rank interval that holds for every model at once: 1 + the models declared better, to "
                "M − the models declared worse, over the family of all pairs (Mogstad et al. 2024).",
    "rank_own": ("This model's own rank interval: 1 + the models declared better than it, to M − the models "
                 "declared worse, from its own pairs tested in both directions; it holds for this row."),
    "tied_best": ("In the confidence set for the best model: the best model is in the set with the "
                  "report's confidence (each model's own one-sided comparisons)."),
    "p_best": "Posterior probability that the model is the best, from joint draws of all the scores.",
    "rank_expected": "Posterior mean of the model's rank.",
    "task_mean": "The model's mean over the tasks, every task weighing the same (tasks read as a sample of "
                 "tasks like these; docs/methods.md §3.15).",
    "task_ci": "t interval of the mean over tasks on T − 1 df (the spread of the task means holds each task "
               "mean's own noise from its questions).",
    "between_sd": "How far the model's true score moves from task to task (τ̂ of the random-effects split).",
    "within_se": "The noise of one task's mean from its questions, on average over the tasks.",
    "rank_new": "Where the model's rank would fall in a new task of this kind, scored as these were: a "
                "conformal prediction interval over the tasks' ranks, at the level the note states.",
    "reading": "What the answer generalises over: questions, these tasks, or tasks like these.",
    "reading_method": "How each pair is tested under that reading.",
    "tied_count": "Models tied with #1 under that reading, of the models read over tasks.",
    "tied_names": "Those models (the JSON lists them all).",
    "rank_credible": "Equal-tailed posterior credible interval of the model's rank.",
    "p": "Two-sided p-value of A − B = 0, not adjusted for the number of pairs.",
    "wild": "Wild cluster restricted bootstrap-t p-value, a second opinion where df < 10.",
    "mcnemar": "McNemar exact p-value on the discordant questions, and its mid-p in parentheses; "
               "assumes independent questions.",
    "p_better": "Posterior probability that A's accuracy is higher than B's.",
    "p_tie": "Posterior probability that |A − B| is smaller than the tie margin (ROPE) "
             "named in the note on the Bayesian columns.",
    "between": "Variance of the per-question mean scores across questions.",
    "within": "Average variance of repeated answers to the same question.",
    "k_rec": "Smallest K at which the within-question noise E[σ²]/K is below a tenth of the "
             "between-question variance Var(x); more answers per question barely shrink the SE "
             "beyond it.",
}
ADJUSTED = {"RW p": "p-value adjusted over the family of pairs by Romano–Wolf's step-down, from the "
                    "joint bootstrap of the pairs (family-wise error rate, wrong directions included).",
            "Holm p": "p-value adjusted over the family of pairs by Holm's step-down method (family-wise "
                      "error rate).",
            "BH p": "p-value adjusted over the family of pairs by Benjamini–Hochberg (false discovery rate).",
            "p (unadjusted)": "p-value of the pair alone, not adjusted for the other pairs."}
#: the tables of a report whose column keys GLOSSARY describes
GLOSSARY_TABLES = {"models", "pairs", "variance", "sensitivity", "ranking", "over_tasks", "readings"}


def esc(x) -> str:
    return _html.escape(plain(x))


#: names (cell text) longer than this many characters are shown cut, the full text one click away
LONG_NAME = 120


def name_html(text) -> str:
    """User text for a table cell: a name over :data:`LONG_NAME` characters shows its
    first 60 and opens to the full name, so one 10,000-character name cannot fill the page."""
    shown = plain(text)
    if len(shown) <= LONG_NAME:
        return _html.escape(shown)
    return (f'<details class="name"><summary>{_html.escape(shown[:60])}… ({len(shown):,} characters)'
            f'</summary>{_html.escape(shown)}</details>')


def _long_names(blocks) -> list[str]:
    """The long names (over :data:`LONG_NAME` characters) in the tables' text cells, longest first."""
    found = set()
    for t in blocks:
        for row in t.rows if isinstance(t, Table) else ():
            for c in row:
                values = c.value if c.kind == "pair" else (c.value,) if c.kind == "text" else ()
                found.update(plain(v) for v in values if isinstance(v, str) and len(plain(v)) > LONG_NAME)
    return sorted(found, key=len, reverse=True)


def prose_html(text, long_names=()) -> str:
    """Escaped prose in which each long name the tables hold is cut to its first 60
    characters (the whole name in its tooltip and, one click away, in the tables)."""
    out = esc(text)
    for name in long_names:
        cut = f'<span title="{_html.escape(name)}">{_html.escape(name[:60])}…</span>'
        out = out.replace(_html.escape(name), cut)
    return out


def cell_html(c: Cell) -> str:
    if c.kind == "pct_se" and not c.missing:
        return f'{pct(c.value, c.digits)}<span class="se">({pct(c.se, c.digits)})</span>'
    if c.kind == "pair":  # the minus stays with A when the cell wraps: "A −" over "B"
        return f"{name_html(c.value[0])}&nbsp;− {name_html(c.value[1])}"
    return cell_text(c, escape=name_html) if c.kind == "text" else esc(cell_text(c))


def _describe(t: Table, col) -> str | None:
    """The glossary text of one column of ``t`` (None: nothing to say)."""
    from bayeserr.registries.methods import INTERVALS
    if t.key not in GLOSSARY_TABLES or col.key == "model":
        return None
    method = INTERVALS.get(col.key)
    if method is not None:
        text = f"Interval: {method.label}. {method.meaning} Applies: {method.applies}."
        if not method.cluster_aware:
            text += " Assumes independent questions."
        return text.replace("  ", " ") + f" See docs/methods.md {method.reference}."
    if col.key == "method":  # the recommended methods that appear, each with what it is about
        shown = {cell.value for row in t.rows for cell in row[t.columns.index(col):][:1]}
        about = [f"{m.label}: {m.meaning}" for m in INTERVALS.values() if m.label in shown and m.meaning]
        return " ".join([GLOSSARY["method"]] + about)
    if col.key == "p_adj":
        return ADJUSTED.get(col.head)
    if t.key == "sensitivity":
        return "Beta posterior interval of the accuracy under this prior (prior sensitivity)."
    return GLOSSARY.get(col.key)


def secondary_columns(t: Table) -> list[int]:
    """Indices of the columns of ``t`` hidden until "Show all columns" is
    ticked (:data:`SECONDARY`; the pair table's headline SE, CR2 when
    clustered else the paired SE, stays in view)."""
    keys = [c.key for c in t.columns]
    hide = set(SECONDARY.get(t.key, ()))
    hide.discard("se_clustered" if "se_clustered" in keys else "se_paired")
    return [j for j, k in enumerate(keys) if j > 0 and k in hide]


def table_css(t: Table, table_id: str) -> str:
    """Per-table rules: text columns after the first are left-aligned and
    may wrap (a long letter group, verdict or method name does not push the
    numbers off screen); the secondary columns are hidden while the table's
    "Show all columns" box is not ticked."""
    rules = []
    cols = [i + 1 for i, c in enumerate(t.columns) if i > 0 and not c.numeric]
    if cols:
        sel = ",".join(f"#{table_id} td:nth-child({i})" for i in cols)
        rules.append(sel + "{text-align:left;white-space:normal;min-width:5rem;max-width:15rem;"
                     "overflow-wrap:anywhere}")
    hidden = secondary_columns(t)
    if hidden:
        sel = ",".join(f"#{table_id}-all:not(:checked)~.scroll #{table_id} {tag}:nth-child({j + 1})"
                       for j in hidden for tag in ("th", "td"))
        rules.append(sel + "{display:none}")
    return "".join(rules)


def _notes(t: Table) -> tuple:
    """The notes of ``t`` to print: a note on the † mark only when a column carries it."""
    if any(c.mark for c in t.columns):
        return t.notes
    return tuple(n for n in t.notes if not plain(n).lstrip().startswith("†"))


def render_table(t: Table, table_id: str | None = None) -> str:
    def th(c):
        tip = _describe(t, c)
        attrs = f' data-key="{esc(c.key)}" data-type="{"num" if c.numeric else "text"}"'
        if tip:
            attrs += f' title="{esc(tip)}"'
        return f"<th{attrs}>{esc(c.head)}{'†' if c.mark else ''}</th>"
    head = "".join(th(c) for c in t.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell_html(c)}</td>" for c in row) + "</tr>" for row in t.rows)
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in _notes(t))
    ident = f' id="{esc(table_id)}"' if table_id else ""
    table = (f'<div class="scroll"><table{ident} class="{esc(t.key)} sortable">'
             f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    hidden = secondary_columns(t) if table_id else []
    if hidden:  # a CSS-only switch (no script needed): ticked, the hidden columns show
        names = ", ".join(esc(t.columns[j].head) for j in hidden)
        table = (f'<input type="checkbox" class="allcols" id="{esc(table_id)}-all">'
                 f'<label class="allcols" for="{esc(table_id)}-all">Show all columns '
                 f"(also {names})</label>{table}")
    if len(t.rows) > COLLAPSE_ROWS and t.key not in ("models", "ranking", "over_tasks"):
        table = (f'<details class="rows"><summary>{esc(t.title)}: {len(t.rows)} rows '
                 f"(click to show)</summary>{table}</details>")
    return table + notes


def _glossary(tables) -> str:
    """A definition list of every column on the page, in order of appearance."""
    seen, items, marked = set(), [], False
    for t in tables:
        for c in t.columns:
            marked = marked or c.mark
            text = _describe(t, c)
            if text is None or (c.head, text) in seen:
                continue
            seen.add((c.head, text))
            items.append(f"<dt>{esc(c.head)}</dt><dd>{esc(text)}</dd>")
    if not items:
        return ""
    if marked:
        items.append("<dt>†</dt><dd>The method assumes independent questions (not cluster-aware).</dd>")
    items.insert(0, "<dt>points</dt><dd>Scores, differences, standard errors and intervals are in "
                    "percentage points (0–100).</dd>")
    return f'<h2 id="glossary">Glossary</h2><dl class="glossary">{"".join(items)}</dl>'


def _base_name(path: str) -> str:
    """The last component of a path (``/a/b/results.csv`` → ``results.csv``)."""
    parts = [p for p in re.split(r"[\\/]", str(path)) if p]
    return parts[-1] if parts else str(path)


def _short(text: str, source) -> str:
    """``text`` with the input's path replaced by its base name."""
    if not source:
        return text
    return text.replace(str(source), _base_name(source))


def _figure_html(kind: str, svg: str) -> str:
    m = re.search(r'<svg[^>]*?\swidth="([\d.]+)pt"', svg[:2000])
    wide = m is not None and float(m.group(1)) > WIDE_FIGURE_PT
    cls = ' class="wide"' if wide else ""
    return f'<figure id="fig-{esc(kind)}"{cls}>{svg}</figure>'


def scoped_css(css: str, scope: str = ".bayeserr") -> str:
    """``css`` with every rule confined to ``scope`` (``body`` becomes the
    scope itself), so a fragment cannot restyle the page it is shown in."""
    def rule(m):
        sels = [sel.strip() for sel in m.group(1).split(",")]
        return ",".join(scope if sel == "body" else f"{scope} {sel}" for sel in sels) + "{" + m.group(2) + "}"
    return re.sub(r"([^{}]+)\{([^{}]*)\}", rule, css)


_END_FOLD = object()  #: where a folded block's contents end


def render_blocks(blocks, rep=None, title: str = "bayeserr report", source=None,
                  fragment: bool = False) -> str:
    """The page.  ``source`` (default: ``rep.source``) is the input's path: the
    title and top-level headings show its base name only.  ``fragment``: a
    ``<div class="bayeserr">`` with styles scoped to it and no script (for
    Jupyter, where a whole page would restyle the notebook)."""
    if source is None and rep is not None:
        source = getattr(rep, "source", None)
    parts, tables, counts, rules = [], [], {}, []
    glyph_notes: set = set()  # the note on characters drawn as boxes, once per page
    blocks = list(blocks)
    long_names = _long_names(doc.flatten(blocks))
    queue = list(blocks)
    while queue:
        b = queue.pop(0)
        if isinstance(b, doc.Fold):  # folded: its blocks between <details> and the closing marker
            parts.append(f'<details class="fold"><summary>{esc(b.title)}</summary>')
            queue[0:0] = [*b.blocks, _END_FOLD]
        elif b is _END_FOLD:
            parts.append("</details>")
        elif isinstance(b, doc.Heading):
            text = _short(b.text, source) if b.level == 1 else b.text
            parts.append(f"<h{b.level}>{esc(text)}</h{b.level}>")
        elif isinstance(b, Table):
            counts[b.key] = counts.get(b.key, 0) + 1
            ident = re.sub(r"[^A-Za-z0-9_-]", "-", f"t-{b.key}") + (
                f"-{counts[b.key]}" if counts[b.key] > 1 else "")
            parts.append(render_table(b, ident))
            tables.append(b)
            rules.append(table_css(b, ident))
        elif isinstance(b, doc.Para):
            attr = ' id="rows"' if b.role == "rows" else (' class="note"' if b.role == "note" else "")
            parts.append(f"<p{attr}>{prose_html(b.text, long_names)}</p>")
        elif isinstance(b, doc.Bullets):
            items = "".join(f'<li><span class="code">[{esc(code)}]</span> {prose_html(text, long_names)}</li>'
                            if code else f"<li>{prose_html(text, long_names)}</li>" for code, text in b.items)
            parts.append(f'<ul class="warn">{items}</ul>')
        elif isinstance(b, doc.Figure) and b.svg is not None:
            parts.append(_figure_html(b.kind, b.svg))
        elif isinstance(b, doc.Figure) and rep is not None:
            from bayeserr.renderers import plots
            parts.append(_figure_html(b.kind, plots.svg(plots.figure(rep, b.kind), glyph_notes)))
    glossary = _glossary(tables)
    if glossary:
        parts.append(glossary)
    body = "\n".join(parts)
    script = SCRIPT.replace("FILTER_ROWS", str(FILTER_ROWS))
    style = CSS + "".join(r + "\n" for r in rules if r)
    if fragment:
        return f'<div class="bayeserr"><style>{scoped_css(style)}</style>\n{body}\n</div>\n'
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(_short(title, source))}</title><style>{style}</style></head>"
            f"<body>\n{body}\n<script>{script}</script>\n</body></html>\n")


def render(rep, figures: bool = True, fragment: bool = False) -> str:
    return render_blocks(report_blocks(rep, figures=figures), rep,
                         f"bayeserr report: {rep.source}", source=rep.source, fragment=fragment)
