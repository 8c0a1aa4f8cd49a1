"""Is the store file sound: SQLite's own checks, and the recovery to offer when it is not.

``PRAGMA quick_check`` reads every page and checks the b-trees, records and freelist
(O(N), no index cross-check); ``PRAGMA integrity_check`` also checks every index against its
table (the "row N missing from index" kind of damage). srb runs the quick check before the
first write of each process (``Writer``'s preflight) and before a migration; ``srb doctor``
runs it, and ``srb doctor --deep`` the full check.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

#: How many problems a check reports at most (SQLite stops there).
MAX_PROBLEMS = 20


def recovery_steps(path: Path) -> str:
    """The exact command that rebuilds a damaged store, keeping the damaged one aside."""
    return (
        "Stop every srb using it, then rebuild it (a new file from every row SQLite can "
        "still read; the damaged file, with its -wal, moves to damaged-STAMP/ beside it, "
        "untouched):\n"
        f"  srb --state {path.parent} doctor --recover\n"
        f"then check the result: srb --state {path.parent} doctor --deep"
    )


def damage_message(path: Path, problems: list[str], *, check: str = "quick_check") -> str:
    """What a damaged store is told to whoever tries to write into it."""
    shown = "; ".join(problems[:5]) + (f"; … {len(problems) - 5} more" if len(problems) > 5
                                        else "")
    return (
        f"{path} is damaged (PRAGMA {check}: {shown}). srb writes nothing into a damaged "
        f"store; reading it still works.\n{recovery_steps(path)}"
    )


def problems_of(rows: list[tuple[object, ...]] | list[sqlite3.Row]) -> list[str]:
    """The problems a check's rows name (none when it answered ``ok``)."""
    found = [str(row[0]) for row in rows]
    return [] if found == ["ok"] else found


async def check_problems(conn: aiosqlite.Connection, *, deep: bool = False) -> list[str]:
    """The problems ``PRAGMA quick_check`` (``integrity_check`` with ``deep``) finds."""
    pragma = "integrity_check" if deep else "quick_check"
    try:
        rows = list(await conn.execute_fetchall(f"PRAGMA {pragma}({MAX_PROBLEMS})"))
    except sqlite3.DatabaseError as exc:  # "database disk image is malformed"
        if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
            raise
        return [str(exc)]
    return problems_of(rows)


async def quick_check_problem(conn: aiosqlite.Connection, path: Path) -> str | None:
    """None for a sound store, else the message refusing writes into it."""
    problems = await check_problems(conn)
    return damage_message(path, problems) if problems else None
