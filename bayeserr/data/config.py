"""Project configuration: defaults for the command line from a file.

Two places are read, both found by searching upward from the current
directory (the nearest one of each kind wins):

* ``bayeserr.toml`` — settings at the top level (a ``[tool.bayeserr]``
  table is accepted too);
* ``pyproject.toml`` — the ``[tool.bayeserr]`` table (a ``pyproject.toml``
  without one is passed over, so a sub-project's file does not hide the
  repository's).

Precedence: a flag on the command line > ``bayeserr.toml`` >
``pyproject.toml`` > the built-in default.  Keys are the long option names
without ``--`` (``model-col``, ``level``, ``bayes``, ``methods``, ``where``,
``cluster-field``, …; ``model_col`` is read as ``model-col``); see
:data:`KEYS`.  An unknown key is an error with a "did you mean"; the values
are checked by the command line with the same checks as the flags
(:mod:`bayeserr.cli.config`).  ``bayeserr config`` prints every setting in
force and where it came from.

This module only finds and reads the files; it knows nothing of click.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bayeserr.base.errors import InputError, suggest

CONFIG_FILE = "bayeserr.toml"
PYPROJECT = "pyproject.toml"

#: settings a configuration file may give: the long option they default, without ``--``
KEYS = (
    # reading the input
    "model-col", "question-col", "score-col", "cluster-col", "sample-col", "task-col", "no-cluster",
    "input-format", "duplicate-runs", "partial-runs", "scorer", "cluster-field", "metric", "filter", "where",
    "human-col", "human-scorer", "task-weights",
    # the analysis
    "level", "cluster-correction", "on-unpaired", "adjust", "methods", "pairs", "top-k", "prior-sensitivity",
    # the Bayesian columns
    "bayes", "rope", "prior", "seed", "draws",
)


@dataclass
class Config:
    """Settings read from the configuration files, merged by precedence."""

    values: dict = field(default_factory=dict)  #: key -> value (TOML types)
    sources: dict = field(default_factory=dict)  #: key -> the file (Path) it came from
    files: dict = field(default_factory=dict)  #: "bayeserr.toml" / "pyproject.toml" -> Path read
    ignored: list = field(default_factory=list)  #: (Path, why) of files found but not trusted

    def source_text(self, key: str) -> str:
        path = self.sources[key]
        return f"{path} [tool.bayeserr]" if path.name == PYPROJECT else str(path)


def _parse(path: Path) -> dict:
    import tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc}). Fix the file.") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition
        raise InputError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at position {exc.start}); "
                         "TOML files are UTF-8: save it as UTF-8.") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc}).") from None


def _pyproject_table(path: Path) -> dict | None:
    """The ``[tool.bayeserr]`` table of a pyproject.toml, or None (parsed only
    when the file mentions bayeserr, so an unrelated broken file is no error)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if "bayeserr" not in text:
        return None
    table = _parse(path).get("tool", {})
    table = table.get("bayeserr") if isinstance(table, dict) else None
    if table is not None and not isinstance(table, dict):
        raise InputError(f"{path}: tool.bayeserr must be a table ([tool.bayeserr]).")
    return table


def find(start=None, ignored: list | None = None) -> dict:
    """``{"bayeserr.toml": path, "pyproject.toml": path}``: the nearest of each
    (a pyproject.toml only if it has ``[tool.bayeserr]``), searching upward
    from ``start`` (default: the current directory) up to the repository's
    root (a folder holding ``.git``) or the home folder, whichever comes first.

    A file another user could have planted is not trusted (as git's
    ``safe.directory``): one owned by another user (root excepted) or writable
    by any user (group-writable is fine: user private groups make it the
    default on many systems) is skipped, and ``(path, why)`` appended to
    ``ignored``.
    """
    here = Path(start or os.getcwd()).resolve()
    home = _home()
    found: dict = {}
    for folder in (here, *here.parents):
        for kind in (CONFIG_FILE, PYPROJECT):
            path = folder / kind
            if kind in found or not path.is_file():
                continue
            if kind == PYPROJECT and _pyproject_table(path) is None:
                continue  # a pyproject.toml without [tool.bayeserr] is no configuration
            why = _untrusted(path)
            if why:
                if ignored is not None:
                    ignored.append((path, why))
                continue
            found[kind] = path
        if len(found) == 2 or (folder / ".git").exists() or folder == home:
            break
    return found


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):  # no home folder (some containers)
        return None


def _untrusted(path: Path) -> str | None:
    """Why a configuration file is not to be trusted, or None: the file, and a symbolic link to it
    (whose owner chose the target: another user's link to a root-owned file is not ours), must be
    owned by this user or root, and the file not writable by every user."""
    try:
        link, st = path.lstat(), path.stat()
    except OSError:
        return "cannot be read"
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    import stat as stat_module
    if uid is not None and stat_module.S_ISLNK(link.st_mode) and link.st_uid not in (uid, 0):
        return f"a symbolic link made by another user (uid {link.st_uid})"
    if uid is not None and st.st_uid not in (uid, 0):
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o002:
        return "writable by every user"
    return None


def _table(kind: str, path: Path) -> dict:
    if kind == PYPROJECT:
        return _pyproject_table(path) or {}
    doc = _parse(path)
    tool = doc.get("tool")
    if set(doc) == {"tool"} and isinstance(tool, dict) and isinstance(tool.get("bayeserr"), dict):
        return tool["bayeserr"]
    return doc


def _checked(table: dict, path: Path, where: str) -> dict:
    out = {}
    for raw_key, value in table.items():
        key = str(raw_key).replace("_", "-")
        if key not in KEYS:
            raise InputError(f"{path}: unknown setting '{raw_key}'{where}.{suggest(key, KEYS)} "
                             f"Settings: {', '.join(KEYS)}.")
        if key in out:
            raise InputError(f"{path}: the setting '{key}' is given twice{where} (as {key} and "
                             f"{raw_key}); keep one.")
        if isinstance(value, dict):
            raise InputError(f"{path}: {raw_key}{where} is a table; it takes a value (e.g. "
                             f"{key} = ...).")
        out[key] = value
    return out


def read(start=None) -> Config:
    """The settings of the configuration files found from ``start``, merged:
    ``bayeserr.toml`` over ``pyproject.toml``.  Unknown keys raise
    :class:`~bayeserr.base.errors.InputError` naming the file, with a "did you
    mean"."""
    cfg = Config()
    found = find(start, cfg.ignored)
    for kind in (PYPROJECT, CONFIG_FILE):  # lowest precedence first
        if kind not in found:
            continue
        path = found[kind]
        cfg.files[kind] = path
        where = " in [tool.bayeserr]" if kind == PYPROJECT else ""
        for key, value in _checked(_table(kind, path), path, where).items():
            cfg.values[key] = value
            cfg.sources[key] = path
    return cfg
