"""Reading a store that another process (a child ``srb``) is writing, for tests that watch
it from outside: read-only, never creating the file, empty before its schema exists."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def store_rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    """The rows ``sql`` gives on ``db`` read-only ([] before the file or its schema exists)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return list(conn.execute(sql))
    except sqlite3.OperationalError:
        return []  # the schema is not there yet
    finally:
        conn.close()
