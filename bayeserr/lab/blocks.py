"""Blocks of seeded replicates run in one process or spread over worker processes, for
the lab's studies (:mod:`bayeserr.lab.judge`, :mod:`bayeserr.lab.sequential`): one place
for the worker pool, its progress and its clean stop on an interrupt."""

from __future__ import annotations


def run_blocks(block, tasks, jobs: int = 1, progress=None) -> dict:
    """``{(key, task[3]): block(task)}`` for each ``(key, task)`` of ``tasks`` (``task[1]`` its
    replicates, reported to ``progress``; ``task[3]`` its block's index): in this process
    with ``jobs == 1``, else on ``jobs`` spawned workers in the order given (put the
    expensive blocks first so the workers finish together).  An interrupt or a failed block
    cancels the blocks still queued."""
    results: dict = {}
    if jobs == 1:
        for key, task in tasks:
            results[(key, task[3])] = block(task)
            if progress is not None:
                progress(task[1])
        return results
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {pool.submit(block, task): (key, task) for key, task in tasks}
        for fut in as_completed(futures):
            key, task = futures[fut]
            results[(key, task[3])] = fut.result()
            if progress is not None:
                progress(task[1])
    except BaseException:  # an interrupt or a failed block: do not wait for the queued blocks
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results
