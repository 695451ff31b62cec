"""Writing results to files without ever losing data.

* Writes are atomic: the text goes to a temporary file in the target
  folder, which is renamed over the target only once complete, so a full
  disk or a killed process never leaves a half-written report.
* An input is never overwritten: every command registers the files it read
  (:func:`protect`), and writing to one of them is an error.
* An existing output that is not an input is replaced, as ``cp``, pandas and
  matplotlib do: re-running a report into the same file is the normal
  workflow, and the atomic rename means the old file survives any failure.

* A folder of outputs (``--save-posterior``) is written in full into a hidden
  temporary folder beside it and put in place by renaming
  (:class:`StagedFolder`), so an interrupted run leaves either the old folder
  or the new one, never a mixture; a folder that is not one of bayeserr's is
  never replaced.

A failed write is an :class:`~bayeserr.base.errors.InputError` naming the path
and the reason (the CLI's exit code 2).  :data:`WRITTEN` lists what this
process has put in place, so an interrupt can say what was written.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from bayeserr.base.errors import InputError

_PROTECTED: set = set()
#: outputs put in place by this process (files and folders), in order
WRITTEN: list[Path] = []


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


def _usable(path: Path) -> None:
    """Refuse a name the system cannot take (too long, a loop of symbolic links,
    a folder in the way), naming the reason, before any work is done."""
    try:
        os.stat(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        import errno
        why = {errno.ENAMETOOLONG: "the name is too long for the file system (255 bytes per name "
                                   "on most); choose a shorter name",
               errno.ELOOP: "it is a loop of symbolic links; remove the link or choose another name",
               errno.ENOTDIR: "a part of the path is a file, not a folder"}.get(exc.errno)
        raise InputError(f"{path}: cannot write here ({why or exc.strerror or exc}).") from None


def check_writable(path) -> Path:
    """The output path, after refusing inputs and impossible targets."""
    given, path = str(path), Path(path)
    if given in ("", "-"):
        raise InputError("give an output file name (e.g. -o report.md).")
    if given.endswith(("/", os.sep)):  # a folder meant, not a file named after it (Path drops the "/")
        raise InputError(f"{given}: names a folder; give a file name, e.g. {path.as_posix()}/report.md.")
    _usable(path)
    if _identity(path) is not None and _identity(path) in _PROTECTED:
        raise InputError(f"{path}: this is an input file; refusing to overwrite it. "
                         "Choose another output name.")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a file name inside it.")
    if not path.parent.exists():
        raise InputError(f"{path}: the folder {path.parent} does not exist; create it first.")
    _not_read_only(path, "file")
    return path


def _not_read_only(path: Path, what: str) -> None:
    """A file or folder made read-only (no write bit for anyone) is not replaced, even by a user
    the permissions would not stop (root, or the owner through a rename): its owner meant it."""
    try:
        st = path.stat()
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        if not st.st_mode & 0o222:
            raise InputError(f"{path}: the {what} is read-only (mode {st.st_mode & 0o777:04o}); it is not replaced. "
                             f"Make it writable (chmod u+w) or choose another name.")


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
        WRITTEN.append(path)
        return path
    fd, tmp = None, None
    try:
        # the temporary name is cut so that a legal 255-byte name still has room for it (32 characters: at most 128 bytes)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:32]}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fd = None
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        mode = os.stat(target).st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        with _signals_deferred():  # the file in place and counted as written, or neither
            os.replace(tmp, target)
            tmp = None
            WRITTEN.append(path)
    except OSError as exc:
        raise InputError(f"{path}: could not write ({exc.strerror or exc}); nothing was changed.") from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


class _signals_deferred:
    """SIGINT and SIGTERM held for a few system calls (they act right after), in the main thread."""

    def __enter__(self):
        import signal
        import threading
        self.before = None
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask"):
            self.before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

    def __exit__(self, *exc):
        import signal
        if self.before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.before)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _failed(path, exc: OSError, what: str) -> InputError:
    return InputError(f"{path}: {what} ({exc.strerror or exc}); nothing was written there.")


class StagedFolder:
    """A folder of outputs written beside its target, then renamed into place.

    ``with StagedFolder(target, is_ours) as staged:`` checks ``target`` first
    (an input, a file, or a non-empty folder for which ``is_ours(folder)`` is
    false are refused before anything is written), then gives ``staged.path``,
    a new hidden folder in the nearest existing ancestor of ``target``; files
    written there are created with the umask's permissions.  ``commit()``
    puts it in place: a new or empty target by one ``rename``; a target that
    ``is_ours`` is moved aside, replaced and then removed, so no stale file of
    an earlier run survives.  Leaving the block without ``commit()`` (an
    error, an interrupt) removes the staged folder and leaves ``target`` as it
    was.
    """

    def __init__(self, target, is_ours: Callable[[Path], bool], option: str = "output folder"):
        # through symbolic links: the folder a link points at is the one replaced, the link kept
        self.target = Path(os.path.realpath(target)) if os.path.islink(target) else Path(target)
        self.is_ours = is_ours
        self.option = option
        self.path: Path | None = None
        self._check()

    def _check(self) -> None:
        t = self.target
        if str(t) in ("", "-"):
            raise InputError(f"{self.option}: give a folder name.")
        _usable(t)
        if _identity(t) is not None and _identity(t) in _PROTECTED:
            raise InputError(f"{self.option} {t}: this is an input; choose another folder.")
        if t.exists() and not t.is_dir():
            raise InputError(f"{self.option} {t}: is a file, not a folder; choose a folder name.")
        if t.is_dir():
            _not_read_only(t, "folder")
            if any(_identity(f) in _PROTECTED for f in _files(t)):
                raise InputError(f"{self.option} {t}: holds an input file; choose another folder.")
            if _entries(t, self.option) and not self.is_ours(t):
                raise InputError(f"{self.option} {t}: the folder is not empty and was not written by "
                                 f"{self.option}; choose a new or empty folder (nothing in it was changed).")

    def _anchor(self) -> Path:
        """The nearest existing folder at or above the target's parent."""
        anchor = self.target.absolute().parent
        while not anchor.exists() and anchor != anchor.parent:
            anchor = anchor.parent
        if not anchor.is_dir():
            raise InputError(f"{self.option} {self.target}: {anchor} is not a folder.")
        return anchor

    def __enter__(self) -> StagedFolder:
        anchor = self._anchor()
        try:
            self.path = Path(tempfile.mkdtemp(prefix=f".{self.target.name[:32]}.", suffix=".tmp", dir=anchor))
            os.chmod(self.path, 0o777 & ~_umask())  # mkdtemp makes it 0700
        except OSError as exc:
            raise _failed(f"{self.option} {self.target}", exc, "cannot create the folder") from None
        return self

    def commit(self) -> Path:
        t, staged = self.target, self.path
        try:
            t.parent.mkdir(parents=True, exist_ok=True)
            if t.is_dir():  # the folder keeps its permissions (a private 0700 folder stays private)
                os.chmod(staged, os.stat(t).st_mode & 0o7777)
            if t.is_dir() and _entries(t, self.option):  # ours (checked on entry): moved aside, replaced, removed
                old = Path(tempfile.mkdtemp(prefix=f".{t.name[:32]}.", suffix=".old", dir=t.parent))
                os.replace(t, old / "previous")
                os.replace(staged, t)
                shutil.rmtree(old, ignore_errors=True)
            else:  # new, or empty: rename() replaces an empty folder in one step
                os.replace(staged, t)
        except OSError as exc:
            raise _failed(f"{self.option} {t}", exc, "could not put the folder in place") from None
        self.path = None
        WRITTEN.append(t)
        return t

    def __exit__(self, *exc_info) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None


def _entries(folder: Path, option: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError as exc:
        raise _failed(f"{option} {folder}", exc, "cannot read the folder") from None


def _files(folder: Path):
    for root, _dirs, names in os.walk(folder):
        for name in names:
            yield os.path.join(root, name)
