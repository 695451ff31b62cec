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

from bayeserr.data.dataset import (
           Columns,
           RowAccount,
           cluster_codes,
           question_means,
           rows_of,
)
from bayeserr.data.loading import load
from bayeserr.data.memory import MAX_CUBE_BYTES, load_memory_estimate
from bayeserr.data.tables import read_table

__all__ = ["Columns", "MAX_CUBE_BYTES", "RowAccount", "cluster_codes", "load", "load_memory_estimate",
           "question_means", "read_table", "rows_of"]
