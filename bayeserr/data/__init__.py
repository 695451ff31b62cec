"""Layer 1, the data: from files, logs and DataFrames to one validated
``xarray.Dataset`` (``docs/methods.md`` §1).

* :mod:`.loading` — :func:`~bayeserr.data.loading.load`, one or several inputs
  combined, with the row accounting;
* :mod:`.tables` — one results table (CSV, TSV, JSONL, Parquet);
* :mod:`.readers` — Inspect AI and lm-evaluation-harness logs;
* :mod:`.dataset` — the column mapping, the SPEC §1 checks and the dataset
  they build;
* :mod:`.filters` — ``--where`` row filters;
* :mod:`.memory` — memory checks before loading;
* :mod:`.config` — ``bayeserr.toml`` and ``[tool.bayeserr]`` defaults.

May import: :mod:`bayeserr.base`.  A new input format is a reader in
:mod:`.readers` (registered in ``READERS``).
"""

from bayeserr.data.dataset import (DEFAULT_COLUMNS, REQUIRED, Columns, RowAccount, cluster_codes,
                                   question_means, resolve_columns, rows_of)
from bayeserr.data.loading import load
from bayeserr.data.memory import LOAD_BYTES_PER_ROW, MAX_CUBE_BYTES, load_memory_estimate
from bayeserr.data.tables import STDIN, read_table

# the public names of the former bayeserr/data.py module, all still here
__all__ = ["Columns", "DEFAULT_COLUMNS", "LOAD_BYTES_PER_ROW", "MAX_CUBE_BYTES", "REQUIRED", "RowAccount",
           "STDIN", "cluster_codes", "load", "load_memory_estimate", "question_means", "read_table",
           "resolve_columns", "rows_of"]
