"""The one place that knows which PyMC / ArviZ line is installed.

Two lines are supported (``pyproject.toml`` picks by Python version):

* PyMC 5 / ArviZ 0.x (Python 3.11): a posterior is an
  ``arviz.InferenceData``; its groups (``idata.posterior``) are
  ``xarray.Dataset``\\ s.
* PyMC 6 / ArviZ 1.x (Python ≥ 3.12): a posterior is an
  ``xarray.DataTree``; its groups are ``DataTree`` nodes.  ``az.from_dict``
  takes one ``{group: {variable: array}}`` mapping and puts ``attrs`` per
  group, ``az.InferenceData`` is gone, ``az.hdi`` takes ``prob=``, and
  ``node[name] = (dims, values)`` stores the *tuple* as one object scalar
  (silently: use :func:`add_variable`).  netCDF needs an engine ArviZ 1 no
  longer installs (h5netcdf: the ``arviz[h5netcdf]`` requirement).

Both kinds of object read alike for what the rest of the package does with a
posterior: ``idata.posterior["mu"].values``, ``"phi" in idata.posterior``,
``idata.posterior.sizes``, ``"sample_stats" in idata``,
``idata.sample_stats.attrs``, ``idata.attrs`` (the root attributes) and
``idata.to_netcdf(path)``.  What differs goes through the functions here,
so no model branches on versions:

==========================================  ===========================================
:func:`import_pymc`, :func:`import_stats`   quiet imports, with a writable cache folder
:func:`import_arviz`                        the whole of ArviZ (plots too: tests, notebooks)
:func:`arviz_major`                         0 or 1
:func:`from_dict`                           draws → posterior object (root ``attrs``)
:func:`from_datasets`                       ``xarray.Dataset`` groups → posterior object
:func:`posterior_dataset`, :func:`group`    a group as a plain ``xarray.Dataset``
:func:`add_variable`                        add ``name`` with ``dims`` to a group, in place
:func:`hdi`                                 highest-density interval of draws
:func:`to_netcdf`, :func:`from_netcdf`      posterior files, readable by either line
:func:`capped_kappa`                        κ for a Beta–Binomial likelihood in a PyMC graph
:func:`chain_seeds`                         the chains' seeds ``pm.sample`` derives from a seed
==========================================  ===========================================

Files: both lines write netCDF-4 (HDF5) through h5netcdf, a group per
posterior group and the root attributes on the root group, and each reads
the other's files (``tests/test_compat_lines.py``).

Imports: nothing here imports PyMC or ArviZ at import time (``import bayeserr``
must not).  Under ArviZ 1 only its parts are imported where needed,
``arviz_base`` (posterior objects: light) and ``arviz_stats`` (R-hat, ESS:
imports ``scipy.signal``), never the ``arviz`` umbrella, which also imports
``arviz_plots`` and matplotlib (1.4 s); PyMC 6 itself imports only
``arviz_base``.  Under ArviZ 0.x there is one ``arviz`` module, imported whole
(PyMC 5 imports it anyway).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

#: log κ above which a Beta–Binomial likelihood uses κ = e^20 (see :func:`capped_kappa`)
LOG_KAPPA_CAP = 20.0


# ----------------------------------------------------------------- imports
def writable_cache() -> None:
    """Cache folders that can be written, and a compile cache of its own per PyMC line.

    * ``XDG_CACHE_HOME``: ArviZ creates ``~/.cache/arviz`` when it is imported (PyMC
      imports it too); a ``~/.cache`` that cannot be written (a container running as an
      arbitrary uid with a read-only ``$HOME``) is replaced by :func:`user_temp_folder`.
    * PyTensor's ``base_compiledir`` (its C modules and, from PyTensor 3 on, its Numba
      cache): ``bayeserr/pytensor-<PyTensor version>-py<X.Y>`` in that cache folder
      (:func:`compile_folder`), one per PyMC line, so that PyMC 5 (PyTensor 2, C) and
      PyMC 6 (PyTensor 3, Numba) never share or rebuild each other's modules, kept
      across runs (the first ``--bayes mcmc`` on a machine compiles; later ones load).
      A ``base_compiledir`` or ``compiledir`` the user set (``PYTENSOR_FLAGS``, or a
      ``.pytensorrc``) is kept; a ``compiledir`` alone gets this ``base_compiledir`` too
      when ``~/.pytensor`` cannot be written, since PyTensor 3 keeps its Numba cache there.
    * ``MPLCONFIGDIR`` when ``~/.config/matplotlib`` cannot be written.

    Call before importing them (``docs/methods.md`` §5.6)."""
    import os
    from pathlib import Path

    home = Path(os.environ.get("HOME") or Path.home())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    if not _writable(cache):
        cache = user_temp_folder("cache")
        os.environ["XDG_CACHE_HOME"] = str(cache)
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    chosen = _pytensor_folders_set(flags)
    if "base_compiledir" not in chosen and (not chosen or not _writable(home / ".pytensor")):
        extra = f"base_compiledir={compile_folder(cache)}"
        os.environ["PYTENSOR_FLAGS"] = f"{flags},{extra}" if flags else extra
    if "MPLCONFIGDIR" not in os.environ and not _writable(home / ".config" / "matplotlib"):
        os.environ["MPLCONFIGDIR"] = str(user_temp_folder("matplotlib"))


def _writable(folder) -> bool:
    """Whether ``folder`` can be written (or created: its nearest existing parent)."""
    import os
    from pathlib import Path
    folder = Path(folder)
    probe = folder if folder.exists() else next((p for p in folder.parents if p.exists()), folder)
    return os.access(probe, os.W_OK | os.X_OK)


def _pytensor_folders_set(flags: str) -> set:
    """Which of ``base_compiledir`` / ``compiledir`` the user set, in ``PYTENSOR_FLAGS``
    or in a PyTensor configuration file (``PYTENSORRC``, default ``~/.pytensorrc``)."""
    import os
    import re
    from pathlib import Path
    texts = [flags]
    for rc in os.environ.get("PYTENSORRC", str(Path("~/.pytensorrc").expanduser())).split(os.pathsep):
        try:
            texts.append(Path(rc).expanduser().read_text(errors="replace"))
        except OSError:
            pass
    return {m.group(1) for t in texts for m in re.finditer(r"(?<![\w.])(base_compiledir|compiledir)\s*=", t)}


def compile_folder(cache=None):
    """The PyTensor ``base_compiledir`` of this PyMC line: ``<cache>/bayeserr/pytensor-<version>-py<X.Y>``
    (``cache``: the user cache folder, ``XDG_CACHE_HOME`` or ``~/.cache``; where that cannot
    be written, :func:`user_temp_folder`).  PyTensor's version is read from its metadata,
    without importing it."""
    import os
    import sys
    from importlib import metadata
    from pathlib import Path
    if cache is None:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path(os.environ.get("HOME") or Path.home()) / ".cache")
    try:
        version = metadata.version("pytensor")
    except metadata.PackageNotFoundError:
        version = "unknown"
    folder = Path(cache) / "bayeserr" / f"pytensor-{version}-py{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return folder if folder.is_dir() and _writable(folder) else user_temp_folder(folder.name)


def user_temp_folder(name: str):
    """``<temp>/bayeserr-<uid>/<name>``: a folder of this user's in the temporary folder, the
    same on every run (so a compile cache there stays warm), created private (0700).  If that
    name is taken by another user, or cannot be made private, a new temporary folder."""
    import os
    import tempfile
    from pathlib import Path
    import getpass
    uid = os.getuid() if hasattr(os, "getuid") else getpass.getuser()
    root = Path(tempfile.gettempdir()) / f"bayeserr-{uid}"
    try:
        root.mkdir(mode=0o700, exist_ok=True)
        st = root.lstat()
        if root.is_symlink() or (hasattr(os, "getuid") and st.st_uid != os.getuid()) or not _writable(root):
            raise PermissionError(root)
        folder = root / name
        folder.mkdir(mode=0o700, exist_ok=True)
        return folder
    except OSError:
        return Path(tempfile.mkdtemp(prefix=f"bayeserr-{name}-"))


def _quiet_import(name: str):
    import importlib
    import sys
    if name in sys.modules:  # imported already: no folders to set up, no warnings to silence
        return sys.modules[name]
    writable_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        return importlib.import_module(name)


def import_arviz():
    """The whole of ArviZ (``az.mcse``, plots …) without its import-time warnings
    (ArviZ 0.x's FutureWarning about the 1.0 refactor) and with a cache folder it
    can write (:func:`writable_cache`).  The package itself uses :func:`import_stats`
    and the functions below, which under ArviZ 1 import less."""
    return _quiet_import("arviz")


@functools.cache
def arviz_major() -> int:
    """The installed ArviZ's major version (0 or 1), read from its metadata
    (without importing it)."""
    from importlib import metadata
    try:
        version = metadata.version("arviz")
    except metadata.PackageNotFoundError:  # not installed as a distribution: ask the module
        version = import_arviz().__version__
    return int(version.split(".")[0])


def _import_base():
    """Where ``from_dict`` lives: ``arviz_base`` (ArviZ 1), ``arviz`` (0.x)."""
    return _quiet_import("arviz_base" if arviz_major() >= 1 else "arviz")


def import_stats():
    """The module with ``rhat``, ``ess`` and ``mcse`` (same keywords on both lines):
    ``arviz_stats`` (ArviZ 1), ``arviz`` (0.x)."""
    return _quiet_import("arviz_stats" if arviz_major() >= 1 else "arviz")


def import_pymc():
    """PyMC, with a cache folder ArviZ can write; under ArviZ 0.x with ArviZ's
    import-time warnings silenced (PyMC 5 imports the whole of ArviZ; PyMC 6 only
    ``arviz_base``, which warns of nothing)."""
    if arviz_major() < 1:
        import_arviz()
    return _quiet_import("pymc")


def chain_seeds(random_seed, chains: int) -> list[int]:
    """The seeds of the ``chains`` that ``pm.sample(random_seed=...)`` derives (PyMC's own
    generator spawning), for a NUTS set-up made before ``pm.sample`` (``models/nuts.py``)."""
    import_pymc()
    from pymc.util import get_random_generator
    return [int(rng.integers(2**30)) for rng in get_random_generator(random_seed).spawn(chains)]


def _is_tree(obj) -> bool:
    import xarray as xr
    tree = getattr(xr, "DataTree", None)  # xarray ≥ 2024.10 (ArviZ 1 requires 2024.11)
    return tree is not None and isinstance(obj, tree)


# ----------------------------------------------------------------- building posteriors
def from_dict(posterior: dict, *, sample_stats: dict | None = None, coords: dict | None = None,
              dims: dict | None = None, attrs: dict | None = None):
    """A posterior object from arrays of draws (chain × draw × …): ``posterior``
    and optionally ``sample_stats`` map variable names to arrays, ``coords`` /
    ``dims`` name the extra dimensions as in ``az.from_dict``; ``attrs`` become
    the root attributes (``idata.attrs``) on both lines."""
    az = _import_base()
    groups = {"posterior": posterior}
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    kw = {k: v for k, v in (("coords", coords), ("dims", dims)) if v is not None}
    if arviz_major() >= 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # e.g. "few draws" convention notes
            idata = az.from_dict(groups, **kw)
    else:
        idata = az.from_dict(**groups, **kw)
    if attrs:
        idata.attrs.update(attrs)
    return idata


def from_datasets(posterior, sample_stats=None, attrs: dict | None = None):
    """A posterior object from ``xarray.Dataset`` groups (``posterior`` and
    optionally ``sample_stats``), e.g. one model's slice of a joint fit."""
    groups = {"posterior": posterior}
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    if arviz_major() >= 1:
        import xarray as xr
        idata = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
    else:
        idata = import_arviz().InferenceData(**groups)
    if attrs:
        idata.attrs.update(attrs)
    return idata


# ----------------------------------------------------------------- reading and changing posteriors
def group(idata, name: str = "posterior"):
    """Group ``name`` of a posterior object as a plain ``xarray.Dataset`` (None
    when it has no such group).  Under ArviZ 1 a copy of the node's variables:
    use :func:`add_variable` to change the posterior itself."""
    if name not in idata:
        return None
    g = idata[name]
    return g.to_dataset() if _is_tree(g) else g


def posterior_dataset(idata):
    """The posterior group as a plain ``xarray.Dataset`` (``ds[["mu", "log_kappa"]]``,
    ``ds.isel(model=m)`` work on it on both lines)."""
    return group(idata, "posterior")


def add_variable(idata, name: str, dims, values, group_name: str = "posterior") -> None:
    """Add (or replace) variable ``name`` with dimensions ``dims`` in a group of
    ``idata``, in place.  (Under ArviZ 1 ``idata.posterior[name] = (dims, values)``
    would store the tuple as a 0-d object array.)"""
    import xarray as xr
    idata[group_name][name] = xr.DataArray(np.asarray(values), dims=tuple(dims))


def hdi(x, prob: float) -> np.ndarray:
    """Highest-density interval ``[lo, hi]`` of the draws ``x`` (flattened, NaNs
    dropped): the narrowest interval between two sorted draws ``floor(prob · n)``
    places apart.  This is ArviZ's default HDI on both lines (``az.hdi(x,
    hdi_prob=prob)`` in 0.x, ``az.hdi(x, prob=prob)`` in 1.x: equal to the last
    digit, ``tests/test_compat_lines.py``), computed here so that a report needs
    no ``arviz_stats`` (and its ``scipy.signal``) for it."""
    x = np.sort(np.asarray(x, float).reshape(-1))
    x = x[~np.isnan(x)] if np.isnan(x).any() else x
    n = x.size
    if n < 2:
        raise ValueError("Too few elements for interval calculation.")
    inc = min(int(np.floor(prob * n)), n - 1)
    i = int(np.argmin(np.subtract(x[inc:], x[:n - inc], dtype=np.float64)))
    return np.array([x[i], x[i + inc]])


# ----------------------------------------------------------------- files
def to_netcdf(idata, path) -> None:
    """Write ``idata`` to the netCDF-4 file ``path`` (h5netcdf, numeric variables
    zlib-compressed as ArviZ 0.x does), readable by :func:`from_netcdf` on either line."""
    path = str(path)
    if not _is_tree(idata):
        idata.to_netcdf(path, engine="h5netcdf")  # ArviZ 0.x: compresses by default
        return
    encoding = {}
    for node in idata.subtree:
        ds = node.to_dataset(inherit=False)
        enc = {v: {"zlib": True} for v, da in ds.data_vars.items() if da.dtype.kind in "biuf" and da.ndim}
        if enc:
            encoding[node.path] = enc
    idata.to_netcdf(path, engine="h5netcdf", encoding=encoding or None)


def from_netcdf(path):
    """Read a posterior file written by :func:`to_netcdf` (either line) into memory:
    an ``InferenceData`` under ArviZ 0.x, an ``xarray.DataTree`` under ArviZ 1."""
    if arviz_major() >= 1:
        import xarray as xr
        with xr.open_datatree(str(path), engine="h5netcdf") as tree:
            return tree.load().copy()
    return import_arviz().from_netcdf(str(path), engine="h5netcdf")


# ----------------------------------------------------------------- PyMC graph pieces
def capped_kappa(log_kappa):
    """``exp(min(log κ, 20))``: the κ that a Beta–Binomial likelihood in a PyMC
    graph uses.

    PyMC's Beta–Binomial log density is a difference of ``betaln`` terms of size
    ~κ·log κ, which keeps no digit past log κ ≈ 35 (log κ = 49: −483 with the C
    backend, +2·10⁸ with Numba, where the truth is −347; a sampler wandering
    there diverges).  At κ = e^20 the Beta–Binomial is the binomial to
    ~N²/(2κ) ≈ 10⁻³ nats for a group of N = 1000 answers, and the priors put
    no mass there (log κ ~ Normal(2.5, 1.5): 11.7 sd), so capping changes no
    posterior: above the cap the likelihood is flat in κ and the prior alone
    brings the sampler back."""
    import pytensor.tensor as pt
    return pt.exp(pt.minimum(log_kappa, LOG_KAPPA_CAP))
