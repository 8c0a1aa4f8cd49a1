"""Rebuild a damaged store into a new file, row by row, keeping the damaged one aside.

What ``sqlite3 .recover`` does, in the part srb needs, with Python's own sqlite3: Debian
bookworm's shell (3.40.1) fails ``.recover`` on every database ("SQL logic error"), so srb
does not depend on it. Everything goes through SQLite (the damaged file is read
through a read-only connection), never ``open()``: see ``store.guard``.

The schema is the damaged file's own (its ``sqlite_master``, its ``user_version`` and
``application_id``). Rows are copied table by table: a table that reads whole is copied in
one statement; one that does not is read forwards and then backwards in key order (rowid,
or the primary key of a ``WITHOUT ROWID`` table) up to the damage. Tables that could not be
read whole are named in the report.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from srb_tui.store.errors import StoreError


@dataclass
class Salvage:
    """What a rebuild copied and what it could not read, per table."""

    copied: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)  # table -> what was lost
    damaged_folder: Path | None = None
    integrity: str = ""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {_quote(table)}").fetchone()[0])


def _rows(src: sqlite3.Connection, sql: str) -> tuple[list[tuple[object, ...]], bool]:
    """Rows of ``sql`` up to the end (True) or the first one SQLite cannot read (False)."""
    found: list[tuple[object, ...]] = []
    try:
        cursor = src.execute(sql)
        while batch := cursor.fetchmany(500):
            found.extend(tuple(row) for row in batch)
    except sqlite3.DatabaseError:
        return found, False
    return found, True


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                without_rowid: bool) -> str:
    """Copy one table, forwards in key order up to the damage, then backwards from the end
    up to it; '' when it read whole, else what was lost."""
    q = _quote(table)
    info = list(src.execute(f"PRAGMA table_info({q})"))
    cols = [_quote(r[1]) for r in info]
    if without_rowid:
        keys = [_quote(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
    else:
        cols, keys = ["rowid", *cols], ["rowid"]
    insert = (f"INSERT OR IGNORE INTO {q} ({', '.join(cols)}) "
              f"VALUES ({', '.join('?' for _ in cols)})")
    for direction in ("ASC", "DESC"):
        order = ", ".join(f"{k} {direction}" for k in keys)
        rows, whole = _rows(src, f"SELECT {', '.join(cols)} FROM {q} ORDER BY {order}")
        dst.executemany(insert, rows)
        if whole:
            return "" if direction == "ASC" else "rows between unreadable pages are lost"
    return "rows between unreadable pages are lost"


def holders(path: Path) -> list[int]:
    """Other processes with ``path`` (or its -wal/-shm) open, from /proc."""
    names = {str(path.resolve()) + s for s in ("", "-wal", "-shm")}
    found: list[int] = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in names:
                        found.append(int(pid))
                        break
    return found


def rebuild(path: Path) -> Salvage:
    """Rebuild ``path`` in place: the damaged file (with its -wal, -shm) moves to
    ``damaged-STAMP/`` beside it; StoreError when another process still has it open."""
    busy = holders(path)
    if busy:
        raise StoreError(f"{path} is open in process(es) {', '.join(map(str, busy))}: stop "
                         "every srb using this store first")
    out = path.with_name(path.name + ".recovered")
    for leftover in (out, Path(f"{out}-journal")):
        leftover.unlink(missing_ok=True)
    report = Salvage()
    src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(out, isolation_level=None)
    try:
        try:
            schema = src.execute("SELECT type, name, sql FROM sqlite_master "
                                 "WHERE sql IS NOT NULL").fetchall()
            header = [src.execute(f"PRAGMA {p}").fetchone()[0]
                      for p in ("user_version", "application_id")]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: its schema cannot be read ({exc}); nothing can be "
                             "rebuilt from it: restore a backup") from exc
        dst.execute("BEGIN")
        tables = [(n, s) for t, n, s in schema if t == "table" and not n.startswith("sqlite_")]
        for _, sql in tables:
            dst.execute(sql)
        for name, sql in tables:
            lost = _copy_table(src, dst, name, "WITHOUT ROWID" in sql.upper())
            report.copied[name] = _count(dst, name)
            if lost:
                report.unreadable[name] = lost
        for kind, name, sql in schema:
            if kind in ("index", "trigger", "view") and not name.startswith("sqlite_"):
                dst.execute(sql)
        dst.execute(f"PRAGMA user_version = {int(header[0])}")
        dst.execute(f"PRAGMA application_id = {int(header[1])}")
        dst.execute("COMMIT")
        report.integrity = str(dst.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        src.close()
        dst.close()
    if report.integrity != "ok":
        raise StoreError(f"{out}: the rebuilt file fails its own check ({report.integrity})")
    folder = path.parent / time.strftime("damaged-%Y%m%d-%H%M%S")
    folder.mkdir()
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{path}{suffix}", folder / f"{path.name}{suffix}")
    os.rename(out, path)
    report.damaged_folder = folder
    return report
