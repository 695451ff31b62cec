"""Warnings a report prints where they apply (SPEC §2, §3).

A :class:`Caveat` is data, not a ``warnings.warn`` call: reports collect them
and print them after the tables (JSON: the ``warnings`` list).
"""

from __future__ import annotations

from bayeserr.base.caveat import Caveat
from bayeserr.registries.methods import INTERVALS, hierarchical_misses_score, recommendation

SMALL_N = 100
FEW_DF = 10  #: Bell–McCaffrey df below which the clustered SE is itself noisy (§2.9)




def for_model(score) -> list[Caveat]:
    """The SPEC §2 warnings that apply to one model's :class:`~bayeserr.analyses.scoring.ModelScore`."""
    out = []
    m = score.model
    rec = recommendation(score)
    if score.n_questions < SMALL_N and rec.key == "clt":  # the table shows a CLT interval
        out.append(Caveat("small_n", m, facts={"n": score.n_questions}, message=f"only {score.n_questions} "
                          "questions: its CLT interval, the one the report shows, is unreliable below "
                          "100 questions; with --bayes off no Bayesian interval was computed (--bayes fast "
                          "adds one)."))
    if score.mean in (0.0, 1.0):
        out.append(Caveat("degenerate_clt", m, facts={"mean": score.mean}, message=f"every score is {score.mean:g}: the CLT standard "
                          "error collapses to 0 and its interval to a point; the exact and "
                          "Bayesian intervals do not."))
    if score.n_clusters == 1:
        out.append(Caveat("single_cluster", m, "every answered question is in one cluster: no "
                          "cluster-level inference is possible, so the clustered columns (and μ, the mean "
                          "rate of a new cluster) are empty; "
                          "the CLT and exact intervals treat the questions as independent, which "
                          "understates the uncertainty if questions within the cluster are related."))
    elif score.df is not None and score.df < FEW_DF:
        out.append(Caveat("few_clusters", m, facts={"df": score.df, "c_eff": score.effective_clusters},
                          message=f"{score.n_clusters} clusters behave like "
                          f"{score.effective_clusters:.1f} equal ones (Bell–McCaffrey df "
                          f"{score.df:.1f} < {FEW_DF}): the clustered standard error is itself "
                          "noisy, and the clustered interval uses t on that df, so it is wide "
                          "for a reason; the paper's z-based clustered interval is too narrow here."))
    outside = [key for key in ("clt", "clustered", "clustered_paper")
               if score.intervals.get(key) is not None
               and (score.intervals[key][0] < 0 or score.intervals[key][1] > 1)]
    if outside:
        shown = (f"the table shows the {INTERVALS[rec.key].label} interval cut to [0, 1] (which keeps "
                 "its coverage, as the mean score cannot leave [0, 1]); --bayes fast gives an interval "
                 "inside [0, 1] by construction" if rec.cut else
                 f"the table shows the {rec.label} interval, which stays inside")
        names = ", ".join(f"{INTERVALS[k].label} [{score.intervals[k][0]:.4f}, {score.intervals[k][1]:.4f}]"
                          for k in outside)
        out.append(Caveat("interval_outside_unit", m, facts={"cut": rec.cut}, message=f"{names} leave{'s' if len(outside) == 1 else ''} "
                          f"[0, 1]; {shown}."))
    if hierarchical_misses_score(score):
        hier = score.intervals["hierarchical_posterior"]
        out.append(Caveat("hierarchical_misfit", m, facts={"mean": score.mean}, message=f"the hierarchical posterior [{100 * hier[0]:.2f}, "
                          f"{100 * hier[1]:.2f}] does not contain the score {100 * score.mean:.2f} (points): a Beta "
                          "distribution of question accuracies fits these answers poorly (for "
                          "example many questions all right or all wrong), which pulls its mean "
                          "away from the score; read the clustered or cluster-effect interval."))
    return out


def early_stopped(rows) -> list[Caveat]:
    """A warning for each input log that Inspect's early stopping ended before its last
    sample (the reader's note, :data:`bayeserr.data.readers.inspect_logs.EARLY_STOP_NOTE`): its fixed-n
    intervals and p-values ignore the data-dependent stop; the log's anytime-valid
    sequence (quoted) is the valid one (``docs/guide/early-stopping.md``)."""
    from bayeserr.data.readers import EARLY_STOP_NOTE
    notes = rows.get("notes") if isinstance(rows, dict) else None
    return [Caveat("early_stopped", None, n) for n in notes or () if isinstance(n, str) and EARLY_STOP_NOTE in n]


