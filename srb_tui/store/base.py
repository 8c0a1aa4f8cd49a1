"""What every part of the Store shares: the file label, the writer, the readers, helpers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from srb_tui.store.connection import ReaderPool
from srb_tui.store.convert import run_from_row
from srb_tui.store.errors import RunNotFound
from srb_tui.store.records import RunRecord
from srb_tui.store.writer import WriteFn, Writer

T = TypeVar("T")


async def query(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> list[Any]:
    """All rows of ``sql`` on ``conn`` (the writer's or a borrowed reader)."""
    return list(await conn.execute_fetchall(sql, tuple(params)))


class StoreBase:
    """State shared by the Store's mixins (set by ``Store.open``)."""

    path: Path
    _label: str
    _writer: Writer
    _readers: ReaderPool

    async def _write(self, fn: WriteFn[T]) -> T:
        return await self._writer.run(fn)

    async def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return await self._readers.fetchall(sql, params)

    async def _run_in(self, conn: aiosqlite.Connection, run_id: str) -> RunRecord:
        """The run ``run_id`` read on ``conn``; RunNotFound if it is not there."""
        rows = await query(conn, "SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id, self._label)
        return run_from_row(rows[0])

    async def _require_in(self, conn: aiosqlite.Connection, run_id: str) -> None:
        """RunNotFound unless ``run_id`` exists (read on ``conn``)."""
        rows = await query(conn, "SELECT 1 FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id, self._label)
