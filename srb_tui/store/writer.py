"""The single writer: one asyncio task owns the write connection and applies queued jobs.

Callers enqueue a job and await its future; the writer takes every job waiting in the queue
(up to a bound), applies them in order inside one transaction, each job in its own savepoint
(so one failing job does not undo the others), commits, and only then resolves the futures:
an acknowledged write is a committed write. Consecutive log batches are merged into one
``executemany``; line numbers (``seq``) are assigned here, so they have no gaps.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiosqlite

from srb_tui.store.errors import RunNotFound, StoreError
from srb_tui.store.records import LogEntry

T = TypeVar("T")
WriteFn = Callable[[aiosqlite.Connection], Awaitable[T]]

_INSERT_LOG = "INSERT INTO log_lines (run_id, seq, ts, stream, text) VALUES (?, ?, ?, ?, ?)"


@dataclass
class _FnJob:
    """A write function queued for the writer task, and the future of its result."""

    fn: WriteFn[Any]
    future: asyncio.Future[Any]


@dataclass
class _LogJob:
    """Log lines queued for the writer task (batched with their neighbours)."""

    run_id: str
    entries: Sequence[LogEntry | tuple[str, str, str]]
    future: asyncio.Future[Any]
    rows: list[tuple[Any, ...]] = field(default_factory=list)


_Job = _FnJob | _LogJob
_Outcome = tuple[_Job, bool, Any]


class _GroupAborted(Exception):
    """The transaction itself broke; every job of the group fails."""


class Writer:
    """Serialises every write of a store through one connection and one task."""

    def __init__(
        self,
        conn: aiosqlite.Connection,
        label: str,
        *,
        max_group_jobs: int = 256,
        max_group_lines: int = 20_000,
        queue_size: int = 2048,
        preflight: Callable[[aiosqlite.Connection], Awaitable[str | None]] | None = None,
    ) -> None:
        self._conn = conn
        self._preflight = preflight
        self._refusal: str | None = None
        self._label = label
        self._queue: asyncio.Queue[_Job | None] = asyncio.Queue(maxsize=queue_size)
        self._max_jobs = max_group_jobs
        self._max_lines = max_group_lines
        self._next_seq: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._broken: BaseException | None = None

    @classmethod
    def closed(cls, conn: aiosqlite.Connection, label: str) -> Writer:
        """A writer that refuses every job as closed (a closed handle's)."""
        writer = cls(conn, label)
        writer._closing = True
        return writer

    @property
    def connection(self) -> aiosqlite.Connection:
        """The write connection (for closing it once the writer has stopped)."""
        return self._conn

    def start(self) -> None:
        """Start the writer task on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="srb-store-writer")

    # --- submitting ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._refusal is not None:
            raise StoreError(self._refusal)
        if self._broken is not None:
            raise StoreError(f"{self._label}: the store writer stopped ({self._broken})")
        if self._closing:
            raise StoreError(f"{self._label}: the store is closed")

    async def run(self, fn: WriteFn[T]) -> T:
        """Apply ``fn(conn)`` inside the writer's transaction; return its result once committed."""
        self._check_open()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._queue.put(_FnJob(fn, future))
        return await future

    async def append_logs(
        self, run_id: str, entries: Sequence[LogEntry | tuple[str, str, str]]
    ) -> int:
        """Append ``entries`` to ``run_id``'s log; return the last ``seq`` now stored."""
        self._check_open()
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        await self._queue.put(_LogJob(run_id, entries, future))
        return await future

    def forget_run(self, run_id: str) -> None:
        """Drop the cached next line number of ``run_id`` (call from a job that deletes it)."""
        self._next_seq.pop(run_id, None)

    async def close(self) -> None:
        """Refuse new jobs, apply every job already queued, stop the task."""
        if self._closing:
            if self._task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._task)
            return
        self._closing = True
        if self._task is None:
            return
        if not self._task.done():
            await self._queue.put(None)
        with contextlib.suppress(Exception):  # a crashed writer already failed its jobs
            await asyncio.shield(self._task)

    # --- the loop -----------------------------------------------------------------------------

    async def _loop(self) -> None:
        try:
            stop = False
            while not stop:
                job = await self._queue.get()
                if job is None:
                    break
                group: list[_Job] = [job]
                lines = len(job.entries) if isinstance(job, _LogJob) else 0
                while len(group) < self._max_jobs and lines < self._max_lines:
                    try:
                        more = self._queue.get_nowait()
                    except asyncio.QueueEmpty:
                        break
                    if more is None:
                        stop = True
                        break
                    group.append(more)
                    if isinstance(more, _LogJob):
                        lines += len(more.entries)
                await self._apply(group)
        except BaseException as exc:  # a bug or a cancelled task: fail whatever waits
            self._broken = exc
            self._fail_queued(exc)
            raise

    def _fail_queued(self, exc: BaseException) -> None:
        while True:
            try:
                job = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if job is not None and not job.future.done():
                job.future.set_exception(StoreError(f"{self._label}: store writer stopped ({exc})"))

    async def _refused(self, group: list[_Job]) -> bool:
        """Run the preflight once (before the first write); fail ``group`` if it refused."""
        if self._preflight is not None:
            check, self._preflight = self._preflight, None
            try:
                self._refusal = await check(self._conn)
            except sqlite3.Error as exc:
                self._refusal = f"{self._label}: cannot check the store before writing: {exc}"
        if self._refusal is None:
            return False
        for job in group:
            if not job.future.done():
                job.future.set_exception(StoreError(self._refusal))
        return True

    async def _apply(self, group: list[_Job]) -> None:
        outcomes: list[_Outcome] = []
        if await self._refused(group):
            return
        try:
            await self._conn.execute("BEGIN IMMEDIATE")
            logs: list[_LogJob] = []
            for job in group:
                if isinstance(job, _LogJob):
                    logs.append(job)
                    continue
                await self._flush_logs(logs, outcomes)
                logs = []
                await self._run_fn(job, outcomes)
            await self._flush_logs(logs, outcomes)
            await self._conn.execute("COMMIT")
        except (sqlite3.Error, _GroupAborted) as exc:
            with contextlib.suppress(sqlite3.Error):
                await self._conn.execute("ROLLBACK")
            self._next_seq.clear()
            error = self._wrap(exc.__cause__ if isinstance(exc, _GroupAborted) else exc)
            for job in group:
                if not job.future.done():
                    job.future.set_exception(error)
            return
        for job, ok, value in outcomes:
            if job.future.done():  # the caller gave up waiting; the write stands
                continue
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)

    def _wrap(self, exc: BaseException | None) -> BaseException:
        if isinstance(exc, StoreError):
            return exc
        if isinstance(exc, sqlite3.Error):
            error = StoreError(f"{self._label}: write failed: {exc}")
            error.__cause__ = exc
            return error
        return exc if exc is not None else StoreError(f"{self._label}: write failed")

    async def _savepoint(self, sql: str) -> None:
        try:
            await self._conn.execute(sql)
        except sqlite3.Error as exc:
            raise _GroupAborted() from exc

    async def _run_fn(self, job: _FnJob, outcomes: list[_Outcome]) -> None:
        await self._savepoint("SAVEPOINT job")
        try:
            value = await job.fn(self._conn)
        except Exception as exc:
            await self._savepoint("ROLLBACK TO job")
            await self._savepoint("RELEASE job")
            outcomes.append((job, False, self._wrap(exc)))
        else:
            await self._savepoint("RELEASE job")
            outcomes.append((job, True, value))

    async def _first_seq(self, run_id: str) -> int:
        cached = self._next_seq.get(run_id)
        if cached is not None:
            return cached
        rows = await self._conn.execute_fetchall(
            "SELECT (SELECT count(*) FROM runs WHERE id = ?),"
            " (SELECT max(seq) FROM log_lines WHERE run_id = ?)",
            (run_id, run_id),
        )
        exists, top = next(iter(rows))
        if not exists:
            raise RunNotFound(run_id, self._label)
        self._next_seq[run_id] = (top or 0) + 1
        return self._next_seq[run_id]

    async def _flush_logs(self, jobs: list[_LogJob], outcomes: list[_Outcome]) -> None:
        if not jobs:
            return
        before: dict[str, int] = {}
        ready: list[_LogJob] = []
        for job in jobs:
            try:
                first = await self._first_seq(job.run_id)
            except StoreError as exc:
                outcomes.append((job, False, exc))
                continue
            before.setdefault(job.run_id, first)
            run_id = job.run_id
            job.rows = [
                (run_id, seq, entry[0], entry[1], entry[2])
                for seq, entry in enumerate(job.entries, first)
            ]
            self._next_seq[run_id] = first + len(job.rows)
            ready.append(job)
        if not ready:
            return
        rows = ready[0].rows if len(ready) == 1 else [r for job in ready for r in job.rows]
        await self._savepoint("SAVEPOINT logs")
        try:
            await self._conn.executemany(_INSERT_LOG, rows)
        except sqlite3.Error as exc:
            await self._savepoint("ROLLBACK TO logs")
            await self._savepoint("RELEASE logs")
            self._next_seq.update(before)
            if len(ready) == 1:
                outcomes.append((ready[0], False, self._wrap(exc)))
            else:  # find the culprit: retry one batch at a time
                for job in ready:
                    await self._flush_logs([job], outcomes)
            return
        await self._savepoint("RELEASE logs")
        for job in ready:
            outcomes.append((job, True, job.rows[-1][1] if job.rows else 0))
            job.rows = []
