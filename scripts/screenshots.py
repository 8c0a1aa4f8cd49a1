"""Regenerate screenshots/: one SVG per screen and state, dark and light themes.

Drives the real app (the same factory as the CLI) over the built-in tasks and the
store in --state (default: a private copy of nothing, i.e. an empty history, plus
whatever runs are in the given state directory).

    .venv/bin/python scripts/screenshots.py [--state state] [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from srb_tui.config import Settings
from srb_tui.ui.app import create_app

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the seeded run of the Run screen lives in tests/ui

from tests.ui.test_run_screen import seed_finished_run  # noqa: E402

SIZE = (140, 40)


async def shoot(settings: Settings, out: Path, theme: str) -> list[Path]:
    written: list[Path] = []
    app = create_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        name = "dark" if "dark" in theme else "light"
        written.append(Path(app.save_screenshot(str(out / f"tasks-{name}.svg"))))
        await pilot.press("/")
        await pilot.press(*"node")
        await pilot.pause()
        written.append(Path(app.save_screenshot(str(out / f"tasks-filtered-{name}.svg"))))
        await pilot.press("escape")
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        written.append(Path(app.save_screenshot(str(out / f"runs-{name}.svg"))))
        written.extend(await shoot_diff(app, pilot, out, name))
    return written


async def shoot_diff(app: Any, pilot: Any, out: Path, name: str) -> list[Path]:
    """The Diff screen over the demo's untouched and reference submissions, both layouts."""
    from srb_tui.ui.screens.diff import DiffScreen
    from srb_tui.ui.widgets.diff_tree import DiffTree
    from srb_tui.ui.widgets.diff_view import DiffView

    submissions = REPO / "tasks" / "demo01-csvtab-python-to-node" / "submissions"
    screen = DiffScreen(left=submissions / "untouched", right=submissions / "reference")
    await app.push_screen(screen)
    while not screen.tree_shown:
        await pilot.pause(0.02)
    await app.workers.wait_for_complete()
    screen.query_one(DiffTree).reveal("README.md")
    while screen.query_one(DiffView).prepared is None:
        await pilot.pause(0.02)
    await pilot.press("n")
    await pilot.pause()
    shots = [Path(app.save_screenshot(str(out / f"diff-{name}.svg")))]
    await pilot.press("u")
    await pilot.pause()
    shots.append(Path(app.save_screenshot(str(out / f"diff-split-{name}.svg"))))
    app.pop_screen()
    await pilot.pause()
    return shots


async def shoot_run(settings: Settings, out: Path, theme: str) -> list[Path]:
    """The Run screen (log, audit, behavioural) of the deterministic seeded run, and the
    launch dialog with an inline error."""
    from srb_tui.ui.screens.run import RunScreen
    from srb_tui.ui.widgets.log_view import LogView
    from tests.ui.test_run_screen import RUN_ID

    written: list[Path] = []
    name = "dark" if "dark" in theme else "light"
    app = create_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        app.screen.select_agent("command:")  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
        written.append(Path(app.save_screenshot(str(out / f"launch-{name}.svg"))))
        await pilot.press("escape")
        app.open_run(RUN_ID)
        for _ in range(400):
            screen = app.screen
            if isinstance(screen, RunScreen) and screen.detail is not None:
                log = screen.query_one("#run-log", LogView)
                if all(log.line_text(s) is not None for s in log.visible_seqs()):
                    break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        written.append(Path(app.save_screenshot(str(out / f"run-log-{name}.svg"))))
        for key, label in (("2", "audit"), ("3", "behavioural"), ("4", "verification")):
            await pilot.press(key, "down")
            await pilot.pause(0.1)
            written.append(Path(app.save_screenshot(str(out / f"run-{label}-{name}.svg"))))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--state", type=Path, default=None,
                        help="state directory whose store to show (default: empty)")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    args = parser.parse_args()
    os.chdir(REPO)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        state = args.state.resolve() if args.state else Path(tmp)
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=state)
        for theme in ("textual-dark", "textual-light"):
            shots = asyncio.run(shoot(settings, args.out, theme))
            with tempfile.TemporaryDirectory() as seeded:
                run_settings = Settings(task_roots=(REPO / "tasks",),
                                        state_dir=Path(seeded) / "state")
                seed_finished_run(run_settings)
                shots += asyncio.run(shoot_run(run_settings, args.out, theme))
            for path in shots:
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


if __name__ == "__main__":
    main()
