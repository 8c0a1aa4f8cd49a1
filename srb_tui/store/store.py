"""The Store: opens ``state/srb.sqlite3`` and composes its record families.

Each family is a repository built with the store's core (``base.StoreCore``: file, writer,
readers) and reached as an attribute: ``store.runs``, ``store.grading``, ``store.infra``,
``store.logs``, ``store.agent``, ``store.ledger``, ``store.campaigns``, ``store.reports``,
``store.labels``, ``store.imports``, ``store.strength``. The Store keeps what spans them:
open, close, the integrity check and ``run_detail``.

All writes go through one writer task (see ``writer``); reads use read-only connections, so
with WAL a read never waits for the writer. ``run_detail`` reads a whole run in one snapshot.

One store per process per file: a second ``Store.open`` of a file already open on the same
event loop returns a handle on the same connections and writer (counted; the last close
closes them), so a console view that opens "its own" store adds no connection. While any
store of a file is open, nothing in the process may open its files outside SQLite
(``store.guard``). Before the first write of a process, the file passes
``PRAGMA quick_check``; a damaged store is still readable, and every write is refused with
the recovery to run (``store.health``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import weakref
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import aiosqlite

from srb_tui.store import guard
from srb_tui.store.agent_log import AgentLogRepository
from srb_tui.store.base import StoreCore, query, run_in
from srb_tui.store.campaigns import CampaignsRepository
from srb_tui.store.connection import (
    ReaderPool,
    enable_wal,
    inspect,
    open_error,
    open_reader,
    set_pragmas,
    sniff,
)
from srb_tui.store.convert import (
    container_from_row,
    event_from_row,
    image_from_row,
    transition_from_row,
)
from srb_tui.store.errors import StoreError
from srb_tui.store.grading import STAGE_ORDER_SQL, GradingRepository
from srb_tui.store.health import check_problems, quick_check_problem
from srb_tui.store.imports import ImportsRepository
from srb_tui.store.infra import InfraRepository
from srb_tui.store.labels import LabelsRepository
from srb_tui.store.ledger import LedgerRepository
from srb_tui.store.logstore import LogsRepository
from srb_tui.store.migrations import SCHEMA_VERSION, apply_migrations
from srb_tui.store.report_rows import ReportRowsRepository
from srb_tui.store.runs import RunsRepository
from srb_tui.store.strength import StrengthRepository
from srb_tui.store.writer import Writer

if TYPE_CHECKING:
    from srb_tui.store.grading_records import RunDetail

DEFAULT_BUSY_TIMEOUT_MS = 10_000


class _Shared:
    """The connections and writer of one file on one event loop, and who holds them."""

    def __init__(self, path: Path, writer: Writer, readers: ReaderPool, version: int,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.path = path
        self.writer = writer
        self.readers = readers
        self.version = version
        self.loop = weakref.ref(loop)
        self.holders = 1


_SHARED: dict[tuple[str, int], _Shared] = {}
_OPENING: dict[tuple[str, int], tuple[weakref.ref[asyncio.AbstractEventLoop], asyncio.Lock]] = {}


def _key(file: Path, loop: asyncio.AbstractEventLoop) -> tuple[str, int]:
    return (os.path.realpath(file), id(loop))


def _opening_lock(key: tuple[str, int], loop: asyncio.AbstractEventLoop) -> asyncio.Lock:
    """The lock that makes concurrent opens of one file on one loop share one store."""
    held = _OPENING.get(key)
    if held is None or held[0]() is not loop:
        held = (weakref.ref(loop), asyncio.Lock())
        _OPENING[key] = held
    return held[1]


def _live(key: tuple[str, int], loop: asyncio.AbstractEventLoop) -> _Shared | None:
    shared = _SHARED.get(key)
    if shared is None:
        return None
    if shared.loop() is not loop or loop.is_closed():  # a dead loop's id was reused
        del _SHARED[key]
        return None
    return shared


_ChildTables = tuple[tuple[str, str, str, Callable[[sqlite3.Row], Any]], ...]
"""``run_detail``'s per-run tables: the RunDetail field, the table, its order, the converter."""


