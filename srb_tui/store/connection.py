"""Opening the database file: sniffing, pragmas, version checks, and the read-only pool.

Nothing here writes to a file it does not recognise: the header is sniffed by a read-only
SQLite connection first, and the version and ownership checks run before WAL mode (which
rewrites the header) is switched on. Nothing here opens the file with anything but SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import aiosqlite

from srb_tui.store.errors import StoreError
from srb_tui.store.logs import PLAIN_SQL, plain_text
from srb_tui.store.migrations import APPLICATION_ID, SCHEMA_VERSION


def corrupt_message(path: Path, detail: object) -> str:
    """The message for a file that is not a usable srb database."""
    return (
        f"{path} is not a usable srb database ({detail}). It was left untouched: move it "
        f"aside (e.g. `mv {path} {path}.broken`) to start a fresh store, restore a backup, "
        "or point srb at another state directory."
    )


def open_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """A StoreError for an sqlite error met while opening ``path``."""
    if type(exc) is sqlite3.OperationalError:  # locked, unreadable, no space: not damage
        hint = " (is another srb using it?)" if "locked" in str(exc) else ""
        error = StoreError(f"{path}: cannot open the store: {exc}{hint}")
    else:
        error = StoreError(corrupt_message(path, exc))
    error.__cause__ = exc
    return error


def sniff(path: Path) -> None:
    """Refuse a path that exists but cannot be an SQLite database, before srb writes to it.

    The header is read by SQLite itself, through a read-only connection (``mode=ro``: it
    never writes, never makes a ``-wal`` or journal), never with ``open()``: closing a
    descriptor of the file would drop the locks this process's live connections hold on it
    (see ``store.guard``).
    """
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not path.exists():
        return
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None)
    except sqlite3.Error as exc:
        raise open_error(path, exc) from exc
    try:
        conn.execute("PRAGMA schema_version").fetchall()
    except sqlite3.OperationalError as exc:  # unreadable, locked: not damage
        raise open_error(path, exc) from exc
    except sqlite3.DatabaseError as exc:  # "file is not a database"
        raise StoreError(corrupt_message(path, f"not an SQLite file: {exc}")) from exc
    finally:
        conn.close()


async def pragma_value(conn: aiosqlite.Connection, name: str) -> Any:
    """The value of ``PRAGMA name`` (``name`` is one of our constants, never user input)."""
    rows = list(await conn.execute_fetchall(f"PRAGMA {name}"))
    return rows[0][0] if rows else None


async def inspect(conn: aiosqlite.Connection, path: Path) -> int:
    """The schema version of the open file, after checking it is ours and not too new."""
    # The objects first: each read is its own snapshot, and another srb process may be
    # creating the store right now. Its first step commits the tables, user_version and
    # application_id at once, so once the tables are seen the two header values are too;
    # read the other way round, a commit between the reads looked like a foreign file.
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM sqlite_master"))
    objects = int(rows[0][0])
    version = int(await pragma_value(conn, "user_version"))
    app_id = int(await pragma_value(conn, "application_id"))
    if (
        app_id not in (0, APPLICATION_ID)
        or (version == 0 and objects > 0)
        or (version > 0 and app_id != APPLICATION_ID)
    ):
        raise StoreError(
            f"{path} is an SQLite database but not an srb store (application id {app_id:#x}, "
            f"{objects} schema objects). It was left untouched; point srb at another file."
        )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has store schema version {version}, newer than this srb knows "
            f"(version {SCHEMA_VERSION}). Upgrade srb, or use another state directory; "
            "the file was left untouched."
        )
    return version


async def set_pragmas(conn: aiosqlite.Connection, busy_timeout_ms: int) -> None:
    """Connection settings that change nothing on disk."""
    await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")


async def enable_wal(conn: aiosqlite.Connection, path: Path) -> None:
    """Switch the file to WAL (persistent; done once the file is known to be ours)."""
    mode = str(await pragma_value(conn, "journal_mode = WAL")).lower()
    if mode != "wal":
        raise StoreError(f"{path}: could not switch to WAL journal mode (got {mode!r})")


async def open_reader(path: Path, busy_timeout_ms: int) -> aiosqlite.Connection:
    """A read-only connection (``mode=ro`` and ``query_only``) with ``sqlite3.Row`` rows."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        await conn.execute("PRAGMA query_only = ON")
        await conn.create_function(PLAIN_SQL, 1, plain_text, deterministic=True)
    except BaseException:
        await conn.close()
        raise
    return conn


class ReaderPool:
    """A few read-only connections handed out one caller at a time.

    A borrow that ends by an exception (a cancelled read above all) may leave work queued
    on the connection's thread, a ``BEGIN`` among it: aiosqlite runs a queued call even
    when its awaiter was cancelled. Such a connection is marked and, at its next borrow,
    a ``ROLLBACK`` is queued behind that work, so no reader inherits a transaction.
    """

    def __init__(self, conns: list[aiosqlite.Connection], label: str, *,
                 closed: bool = False) -> None:
        self._conns = conns
        self._label = label
        self._closed = closed
        self._dirty: set[int] = set()
        self._free: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        for conn in conns:
            self._free.put_nowait(conn)

    @contextlib.asynccontextmanager
    async def borrow(self) -> AsyncIterator[aiosqlite.Connection]:
        """One connection for the duration of the block."""
        if self._closed:
            raise StoreError(f"{self._label}: the store is closed")
        conn = await self._free.get()
        try:
            if id(conn) in self._dirty:
                with contextlib.suppress(sqlite3.Error):  # "no transaction is active"
                    await conn.execute("ROLLBACK")
                self._dirty.discard(id(conn))
            yield conn
        except BaseException:
            self._dirty.add(id(conn))
            raise
        finally:
            self._free.put_nowait(conn)

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Rows of one query; SQLite errors become StoreError naming the file."""
        async with self.borrow() as conn:
            try:
                return list(await conn.execute_fetchall(sql, tuple(params)))
            except sqlite3.Error as exc:
                raise StoreError(f"{self._label}: read failed: {exc}") from exc

    @contextlib.asynccontextmanager
    async def snapshot(self) -> AsyncIterator[aiosqlite.Connection]:
        """One connection inside a read transaction: every query sees the same state."""
        async with self.borrow() as conn:
            try:
                await conn.execute("BEGIN")
            except sqlite3.Error as exc:
                raise StoreError(f"{self._label}: read failed: {exc}") from exc
            try:
                yield conn
            except sqlite3.Error as exc:
                raise StoreError(f"{self._label}: read failed: {exc}") from exc
            finally:
                with contextlib.suppress(sqlite3.Error):
                    await conn.execute("COMMIT")

    async def close(self) -> None:
        """Close every connection (wait for borrowed ones to come back first)."""
        for _ in self._conns:
            conn = await self._free.get()
            with contextlib.suppress(sqlite3.Error):
                await conn.close()
