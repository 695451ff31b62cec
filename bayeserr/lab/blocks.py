"""What the lab's studies share without a heavy import: blocks of seeded replicates run in
one process or spread over worker processes (:mod:`bayeserr.lab.judge`,
:mod:`bayeserr.lab.sequential`; one place for the worker pool, its progress and its clean
stop on an interrupt), and each study's ``publish_*`` function (:func:`publisher`)."""

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


def publisher(csv_name: str, section, start: str, end: str):
    """A study's ``publish_*(df, page, command)``: write ``df`` as ``csv_name`` next to
    ``page`` and ``section(df, command)`` into ``page`` between the markers ``start`` and
    ``end`` (replaced in place, or appended; :func:`bayeserr.lab.publish.publish_section`,
    imported when called so that worker processes do not load pandas' writers)."""
    def publish(df, page, command: str) -> None:
        from bayeserr.lab.publish import publish_section
        publish_section(page, csv_name, df, section(df, command), start, end)
    publish.__doc__ = (f"Write ``{csv_name}`` next to ``page`` and the study's section into ``page`` "
                       "(replaced in place, or appended).")
    return publish
