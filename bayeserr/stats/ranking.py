"""Which models can be told apart: compact letter groups (``docs/methods.md`` §7.1).

Models sharing a letter cannot be told apart at the report's level after the
multiplicity adjustment (Holm by default, BH with ``--adjust bh``).  The
letters come from the insert-and-absorb algorithm of Piepho (2004, *J. Comput.
Graph. Stat.* 13:456): start with one group holding every model; for each
pair that differs, split every group holding both into one without each;
drop groups contained in another.  The result is a valid letter display —
two models share a letter exactly when their difference is not significant —
whenever one exists with the groups found; letters are assigned in ranking
order, so "a" is the group of the best model.
"""

from __future__ import annotations

import string

import numpy as np

#: stop splitting beyond this many groups (a pathological significance pattern);
#: the display is then marked incomplete rather than taking unbounded time
MAX_GROUPS = 2000
#: more groups than this cannot be read as letters: no letters are shown then
#: (the report says so and points to the pairwise table)
MAX_LETTERS = 52


def _letters(k: int) -> str:
    """The k-th letter: a–z, then A–Z (at most :data:`MAX_LETTERS` groups)."""
    return (string.ascii_lowercase + string.ascii_uppercase)[k]


def _bits(mask: int) -> list[int]:
    """The members of a bit-mask group, ascending."""
    out, k = [], 0
    while mask:
        if mask & 1:
            out.append(k)
        mask >>= 1
        k += 1
    return out


def _sweep(groups: list, differs: np.ndarray) -> list:
    """Piepho's (2004) sweeping step: drop a model from a group when every pair
    the group lets it share is shared through another group too (and it keeps
    a letter), then drop empty groups.  The display says the same — two models
    share a letter exactly when their pair is not different — with fewer
    letters (the audit found 4 of 12 redundant on SWE-bench, 13 of 22 on
    AlpacaEval).  Groups as bit masks, each model's groups indexed: at 200
    models (3,400 groups before the sweep) 0.3 s instead of 19 s with sets."""
    m = differs.shape[0]
    masks = [sum(1 << k for k in g) for g in groups]
    # the partners model i may share a letter with (not declared different, not itself)
    allowed = [sum(1 << j for j in range(m) if j != i and not differs[i, j]) for i in range(m)]
    member = [set() for _ in range(m)]
    for gi, mask in enumerate(masks):
        for k in _bits(mask):
            member[k].add(gi)
    for gi in range(len(masks)):
        for i in _bits(masks[gi]):
            others = member[i] - {gi}
            if not others:
                continue  # its only letter
            cover = 0
            for h in others:
                cover |= masks[h]
            if masks[gi] & allowed[i] & ~cover == 0:
                masks[gi] &= ~(1 << i)
                member[i].discard(gi)
    return [frozenset(_bits(mask)) for mask in masks if mask]


def letter_groups(names, differs: np.ndarray) -> tuple[dict, bool]:
    """Letters per model from a symmetric boolean matrix ``differs[i, j]``
    (True: significantly different).  ``names`` are in ranking order.

    Returns ``({name: letters}, complete)``; ``complete`` is False (and the
    letters empty) when the significance pattern needs more than
    :data:`MAX_LETTERS` groups to be shown.
    """
    m = len(names)
    # groups as bit masks; only groups created by a split can be absorbed (an
    # untouched group was maximal before and cannot fit inside a smaller one)
    groups = [(1 << m) - 1]
    complete = True
    for i, j in zip(*np.nonzero(np.triu(differs, 1))):
        both = (1 << int(i)) | (1 << int(j))
        keep = [g for g in groups if g & both != both]
        split = {g & ~(1 << int(k)) for g in groups if g & both == both for k in (i, j)}
        everyone = keep + list(split)
        groups = keep + [g for g in split
                         if g and not any(g | h == h and g != h for h in everyone)]
        if len(groups) > MAX_GROUPS:
            complete = False
            break
    if not complete:  # not shown: no sweep (at 200 models it would cost 8 s for nothing)
        return {}, False
    groups = _sweep([frozenset(k for k in range(m) if g >> k & 1) for g in groups], differs)
    if len(groups) > MAX_LETTERS:
        return {}, False
    groups.sort(key=lambda g: (min(g), sorted(g)))
    letters = {n: "" for n in names}
    for k, g in enumerate(groups):
        for idx in sorted(g):
            letters[names[idx]] += _letters(k)
    return letters, complete


def letters_needed(differs: np.ndarray) -> int:
    """A lower bound on the letters the model needing most of them carries in
    any valid letter display: model i shares a letter with each model not
    different from it, and two of those declared different from each other
    cannot share one, so i carries at least as many letters as the largest set
    of its partners that are pairwise different (found greedily).  Cheap
    (M² per model), so that a display that could not be read is never built
    (at 200 models the display takes seconds and is then discarded)."""
    differs = np.asarray(differs, bool)
    most = 0
    for i in range(len(differs)):
        picked = []
        for j in np.flatnonzero(~differs[i]):
            if j != i and all(differs[j, k] for k in picked):
                picked.append(j)
        most = max(most, len(picked))
    return most


def differs_matrix(names, comps) -> np.ndarray:
    """``differs[i, j]``: the report declares the pair different (pairs left out of the
    comparisons — fewer than 2 common questions — count as not different)."""
    pos = {n: i for i, n in enumerate(names)}
    differs = np.zeros((len(names), len(names)), bool)
    for c in comps:
        if c.different:
            differs[pos[c.a], pos[c.b]] = differs[pos[c.b], pos[c.a]] = True
    return differs


