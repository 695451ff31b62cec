"""Layer 2b, the engines: where the statistics of a report are computed
(``docs/guide/scale.md``).

The layer between the formulas (:mod:`bayeserr.stats`, pure functions of arrays) and
the analyses: engines read files, spill to temporary folders and start clusters.

Modules:

* :mod:`bayeserr.engines.registry` — :data:`~bayeserr.engines.registry.ENGINES`, one entry per engine (``memory``,
  ``stream``, ``dask``) with its options and the one check of them;
* :mod:`bayeserr.engines.stream` — ``--engine stream``: Parquet in record batches, on one
  machine, in bounded memory; the :class:`~bayeserr.engines.stream.StreamResult` contract;
* :mod:`bayeserr.engines.dask` — ``--engine dask``: the same statistics on a
  dask.distributed cluster.

May import: :mod:`bayeserr.base`, :mod:`bayeserr.data`, :mod:`bayeserr.stats`.  Nothing
here is imported by ``import bayeserr``.
"""
