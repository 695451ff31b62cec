"""Issue 29 item 1: both PyMC / ArviZ lines through one compatibility module.

PyMC 5 / ArviZ 0.x on Python 3.11, PyMC 6 / ArviZ 1.x on Python ≥ 3.12
(``pyproject.toml``'s markers); ``bayeserr.models.compat`` hides what
differs.  Every test here runs on whichever line is installed; CI runs the
suite on both.  Posterior files written by one line must read under the
other: checked here on files laid out as each line writes them, and for real
across two interpreters when ``BAYESERR_OTHER_PYTHON`` names the other
line's Python (with bayeserr installed).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bayeserr.models import compat, diagnostics

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "models").glob("*.py")) + sorted((ROOT / "bayeserr").rglob("*.py"))
ARVIZ_1 = compat.arviz_major() >= 1


def _draws(seed=0, chains=2, draws=300):
    rng = np.random.default_rng(seed)
    return {"mu": rng.beta(3, 5, (chains, draws)), "theta": rng.normal(size=(chains, draws, 4))}


# ------------------------------------------------------------------ the installed line
def test_the_installed_line_is_the_one_pyproject_names_for_this_python():
    from importlib import metadata
    pymc, arviz = (int(metadata.version(p).split(".")[0]) for p in ("pymc", "arviz"))
    if sys.version_info >= (3, 12):
        assert (pymc, arviz) == (6, 1)
    else:
        assert (pymc, arviz) == (5, 0)
    assert compat.arviz_major() == arviz


def test_no_module_but_compat_imports_pymc_or_arviz_or_asks_for_versions():
    """Every model goes through compat: nothing else imports PyMC or ArviZ (PyTensor,
    used for compile flags, is the same on both lines), calls ArviZ, or looks at a version."""
    bad = re.compile(r"^\s*(import|from)\s+(pymc|arviz\w*)\b"
                     r"|\baz\.(from_dict|InferenceData|hdi|from_netcdf)\b|hdi_prob|arviz_major"
                     r"|\b(pymc|arviz|az|pm)\.__version__|version\([\"'](pymc|arviz)", re.MULTILINE)
    found = {str(p.relative_to(ROOT)): m.group(0).strip() for p in SOURCES if p.name != "compat.py"
             for m in [bad.search(p.read_text(encoding="utf-8"))] if m}
    assert not found, found


def test_importing_compat_imports_neither():
    code = ("import sys, bayeserr.models.compat, bayeserr.models.diagnostics; "
            "print(json.dumps([m for m in ('pymc', 'arviz', 'arviz_base', 'pytensor') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


@pytest.mark.skipif(not ARVIZ_1, reason="ArviZ 0.x is one module, imported whole")
def test_a_posterior_object_under_arviz_1_imports_no_plotting_and_no_scipy_signal():
    code = ("import json, sys, numpy as np\nfrom bayeserr.models import compat, diagnostics\n"
            "d = compat.from_dict({'delta': np.random.default_rng(0).normal(size=(1, 500))}, attrs={'m': 'x'})\n"
            "diagnostics.summarize(d, ['delta'])\n"
            "print(json.dumps([m for m in ('arviz', 'arviz_plots', 'matplotlib', 'scipy.signal', 'pymc')"
            " if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


# ------------------------------------------------------------------ building and reading posteriors
def test_from_dict_puts_attrs_on_the_root_and_names_dims():
    d = _draws()
    idata = compat.from_dict(d, sample_stats={"diverging": np.zeros((2, 300), bool)},
                             coords={"group": list("abcd")}, dims={"theta": ["group"]},
                             attrs={"model": "m1", "alpha": 0.5})
    assert type(idata).__name__ == ("DataTree" if ARVIZ_1 else "InferenceData")
    assert idata.attrs["model"] == "m1" and idata.attrs["alpha"] == 0.5
    post = compat.posterior_dataset(idata)
    assert type(post).__name__ == "Dataset"
    np.testing.assert_array_equal(post["mu"].values, d["mu"])
    assert post["theta"].dims == ("chain", "draw", "group") and list(post["group"].values) == list("abcd")
    assert dict(post.sizes) == {"chain": 2, "draw": 300, "group": 4}
    assert "mu" in idata.posterior and "sample_stats" in idata and "observed_data" not in idata
    assert compat.group(idata, "observed_data") is None
    assert compat.group(idata, "sample_stats")["diverging"].dtype == bool


def test_from_datasets_and_add_variable():
    """A model's slice of a joint fit (what the NUTS models do), then a variable added
    after the fit: ``node[name] = (dims, values)`` would store a tuple under ArviZ 1."""
    joint = compat.from_dict({"mu": np.random.default_rng(1).random((2, 50, 3))}, coords={"model": [0, 1, 2]},
                             dims={"mu": ["model"]}, sample_stats={"diverging": np.zeros((2, 50), bool)})
    post = compat.posterior_dataset(joint)[["mu"]].isel(model=1, drop=True)
    post["kappa"] = np.exp(post["mu"])
    idata = compat.from_datasets(post, compat.group(joint, "sample_stats"), attrs={"target_accept": 0.9})
    assert idata.attrs["target_accept"] == 0.9 and idata.posterior["mu"].shape == (2, 50)
    np.testing.assert_array_equal(idata.posterior["mu"].values, compat.posterior_dataset(joint)["mu"].values[..., 1])
    delta = np.arange(100.0).reshape(2, 50)
    compat.add_variable(idata, "delta", ("chain", "draw"), delta)
    assert idata.posterior["delta"].dims == ("chain", "draw")
    np.testing.assert_array_equal(idata.posterior["delta"].values, delta)
    diag = diagnostics.diagnose(idata, ["mu", "delta"])
    assert diag["divergences"] == 0 and diag["sampler"] == {"chains": 2, "draws": 50, "tune": None,
                                                            "target_accept": 0.9}


def test_diagnose_counts_divergences_on_both_lines():
    div = np.zeros((2, 300), bool)
    div[1, ::50] = True
    idata = compat.from_dict(_draws(), sample_stats={"diverging": div})
    diag = diagnostics.diagnose(idata, ["mu"])
    assert diag["divergences"] == 6 and diag["r_hat"] < 1.05 and diag["ess_bulk"] > 200


def test_tail_ess_is_that_of_the_5_and_95_percent_quantiles_on_both_lines():
    """ArviZ 1's tail ESS defaults to the 11% / 89% quantiles (its ci_prob 0.89),
    0.x's to 5% / 95%: the diagnostics name 5% / 95%, so both lines give one number
    (the ESS of the indicator of each quantile, the smaller of the two)."""
    x = _draws(5)["mu"]
    az = compat.import_stats()
    ess = [float(az.ess(compat.from_dict({"i": (x <= np.quantile(x, p)).astype(float)}), var_names=["i"],
                        method="mean")["i"]) for p in (0.05, 0.95)]
    assert diagnostics.diagnose(compat.from_dict({"mu": x}), ["mu"])["ess_tail"] == pytest.approx(min(ess), rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 40, 1001, 20000])
def test_hdi_is_arviz_default_hdi(n):
    """compat.hdi computes ArviZ's default HDI itself (no arviz_stats import in a
    report): equal to the installed ArviZ's and to a brute-force search."""
    x = np.random.default_rng(n).gamma(2.0, size=n)
    got = compat.hdi(x, 0.9)
    az = compat.import_stats()
    theirs = az.hdi(x, prob=0.9) if ARVIZ_1 else az.hdi(x, hdi_prob=0.9)
    np.testing.assert_array_equal(got, np.asarray(theirs).ravel())
    s, inc = np.sort(x), min(int(np.floor(0.9 * n)), n - 1)
    widths = [s[i + inc] - s[i] for i in range(n - inc)]
    i = int(np.argmin(widths))
    np.testing.assert_array_equal(got, [s[i], s[i + inc]])
    assert diagnostics.summarize(compat.from_dict({"x": x[None]}), ["x"], 0.9)["x"]["hdi"] == list(got)


