"""The Nodes screen (``h`` from every screen, listed in ``?``) over real engines: the local
engine by default, and a pool of srb's engine (n1, by its socket) beside an address where
nothing listens (n2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.nodes import NodesScreen
from srb_tui.ui.widgets.keys_panel import ScreenFirstBindings
from tests.conftest import BUILTIN_TASKS, DEMO_TASK
from tests.nodes.test_pool_upkeep import pool_settings
from tests.ui.helpers import quiet_app, until


def _seed(state: Path, node: str | None) -> None:
    async def seed() -> None:
        async with await Store.open(state / "srb.sqlite3") as store:
            extra = {"node": node} if node else None
            for n in range(2):
                run = await store.runs.create_run(
                    task_id=DEMO_TASK.name, task_path=str(DEMO_TASK), agent="untouched",
                    run_id=f"r-20261205-13000{n}-dd0{n}", extra=extra)
                await store.runs.transition(run.id, "preparing")
            await store.runs.transition("r-20261205-130000-dd00", "cancelled", "test")

    asyncio.run(seed())


async def _nodes(pilot: Any, loads: int = 1) -> NodesScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, NodesScreen)
                and app.screen.loads >= loads, "the Nodes screen's engines", timeout=30)
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    return screen


def _text(widget: Static) -> str:
    return str(widget.render())


def test_the_local_engine_is_one_row_with_its_runs(state_dir: Path) -> None:
    _seed(state_dir, None)

    async def body() -> None:
        app = quiet_app(Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            screen = await _nodes(pilot)
            table = screen.query_one("#nodes-table", DataTable)
            assert [str(k.value) for k in table.rows] == ["local"]
            assert str(table.get_cell("local", "state")) == "up"
            assert table.get_cell("local", "runs") == "1/2"
            detail = _text(screen.query_one("#nodes-detail", Static))
            assert "runs of this store placed here: 2, live: 1 (r-20261205-130001-dd01)" \
                in detail
            assert "server " in detail
            assert "local: srb's one engine" in _text(screen.query_one("#nodes-summary", Static))

    asyncio.run(body())


def test_h_shows_nodes_from_every_screen_and_keys_panel_lists_it(state_dir: Path) -> None:
    _seed(state_dir, None)

    async def body() -> None:
        app = quiet_app(Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir))
        async with app.run_test(size=(120, 34)) as pilot:
            for place in ("t", "r", "m", "b"):
                await pilot.press(place)
                await pilot.press("h")
                await _nodes(pilot)
            await pilot.press("r")
            app.open_run("r-20261205-130001-dd01")  # a pushed screen over Runs
            await until(pilot, lambda: type(app.screen).__name__ == "RunScreen", "Run screen")
            await pilot.press("h")
            screen = await _nodes(pilot)
            await pilot.press("question_mark")
            await until(pilot, lambda: bool(screen.query(ScreenFirstBindings)), "keys panel")
            console = Console(width=100, record=True)
            console.print(screen.query_one(ScreenFirstBindings).render_bindings_table())
            lines = console.export_text().splitlines()
            assert any(line.split()[:1] == ["h"] and "engines (nodes)" in line
                       for line in lines), lines
            assert any("Ask every engine again" in line for line in lines), lines

    asyncio.run(body())


def test_a_pool_shows_the_dead_node_and_srbs_own_engine(tmp_path: Path) -> None:
    settings = pool_settings(tmp_path)
    _seed(settings.state_dir, "n1")

    async def body() -> None:
        app = quiet_app(settings)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            screen = await _nodes(pilot)
            table = screen.query_one("#nodes-table", DataTable)
            assert [str(k.value) for k in table.rows] == ["n1", "n2"]
            assert [str(table.get_cell(n, "state")) for n in ("n1", "n2")] == ["up", "down"]
            assert (table.get_cell("n1", "runs"), table.get_cell("n2", "runs")) == ("1/2", "0/0")
            summary = _text(screen.query_one("#nodes-summary", Static))
            assert "1 of 2 engine(s) answer" in summary
            assert "srb's engine (base image source)" in summary
            await pilot.press("down")
            await until(pilot, lambda: "n2 · tcp://127.0.0.1" in
                        _text(screen.query_one("#nodes-detail", Static)), "n2's detail")
            detail = _text(screen.query_one("#nodes-detail", Static))
            assert "does not answer" in detail and "last error: " in detail
            assert "systemctl" not in detail
            await pilot.press("ctrl+r")  # asked again: the dead node stays named, not dropped
            screen = await _nodes(pilot, loads=2)
            assert str(table.get_cell("n2", "state")) == "down"

    asyncio.run(body())
