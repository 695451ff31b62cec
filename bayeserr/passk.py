"""pass@k with error bars, for benchmarks that sample each problem n times (SPEC §5.5).

Per problem with n samples of which c are correct, the unbiased estimator of
the chance that at least one of k fresh samples is correct is (Chen et al.
2021, eq. 1)::

    pass@k_i = 1 − C(n − c, k) / C(n, k)

computed in log-gamma form, ``exp(lnΓ(n−c+1) − lnΓ(n−c−k+1) − lnΓ(n+1) +
lnΓ(n−k+1))`` for the ratio, vectorized over problems (1 when ``n − c < k``);
the tests check it against Chen et al.'s product form and brute-force
enumeration.  The benchmark's pass@k is the mean over problems; its
standard errors are the CLT (M1) and clustered (M4) SEs over problems, and
paired comparisons between models are (M7)/(M8) on the per-problem values,
exactly as for any other fractional score.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .errors import InputError


def pass_at_k(n, c, k: int) -> np.ndarray:
    """Unbiased per-problem pass@k for arrays of samples ``n`` and correct ``c``."""
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if np.any(c > n) or np.any(c < 0):
        raise InputError("pass@k: correct counts must lie between 0 and the number of samples.")
    if np.any(n < k):
        raise InputError(f"pass@k with k = {k} needs at least {k} samples per problem "
                         f"(the smallest has {int(n.min())}).")
    from scipy.special import gammaln
    fail = n - c
    ok = fail >= k
    ratio = np.zeros(n.shape)
    f, m = fail[ok].astype(float), n[ok].astype(float)
    ratio[ok] = np.exp(gammaln(f + 1) - gammaln(f - k + 1) - gammaln(m + 1) + gammaln(m - k + 1))
    return 1.0 - ratio


def counts(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Samples n and correct c per (model, problem): from ``n_samples`` /
    ``n_correct`` variables when loaded, else from 0/1 answers per sample."""
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
    n, c = counts(ds)
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
