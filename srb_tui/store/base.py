"""What every record family of the Store shares: the file, its writer and its readers.

A :class:`StoreCore` is the one open handle of a :class:`~srb_tui.store.Store` (its path,
label, writer and reader pool); every repository (``store.runs``, ``store.grading``, ...)
is built with the core of its store and reads it on each call, so when the store closes
(and swaps in a closed writer and readers) every repository of it stops answering too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from srb_tui.store.connection import ReaderPool
from srb_tui.store.convert import run_from_row
from srb_tui.store.errors import RunNotFound
from srb_tui.store.records import RunRecord
from srb_tui.store.writer import WriteFn, Writer

T = TypeVar("T")
R = TypeVar("R")


async def query(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> list[Any]:
    """All rows of ``sql`` on ``conn`` (the writer's or a borrowed reader)."""
    return list(await conn.execute_fetchall(sql, tuple(params)))


async def run_in(conn: aiosqlite.Connection, run_id: str, label: str) -> RunRecord:
    """The run ``run_id`` read on ``conn``; RunNotFound (naming ``label``) if it is not there."""
    rows = await query(conn, "SELECT * FROM runs WHERE id = ?", (run_id,))
    if not rows:
        raise RunNotFound(run_id, label)
    return run_from_row(rows[0])


class StoreCore:
    """The open file of one Store handle: path, label, writer and readers (set by
    ``Store.open``; ``Store.close`` swaps in closed ones)."""

    def __init__(self, path: Path, writer: Writer, readers: ReaderPool) -> None:
        self.path = path
        self.label = str(path)
        self.writer = writer
        self.readers = readers


class Repository:
    """A record family of the Store, reached as one of its attributes (``store.runs``)."""

    def __init__(self, core: StoreCore) -> None:
        self._core = core

    @property
    def path(self) -> Path:
        return self._core.path

    @property
    def _label(self) -> str:
        return self._core.label

    @property
    def _writer(self) -> Writer:
        return self._core.writer

    @property
    def _readers(self) -> ReaderPool:
        return self._core.readers

    async def _write(self, fn: WriteFn[T]) -> T:
        return await self._core.writer.run(fn)

    async def _write_then_read(
        self, job: WriteFn[T], read: Callable[[], Awaitable[R | None]]
    ) -> tuple[R, T]:
        """Run ``job`` in one transaction, then ``read`` back the record it wrote (as the
        readers now see it) with what ``job`` returned (e.g. how many rows it added)."""
        done = await self._write(job)
        record = await read()
        assert record is not None
        return record, done

    async def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return await self._core.readers.fetchall(sql, params)

    async def _run_in(self, conn: aiosqlite.Connection, run_id: str) -> RunRecord:
        """The run ``run_id`` read on ``conn``; RunNotFound if it is not there."""
        return await run_in(conn, run_id, self._core.label)

    async def _require_in(self, conn: aiosqlite.Connection, run_id: str) -> None:
        """RunNotFound unless ``run_id`` exists (read on ``conn``)."""
        rows = await query(conn, "SELECT 1 FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id, self._core.label)
