"""Writing posteriors to netCDF through ArviZ (``--save-posterior``).

File names cannot collide: each model gets ``model-<index>.<kind>.nc`` in
report order, and ``index.json`` in the same folder maps every file back to
its model name, so the mapping is unique and reversible whatever characters
the names hold.  Each file is written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from bayeserr.base.errors import InputError


def _idata(fit, seed: int):
    if hasattr(fit, "to_inference_data"):
        return fit.to_inference_data(seed=seed)
    return fit


def _write_netcdf(idata, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        idata.to_netcdf(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_posteriors(fits: dict, directory, seed: int = 0) -> list[Path]:
    """Write every posterior of ``fits`` (model -> kind -> posterior) and the index."""
    from bayeserr.base.output import write_atomic
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--save-posterior {directory}: cannot create the folder ({exc.strerror}).") from None
    written, index = [], []
    for i, (model, kinds) in enumerate(fits.items()):
        for kind, fit in kinds.items():
            path = directory / f"model-{i:04d}.{kind}.nc"
            try:
                _write_netcdf(_idata(fit, seed), path)
            except OSError as exc:
                raise InputError(f"{path}: could not write ({exc.strerror or exc}).") from None
            written.append(path)
            index.append({"file": path.name, "model": model, "kind": kind})
    write_atomic(directory / "index.json", json.dumps({"posteriors": index}, indent=2, ensure_ascii=False))
    return written


def save_one(idata, directory, name: str = "comparison.nc") -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    _write_netcdf(idata, path)
    return path
