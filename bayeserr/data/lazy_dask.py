"""xarray without importing dask where dask is not used.

xarray asks, while it builds every Dataset, whether the data is a dask array, and to answer
it imports ``dask.array`` whenever dask is installed (``xarray.namedarray.pycompat.array_type``,
and ``dask.base`` in ``xarray.namedarray.utils.is_dask_collection``): building one small
Dataset took 0.93 CPU s with those imports and 0.46 s without, on this project's 2-core
machine (xarray 2026.9), though nothing here hands xarray a dask array unless ``--engine
dask`` imported dask itself.  :func:`install` makes both questions import nothing: no object
can be a dask array (or collection) before dask is imported, and once it is (by the dask
engine or by the user) they are answered by dask itself.  If a future xarray has neither
hook, nothing is installed and xarray imports dask as before (slower, never wrong)."""

from __future__ import annotations

import sys


class _DaskOnceImported:
    """Stands in for xarray's ``DuckArrayModule("dask")``: dask's array type and version once
    ``dask.array`` is imported, else none (nothing can be a dask array yet)."""

    def __init__(self, real):
        self._real, self._module = real, None

    def _loaded(self):
        if self._module is None and "dask.array" in sys.modules:
            self._module = self._real("dask")
        return self._module

    def __getattr__(self, name):  # type, version, module, available
        if name.startswith("_"):  # copy, pickle and other protocols: not DuckArrayModule's
            raise AttributeError(name)
        loaded = self._loaded()
        if loaded is not None:
            return getattr(loaded, name)
        from packaging.version import Version
        empty = {"type": (), "version": Version("0.0.0"), "module": None, "available": False}
        if name not in empty:
            raise AttributeError(name)
        return empty[name]


def install() -> None:
    """Put the stand-in in xarray's cache and wrap its dask-collection test, unless dask is
    imported already (then xarray's own answers are right and cheap) or this xarray has
    neither hook (then nothing changes).  Idempotent."""
    if "dask" in sys.modules:
        return
    try:
        from xarray.namedarray import pycompat, utils
        cache, real, collection = (pycompat._cached_duck_array_modules, pycompat.DuckArrayModule,
                                   utils.is_dask_collection)
    except (ImportError, AttributeError):
        return
    cache.setdefault("dask", _DaskOnceImported(real))
    if not getattr(collection, "_bayeserr_lazy", False):
        utils.is_dask_collection = _collection_test(collection)


def _collection_test(xarray_test):
    """xarray's ``is_dask_collection``, answering False without importing dask until dask is imported."""
    def is_dask_collection(x) -> bool:
        return "dask" in sys.modules and xarray_test(x)
    is_dask_collection._bayeserr_lazy = True
    return is_dask_collection
