"""Opening the store: migrations, pragmas, reopen, and refusal of files that are not ours."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from srb_tui.store import MIGRATIONS, SCHEMA_VERSION, Migration, Store, StoreError
from srb_tui.store.migrations import apply_migrations

from .conftest import make_run

EXPECTED_TABLES = {
    "runs",
    "run_transitions",
    "stage_results",
    "module_results",
    "checks",
    "gate_votes",
    "gate_outcomes",
    "adversary_rounds",
    "counterexamples",
    "images",
    "containers",
    "events",
    "log_lines",
    # V2: the model gateway
    "gateway_tokens",
    "run_budgets",
    "ledger",
    "gateway_probes",
    # V3: agent rounds and transcript events
    "agent_rounds",
    "agent_events",
    # V6: campaigns, human labels, imported runs
    "campaigns",
    "campaign_configs",
    "campaign_cells",
    "cell_attempts",
    "human_labels",
    "imported_runs",
    # V7: strength campaigns (issue 36)
    "strength_campaigns",
    "strength_mutants",
    "strength_catches",
    "strength_equivalents",
}


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows} - {"sqlite_sequence"}


async def test_migrates_an_empty_folder_to_the_latest_schema(db_path: Path) -> None:
    assert not db_path.parent.exists()
    store = await Store.open(db_path)
    try:
        assert store.schema_version == SCHEMA_VERSION == len(MIGRATIONS)
        assert _tables(db_path) == EXPECTED_TABLES
        conn = sqlite3.connect(db_path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
    finally:
        await store.close()


async def test_an_empty_file_is_a_new_store(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"")
    async with await Store.open(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
    assert _tables(db_path) == EXPECTED_TABLES


async def test_write_connection_enforces_foreign_keys(store: Store) -> None:
    with pytest.raises(StoreError, match="FOREIGN KEY"):

        async def orphan(conn: aiosqlite.Connection) -> None:
            await conn.execute("INSERT INTO events (run_id, at, kind) VALUES ('r-nope', 'x', 'k')")

        await store._core.writer.run(orphan)


async def test_reopen_keeps_everything(db_path: Path) -> None:
    async with await Store.open(db_path) as store:
        run = await make_run(store)
        await store.runs.transition(run.id, "preparing")
        await store.logs.append_log_lines(run.id, [("2026-01-01T00:00:00Z", "stdout", "hello")])
    async with await Store.open(db_path) as again:
        stored = await again.runs.get_run(run.id)
        assert stored is not None and stored.status == "preparing"
        assert [line.text for line in await again.logs.read_log_lines(run.id)] == ["hello"]
        # seq continues after reopen, without a gap or a duplicate
        last = await again.logs.append_log_lines(run.id, [("2026-01-01T00:00:01Z", "stderr", "x")])
        assert last == 2


async def test_newer_schema_is_refused_and_untouched(db_path: Path) -> None:
    async with await Store.open(db_path):
        pass
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    before = db_path.read_bytes()
    with pytest.raises(StoreError) as caught:
        await Store.open(db_path)
    message = str(caught.value)
    assert str(db_path) in message
    assert f"version {SCHEMA_VERSION + 5}" in message
    assert f"version {SCHEMA_VERSION})" in message
    assert db_path.read_bytes() == before


async def test_garbage_file_is_refused_and_untouched(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    garbage = b"this is not a database\n" * 400
    db_path.write_bytes(garbage)
    with pytest.raises(StoreError) as caught:
        await Store.open(db_path)
    message = str(caught.value)
    assert str(db_path) in message and "move it aside" in message
    assert db_path.read_bytes() == garbage
    assert sorted(p.name for p in db_path.parent.iterdir()) == ["srb.sqlite3"]


async def test_damaged_database_is_refused_and_untouched(db_path: Path) -> None:
    async with await Store.open(db_path) as store:
        await make_run(store)
    data = bytearray(db_path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # smash the schema page after the header
    db_path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as caught:
        await Store.open(db_path)
    assert str(db_path) in str(caught.value)
    assert not isinstance(caught.value, sqlite3.Error)
    assert db_path.read_bytes() == bytes(data)


async def test_someone_elses_sqlite_file_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE notes (x)")
    before = db_path.read_bytes()
    with pytest.raises(StoreError, match="not an srb store"):
        await Store.open(db_path)
    assert db_path.read_bytes() == before


async def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        await Store.open(tmp_path)


async def test_a_failing_migration_step_rolls_back_whole(tmp_path: Path) -> None:
    steps = (
        Migration("one", ("CREATE TABLE a (x)",)),
        Migration("two", ("CREATE TABLE b (x)", "CREATE TABLE a (y)")),  # second fails
    )
    async with aiosqlite.connect(tmp_path / "m.db", isolation_level=None) as conn:
        with pytest.raises(sqlite3.OperationalError):
            await apply_migrations(conn, 0, steps)
        version = next(iter(await conn.execute_fetchall("PRAGMA user_version")))[0]
        names = {r[0] for r in await conn.execute_fetchall("SELECT name FROM sqlite_master")}
    assert version == 1
    assert names == {"a"}  # table b of the failed step is gone


async def test_migrations_apply_in_order_from_a_given_version(tmp_path: Path) -> None:
    steps = (
        Migration("one", ("CREATE TABLE a (x)",)),
        Migration("two", ("ALTER TABLE a ADD COLUMN y",)),
    )
    async with aiosqlite.connect(tmp_path / "m.db", isolation_level=None) as conn:
        assert await apply_migrations(conn, 0, steps[:1]) == 1
        assert await apply_migrations(conn, 1, steps) == 2
        columns = [r[1] for r in await conn.execute_fetchall("PRAGMA table_info(a)")]
    assert columns == ["x", "y"]


async def test_closed_store_refuses_writes(db_path: Path) -> None:
    store = await Store.open(db_path)
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await make_run(store)
    await store.close()  # idempotent


async def test_a_write_lock_held_elsewhere_gives_a_clear_error(db_path: Path) -> None:
    async with await Store.open(db_path, busy_timeout_ms=100) as store:
        run = await make_run(store)
        other = sqlite3.connect(db_path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreError, match="locked") as caught:
                await store.runs.update_run(run.id, phase="blocked")
            assert str(db_path) in str(caught.value)
            # reads still answer while someone else holds the write lock
            assert (await store.runs.require_run(run.id)).phase is None
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert (await store.runs.update_run(run.id, phase="free")).phase == "free"



async def test_migration_raced_by_another_connection_is_not_applied_twice(
    tmp_path: Path,
) -> None:
    """Two srb processes opening a new store at once: the one that read version 0 before the
    other migrated must not create the tables again (it used to fail "table runs already
    exists")."""
    db = tmp_path / "race.sqlite3"
    first = await aiosqlite.connect(db, isolation_level=None)
    second = await aiosqlite.connect(db, isolation_level=None)
    try:
        stale = int(next(iter(await first.execute_fetchall("PRAGMA user_version")))[0])
        assert stale == 0
        assert await apply_migrations(second, 0) == SCHEMA_VERSION
        assert await apply_migrations(first, stale) == SCHEMA_VERSION
    finally:
        await first.close()
        await second.close()
    async with await Store.open(db) as store:
        assert await store.runs.count_runs() == 0
