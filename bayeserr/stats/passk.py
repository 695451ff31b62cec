"""pass@k with error bars, for benchmarks that sample each problem n times (SPEC §5.5).

Per problem with n samples of which c are correct, the unbiased estimator of
the chance that at least one of k fresh samples is correct is (Chen et al.
2021, eq. 1)::

    pass@k_i = 1 − C(n − c, k) / C(n, k) = 1 − Π_{i=n−c+1}^{n} (1 − k/i)

Exact where the combinatorics are: 0 when ``c = 0`` and 1 when ``n − c < k``.
Otherwise the product form (Chen et al.'s numerically stable one), which
for a given n is a running product over c: one ``cumprod`` per distinct
sample count serves every problem with that n, so the cost grows with the
distinct n, not with the number of problems (the log-gamma form, which
leaves rounding residue such as −4e-16 at c = 0, is kept only as a fallback
for exotic inputs with very many distinct large n).  The tests check it
against exact rational arithmetic with ``math.comb``.  The benchmark's
pass@k is the mean over problems; its standard errors are the CLT (M1) and
clustered (M4) SEs over problems, and paired comparisons between models are
(M7)/(M8) on the per-problem values, exactly as for any other fractional
score.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayeserr.base.errors import InputError

#: largest total length of the running products (sum of the distinct n)
#: computed by the product form; beyond it the log-gamma form is used.
PRODUCT_BUDGET = 5_000_000


def pass_at_k(n, c, k: int) -> np.ndarray:
    """Unbiased per-problem pass@k for arrays of samples ``n`` and correct ``c``.

    Exactly 0 where ``c = 0`` and exactly 1 where ``n − c < k``; elsewhere
    ``1 − Π_{i=n−c+1}^{n} (1 − k/i)``, within a few ulps of the exact value.
    """
    n, c, k = _checked(n, c, k, "pass@k")
    return 1.0 - subset_ratio(n, n - c, k)


def pass_hat_k(n, c, k: int) -> np.ndarray:
    """Unbiased per-task pass^k (``docs/methods.md`` §6.2): the chance that k fresh runs of
    the task all succeed, ``C(c, k) / C(n, k)`` for ``c`` successes of ``n`` runs (Yao et al.
    2025, τ-bench).  Exactly 0 where ``c < k`` and exactly 1 where ``c = n``."""
    n, c, k = _checked(n, c, k, "pass^k")
    return subset_ratio(n, c, k)


def pass_hat_k_run_variance(n, c, k: int) -> np.ndarray:
    """Unbiased estimate of the run-to-run variance of a task's pass^k estimate U
    (§6.2): ``Var(U | θ) = E[U² | θ] − θ^{2k}``, estimated by ``U² − C(c, 2k)/C(n, 2k)``
    (``C(c, 2k)/C(n, 2k)`` is unbiased for θ^{2k}); needs ``n ≥ 2k`` (NaN elsewhere).  At
    k = 1 it is ``p̂(1 − p̂)/(n − 1)``, the question term of §2.7."""
    n, c, k = _checked(n, c, k, "pass^k", need_k=False)
    out = np.full(n.shape, np.nan)
    ok = n >= 2 * k
    if ok.any():
        u = subset_ratio(n[ok], c[ok], k)
        out[ok] = u * u - subset_ratio(n[ok], c[ok], 2 * k)
    return out


def _checked(n, c, k, what: str, need_k: bool = True):
    """``n``, ``c`` as int64 arrays of whole counts with 0 ≤ c ≤ n, and a whole k ≥ 1."""
    try:
        n = np.asarray(n, dtype=float)
        c = np.asarray(c, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what}: sample and correct counts must be whole numbers (got text or other "
                         "objects); pass arrays of counts.") from None
    if n.shape != c.shape:
        raise InputError(f"{what}: the sample counts n and correct counts c must have the same shape "
                         f"(got {n.shape} and {c.shape}); give one (n, c) pair per problem.")
    if not (np.isfinite(n).all() and np.isfinite(c).all()) or np.any(n != np.round(n)) \
            or np.any(c != np.round(c)):
        raise InputError(f"{what}: sample and correct counts must be whole numbers (no NaN or infinity); "
                         "drop the problems without counts.")
    n = n.astype(np.int64)
    c = c.astype(np.int64)
    k = _whole_k(k)
    if np.any(c > n) or np.any(c < 0):
        raise InputError(f"{what}: correct counts must lie between 0 and the number of samples.")
    if need_k and np.any(n < k):
        raise InputError(f"{what} with k = {k} needs at least {k} samples per problem "
                         f"(the smallest has {int(n.min())}).")
    return n, c, k


def subset_ratio(n: np.ndarray, m: np.ndarray, k: int) -> np.ndarray:
    """``C(m, k) / C(n, k)`` for whole ``0 ≤ m ≤ n``, ``n ≥ k``: the chance that k of n items
    drawn without replacement all fall among m marked ones — pass^k with m the successes,
    1 − pass@k with m the failures (Chen et al. 2021, eq. 1).

    Exactly 1 where ``m = n`` and exactly 0 where ``m < k``; elsewhere the product
    ``Π_{i=m+1}^{n} (1 − k/i)`` (Chen et al.'s numerically stable form), a running product
    over n − m: one ``cumprod`` per distinct n serves every item with that n, so the cost
    grows with the distinct n, not with the number of items.  The log-gamma form, which
    leaves rounding residue of ~1e-16, is kept only as a fallback for exotic inputs with very
    many distinct large n.  The tests check both against exact rational arithmetic."""
    out = np.zeros(n.shape)
    out[m == n] = 1.0
    mid = (m >= k) & (m < n)
    if not mid.any():
        return out
    nm, gaps = n[mid], n[mid] - m[mid]
    distinct = np.unique(nm)
    if distinct.sum() <= PRODUCT_BUDGET:
        vals = np.empty(nm.shape)
        for top in distinct:
            sel = nm == top
            # survive[j] = Π_{i=top−j}^{top} (1 − k/i): the ratio when j + 1 items are unmarked
            survive = np.cumprod(1.0 - k / np.arange(top, top - int(gaps[sel].max()), -1, dtype=float))
            vals[sel] = survive[gaps[sel] - 1]
        out[mid] = vals
    else:
        from scipy.special import gammaln
        mm, nn = m[mid].astype(float), nm.astype(float)
        out[mid] = np.exp(gammaln(mm + 1) - gammaln(mm - k + 1) - gammaln(nn + 1) + gammaln(nn - k + 1))
    return out


def _whole_k(k) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, float, np.integer, np.floating)) \
            or not np.isfinite(k) or int(k) != k or k < 1:
        raise InputError(f"pass@k needs a whole k ≥ 1 (got {k!r}); e.g. k=1 or k=5.")
    return int(k)


def counts(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Samples n and correct c per (model, problem): from ``n_samples`` /
    ``n_correct`` variables when loaded, else from 0/1 answers per sample."""
    from bayeserr.stats.view import check_dataset
    return _counts(check_dataset(ds))


def _counts(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    if "n_samples" in ds and "n_correct" in ds:
        return ds["n_samples"].values, ds["n_correct"].values
    cube = ds["score"].values
    answered = ~np.isnan(cube)
    if not np.isin(cube[answered], (0.0, 1.0)).all():
        raise InputError("pass@k needs 0/1 answers per sample, or n_samples and n_correct columns.")
    return answered.sum(axis=2).astype(float), np.nansum(cube, axis=2)


def pass_k_dataset(ds: xr.Dataset, k: int) -> xr.Dataset:
    """A dataset whose score is the per-problem pass@k (one value per problem),
    ready for :func:`bayeserr.score` and :func:`bayeserr.compare_all`."""
    from bayeserr.stats.view import check_dataset
    ds = check_dataset(ds)
    k = _whole_k(k)
    n, c = _counts(ds)
    have = n > 0
    values = np.full(n.shape, np.nan)
    if have.any():
        values[have] = pass_at_k(n[have], c[have], k)
    out = xr.Dataset({"score": (("model", "question", "sample"), values[..., None])},
                     coords={"model": ds["model"].values, "question": ds["question"].values, "sample": ["0"]})
    if "cluster" in ds.coords:
        out = out.assign_coords(cluster=("question", ds["cluster"].values))
    out.attrs.update(ds.attrs)
    return out
