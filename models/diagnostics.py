"""Posterior summaries and MCMC diagnostics through ArviZ (SPEC §5).

Thresholds: R-hat > 1.01, bulk or tail ESS < 400, or any divergence raises a
warning in the report, naming the sampler option to change (``--tune``,
``--draws``, ``--chains``, ``--target-accept``) and its value in that fit.
"""

from __future__ import annotations

import numpy as np
from bayeserr.models import compat

RHAT_MAX = 1.01
ESS_MIN = 400
#: the quantiles whose ESS is the tail ESS (ArviZ 0.x's default; ArviZ 1's differs)
TAIL_PROBS = (0.05, 0.95)


# the imports live in compat (every model imports PyMC and ArviZ through it); these
# names stay here for the callers of the old paths
writable_cache = compat.writable_cache
import_arviz = compat.import_arviz


def summarize(idata, var_names, level: float = 0.95) -> dict:
    """Mean, sd, equal-tailed interval and HDI of each (scalar) variable."""
    out = {}
    for name in var_names:
        x = idata.posterior[name].values.reshape(-1)
        q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2])
        hdi = compat.hdi(x, level)
        out[name] = {"mean": float(x.mean()), "sd": float(x.std(ddof=1)),
                     "eti": [float(q[0]), float(q[1])], "hdi": [float(hdi[0]), float(hdi[1])]}
    return out


def diagnose(idata, var_names) -> dict:
    """R-hat, bulk/tail ESS (worst over the variables) and divergences.

    Tail ESS is that of the 5% and 95% quantiles (Vehtari et al. 2021), named
    explicitly: ArviZ 1's default is its ``stats.ci_prob`` setting (0.89, so the
    11% and 89% quantiles), which gives another number on the same draws."""
    az = compat.import_stats()
    rhat = az.rhat(idata, var_names=var_names)
    ess_bulk = az.ess(idata, var_names=var_names, method="bulk")
    ess_tail = az.ess(idata, var_names=var_names, method="tail", prob=TAIL_PROBS)

    def worst(ds, fn):
        values = np.concatenate([np.ravel(ds[v].values) for v in ds.data_vars])
        return float(fn(values)) if np.isfinite(values).any() else float("nan")  # NaN: one chain

    stats = compat.group(idata, "sample_stats")
    div = int(stats["diverging"].values.sum()) if stats is not None else 0
    return {"r_hat": worst(rhat, np.nanmax), "ess_bulk": worst(ess_bulk, np.nanmin),
            "ess_tail": worst(ess_tail, np.nanmin), "divergences": div, "sampler": sampler(idata)}


def sampler(idata) -> dict:
    """The sampler settings of a fit, as far as ``idata`` records them: chains
    and draws per chain (posterior sizes), tuning steps (PyMC's
    ``tuning_steps``), target acceptance (``attrs``, set by the ``fit_mcmc``
    functions of :mod:`bayeserr.models`)."""
    post = compat.posterior_dataset(idata)
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