# ------------------------------------------------------------------ files
def _fit_like():
    d = _draws(3)
    idata = compat.from_dict(d, sample_stats={"diverging": np.zeros((2, 300), bool)},
                             coords={"group": list("wxyz")}, dims={"theta": ["group"]},
                             attrs={"model": "m", "target_accept": 0.85, "diagnostics": "{'r_hat': 1.0}"})
    idata.sample_stats.attrs["tuning_steps"] = 500
    return idata, d


def _check_read(idata, d):
    post = compat.posterior_dataset(idata)
    np.testing.assert_array_equal(post["mu"].values, d["mu"])
    np.testing.assert_array_equal(post["theta"].values, d["theta"])
    assert list(post["group"].values) == list("wxyz")
    assert idata.attrs["model"] == "m" and float(idata.attrs["target_accept"]) == 0.85
    assert int(idata.sample_stats.attrs["tuning_steps"]) == 500
    assert diagnostics.sampler(idata) == {"chains": 2, "draws": 300, "tune": 500, "target_accept": 0.85}


def test_netcdf_round_trip(tmp_path):
    idata, d = _fit_like()
    compat.to_netcdf(idata, tmp_path / "a.nc")
    back = compat.from_netcdf(tmp_path / "a.nc")
    _check_read(back, d)
    os.unlink(tmp_path / "a.nc")  # read into memory: the file is not held open
    assert diagnostics.diagnose(back, ["mu"])["divergences"] == 0


