"""Benchmark: key presses on the Campaign screen while eight runs stream logs (issue 12).

The real console (Textual, run headless by Pilot) shows a campaign whose eight cells are
running. Eight producers do what the run service does with an agent's output: append a
batch of log lines to the real store, then publish it on the real event bus, every
``--pace`` seconds each (``--batch`` lines; 50 lines every 50 ms by default, 1,000 lines/s
a run, 8,000 lines/s in all). Meanwhile the cursor is moved through the matrix
(down/up/right/left) one key every 100 ms, each press timed until the table's cursor has
moved. The same presses are timed first with nothing streaming: that is the raw figure
the live one is compared with. Goal: p99 < 100 ms with the eight runs live.

    .venv/bin/python bench/bench_campaign_keys.py [--presses 200] [--pace 0.05] [--batch 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_console_log import make_batch, wait

from srb_tui.config import Settings
from srb_tui.service.events import LogLines
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.campaign import CampaignScreen

REPO = Path(__file__).resolve().parents[1]
RUNS = 8
TASKS, CONFIGS = 2, 4
GOAL_MS = 100.0
KEYS = ("down", "right", "up", "left")


async def seed(db: Path) -> list[str]:
    """Eight runs in the agent phase, one per cell of a running 2 × 4 campaign."""
    ids = []
    async with await Store.open(db) as store:
        for n in range(RUNS):
            run = await store.runs.create_run(task_id=f"task{n // CONFIGS}",
                                              task_path=str(REPO / "tasks"), agent="bench",
                                              budget_sec=3600.0)
            await store.runs.transition(run.id, "preparing")
            await store.runs.transition(run.id, "agent")
            ids.append(run.id)
    now = "2026-12-01T00:00:00.000000Z"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO campaigns (id, source, status, max_parallel, retry_limit,"
                     " created_at, updated_at) VALUES ('live', '', 'running', 8, 2, ?, ?)",
                     (now, now))
        for c in range(CONFIGS):
            conn.execute("INSERT INTO campaign_configs (campaign_id, position, label, agent)"
                         " VALUES ('live', ?, ?, ?)", (c, f"cfg{c}", f"command:cfg{c}"))
        for n, rid in enumerate(ids):
            task, config = divmod(n, CONFIGS)
            conn.execute(
                "INSERT INTO campaign_cells (campaign_id, task_id, config, repeat, position,"
                " task_path, state, run_id, attempts, updated_at) VALUES ('live', ?, ?, 1, ?,"
                " ?, 'running', ?, 1, ?)",
                (f"task{task}", f"cfg{config}", n, f"tasks/task{task}", rid, now))
    conn.close()
    return ids


async def press(pilot: Pilot[None], table: DataTable[Any], key: str) -> float:
    """Send ``key`` through the headless driver and time it until the cursor moved
    (``pilot.press`` would also wait for idle, which never comes while runs stream)."""
    driver = pilot.app._driver
    assert driver is not None
    before = table.cursor_coordinate
    event = events.Key(key, None)
    event.set_sender(pilot.app)
    start = time.perf_counter()
    driver.send_message(event)
    await wait(pilot, lambda: table.cursor_coordinate != before, 10)
    return time.perf_counter() - start


async def presses(pilot: Pilot[None], table: DataTable[Any], count: int) -> list[float]:
    out = []
    for n in range(count):
        out.append(await press(pilot, table, KEYS[n % len(KEYS)]))
        await asyncio.sleep(0.1)  # one key every 100 ms: pacing, not synchronisation
    return out


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)]


async def measure(settings: Settings, ids: list[str], args: argparse.Namespace) -> None:
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(160, 45)) as pilot:
        store = await app.run_host.store()
        bus = app.run_host.bus
        app.switch_mode("campaign")
        await wait(pilot, lambda: isinstance(app.screen, CampaignScreen)
                   and app.screen.query("#campaign-table")
                   and app.screen.query_one("#campaign-table", DataTable).row_count == TASKS)
        table = app.screen.query_one("#campaign-table", DataTable)
        table.focus()
        await wait(pilot, lambda: table.has_focus)
        idle = await presses(pilot, table, args.presses // 2)

        stop = asyncio.Event()
        produced = [0] * RUNS
        pool = [make_batch(i, args.batch) for i in range(16)]

        async def producer(index: int, run_id: str) -> None:
            n = 0
            while not stop.is_set():
                batch = pool[(n + index) % len(pool)]
                last = await store.logs.append_log_lines(run_id, batch)
                bus.publish(LogLines(run_id, "agent", tuple(batch), last))
                produced[index] += len(batch)
                n += 1
                await asyncio.sleep(args.pace)  # the agent's output rate

        tasks = [asyncio.create_task(producer(i, rid)) for i, rid in enumerate(ids)]
        started = time.perf_counter()
        live = await presses(pilot, table, args.presses)
        elapsed = time.perf_counter() - started
        stop.set()
        await asyncio.gather(*tasks)
    load = os.getloadavg()[0]
    rate = sum(produced) / elapsed
    print(f"Campaign screen, {RUNS} running cells, load average {load:.2f} on "
          f"{os.cpu_count()} CPUs; keys {'/'.join(KEYS)} every 100 ms")
    for name, values in (("idle", idle), ("8 live", live)):
        print(f"  {name:7} {len(values):4} presses: p50 {statistics.median(values) * 1000:6.1f}"
              f" ms  p99 {p99(values) * 1000:6.1f} ms  max {max(values) * 1000:6.1f} ms")
    print(f"  streaming: {rate:,.0f} lines/s into store + bus ({RUNS} runs, {args.batch} lines "
          f"every {args.pace * 1000:g} ms each)")
    verdict = "met" if p99(live) * 1000 < GOAL_MS else "NOT met"
    print(f"  p99 live/idle = {p99(live) / p99(idle):.2f}; goal p99 < {GOAL_MS:g} ms {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=200, help="presses with runs live")
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between batches")
    parser.add_argument("--batch", type=int, default=50, help="lines a batch")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srb-bench-keys-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        ids = asyncio.run(seed(state / "srb.sqlite3"))
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=state)
        asyncio.run(measure(settings, ids, args))


if __name__ == "__main__":
    main()
