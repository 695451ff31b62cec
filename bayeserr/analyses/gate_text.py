"""The release gate's sentences (:mod:`bayeserr.analyses.gate`): the one line per candidate
that ``bayeserr gate`` prints and the result's ``sentence`` carries, its notes, and the
number formats they use (one minus sign and one meaning of points, from
:mod:`bayeserr.base.formats`).

They sit beside the analysis, not in the reporting layer, because the verdict's sentence
is part of what :func:`bayeserr.gate` returns (``Gate.sentence``, the JSON ``sentence``),
and an analysis never imports the layer above it; nothing here computes a statistic."""

from __future__ import annotations

import math

from bayeserr.base.formats import points as _points
from bayeserr.stats.onesided import POWER_TARGET

MODE_WORD = {"non-inferiority": "non-inferior", "superiority": "superior"}


def pct(x: float) -> str:
    """A share in percent with three significant digits (a level, a power)."""
    return "less than 0.1%" if 0 < x < 0.001 else f"{100 * x:.3g}%"


def points(x, digits: int = 1) -> str:
    """A difference or margin in signed points (:func:`bayeserr.base.formats.points`)."""
    return _points(x, digits, signed=True)


def digits(*pairs) -> int:
    """Decimals (1 to 3) at which each ``(x, y)`` with ``x != y`` prints differently."""
    for d in (1, 2, 3):
        if all(a == b or points(a, d) != points(b, d) for a, b in pairs
               if a is not None and math.isfinite(a) and b is not None and math.isfinite(b)):
            return d
    return 3


def pv(p: float) -> str:
    """``p = 0.012`` (``p < 0.0001`` below it)."""
    if p is None or not math.isfinite(p):
        return "p = –"
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}" if p < 0.001 else f"p = {p:.3f}"


def round_up(n: float) -> int:
    """Questions to plan for, rounded up to 2 significant figures."""
    if not math.isfinite(n) or n <= 0:
        return 0
    mag = 10 ** max(0, math.floor(math.log10(n)) - 1)
    return int(math.ceil(n / mag) * mag)


def check_notes(c, wild, p_t, step, finding, too_small, stopped, notes, n_eff) -> list[str]:
    """The notes under one candidate's verdict: ``notes`` (the data's) and what the decision
    met (every difference equal, few clusters, t and wild bootstrap disagreeing, a Holm stop)."""
    notes = list(notes)
    if c.se == 0:
        units = (f"{n_eff:.1f} effective clusters (every question of a cluster counted as one)"
                 if n_eff != c.n_questions else f"{c.n_questions} questions")
        notes.append(f"every paired difference is the same (SE 0), so the t or z test says nothing: the bound "
                     f"is the exact one for no difference among {units}.")
    if too_small and finding == "not shown" and c.df is not None and c.df < 10:
        notes.append(f"with few effective clusters (df {c.df:.1f}), more clusters help more than more "
                     "questions in the same clusters; the count assumes questions spread like these.")
    if wild is not None and (p_t < 1 - step) != (wild["p_value"] < 1 - step):
        notes.append(f"the CR2 t test (one-sided {pv(p_t)}) and the wild cluster bootstrap "
                     f"({pv(wild['p_value'])}) disagree at this level; the gate passes only "
                     "when both do.")
    if stopped:
        notes.append("its own Holm step would pass, but Holm stops at a candidate with a smaller p "
                     "that did not pass.")
    return notes


def check_sentence(c, finding, mode, step, null, bound, bound_upper, p_t, wild, k, p_adj, prob, score,
                   too_small, n_needed, power) -> str:
    """One candidate's verdict in one sentence: the finding, A − B, the bound against the margin,
    then the test, its p, the clusters and (not the decision) the Bayesian probability."""
    # size: one argument per number the sentence prints, each already decided by the gate
    word = MODE_WORD[mode]
    dg = digits((bound, null), (bound_upper, null), (c.diff, null))
    lvl = pct(step)
    margin_text = f"{points(null, dg)} margin"
    head = f"{c.a} − {c.b} = {points(c.diff, dg)} points"
    if finding == word:
        text = f"{word}: {head}, {lvl} lower bound {points(bound, dg)} > {margin_text}"
    elif finding == "worse":
        verb = "worse than allowed" if mode == "non-inferiority" else "not superior by the margin"
        text = f"{verb}: {head}, {lvl} upper bound {points(bound_upper, dg)} < {margin_text}"
    else:
        text = f"not shown {word}: {head}, {lvl} lower bound {points(bound, dg)} ≤ {margin_text}"
    test = (f"one-sided CR2 t test, df {c.df:.1f}" if c.test == "t_cr2_bm" else
            f"one-sided suite t test ({c.test.rsplit('_', 1)[1]} weights, tasks as strata), df {c.df:.1f}"
            if c.test.startswith("t_suite") else "one-sided Tango score test" if score else
            "one-sided paired z test")
    if c.se == 0:
        test = "exact bound for equal differences"
    details = [f"{test}, {pv(p_t)}"]
    if wild is not None:
        details.append(f"wild cluster bootstrap {pv(wild['p_value'])}")
    if k > 1:
        details.append(f"Holm over {k} candidates, adjusted {pv(p_adj)}")
    clusters = (f" in {c.n_clusters} clusters" if c.n_clusters is not None and c.n_clusters >= 2 else "")
    details.append(f"{c.n_questions:,} questions{clusters}")
    if prob is not None:
        details.append(f"Bayesian P(A − B > {points(null, dg)}) = {prob:.3f}, not the decision")
    text += f" ({'; '.join(details)})"
    if too_small and finding == "not shown" and n_needed is not None:
        text += (f"; the eval is too small for this margin: with no true difference it would pass "
                 f"{pct(power)} of the time, and about {round_up(n_needed):,} questions like these "
                 f"would give {pct(POWER_TARGET)}")
    return text + "."


def partial_text(runs) -> str:
    """``model: file (status cancelled, 13 of 40 samples scored)`` for each partial run."""
    def one(r) -> str:
        of = "" if r.get("planned") is None else f" of {r['planned']}"
        return f"{r['model']}: {r['file']} (status {r['status']}, {r['scored']}{of} samples scored)"
    return ("partial run" + ("s" if len(runs) > 1 else "") + " " + "; ".join(one(r) for r in runs))


def partial_sentence(runs) -> str:
    """The verdict's caution when it rests on partial runs the user asked for."""
    return (f"Caution: this verdict rests on {partial_text(runs)} (--partial-runs include): only the samples "
            "that finished, which may not represent the task.")
