"""Posterior summaries and MCMC diagnostics through ArviZ (SPEC §5).

Thresholds: R-hat > 1.01, bulk or tail ESS < 400, or any divergence raises a
warning in the report, naming the sampler option to change (``--tune``,
``--draws``, ``--chains``, ``--target-accept``) and its value in that fit.
"""

from __future__ import annotations

import warnings

import numpy as np

RHAT_MAX = 1.01
ESS_MIN = 400


def writable_cache() -> None:
    """Point ``XDG_CACHE_HOME`` at a temporary folder when the user's cache folder
    cannot be written (a container running as an arbitrary uid with a read-only
    ``$HOME``): ArviZ creates ``~/.cache/arviz`` when it is imported (PyMC imports
    it too) and would fail with a PermissionError that names no cause."""
    import os
    import tempfile
    from pathlib import Path
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    probe = cache if cache.exists() else next((p for p in cache.parents if p.exists()), cache)
    if not os.access(probe, os.W_OK | os.X_OK):
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bayeserr-cache-")


def import_arviz():
    """ArviZ without its import-time FutureWarning about the 1.0 refactor (and
    with a cache folder it can write, :func:`writable_cache`)."""
    writable_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        import arviz as az
    return az


def summarize(idata, var_names, level: float = 0.95) -> dict:
    """Mean, sd, equal-tailed interval and HDI of each (scalar) variable."""
    az = import_arviz()
    out = {}
    for name in var_names:
        x = idata.posterior[name].values.reshape(-1)
        q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2])
        hdi = az.hdi(x, hdi_prob=level)
        out[name] = {"mean": float(x.mean()), "sd": float(x.std(ddof=1)),
                     "eti": [float(q[0]), float(q[1])], "hdi": [float(hdi[0]), float(hdi[1])]}
    return out


def diagnose(idata, var_names) -> dict:
    """R-hat, bulk/tail ESS (worst over the variables) and divergences."""
    az = import_arviz()
    rhat = az.rhat(idata, var_names=var_names)
    ess_bulk = az.ess(idata, var_names=var_names, method="bulk")
    ess_tail = az.ess(idata, var_names=var_names, method="tail")

    def worst(ds, fn):
        values = np.concatenate([np.ravel(ds[v].values) for v in ds.data_vars])
        return float(fn(values)) if np.isfinite(values).any() else float("nan")  # NaN: one chain

    div = int(idata.sample_stats["diverging"].values.sum()) if "sample_stats" in idata else 0
    return {"r_hat": worst(rhat, np.nanmax), "ess_bulk": worst(ess_bulk, np.nanmin),
            "ess_tail": worst(ess_tail, np.nanmin), "divergences": div, "sampler": sampler(idata)}


def sampler(idata) -> dict:
    """The sampler settings of a fit, as far as ``idata`` records them: chains
    and draws per chain (posterior sizes), tuning steps (PyMC's
    ``tuning_steps``), target acceptance (``attrs``, set by the ``fit_mcmc``
    functions of :mod:`bayeserr.models`)."""
    post = idata.posterior
    stats = idata.sample_stats.attrs if "sample_stats" in idata else {}
    return {"chains": int(post.sizes.get("chain", 0)), "draws": int(post.sizes.get("draw", 0)),
            "tune": stats.get("tuning_steps"), "target_accept": idata.attrs.get("target_accept")}


def _now(settings: dict, key: str) -> str:
    value = (settings or {}).get(key)
    return "" if value is None else f" (now {value:g})"


def problems(diag: dict) -> list[str]:
    """Plain-language descriptions of the thresholds that fail, each naming the
    option that acts on it and its value in the fit."""
    out = []
    s = diag.get("sampler")
    if diag["r_hat"] > RHAT_MAX:
        out.append(f"R-hat {diag['r_hat']:.3f} > {RHAT_MAX} (chains disagree): raise --tune{_now(s, 'tune')} "
                   f"and --draws{_now(s, 'draws')}")
    if min(diag["ess_bulk"], diag["ess_tail"]) < ESS_MIN:
        out.append(f"ESS {min(diag['ess_bulk'], diag['ess_tail']):.0f} < {ESS_MIN} (too few effective draws): "
                   f"raise --draws{_now(s, 'draws')} or --chains{_now(s, 'chains')}")
    if diag["divergences"]:
        out.append(f"{diag['divergences']} divergent transitions (posterior may be biased): raise "
                   f"--target-accept{_now(s, 'target_accept')}, e.g. to 0.99, or --tune{_now(s, 'tune')}")
    return out
