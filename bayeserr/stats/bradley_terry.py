"""Bradley–Terry strengths from a win matrix (``docs/methods.md`` §5.5): the penalized maximum-
likelihood fit, the comparison graph's structure (which models the votes connect and order),
centring on a core, bootstrap replicates and rank bounds; and the PPI++ fit that corrects
judge votes with human votes (§5.5.1: the effective win matrix, the power-tuned λ, the
sandwich covariance).  Pure functions of arrays; the arena analyses
(:mod:`bayeserr.analyses.arena`, :mod:`bayeserr.analyses.arena_judge`) build on them."""

from __future__ import annotations

import contextlib
import math
import numbers
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError, describe

RIDGE = 1e-6


# ------------------------------------------------------------------ maximum likelihood
def _penalized_loglik(s, wins) -> float:
    d = s[:, None] - s[None, :]
    return float(-(wins * np.logaddexp(0.0, -d)).sum() - RIDGE / 2 * s @ s)


def fit_strengths(wins: np.ndarray, start: np.ndarray | None = None, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Bradley–Terry MLE (damped Newton) from the (half-)win matrix; centred (``Σ s = 0``).

    The ridge makes the objective strictly concave; steps longer than 1 are
    halved until they go uphill, so the fit converges also when the MLE is
    infinite (the ridge then sets it).
    """
    from scipy.special import expit
    m = wins.shape[0]
    games = wins + wins.T
    s = np.zeros(m) if start is None else np.asarray(start, dtype=float).copy()
    s -= s.mean()
    ones = np.ones((m, m)) / m
    value = None
    for _ in range(max_iter):
        p = expit(s[:, None] - s[None, :])
        grad = (wins - games * p).sum(axis=1) - RIDGE * s
        w = games * p * (1 - p)
        hess = w - np.diag(w.sum(axis=1)) - RIDGE * np.eye(m)
        # the likelihood is invariant to a shift of s: solve on the centred subspace
        try:
            step = np.linalg.solve(hess - ones, -grad)
        except np.linalg.LinAlgError:  # pragma: no cover - the ridge keeps it regular
            step = np.linalg.lstsq(hess - ones, -grad, rcond=None)[0]
        step -= step.mean()
        t = 1.0
        if np.abs(step).max() > 1:  # a long step: make sure it goes uphill (halve it until it does)
            value = _penalized_loglik(s, wins) if value is None else value
            while True:
                trial = s + t * step
                new = _penalized_loglik(trial, wins)
                if new >= value - 1e-12 * abs(value) or t < 1e-6:
                    break
                t /= 2
            s, value = trial, new
        else:  # near the optimum Newton's full step converges quadratically
            s, value = s + step, None
        if np.abs(t * step).max() < tol:
            break
    return s


# ------------------------------------------------------------------ what the votes identify
@dataclass(frozen=True)
class Structure:
    group: np.ndarray  #: group (connected component) of each model, 0 = largest
    core: np.ndarray  #: model in its group's largest strongly connected set
    scc: np.ndarray  #: strongly connected set of each model (won-or-tied graph)


def _components(matrix: np.ndarray, strong: bool) -> np.ndarray:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    return connected_components(csr_matrix(matrix), directed=strong, connection="strong")[1]


def _reach(adj: np.ndarray, start: int, members: np.ndarray) -> np.ndarray:
    """Models reachable from ``start`` along ``adj`` (boolean matrix products, no Python loop
    over models beyond the graph's diameter)."""
    seen = np.zeros(adj.shape[0], dtype=bool)
    seen[start] = True
    while True:
        nxt = seen | (adj[seen].any(axis=0) & members)
        if (nxt == seen).all():
            return seen
        seen = nxt


def _strongly_connected(beats: np.ndarray, members: np.ndarray) -> bool:
    """Whether every model of ``members`` reaches every other along ``beats`` and back."""
    start = int(np.flatnonzero(members)[0])
    return bool(_reach(beats, start, members)[members].all() and _reach(beats.T, start, members)[members].all())


def structure(wins: np.ndarray) -> Structure:
    m = wins.shape[0]
    comp = _components((wins + wins.T) > 0, strong=False)
    sizes = np.bincount(comp)
    first = np.full(sizes.size, m)
    np.minimum.at(first, comp, np.arange(m))
    relabel = np.empty(sizes.size, dtype=np.int64)
    relabel[np.lexsort((first, -sizes))] = np.arange(sizes.size)  # larger groups first
    group = relabel[comp]
    scc = _components(wins > 0, strong=True)
    core = np.zeros(m, dtype=bool)
    for g in range(sizes.size):
        core[_largest(scc, group == g)] = True
    return Structure(group, core, scc)


def _largest(labels: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Mask of the most common label among ``members`` (ties: the label of the first model)."""
    idx = np.flatnonzero(members)
    values, first, counts = np.unique(labels[idx], return_index=True, return_counts=True)
    best = values[np.lexsort((idx[first], -counts))[0]]
    return members & (labels == best)


def centre(s: np.ndarray, group: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """Shift each group so that its ``anchor`` models have mean strength 0 (last axis = models)."""
    s = np.array(s, dtype=float, copy=True)
    for g in np.unique(group):
        members = group == g
        ref = anchor & members
        if s.ndim == 1:
            ref = ref & np.isfinite(s)
            if not ref.any():
                ref = members & np.isfinite(s)
            if ref.any():
                s[members] -= s[ref].mean()
        else:
            s[..., members] -= s[..., ref].mean(axis=-1, keepdims=True)
    return s


def reaches(beats: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> bool:
    """Whether a chain of "won or tied against" leads from ``sources`` to ``targets``."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order
    graph = csr_matrix(beats)
    seen = breadth_first_order(graph, int(np.flatnonzero(sources)[0]), directed=True,
                               return_predecessors=False)
    return bool(targets[seen].any())


def replicate(wins: np.ndarray, start: np.ndarray, st: Structure):
    """A bootstrap fit: centred strengths (NaN for models left out), and which
    present models the resample does not identify."""
    s = fit_strengths(wins, start=start)
    absent = (wins + wins.T).sum(axis=1) == 0
    beats = wins > 0
    if not absent.any() and all(_strongly_connected(beats, st.group == g) for g in np.unique(st.group)):
        return centre(s, st.group, st.core), absent, np.zeros(s.size, dtype=bool)
    scc = _components(beats, strong=True)
    anchor = np.zeros(s.size, dtype=bool)
    for g in np.unique(st.group):
        members = (st.group == g) & ~absent
        core = st.core & members
        if members.any():
            anchor |= _largest(scc, core if core.any() else members)
    unidentified = np.zeros(s.size, dtype=bool)
    for g in np.unique(st.group):
        members = (st.group == g) & ~absent
        ref = anchor & members
        if ref.any():
            unidentified |= members & (scc != scc[np.flatnonzero(ref)[0]])
    s = centre(s, st.group, anchor & ~absent)
    s[absent] = np.nan
    return s, absent, unidentified


def rank_bounds(draws: np.ndarray, group: np.ndarray):
    """Per draw: the best and worst rank of each model within its group (ties
    span their ranks; models left out of a draw are NaN and not counted)."""
    best = np.full(draws.shape, np.nan)
    worst = np.full(draws.shape, np.nan)
    for g in np.unique(group):
        idx = np.flatnonzero(group == g)
        d = draws[:, idx]
        chunk = max(1, int(2e7 // (idx.size * idx.size)))
        for lo in range(0, d.shape[0], chunk):
            x = d[lo:lo + chunk]
            above = x[:, None, :] > x[:, :, None]  # [draw, i, j]: j ahead of i
            level = x[:, None, :] >= x[:, :, None]
            gone = np.isnan(x)
            best[lo:lo + chunk, idx] = np.where(gone, np.nan, 1 + above.sum(axis=2))
            worst[lo:lo + chunk, idx] = np.where(gone, np.nan, level.sum(axis=2))
    return best, worst


def small_blas(m: int):
    """One BLAS thread for the many small M×M solves of the bootstrap: threads only
    add overhead at this size (and stall on a busy machine)."""
    if m > 300:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits  # installed with PyMC
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


CONVEX_TOL = 1e-12


#: a centred strength beyond this (logits; ≈ 8,700 Elo) means the corrected loss is unbounded below:
#: the ridge alone stopped it (a won-every-vote model stops near log(votes/ridge) ≈ 15–25)
DIVERGED = 50.0


#: times λ is halved before falling back to 0 when the corrected loss is unbounded below
MAX_HALVINGS = 8


# ------------------------------------------------------------------ the array core
def item_map(m: int, a, b, share):
    """Sparse (M² × items) map: column i is item i's contribution to the flattened (half-)win
    matrix (``share`` to ``W[a, b]``, ``1 − share`` to ``W[b, a]``); ``W = map @ weights``."""
    from scipy.sparse import csr_matrix
    k = len(a)
    share = np.nan_to_num(np.asarray(share, dtype=float))
    cols = np.arange(k)
    return csr_matrix((np.r_[share, 1 - share], (np.r_[a * m + b, b * m + a], np.r_[cols, cols])),
                      shape=(m * m, k))


def effective_wins(w_human_lab, w_judge_lab, w_judge_unl, n, N, lam) -> np.ndarray:
    """``W_λ = W_h,L + λ (n/N · W_f,U − W_f,L)``: n times the PPI++ loss's win matrix
    (``docs/methods.md`` §5.5.1).  ``N = 0`` (every item labelled): the human matrix."""
    if N <= 0 or lam == 0:
        return np.array(w_human_lab, dtype=float)
    return w_human_lab + lam * (n / N * w_judge_unl - w_judge_lab)


def check_convex(wins) -> bool:
    """Whether every pair's total weight ``W_ij + W_ji`` is ≥ 0 (then the Bradley–Terry loss
    of ``wins`` is convex: a pair's term has second derivative ``(W_ij + W_ji) σ(d)σ(−d)``)."""
    games = wins + wins.T
    return bool((games >= -CONVEX_TOL * max(1.0, np.abs(wins).max(initial=0.0))).all())


def item_gradients(s, a, b, share) -> np.ndarray:
    """Per-item gradients of the Bradley–Terry loss at ``s`` (items × M): ``(p − y)(e_a − e_b)``."""
    from scipy.special import expit
    r = expit(s[a] - s[b]) - share
    g = np.zeros((len(a), s.size))
    rows = np.arange(len(a))
    g[rows, a] = r
    g[rows, b] = -r
    return g


def item_hessian(s, a, b) -> np.ndarray:
    """Mean Hessian of the item losses at ``s`` (it does not depend on the verdicts)."""
    from scipy.special import expit
    m = s.size
    p = expit(s[a] - s[b])
    w = np.bincount(a * m + b, weights=p * (1 - p), minlength=m * m).reshape(m, m)
    w = w + w.T
    return (np.diag(w.sum(axis=1)) - w) / len(a)


def _pinv(h):
    """Pseudo-inverse: the strengths are identified only up to a constant per group, so the
    Hessian is singular along the group indicators (which every gradient is orthogonal to)."""
    return np.linalg.pinv(h, rcond=1e-10, hermitian=True)


def _cov(x, y=None) -> np.ndarray:
    y = x if y is None else y
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    return xc.T @ yc / (x.shape[0] - 1)


def tuned_lambda(s, a, b, human, judge, labelled) -> float:
    """PPI++'s trace-optimal λ̂ for an M-estimator (Angelopoulos, Duchi & Zrnic 2023)::

        λ̂ = Tr(H⁺ (C + Cᵀ) H⁺) / (2 (1 + n/N) Tr(H⁺ V_f H⁺))

    with per-item gradients at ``s``: ``C`` the covariance of the human and judge
    gradients over the labelled items, ``V_f`` that of the judge gradients over all
    items, ``H`` the mean Hessian over all items (``H⁺`` its pseudo-inverse: the
    centred parametrisation).  Unclipped; NaN when it cannot be formed."""
    n, N = int(labelled.sum()), int((~labelled).sum())
    if n < 2 or N < 2:
        return math.nan
    gf = item_gradients(s, a, b, judge)
    gy = item_gradients(s, a[labelled], b[labelled], human[labelled])
    hp = _pinv(item_hessian(s, a, b))
    k = hp @ hp
    c = _cov(gy, gf[labelled])
    v = _cov(gf)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = 2 * np.trace(c @ k) / (2 * (1 + n / N) * np.trace(v @ k))
    return float(lam) if np.isfinite(lam) else math.nan


def sandwich_cov(s, a, b, human, judge, labelled, lam) -> np.ndarray:
    """Asymptotic covariance of the PPI++ strengths, centred per group (``docs/methods.md`` §5.5.1, (A4)).

    The sandwich::

        Σ = H⁺ [Var_L(g_Y − λ g_f)/n + λ² Var_U(g_f)/N] H⁺
    """
    n, N = int(labelled.sum()), int((~labelled).sum())
    gy = item_gradients(s, a[labelled], b[labelled], human[labelled])
    gfl = item_gradients(s, a[labelled], b[labelled], judge[labelled])
    mid = _cov(gy - lam * gfl) / n
    if N >= 2 and lam != 0:
        mid = mid + lam**2 * _cov(item_gradients(s, a[~labelled], b[~labelled], judge[~labelled])) / N
    hp = _pinv(item_hessian(s, a, b))
    return hp @ mid @ hp


@dataclass(frozen=True)
class PPIFit:
    """Result of :func:`fit_ppi`: centred strengths and the λ used."""

    s: np.ndarray        #: centred strengths (logit scale), each group on its core
    wins: np.ndarray     #: the effective win matrix ``W_λ``
    lam: float
    lam_raw: float       #: λ̂ before clipping (the given λ when fixed)
    lam_tuned: bool
    lam_shrunk: bool = False  #: λ was halved because the loss was unbounded below


def check_lam(lam):
    if lam is None:
        return None
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, numbers.Real) or not math.isfinite(lam):
        raise InputError(f"λ (--lam, lam=) must be a finite number, or left out (None) for the power-tuned λ̂ "
                         f"(got {describe(lam)}); 0 gives the human votes alone, 1 plain PPI.")
    return float(lam)


def bounded_fit(whl, wfl, wfu, n, N, lam):
    """Fit ``W_λ`` (centred), halving λ while the corrected loss is unbounded below: ``(s, W, λ)``.

    A negative entry of ``W_λ`` pulls its pair apart without limit unless other pairs hold it,
    so a convex ``W_λ`` can still have no minimum in a sparse design (a model whose few labelled
    items the judge got wrong); the ridge then stops the fit at ``|s| ≫`` :data:`DIVERGED`."""
    for _ in range(MAX_HALVINGS + 1):
        wins = effective_wins(whl, wfl, wfu, n, N, lam)
        s = fit_centred(wins)
        if lam == 0 or np.nanmax(np.abs(s), initial=0.0) < DIVERGED:
            return s, wins, lam
        lam /= 2
    wins = np.array(whl, dtype=float)
    return fit_centred(wins), wins, 0.0


def fit_ppi(m: int, a, b, human, judge, labelled, lam=None) -> PPIFit:
    """The PPI++ Bradley–Terry fit (``docs/methods.md`` §5.5.1): ``lam=None`` tunes λ
    (:func:`tuned_lambda` at the human-only fit, clipped to [0, 1]); fewer than two
    unlabelled items: λ = 0.  λ is halved while the loss is unbounded below
    (:func:`bounded_fit`; ``lam_shrunk``)."""
    lam = check_lam(lam)
    n, N = int(labelled.sum()), int((~labelled).sum())
    maps = [item_map(m, a[sel], b[sel], x[sel]) for sel, x in
            ((labelled, human), (labelled, judge), (~labelled, judge))]
    whl, wfl, wfu = (mp.sum(axis=1).A1.reshape(m, m) for mp in maps)
    tuned = lam is None
    if N < 2:
        lam_raw, lam = (math.nan if tuned else lam), 0.0
    elif tuned:  # the pilot: the human-only fit (consistent; the λ = 1 fit inherits the judge's spread)
        lam_raw = tuned_lambda(fit_centred(whl), a, b, human, judge, labelled)
        lam = float(np.clip(lam_raw, 0.0, 1.0)) if np.isfinite(lam_raw) else 0.0
    else:
        lam_raw = lam
    if not check_convex(effective_wins(whl, wfl, wfu, n, N, lam)):
        raise InputError(f"λ = {lam:g} makes some pair's total weight negative (W_ij + W_ji < 0), so the "
                         "corrected Bradley–Terry loss is not convex and has no minimum; use a λ in [0, 1] "
                         "(or leave it out for the tuned λ̂).")
    s, wins, used = bounded_fit(whl, wfl, wfu, n, N, lam)
    return PPIFit(s, wins, used, lam_raw, tuned, used != lam)


def fit_centred(wins):
    st = structure(wins)
    return centre(fit_strengths(wins), st.group, st.core)
