"""The paper's estimators as pure array functions (SPEC §2, Miller 2024).

Every function here takes plain NumPy arrays of per-question scores ``s_i``
(already averaged over samples, no NaN) and returns numbers; the layers above
(:mod:`bayeserr.analyses.scoring`, :mod:`bayeserr.compare`) pick the arrays out of the
dataset.  One place per formula; the docstring names the equation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

CLUSTER_CORRECTIONS = ("paper", "cr1")


def z_value(level: float) -> float:
    """Two-sided normal quantile ``z = Φ⁻¹(1 − α/2)`` for a confidence ``level`` (M3)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level}); use e.g. 0.95.")
    return normal_quantile(0.5 + level / 2)


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p), the standard normal quantile.  The standard library's (Wichura's
    AS 241, within 1e-15 of ``scipy.stats.norm.ppf``), not scipy's: importing
    ``scipy.stats`` costs most of a second, which every command would pay."""
    return NormalDist().inv_cdf(float(p))


def se_clt(s: np.ndarray):
    """(M1) ``SE_clt = sqrt( Σ (s_i − s̄)² / ((n − 1) n) )``: sample sd (ddof 1) / √n.

    Along the last axis, so a (replicates × n) array gives one SE per replicate; NaN
    (not answered) is skipped, n counting the answered values of each row.
    """
    s = np.asarray(s, dtype=float)
    if np.isnan(s).any():
        n = (~np.isnan(s)).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows with fewer than two answers: NaN
            return np.sqrt(np.nanvar(s, ddof=1, axis=-1) / n)
    return np.sqrt(np.var(s, ddof=1, axis=-1) / s.shape[-1])


def se_bernoulli(mean, n):
    """(M2) ``SE_bernoulli = sqrt( s̄ (1 − s̄) / n )``, for 0/1 scores with K = 1."""
    return np.sqrt(np.asarray(mean) * (1.0 - np.asarray(mean)) / n)


def normal_interval(estimate, se, level: float) -> np.ndarray:
    """(M3) ``estimate ± z·SE`` with the exact normal quantile for ``level``."""
    half = z_value(level) * np.asarray(se, dtype=float)
    return np.stack([estimate - half, estimate + half], axis=-1)


def cluster_sums(e: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``Σ_{i∈c} e_i`` for each cluster code ``c`` along the last axis
    (codes need not be contiguous; empty codes give 0)."""
    if e.ndim == 1:
        return np.bincount(codes, weights=e)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    out = np.zeros(e.shape[:-1] + (int(codes.max()) + 1,))
    out[..., sorted_codes[starts]] = np.add.reduceat(e[..., order], starts, axis=-1)
    return out


def se_clustered(s: np.ndarray, codes: np.ndarray, correction: str = "paper"):
    """Clustered standard error of the mean (M4; applied to differences it is M8).

    ``correction="paper"`` (default) is Miller's equation 4::

        SE_cl² = SE_clt² + (1/n²) Σ_c Σ_{i≠j∈c} e_i e_j,    e_i = s_i − s̄

    using ``Σ_{i≠j∈c} e_i e_j = (Σ_{i∈c} e_i)² − Σ_{i∈c} e_i²``.  With one
    question per cluster it equals :func:`se_clt` exactly.

    ``correction="cr1"`` is the finite-cluster (CR1) version that Inspect AI's
    ``stderr(cluster=...)`` and statsmodels' cluster-robust OLS compute::

        SE² = C/(C − 1) · Σ_c (Σ_{i∈c} e_i)² / n²

    Works along the last axis (one SE per row of a replicates × n array).
    """
    s = np.asarray(s, dtype=float)
    n = s.shape[-1]
    e = s - s.mean(axis=-1, keepdims=True)
    sums = cluster_sums(e, codes)
    if correction == "paper":
        cross = (sums**2).sum(axis=-1) - (e**2).sum(axis=-1)
        return np.sqrt(np.maximum(se_clt(s) ** 2 + cross / n**2, 0.0))
    if correction == "cr1":
        c = int(np.count_nonzero(np.bincount(codes)))
        if c < 2:
            return np.full(s.shape[:-1], np.nan) if s.ndim > 1 else np.float64("nan")
        return np.sqrt(c / (c - 1) * (sums**2).sum(axis=-1) / n**2)
    raise ValueError(f"cluster_correction must be one of {CLUSTER_CORRECTIONS}, got {correction!r}")


def design_effect(se_cluster, se_plain):
    """Design effect ``SE_cl² / SE_clt²`` (SPEC §2); NaN where SE_clt is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.asarray(se_plain) == 0, np.nan, np.asarray(se_cluster) ** 2 / np.asarray(se_plain) ** 2)[()]


@dataclass(frozen=True)
class VarianceComponents:
    """Law-of-total-variance split of per-question scores (paper §3.1)."""

    between_questions: float  #: Var(x), spread of the per-question true means (≥ 0)
    within_questions: float  #: E[σ²], mean within-question answer variance
    k_recommended: int | None  #: smallest K with E[σ²]/K < Var(x)/10
    #: the subtraction for Var(x) came out negative (answer noise larger than
    #: the spread of the question means) and was clamped to 0
    between_clamped: bool = False

    def to_dict(self) -> dict:
        return {"between_questions": self.between_questions,
                "within_questions": self.within_questions,
                "k_recommended": self.k_recommended,
                "between_clamped": self.between_clamped}


def variance_components(answers: np.ndarray) -> VarianceComponents | None:
    """Split score variance into between- and within-question parts (SPEC §2).

    ``answers`` is ``(question, sample)`` with NaN for missing samples.  Uses::

        E[σ²]  ≈ mean_i var(answers_i, ddof=1)      (questions with K_i ≥ 2)
        Var(x) ≈ Var(s_i) − mean_i(σ_i² / K_i)

    A variance cannot be negative: when the subtraction comes out below 0
    (the answer noise explains all the spread of the question means, which
    happens by chance when Var(x) is small), Var(x) is reported as 0 and
    ``between_clamped`` says so, as the design-effect floor does.

    Recommends the smallest K for which ``E[σ²]/K < Var(x)/10`` ("more
    resamples stop paying off"): ``⌊10 E[σ²] / Var(x)⌋ + 1``; ``None`` when
    Var(x) is 0 (no K is enough).  Returns ``None`` when no question has two
    or more samples.
    """
    k = np.sum(~np.isnan(answers), axis=1)
    rows = answers[k >= 2]
    if rows.shape[0] == 0:
        return None
    sigma2 = np.nanvar(rows, axis=1, ddof=1)
    within = float(sigma2.mean())
    s = np.nanmean(answers[k >= 1], axis=1)
    raw = float(np.var(s, ddof=1) - np.mean(sigma2 / k[k >= 2]))
    clamped = raw < 0
    between = 0.0 if clamped else raw
    k_rec = int(np.floor(10 * within / between)) + 1 if between > 0 else None
    return VarianceComponents(between, within, k_rec, bool(clamped))
