"""Warnings a report prints where they apply (SPEC §2, §3).

A :class:`Caveat` is data, not a ``warnings.warn`` call: reports collect them
and print them after the tables (JSON: the ``warnings`` list).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

SMALL_N = 100
FEW_CLUSTERS = 20


@dataclass(frozen=True)
class Caveat:
    code: str
    model: str | None
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


def for_model(score) -> list[Caveat]:
    """The SPEC §2 warnings that apply to one model's :class:`~bayeserr.scoring.ModelScore`."""
    out = []
    m = score.model
    if score.n_questions < SMALL_N:
        out.append(Caveat("small_n", m, f"only {score.n_questions} questions: CLT intervals are "
                          "unreliable below 100; prefer the exact or Bayesian intervals."))
    if score.mean in (0.0, 1.0):
        out.append(Caveat("degenerate_clt", m, f"every score is {score.mean:g}: the CLT standard "
                          "error collapses to 0 and its interval to a point; the exact and "
                          "Bayesian intervals do not."))
    if score.n_clusters is not None and score.n_clusters < FEW_CLUSTERS:
        out.append(Caveat("few_clusters", m, f"only {score.n_clusters} clusters: the clustered "
                          "standard error is itself noisy below 20 clusters."))
    for key in ("clt", "clustered"):
        ci = score.intervals.get(key)
        if ci is not None and (ci[0] < 0 or ci[1] > 1):
            out.append(Caveat("interval_outside_unit", m, f"the {key} interval [{ci[0]:.4f}, "
                              f"{ci[1]:.4f}] leaves [0, 1]; use an exact or Bayesian interval."))
    return out


def mcnemar_clustered() -> Caveat:
    return Caveat("mcnemar_clustered", None, "McNemar's test assumes independent questions, "
                  "which clustering breaks: its p-values are shown for reference and the "
                  "decision rests on the clustered paired SE (M8).")


def unpaired_dropped(a: str, b: str, n: int, only_a: int, only_b: int) -> Caveat:
    return Caveat("unpaired_dropped", None, f"{a} vs {b}: compared on the {n} questions both "
                  f"answered; dropped {only_a} answered only by {a} and {only_b} answered "
                  f"only by {b} (--on-unpaired drop).")


def pair_skipped(a: str, b: str, n: int) -> Caveat:
    return Caveat("pair_not_comparable", None, f"{a} vs {b}: only {n} question(s) in common, "
                  "too few for a paired comparison; the pair is left out of the table.")