def _write_layout(idata, path, layout: str):
    """Write ``idata``'s groups as the other line lays them out, with xarray alone:
    ArviZ 0.x writes each group with ``Dataset.to_netcdf(group=…)`` and the root
    attributes on the root group; ArviZ 1 writes an ``xarray.DataTree`` (its groups
    carry list-valued ``sample_dims`` attributes)."""
    import xarray as xr
    groups = {g: compat.group(idata, g) for g in ("posterior", "sample_stats")}
    if layout == "arviz1":
        tree = xr.DataTree.from_dict({f"/{g}": ds.assign_attrs(sample_dims=["chain", "draw"])
                                      for g, ds in groups.items()})
        tree.attrs.update(idata.attrs)
        tree.to_netcdf(path, engine="h5netcdf")
        return
    import h5netcdf
    for i, (g, ds) in enumerate(groups.items()):
        ds.to_netcdf(path, mode="w" if i == 0 else "a", group=g, engine="h5netcdf")
    with h5netcdf.File(path, "a") as f:
        f.attrs.update(dict(idata.attrs))


@pytest.mark.parametrize("layout", ["arviz0", "arviz1"])
def test_files_laid_out_by_either_line_read_here(tmp_path, layout):
    idata, d = _fit_like()
    _write_layout(idata, tmp_path / "p.nc", layout)
    _check_read(compat.from_netcdf(tmp_path / "p.nc"), d)


_OTHER = os.environ.get("BAYESERR_OTHER_PYTHON")
_SCRIPT = """
import json, sys
import numpy as np
from bayeserr.models import compat, diagnostics
if sys.argv[1] == "write":
    rng = np.random.default_rng(7)
    idata = compat.from_dict({"mu": rng.random((2, 40))}, sample_stats={"diverging": np.zeros((2, 40), bool)},
                             attrs={"model": "other", "target_accept": 0.8})
    compat.to_netcdf(idata, sys.argv[2])
else:
    idata = compat.from_netcdf(sys.argv[2])
    diag = diagnostics.diagnose(idata, ["mu"])
    print(json.dumps({"mu": compat.posterior_dataset(idata)["mu"].values.tolist(), "model": idata.attrs["model"],
                      "sampler": diagnostics.sampler(idata), "arviz": compat.arviz_major(),
                      "diag": [diag[k] for k in ("r_hat", "ess_bulk", "ess_tail", "divergences")]}))
"""


