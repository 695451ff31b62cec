"""Memory checks before loading: what a load needs per row and per score cell,
against what the machine (and its cgroup and ulimit) has, so that a too-big
input is one clear error rather than a crash."""

from __future__ import annotations

from bayeserr.base.errors import InputError, human_bytes

#: Largest dense score array ``models × questions × samples × 8 bytes`` that
#: :func:`~bayeserr.data.loading.load` allocates (also capped by the memory available at the time).
MAX_CUBE_BYTES = 8 << 30
#: Memory :func:`~bayeserr.data.loading.load` needs per input row, as ``(resident, address space)``
#: bytes: ``"read"`` while a CSV/TSV or Parquet file is parsed (the parser's
#: buffers and the table), ``"index"`` once it is read (integer codes of the
#: ids, the scores as float64, the validation masks), besides the score array
#: (8 bytes a cell).  Resident memory is compared with the memory available
#: (and a cgroup limit), address space with ``ulimit -v`` / ``ulimit -d``.
#: Measured on 4M and 10M-row Parquet and CSV files (int or text ids, with
#: and without clusters) as the growth of VmHWM and VmPeak over the phase and
#: the smallest RLIMIT_AS that loads: reading 45–88 resident and 26–126
#: address bytes a row, indexing 36–75 and 74–109 (the score array
#: included); a whole load of 10M rows peaks at about 80 resident bytes a row.
#: The figures below round those up.
LOAD_BYTES_PER_ROW = {"read": (90, 130), "index": (70, 110)}

def _proc_field(path: str, key: str, scale: int = 1024) -> int | None:
    """``key: value`` of a /proc or cgroup file (``kB`` by default), or None."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key) and line[len(key)] in ": \t":
                    return int(line[len(key) + 1:].split()[0]) * scale
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as fh:
            text = fh.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _cgroup_headroom() -> int | None:
    """Memory left under this process's cgroup limit (v2 ``memory.max`` or v1
    ``memory.limit_in_bytes``; reclaimable page cache counted as free), or
    None without a limit."""
    try:
        with open("/proc/self/cgroup") as fh:
            entries = [line.rstrip("\n").split(":", 2) for line in fh]
    except OSError:
        return None
    for _, controllers, path in entries:
        v2 = controllers == ""
        if not v2 and "memory" not in controllers.split(","):
            continue
        root = "/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/memory"
        names = ("memory.max", "memory.current") if v2 else ("memory.limit_in_bytes", "memory.usage_in_bytes")
        for folder in dict.fromkeys((root + path.rstrip("/"), root)):  # as mounted in a container: the root
            limit, used = (_read_int(f"{folder}/{n}") for n in names)
            if limit is not None and used is not None:
                if limit >= 1 << 60:  # "no limit" in cgroup v1
                    break
                cache = _proc_field(f"{folder}/memory.stat", "inactive_file" if v2 else "total_inactive_file", 1)
                return max(limit - used + (cache or 0), 0)
    return None


def _memory_limits() -> list[tuple[int, str, int]]:
    """What limits the memory this process can still allocate, as
    ``(bytes left, what, kind)``; kind 0 counts resident memory (the memory
    available, a cgroup limit), kind 1 address space (``ulimit -v``, ``-d``)."""
    import resource
    out = []
    free = _proc_field("/proc/meminfo", "MemAvailable")
    if free is not None:
        out.append((free, "the memory available now", 0))
    cgroup = _cgroup_headroom()
    if cgroup is not None:
        out.append((cgroup, "the memory left under the container's limit (cgroup)", 0))
    for name, used, flag in (("RLIMIT_AS", "VmSize", "-v"), ("RLIMIT_DATA", "VmData", "-d")):
        try:
            limit = resource.getrlimit(getattr(resource, name))[0]
        except (AttributeError, OSError, ValueError):
            continue
        now = _proc_field("/proc/self/status", used)
        if limit != resource.RLIM_INFINITY and now is not None:
            out.append((max(limit - now, 0), f"the address space left under ulimit {flag} "
                                             f"(limit {human_bytes(limit)})", 1))
    return out


def resident_memory_left() -> int | None:
    """The least resident memory left (the memory available, a container's limit), else None; an
    address-space limit (``ulimit -v``) is not counted (``--engine auto``: Arrow's reader reserves
    address space it does not use, so a tight ulimit is the loader's to refuse)."""
    limits = [left for left, _, kind in _memory_limits() if kind == 0]
    return min(limits) if limits else None


def available_memory() -> int | None:
    """The least memory left under any limit (``_memory_limits``), else None."""
    limits = _memory_limits()
    return min(left for left, _, _ in limits) if limits else None


def load_memory_estimate(rows: int, phase: str = "index", cube_cells: int | None = None) -> tuple[int, int]:
    """Peak memory (resident, address space) in bytes that :func:`~bayeserr.data.loading.load` needs
    for ``rows`` input rows in ``phase`` (``"read"`` or ``"index"``, see
    :data:`LOAD_BYTES_PER_ROW`); ``"index"`` adds the score array of
    ``cube_cells`` cells, at least one a row when not known yet."""
    resident, address = LOAD_BYTES_PER_ROW[phase]
    cube = 0 if phase == "read" else 8 * (rows if cube_cells is None else cube_cells)
    return rows * resident + cube, rows * address + cube


_MORE_MEMORY = "or run on a machine with more memory"


def _check_load_memory(where: str, rows: int, phase: str, *, estimated: bool = False) -> None:
    """Refuse, before allocating, to read or index ``rows`` rows when the
    estimate (:func:`load_memory_estimate`) exceeds a memory limit."""
    need = load_memory_estimate(rows, phase)
    for left, what, kind in _memory_limits():
        if need[kind] <= left:
            continue
        count = f"its rows (about {rows:,}, from the file size)" if estimated else f"its {rows:,} rows"
        per_row = LOAD_BYTES_PER_ROW[phase][kind]
        if phase == "read":
            doing = f"reading {count} needs about {human_bytes(need[kind])} ({per_row} bytes a row)"
            fix = ("--models and --where select rows only once the file is read: split the file (e.g. one "
                   f"file per model or task) and load the parts you need, read Parquet with --engine stream "
                   f"(bounded memory), {_MORE_MEMORY}.")
        else:
            doing = (f"indexing {count} needs about {human_bytes(need[kind])} ({per_row} bytes a row "
                     "and the score array, 8 bytes a row at least)")
            fix = ("Load fewer models (--models), fewer rows (--where, e.g. --where task=NAME), "
                   f"{_MORE_MEMORY}.")
        raise InputError(f"{where}: {doing}, more than {what}: {human_bytes(left)}. {fix}")




def _check_cube_size(where, shape) -> None:
    """Refuse a dense score array larger than the limit before allocating it."""
    cells = int(shape[0]) * int(shape[1]) * int(shape[2])
    need = cells * 8
    limit, what = MAX_CUBE_BYTES, "the limit bayeserr.data.memory.MAX_CUBE_BYTES"
    available = available_memory()
    if available is not None and available < limit:
        limit, what = available, "the memory available now"
    if need > limit:
        raise InputError(
            f"{where}: the score array would need {human_bytes(need)} ({shape[0]:,} models × "
            f"{shape[1]:,} questions × {shape[2]:,} samples × 8 bytes), more than {what} "
            f"({human_bytes(limit)}). Load fewer models (--models), fewer samples per question, or "
            "split the file (e.g. by task); sample ids should count the repeats of one question "
            "(0..K-1), not number the rows.")
