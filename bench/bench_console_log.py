"""Benchmark: the Run screen's log under load, with the real app, store and event bus.

1. Live ingest: a producer does what the run service does for an agent's log (append a
   batch to the store, then publish it on the bus) as fast as it can while the Run screen
   follows. Meanwhile Pilot presses keys (f: follow/pause, s: stream filter) every 100 ms;
   each press is timed until the app has handled it. Reported: lines/s into store + view,
   key latency p50/p99/max, and how long the view took to show the last line.
2. Big stored log: a run with a million stored lines is opened; reported: time until the
   last line is on screen, time to jump to the top, and the process's peak RSS growth.

    .venv/bin/python bench/bench_console_log.py [--live-lines 500000] [--stored 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import statistics
import tempfile
import time
from pathlib import Path

from textual import events
from textual.pilot import Pilot

from srb_tui.config import Settings
from srb_tui.service.events import LogLines
from srb_tui.store import LogEntry, Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.widgets.log_view import LogView

REPO = Path(__file__).resolve().parents[1]
BATCH = 1000
SIZE = (120, 40)


def make_batch(index: int, size: int) -> list[LogEntry]:
    second = index % 86_400
    stamp = f"2026-11-29T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return [
        LogEntry(f"{stamp}.{i:06d}000Z", "stderr" if i % 50 == 0 else "stdout",
                 f"[batch {index}] step {i}: editing src/module_{i % 97}.py (+12 -3) ok")
        for i in range(size)
    ]


def rss_mb() -> float:
    """Peak resident set size of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def wait(pilot: object, cond: object, timeout: float = 120.0) -> float:
    """Seconds until ``cond()`` holds, polled every millisecond (never waits for idle)."""
    start = time.perf_counter()
    while not cond():  # type: ignore[operator]
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.001)
    return time.perf_counter() - start


async def press(pilot: Pilot[None], key: str, cond: object) -> float:
    """Send ``key`` through the Pilot's headless driver, as ``pilot.press`` does, and time
    it until ``cond()`` holds. (``pilot.press`` itself also waits for the process to go
    idle, which never happens during ingest, so it cannot time a key.)"""
    driver = pilot.app._driver
    assert driver is not None
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(pilot.app)
    start = time.perf_counter()
    driver.send_message(event)
    await wait(pilot, cond, 5)
    return time.perf_counter() - start


