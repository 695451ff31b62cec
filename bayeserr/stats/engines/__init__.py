"""Engines: ways to compute the :class:`~bayeserr.stats.sufficient.Sufficient`
statistics of a results table too large to hold as a cube.

* ``memory`` (the default) — the loaded :class:`~bayeserr.stats.view.DataView`
  is one partition (:func:`bayeserr.stats.sufficient.sufficient_from_view`).
* ``stream`` — :func:`bayeserr.stats.engines.stream.reduce_parquet`: Parquet
  (file, folder, glob, hive-partitioned dataset) read in record batches with
  pyarrow, hash-partitioned by question to spill files, each partition reduced
  and the results added (bounded memory).

An engine's contract (what a distributed engine implements, see
``docs/guide/scale.md``): produce a :class:`StreamResult` — the statistics,
the row accounting, the columns used and the source label — by

1. ``scan``: the models, clusters and centres (:func:`stream.scan`: one pass,
   any order of rows);
2. ``reduce``: for each partition *of the questions* (all rows of a question
   together), :func:`stream.reduce_table` → :class:`Sufficient`;
3. ``combine``: ``sum(parts)`` (:meth:`Sufficient.__add__`, associative).

:func:`bayeserr.reporting.scale.report_from_sufficient` turns the result
into the report.  Nothing here is imported by ``import bayeserr``.
"""
