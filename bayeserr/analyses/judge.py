"""Judge-scored evals corrected by a human-labelled subset (``docs/methods.md`` §3.14).

When the scores come from an LLM judge and some answers also carry a human
label (``load(..., human_col=…)``, ``labels=…`` or ``human_scorer=…``: the
``human`` variable of the dataset), :func:`judge` gives for each model the
prediction-powered (PPI++) interval for the *human*-scored mean, beside the
labelled subset alone and the judge-only interval (which does not cover the
human mean when the judge is biased), the judge's bias, how many labels the
judge was worth, the judge–human agreement (Cohen's κ for 0/1, Krippendorff's
α otherwise) and, for 0/1 judges, the Rogan–Gladen correction; and each
pair's A − B the same way on the questions both answered.  The formulas are
in :mod:`bayeserr.stats.ppi` and :mod:`bayeserr.stats.agreement`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from bayeserr.base.errors import InputError
from bayeserr.stats import agreement, ppi

#: fewer labels than this for a model: its intervals are shown with a warning
FEW_LABELS = 20
#: fewer labels than this (for a model, or shared by a pair): no corrected interval at all
MIN_LABELS = 10
#: labelled questions in fewer effective clusters than this: the clustered interval has few df
FEW_LABELLED_CLUSTERS = 5
#: more pairs than this: the report shows neighbours in the corrected ranking (the JSON holds all)
MAX_SHOWN_PAIRS = 45


@dataclass(frozen=True)
class JudgeModel:
    """One model: the corrected interval, agreement and (0/1) Rogan–Gladen."""

    model: str
    n_questions: int
    result: ppi.PPIMean
    agreement: object           #: agreement.Kappa (0/1 or categories) or agreement.Alpha, or None
    rogan_gladen: object        #: ppi.RoganGladen for a 0/1 judge and 0/1 labels, else None
    selection_p: float | None   #: Welch p of judge scores, labelled vs not (a non-random subset shows)

    def to_dict(self) -> dict:
        return {"model": self.model, "n_questions": self.n_questions, **self.result.to_dict(),
                "agreement": None if self.agreement is None else {
                    "kind": "kappa" if isinstance(self.agreement, agreement.Kappa) else "alpha",
                    **self.agreement.to_dict()},
                "rogan_gladen": None if self.rogan_gladen is None else self.rogan_gladen.to_dict(),
                "selection_p": self.selection_p}


@dataclass(frozen=True)
class JudgePair:
    """A − B of human-scored means, on the questions both answered."""

    a: str
    b: str
    result: ppi.PPIMean
    p_value: float
    p_holm: float = float("nan")        #: Holm over the judge-corrected pairs
    judge_p_value: float = float("nan")  #: the judge-only difference's test (not the human estimand)
    judge_p_holm: float = float("nan")   #: Holm over the pairs' judge-only tests

    def verdict(self, level: float, judge: bool = False) -> str:
        """``"a"`` or ``"b"`` (higher, Holm-adjusted at ``1 − level``) or ``"tie"``: the
        corrected verdict, or the judge-only one with ``judge=True`` (the same rule, so that
        only the labels differ; ``docs/methods.md`` §3.14.8)."""
        p, est = (self.judge_p_holm, self.result.judge_only.estimate) if judge else \
            (self.p_holm, self.result.ppi.estimate)
        if not (np.isfinite(p) and p < 1 - level):
            return "tie"
        return "a" if est > 0 else "b"

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, **self.result.to_dict(), "p_value": self.p_value,
                "p_holm": self.p_holm, "judge_p_value": self.judge_p_value, "judge_p_holm": self.judge_p_holm}


@dataclass(frozen=True)
class JudgeSummary:
    """The Judge section's answer in one place: the human-scored leader, the models the
    labels cannot separate from it, the judge's own leader and the pairs whose verdict the
    labels change (Holm over the pairs, both for the corrected and the judge-only tests)."""

    leader: str                   #: highest PPI++ human-scored mean
    tied_with_best: tuple         #: models whose corrected difference from the leader is not significant
    not_compared: tuple           #: models with no corrected pair with the leader (too few shared labels)
    judge_leader: str             #: highest judge-only mean among every model
    judge_leader_rank: int | None  #: its rank (1 = best) by the corrected means (None: not corrected)
    changed: tuple                #: (a, b, judge verdict, corrected verdict) where they differ
    n_pairs: int
    n_models: int = 0             #: models in the data (corrected or not)

    def to_dict(self) -> dict:
        return {"leader": self.leader, "tied_with_best": list(self.tied_with_best),
                "not_compared": list(self.not_compared), "judge_leader": self.judge_leader,
                "judge_leader_rank": self.judge_leader_rank, "n_pairs": self.n_pairs,
                "changed": [{"a": a, "b": b, "judge": j, "corrected": c} for a, b, j, c in self.changed],
                "n_models": self.n_models}


@dataclass(frozen=True)
class Judge:
    """Every model's and pair's judge-corrected result (:func:`judge`)."""

    models: tuple               #: JudgeModel, best corrected estimate first
    pairs: tuple                #: JudgePair
    level: float
    clustered: bool
    warnings: tuple             #: sentences: few labels, labels in few clusters, a non-random subset
    judge_order: tuple = ()     #: every model of the data, highest judge-only mean first

    @property
    def summary(self) -> JudgeSummary | None:
        """The leader, the models tied with it and the verdicts the labels change (None: no model;
        ``docs/methods.md`` §3.14.8)."""
        if not self.models:
            return None
        leader = self.models[0].model
        with_leader = {(p.b if p.a == leader else p.a): p for p in self.pairs if leader in (p.a, p.b)}
        others = [m.model for m in self.models[1:]]
        tied = tuple(m for m in others if m in with_leader and with_leader[m].verdict(self.level) == "tie")
        names = [m.model for m in self.models]
        judged = self.judge_order[0] if self.judge_order else max(
            self.models, key=lambda m: m.result.judge_only.estimate
            if np.isfinite(m.result.judge_only.estimate) else -np.inf).model
        changed = tuple((p.a, p.b, p.verdict(self.level, judge=True), p.verdict(self.level)) for p in self.pairs
                        if p.verdict(self.level, judge=True) != p.verdict(self.level))
        return JudgeSummary(leader, tied, tuple(m for m in others if m not in with_leader), judged,
                            names.index(judged) + 1 if judged in names else None, changed, len(self.pairs),
                            max(len(self.judge_order), len(names)))

    def to_dict(self) -> dict:
        summary = self.summary
        return {"level": self.level, "clustered": self.clustered,
                "models": [m.to_dict() for m in self.models], "pairs": [p.to_dict() for p in self.pairs],
                "summary": None if summary is None else summary.to_dict(),
                "warnings": list(self.warnings)}

    def to_frame(self) -> pd.DataFrame:
        """One row per model: labels, bias, judge-only, labelled-only and PPI++ estimates and bounds."""
        rows = []
        for m in self.models:
            r = m.result
            row = {"model": m.model, "n_labelled": r.n_labelled, "n_questions": m.n_questions,
                   "effective_labels": r.effective_labels, "correlation": r.correlation, "lambda": r.lam}
            for key in ("ppi", "classical", "judge_only", "bias"):
                iv = getattr(r, key)
                row |= {f"{key}": iv.estimate, f"{key}_se": iv.se, f"{key}_low": iv.lower,
                        f"{key}_high": iv.upper}
            rows.append(row)
        return pd.DataFrame(rows)


def _per_question(cube: np.ndarray) -> np.ndarray:
    """Mean over samples, NaN where none (a question answered or labelled K times)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(cube, axis=-1)


