"""Suite scores: a weighted mean of task means, with tasks as fixed strata
(``docs/methods.md`` §3.12).

An eval suite is several tasks; each question belongs to one task, and
clusters (if any) live inside tasks.  The estimand is fixed by the weights:
``θ = Σ_t w_t μ_t`` over *these* tasks (``Σ w_t = 1``), where ``μ_t`` is the
mean score of the population of questions task ``t`` samples from.  The
weights are chosen, not estimated:

* ``macro``: ``w_t = 1/T`` (each task counts the same);
* ``size``: ``w_t = n_t / n`` (each question counts the same: the pooled mean);
* user weights, normalised to sum to 1.

With ``ȳ_t`` the task mean and ``V_t`` its CR2 variance (M4b, within the
task's clusters; questions are their own clusters in a task without them)::

    θ̂   = Σ_t w_t ȳ_t
    V    = Σ_t w_t² V_t                                              (S1)
    df   = V² / Σ_t (w_t² V_t)² / ν_t                                (S2)

Tasks are sampled independently, so the variances add (S1); this equals the
CR2 variance of the contrast ``wᵀβ`` in the stacked regression of every score
on task indicators with clusters nested in tasks (the design is block
diagonal, so each cluster's CR2 adjustment involves its own task only).  (S2)
is the Welch–Satterthwaite combination (Satterthwaite 1946) of the per-task
Bell–McCaffrey df ``ν_t`` (Bell & McCaffrey 2002): a task whose mean is
nearly certain (small ``w_t² V_t``) adds little to the df, and one task with
few clusters and a large weight pulls it down.  With one task, ``df = ν_1``.

All functions work along the last axis (questions) and broadcast over
leading axes (models, pairs, simulation replicates).  NaN in ``y`` means "not
answered".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.stats.fewclusters import cr2_mean

WEIGHTINGS = ("macro", "size")


@dataclass(frozen=True)
class SuiteMean:
    """Result of :func:`suite_mean` (arrays over the leading axes; ``task_*`` add a last axis T)."""

    mean: np.ndarray
    se: np.ndarray
    df: np.ndarray
    weights: np.ndarray       #: (..., T) the weights used (size weights differ by row)
    task_mean: np.ndarray     #: (..., T)
    task_se: np.ndarray       #: (..., T) CR2 SE of each task mean
    task_df: np.ndarray       #: (..., T) Bell–McCaffrey df of each task
    task_n: np.ndarray        #: (..., T) answered questions per task


def task_weights(weights, task_n) -> np.ndarray:
    """The normalised weights ``(..., T)``: ``"macro"``, ``"size"`` (from ``task_n``)
    or a length-T sequence of non-negative numbers (normalised to sum to 1)."""
    task_n = np.asarray(task_n, dtype=float)
    if isinstance(weights, str):
        if weights == "macro":
            return np.full(task_n.shape, 1.0 / task_n.shape[-1])
        if weights == "size":
            with np.errstate(invalid="ignore", divide="ignore"):
                return task_n / task_n.sum(axis=-1, keepdims=True)
        raise ValueError(f"weights must be one of {WEIGHTINGS} or numbers, got {weights!r}")
    w = np.asarray(weights, dtype=float)
    if w.shape != task_n.shape[-1:] or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {task_n.shape[-1]} non-negative numbers, not all 0; got {weights!r}")
    return np.broadcast_to(w / w.sum(), task_n.shape).copy()


def crossed_variance(y, tasks, codes, w) -> np.ndarray:
    """CR2 variance of ``Σ_t w_t ȳ_t`` when clusters cross tasks (S3; ``docs/methods.md`` §3.12).

    In the stacked regression on task indicators the hat block of cluster c is
    block diagonal by task, ``(n_ct/n_t)``-scaled all-ones blocks, so its CR2
    adjustment is ``(1 − n_ct/n_t)^(−1/2)`` on each part and::

        V = Σ_c ( Σ_t (w_t/n_t) · q_ct^(1/2) · S_ct )²,   q_ct = 1/(1 − n_ct/n_t)        (S3)

    with ``S_ct`` the sum of residuals ``y_i − ȳ_t`` of cluster c in task t.  With
    clusters nested in tasks it is (S1).  ``y`` (..., n) with NaN for "not answered";
    ``w`` (..., T).
    """
    y = np.asarray(y, dtype=float)
    T, C = int(tasks.max()) + 1, int(codes.max()) + 1
    answered = ~np.isnan(y)
    total = np.zeros(y.shape[:-1] + (C,))
    for t in range(T):
        idx = np.flatnonzero(tasks == t)
        yt, at = y[..., idx], answered[..., idx]
        n_t = at.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(at, yt, 0.0).sum(axis=-1) / n_t
            e = np.where(at, yt - mean[..., None], 0.0)
            onehot = (codes[idx][:, None] == np.arange(C)[None, :]).astype(float)
            S = e @ onehot                                   # (..., C) residual sums of cluster c in t
            n_ct = at.astype(float) @ onehot
            q = np.where(n_ct > 0, 1.0 / (1.0 - n_ct / n_t[..., None]), 0.0)
            total += np.where(n_ct > 0, (w[..., t] / n_t)[..., None] * np.sqrt(q) * S, 0.0)
    return (total ** 2).sum(axis=-1)


def suite_mean(y, tasks, codes=None, weights="macro") -> SuiteMean:
    """Suite score, its SE (S1) and Satterthwaite–Bell–McCaffrey df (S2) per row.

    ``y`` (..., n) scores (NaN: not answered); ``tasks`` (n,) integer task
    codes 0..T−1; ``codes`` (n,) integer cluster codes (None: each question
    its own cluster); ``weights`` as in :func:`task_weights`.  A task a row did
    not answer at all makes that row's suite score NaN (its estimand needs
    every task with positive weight); so does a task with one cluster.
    """
    y = np.asarray(y, dtype=float)
    tasks = np.asarray(tasks)
    n = y.shape[-1]
    if tasks.shape != (n,):
        raise ValueError(f"tasks must have shape ({n},), got {tasks.shape}")
    codes = np.arange(n) if codes is None else np.asarray(codes)
    T = int(tasks.max()) + 1 if n else 0
    parts = []
    for t in range(T):
        idx = np.flatnonzero(tasks == t)
        _, local = np.unique(codes[idx], return_inverse=True)
        parts.append(cr2_mean(y[..., idx], local))
    stack = lambda attr: np.stack([np.asarray(getattr(p, attr), dtype=float) for p in parts], axis=-1)  # noqa: E731
    m, se, df, tn = stack("mean"), stack("se"), stack("df"), stack("n")
    w = task_weights(weights, tn)
    used = w > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        contrib = np.where(used, w * w * se * se, 0.0)
        var = contrib.sum(axis=-1)
        mean = np.where(used, w * m, 0.0).sum(axis=-1)
        bad = (used & ~(np.isfinite(m) & np.isfinite(se))).any(axis=-1)
        denom = np.where(used & (contrib > 0), contrib**2 / df, 0.0).sum(axis=-1)
        dof = np.where(denom > 0, var**2 / denom, np.nan)
    return SuiteMean(mean=np.where(bad, np.nan, mean), se=np.where(bad, np.nan, np.sqrt(var)),
                     df=np.where(bad, np.nan, dof), weights=w, task_mean=m, task_se=se, task_df=df,
                     task_n=tn)
