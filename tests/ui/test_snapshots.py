"""SVG snapshots of every screen of the console (pytest-textual-snapshot).

Update after an intended change with ``pytest tests/ui/test_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from tests.conftest import BUILTIN_TASKS, REPO

SIZE = (120, 34)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths on screen are shown relative to the working directory."""
    monkeypatch.chdir(REPO)


def _settings(state: Path) -> Settings:
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_tasks_screen(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(create_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=_settle)


def test_tasks_screen_light_theme(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(create_app(_settings(state_dir)), press=["ctrl+t"],
                        terminal_size=SIZE, run_before=_settle)


def test_tasks_screen_filter_without_match(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(create_app(_settings(state_dir)), press=["/", *"zzz"],
                        terminal_size=SIZE, run_before=_settle)


def test_runs_screen_empty(snap_compare: Any, state_dir: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(state_dir.parent)  # the store path shows as state/srb.sqlite3
    assert snap_compare(create_app(_settings(state_dir)), press=["r"], terminal_size=SIZE,
                        run_before=_settle)


def test_runs_screen_with_runs(snap_compare: Any, state_dir: Path) -> None:
    async def seed() -> None:
        async with await Store.open(state_dir / "srb.sqlite3") as store:
            for n, agent in enumerate(("replay:reference", "untouched", "replay:subtle")):
                run = await store.create_run(
                    task_id="demo01-csvtab-python-to-node",
                    task_path="tasks/demo01-csvtab-python-to-node", agent=agent,
                    budget_sec=1800.0, run_id=f"r-20261129-12000{n}-ab0{n}",
                )
                await store.transition(run.id, "preparing")
                await store.update_run(run.id, started_at=f"2026-11-29T12:00:0{n}.000000Z")
            await store.transition("r-20261129-120001-ab01", "cancelled", "operator")

    asyncio.run(seed())

    async def before(pilot: Any) -> None:
        await pilot.press("r")
        await _settle(pilot)

    assert snap_compare(create_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=before)
