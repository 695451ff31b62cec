"""The engines a report can be computed by, one registry (``--engine``; ``build_report(...,
engine=)``): each says what it reads, which reader options it takes and which options of its
own, and checks them once (``docs/development.md``, "A new engine").

``memory`` computes every section from the per-question data; the others reduce Parquet
results to sufficient statistics (:class:`~bayeserr.engines.stream.StreamResult`) and the
report is built from those (:func:`bayeserr.reporting.build.report_from_sufficient`)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from bayeserr.base.errors import InputError, describe
from bayeserr.base.registry import Registry
from bayeserr.data.readers.options import OPTIONS

#: the reader options of a results table that an engine reducing Parquet takes (column names)
COLUMN_OPTIONS = ("model_col", "question_col", "score_col", "cluster_col", "sample_col", "task_col", "no_cluster")
#: reader options left at these values ask nothing of an engine reducing Parquet
_DEFAULTS = {"input_format": ("auto", "parquet"),
             **{o.name: (o.default,) for o in OPTIONS.values() if o.choices}}


@dataclass(frozen=True)
class Engine:
    """One engine: ``reduce`` (``"module:function"``, taking the source, the column options
    and the engine's own ``options``, returning a StreamResult), or ``None`` for the memory
    engine, which reads the whole table with the loader."""

    name: str
    summary: str
    reduce: str | None = None
    options: tuple = ()  #: the engine's own keyword options (``build_report(path, engine=..., workers=2)``)

    @property
    def per_question(self) -> bool:
        return self.reduce is None

    def run(self, source, load: dict, **options):
        """The engine's sufficient statistics of ``source``."""
        module, function = self.reduce.split(":")
        return getattr(importlib.import_module(module), function)(source, **load, **options)

    def check_source(self, source) -> None:
        """An engine reducing Parquet takes paths, not a loaded dataset."""
        ok = isinstance(source, (str, os.PathLike)) or (
            isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source))
        if not ok:
            raise InputError(f"engine='{self.name}' reads Parquet files: give a path (a file, folder, glob pattern "
                             f"or hive-partitioned dataset) or a list of them; got {describe(source)}. A loaded "
                             "dataset is already in memory: use engine='memory'.")
        for item in source if isinstance(source, (list, tuple)) else [source]:
            if os.fspath(item) == "-":
                raise InputError(f"--engine {self.name} reads Parquet from paths, not standard input: write the "
                                 "table to a file (or use --engine memory, which reads standard input).")
            suffixes = [s.lower() for s in Path(os.fspath(item)).suffixes if s.lower() != ".gz"]
            if suffixes and suffixes[-1] in (".csv", ".tsv", ".jsonl", ".json", ".eval"):
                raise InputError(
                    f"{os.fspath(item)}: --engine {self.name} reads Parquet results (a .parquet file, a folder or "
                    f"glob of them, or a hive-partitioned dataset), not {suffixes[-1]} files. Write the table as "
                    "Parquet (pandas: pd.read_csv(path).to_parquet('results.parquet')), or use --engine memory.")

    def check_load(self, load: dict, *, where=(), models=None) -> dict:
        """The column options of ``load`` this engine takes; an :class:`InputError` naming each
        option it does not support (filters, model selection, logs, labels)."""
        if self.per_question:
            return dict(load)
        unsupported = [f"--{k.replace('_', '-')}" for k, v in load.items()
                       if k not in COLUMN_OPTIONS and v not in _DEFAULTS.get(k, (None, False))]
        unsupported += ["--where"] if where else []
        unsupported += ["--models"] if models else []
        if unsupported:
            selecting = any(u in ("--where", "--models") for u in unsupported)
            raise InputError(f"--engine {self.name} reads Parquet results tables with the column options only; "
                             f"{', '.join(unsupported)} need{'s' if len(unsupported) == 1 else ''} --engine memory. "
                             + ("Filter or select models when writing the Parquet files (e.g. one hive partition "
                                "per model), or drop the option." if selecting else "Drop the option, or use "
                                "--engine memory (on the data, or on a sample of its questions)."))
        return {k: v for k, v in load.items() if k in COLUMN_OPTIONS}

    def check_options(self, options: dict) -> None:
        """Options of another engine are refused, naming the engine they belong to."""
        for key, value in options.items():
            if value in (None, False) or key in self.options:
                continue
            owner = next((e.name for e in ENGINES.values() if key in e.options), None)
            flag = f"--{key.replace('_', '-')}"
            raise InputError(f"{flag} is an option of --engine {owner}; add --engine {owner} or drop it."
                             if owner else f"{flag} is not an option of --engine {self.name}.")


