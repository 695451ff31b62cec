"""Top layer, the ``bayeserr`` command line: thin commands that parse options, call the
library and write the result.  No statistics live here.

* :mod:`.app` — the command group, the entry point and its error handling;
* :mod:`.analysis` — ``report``, ``compare``, ``power``, ``demo`` and their kin;
* :mod:`.gate`, :mod:`.watch`, :mod:`.arena`, :mod:`.lab`, :mod:`.tasks` — the commands of those names;
* :mod:`.config` — ``bayeserr config`` and the configuration files' defaults;
* :mod:`.options` — the option stacks the commands share (their choices from the registries);
* :mod:`.common` — reading inputs and writing outputs for every command;
* :mod:`.defaults` — option defaults taken from configuration files, checked.

Bad input never shows a traceback: an :class:`~bayeserr.base.errors.InputError`
prints one ``error:`` line to stderr and exits with code 2 (click's own
usage errors use 2 as well); so does running out of memory (a
:class:`MemoryError` the checks before loading did not foresee).
"""

# isort: off
from bayeserr.cli.app import join_multi_values, main, run
from bayeserr.cli import analysis, arena, gate, lab, tasks, watch, config  # noqa: F401  (registers the commands; config last)
# isort: on

__all__ = ["join_multi_values", "main", "run"]