def look_alike_names(names) -> list[Caveat]:
    """One warning naming the models whose names differ only in invisible characters
    or Unicode normalisation (shown identically in every table), written out so they differ."""
    from bayeserr.base.names import codepoints, look_alike
    groups = look_alike(names)
    if not groups:
        return []
    listed = "; ".join(" vs ".join(f"'{codepoints(n)}'" for n in g) for g in groups)
    return [Caveat("look_alike_names", None, facts={"groups": groups}, message=(
        f"{sum(map(len, groups))} models have names that look the same as another's but differ in "
        f"invisible characters or in how accents are encoded, written here with their code points: "
        f"{listed}. Their rows are separate models; rename them in the input if that is not meant."))]


def mcnemar_clustered() -> Caveat:
    return Caveat("mcnemar_clustered", None, "McNemar's test assumes independent questions, "
                  "which clustering breaks (it can reject a true null far more often than its "
                  "level): its p-values are shown for reference only and do not confirm the "
                  "headline, which is the CR2 t-test on the paired differences.")


def pair_single_cluster(a: str, b: str) -> Caveat:
    return Caveat("pair_single_cluster", None, pair=(a, b), message=f"{a} vs {b}: their common questions lie in one "
                  "cluster, so no cluster-level test is possible; the headline uses the paired "
                  "SE (M7), which assumes independent questions.")


def unpaired_dropped(a: str, b: str, n: int, only_a: int, only_b: int) -> Caveat:
    return Caveat("unpaired_dropped", None, pair=(a, b), facts={"n": n, "only_a": only_a, "only_b": only_b},
                  message=f"{a} vs {b}: compared on the {n} questions both "
                  f"answered; dropped {only_a} answered only by {a} and {only_b} answered "
                  f"only by {b} (--on-unpaired drop).")


def pair_skipped(a: str, b: str, n: int) -> Caveat:
    return Caveat("pair_not_comparable", None, pair=(a, b), message=f"{a} vs {b}: only {n} question(s) in common, "
                  "too few for a paired comparison; the pair is left out of the table.")


def zero_se(a: str, b: str) -> Caveat:
    return Caveat("zero_se", None, pair=(a, b), message=f"{a} vs {b}: every question differs by the same amount, so "
                  "the standard error of the difference is 0: the test statistic is infinite "
                  "(null in JSON) and p = 0; the interval is a single point.")


def pair_estimand_differs(a: str, b: str, diff: float, prob: float) -> Caveat:
    """The clustered pair posterior and the question-weighted difference point
    different ways (``docs/methods.md`` §5.3): one warning per pair."""
    return Caveat("pair_estimand_differs", None, pair=(a, b), message=f"{a} vs {b}: the difference is {diff * 100:+.1f} "
                  f"points but P(A > B) = {prob:.2f}. The difference weights every question "
                  "equally; the Bayesian pair model estimates the mean difference over the "
                  "population of clusters, weighting clusters by precision (towards the plain "
                  "mean of cluster means), so one large cluster counts for less. They point "
                  "different ways when cluster effects vary with cluster size: read the "
                  "per-cluster differences before concluding.")


def pair_few_df(a: str, b: str, df: float) -> Caveat:
    return Caveat("pair_few_df", None, pair=(a, b), facts={"df": df}, message=(
        f"{a} vs {b} is declared different on {df:.1f} Bell–McCaffrey df (two or so effective clusters): "
        "the t reference then rests on normal cluster effects the data cannot check; treat the verdict as "
        "tentative, and prefer more clusters."))


def family_cannot_decide(family: dict) -> Caveat:
    j = family["joint"]
    return Caveat("family_cannot_decide", None, (
        f"with {j['draws']:,} weight vectors of the joint wild cluster bootstrap (too few clusters) the "
        f"smallest adjusted p-value is {j['min_p']:.2g}, above {1 - family['level']:.2g}: no pair can be "
        "declared different and every model is tied with the best, whatever the gaps. More clusters (or "
        "--no-cluster, if the clusters do not matter) would let the data decide."))


def identical_scores(a: str, b: str, n: int) -> Caveat:
    """A pair whose every common question has the same score for both models."""
    return Caveat("zero_se", None, pair=(a, b), message=f"{a} vs {b}: the same score on each of their {n} common "
                  "questions, so the paired SE is 0 and the interval the single point 0: this "
                  "says the models agreed here, not that they are equal elsewhere. Read McNemar "
                  "exact and P(A > B), or compare on more questions.")