#: ``--engine auto`` streams a Parquet input when reading it whole would need more than this share
#: of the memory left (the loader refuses at 100%: "comfortably" leaves room for the report's work)
AUTO_SHARE = 0.5
#: ... or whose rows are more than this: at 100M rows the stream engine took 35–38 s where the memory engine
#: took 62.6–98.6 s and 7.3–8.9 GiB (docs/guide/scale.md, "Figures"), so past tens of millions it is also faster
AUTO_ROWS = 50_000_000


def auto_engine(files) -> tuple[str, str | None]:
    """``--engine auto``: ``("stream", note)`` when every input is Parquet (a file or a folder of
    them) and its row count, from the Parquet metadata, would need more than :data:`AUTO_SHARE` of
    the memory left to read whole, or exceeds :data:`AUTO_ROWS`; else ``("memory", None)``.  Reading
    the metadata reads no rows."""
    from bayeserr.base.errors import human_bytes
    from bayeserr.data.memory import load_memory_estimate, resident_memory_left
    rows = _parquet_rows(files)
    if rows is not None and any(Path(os.fspath(f)).is_dir() for f in files):
        return "stream", ("--engine auto: a folder of Parquet files is read by the stream engine (the default "
                          "loader reads files); --engine memory is not available for it.")
    left = resident_memory_left()
    if rows is None or left is None:
        return "memory", None
    need = load_memory_estimate(rows, "read")[0]
    if need <= AUTO_SHARE * left and rows <= AUTO_ROWS:
        return "memory", None
    why = (f"with {human_bytes(left)} of memory left" if need > AUTO_SHARE * left else
           f"and past {AUTO_ROWS:,} rows streaming is also faster")
    return "stream", (f"--engine auto: reading the {rows:,} rows whole would need about {human_bytes(need)}, {why}, "
                      "so the stream engine reads them in bounded memory (the sections it cannot compute are listed "
                      "under Warnings); --engine memory forces it.")


def _parquet_rows(files) -> int | None:
    """The rows of Parquet inputs from their metadata; None unless every input is a local Parquet
    file or a folder holding only Parquet files."""
    import pyarrow.parquet as pq
    total = 0
    for item in files:
        path = Path(os.fspath(item))
        if path.is_file() and path.suffix.lower() == ".parquet":
            parts = [path]
        elif path.is_dir():
            parts = [p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
            if not parts or any(p.suffix.lower() != ".parquet" for p in parts):
                return None
        else:
            return None
        try:
            for p in parts:
                total += pq.ParquetFile(p).metadata.num_rows
                if total > AUTO_ROWS:  # streamed whatever the rest holds: no more footers opened
                    return total
        except Exception:  # noqa: BLE001 - not readable as Parquet: the loader says why
            return None
    return total if files else None


#: the engines by name (``--engine``, ``build_report(..., engine=)``)
ENGINES = Registry("engine", "--engine")
for _engine in (
    Engine("memory", "load the whole table (every section of the report)"),
    Engine("stream", "Parquet read in record batches in bounded memory, the report from sufficient statistics "
           "(every number of the memory engine's report but the suite and Judge sections)",
           "bayeserr.engines.stream:reduce_parquet", ("tmp_dir", "progress")),
    Engine("dask", "the same statistics on a dask.distributed cluster (pip install 'bayeserr[dask]')",
           "bayeserr.engines.dask:reduce_dask",
           ("scheduler", "workers", "worker_memory", "tmp_dir", "progress")),
):
    ENGINES.add(_engine.name, _engine)
#: what ``--engine`` takes: ``auto`` (the report's default, :func:`auto_engine`) or an engine
ENGINE_CHOICES = ("auto", *ENGINES.choices)
