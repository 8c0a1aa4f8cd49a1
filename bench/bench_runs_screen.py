"""Benchmark: first paint of the Runs screen over a store holding 10,000 runs.

The store is filled through its own API (``create_run``; a quarter of the runs are taken
to ``scored`` with a score.json, so stage marks and the funnel have work to do). The
figure is the time from switching to the Runs screen (what ``r`` does) in a running
console until the runs table has been painted with its first page; the goal is under one
second. The funnel over all runs is computed after the first paint; its time is printed.

    .venv/bin/python bench/bench_runs_screen.py [--runs 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from textual.widgets import DataTable

from srb_tui.config import Settings
from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.runs import RunsScreen

GOAL_SEC = 1.0
POLICY = ScoringPolicy(max_score=100.0, behavioural_points=40.0, verification_points=60.0,
                       verification_models=6, points_per_survived_model=10.0)
LINE = ("preparing", "agent", "collecting", "audit", "behavioural", "verification", "scored")


async def seed(settings: Settings, runs: int) -> None:
    async with await Store.open(settings.db_path) as store:
        for start in range(0, runs, 200):
            made = await asyncio.gather(
                *(
                    store.runs.create_run(
                        task_id=f"task{n % 7:02d}",
                        task_path=f"tasks/task{n % 7:02d}",
                        agent=("replay:reference", "untouched", "claude")[n % 3],
                        model=f"model-{n % 4}",
                    )
                    for n in range(start, min(runs, start + 200))
                )
            )
            for n, run in enumerate(made, start):
                if n % 4:
                    continue
                for status in LINE:
                    await store.runs.transition(run.id, status)
                outcomes = {f"a{k}": "broken" if (n + k) % 9 == 0 else "survived"
                            for k in range(6)}
                envelope = score_run("pass" if n % 3 else "fail", n % 5 != 0, [], outcomes,
                                     POLICY)
                await store.infra.add_event(run.id, "score", envelope.to_json())
                await store.runs.update_run(run.id, score=envelope.score, valid=envelope.valid,
                                            max_score=envelope.max_score)


def watch_paint() -> dict[str, asyncio.Event]:
    signal: dict[str, asyncio.Event] = {}
    original = DataTable.render_lines

    def render_lines(self: DataTable[Any], crop: Any) -> Any:
        lines = original(self, crop)
        event = signal.get("painted")
        if self.id == "runs-table" and self.row_count and event is not None:
            event.set()
        return lines

    DataTable.render_lines = render_lines  # type: ignore[method-assign]
    return signal


async def measure(settings: Settings) -> tuple[float, float, int]:
    signal = watch_paint()
    app = create_app(settings)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        painted = signal["painted"] = asyncio.Event()
        started = time.perf_counter()
        app.switch_mode("runs")  # what the r key does; not awaited, so nothing else is timed
        await painted.wait()
        first_paint = time.perf_counter() - started
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        while not screen.funnel_text:
            await asyncio.sleep(0.01)
        funnel = time.perf_counter() - started
        rows = screen.query_one("#runs-table", DataTable).row_count
        print("funnel:", screen.funnel_text)
    return first_paint, funnel, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srb-bench-runs-") as tmp:
        settings = Settings(task_roots=(Path(tmp) / "tasks",), state_dir=Path(tmp) / "state")
        began = time.perf_counter()
        asyncio.run(seed(settings, args.runs))
        print(f"seeded {args.runs} runs through the store API in "
              f"{time.perf_counter() - began:.1f} s")
        first_paint, funnel, rows = asyncio.run(measure(settings))
    verdict = "meets" if first_paint < GOAL_SEC else "misses"
    print(f"Runs screen first paint: {first_paint * 1000:.0f} ms with {rows} rows on the page "
          f"({verdict} the goal of < {GOAL_SEC:g} s)")
    print(f"funnel over all {args.runs} runs ready after {funnel * 1000:.0f} ms")


if __name__ == "__main__":
    main()
