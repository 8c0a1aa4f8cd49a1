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
import tempfile
from pathlib import Path

from srb_tui.config import Settings
from srb_tui.ui.app import create_app

REPO = Path(__file__).resolve().parents[1]
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
            for path in asyncio.run(shoot(settings, args.out, theme)):
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


if __name__ == "__main__":
    main()
