"""srb's own thread pool for blocking docker-py calls (never asyncio's default executor).

A run holds at most a few long-lived blocking calls at once (two log followers and
one bounded ``wait``), plus short calls (inspect, kill, archive). The pool is sized
from the number of concurrent runs so one slow run cannot starve another.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREADS_PER_RUN = 4
SPARE_THREADS = 4


class RunnerPool:
    """A dedicated executor; ``await pool.call(fn, *args)`` runs ``fn`` on it."""

    def __init__(self, concurrent_runs: int = 1) -> None:
        if concurrent_runs < 1:
            raise ValueError(f"concurrent_runs must be >= 1, got {concurrent_runs}")
        self.concurrent_runs = concurrent_runs
        self.max_workers = concurrent_runs * THREADS_PER_RUN + SPARE_THREADS
        self._executor = ThreadPoolExecutor(
            max_workers=self.max_workers, thread_name_prefix="srb-docker"
        )

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on the pool and await its result."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def shutdown(self) -> None:
        """Stop accepting work; queued calls are cancelled, running ones finish."""
        self._executor.shutdown(wait=False, cancel_futures=True)
