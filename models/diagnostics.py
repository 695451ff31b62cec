"""Posterior summaries and MCMC diagnostics through ArviZ (SPEC §5).

Thresholds: R-hat > 1.01, bulk or tail ESS < 400, or any divergence raises a
warning in the report.
"""

from __future__ import annotations

import warnings

import numpy as np

RHAT_MAX = 1.01
ESS_MIN = 400


def import_arviz():
    """ArviZ without its import-time FutureWarning about the 1.0 refactor."""
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
        return float(fn([fn(ds[v].values) for v in ds.data_vars]))

    div = int(idata.sample_stats["diverging"].values.sum()) if "sample_stats" in idata else 0
    return {"r_hat": worst(rhat, np.nanmax), "ess_bulk": worst(ess_bulk, np.nanmin),
            "ess_tail": worst(ess_tail, np.nanmin), "divergences": div}


def problems(diag: dict) -> list[str]:
    """Plain-language descriptions of the thresholds that fail."""
    out = []
    if diag["r_hat"] > RHAT_MAX:
        out.append(f"R-hat {diag['r_hat']:.3f} > {RHAT_MAX} (chains disagree; run longer)")
    if min(diag["ess_bulk"], diag["ess_tail"]) < ESS_MIN:
        out.append(f"ESS {min(diag['ess_bulk'], diag['ess_tail']):.0f} < {ESS_MIN} (too few effective draws)")
    if diag["divergences"]:
        out.append(f"{diag['divergences']} divergent transitions (posterior may be biased)")
    return out