def _binary(x: np.ndarray) -> bool:
    x = x[~np.isnan(x)]
    return x.size > 0 and bool(np.isin(x, (0.0, 1.0)).all())


def _agreement(y, f, codes):
    lab = ~np.isnan(y)
    if lab.sum() < 2 or np.ptp(y[lab]) == 0 or np.ptp(f[lab]) == 0:
        return None  # κ and α are 0/0 when either rater gives one value to every labelled answer
    values = np.unique(np.concatenate([y[lab], f[lab]]))
    try:
        with warnings.catch_warnings():  # statsmodels' κ variance on a handful of labels: sqrt of < 0 is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            if values.size <= 2 and _binary(y) and _binary(f[lab]):
                return agreement.cohens_kappa(y, f)
            return agreement.krippendorff_alpha(y, f, metric="interval",
                                                codes=None if codes is None else codes)
    except InputError:
        return None


def _selection_p(f, labelled) -> float | None:
    """Welch's t of the judge's scores, labelled against unlabelled questions: a small p
    says the labelled subset is not like the rest (so not a random sample)."""
    from scipy.stats import ttest_ind
    a, b = f[labelled], f[~labelled]
    if a.size < 2 or b.size < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return None
    with warnings.catch_warnings():  # near-constant judge scores: scipy warns of precision loss
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(ttest_ind(a, b, equal_var=False).pvalue)
    return p if np.isfinite(p) else None


