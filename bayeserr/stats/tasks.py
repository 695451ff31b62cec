"""Tasks as a sample: a multi-task leaderboard read over *tasks like these*
(``docs/methods.md`` §3.15).

Model j's true score on task t is ``θ_jt = μ_j + u_jt``: the tasks are a random
sample from a population of tasks, ``u_t`` their effects (a task's difficulty and
the model × task interaction, any covariance across models), and ``μ_j`` the
model's mean over that population, each task weighing the same — the estimand.
Task t's observed mean ``ȳ_jt`` adds its questions' sampling error ``e_jt`` with
variance ``v_jt`` (its CR2 variance within the task, §3.12).  With T tasks and
``d_t`` a row's per-task value (a model's task mean, or a pair's difference of
task means on the questions both answered)::

    μ̂    = (1/T) Σ_t d_t                                               (T1)
    S²   = Σ_t (d_t − μ̂)² / (T − 1),   SE = S / √T,   t on T − 1 df      (T2)
    τ̂²   = max(0, S² − v̄),   v̄ = (1/T) Σ_t v_t                         (T3)
    new task:  μ̂ ± t_{T−1}(1 − α/2) · S · √(1 + 1/T)                   (T4)

(T2) is exact for normal task effects and is the Knapp–Hartung (2003) variance
with equal weights: ``E[S²] = τ² + v̄`` whatever the tasks' sizes, so the
questions' noise inside each task mean is *in* the spread of the task means
and nothing is ignored; the within-task variances are needed only to split
that spread (T3): between tasks (more tasks help) and within tasks (more
questions per task help).  (T4) predicts the value a new task of the same kind
would show, its own questions' noise included.

A model's rank in a new task (:func:`conformal_rank_interval`): the T + 1 rank
vectors of T observed tasks and a new one are exchangeable, so for each model
the new rank falls below the k-th smallest of its T observed ranks with
probability at most ``k/(T + 1)`` (equality without ties), and the interval
between the k-th smallest and the k-th largest covers it with probability at
least ``1 − 2k/(T + 1)`` — distribution-free (split conformal prediction,
Vovk et al. 2005; Neuhof & Benjamini 2026 build leaderboard rank prediction
intervals the same way).  ``k = ⌊α(T + 1)/2⌋``; with too few tasks for k ≥ 1
the shortest non-trivial interval (k = 1) is given with the level it attains.

All functions broadcast over leading axes (models, pairs, replicates); the last
axis is the tasks.  No I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TaskSampleRows:
    """Per row: (T1)–(T4) over its T tasks."""

    mean: np.ndarray      #: μ̂ (T1)
    se: np.ndarray        #: S/√T (T2)
    df: float             #: T − 1
    lower: np.ndarray     #: μ̂ − t_{T−1}·SE
    upper: np.ndarray
    spread: np.ndarray    #: S², the observed variance of the task values
    within: np.ndarray    #: v̄, the mean sampling variance of a task's value
    between: np.ndarray   #: τ̂² (T3)
    new_lower: np.ndarray  #: (T4)
    new_upper: np.ndarray


def task_sample(values, variances, level: float = 0.95) -> TaskSampleRows:
    """(T1)–(T4) of each row of ``values`` (..., T), the per-task values, with
    ``variances`` (..., T) their sampling variances (``docs/methods.md`` §3.15).
    Needs T ≥ 2 (T − 1 df) and finite values."""
    from bayeserr.stats.distributions import t_ppf
    d = np.asarray(values, dtype=float)
    v = np.asarray(variances, dtype=float)
    T = d.shape[-1]
    if T < 2:
        raise ValueError("tasks as a sample need at least two tasks (T − 1 df)")
    mean = d.mean(axis=-1)
    s2 = d.var(axis=-1, ddof=1)
    se = np.sqrt(s2 / T)
    crit = float(t_ppf(0.5 + level / 2, T - 1))
    with np.errstate(invalid="ignore"):
        within = np.nanmean(v, axis=-1)  # a task without a variance (one question) is left out of v̄
    pred = crit * np.sqrt(s2 * (1.0 + 1.0 / T))
    return TaskSampleRows(mean=mean, se=se, df=float(T - 1), lower=mean - crit * se, upper=mean + crit * se,
                          spread=s2, within=within, between=np.maximum(s2 - within, 0.0),
                          new_lower=mean - pred, new_upper=mean + pred)


def competition_ranks(values) -> np.ndarray:
    """Rank of each row within each column (last axis: the tasks; 1 = highest value);
    equal values share the better rank ("1, 2, 2, 4")."""
    x = np.asarray(values, dtype=float)
    return 1 + (x[None, :, ...] > x[:, None, ...]).sum(axis=1)


def conformal_k(T: int, level: float) -> tuple[int, float]:
    """``(k, attained)``: the order statistic of :func:`conformal_rank_interval` from T tasks
    at ``level`` (``k = ⌊(1 − level)(T + 1)/2⌋``, at least 1) and the coverage it
    guarantees, ``1 − 2k/(T + 1)`` (below ``level`` when T is too small for k ≥ 1)."""
    k = max(1, int(math.floor((1.0 - level) * (T + 1) / 2 + 1e-9)))
    return k, 1.0 - 2.0 * k / (T + 1)


def conformal_rank_interval(ranks, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, float]:
    """``(low, high, attained)``: each model's rank prediction interval for a new task from
    its ranks in T tasks (``ranks`` (M, T)): the k-th smallest and the k-th largest of its T
    ranks (:func:`conformal_k`; module docstring)."""
    r = np.sort(np.asarray(ranks), axis=-1)
    T = r.shape[-1]
    k, attained = conformal_k(T, level)
    return r[..., k - 1], r[..., T - k], attained


def leave_one_task_out(values, level: float = 0.95) -> tuple[float, int, float]:
    """``(coverage, cases, attained)``: hold each task out in turn, predict every model's rank
    in it from the other T − 1 tasks (:func:`conformal_rank_interval`) and count how often the
    held-out rank lies in its interval; ``attained`` is the guarantee at T − 1 tasks.  The
    check of ``docs/methods.md`` §3.15 on real leaderboards."""
    ranks = competition_ranks(values)          # (M, T): ranks within each task, all models
    T = ranks.shape[-1]
    hits = 0
    for t in range(T):
        lo, hi, attained = conformal_rank_interval(np.delete(ranks, t, axis=-1), level)
        hits += int(((ranks[:, t] >= lo) & (ranks[:, t] <= hi)).sum())
    return hits / ranks.size, int(ranks.size), attained
