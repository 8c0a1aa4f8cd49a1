"""One writer, many readers: reads keep answering while the writer is busy."""

from __future__ import annotations

import asyncio
import time

import aiosqlite

from srb_tui.store import LogEntry, Store

from .conftest import make_run

BATCH = 1000
BATCHES = 200  # 200k lines


def _batch(index: int) -> list[LogEntry]:
    return [
        LogEntry(
            f"2026-11-29T16:{index // 60 % 60:02d}:{index % 60:02d}.{i:06d}Z",
            "stdout",
            f"b{index} l{i} " + "x" * 60,
        )
        for i in range(BATCH)
    ]


async def test_reads_keep_answering_while_the_writer_ingests(store: Store) -> None:
    run = await make_run(store)
    other = await make_run(store, task_id="build03")
    await store.logs.append_log_lines(other.id, _batch(0))
    batches = [_batch(i) for i in range(BATCHES)]

    async def ingest() -> None:
        for batch in batches:
            await store.logs.append_log_lines(run.id, batch)

    task = asyncio.create_task(ingest())
    latencies: list[float] = []
    seen_progress: list[int] = []
    reads_during_ingest = 0
    deadline = time.monotonic() + 120
    while not task.done():
        assert time.monotonic() < deadline, "ingest did not finish"
        started = time.perf_counter()
        page = await store.logs.read_log_lines(other.id, offset=500, limit=3)
        assert [line.seq for line in page] == [501, 502, 503]
        assert (await store.runs.require_run(other.id)).task_id == "build03"
        assert await store.runs.count_runs(task="build03") == 1
        seen_progress.append(await store.logs.max_log_seq(run.id))
        latencies.append(time.perf_counter() - started)
        if not task.done():
            reads_during_ingest += 1
    await task

    assert await store.logs.count_log_lines(run.id) == BATCH * BATCHES
    assert reads_during_ingest >= 10, reads_during_ingest
    # readers saw the log grow batch by batch, never a half batch
    assert len(set(seen_progress)) >= 5
    assert all(seq % BATCH == 0 for seq in seen_progress)
    assert seen_progress == sorted(seen_progress)
    assert max(latencies) < 1.0, max(latencies)


async def test_a_read_does_not_wait_for_an_open_write_transaction(store: Store) -> None:
    run = await make_run(store)
    inside = asyncio.Event()
    release = asyncio.Event()

    async def slow_write(conn: aiosqlite.Connection) -> None:
        await conn.execute("UPDATE runs SET phase = 'busy' WHERE id = ?", (run.id,))
        inside.set()
        await release.wait()

    writing = asyncio.create_task(store._core.writer.run(slow_write))
    await asyncio.wait_for(inside.wait(), 10)
    # the writer holds its transaction (and the write lock) open; readers still answer,
    # and see only committed state
    during = await asyncio.wait_for(store.runs.require_run(run.id), 5)
    assert during.phase is None
    assert await asyncio.wait_for(store.runs.count_runs(), 5) == 1
    release.set()
    await writing
    assert (await store.runs.require_run(run.id)).phase == "busy"