def _constant_labels(y, clustered: bool, level: float) -> str | None:
    """Why labels that are all the same value give no interval (the correction's variance
    would be 0: a zero-width interval), with the labels' exact interval when they are 0/1."""
    labels = y[~np.isnan(y)]
    if labels.size < 2 or np.ptp(labels) > 0:
        return None
    k, v = labels.size, float(labels[0])
    text = f"all {k} of its labels are {v:g}, so the correction has no variance to estimate"
    if v in (0.0, 1.0):
        from statsmodels.stats.proportion import proportion_confint
        lo, hi = proportion_confint(int(v) * k, k, alpha=1 - level, method="beta")
        text += (f" (the labels alone give the exact Clopper–Pearson interval [{100 * lo:.1f}, {100 * hi:.1f}]"
                 + (", ignoring the clusters" if clustered else "") + ")")
    return text + "; label more answers"


def _model(name, y, f, codes, level) -> JudgeModel | tuple:
    """The model's result, or ``(name, why there is none)``."""
    keep = ~np.isnan(f)
    y, f = y[keep], f[keep]
    c = None if codes is None else codes[keep]
    constant = _constant_labels(y, c is not None, level)
    if constant is not None:
        return name, constant
    try:
        res = ppi.ppi_mean(y, f, c, level=level)
    except InputError as exc:  # e.g. every label in one cluster: this model only, not the report
        return name, str(exc).split(". ")[0]
    rg = None
    if _binary(y) and _binary(f) and (~np.isnan(y)).sum() < len(y):
        try:
            rg = ppi.rogan_gladen(y, f, c, level=level)
        except InputError:
            rg = None
    return JudgeModel(name, int(keep.sum()), res, _agreement(y, f, c), rg, _selection_p(f, ~np.isnan(y)))


def _pair(a, b, ya, fa, yb, fb, codes, level) -> JudgePair | None:
    both = ~np.isnan(fa) & ~np.isnan(fb)
    lab = both & ~np.isnan(ya) & ~np.isnan(yb)
    if lab.sum() < MIN_LABELS:
        return None
    c = None if codes is None else codes[both]
    try:
        res = ppi.ppi_paired(ya[both], fa[both], yb[both], fb[both], c, level=level)
    except InputError:
        return None
    return JudgePair(a, b, res, _p_value(res.ppi), judge_p_value=_p_value(res.judge_only))


def _p_value(iv) -> float:
    """Two-sided p of ``estimate = 0`` from an interval's estimate, SE and df (t; normal at df = ∞)."""
    from scipy import stats
    t = iv.estimate / iv.se if iv.se > 0 else np.nan
    if not np.isfinite(t):
        return float("nan")
    return float(2 * (stats.norm.sf(abs(t)) if np.isinf(iv.df) else stats.t.sf(abs(t), iv.df)))