def report_groups(names, comps) -> tuple[dict, bool]:
    """Letter groups for the models of a report (``names`` best first), from
    the report's decisions (``c.different`` of each comparison).  Pairs left
    out of the comparisons (fewer than 2 common questions) count as not
    different."""
    return letter_groups(names, differs_matrix(names, comps))


# --------------------------------------------------------------------------- #
# rank confidence intervals (docs/methods.md §3.10)
# --------------------------------------------------------------------------- #
def rank_bounds(better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank interval ``[1 + #{k: k > j}, M − #{k: j > k}]`` of every model from a
    boolean matrix ``better[j, k]`` (True: the family declares ``θ_j > θ_k``).

    Mogstad, Romano, Shaikh & Wilhelm (2024, *Rev. Econ. Stud.*), Theorem 3.1:
    when the decisions come from a procedure that holds the family-wise error
    of the one-sided hypotheses ``θ_j ≤ θ_k`` at α — over every ordered pair
    for simultaneous intervals, over the pairs with model j for j's marginal
    interval — the intervals cover the true ranks with probability ≥ 1 − α.
    Rank 1 is the best.
    """
    better = np.asarray(better, bool)
    m = better.shape[0]
    return 1 + better.sum(axis=0), m - better.sum(axis=1)


def mean_covariance(n, cross=None, S=None, sizes=None):
    """Covariance of M model means and the df of its scale (``docs/methods.md`` §3.10), from
    sums over questions (every engine computes them: §7.3).

    Without clusters, ``cross`` (M×M) = ``Σ_common r_a r_b``, the residuals' cross-products over
    the questions both answered (``r = s − s̄``): ``cov/n`` with ddof 1, df ∞.  With clusters,
    ``S`` (M×C) the residuals' cluster sums and ``sizes`` the answered questions per cluster:
    the CR2 cross-products ``V_ab = Σ_c √(q_ac q_bc) S_ac S_bc / (n_a n_b)``, ``q = 1/(1 − n_c/n)``,
    with the median of the models' Bell–McCaffrey df (one scale for all: a few partly covered
    models do not widen every model's ranks; one cluster: no df, a normal)."""
    from bayeserr.stats.fewclusters import bm_df
    n = np.asarray(n, float)
    if S is None:
        nn = np.sqrt(np.outer(n, n))
        return np.asarray(cross, float) / (nn * np.maximum(nn - 1, 1)), np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        p = sizes / n[:, None]
        q = np.where((sizes > 0) & (p < 1), 1.0 / (1.0 - p), 0.0)
    W = S * np.sqrt(q)
    dfs = bm_df(sizes)
    df = float(np.nanmedian(dfs)) if np.isfinite(dfs).any() else np.inf
    return (W @ W.T) / np.outer(n, n), (df if np.isfinite(df) else np.inf)


def posterior_ranks(draws: np.ndarray, level: float = 0.95):
    """From joint posterior draws of the model means (draws × M): P(best), the
    expected rank and the equal-tailed ``level`` credible interval of each
    model's rank (1 = best; ties in a draw share the better rank)."""
    draws = np.asarray(draws, float)
    # rank of model j in a draw: 1 + number of models strictly above it
    order = np.sort(draws, axis=1)
    ranks = draws.shape[1] - np.stack([np.searchsorted(order[b], draws[b], side="right")
                                       for b in range(len(draws))]) + 1
    p_best = (ranks == 1).mean(axis=0)
    lo = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower")
    hi = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher")
    return p_best, ranks.mean(axis=0), np.stack([lo, hi], axis=-1).astype(int)


def rank_intervals(estimates, cov, *, level: float = 0.95, seed: int = 0, z=None):
    """Marginal and simultaneous rank intervals of M estimates with a known
    (estimated) covariance matrix, as csranks' ``csranks(x, Sigma)`` does:
    studentized differences of every pair, their joint normal distribution
    (:func:`~bayeserr.stats.simultaneous.gaussian_draws`; ``z``: the draws
    of N(0, cov) to use), Romano–Wolf step-down over the one-sided
    hypotheses, then :func:`rank_bounds`.  Returns ``(marginal, simultaneous)``,
    each an (M, 2) array of ``[low, high]`` ranks.
    """
    from bayeserr.stats.simultaneous import gaussian_draws, joint_inference
    est = np.asarray(estimates, float)
    cov = np.asarray(cov, float)
    m = len(est)
    ia, ib = np.triu_indices(m, 1)
    sd = np.sqrt(np.maximum(cov[ia, ia] + cov[ib, ib] - 2 * cov[ia, ib], 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(sd > 0, (est[ia] - est[ib]) / sd, np.where(est[ia] == est[ib], np.nan,
                                                                 np.sign(est[ia] - est[ib]) * np.inf))
    families = [np.arange(len(ia))] + [np.flatnonzero((ia == j) | (ib == j)) for j in range(m)]
    blocks, info = gaussian_draws(cov, ia, ib, seed=seed, z=z)
    res = joint_inference(t, np.inf, blocks, info.draws, families, level)

    def bounds(r):
        better = np.zeros((m, m), bool)
        with np.errstate(invalid="ignore"):
            rejected = r.rows[r.p_adjusted < 1 - level]
        for k in rejected:
            i, j = (ia[k], ib[k]) if t[k] > 0 else (ib[k], ia[k])
            better[i, j] = True
        return np.stack(rank_bounds(better), axis=-1)

    simultaneous = bounds(res[0])
    marginal = np.stack([bounds(r)[j] for j, r in enumerate(res[1:])])
    return marginal, simultaneous
