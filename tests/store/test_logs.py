"""Log lines: batched ingest, gap-free numbering, paging, counting, search, resuming."""

from __future__ import annotations

import asyncio

import pytest

from srb_tui.store import (
    LogDeduper,
    LogEntry,
    LogResumePoint,
    RunNotFound,
    Store,
    StoreError,
    docker_ts_ns,
)

from .conftest import make_run


def _lines(start: int, count: int) -> list[LogEntry]:
    return [
        LogEntry(
            f"2026-11-29T16:40:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
            "stderr" if i % 3 == 0 else "stdout",
            f"line {i}" + (" ERROR boom" if i % 250 == 0 else ""),
        )
        for i in range(start, start + count)
    ]


async def test_seq_is_gap_free_across_concurrent_batches(store: Store) -> None:
    run = await make_run(store)
    other = await make_run(store)
    batches = [_lines(i * 100, 100) for i in range(30)]
    results = await asyncio.gather(
        *(store.logs.append_log_lines(run.id, b) for b in batches),
        *(store.logs.append_log_lines(other.id, b) for b in batches[:5]),
    )
    assert sorted(results[:30]) == list(range(100, 3001, 100))
    assert await store.logs.max_log_seq(run.id) == 3000
    assert await store.logs.max_log_seq(other.id) == 500
    lines = await store.logs.read_log_lines(run.id, 0, 5000)
    assert [line.seq for line in lines] == list(range(1, 3001))
    # a batch is stored contiguously and in order
    first = lines[results[0] - 100 : results[0]]
    assert [line.text for line in first] == [e.text for e in batches[0]]


async def test_paging_and_counting(store: Store) -> None:
    run = await make_run(store)
    await store.logs.append_log_lines(run.id, _lines(0, 1000))
    page = await store.logs.read_log_lines(run.id, offset=990, limit=50)
    assert [line.seq for line in page] == list(range(991, 1001))
    assert page[0].text == "line 990" and page[0].stream == "stderr"
    assert await store.logs.read_log_lines(run.id, offset=1000) == []
    stderr = await store.logs.read_log_lines(run.id, offset=2, limit=3, stream="stderr")
    assert [line.text for line in stderr] == ["line 6", "line 9", "line 12"]
    assert await store.logs.count_log_lines(run.id) == 1000
    assert await store.logs.count_log_lines(run.id, stream="stderr") == 334
    after = await store.logs.read_log_after(run.id, 995, stream="stderr")
    assert [line.seq for line in after] == [997, 1000]
    assert await store.logs.last_log_ts(run.id) == "2026-11-29T16:40:00.999Z"
    with pytest.raises(StoreError, match="stream"):
        await store.logs.read_log_lines(run.id, stream="stdin")
    with pytest.raises(StoreError, match="negative"):
        await store.logs.read_log_lines(run.id, offset=-1)


async def test_search_forwards_and_backwards(store: Store) -> None:
    run = await make_run(store)
    await store.logs.append_log_lines(run.id, _lines(0, 1000))
    await store.logs.append_log_lines(run.id, [("2026-11-29T16:41:00Z", "stdout", "100% done_ok")])
    hits = await store.logs.search_log(run.id, "error BOOM")
    assert [h.seq for h in hits] == [1, 251, 501, 751]
    assert [h.seq for h in await store.logs.search_log(run.id, "boom", after_seq=251)] == [501, 751]
    assert [h.seq for h in await store.logs.search_log(run.id, "boom", limit=1)] == [1]
    back = await store.logs.search_log_backwards(run.id, "boom", before_seq=751)
    assert [h.seq for h in back] == [501, 251, 1]
    assert [h.seq for h in await store.logs.search_log(run.id, "0% done_")] == [1001]
    assert await store.logs.search_log(run.id, "_x%") == []
    with pytest.raises(StoreError, match="non-empty"):
        await store.logs.search_log(run.id, "")


async def test_bad_lines_and_unknown_runs(store: Store) -> None:
    run = await make_run(store)
    with pytest.raises(StoreError, match="stream 'stdin'"):
        await store.logs.append_log_lines(run.id, [("2026-01-01T00:00:00Z", "stdin", "x")])
    with pytest.raises(RunNotFound):
        await store.logs.append_log_lines("r-20990101-000000-0000", _lines(0, 3))
    assert await store.logs.append_log_lines(run.id, []) == 0
    assert await store.logs.max_log_seq(run.id) == 0


async def test_a_batch_for_an_unknown_run_does_not_spoil_its_neighbours(store: Store) -> None:
    run = await make_run(store)
    results = await asyncio.gather(
        store.logs.append_log_lines(run.id, _lines(0, 10)),
        store.logs.append_log_lines("r-20990101-000000-0000", _lines(0, 10)),
        store.logs.append_log_lines(run.id, _lines(10, 10)),
        return_exceptions=True,
    )
    assert results[0] == 10 and results[2] == 20
    assert isinstance(results[1], RunNotFound)
    assert [line.seq for line in await store.logs.read_log_lines(run.id)] == list(range(1, 21))


async def test_resume_point_and_deduper(store: Store) -> None:
    run = await make_run(store)
    assert await store.logs.log_resume_point(run.id) == LogResumePoint(run.id, 0, None)
    stored = [
        LogEntry("2026-11-29T16:40:12.5Z", "stdout", "a"),
        LogEntry("2026-11-29T16:40:13Z", "stdout", "b"),
        LogEntry("2026-11-29T16:40:13Z", "stdout", "b"),
        LogEntry("2026-11-29T16:40:13Z", "stderr", "c"),
    ]
    await store.logs.append_log_lines(run.id, stored)
    point = await store.logs.log_resume_point(run.id)
    assert point.max_seq == 4 and point.last_ts == "2026-11-29T16:40:13Z"
    assert point.at_last_ts == (("stdout", "b"), ("stdout", "b"), ("stderr", "c"))
    # Docker repeats everything since 16:40:13 (and one older line); then new output follows.
    replay = [
        LogEntry("2026-11-29T16:40:12.9Z", "stdout", "older"),
        LogEntry("2026-11-29T16:40:13.000000000Z", "stdout", "b"),
        LogEntry("2026-11-29T16:40:13Z", "stdout", "b"),
        LogEntry("2026-11-29T16:40:13Z", "stderr", "c"),
        LogEntry("2026-11-29T16:40:13Z", "stdout", "b"),  # a third copy is new
    ]
    fresh = [LogEntry("2026-11-29T16:40:13.1Z", "stdout", "a")]
    dedupe = LogDeduper(point)
    kept = dedupe.filter(replay[:2]) + dedupe.filter(replay[2:]) + dedupe.filter(fresh)
    assert kept == [replay[4], fresh[0]]
    await store.logs.append_log_lines(run.id, kept)
    texts = [line.text for line in await store.logs.read_log_lines(run.id)]
    assert texts == ["a", "b", "b", "c", "b", "a"]


def test_docker_timestamps_compare_as_numbers() -> None:
    short = docker_ts_ns("2026-11-29T16:40:13.1Z")
    long = docker_ts_ns("2026-11-29T16:40:13.100000000Z")
    later = docker_ts_ns("2026-11-29T16:40:13.10000001Z")
    zone = docker_ts_ns("2026-11-29T18:40:13.1+02:00")
    assert short == long == zone and later is not None and short is not None and later > short
    assert docker_ts_ns("yesterday") is None
    assert docker_ts_ns("2026-13-40T00:00:00Z") is None
