"""No descriptor of a live store's files outside SQLite; one store per process per file;
a damaged store is readable and refuses writes with the exact recovery (issue 33)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from srb_tui.store import Store, StoreError
from srb_tui.store.guard import StoreFileOpenRefused, guarded

from .conftest import make_run


def _fds_on(path: Path) -> int:
    """How many of this process's descriptors are open on ``path`` (or its -wal / -shm)."""
    names = {str(path), f"{path}-wal", f"{path}-shm"}
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") in names:
                count += 1
        except OSError:
            continue
    return count


async def test_opening_a_live_stores_files_outside_sqlite_is_refused(db_path: Path) -> None:
    async with await Store.open(db_path) as store:
        await make_run(store)
        for name in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            with pytest.raises(StoreFileOpenRefused, match="outside SQLite"):
                name.open("rb")
            with pytest.raises(StoreFileOpenRefused):
                os.open(name, os.O_RDONLY)
        with pytest.raises(StoreFileOpenRefused):
            db_path.read_bytes()
        assert str(db_path.resolve()) in guarded()
        assert len(await store.runs.list_runs()) == 1  # the store is unharmed and still answers
    # closed: the file is a file again (a test, a backup tool, a copy)
    assert str(db_path.resolve()) not in guarded()
    assert db_path.read_bytes()[:16] == b"SQLite format 3\x00"


async def test_a_second_open_in_one_process_shares_the_first(db_path: Path) -> None:
    first = await Store.open(db_path)
    try:
        await make_run(first, "lang01")
        held = _fds_on(db_path)
        assert held > 0
        async with await Store.open(db_path) as second:
            assert _fds_on(db_path) == held  # no new connection, no new descriptor
            await make_run(second, "lang02")
            assert {r.task_id for r in await first.runs.list_runs()} == {"lang01", "lang02"}
        # the second handle closed; the first still reads and writes
        await make_run(first, "lang03")
        assert len(await first.runs.list_runs()) == 3
    finally:
        await first.close()
    assert _fds_on(db_path) == 0


async def test_a_closed_handle_refuses_while_the_shared_store_lives(db_path: Path) -> None:
    async with await Store.open(db_path) as keeper:
        other = await Store.open(db_path)
        await other.close()
        with pytest.raises(StoreError, match="closed"):
            await make_run(other)
        with pytest.raises(StoreError, match="closed"):
            await other.runs.list_runs()
        await make_run(keeper)  # the keeper's handle is untouched


def _damage_an_index(db_path: Path) -> None:
    """Index rows that no longer match their table: integrity_check finds it, SQLite reads on."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("PRAGMA writable_schema = ON")
        # The index of runs by status now claims to index another column: its entries no
        # longer match the rows (what a lost write of an index page looks like).
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'runs_by_status'").fetchone()
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'runs_by_status'",
                     (sql.replace("(status", "(task_id", 1),))
        conn.execute("PRAGMA writable_schema = OFF")
    finally:
        conn.close()


def _smash_a_page(db_path: Path) -> None:
    """Garbage over the last page of the file (a torn write)."""
    conn = sqlite3.connect(db_path)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(db_path.read_bytes())
    data[-page:] = b"\x5a" * page
    db_path.write_bytes(bytes(data))


async def test_a_damaged_store_is_never_written(db_path: Path) -> None:
    async with await Store.open(db_path) as store:
        for i in range(60):  # enough rows for the runs table to span several pages
            await make_run(store, f"lang{i:02d}", model="m" * 300)
    _smash_a_page(db_path)
    store = await Store.open(db_path)
    try:
        with pytest.raises(StoreError) as caught:
            await make_run(store)
        message = str(caught.value)
        assert str(db_path) in message and "damaged" in message
        assert f"srb --state {db_path.parent} doctor --recover" in message
        with pytest.raises(StoreError, match="damaged"):  # and every later write too
            await make_run(store)
    finally:
        await store.close()


def _srb(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "-m", "srb_tui.cli", "--state", str(state),
                           "doctor", *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def _seed(db_path: Path, runs: int) -> None:
    import asyncio

    async def seed() -> None:
        async with await Store.open(db_path) as store:
            for i in range(runs):
                await make_run(store, f"lang{i:02d}", model="m" * 300)

    asyncio.run(seed())


def _doctor_store_line(state: Path, *args: str) -> dict[str, object]:
    import json

    done = _srb(state, "--json", *args)
    checks = json.loads(done.stdout)["checks"]
    return next(c for c in checks if c["name"] == "store")


def test_doctor_names_the_damage_and_the_recovery_rebuilds_it(db_path: Path) -> None:
    """Index damage: quick_check cannot see it, `doctor --deep` does; `doctor --recover`
    rebuilds a store srb opens, keeps the damaged file, and `--deep` is then clean."""
    import asyncio

    _seed(db_path, 40)
    _damage_an_index(db_path)
    state = db_path.parent
    assert _doctor_store_line(state)["ok"] is True  # quick_check: table pages are sound
    deep = _doctor_store_line(state, "--deep")
    assert deep["ok"] is False
    assert "missing from index runs_by_status" in str(deep["detail"])
    assert str(db_path) in str(deep["detail"])
    assert f"srb --state {state} doctor --recover" in str(deep["fix"])

    done = _srb(state, "--recover")
    assert done.returncode == 0, done.stderr
    damaged = list(state.glob("damaged-*/srb.sqlite3"))
    assert len(damaged) == 1
    assert _doctor_store_line(state, "--deep")["ok"] is True

    async def reopen() -> int:
        async with await Store.open(db_path) as store:
            await make_run(store, "after")
            return len(await store.runs.list_runs(limit=100))

    assert asyncio.run(reopen()) == 41


def test_a_torn_page_is_rebuilt_around(db_path: Path) -> None:
    _seed(db_path, 60)
    _smash_a_page(db_path)
    state = db_path.parent
    line = _doctor_store_line(state)
    assert line["ok"] is False and "damaged" in str(line["detail"])
    done = _srb(state, "--recover")
    assert done.returncode == 0, done.stderr
    assert "integrity_check ok" in done.stdout
    assert _doctor_store_line(state, "--deep")["ok"] is True