@pytest.mark.skipif(not _OTHER, reason="BAYESERR_OTHER_PYTHON (the other line's Python) not set")
def test_files_cross_between_the_two_installed_lines(tmp_path):
    """This line reads the other line's file, and the other line reads this one's;
    both lines' diagnostics agree on the same draws."""
    def run(python, *args):
        out = subprocess.run([python, "-c", _SCRIPT, *args], capture_output=True, text=True, timeout=300,
                             check=False)
        assert out.returncode == 0, out.stderr
        return out.stdout

    mine = compat.from_dict({"mu": np.random.default_rng(7).random((2, 40))},
                            sample_stats={"diverging": np.zeros((2, 40), bool)},
                            attrs={"model": "other", "target_accept": 0.8})
    compat.to_netcdf(mine, tmp_path / "mine.nc")
    theirs = json.loads(run(_OTHER, "read", str(tmp_path / "mine.nc")))
    assert theirs["arviz"] != compat.arviz_major()  # really the other line
    np.testing.assert_array_equal(theirs["mu"], compat.posterior_dataset(mine)["mu"].values)
    assert theirs["model"] == "other" and theirs["sampler"]["target_accept"] == 0.8
    diag = diagnostics.diagnose(mine, ["mu"])
    np.testing.assert_allclose(theirs["diag"], [diag[k] for k in ("r_hat", "ess_bulk", "ess_tail", "divergences")],
                               rtol=1e-9)
    run(_OTHER, "write", str(tmp_path / "theirs.nc"))
    back = compat.from_netcdf(tmp_path / "theirs.nc")
    np.testing.assert_array_equal(compat.posterior_dataset(back)["mu"].values,
                                  compat.posterior_dataset(mine)["mu"].values)
    assert diagnostics.sampler(back)["target_accept"] == 0.8


# ------------------------------------------------------------------ the samplers' output
@pytest.mark.mcmc
def test_a_nuts_fit_has_the_same_shape_on_both_lines(tmp_path):
    """What the two-level NUTS path returns, whatever pm.sample returned (InferenceData
    or DataTree): per-model posteriors with κ, ICC and θ, sampler settings, diagnostics;
    and it survives a file."""
    from bayeserr.models import hierarchical
    k1, n1 = np.array([3, 8, 5, 9]), np.array([10, 10, 10, 10])
    k2, n2 = np.array([1, 2]), np.array([6, 6])
    fits = hierarchical.fit_mcmc_many([(k1, n1), (k2, n2)], draws=60, tune=60, chains=2, seed=1, cores=1)
    assert len(fits) == 2
    for fit, groups in zip(fits, (4, 2)):
        post = compat.posterior_dataset(fit)
        assert set(post.data_vars) == {"mu", "log_kappa", "kappa", "icc", "theta"}
        assert post["theta"].shape == (2, 60, groups) and post["mu"].dims == ("chain", "draw")
        np.testing.assert_allclose(post["kappa"].values, np.exp(post["log_kappa"].values))
        diag = diagnostics.diagnose(fit, ["mu"])
        assert diag["sampler"] == {"chains": 2, "draws": 60, "tune": 60, "target_accept": 0.8}
    compat.to_netcdf(fits[0], tmp_path / "fit.nc")
    back = compat.from_netcdf(tmp_path / "fit.nc")
    np.testing.assert_array_equal(compat.posterior_dataset(back)["theta"], compat.posterior_dataset(fits[0])["theta"])
    assert diagnostics.sampler(back) == diagnostics.sampler(fits[0])
    assert not np.array_equal(compat.posterior_dataset(fits[0])["mu"], compat.posterior_dataset(fits[1])["mu"])
