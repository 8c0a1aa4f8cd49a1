"""Benchmark: the console at the paper's scale (issue 38 item 4), in a real app via Pilot.

1. Run screen, Behavioural tab, over one run with 25,000 checks in 14 modules, exactly one
   failing (the fixture's ``fail-1`` submission as Stage II records it, written through
   ``record_checks``), then over one with 2,000 failing (``fail-2000``, ~143 per module).
   Each figure runs from a key delivered as the terminal driver delivers it to the first
   frame written to the terminal that shows its result (see ``FrameClock``): ``4`` until
   the modules table is on screen (goal < 300 ms); ``down`` from the module above the
   failing one until its failing check is painted (goal < 50 ms); each module key through
   the 14 modules, median (goal < 50 ms: a key redraws one module's failing checks, not
   the 25,000 rows); with 2,000 failing, each ``down`` through a module's failing checks,
   median and worst (goal < 50 ms: scrolling repaints the rows that changed, not the
   table); and ``F`` (failing only) from the first module until the cursor is on the
   first failing check -- one key from the tab to ``m03-00241`` (goal < 50 ms). The same
   screen over 140 checks gives the fixed cost beside it.
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

from textual import events
from textual.app import App
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
FAILING_MODULE = "m03"
FAILING_AT = 240  # check m03-00241 fails, as in the fixture's fail-1


async def seed_run(settings: Settings, total: int = CHECKS, failing: int = 1) -> str:
    """One scored run of ``total`` checks in 14 modules. ``failing == 1``: check
    ``m03-00241`` fails (the fixture's ``fail-1``); else ``failing`` checks spread evenly
    over every module (the fixture's ``fail-2000``)."""
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id="scale01-csvtab-25k",
                                          task_path="tasks/scale01-csvtab-25k",
                                          agent=f"replay:fail-{failing}")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.runs.transition(run.id, status)
        per, extra = divmod(total, MODULES)
        fails_per, fails_extra = divmod(failing, MODULES)
        modules = []
        for m in range(1, MODULES + 1):
            mid = f"m{m:02d}"
            count = per + (1 if m <= extra else 0)
            checks: list[dict[str, Any]] = [{"id": f"{mid}-{k + 1:05d}", "verdict": "pass"}
                                            for k in range(count)]
            if failing == 1:
                bad = [min(FAILING_AT, count - 1)] if mid == FAILING_MODULE else []
            else:
                n = fails_per + (1 if m <= fails_extra else 0)
                bad = [k * count // n for k in range(n)]
            for k in bad:
                checks[k] = {"id": f"{mid}-{k + 1:05d}", "verdict": "fail",
                             "summary": "row differs",
                             "detail": f"expected: 'r{k:06d}\\tfault-one'\n"
                                       f"actual: 'r{k:06d}\\tFAULT-ONE'"}
            await store.grading.record_checks(run.id, "behavioural", checks, module_id=mid)
            modules.append({"id": mid, "status": "ok", "rate": (count - len(bad)) / count,
                            "passed": count - len(bad), "failed": len(bad), "scored": count})
        await store.grading.record_module_results(run.id, "behavioural", modules)
        await store.grading.record_stage_result(run.id, "behavioural", "ok", duration_sec=60.0)
        return run.id


class FrameClock:
    """Times an input to the first frame the app writes (``App._display``, the driver's
    write) in which a DataTable accepted by ``when`` was rendered: what the operator sees,
    not when Pilot finds the app idle (Pilot's ``press`` also waits for the tab
    underline's animation and for the CPU to go quiet, ~100 ms on its own)."""

    def __init__(self) -> None:
        self.event: asyncio.Event | None = None
        self.when: Callable[[DataTable[Any]], bool] = lambda _t: True
        self.seen = False
        self.at = 0.0
        clock = self
        render_lines = DataTable.render_lines
        display = App._display

        def rendered(table: DataTable[Any], crop: Any) -> Any:
            lines = render_lines(table, crop)
            if clock.event is not None and table.row_count and clock.when(table):
                clock.seen = True
            return lines

        def written(app: App[Any], screen: Any, renderable: Any) -> None:
            display(app, screen, renderable)
            if clock.event is not None and clock.seen and not clock.event.is_set():
                clock.at = time.perf_counter()  # not when the waiter wakes: other
                clock.event.set()  # widgets' messages may run first

        DataTable.render_lines = rendered  # type: ignore[method-assign,assignment]
        App._display = written  # type: ignore[method-assign,assignment]

    async def time(self, go: Callable[[], Any],
                   when: Callable[[DataTable[Any]], bool]) -> float:
        self.event, self.when, self.seen = asyncio.Event(), when, False
        began = time.perf_counter()
        go()
        await asyncio.wait_for(self.event.wait(), 30)
        took = self.at - began
        self.event = None
        return took


_CLOCK: list[FrameClock] = []


def frame_clock() -> FrameClock:
    """The one clock (it patches the classes once)."""
    if not _CLOCK:
        _CLOCK.append(FrameClock())
    return _CLOCK[0]


def send_key(app: App[Any], key: str) -> None:
    """The key as the terminal driver delivers it (what ``Pilot.press`` sends first)."""
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    assert app._driver is not None
    app._driver.send_message(event)


def cursor_on(table_id: str, row: int) -> Callable[[DataTable[Any]], bool]:
    return lambda t: t.id == table_id and t.cursor_row == row


async def settle(pilot: Any) -> None:
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def run_screen(settings: Settings, run_id: str, failing: int) -> dict[str, float]:
    clock = frame_clock()
    app = create_app(settings)
    app.run_host.recover_on_start = False
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        began = time.perf_counter()
        app.open_run(run_id)
        while not (isinstance(app.screen, RunScreen) and app.screen.detail is not None):
            await asyncio.sleep(0.002)
        await pilot.pause()  # the Log tab's paint after the detail came
        out["run screen open (detail loaded)"] = time.perf_counter() - began
        await settle(pilot)
        out["behavioural tab first paint"] = await clock.time(
            lambda: send_key(app, "4"), lambda t: t.id == "behav-modules")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        modules = screen.query_one("#behav-modules", DataTable)
        checks = screen.query_one("#behav-checks", DataTable)
        assert modules.has_focus
        target = modules.get_row_index(FAILING_MODULE)
        modules.move_cursor(row=target - 1)
        await settle(pilot)
        out["key to the failing module"] = await clock.time(
            lambda: send_key(app, "down"),
            lambda t: t.id == "behav-checks"
            and str(t.get_row_at(0)[0]).startswith(f"{FAILING_MODULE}-"))
        await settle(pilot)
        spread = failing // MODULES + (1 if target < failing % MODULES else 0)
        assert checks.row_count == (1 if failing == 1 else spread), checks.row_count
        modules.move_cursor(row=0)
        await settle(pilot)
        keys = []
        for row in range(1, MODULES):
            keys.append(await clock.time(
                lambda: send_key(app, "down"),
                cursor_on("behav-modules", row)))
            await settle(pilot)
        out["per module key (median)"] = statistics.median(keys)
        if failing > 1:  # scrolling the failing checks of one module, one key at a time
            modules.move_cursor(row=target)
            await settle(pilot)
            checks.focus()
            await settle(pilot)
            keys = []
            for row in range(1, min(checks.row_count, 60)):
                keys.append(await clock.time(
                    lambda: send_key(app, "down"),
                    cursor_on("behav-checks", row)))
                await settle(pilot)
            out["scroll key in the checks (median)"] = statistics.median(keys)
            out["scroll key in the checks (max)"] = max(keys)
        modules.focus()  # from the first module (it passes when one check fails)
        modules.move_cursor(row=0)
        await settle(pilot)
        first = f"{FAILING_MODULE}-" if failing == 1 else "m01-"  # its first failing check
        out["F to the first failing check"] = await clock.time(
            lambda: send_key(app, "F"),
            lambda t: t.id == "behav-checks" and t.has_focus and t.cursor_row == 0
            and str(t.get_row_at(0)[0]).startswith(first))
        await settle(pilot)
        assert modules.row_count == (1 if failing == 1 else MODULES), modules.row_count
        if failing == 1 and screen.detail is not None and len(screen.detail.checks) == CHECKS:
            assert str(checks.get_row_at(0)[0]) == f"{FAILING_MODULE}-{FAILING_AT + 1:05d}"
    return out


async def mode_paint(settings: Settings, mode: str) -> float:
    clock = frame_clock()
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        if mode == "runs":
            return await clock.time(lambda: app.switch_mode("runs"),
                                    lambda t: t.id == "runs-table")
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
             "key to the failing module": 0.05, "per module key (median)": 0.05,
             "scroll key in the checks (median)": 0.05, "scroll key in the checks (max)": 0.05,
             "F to the first failing check": 0.05}
    cases = [(CHECKS, 1), (140, 1), (CHECKS, 2000)]  # 140: the same screen's fixed cost
    figures: dict[tuple[int, int], dict[str, float]] = {}
    for total, failing in cases:
        with tempfile.TemporaryDirectory(prefix="srb-bench-console-") as tmp:
            settings = Settings(task_roots=(Path(tmp) / "tasks",),
                                state_dir=Path(tmp) / "state")
            run_id = asyncio.run(seed_run(settings, total, failing))
            asyncio.run(run_screen(settings, run_id, failing))  # warm imports, page cache
            rounds = [asyncio.run(run_screen(settings, run_id, failing))
                      for _ in range(args.n)]
            figures[total, failing] = {k: statistics.median(r[k] for r in rounds)
                                       for k in rounds[0]}
    print(f"Run screen, Behavioural tab, 160x45, median of {args.n} rounds; each figure is"
          " from the key to the first frame written that shows its result:")
    small = figures[140, 1]
    for total, failing in ((CHECKS, 1), (CHECKS, 2000)):
        print(f"  one run of {total:,} checks in {MODULES} modules, {failing:,} failing"
              + (" (beside it: the same run with 140 checks)" if failing == 1 else ""))
        for name, sec in figures[total, failing].items():
            line = (f"    {name:36} {sec * 1000:7.1f} ms  (goal < {goals[name] * 1000:.0f} ms)"
                    f" [{'OK' if sec < goals[name] else 'SLOW'}]")
            if failing == 1:
                line += (f"  140 checks: {small[name] * 1000:.1f} ms,"
                         f" ratio {sec / small[name]:.2f}")
            print(line)

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
