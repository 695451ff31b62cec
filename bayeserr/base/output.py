"""Writing results to files without ever losing data.

* Writes are atomic: the text goes to a temporary file in the target
  folder, which is renamed over the target only once complete, so a full
  disk or a killed process never leaves a half-written report.
* An input is never overwritten: every command registers the files it read
  (:func:`protect`), and writing to one of them is an error.
* An existing output that is not an input is replaced, as ``cp``, pandas and
  matplotlib do: re-running a report into the same file is the normal
  workflow, and the atomic rename means the old file survives any failure.

A failed write is an :class:`~bayeserr.base.errors.InputError` naming the path
and the reason (the CLI's exit code 2).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bayeserr.base.errors import InputError

_PROTECTED: set = set()


def _identity(path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def protect(*paths) -> None:
    """Mark files (or every file under folders) as inputs that must not be overwritten."""
    for p in paths:
        if p is None or str(p) == "-":
            continue
        p = Path(p)
        if p.is_dir():
            for f in p.rglob("*"):
                if f.is_file() and (ident := _identity(f)):
                    _PROTECTED.add(ident)
        elif ident := _identity(p):
            _PROTECTED.add(ident)


def check_writable(path) -> Path:
    """The output path, after refusing inputs and impossible targets."""
    given, path = str(path), Path(path)
    if given in ("", "-"):
        raise InputError("give an output file name (e.g. -o report.md).")
    if given.endswith(("/", os.sep)):  # a folder meant, not a file named after it (Path drops the "/")
        raise InputError(f"{given}: names a folder; give a file name, e.g. {path.as_posix()}/report.md.")
    if _identity(path) is not None and _identity(path) in _PROTECTED:
        raise InputError(f"{path}: this is an input file; refusing to overwrite it. "
                         "Choose another output name.")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a file name inside it.")
    if not path.parent.exists():
        raise InputError(f"{path}: the folder {path.parent} does not exist; create it first.")
    return path


def write_atomic(path, data) -> Path:
    """Write ``data`` (str or bytes) to ``path`` atomically (see the module docstring)."""
    path = check_writable(path)
    # a name that is not valid UTF-8 (a file name read with surrogate escapes) is written as \udcXX
    raw = data.encode("utf-8", errors="backslashreplace") if isinstance(data, str) else data
    target = path.resolve() if not path.exists() or path.is_file() else path
    if path.exists() and not path.is_file():
        # a device or fifo (e.g. /dev/null, /dev/full): write to it directly
        try:
            with open(path, "wb") as fh:
                fh.write(raw)
        except OSError as exc:
            raise InputError(f"{path}: could not write ({exc.strerror or exc}).") from None
        return path
    fd, tmp = None, None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fd = None
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        mode = os.stat(target).st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise InputError(f"{path}: could not write ({exc.strerror or exc}); nothing was changed.") from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