# ------------------------------------------------------------------ several of a kind as one line

#: subjects named in a kind's summary line before "… and N more"
NAMES_SHOWN = 12
#: up to this many warnings of a kind without a summary template are printed whole, in one line
FEW_ALONE = 3


def summary(warnings: list, names: int | None = NAMES_SHOWN) -> str:
    """Several warnings of one kind (one ``code``) as one line: the models or
    pairs they concern and what they say, with the range of their numbers
    (every single warning stays in the JSON).  One warning reads as itself."""
    first = warnings[0]
    general = _GENERAL.get(first.code)
    if len(warnings) == 1 or (len(warnings) <= FEW_ALONE and not (general and all(w.facts for w in warnings))):
        return " ".join(dict.fromkeys(_alone(w) for w in warnings))
    subjects = list(dict.fromkeys(w.subject for w in warnings if w.subject))
    if not subjects:  # report-level warnings: each says something different
        return " ".join(dict.fromkeys(w.message for w in warnings))
    if general is not None and all(w.facts for w in warnings):
        text = general(warnings)
    elif all(w.message == first.message for w in warnings):
        text = first.message
    else:
        text = (f"for example, {first.subject + ': ' if first.pair is None else ''}{first.message} "
                "Each one is in --format json.")
    kind = "pairs" if first.pair is not None else "models"
    if first.code in _UNLISTED:  # the counts say it; a list of hundreds of pairs would not
        return f"{len(subjects)} {kind} {text}"
    return f"{len(subjects)} {kind} ({_listing(subjects, names)}): {text}"


def _alone(w) -> str:
    return f"{w.model}: {w.message}" if w.model and w.pair is None else w.message


def _listing(subjects: list, names: int | None) -> str:
    if names is None or len(subjects) <= names:
        return ", ".join(subjects)
    return ", ".join(subjects[:names]) + f", … and {len(subjects) - names} more, all in --format json"


def _span(warnings, key: str, fmt: str = "{:.1f}") -> str:
    values = [w.facts[key] for w in warnings]
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def _unpaired(ws) -> str:
    worst = max(ws, key=lambda w: w.facts["only_a"] + w.facts["only_b"])
    a, b = worst.pair
    return (f"were each compared on the questions both answered (--on-unpaired drop): per pair, "
            f"{_span(ws, 'only_a', '{:d}')} questions answered only by the first model and "
            f"{_span(ws, 'only_b', '{:d}')} only by the second were left out; most in {a} vs {b} "
            f"({worst.facts['only_a']} only by {a}, {worst.facts['only_b']} only by {b}). Each pair's "
            "counts are in --format json.")


#: kinds whose summary line gives counts instead of naming every pair
_UNLISTED = {"unpaired_dropped"}


_GENERAL = {
    "few_clusters": lambda ws: (
        f"Bell–McCaffrey df below {FEW_DF} (df {_span(ws, 'df')}; effective clusters {_span(ws, 'c_eff')}): "
        "the clustered standard error is itself noisy, and the clustered interval uses t on that df, so it "
        "is wide for a reason; the paper's z-based clustered interval is too narrow here."),
    "small_n": lambda ws: (
        f"{_span(ws, 'n', '{:d}')} questions: their CLT interval, the one the report shows, is unreliable "
        f"below {SMALL_N} questions; with --bayes off no Bayesian interval was computed (--bayes fast adds one)."),
    "unpaired_dropped": _unpaired,
    "degenerate_clt": lambda ws: (
        "every score is 0, or every score is 1: the CLT standard error collapses to 0 and its interval to a "
        "point; the exact and Bayesian intervals do not."),
    "interval_outside_unit": lambda ws: (
        "a CLT or clustered interval leaves [0, 1]; the table shows one that stays inside, named in its "
        "Method column" + (" ('cut to [0, 1]': none inside by construction was available, --bayes off)"
                           if any(w.facts["cut"] for w in ws) else "") + "."),
    "hierarchical_misfit": lambda ws: (
        "the hierarchical posterior does not contain the score: a Beta distribution of question accuracies "
        "fits these answers poorly (for example many questions all right or all wrong), which pulls its "
        "mean away from the score; read the clustered or cluster-effect interval."),
    "pair_few_df": lambda ws: (
        f"declared different on {_span(ws, 'df')} Bell–McCaffrey df (two or so effective clusters): the t "
        "reference then rests on normal cluster effects the data cannot check; treat these verdicts as "
        "tentative, and prefer more clusters."),
}
