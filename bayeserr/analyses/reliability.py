"""Reliability across repeated runs: pass^k per model, paired pass^k comparisons, the pass@1
vs pass^k reorderings, where the noise comes from and the flaky questions (``docs/methods.md``
§6.2).

pass^k is the chance that k independent runs of a question (an agent's task) all succeed
(Yao et al. 2025, τ-bench).  Each question's unbiased estimate ``C(c, k)/C(n, k)`` (c of n
runs right) is a fractional score, so a model's pass^k, its intervals, the paired comparisons
and the ranking are the report's own machinery applied to those values (clusters included):
the estimand is the mean over the population of questions, as for every score.  Beside them:

* the Beta–Binomial posterior of ``E[θ^k]`` (θ a question's success rate, Beta across
  questions: the hierarchical model of §5.2 with the questions as groups) — closed form in
  (μ, κ), by quadrature (:func:`bayeserr.models.hierarchical.rate_moment_intervals`);
* the split of each model's pass^k variance over questions into the spread between questions
  and the run-to-run noise of each question's estimate (unbiased, from 2k runs);
* for each pair that changes order between pass@1 and pass^k, the test of the change itself:
  the per-question difference of the two gaps, with the pairs' CLT or CR2 SE, Holm over the
  reordered pairs;
* the questions whose runs disagree the most, with their success counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError
from bayeserr.base.results import frame_value
from bayeserr.registries.options import Options

#: flaky questions the text formats list (the JSON lists every question whose runs disagree)
FLAKY_SHOWN = 10
#: default k: every k up to this many runs, else powers of two (:func:`default_ks`)
EVERY_K_UP_TO = 8
#: fewer degrees of freedom than this behind a clustered pass^k SE: a warning says so
FEW_DF = 5


@dataclass(frozen=True)
class Skipped:
    """The reliability section not shown, and why (some questions were run once): a warning."""

    reason: str

    @property
    def caveats(self) -> list:
        from bayeserr.base.caveat import Caveat
        return [Caveat("pass_hat_k_not_shown", None, self.reason)]


@dataclass(frozen=True)
class PassHatK:
    """One model's pass^k: the estimate over questions, its SE and the report's interval for it,
    the Beta–Binomial posterior of a new question's pass^k, and the variance split."""

    model: str
    k: int
    estimate: float
    se: float  #: CLT SE over questions (M1), or CR2 with clusters
    df: float  #: its degrees of freedom (n − 1, or Bell–McCaffrey)
    ci: tuple  #: Wilson on the bounded-mean effective size n* (the section's headline)
    ci_rule: tuple  #: the report's recommended interval for these per-question values, for reference
    method_rule: str  #: its name
    n_questions: int
    bayes_mean: float | None  #: Beta–Binomial posterior mean of E[θ^k]; None with clusters or --bayes off
    bayes: tuple | None  #: its equal-tailed interval (low, high)
    between_sd: float | None  #: SD of the questions' true pass^k (method of moments, floored at 0)
    run_se: float | None  #: the run-to-run part of the SE: sqrt(mean Var(U | θ) / n); None below 2k runs
    run_share: float | None  #: share of the estimate's variance that is run-to-run noise

    @property
    def bayes_misfit(self) -> bool:
        """The Beta–Binomial interval misses the unbiased estimate: the questions' rates are not
        Beta-shaped (e.g. some always or never solved), so the model's pass^k is not to be read."""
        return self.bayes is not None and not (self.bayes[0] <= self.estimate <= self.bayes[1])

    def to_dict(self) -> dict:
        d = {k: list(v) if isinstance(v, tuple) else v for k, v in vars(self).items()}
        d["bayes_misfit"] = self.bayes_misfit
        return d


@dataclass(frozen=True)
class Reversal:
    """A pair whose order changes between pass@1 and pass^k: ``a`` ahead at pass@1."""

    a: str
    b: str
    k: int
    diff_1: float  #: a − b at pass@1
    diff_k: float  #: a − b at pass^k (below 0: b ahead)
    p_k: float  #: the pass^k pair's p-value, adjusted over the pass^k family
    confirmed: bool  #: b is declared ahead at pass^k (the pass^k pair's verdict in the report's family)
    change: float  #: diff_k − diff_1, the mean over questions of the change in the gap
    change_se: float
    change_df: float | None
    change_p: float
    change_p_holm: float  #: Holm over the reordered pairs
    significant: bool  #: the change in the gap is declared at 1 − level (Holm)

    def to_dict(self) -> dict:
        return dict(vars(self))


