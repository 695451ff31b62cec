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

With ``ȳ_t`` the task mean, ``V_t`` its CR2 variance (M4b, within the task's
clusters; questions are their own clusters in a task without them) and ``ν_t``
its Bell–McCaffrey df::

    θ̂   = Σ_t w_t ȳ_t
    V    = Σ_t w_t² V_t                                              (S1)
    df   = (Σ_t v_t)² / Σ_t v_t² / ν_t,
           v_t = w_t² s_t² (1 + ρ̂ (m_t − 1)) / n_t,   m_t = Σ_c n_c² / n_t        (S2)

Tasks are sampled independently, so the variances add (S1); this equals the
CR2 variance of the contrast ``wᵀβ`` in the stacked regression of every score
on task indicators with clusters nested in tasks (the design is block
diagonal, so each cluster's CR2 adjustment involves its own task only).

(S2) is the Satterthwaite (1946) combination of the per-task Bell–McCaffrey df
with *model-based* task variances ``v_t`` in place of the estimates
``w_t² V_t``: ``s_t²`` is the task's sample variance and ``1 + ρ̂(m_t − 1)`` its
Kish design effect under an intra-cluster correlation ``ρ̂`` pooled over the
tasks (moments of the within-cluster cross products, :func:`pooled_icc`).
With ``ρ̂ = 0`` it is exactly the Bell–McCaffrey df of ``wᵀβ`` in the stacked
regression under the working model "independent errors of variance σ_t²
within task t".  The
estimated ``V_t`` of a task with few clusters is noisy, and in the old
combination a small ``V_t`` also raised the df, so small SEs came with large
df and the t test was liberal (9–17% at a nominal 5% with one task of 2–3
very unequal clusters); ``v_t`` depends on the data only through ``s_t²`` and
the pooled ``ρ̂``.  With one task, ``df = ν_1``; without clusters ``ρ̂ = 0`` and
``v_t = w_t² V_t``, so the df is the old one.

Clusters that cross tasks (S3, :func:`crossed_variance`) get the same
treatment: :func:`crossed_df` is the Bell–McCaffrey df of the contrast under
the same working model (each task's questions independent with variance
``s_t²(1 + ρ̂(m_t − 1))``), which is (S2) when the clusters are nested.

All functions work along the last axis (questions) and broadcast over
leading axes (models, pairs, simulation replicates).  NaN in ``y`` means "not
answered".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.stats.fewclusters import bm_df, cr2_from_sums, residual_cluster_sums

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
    icc: np.ndarray           #: (...) the pooled intra-cluster correlation ρ̂ of the df (S2)
    #: (..., T) each task mean's model-based variance s_t²(1 + ρ̂(m_t − 1))/n_t of (S2); a task of
    #: one question takes the row's variance pooled over its tasks, s_p² = Σ_t SS_t / Σ_t (n_t − 1)
    task_model_var: np.ndarray | None = None


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


@dataclass(frozen=True)
class _TaskMoments:
    """One task's answered count, mean, sample variance and cluster moments per row."""

    n: np.ndarray      #: (...) answered questions
    mean: np.ndarray   #: (...) the task mean ȳ_t
    s2: np.ndarray     #: (...) sample variance Σ(y − ȳ_t)²/(n − 1)
    sizes: np.ndarray  #: (..., C) answered questions per cluster (0: absent)
    S: np.ndarray      #: (..., C) each cluster's sum of residuals y − ȳ_t
    sst: np.ndarray    #: (...) Σ (y − ȳ_t)²


def _task_moments(yt, codes) -> _TaskMoments:
    """:class:`_TaskMoments` of the scores ``yt`` (..., n_t) of one task, clusters ``codes`` (n_t,)."""
    n, mean, e, S, sizes = residual_cluster_sums(yt, codes)
    sst = (e * e).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = np.where(n > 1, sst / np.where(n > 1, n - 1, 1), np.nan)
    return _TaskMoments(n=n, mean=mean, s2=s2, sizes=sizes, S=S, sst=sst)


def pooled_icc(parts) -> np.ndarray:
    """Intra-cluster correlation ρ̂ pooled over tasks, for the df (S2) (``docs/methods.md`` §3.12).

    The working model: in task t a cluster effect of variance ``ρσ_t²`` plus an
    independent error of variance ``(1 − ρ)σ_t²`` (Moulton 1986), ρ common to the
    tasks.  The within-cluster cross products of the residuals ``e = y − ȳ_t``
    estimate it (as in Imbens & Kolesár 2016), with their exact expectation under
    that model (the centering at ȳ_t included, which matters for a dominant cluster)::

        E[S_c² − Σ_{i∈c} e_i²] = σ_t² n_c(n_c − 1) [ρ(1 − 2p_c + Σ_d p_d² + 1/n_t) − 1/n_t],  p_c = n_c/n_t

    so, with s_t² for σ_t² and sums over tasks and their clusters::

        ρ̂ = Σ [ (S_c² − Σ_{i∈c} e_i²)/s_t² + n_c(n_c − 1)/n_t ]  /  Σ n_c(n_c − 1)(1 − 2p_c + Σ_d p_d² + 1/n_t)

    cut to [0, 1]; 0 when no cluster has two answered questions.  Clusters of one
    question add nothing.  ``parts``: each task's moments (``_task_moments``).
    """
    num = den = 0.0
    for p in parts:
        ok = (p.n > 1) & (p.s2 > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            pc = p.sizes / p.n[..., None]
            pairs = p.sizes * (p.sizes - 1.0)
            spread = 1.0 - 2.0 * pc + (pc * pc).sum(axis=-1, keepdims=True) + 1.0 / p.n[..., None]
            num = num + np.where(ok, ((p.S * p.S).sum(axis=-1) - p.sst) / p.s2 + pairs.sum(axis=-1) / p.n, 0.0)
            den = den + np.where(ok, (pairs * spread).sum(axis=-1), 0.0)
    den = np.asarray(den)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.clip(num / np.where(den > 0, den, 1.0), 0.0, 1.0), 0.0)


def _model_variance(p: _TaskMoments, icc) -> np.ndarray:
    """Working-model variance of one question's score in a task: ``s_t²(1 + ρ̂(m_t − 1))``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (p.sizes ** 2).sum(axis=-1) / p.n
    return p.s2 * (1.0 + icc * (m - 1.0))


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


def crossed_df(y, tasks, codes, w) -> np.ndarray:
    """Bell–McCaffrey df of the suite mean when clusters cross tasks (S3; ``docs/methods.md`` §3.12).

    The CR2 variance (S3) is ``Σ_c z_c²`` with ``z_c = Σ_t (w_t/n_t) q_ct^(1/2) S_ct``.
    Under the working model of (S2) (questions of task t independent with variance
    ``σ̃_t² = s_t²(1 + ρ̂(m_t − 1))``) the covariance of z is::

        K = Σ_t (w_t² σ̃_t² / n_t) · ( diag(q_t ∘ p_t) − r_t r_tᵀ ),   p_ct = n_ct/n_t,  r_t = q_t^(1/2) ∘ p_t

    (C×C, one term per task), and the df is Bell & McCaffrey's ``(tr K)² / ‖K‖_F²``,
    computed from the diagonal-plus-rank-T form without forming K.  With clusters
    nested in tasks it is (S2).  ``y`` (..., n) with NaN for "not answered"; ``w`` (..., T).
    """
    y = np.asarray(y, dtype=float)
    tasks, codes = np.asarray(tasks), np.asarray(codes)
    T, C = int(tasks.max()) + 1, int(codes.max()) + 1
    w = np.broadcast_to(np.asarray(w, dtype=float), y.shape[:-1] + (T,))
    parts = []
    for t in range(T):
        idx = np.flatnonzero(tasks == t)
        p = _task_moments(y[..., idx], codes[idx])
        pad = C - p.sizes.shape[-1]
        widen = lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, pad)])  # noqa: E731
        parts.append(_TaskMoments(p.n, p.mean, p.s2, widen(p.sizes), widen(p.S), p.sst))
    icc = pooled_icc(parts)
    diag = np.zeros(y.shape[:-1] + (C,))
    cs, rs = [], []
    with np.errstate(invalid="ignore", divide="ignore"):
        for t, p in enumerate(parts):
            used = w[..., t] > 0
            c = np.where(used, w[..., t] ** 2 * _model_variance(p, icc) / p.n, 0.0)
            pc = p.sizes / p.n[..., None]
            q = np.where(p.sizes > 0, 1.0 / (1.0 - pc), 0.0)
            r = np.where(p.sizes > 0, np.sqrt(q) * pc, 0.0)
            diag = diag + c[..., None] * q * pc
            cs.append(c)
            rs.append(r)
        trace = diag.sum(axis=-1) - sum(c * (r * r).sum(axis=-1) for c, r in zip(cs, rs))
        frob = (diag * diag).sum(axis=-1) - 2 * sum(c * (diag * r * r).sum(axis=-1) for c, r in zip(cs, rs))
        for a in range(T):
            for b in range(T):
                frob = frob + cs[a] * cs[b] * (rs[a] * rs[b]).sum(axis=-1) ** 2
        return np.where(frob > 0, trace ** 2 / frob, np.nan)


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
    moments = []
    for t in range(T):
        idx = np.flatnonzero(tasks == t)
        _, local = np.unique(codes[idx], return_inverse=True)
        moments.append(_task_moments(y[..., idx], local))
    # each task's CR2 mean (M4b) and Bell–McCaffrey df, as cr2_mean computes them
    stack = lambda f: np.stack([np.asarray(f(p), dtype=float) for p in moments], axis=-1)  # noqa: E731
    m, tn = stack(lambda p: p.mean), stack(lambda p: p.n)
    se, df = stack(lambda p: cr2_from_sums(p.S, p.sizes)), stack(lambda p: bm_df(p.sizes))
    w = task_weights(weights, tn)
    used = w > 0
    icc = pooled_icc(moments)
    with np.errstate(invalid="ignore", divide="ignore"):
        model = np.stack([_model_variance(p, icc) / p.n for p in moments], axis=-1)
        contrib = np.where(used, w * w * se * se, 0.0)
        var = contrib.sum(axis=-1)
        mean = np.where(used, w * m, 0.0).sum(axis=-1)
        bad = (used & ~(np.isfinite(m) & np.isfinite(se))).any(axis=-1)
        v = np.where(used, w * w * model, 0.0)                       # (S2): model-based, not w² V_t
        denom = np.where(used & (v > 0), v**2 / df, 0.0).sum(axis=-1)
        dof = np.where(denom > 0, v.sum(axis=-1) ** 2 / denom, np.nan)
        pooled = (stack(lambda p: p.sst).sum(axis=-1) / np.maximum(stack(lambda p: p.n - 1).sum(axis=-1), 1))
        model_var = np.where(np.isfinite(model), model, pooled[..., None] / tn)
    return SuiteMean(mean=np.where(bad, np.nan, mean), se=np.where(bad, np.nan, np.sqrt(var)),
                     df=np.where(bad, np.nan, dof), weights=w, task_mean=m, task_se=se, task_df=df,
                     task_n=tn, icc=icc, task_model_var=model_var)
