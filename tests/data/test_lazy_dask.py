"""xarray builds our Datasets without importing dask (bayeserr.data.lazy_dask), and still
knows dask arrays once dask is imported."""

import importlib.util
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("dask") is None, reason="dask is not installed")


def _run(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_a_report_imports_no_dask():
    out = _run("import sys, bayeserr\n"
               "from importlib.resources import files\n"
               "path = str(files('bayeserr.examples') / 'internal_eval.csv.gz')\n"
               "bayeserr.report(bayeserr.load(path)).render('json')\n"
               "print(sorted(m for m in sys.modules if m == 'dask' or m.startswith('dask.')))")
    assert out == "[]"


def test_dask_arrays_are_known_once_dask_is_imported():
    """After the install, a dask array given to xarray stays a lazy dask array (xarray saw its type)."""
    out = _run("import numpy as np, xarray as xr\n"
               "from bayeserr.data import lazy_dask\n"
               "lazy_dask.install()\n"
               "xr.Dataset({'s': (('a',), np.zeros(3))})\n"
               "import dask.array as da\n"
               "from xarray.namedarray.pycompat import array_type\n"
               "from xarray.namedarray.utils import is_duck_dask_array\n"
               "ds = xr.Dataset({'s': (('a',), da.zeros(4, chunks=2))})\n"
               "print(array_type('dask') == (da.Array,), is_duck_dask_array(ds['s'].data), dict(ds.chunks))")
    assert out == "True True {'a': (2, 2)}"


def test_the_stand_in_answers_like_an_object():
    """Unknown attributes raise AttributeError (hasattr, copy and pickle protocols work)."""
    out = _run("import copy\n"
               "from bayeserr.data import lazy_dask\n"
               "lazy_dask.install()\n"
               "from xarray.namedarray import pycompat\n"
               "entry = pycompat._cached_duck_array_modules['dask']\n"
               "print(hasattr(entry, 'foo'), entry.type, entry.available, type(copy.deepcopy(entry)).__name__)")
    assert out == "False () False _DaskOnceImported"