@dataclass(frozen=True)
class FlakyQuestion:
    """A question whose runs disagree: its mean run-to-run variance over the models and the
    success counts ``(model, right, runs)`` of the models that ran it."""

    question: str
    run_variance: float  #: mean over models of p̂(1 − p̂)·n/(n − 1)
    models_split: int  #: models with some runs right and some wrong
    counts: tuple

    def to_dict(self) -> dict:
        return {"question": self.question, "run_variance": self.run_variance, "models_split": self.models_split,
                "counts": [{"model": m, "right": c, "runs": n} for m, c, n in self.counts]}


@dataclass(frozen=True)
class Reliability:
    """pass^k for ``ks`` (rows: every model at every k, best first by pass^``compare_k``), the
    report's models table, pairs and ranking at ``compare_k``, the reorderings against
    pass@1, and the flaky questions."""

    ks: tuple
    compare_k: int
    runs: int  #: the fewest runs of any question a model answered
    level: float
    clustered: bool
    rows: tuple  #: :class:`PassHatK`
    scores: object = None  #: :class:`~bayeserr.analyses.scoring.Scores` at compare_k
    comparisons: object = None  #: :class:`~bayeserr.analyses.comparison.Comparisons` at compare_k
    ranking: object = None  #: :class:`~bayeserr.analyses.ranking.Ranking` at compare_k (two models or more)
    reversals: tuple = ()
    n_pairs: int = 0  #: pairs with a pass@1 and a pass^k difference
    flaky: tuple = ()
    n_questions: int = 0
    notes: tuple = field(default_factory=tuple)

    @property
    def caveats(self) -> list:
        """Warnings about the section: Beta–Binomial intervals that miss the estimate, and
        clustered SEs resting on few degrees of freedom."""
        from bayeserr.base.caveat import Caveat
        out = []
        missed = [r for r in self.rows if r.bayes_misfit]
        if missed:
            names = ", ".join(f"{r.model} (k = {r.k})" for r in missed[:8]) + (
                f" and {len(missed) - 8} more" if len(missed) > 8 else "")
            out.append(Caveat("pass_hat_k_misfit", None, (
                f"the Beta–Binomial pass^k interval misses the estimate for {names}: the questions' success "
                "rates are not Beta-shaped (some always or never solved, say), so that column is left empty "
                "there; read the interval beside it.")))
        few = [r for r in self.rows if self.clustered and r.k == self.compare_k and np.isfinite(r.df)
               and r.df < FEW_DF]
        if few:
            out.append(Caveat("pass_hat_k_few_clusters", None, (
                f"the pass^k intervals and tests rest on clusters with {min(r.df for r in few):.1f}–"
                f"{max(r.df for r in few):.1f} degrees of freedom (Bell–McCaffrey): wide, and unstable from model "
                "to model. If the clusters are fixed sources rather than a sample (a benchmark's parts), "
                "--no-cluster reads the questions as independent.")))
        return out

    def row(self, model: str, k: int) -> PassHatK:
        for r in self.rows:
            if r.model == model and r.k == k:
                return r
        raise InputError(f"no pass^{k} for model '{model}': the models are "
                         f"{', '.join(sorted({r.model for r in self.rows}))} and k is one of {list(self.ks)}.")

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.rows))

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for r in self.rows:
            d = r.to_dict()
            d["ci_low"], d["ci_high"] = d.pop("ci")
            d["ci_rule_low"], d["ci_rule_high"] = d.pop("ci_rule")
            d["bayes_low"], d["bayes_high"] = d.pop("bayes") or (None, None)
            rows.append({k: frame_value(v) for k, v in d.items()})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        """The ``reliability`` block of the JSON report (``docs/methods.md`` §6.2)."""
        return {"ks": list(self.ks), "compare_k": self.compare_k, "runs": self.runs, "level": self.level,
                "clustered": self.clustered, "n_questions": self.n_questions,
                "models": [r.to_dict() for r in self.rows],
                "table": None if self.scores is None else self.scores.to_dict(),
                "comparisons": None if self.comparisons is None else self.comparisons.to_dict(),
                "ranking": None if self.ranking is None else self.ranking.to_dict(),
                "n_pairs": self.n_pairs, "reversals": [r.to_dict() for r in self.reversals],
                "flaky": [f.to_dict() for f in self.flaky], "notes": list(self.notes)}

    def __repr__(self) -> str:
        return (f"Reliability(pass^k for k = {', '.join(map(str, self.ks))}; {len(self.models)} models; "
                f"{len(self.reversals)} of {self.n_pairs} pairs reorder from pass@1 to pass^{self.compare_k})")


