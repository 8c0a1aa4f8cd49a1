"""Benchmark: ingest a million log lines through the store the way the runner would.

The runner hands the store one batch at a time per run and awaits each batch. For a ratio
against the raw tool, the same rows go into the same schema with plain ``sqlite3``
``executemany`` (one transaction per batch, same pragmas) in the same process. Batches are
made before the clock starts (a pool of distinct batches, cycled). While srb ingests, a
console-like reader (every 50 ms: last 200 lines, the run, the run list) measures how long
reads take, and its latencies are reported.

    .venv/bin/python bench/bench_log_ingest.py [--lines 1000000] [--batch 1000] [--runs 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from srb_tui.store import LogEntry, Store
from srb_tui.store.migrations import MIGRATIONS

POOL = 64  # distinct batches per run, made before timing
READ_EVERY_SEC = 0.05


def make_batch(run_index: int, batch_index: int, size: int) -> list[LogEntry]:
    """A batch of realistic-looking agent output lines."""
    second = batch_index % 86_400
    stamp = f"2026-11-29T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return [
        LogEntry(
            f"{stamp}.{i:06d}123Z",
            "stderr" if i % 7 == 0 else "stdout",
            f"[run {run_index} batch {batch_index}] step {i}: editing src/module_{i % 97}.py "
            "(+12 -3) ok",
        )
        for i in range(size)
    ]


async def bench_store(path: Path, lines: int, batch: int, runs: int) -> tuple[float, list[float]]:
    store = await Store.open(path)
    try:
        run_ids = [
            (
                await store.runs.create_run(
                    task_id="lang03", task_path="tasks/lang03", agent="bench"
                )
            ).id
            for _ in range(runs)
        ]
        batches_per_run = lines // batch // runs
        pool = [[make_batch(i, b, batch) for b in range(POOL)] for i in range(runs)]
        done = asyncio.Event()
        latencies: list[float] = []

        async def runner(index: int, run_id: str) -> None:
            for b in range(batches_per_run):
                await store.logs.append_log_lines(run_id, pool[index][b % POOL])

        async def reader() -> None:
            while not done.is_set():
                started = time.perf_counter()
                top = await store.logs.max_log_seq(run_ids[0])
                await store.logs.read_log_lines(run_ids[0], max(0, top - 200), 200)
                await store.runs.require_run(run_ids[0])
                await store.runs.list_runs(limit=50)
                latencies.append(time.perf_counter() - started)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), READ_EVERY_SEC)

        reading = asyncio.create_task(reader())
        started = time.perf_counter()
        await asyncio.gather(*(runner(i, r) for i, r in enumerate(run_ids)))
        elapsed = time.perf_counter() - started
        done.set()
        await reading
        total = sum([await store.logs.count_log_lines(r) for r in run_ids])
        assert total == batches_per_run * batch * runs, total
        return total / elapsed, latencies
    finally:
        await store.close()


def bench_raw(path: Path, lines: int, batch: int, runs: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    for migration in MIGRATIONS:
        for statement in migration.statements:
            conn.execute(statement)
    run_ids = [f"r-20261129-000000-{i:04x}" for i in range(runs)]
    for run_id in run_ids:
        conn.execute(
            "INSERT INTO runs (id, task_id, task_path, agent, status, created_at, updated_at)"
            " VALUES (?, 'lang03', 'tasks/lang03', 'bench', 'pending', 'x', 'x')",
            (run_id,),
        )
    batches_per_run = lines // batch // runs
    next_seq = dict.fromkeys(run_ids, 1)
    pool = [[make_batch(i, b, batch) for b in range(POOL)] for i in range(runs)]
    started = time.perf_counter()
    for b in range(batches_per_run):
        for index, run_id in enumerate(run_ids):
            first = next_seq[run_id]
            rows = [
                (run_id, seq, e.ts, e.stream, e.text)
                for seq, e in enumerate(pool[index][b % POOL], first)
            ]
            next_seq[run_id] = first + len(rows)
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO log_lines VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    total = conn.execute("SELECT count(*) FROM log_lines").fetchone()[0]
    conn.close()
    assert total == batches_per_run * batch * runs
    return float(total) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1, help="concurrent runs sharing the store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srb-bench-") as tmp:
        srb_rate, latencies = asyncio.run(
            bench_store(Path(tmp) / "srb.sqlite3", args.lines, args.batch, args.runs)
        )
        raw_rate = bench_raw(Path(tmp) / "raw.sqlite3", args.lines, args.batch, args.runs)
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else float("nan")
    print(f"lines {args.lines:,}  batch {args.batch}  runs {args.runs}")
    print(f"srb store      {srb_rate:12,.0f} lines/s")
    print(f"raw sqlite3    {raw_rate:12,.0f} lines/s  (executemany, one transaction per batch)")
    print(f"ratio srb/raw  {srb_rate / raw_rate:12.2f}")
    if latencies:
        print(
            f"reader during ingest: {len(latencies)} reads, "
            f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
            f"max {latencies[-1] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