def _holm_pairs(pairs: list) -> list:
    """The pairs with Holm-adjusted p-values over all of them (corrected and judge-only apart);
    a pair with no p (NaN) is left out of the family and keeps NaN."""
    from dataclasses import replace

    from bayeserr.stats.simultaneous import holm
    out = list(pairs)
    for raw, adjusted in (("p_value", "p_holm"), ("judge_p_value", "judge_p_holm")):
        p = np.array([getattr(q, raw) for q in out])
        ok = np.isfinite(p)
        adj = np.full(p.size, np.nan)
        if ok.any():
            adj[ok] = holm(p[ok])
        out = [replace(q, **{adjusted: float(v)}) for q, v in zip(out, adj)]
    return out


def _biased(models, alpha: float = 0.05) -> list:
    """Models whose judge bias (J4) differs from 0, Holm over the models at ``alpha``,
    largest bias first."""
    from bayeserr.stats.simultaneous import holm
    tested = [(m, _p_value(m.result.bias)) for m in models]
    tested = [(m, p) for m, p in tested if np.isfinite(p)]
    if not tested:
        return []
    adj = holm(np.array([p for _, p in tested]))
    out = [m for (m, _), a in zip(tested, adj) if a < alpha]
    return sorted(out, key=lambda m: -abs(m.result.bias.estimate))


def _warnings(models, clustered) -> list[str]:
    out = []
    few = [m for m in models if m.result.n_labelled < FEW_LABELS]
    if few:
        out.append(f"Few human labels ({', '.join(f'{m.model}: {m.result.n_labelled}' for m in few[:5])}"
                   f"{' …' if len(few) > 5 else ''}): the corrected intervals are wide and their coverage "
                   f"rests on the t approximation; label at least {FEW_LABELS} answers per model.")
    if clustered:
        thin = [m for m in models if (m.result.effective_clusters_labelled or 0) < FEW_LABELLED_CLUSTERS]
        if thin:
            out.append("Labelled questions concentrate in few clusters ("
                       + ", ".join(f"{m.model}: {m.result.n_clusters_labelled} clusters, "
                                   f"{m.result.effective_clusters_labelled or 0:.1f} effective" for m in thin[:5])
                       + "): the clustered interval has few df, and if whole clusters were chosen for "
                         "labelling rather than questions at random, the labelled set may not represent the "
                         "rest; spread the labels over many clusters.")
    biased = _biased(models)
    if biased:
        out.append(f"The judge's scores are biased for {len(biased)} of the {len(models)} models with labels "
                   "(mean judge − human on the labelled answers, Holm over the models: "
                   + ", ".join(f"{m.model} {100 * m.result.bias.estimate:+.1f} points" for m in biased[:5])
                   + (f", and {len(biased) - 5} more" if len(biased) > 5 else "")
                   + "): the Models, Ranking and Pairwise sections rank the judge's scores; the Judge section "
                     "gives the human-scored answer.")
    tested = [m for m in models if m.selection_p is not None and m.result.n_labelled >= FEW_LABELS]
    if tested:  # Holm over the models, so a handful of random subsets do not raise it by chance
        from bayeserr.stats.simultaneous import holm
        adj = holm(np.array([m.selection_p for m in tested]))
        skewed = [(m, p) for m, p in zip(tested, adj) if p < 0.01]
        if skewed:
            out.append("The labelled answers differ from the unlabelled ones in judge score ("
                       + ", ".join(f"{m.model}: Holm p = {p:.2g}" for m, p in skewed[:5])
                       + (f", and {len(skewed) - 5} more models" if len(skewed) > 5 else "")
                       + "): the labelled subset looks chosen, not random, and PPI's interval assumes a "
                         "random subset; label a uniformly random sample of the answers.")
    return out


