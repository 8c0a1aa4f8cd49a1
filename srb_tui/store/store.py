"""The Store: opens ``state/srb.sqlite3`` and gathers every record family behind one object.

All writes go through one writer task (see ``writer``); reads use read-only connections, so
with WAL a read never waits for the writer. ``run_detail`` reads a whole run in one snapshot.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import aiosqlite

from srb_tui.store.agent_log import AgentLogMixin
from srb_tui.store.base import query
from srb_tui.store.campaigns import CampaignsMixin
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
from srb_tui.store.grading import STAGE_ORDER_SQL, GradingMixin
from srb_tui.store.imports import ImportsMixin
from srb_tui.store.infra import InfraMixin
from srb_tui.store.labels import LabelsMixin
from srb_tui.store.ledger import LedgerMixin
from srb_tui.store.logstore import LogsMixin
from srb_tui.store.migrations import SCHEMA_VERSION, apply_migrations
from srb_tui.store.report_rows import ReportRowsMixin
from srb_tui.store.runs import RunsMixin
from srb_tui.store.writer import Writer

if TYPE_CHECKING:
    from srb_tui.store.grading_records import RunDetail

DEFAULT_BUSY_TIMEOUT_MS = 10_000


class Store(RunsMixin, GradingMixin, InfraMixin, LogsMixin, LedgerMixin, AgentLogMixin,
            CampaignsMixin, ReportRowsMixin, LabelsMixin, ImportsMixin):
    """srb's source of truth. Open with ``await Store.open(path)`` or ``async with``."""

    def __init__(self, path: Path, writer: Writer, readers: ReaderPool, version: int) -> None:
        self.path = path
        self._label = str(path)
        self._writer = writer
        self._readers = readers
        self._version = version
        self._closed = False

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
            await enable_wal(conn, file)
            version = await apply_migrations(conn, version)
            for _ in range(max(1, readers)):
                pool.append(await open_reader(file, busy_timeout_ms))
        except BaseException as exc:
            for reader in pool:
                with contextlib.suppress(sqlite3.Error):
                    await reader.close()
            with contextlib.suppress(sqlite3.Error):
                await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise open_error(file, exc) from exc
            raise
        writer = Writer(conn, str(file))
        writer.start()
        return cls(file, writer, ReaderPool(pool, str(file)), version)

    async def close(self) -> None:
        """Apply every queued write, then close all connections (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._writer.close()
        finally:
            await self._readers.close()
            with contextlib.suppress(sqlite3.Error):
                await self._writer_conn_close()

    async def _writer_conn_close(self) -> None:
        conn = self._writer.connection
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

    async def run_detail(self, run_id: str, *, events_limit: int = 1000) -> RunDetail:
        """Everything recorded about a run, read in one consistent snapshot.

        Raises RunNotFound for an unknown id. Log lines are counted, not included.
        """
        from srb_tui.store import grading_records as rec

        async with self._readers.snapshot() as conn:
            run = await self._run_in(conn, run_id)
            by_run = (run_id,)

            async def rows(sql: str) -> list[sqlite3.Row]:
                return await query(conn, sql, by_run)

            detail = rec.RunDetail(
                run=run,
                transitions=tuple(
                    transition_from_row(r)
                    for r in await rows(
                        "SELECT * FROM run_transitions WHERE run_id = ? ORDER BY id"
                    )
                ),
                stage_results=tuple(
                    rec.stage_from_row(r, self.path.parent)
                    for r in await rows(
                        f"SELECT * FROM stage_results WHERE run_id = ? ORDER BY {STAGE_ORDER_SQL}"
                    )
                ),
                module_results=tuple(
                    rec.module_from_row(r)
                    for r in await rows(
                        "SELECT * FROM module_results WHERE run_id = ?"
                        f" ORDER BY {STAGE_ORDER_SQL}, position"
                    )
                ),
                checks=tuple(
                    rec.check_from_row(r)
                    for r in await rows(
                        "SELECT * FROM checks WHERE run_id = ?"
                        f" ORDER BY {STAGE_ORDER_SQL}, module_id, position"
                    )
                ),
                gate_votes=tuple(
                    rec.vote_from_row(r)
                    for r in await rows(
                        "SELECT * FROM gate_votes WHERE run_id = ? ORDER BY gate_id, sample"
                    )
                ),
                gate_outcomes=tuple(
                    rec.outcome_from_row(r)
                    for r in await rows(
                        "SELECT * FROM gate_outcomes WHERE run_id = ? ORDER BY gate_id"
                    )
                ),
                adversary_rounds=tuple(
                    rec.adversary_from_row(r)
                    for r in await rows(
                        "SELECT * FROM adversary_rounds WHERE run_id = ? ORDER BY adversary_id"
                    )
                ),
                counterexamples=tuple(
                    rec.counterexample_from_row(r)
                    for r in await rows(
                        "SELECT * FROM counterexamples WHERE run_id = ? ORDER BY id"
                    )
                ),
                images=tuple(
                    image_from_row(r)
                    for r in await rows("SELECT * FROM images WHERE run_id = ? ORDER BY role")
                ),
                containers=tuple(
                    container_from_row(r)
                    for r in await rows(
                        "SELECT * FROM containers WHERE run_id = ?"
                        " ORDER BY created_at, container_id"
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
