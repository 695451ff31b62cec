"""Shared timing helper for the benchmark scripts."""

import time


def best_of(repeat, fn):
    """Fastest wall-clock time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