# ------------------------------------------------------------------ which k
def default_ks(runs: int) -> tuple:
    """Every k up to the fewest runs when they are at most ``EVERY_K_UP_TO``; else 1, 2, 4, …
    below them, and the fewest runs itself."""
    if runs <= EVERY_K_UP_TO:
        return tuple(range(1, runs + 1))
    out, k = [], 1
    while k < runs:
        out.append(k)
        k *= 2
    return tuple(out + [runs])


def run_counts(view) -> tuple[np.ndarray, np.ndarray, int]:
    """Runs n and successes c per (model, question), and the fewest runs of an answered one."""
    n, c = view.pass_counts()
    n, c = np.asarray(n, float), np.asarray(c, float)
    have = n > 0
    return n, c, int(n[have].min()) if have.any() else 0


def runs_of(view) -> str:
    """``"all"`` when every answered question was run at least twice with 0/1 results (or counts),
    ``"some"`` when some were and some once, else ``"none"``."""
    if "n_samples" not in view.extra and not view.zero_one.all():
        return "none"
    n, _, runs = run_counts(view)
    return "all" if runs >= 2 else "some" if (n >= 2).any() else "none"



def once_run(view, n) -> str | None:
    """Why pass^k cannot be computed when some questions were run once: the count and one example;
    None when every answered question was run twice or more, or none was."""
    once = (n == 1)
    if not once.any() or not (n >= 2).any():
        return None
    j, q = _example(view, once)
    count = int(once.any(axis=0).sum())
    return (f"{count:,} of {int((n > 0).any(axis=0).sum()):,} questions {'was' if count == 1 else 'were'} run once "
            f"for some model (e.g. '{view.questions[q]}' of '{view.models[j]}')")


def _example(view, cells) -> tuple[int, int]:
    """The (model, question) of ``cells`` a message names: the smallest question label, then model
    name (the same whichever order an engine holds the questions in)."""
    j, q = np.nonzero(cells)
    best = min(range(len(j)), key=lambda i: (str(view.questions[q[i]]), str(view.models[j[i]])))
    return int(j[best]), int(q[best])


def _checked_ks(ks, runs: int, view, n) -> tuple:
    ks = tuple(sorted({int(k) for k in ks})) if ks else default_ks(runs)
    if runs < 2:
        some = once_run(view, n)
        raise InputError("pass^k needs every question run at least twice (repeated runs: a sample/run column, "
                         "Inspect epochs, or n_samples and n_correct columns); "
                         + (f"{some}: drop them (--where) to see pass^k on the rest." if some else
                            "every question here was run once."))
    if ks[-1] > runs:
        j, q = _example(view, (n > 0) & (n < ks[-1]))
        raise InputError(f"pass^{ks[-1]} needs {ks[-1]} runs of every question; the fewest is {runs} "
                         f"('{view.questions[q]}' of '{view.models[j]}' has {int(n[j, q])}). Ask for k up to {runs} "
                         f"(--pass-hat-k 1,{runs}), or drop the questions with fewer runs.")
    return ks


# ------------------------------------------------------------------ the headline interval
HEADLINE = "Wilson on n*"


