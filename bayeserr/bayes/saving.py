"""Writing posteriors to netCDF through ArviZ (``--save-posterior``).

File names cannot collide: each model gets ``model-<index>.<kind>.nc`` in
report order, and ``index.json`` in the same folder maps every file back to
its model name, so the mapping is unique and reversible whatever characters
the names hold.

The folder is written as a whole (:class:`~bayeserr.base.output.StagedFolder`):
every file goes into a hidden folder beside the target, which is renamed into
place only once complete, so an interrupted or failed run never leaves a
half-written folder, and no file of an earlier run survives beside the new
ones.  A non-empty folder is replaced only if it is one of these folders (its
``index.json`` lists every file in it); anything else is refused before a
file is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bayeserr.base.errors import InputError
from bayeserr.base.output import StagedFolder
from bayeserr.models import compat

OPTION = "--save-posterior"


def _idata(fit, seed: int):
    if hasattr(fit, "to_inference_data"):
        return fit.to_inference_data(seed=seed)
    return fit


def is_posterior_folder(folder) -> bool:
    """Whether ``folder`` was written by :func:`write_posteriors`: its ``index.json``
    lists every other file in it (so replacing it loses nothing of the user's)."""
    folder = Path(folder)
    try:
        index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        listed = {entry["file"] for entry in index["posteriors"]}
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return set(os.listdir(folder)) <= listed | {"index.json"}


def posterior_folder(directory) -> StagedFolder:
    """The checked, not yet created, ``--save-posterior`` folder (an error before anything is written)."""
    return StagedFolder(directory, is_posterior_folder, OPTION)


def write_posteriors(fits: dict, folder, seed: int = 0) -> list[Path]:
    """Write every posterior of ``fits`` (model -> kind -> posterior) and ``index.json``
    into the existing (staged) ``folder``; new files get the umask's permissions."""
    folder = Path(folder)
    written, index = [], []
    for i, (model, kinds) in enumerate(fits.items()):
        for kind, fit in kinds.items():
            path = folder / f"model-{i:04d}.{kind}.nc"
            try:
                compat.to_netcdf(_idata(fit, seed), path)  # netCDF-4 (h5netcdf) on both ArviZ lines
            except OSError as exc:
                raise InputError(f"{OPTION}: could not write {path.name} ({exc.strerror or exc}).") from None
            written.append(path)
            index.append({"file": path.name, "model": model, "kind": kind})
    text = json.dumps({"posteriors": index}, indent=2, ensure_ascii=False)
    (folder / "index.json").write_bytes(text.encode("utf-8", errors="backslashreplace"))
    return written


def save_posteriors(fits: dict, directory, seed: int = 0) -> list[Path]:
    """Write ``fits`` as a complete ``--save-posterior`` folder at ``directory``
    (checked, staged and renamed into place; see the module docstring)."""
    with posterior_folder(directory) as staged:
        written = write_posteriors(fits, staged.path, seed)
        target = staged.commit()
    return [target / p.name for p in written]
