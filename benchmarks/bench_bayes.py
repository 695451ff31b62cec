"""Speed of the Bayesian paths (issue: Bayesian models).  Run: ``python benchmarks/bench_bayes.py``.

1. ``--bayes fast`` over ``--bayes off`` on the SWE-bench file (25 models, 500
   items, 12 clusters, 300 pairs), in process and end to end;
2. exact hierarchical posterior for 1,000 clusters;
3. ``--bayes mcmc`` for one hierarchical model on 500 items, wall time with
   compilation, split into model building, compilation and sampling.

Needs ../shared for (1) and (3); (2) uses simulated data.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SWEBENCH = ROOT.parent / "shared" / "data" / "real" / "swebench_verified_bashonly_per_instance.csv.gz"




def main():
    warnings.simplefilter("ignore")
    import bayeserr
    from bayeserr.bayes import BayesSettings
    from bayeserr.models import hierarchical
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")

    if SWEBENCH.exists():
        df = pd.read_csv(SWEBENCH)
        df = df[df["per_instance_matches_reported"]][["model", "question_id", "cluster_id", "score"]]
        ds = bayeserr.load(df)
        bayeserr.report(ds)  # warm imports
        off = best_of(5, lambda: bayeserr.report(ds, bayes=BayesSettings(mode="off")))
        fast = best_of(5, lambda: bayeserr.report(ds))
        print(f"SWE-bench (24 models, 500 items, 12 clusters, 276 pairs), in process: "
              f"--bayes off {off:.3f} s, fast {fast:.3f} s -> fast adds {fast - off:.3f} s (target < 1 s)")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "swe.csv"
            df.to_csv(path, index=False)
            cmd = [sys.executable, "-m", "bayeserr.cli", "report", str(path), "--format", "json"]
            e_off = best_of(3, lambda: subprocess.run(cmd + ["--bayes", "off"], check=True, capture_output=True))
            e_fast = best_of(3, lambda: subprocess.run(cmd, check=True, capture_output=True))
            print(f"  end to end: off {e_off:.2f} s, fast {e_fast:.2f} s -> adds {e_fast - e_off:.2f} s")

    rng = np.random.default_rng(0)
    n = rng.integers(5, 60, 1000)
    k = rng.binomial(n, rng.beta(3, 2, 1000))
    hierarchical.fit_exact(k, n)
    t = best_of(10, lambda: hierarchical.fit_exact(k, n))
    print(f"exact hierarchical posterior, 1,000 clusters: {1000 * t:.1f} ms (target < 100 ms)")

    if SWEBENCH.exists():
        one = df[df["model"] == df["model"].iloc[0]]
        grouped = one.groupby("cluster_id")["score"].agg(["sum", "count"])
        import pymc as pm
        t0 = time.perf_counter()
        model = hierarchical.build_pymc_model(grouped["sum"].to_numpy(), grouped["count"].to_numpy())
        t1 = time.perf_counter()
        with model:
            # compile the log-probability and gradient once, as NUTS does at start-up
            model.compile_logp()
            model.compile_dlogp()
        t2 = time.perf_counter()
        with model:
            pm.sample(1000, tune=1000, chains=2, random_seed=0, progressbar=False,
                      compute_convergence_checks=False)
        t3 = time.perf_counter()
        print(f"--bayes mcmc, one hierarchical model on 500 items (12 clusters), fresh process: "
              f"build {t1 - t0:.2f} s, compile {t2 - t1:.2f} s, sample (incl. its own compile) {t3 - t2:.2f} s, "
              f"total {t3 - t0:.2f} s")
        code = (f"import time,warnings; warnings.simplefilter('ignore'); t=time.perf_counter(); "
                f"import pandas as pd; from bayeserr.models import hierarchical as h; "
                f"df=pd.read_csv({str(SWEBENCH)!r}); one=df[df.model==df.model.iloc[0]]; "
                f"g=one.groupby('cluster_id').score.agg(['sum','count']); "
                f"h.fit_mcmc(g['sum'].values, g['count'].values, seed=0); print(time.perf_counter()-t)")
        def wall(env_extra):
            env = {**os.environ, **env_extra}
            return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True, env=env).stdout.split()[-1])
        with tempfile.TemporaryDirectory() as cache:
            cold = wall({"PYTENSOR_FLAGS": f"base_compiledir={cache}"})
            warm = wall({"PYTENSOR_FLAGS": f"base_compiledir={cache}"})
        print(f"  wall in a fresh process, imports + compile + 2x(1000+1000) draws (target < 10 s): "
              f"empty PyTensor cache {cold:.2f} s, warm cache {warm:.2f} s")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "swe.csv"
            df.to_csv(path, index=False)
            cmd = [sys.executable, "-m", "bayeserr.cli", "report", str(path), "--format", "json",
                   "--bayes", "mcmc"]
            env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={Path(tmp) / 'cache'}"}
            times = []
            for _ in range(2):  # empty cache, then warm
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=env)
                times.append(time.perf_counter() - t0)
        print(f"report --bayes mcmc on SWE-bench (24 models, one graph), end to end (target < 15 s "
              f"with an empty cache): empty PyTensor cache {times[0]:.2f} s, warm cache {times[1]:.2f} s")


if __name__ == "__main__":
    main()
