"""Layer 1, the data: from files, logs and DataFrames to one validated
``xarray.Dataset`` (``docs/methods.md`` §1).

* :mod:`.loading` — :func:`~bayeserr.data.loading.load`, one or several inputs
  combined, with the row accounting;
* :mod:`.tables` — one results table (CSV, TSV, JSONL, Parquet);
* :mod:`.summaries` — task × model summary tables (a score and its SE per model and task);
* :mod:`.readers` — Inspect AI and lm-evaluation-harness logs;
* :mod:`.dataset` — the column mapping, the SPEC §1 checks and the dataset
  they build;
* :mod:`.filters` — ``--where`` row filters;
* :mod:`.memory` — memory checks before loading;
* :mod:`.lazy_dask` — xarray without importing dask where dask is not used;
* :mod:`.config` — ``bayeserr.toml`` and ``[tool.bayeserr]`` defaults.

May import: :mod:`bayeserr.base`.  A new input format is a reader in
:mod:`.readers` (a ``Reader`` in :mod:`.readers.registry`).
"""

# the public names of the former bayeserr/data.py module, all still here; imported on first use, so
# that importing one light module of this package (e.g. .config) does not import pandas and xarray
from bayeserr.base.lazy import lazy_names

_NAMES = {
    "dataset": ("DEFAULT_COLUMNS", "REQUIRED", "Columns", "RowAccount", "cluster_codes", "question_means",
                "resolve_columns", "rows_of"),
    "loading": ("load",),
    "memory": ("LOAD_BYTES_PER_ROW", "MAX_CUBE_BYTES", "load_memory_estimate"),
    "tables": ("STDIN", "read_table"),
}
__all__, __getattr__ = lazy_names(__name__, _NAMES)