class Store:
    """srb's source of truth. Open with ``await Store.open(path)`` or ``async with``.

    Each record family is a repository attribute (``store.runs.create_run(...)``,
    ``store.grading.record_checks(...)``); the Store itself only opens, checks and closes
    the file, and reads ``run_detail``, the one read that spans the families.
    """

    runs: RunsRepository
    grading: GradingRepository
    infra: InfraRepository
    logs: LogsRepository
    agent: AgentLogRepository
    ledger: LedgerRepository
    campaigns: CampaignsRepository
    reports: ReportRowsRepository
    labels: LabelsRepository
    imports: ImportsRepository
    strength: StrengthRepository

    def __init__(self, path: Path, writer: Writer, readers: ReaderPool, version: int,
                 shared: _Shared | None = None) -> None:
        self.path = path
        self._core = core = StoreCore(path, writer, readers)
        self._version = version
        self._closed = False
        self._shared = shared
        self.runs = RunsRepository(core)
        self.grading = GradingRepository(core)
        self.infra = InfraRepository(core)
        self.logs = LogsRepository(core)
        self.agent = AgentLogRepository(core)
        self.ledger = LedgerRepository(core)
        self.campaigns = CampaignsRepository(core)
        self.reports = ReportRowsRepository(core)
        self.labels = LabelsRepository(core)
        self.imports = ImportsRepository(core)
        self.strength = StrengthRepository(core)

    @property
    def schema_version(self) -> int:
        """The schema version of the open file (``user_version``)."""
        return self._version

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        readers: int = 2,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    ) -> Store:
        """Open (creating if absent) and migrate the store at ``path``.

        Raises StoreError, never a raw sqlite error, for a file that is not an srb database,
        is damaged, or has a newer schema than this code; such a file is left untouched.
        """
        file = Path(path)
        loop = asyncio.get_running_loop()
        key = _key(file, loop)
        async with _opening_lock(key, loop):
            shared = _live(key, loop)
            if shared is None:
                shared = await cls._open_new(file, readers, busy_timeout_ms, loop)
                _SHARED[key] = shared
            else:
                shared.holders += 1
        return cls(file, shared.writer, shared.readers, shared.version, shared)

    @staticmethod
    async def _open_new(file: Path, readers: int, busy_timeout_ms: int,
                        loop: asyncio.AbstractEventLoop) -> _Shared:
        """The connections and writer of a file this loop has not open yet."""
        sniff(file)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{file}: cannot create its folder ({exc.strerror or exc})") from exc
        try:
            # Opened once on this thread first: a file SQLite cannot open (a read-only
            # folder) is one message here, not aiosqlite's worker thread dying on a closed loop.
            sqlite3.connect(file, isolation_level=None).close()
            conn = await aiosqlite.connect(file, isolation_level=None)
        except sqlite3.Error as exc:
            raise open_error(file, exc) from exc
        pool: list[aiosqlite.Connection] = []
        try:
            conn.row_factory = sqlite3.Row
            await set_pragmas(conn, busy_timeout_ms)
            version = await inspect(conn, file)
            checked = 0 < version < SCHEMA_VERSION  # a migration writes: only into a sound file
            if checked:
                problem = await quick_check_problem(conn, file)
                if problem:
                    raise StoreError(problem)
            await enable_wal(conn, file)
            version = await apply_migrations(conn, version)
            # The readers open at once (each on its own thread): one reader's wait, not
            # ``readers`` of them, before the store answers.
            opened = await asyncio.gather(
                *(open_reader(file, busy_timeout_ms) for _ in range(max(1, readers))),
                return_exceptions=True)
            pool.extend(r for r in opened if not isinstance(r, BaseException))
            for outcome in opened:
                if isinstance(outcome, BaseException):
                    raise outcome
        except BaseException as exc:
            for reader in pool:
                with contextlib.suppress(sqlite3.Error):
                    await reader.close()
            with contextlib.suppress(sqlite3.Error):
                await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise open_error(file, exc) from exc
            raise
        writer = Writer(conn, str(file), preflight=None if checked else
                        lambda c: quick_check_problem(c, file))
        writer.start()
        guard.protect(os.path.realpath(file))
        return _Shared(file, writer, ReaderPool(pool, str(file)), version, loop)

    async def close(self) -> None:
        """Apply every queued write, then close all connections (idempotent). A handle that
        shares its connections with others (see the module docstring) only stops answering:
        its writes were committed when they returned, and the connections stay theirs."""
        if self._closed:
            return
        self._closed = True
        core = self._core
        shared, writer, readers = self._shared, core.writer, core.readers
        core.writer = Writer.closed(writer.connection, core.label)
        core.readers = ReaderPool([], core.label, closed=True)
        if shared is not None:
            shared.holders -= 1
            if shared.holders > 0:
                return
            key = (os.path.realpath(shared.path), id(shared.loop()))
            if _SHARED.get(key) is shared:
                del _SHARED[key]
                held = _OPENING.get(key)
                if held is not None and not held[1].locked():
                    del _OPENING[key]
        try:
            await writer.close()
        finally:
            await readers.close()
            with contextlib.suppress(sqlite3.Error):
                await self._writer_conn_close(writer)
            guard.release(os.path.realpath(self.path))

    @staticmethod
    async def _writer_conn_close(writer: Writer) -> None:
        conn = writer.connection
        with contextlib.suppress(sqlite3.Error):
            await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def check_integrity(self, *, deep: bool = False) -> list[str]:
        """What ``PRAGMA quick_check`` (``integrity_check`` with ``deep``) finds; [] if sound."""
        async with self._core.readers.borrow() as conn:
            return await check_problems(conn, deep=deep)

    async def run_detail(self, run_id: str, *, events_limit: int = 1000) -> RunDetail:
        """Everything recorded about a run, read in one consistent snapshot.

        Raises RunNotFound for an unknown id. Log lines are counted, not included.
        """
        from srb_tui.store import grading_records as rec

        async with self._core.readers.snapshot() as conn:
            run = await run_in(conn, run_id, self._core.label)
            by_run = (run_id,)

            async def rows(sql: str) -> list[sqlite3.Row]:
                return await query(conn, sql, by_run)

            children: _ChildTables = (
                ("transitions", "run_transitions", "id", transition_from_row),
                ("stage_results", "stage_results", STAGE_ORDER_SQL,
                 partial(rec.stage_from_row, root=self.path.parent)),
                ("module_results", "module_results", f"{STAGE_ORDER_SQL}, position",
                 rec.module_from_row),
                ("gate_votes", "gate_votes", "gate_id, sample", rec.vote_from_row),
                ("gate_outcomes", "gate_outcomes", "gate_id", rec.outcome_from_row),
                ("adversary_rounds", "adversary_rounds", "adversary_id", rec.adversary_from_row),
                ("counterexamples", "counterexamples", "id", rec.counterexample_from_row),
                ("images", "images", "role", image_from_row),
                ("containers", "containers", "created_at, container_id", container_from_row),
            )
            read: dict[str, Any] = {}
            for field, table, order, convert in children:
                found = await rows(f"SELECT * FROM {table} WHERE run_id = ? ORDER BY {order}")
                read[field] = tuple(convert(r) for r in found)
            detail = rec.RunDetail(
                run=run,
                **read,
                checks=rec.CheckRows(  # made records when read: 21,769 checks a run
                    await rows(
                        "SELECT * FROM checks WHERE run_id = ?"
                        f" ORDER BY {STAGE_ORDER_SQL}, module_id, position"
                    )
                ),
                events=tuple(
                    event_from_row(r)
                    for r in await query(
                        conn,
                        "SELECT * FROM events WHERE run_id = ? ORDER BY seq LIMIT ?",
                        (run_id, events_limit),
                    )
                ),
                log_lines=int(
                    (await rows("SELECT max(seq) FROM log_lines WHERE run_id = ?"))[0][0] or 0
                ),
                last_log_ts=next(
                    (
                        str(r[0])
                        for r in await rows(
                            "SELECT ts FROM log_lines WHERE run_id = ? ORDER BY seq DESC LIMIT 1"
                        )
                    ),
                    None,
                ),
            )
        return detail


__all__ = ["SCHEMA_VERSION", "Store"]
