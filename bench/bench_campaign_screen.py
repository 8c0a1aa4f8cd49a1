"""Benchmark: first paint of the Campaign screen with a 520-cell campaign (20 tasks × 26
configurations, the paper's size); goal under 500 ms (issue 38 item 6), and the same for
``srb campaign status paper`` over that store (a fresh process, wall clock from start to
exit, best of 3; beside it the same process's ``srb --version`` as its start-up floor).

The store gets 520 scored runs (``bench_report.seed``: score events, gate outcomes,
Stage III rounds) and a campaign whose cells point at them. The figure is the time from
switching to the Campaign screen (what ``m`` does) in a running console until the matrix
table has painted with every row. For scale, the same matrix read straight from the store
(``load_matrix``, no Textual) is timed too; the ratio is what the screen adds.

    .venv/bin/python bench/bench_campaign_screen.py
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from textual.widgets import DataTable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import seed

from srb_tui.config import Settings
from srb_tui.reports.matrix import load_matrix
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.campaign import CampaignScreen

GOAL_SEC = 0.5
TASKS = 20
CONFIGS = 26


async def _create(path: Path) -> None:
    store = await Store.open(path)
    await store.close()


def add_campaign(path: Path) -> None:
    conn = sqlite3.connect(path)
    now = "2026-12-01T00:00:00.000000Z"
    runs = [r[0] for r in conn.execute("SELECT id FROM runs ORDER BY id")]
    with conn:
        conn.execute("INSERT INTO campaigns (id, source, status, max_parallel, retry_limit,"
                     " created_at, updated_at) VALUES ('paper', '', 'done', 4, 2, ?, ?)",
                     (now, now))
        for c in range(CONFIGS):
            conn.execute("INSERT INTO campaign_configs (campaign_id, position, label, agent)"
                         " VALUES ('paper', ?, ?, ?)", (c, f"cfg{c:02d}", f"claude-code:m{c}"))
        for n, rid in enumerate(runs[:TASKS * CONFIGS]):
            task, config = divmod(n, CONFIGS)
            conn.execute("UPDATE runs SET task_id = ? WHERE id = ?", (f"task{task:02d}", rid))
            conn.execute(
                "INSERT INTO campaign_cells (campaign_id, task_id, config, repeat, position,"
                " task_path, state, run_id, attempts, updated_at) VALUES ('paper', ?, ?, 1, ?,"
                " ?, 'done', ?, 1, ?)",
                (f"task{task:02d}", f"cfg{config:02d}", n, f"tasks/task{task:02d}", rid, now),
            )
    conn.close()


def watch_paint() -> dict[str, asyncio.Event]:
    signal: dict[str, asyncio.Event] = {}
    original = DataTable.render_lines

    def render_lines(self: DataTable[Any], crop: Any) -> Any:
        lines = original(self, crop)
        event = signal.get("painted")
        if self.id == "campaign-table" and self.row_count >= TASKS and event is not None:
            event.set()
        return lines

    DataTable.render_lines = render_lines  # type: ignore[method-assign]
    return signal


async def measure(settings: Settings) -> tuple[float, int, int]:
    signal = watch_paint()
    app = create_app(settings)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        await app.run_host.store()  # the console opens its store at start; not timed
        painted = signal["painted"] = asyncio.Event()
        started = time.perf_counter()
        app.switch_mode("campaign")
        await painted.wait()
        first = time.perf_counter() - started
        screen = app.screen
        assert isinstance(screen, CampaignScreen)
        table = screen.query_one("#campaign-table", DataTable)
        return first, table.row_count, len(table.columns) - 1


async def raw(path: Path) -> float:
    async with await Store.open(path) as store:
        started = time.perf_counter()
        matrix = await load_matrix(store, "paper")
        assert matrix is not None and len(matrix.cells) == TASKS * CONFIGS
        return time.perf_counter() - started


def cli_wall(state: Path, *argv: str) -> float:
    """Best of 3: a fresh ``srb`` process with ``argv`` over ``state``, start to exit."""
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "srb_tui", "--state", str(state), *argv],
                              capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - began)
        if done.returncode != 0:
            raise SystemExit(f"srb {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return best


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="srb-bench-campaign-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        db = state / "srb.sqlite3"
        asyncio.run(_create(db))
        seed(db, TASKS * CONFIGS)
        add_campaign(db)
        settings = Settings(task_roots=(Path(tmp) / "tasks",), state_dir=state)
        first, rows, columns = asyncio.run(measure(settings))
        floor = min(asyncio.run(raw(db)) for _ in range(3))
        status = cli_wall(state, "campaign", "status", "paper")
        start = cli_wall(state, "--version")
    verdict = "OK" if first < GOAL_SEC else "SLOW"
    print(f"Campaign screen first paint: {first * 1000:.0f} ms for {rows} rows × {columns} "
          f"configurations = {rows * columns} cells (goal < {GOAL_SEC * 1000:.0f} ms) [{verdict}]")
    print(f"the same matrix from the store alone: {floor * 1000:.0f} ms; screen/store "
          f"{first / floor:.1f}x")
    verdict = "OK" if status < GOAL_SEC else "SLOW"
    print(f"srb campaign status paper ({TASKS * CONFIGS} cells), a fresh process: "
          f"{status * 1000:.0f} ms (goal < {GOAL_SEC * 1000:.0f} ms) [{verdict}]; "
          f"srb --version alone {start * 1000:.0f} ms")


if __name__ == "__main__":
    main()
