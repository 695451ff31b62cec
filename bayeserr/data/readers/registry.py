"""The readers, one registry (``--input-format``; ``docs/development.md``, "A new reader"):
each :class:`Reader` says what it reads, how it recognises a path, which reader options it
takes (:mod:`bayeserr.data.readers.options`) and how it reads; :func:`read_logs` is the one
dispatch.  Plain tables (``table`` and its formats) are read by :mod:`bayeserr.data.tables`
through :func:`bayeserr.load`, so their reader has no ``read`` here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bayeserr.base.errors import InputError, describe, suggest
from bayeserr.base.registry import Registry
from bayeserr.data.readers.options import check_options
from bayeserr.data.readers.values import SAMPLES_NAME

#: table formats ``--input-format`` names (otherwise chosen by file extension)
TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
STDIN = "-"


@dataclass(frozen=True)
class Reader:
    """One reader: ``file(path)`` whether a file is its kind, ``folder(path)`` whether a folder
    holds its logs (``None``: it reads no folders); ``options``, the reader options it takes;
    ``read`` (``"module:function"``, imported when first used) is called as ``read(path,
    options, **context)`` and returns ``(DataFrame, dropped rows)``, ``context`` being what
    :func:`bayeserr.load` knows of the call (``fields``, ``cluster_from_log``,
    ``among_others``) for the readers that take it (``context=True``)."""

    name: str
    summary: str
    file: Callable[[Path], bool]
    folder: Callable[[Path], bool] | None = None
    options: tuple = ()
    read: str | None = None
    context: bool = False
    noun: str = ""  #: what its inputs are called in a sentence ("Inspect logs")

    def reader(self) -> Callable:
        from importlib import import_module
        module, function = self.read.split(":")
        return getattr(import_module(module), function)


def _inspect_file(p: Path) -> bool:
    return p.suffix in (".eval", ".json")


def _lmeval_file(p: Path) -> bool:
    return bool(SAMPLES_NAME.search(p.name))


#: the readers, in the order a folder's contents are tried (``auto`` picks one with :func:`detect`)
READERS = Registry("reader", "--input-format")
for _reader in (
    Reader("table", "results tables: CSV, TSV, JSONL, Parquet (optionally .gz)", lambda p: True,
           noun="results tables"),
    Reader("inspect", "Inspect AI logs (.eval archives, .json logs), a file or a folder of them",
           _inspect_file, lambda p: any(p.rglob("*.eval")),
           ("scorer", "cluster_field", "duplicate_runs", "partial_runs", "human_scorer", "in_progress"),
           "bayeserr.data.readers.inspect_logs:inspect_logs", context=True, noun="Inspect logs"),
    Reader("lm-eval", "lm-evaluation-harness --log_samples output (samples_<task>_<date>.jsonl)",
           _lmeval_file, lambda p: any(p.rglob("samples_*.jsonl")), ("metric", "filt", "duplicate_runs"),
           "bayeserr.data.readers.lmeval:lmeval_logs", noun="lm-eval samples"),
):
    READERS.add(_reader.name, _reader)


def detect(path) -> str:
    """The reader for a path: the first reader of the registry that recognises the file (a
    table otherwise), or for a folder the first whose logs it holds (Inspect's ``.eval``
    archives, then lm-eval samples), else Inspect's ``.json`` logs."""
    if str(path) == STDIN:
        return "table"
    p = Path(path)
    if p.is_dir():
        found = next((r.name for r in READERS.values() if r.folder is not None and r.folder(p)), None)
        if found is None and any(p.rglob("*.json")):
            found = "inspect"
        if found is None:
            raise InputError(f"{p}: a folder with no Inspect logs (.eval, .json) or lm-eval samples "
                             "(samples_*.jsonl); pass a results file or a folder of logs.")
        return found
    return next((r.name for r in READERS.values() if r.name != "table" and r.file(p)), "table")


#: what ``--input-format`` takes
INPUT_FORMATS = ("auto", *READERS, *TABLE_FORMATS)


def check_input_format(input_format) -> None:
    """``input_format`` is ``auto``, a reader of the registry or a table format."""
    if not isinstance(input_format, str) or input_format not in INPUT_FORMATS:
        raise InputError(f"--input-format {describe(input_format)} is unknown."
                         f"{suggest(input_format, INPUT_FORMATS)} Use one of {', '.join(INPUT_FORMATS)}.")


def read_logs(path, input_format: str = "auto", options: Mapping | None = None, *, fields=(),
              cluster_from_log: bool = True, among_others: bool = False, **more):
    """``(DataFrame, dropped rows)`` from an eval-log reader, or ``None`` for plain tables.

    ``input_format`` is ``auto``, a reader of :data:`READERS` or a table format of
    :data:`TABLE_FORMATS`; ``options`` (or keywords): the reader options
    (:data:`bayeserr.data.readers.options.OPTIONS`: ``duplicate_runs``, ``partial_runs``,
    ``scorer``, ``cluster_field``, ``human_scorer``, ``in_progress``, ``metric``, ``filt``),
    checked here unless :func:`~bayeserr.data.readers.options.check_options` checked them;
    the reader chosen takes its own.  ``fields`` (Inspect) names metadata fields to add as
    columns; ``cluster_from_log`` (Inspect) clusters by the field the logs' metrics use when
    ``cluster_field`` is not given; ``among_others``: the path is one of several inputs
    (:func:`~bayeserr.data.readers.inspect_logs.read_inspect`).
    """
    check_input_format(input_format)
    options = check_options({**(options or {}), **more} if more else options)
    fmt = detect(path) if input_format == "auto" else input_format
    reader = READERS.get(fmt)
    if reader is None or reader.read is None:
        return None
    if str(path) == STDIN:
        raise InputError(f"{fmt} logs are read from a file or a folder, not standard input ('-'). "
                         "Pass the path of the log(s).")
    own = {k: options[k] for k in reader.options}
    if reader.context:
        return reader.reader()(path, own, fields=fields, cluster_from_log=cluster_from_log,
                               among_others=among_others)
    return reader.reader()(path, own)


def ignored_options(options: Mapping, used) -> str | None:
    """A note naming the reader options set away from their default that no reader in
    ``used`` (the readers the inputs were read by) takes, or ``None``: such an option
    changed nothing, and the row accounting says so."""
    from bayeserr.data.readers.options import OPTIONS
    takes = {k for name in used for k in READERS[name].options}
    idle = [k for k, v in options.items() if OPTIONS[k].cli and v != OPTIONS[k].default and k not in takes]
    if not idle:
        return None
    said = [f"{OPTIONS[k].option} ({' and '.join(r.noun for r in READERS.values() if k in r.options)})"
            for k in idle]
    read = " and ".join(READERS[name].noun for name in READERS if name in used)
    return (f"Not used: {', '.join(said)}, given for inputs of {'that kind' if len(idle) == 1 else 'those kinds'}; "
            f"the inputs were read as {read}.")