def headline_intervals(values: np.ndarray, codes, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pass^k interval of each row of per-question values in [0, 1] (NaN: not answered):
    Wilson's interval on the bounded-mean effective size n* (:func:`bayeserr.stats.exact.bounded_mean_n`)
    from the CLT SE with n − 1 df, or the CR2 SE with Bell–McCaffrey df with clusters
    (``docs/methods.md`` §6.2; the lab measured it at 20–200 questions, 2–16 runs).
    Returns (intervals rows × 2, SE, df)."""
    from bayeserr.stats.estimators import se_clt
    from bayeserr.stats.exact import bounded_mean_n, proportion_interval
    values = np.atleast_2d(values)
    n = (~np.isnan(values)).sum(axis=1)
    if codes is None:
        mean, se, df = np.nanmean(values, axis=1), se_clt(values), n - 1.0
    else:
        from bayeserr.stats.fewclusters import cr2_mean
        cr = cr2_mean(values, codes)
        mean, se, df = cr.mean, cr.se, cr.df
    size = bounded_mean_n(mean, se, n, df, level)
    return proportion_interval(mean * size, size, level, "wilson"), np.asarray(se, float), np.asarray(df, float)


# ------------------------------------------------------------------ the analysis
def reliability_view(view, options: Options, ks=(), *, compare: bool = True) -> Reliability:
    """pass^k of every model of a :class:`~bayeserr.stats.view.DataView` with repeated runs
    (``ks``: default 1, 2, 4, … and the fewest runs); ``compare``: the pairs and ranking at the
    largest k and the reorderings against pass@1 (two models or more)."""
    from bayeserr.stats.passk import pass_hat_k
    n, c, runs = run_counts(view)
    ks = _checked_ks(ks, runs, view, n)
    have = n > 0
    values = {}
    for k in sorted(set(ks) | {1}):
        v = np.full(n.shape, np.nan)
        v[have] = pass_hat_k(n[have], c[have], k)
        values[k] = v
    top = ks[-1]
    opts = replace(options, prior_sensitivity=False, pass_k=())
    scores, top_view, comps, ranking = _at_k(view, values[top], opts, compare)
    order = [view.models.index(m.model) for m in scores]
    by_k = {k: _scores_at(view, values[k], opts) if k != top else scores for k in ks}
    bayes, notes = _bayes(view, n, c, ks, options)
    rows = []
    for j in order:
        for k in ks:
            rows.append(_row(view.models[j], k, by_k[k].get(view.models[j]), n[j], c[j], values[k][j],
                             None if bayes is None else bayes[j][ks.index(k)], view.codes, options.level))
    reversals, n_pairs = ((), 0)
    if compare and len(order) > 1 and top > 1:
        reversals, n_pairs = _reversals(view, values[1], values[top], comps, top, options.level)
    flaky = _flaky(view, n, c)
    return Reliability(ks, top, runs, options.level, view.codes is not None, tuple(rows), scores,
                       comps, ranking, reversals, n_pairs, flaky, int(have.any(axis=0).sum()), tuple(notes))


def _scores_at(view, values, options):
    from bayeserr.analyses.scoring import ranked_view
    return ranked_view(view.with_scores(values), options)[0]


def _at_k(view, values, options, compare: bool):
    from bayeserr.analyses.comparison import Comparisons, compare_view
    from bayeserr.analyses.ranking import rank_view
    from bayeserr.analyses.scoring import ranked_view
    scores, k_view, _, _ = ranked_view(view.with_scores(values), options)
    if not compare or len(scores) < 2:
        return scores, k_view, Comparisons(), None
    comps = compare_view(k_view, options, ranking=True)
    return scores, k_view, comps, rank_view(k_view, comps, options)


def _bayes(view, n, c, ks, options):
    """The Beta–Binomial posterior of E[θ^k] per model, or None with a note."""
    if not options.bayes.on:
        return None, []
    if view.codes is not None:
        return None, ["The Beta–Binomial pass^k posterior treats questions as independent; with clusters the "
                      "report's clustered intervals are the ones to read, so it is not shown."]
    from bayeserr.models.hierarchical import rate_moment_intervals
    return rate_moment_intervals(c, n, ks, options.level), []


def _row(model, k, score, n, c, values, bayes, codes, level) -> PassHatK:
    from bayeserr.stats.passk import pass_hat_k_run_variance
    have = n > 0
    u = values[have]
    rec = score.recommended
    iv, se, df = headline_intervals(values[None], codes, level)
    between = run_se = share = None
    if u.size >= 2:
        w = pass_hat_k_run_variance(n[have], c[have], k)
        if np.isfinite(w).all():
            total = float(np.var(u, ddof=1))
            within = float(w.mean())
            between = float(np.sqrt(max(total - within, 0.0)))
            run_se = float(np.sqrt(within / u.size))
            share = float(min(within / total, 1.0)) if total > 0 else None
    return PassHatK(model, int(k), float(u.mean()), float(se[0]), float(df[0]), tuple(float(x) for x in iv[0]),
                    tuple(rec.interval), rec.label, int(u.size), None if bayes is None else float(bayes[0]),
                    None if bayes is None else (float(bayes[1]), float(bayes[2])), between, run_se, share)


def _reversals(view, v1, vk, comps, k: int, level: float):
    """Pairs ahead at pass@1 and behind at pass^k, with the test of the change in their gap."""
    from bayeserr.stats.estimators import se_clt
    from bayeserr.stats.fewclusters import cr2_mean, t_test
    from bayeserr.stats.simultaneous import holm
    pair_at_k = {}
    for cmp in comps:
        pair_at_k[(cmp.a, cmp.b)] = (cmp.p_adjusted, cmp.different and cmp.diff < 0)
        pair_at_k[(cmp.b, cmp.a)] = (cmp.p_adjusted, cmp.different and cmp.diff > 0)
    found, n_pairs = [], 0
    M = len(view.models)
    for i in range(M):
        for j in range(M):
            both = ~np.isnan(v1[i]) & ~np.isnan(v1[j])
            if i == j or both.sum() < 2:
                continue
            d1 = float(np.mean(v1[i, both] - v1[j, both]))
            dk = float(np.mean(vk[i, both] - vk[j, both]))
            if i < j:
                n_pairs += 1
            if not (d1 > 0 and dk < 0):
                continue
            change = (vk[i, both] - vk[j, both]) - (v1[i, both] - v1[j, both])
            if view.codes is not None:
                cr = cr2_mean(change, view.codes[both])
                se, df = float(cr.se), float(cr.df)
            else:
                se, df = float(se_clt(change)), float(both.sum() - 1)
            test = t_test(float(change.mean()), se, df, level)
            a, b = view.models[i], view.models[j]
            found.append((a, b, d1, dk, *pair_at_k.get((a, b), (float("nan"), False)), float(change.mean()), se,
                          df, float(test.p_value)))
    if not found:
        return (), n_pairs
    p = np.array([f[-1] for f in found])
    adj = holm(np.where(np.isnan(p), 1.0, p))
    out = [Reversal(a, b, k, d1, dk, pk, bool(ok), ch, se, df, pv, float(h), bool(h < 1 - level))
           for (a, b, d1, dk, pk, ok, ch, se, df, pv), h in zip(found, adj)]
    # the reversals the pass^k verdicts confirm first, then the surest changes in the gap
    return tuple(sorted(out, key=lambda r: (not r.confirmed, r.change_p, r.a, r.b))), n_pairs


def _flaky(view, n, c) -> tuple:
    """Questions whose runs disagree, most run-to-run variance first."""
    ok = n >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(ok, c / np.where(ok, n, 1), np.nan)
        var = np.where(ok, p * (1 - p) * n / np.where(ok, n - 1, 1), np.nan)
    split = ok & (c > 0) & (c < n)
    out = []
    for q in np.flatnonzero(split.any(axis=0)):
        counts = tuple((view.models[j], int(c[j, q]), int(n[j, q])) for j in np.flatnonzero(n[:, q] > 0))
        out.append(FlakyQuestion(str(view.questions[q]), float(np.nanmean(var[:, q])), int(split[:, q].sum()),
                                 counts))
    return tuple(sorted(out, key=lambda f: (-f.run_variance, f.question)))


def pass_hat_k(ds, k=(), models=None, *, options: Options | None = None, **kwargs) -> Reliability:
    """pass^k — the chance that k runs of a question all succeed — of every model (or the listed
    ``models``) with its intervals, paired comparisons and ranking at the largest k, the pairs
    that reorder from pass@1, the variance split and the flaky questions (``docs/methods.md``
    §6.2).  ``k``: one k or several (default 1, 2, 4, … and the fewest runs of a question).
    Keyword arguments are those of :class:`~bayeserr.registries.options.Options`."""
    from bayeserr.stats.view import DataView
    options = Options.coerce(options, **kwargs)
    if isinstance(k, str):  # "1,2,4" as on the command line
        k = [x for x in k.split(",") if x.strip()]
    k = () if k is None else k
    ks = (k,) if isinstance(k, (int, np.integer, float)) else tuple(k)
    from bayeserr.base.registry import check_range
    ks = tuple(check_range("k", x, 1, integer=True) for x in ks)
    view = DataView.from_dataset(ds).select(models)
    if "n_samples" not in view.extra and not view.zero_one.all():
        raise InputError("pass^k needs 0/1 results per run (or n_samples and n_correct columns); these scores are "
                         "fractional.")
    return reliability_view(view, options, ks)
