"""Benchmark: the console at the paper's scale (issue 38 item 4), in a real app via Pilot.

1. Run screen, Behavioural tab, over one run with 25,000 checks in 14 modules, exactly one
   failing (the fixture's ``fail-1`` submission as Stage II records it, written through
   ``record_checks``). Timed: from ``open_run`` to the modules table painted on the
   Behavioural tab (goal < 300 ms); moving to the failing module's row -- the one-key
   filter to that module's failing checks -- until its failing check is painted (goal
   < 50 ms); and each module key (``down``) through the 14 modules, median (goal < 50 ms:
   a key redraws one module's failing checks, not the 25,000 rows).
2. Runs and Reports screens over the generated 520-run store (bench/scale_store.py, ~3.1 M
   check rows): from switching mode (``r`` / the reports key) to the first paint (goal
   < 1 s). For scale, the raw floor: ``load_run_rows`` alone, without Textual.

    .venv/bin/python bench/bench_console_scale.py [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_store

from srb_tui.config import Settings
from srb_tui.service.views.history import load_run_rows
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.reports import ReportsScreen
from srb_tui.ui.screens.run import RunScreen

CHECKS = 25_000
MODULES = 14
FAILING_MODULE = "m07"


async def seed_run(settings: Settings, total: int = CHECKS) -> str:
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(settings.db_path) as store:
        run = await store.create_run(task_id="scale01-csvtab-25k",
                                     task_path="tasks/scale01-csvtab-25k",
                                     agent="replay:fail-1")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.transition(run.id, status)
        per, extra = divmod(total, MODULES)
        modules = []
        for m in range(1, MODULES + 1):
            mid = f"m{m:02d}"
            count = per + (1 if m <= extra else 0)
            checks: list[dict[str, Any]] = [{"id": f"{mid}-{k + 1:05d}", "verdict": "pass"}
                                            for k in range(count)]
            failed = 0
            if mid == FAILING_MODULE:
                checks[min(1234, count - 1)] = {"id": f"{mid}-01235", "verdict": "fail",
                                "summary": "row differs",
                                "detail": "expected: 'r012345\\tfault-one'\n"
                                          "actual: 'r012345\\tFAULT-ONE'"}
                failed = 1
            await store.record_checks(run.id, "behavioural", checks, module_id=mid)
            modules.append({"id": mid, "status": "ok", "rate": (count - failed) / count,
                            "passed": count - failed, "failed": failed, "scored": count})
        await store.record_module_results(run.id, "behavioural", modules)
        await store.record_stage_result(run.id, "behavioural", "ok", duration_sec=60.0)
        return run.id


def watch(ids: set[str]) -> dict[str, Callable[[str], bool] | asyncio.Event]:
    """Sets ``signal['painted']`` when a DataTable with one of ``ids`` paints rows and
    ``signal['when']`` (if any) accepts it."""
    signal: dict[str, Any] = {}
    original = DataTable.render_lines

    def render_lines(self: DataTable[Any], crop: Any) -> Any:
        lines = original(self, crop)
        event = signal.get("painted")
        if self.id in ids and self.row_count and event is not None:
            accept = signal.get("when")
            if accept is None or accept(self):
                event.set()
        return lines

    DataTable.render_lines = render_lines  # type: ignore[method-assign]
    return signal


async def wait_paint(signal: dict[str, Any], go: Callable[[], Any],
                     when: Callable[[DataTable[Any]], bool] | None = None) -> float:
    painted = signal["painted"] = asyncio.Event()
    signal["when"] = when
    began = time.perf_counter()
    result = go()
    if asyncio.iscoroutine(result):
        await result
    await asyncio.wait_for(painted.wait(), 30)
    took = time.perf_counter() - began
    signal.pop("painted")
    return took


async def run_screen(settings: Settings, run_id: str) -> dict[str, float]:
    signal = watch({"behav-modules", "behav-checks", "runs-table"})
    app = create_app(settings)
    app.run_host.recover_on_start = False
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()

        async def open_screen() -> None:
            app.open_run(run_id)
            while not (isinstance(app.screen, RunScreen) and app.screen.detail is not None):
                await asyncio.sleep(0.002)

        began = time.perf_counter()
        await open_screen()
        await pilot.pause()  # the Log tab's paint after the detail came
        out["run screen open (detail loaded)"] = time.perf_counter() - began
        out["behavioural tab first paint"] = await wait_paint(
            signal, lambda: pilot.press("4"), lambda t: t.id == "behav-modules")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        modules = screen.query_one("#behav-modules", DataTable)
        modules.focus()
        target = modules.get_row_index(FAILING_MODULE)
        checks = screen.query_one("#behav-checks", DataTable)

        def to_failing() -> None:
            modules.move_cursor(row=target)

        out["filter to the failing module"] = await wait_paint(
            signal, to_failing,
            lambda t: t.id == "behav-checks"
            and str(t.get_row_at(0)[0]) == f"{FAILING_MODULE}-01235")
        detail = str(screen.query_one("#behav-check-detail", Static).render())
        assert checks.row_count == 1, checks.row_count
        del detail
        modules.move_cursor(row=0)
        await pilot.pause()
        keys = []
        for _ in range(MODULES - 1):
            began = time.perf_counter()
            await pilot.press("down")
            keys.append(time.perf_counter() - began)
        out["per module key (median)"] = statistics.median(keys)
    return out


async def mode_paint(settings: Settings, mode: str) -> float:
    signal = watch({"runs-table"})
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        if mode == "runs":
            return await wait_paint(signal, lambda: app.switch_mode("runs"))
        began = time.perf_counter()
        app.switch_mode("reports")
        while True:
            screen = app.screen
            if isinstance(screen, ReportsScreen) and screen.report is not None and str(
                    screen.query_one("#reports-tables", Static).render()):
                break
            await asyncio.sleep(0.002)
        return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=scale_store.DEFAULT)
    parser.add_argument("-n", type=int, default=3, help="rounds (medians are printed)")
    args = parser.parse_args()
    goals = {"run screen open (detail loaded)": 1.0, "behavioural tab first paint": 0.3,
             "filter to the failing module": 0.05, "per module key (median)": 0.05}
    figures: dict[int, dict[str, float]] = {}
    for total in (CHECKS, 140):  # the same screen over a small suite: the fixed cost
        with tempfile.TemporaryDirectory(prefix="srb-bench-console-") as tmp:
            settings = Settings(task_roots=(Path(tmp) / "tasks",),
                                state_dir=Path(tmp) / "state")
            run_id = asyncio.run(seed_run(settings, total))
            asyncio.run(run_screen(settings, run_id))  # warm imports and the page cache
            rounds = [asyncio.run(run_screen(settings, run_id)) for _ in range(args.n)]
            figures[total] = {k: statistics.median(r[k] for r in rounds) for k in goals}
    print(f"Run screen, Behavioural tab, one run of {CHECKS} checks in {MODULES} modules"
          f" (1 failing), 160x45, median of {args.n}; beside it the same run with 140 checks:")
    for name, sec in figures[CHECKS].items():
        print(f"  {name:30} {sec * 1000:7.1f} ms  (goal < {goals[name] * 1000:.0f} ms)"
              f" [{'OK' if sec < goals[name] else 'SLOW'}]  140 checks: "
              f"{figures[140][name] * 1000:.1f} ms, ratio {sec / figures[140][name]:.2f}")

    store = scale_store.ensure(args.store)
    facts = scale_store.stats(store)
    with tempfile.TemporaryDirectory(prefix="srb-bench-console-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        shutil.copy(store, state / "srb.sqlite3")
        settings = Settings(task_roots=(Path(tmp) / "tasks",), state_dir=state)
        floor_began = time.perf_counter()
        asyncio.run(load_run_rows(settings.db_path, limit=1000))
        floor = time.perf_counter() - floor_began
        print(f"over the generated store: {facts['runs']} runs, {facts['checks']:,} checks")
        for mode in ("runs", "reports"):
            asyncio.run(mode_paint(settings, mode))
            sec = statistics.median(asyncio.run(mode_paint(settings, mode)) for _ in range(3))
            print(f"  {mode.capitalize():8} screen first paint {sec * 1000:7.1f} ms "
                  f"(goal < 1000 ms) [{'OK' if sec < 1 else 'SLOW'}]")
        print(f"  raw floor: load_run_rows alone {floor * 1000:.1f} ms")


if __name__ == "__main__":
    main()
