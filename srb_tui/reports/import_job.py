"""Walking a published-harness job directory: every ``score.json`` under it is a trial, read
by :func:`srb_tui.reports.importer.read_trial`, in this process or in reader processes.

Reader processes (``reader_pool``) are forked all at once before the importing process
starts threads; they parse while the importer stores, a window of chunks ahead (memory
bounded by the window), and hand back each trial without its long stage results' texts
(the importer links or copies the published files instead).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from srb_tui.reports import importer as trials
from srb_tui.reports.importer import ImportedTrial
from srb_tui.store.imports import FILE_THRESHOLD

POOL_MIN = 16
"""Fewer trials than this are read in the calling process even when a pool is given."""


def read_for_pool(where: tuple[str, str]) -> tuple[ImportedTrial | None, list[str]]:
    """:func:`.importer.read_trial` in a reader process: the trial and the problems it
    found. A long stage result's text is not sent back (``None`` in its place): the
    importer links or copies the published file itself, checked unchanged since it was
    read here."""
    problems: list[str] = []
    trial = trials.read_trial(Path(where[0]), Path(where[1]), problems)
    if trial is not None:
        trial.stage_results = {
            stage: (status, None if text is None or len(text) >= FILE_THRESHOLD else text,
                    published)
            for stage, (status, text, published) in trial.stage_results.items()}
    return trial, problems


def read_chunk(work: list[tuple[str, str]]) -> list[tuple[ImportedTrial | None, list[str]]]:
    """:func:`read_for_pool` over a few trials (one round trip to a reader for them)."""
    return [read_for_pool(where) for where in work]


POOL_CHUNK = 4
POOL_AHEAD = 16
"""Chunks of trials a reader pool may have parsed and not yet handed over."""


def iter_job(directory: Path, problems: list[str], *, pool: Executor | None = None
             ) -> Iterator[ImportedTrial]:
    """Every trial under ``directory``, in path order (memory bounded by one trial, or by
    what ``pool``'s reader processes have parsed ahead); every problem found is appended
    to ``problems`` and the bad trial is not yielded."""
    if not directory.is_dir():
        problems.append(f"{directory}: not a directory")
        return
    scores = sorted(p for p in directory.rglob("score.json") if p.is_file())
    if not scores:
        problems.append(f"{directory}: no score.json anywhere below it (not a job directory?)")
        return
    root = directory.resolve()
    if pool is not None and len(scores) >= POOL_MIN:
        # JSON parsing holds the GIL: the reader processes parse on every core while this
        # process stores; the results (without the long texts) come back in path order.
        work = [(str(path), str(root)) for path in scores]
        chunks = [work[i:i + POOL_CHUNK] for i in range(0, len(work), POOL_CHUNK)]
        ahead: deque[Future[list[tuple[ImportedTrial | None, list[str]]]]] = deque()
        try:
            for n in range(len(chunks)):
                # A window of chunks in flight, not the job: memory stays bounded when the
                # readers outrun the store.
                while len(ahead) < POOL_AHEAD and n + len(ahead) < len(chunks):
                    ahead.append(pool.submit(read_chunk, chunks[n + len(ahead)]))
                for trial, found in ahead.popleft().result():
                    problems += found
                    if trial is not None:
                        yield trial
        except BrokenProcessPool as exc:
            raise ReaderDied(f"{directory}: a reader process died while parsing the trials"
                             f" ({exc}); nothing imported (try --jobs 1)") from exc
        return
    for path in scores:
        trial = trials.read_trial(path, root, problems)
        if trial is not None:
            yield trial


class ReaderDied(RuntimeError):
    """A reader process of :func:`reader_pool` died (killed, out of memory)."""


@contextlib.contextmanager
def reader_pool(jobs: int) -> Iterator[Executor | None]:
    """``jobs`` reader processes for :func:`iter_job` (None for one: read in-process).
    Forked, all at once here, so call it before the process starts threads (the store's,
    asyncio's): a fork beside running threads may copy a lock another thread holds."""
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield None
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        pool.submit(os.getpid).result()  # forks every reader now, before any thread runs
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def default_jobs() -> int:
    """Reader processes when ``--jobs`` is not given: one per core, at most four."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def read_job(directory: Path) -> tuple[list[ImportedTrial], list[str]]:
    """Every trial under ``directory`` and every problem found (trials empty on a problem)."""
    problems: list[str] = []
    found = list(iter_job(directory, problems))
    return ([] if problems else found), problems