def judge(ds, *, level: float = 0.95) -> Judge:
    """Judge-corrected intervals for a dataset with human labels (``docs/methods.md`` §3.14).

    ``ds`` from :func:`bayeserr.load` with ``human_col=``, ``labels=`` or
    ``human_scorer=`` (a ``human`` variable: NaN where an answer is not
    labelled); the judge's score is ``score``.  A question's judge score and
    human label are their means over samples.  Clustered when the data have
    clusters.  Raises :class:`~bayeserr.base.errors.InputError` when no
    answer carries a human label.
    """
    from bayeserr.base.registry import check_level
    from bayeserr.stats.view import check_dataset
    ds = check_dataset(ds)
    level = check_level(level)
    if "human" not in ds.data_vars:
        raise InputError("no human labels in the data: load with human_col='COLUMN', labels='FILE' or "
                         "human_scorer='SCORER' (command line: --human-col, --labels, --human-scorer).")
    names = [str(m) for m in ds["model"].values]
    f = _per_question(np.asarray(ds["score"].values, dtype=float))
    y = _per_question(np.asarray(ds["human"].values, dtype=float))
    y = np.where(np.isnan(f), np.nan, y)  # a label without a judge score cannot be used
    codes = np.asarray(ds["cluster"].values).astype(str) if "cluster" in ds.coords else None
    one_cluster = codes is not None and np.unique(codes).size < 2
    if one_cluster:  # as the report's other sections: no cluster-level inference, questions independent
        codes = None
    labelled = (~np.isnan(y)).sum(axis=1)
    if not labelled.any():
        raise InputError("the human-label column is empty: no answer carries a human label.")
    results = [_model(n, y[j], f[j], codes, level) for j, n in enumerate(names) if labelled[j] >= MIN_LABELS]
    models = [m for m in results if isinstance(m, JudgeModel)]
    failed = [m for m in results if not isinstance(m, JudgeModel)]
    left_out = [n for j, n in enumerate(names) if labelled[j] < MIN_LABELS]
    models.sort(key=lambda m: -m.result.ppi.estimate if np.isfinite(m.result.ppi.estimate) else np.inf)
    order = {m.model: i for i, m in enumerate(models)}
    pairs = []
    for a, b in combinations([m.model for m in models], 2):
        ja, jb = names.index(a), names.index(b)
        p = _pair(a, b, y[ja], f[ja], y[jb], f[jb], codes, level)
        if p is not None:
            pairs.append(p)
    pairs.sort(key=lambda p: (order[p.a], order[p.b]))
    pairs = _holm_pairs(pairs)
    notes = _warnings(models, codes is not None)
    if left_out:
        notes.append(f"No corrected interval for {', '.join(left_out[:5])}"
                     f"{f' and {len(left_out) - 5} more' if len(left_out) > 5 else ''}: fewer than {MIN_LABELS} "
                     "labelled answers (a pair needs as many labelled answers of both).")
    notes += _failures(failed)
    if one_cluster:
        notes.append("Every question is in one cluster: the corrected intervals treat the questions as "
                     "independent (no cluster-level inference is possible), as the report's other sections do; "
                     "this understates the uncertainty if questions of the cluster are related.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model with no judge score: NaN, last
        judge_means = np.nanmean(f, axis=1)
    by_judge = sorted(range(len(names)), key=lambda j: -judge_means[j] if np.isfinite(judge_means[j]) else np.inf)
    return Judge(tuple(models), tuple(pairs), level, codes is not None, tuple(notes),
                 tuple(names[j] for j in by_judge))


def _failures(failed: list) -> list[str]:
    """One sentence per reason (models with the same reason named together, at most 5)."""
    by_reason: dict = {}
    for name, reason in failed:
        by_reason.setdefault(reason, []).append(name)
    out = []
    for reason, who in by_reason.items():
        more = f" and {len(who) - 5} more" if len(who) > 5 else ""
        out.append(f"No corrected interval for {', '.join(who[:5])}{more}: {reason}.")
    return out


def shown_pairs(j: Judge) -> list:
    """The pairs a report shows: all up to :data:`MAX_SHOWN_PAIRS`, else the neighbours in
    the corrected ranking and every pair whose verdict the labels change (at most
    :data:`MAX_SHOWN_PAIRS` of those), in the corrected ranking's order."""
    if len(j.pairs) <= MAX_SHOWN_PAIRS:
        return list(j.pairs)
    order = {m.model: i for i, m in enumerate(j.models)}
    changed = [p for p in j.pairs if p.verdict(j.level, judge=True) != p.verdict(j.level)][:MAX_SHOWN_PAIRS]
    keep = {id(p) for p in changed}
    return [p for p in j.pairs if abs(order[p.a] - order[p.b]) == 1 or id(p) in keep]