async def live(settings: Settings, lines: int, verbose: bool = False) -> None:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id="bench", task_path=str(REPO / "tasks"),
                                          agent="bench", budget_sec=3600.0)
        await store.runs.transition(run.id, "preparing")
        await store.runs.transition(run.id, "agent")
    pool = [make_batch(i, BATCH) for i in range(64)]
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=SIZE) as pilot:
        app.open_run(run.id)
        await wait(pilot, lambda: isinstance(app.screen, RunScreen)
                   and app.screen.detail is not None)
        screen = app.screen
        log = screen.query_one("#run-log", LogView)
        store = await app.run_host.store()
        bus = app.run_host.bus
        produced = 0
        done = asyncio.Event()

        async def producer() -> None:
            nonlocal produced
            for index in range(lines // BATCH):
                batch = pool[index % len(pool)]
                last = await store.logs.append_log_lines(run.id, batch)
                bus.publish(LogLines(run.id, "agent", tuple(batch), last))
                produced += len(batch)
            done.set()

        latencies: list[float] = []
        by_key: dict[str, list[float]] = {}
        start = time.perf_counter()
        task = asyncio.create_task(producer())
        keys = ["f", "f", "s", "s", "s"]
        n = 0
        while not done.is_set():
            key = keys[n % len(keys)]
            n += 1
            before = (log.follow, log.stream)
            latencies.append(await press(
                pilot, key, lambda b=before: (log.follow, log.stream) != b))
            by_key.setdefault(f"{key}->{log.stream if key == 's' else log.follow}",
                              []).append(latencies[-1])
            await asyncio.sleep(0.1)
        await task
        ingest = time.perf_counter() - start
        log.stream = "all"
        log.follow = True
        catch_up = await wait(pilot, lambda: log.line_count >= lines
                              and lines in log.visible_seqs()
                              and log.line_text(lines) is not None)
        total = time.perf_counter() - start
    latencies.sort()
    if verbose:
        for name, values in sorted(by_key.items()):
            print(f"   {name:14} max {max(values) * 1000:6.1f} ms over {len(values)}")
    print(f"live ingest      {lines:,} lines in {ingest:.2f} s = {lines / ingest:,.0f} lines/s "
          "into store + bus while the Run screen follows")
    print(f"view caught up   {catch_up * 1000:.0f} ms after the last batch "
          f"({lines / total:,.0f} lines/s end to end)")
    print(f"key presses      {len(latencies)} (f/s during ingest): p50 "
          f"{statistics.median(latencies) * 1000:.1f} ms, p99 "
          f"{latencies[int(len(latencies) * 0.99) - 1] * 1000:.1f} ms, max "
          f"{latencies[-1] * 1000:.1f} ms")


async def big(settings: Settings, lines: int) -> None:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id="bench", task_path=str(REPO / "tasks"),
                                          agent="bench", budget_sec=3600.0)
        t0 = time.perf_counter()
        for index in range(lines // 5000):
            await store.logs.append_log_lines(run.id, make_batch(index, 5000))
        seeded = time.perf_counter() - t0
    print(f"stored log       {lines:,} lines seeded in {seeded:.1f} s")
    base = current_rss_mb()
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before_open = current_rss_mb()
        t0 = time.perf_counter()
        app.open_run(run.id)
        await wait(pilot, lambda: isinstance(app.screen, RunScreen)
                   and app.screen.detail is not None)
        log = app.screen.query_one("#run-log", LogView)
        await wait(pilot, lambda: log.line_count == lines and lines in log.visible_seqs()
                   and all(log.line_text(s) is not None for s in log.visible_seqs()))
        opened = time.perf_counter() - t0
        top = await press(pilot, "home", lambda: 1 in log.visible_seqs()
                          and all(log.line_text(s) is not None for s in log.visible_seqs()))
        t2 = time.perf_counter()
        log.go_to(lines // 2)
        await wait(pilot, lambda: lines // 2 in log.visible_seqs()
                   and log.line_text(lines // 2) is not None)
        middle = time.perf_counter() - t2
        t3 = time.perf_counter()
        log.stream = "stderr"
        await wait(pilot, lambda: log.index_ready, 60)
        stderr_index = time.perf_counter() - t3
        after = current_rss_mb()
        cached = len(log.buffer._cache)
    print(f"open 1M log      last line on screen {opened * 1000:.0f} ms after opening the "
          "Run screen")
    print(f"navigate         top {top * 1000:.0f} ms, middle (go to line) {middle * 1000:.0f} "
          f"ms; stderr-only index of {log.line_count:,} lines built in {stderr_index:.2f} s")
    print(f"memory           RSS {base:.0f} MiB before the app, {before_open:.0f} MiB with "
          f"the app, {after:.0f} MiB after open+navigate+index "
          f"(+{after - before_open:.0f} MiB for the Run screen; {cached:,} lines cached); "
          f"peak {rss_mb():.0f} MiB")


GC_PAUSES: list[tuple[int, float]] = []
_gc_start = [0.0]


def _gc_watch(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc_start[0] = time.perf_counter()
    else:
        GC_PAUSES.append((info["generation"], time.perf_counter() - _gc_start[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--live-lines", type=int, default=500_000)
    parser.add_argument("--stored", type=int, default=1_000_000)
    parser.add_argument("--verbose", action="store_true", help="latency per key and state")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=Path(tmp) / "live")
        if args.verbose:
            gc.callbacks.append(_gc_watch)
        asyncio.run(live(settings, args.live_lines, args.verbose))
        if args.verbose:
            gc.callbacks.remove(_gc_watch)
            slow = sorted((p for p in GC_PAUSES if p[1] > 0.01), key=lambda p: -p[1])[:5]
            print("   gc pauses > 10 ms during live ingest:",
                  ", ".join(f"gen{g} {d * 1000:.0f} ms" for g, d in slow) or "none")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=Path(tmp) / "big")
        asyncio.run(big(settings, args.stored))


if __name__ == "__main__":
    main()
