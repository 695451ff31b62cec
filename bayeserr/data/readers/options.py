"""The options of the eval-log readers, declared once: each option's keyword (``load``'s and
the reader functions'), command-line flag, help, choices and default, and the one check of a
mapping of them (:func:`check_options`).  The command line builds its reader flags from
:data:`OPTIONS` (``bayeserr/cli/options.py``); each reader of
:mod:`bayeserr.data.readers.registry` names the options it takes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from bayeserr.base.errors import InputError, describe, suggest


@dataclass(frozen=True)
class ReaderOption:
    """One reader option; ``choices`` empty means a name (non-empty text) or ``None``;
    ``cli=False``: an option of the Python API only (``in_progress`` is ``watch``'s)."""

    name: str
    help: str
    choices: tuple = ()
    default: object = None
    flag: str | None = None
    metavar: str | None = None
    cli: bool = True

    @property
    def option(self) -> str:
        """The command-line flag."""
        return self.flag or "--" + self.name.replace("_", "-")

    def check(self, value):
        if self.choices:
            if not isinstance(value, str) or value not in self.choices:
                raise InputError(f"{self.name} must be one of {', '.join(self.choices)} (got {describe(value)})."
                                 + (suggest(value, self.choices) if isinstance(value, str) else ""))
        elif value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"{self.option} takes a non-empty name (text); got {describe(value)}.")
        return value


#: every reader option, by keyword
OPTIONS = {o.name: o for o in (
    ReaderOption("duplicate_runs", "Logs: a folder holding two runs of one task and model stops, or keeps the "
                 "latest run (older runs are counted as dropped).", ("error", "latest"), "error"),
    ReaderOption("partial_runs", "Logs whose status is not 'success' (error, cancelled, started): left out and "
                 "counted as dropped (as inspect eval-set would re-run them), or used, each named in a note.",
                 ("exclude", "include"), "exclude"),
    ReaderOption("scorer", "Inspect: the scorer whose score is used [default: the first]."),
    ReaderOption("cluster_field", "Inspect: sample metadata field used as cluster (dotted path); default: the "
                 "field the logs' own metrics cluster by (ci_clustered, ci_hierarchical, stderr(cluster=...)), "
                 "else none."),
    ReaderOption("metric", "lm-eval: the metric used as score [default: acc]."),
    ReaderOption("filt", "lm-eval: the filter whose rows are used.", flag="--filter"),
    ReaderOption("human_scorer", "Inspect: the scorer whose value is the human label (e.g. a manual grade added "
                 "with inspect score), converted like the score; samples without it are unlabelled. --scorer "
                 "still picks the judge's score [default: the first other scorer].", metavar="NAME"),
    # an .eval without header.json is an error alone and skipped in a folder ("exclude", for
    # reports), or read from Inspect's journal ("read", for bayeserr watch, which watches runs)
    ReaderOption("in_progress", "Inspect: read an .eval of a run in progress from its journal.",
                 ("exclude", "read"), "exclude", cli=False),
)}


def check_options(options: Mapping | None = None, names=None) -> Mapping:
    """``options`` (keyword -> value) checked once: each a reader option (of ``names``, when
    given), each value allowed; the defaults filled in.  A read-only mapping; passing it
    again returns it unchanged."""
    if isinstance(options, MappingProxyType) and names is None:
        return options
    names = tuple(OPTIONS) if names is None else tuple(names)
    options = dict(options or {})
    unknown = [k for k in options if k not in names]
    if unknown:
        raise InputError(f"'{unknown[0]}' is not a reader option.{suggest(unknown[0], names)} "
                         f"Reader options: {', '.join(names)}.")
    return MappingProxyType({k: OPTIONS[k].check(options.get(k, OPTIONS[k].default)) for k in names})
