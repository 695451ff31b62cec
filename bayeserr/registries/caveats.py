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
        out.append(Caveat("small_n", m, f"only {score.n_questions} questions: the table's CLT interval "
                          "is unreliable below 100 questions; --bayes fast gives the Bayesian "
                          "interval the table would show instead."))
    if score.mean in (0.0, 1.0):
        out.append(Caveat("degenerate_clt", m, f"every score is {score.mean:g}: the CLT standard "
                          "error collapses to 0 and its interval to a point; the exact and "
                          "Bayesian intervals do not."))
    if score.n_clusters == 1:
        out.append(Caveat("single_cluster", m, "every answered question is in one cluster: no "
                          "cluster-level inference is possible, so the clustered columns (and μ, the mean "
                          "rate of a new cluster) are empty; "
                          "the CLT and exact intervals treat the questions as independent, which "
                          "understates the uncertainty if questions within the cluster are related."))
    elif score.df is not None and score.df < FEW_DF:
        out.append(Caveat("few_clusters", m, f"{score.n_clusters} clusters behave like "
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
        out.append(Caveat("interval_outside_unit", m, f"{names} leave{'s' if len(outside) == 1 else ''} "
                          f"[0, 1]; {shown}."))
    if hierarchical_misses_score(score):
        hier = score.intervals["hierarchical_posterior"]
        out.append(Caveat("hierarchical_misfit", m, f"the hierarchical posterior [{hier[0]:.4f}, "
                          f"{hier[1]:.4f}] does not contain the score {score.mean:.4f}: a Beta "
                          "distribution of question accuracies fits these answers poorly (for "
                          "example many questions all right or all wrong), which pulls its mean "
                          "away from the score; read the clustered or cluster-effect interval."))
    return out


def mcnemar_clustered() -> Caveat:
    return Caveat("mcnemar_clustered", None, "McNemar's test assumes independent questions, "
                  "which clustering breaks (it can reject a true null far more often than its "
                  "level): its p-values are shown for reference only and do not confirm the "
                  "headline, which is the CR2 t-test on the paired differences.")


def pair_single_cluster(a: str, b: str) -> Caveat:
    return Caveat("pair_single_cluster", None, f"{a} vs {b}: their common questions lie in one "
                  "cluster, so no cluster-level test is possible; the headline uses the paired "
                  "SE (M7), which assumes independent questions.")


def unpaired_dropped(a: str, b: str, n: int, only_a: int, only_b: int) -> Caveat:
    return Caveat("unpaired_dropped", None, f"{a} vs {b}: compared on the {n} questions both "
                  f"answered; dropped {only_a} answered only by {a} and {only_b} answered "
                  f"only by {b} (--on-unpaired drop).")


def pair_skipped(a: str, b: str, n: int) -> Caveat:
    return Caveat("pair_not_comparable", None, f"{a} vs {b}: only {n} question(s) in common, "
                  "too few for a paired comparison; the pair is left out of the table.")


def zero_se(a: str, b: str) -> Caveat:
    return Caveat("zero_se", None, f"{a} vs {b}: every question differs by the same amount, so "
                  "the standard error of the difference is 0: the test statistic is infinite "
                  "(null in JSON) and p = 0; the interval is a single point.")


def pair_estimand_differs(a: str, b: str, diff: float, prob: float) -> Caveat:
    """The clustered pair posterior and the question-weighted difference point
    different ways (``docs/methods.md`` §5.3): one warning per pair."""
    return Caveat("pair_estimand_differs", None, f"{a} vs {b}: the difference is {diff * 100:+.1f} "
                  f"points but P(A > B) = {prob:.2f}. The difference weights every question "
                  "equally; the Bayesian pair model estimates the mean difference over the "
                  "population of clusters, weighting clusters by precision (towards the plain "
                  "mean of cluster means), so one large cluster counts for less. They point "
                  "different ways when cluster effects vary with cluster size: read the "
                  "per-cluster differences before concluding.")


def pair_few_df(a: str, b: str, df: float) -> Caveat:
    return Caveat("pair_few_df", None, (
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
    return Caveat("zero_se", None, f"{a} vs {b}: the same score on each of their {n} common "
                  "questions, so the paired SE is 0 and the interval the single point 0: this "
                  "says the models agreed here, not that they are equal elsewhere. Read McNemar "
                  "exact and P(A > B), or compare on more questions.")
