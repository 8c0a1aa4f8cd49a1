"""Regenerate screenshots/: one SVG per screen and state, dark and light themes, from real runs.

First it runs the built-in demo task for real (Docker, the three stages) into a private
state directory — replay:reference, replay:subtle, replay:wrong and untouched, with short
Stage III budgets — unless --state names a directory that already holds runs. Then it
drives the console (the same factory as the CLI) over that store and saves:

tasks, tasks-filtered, launch, runs, run-log, run-audit, run-behavioural, run-verification,
run-score, diff, diff-split, counterexamples — each as ``<screen>-dark.svg`` and
``<screen>-light.svg``.

    .venv/bin/python scripts/screenshots.py [--state DIR] [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from textual.worker import WorkerCancelled

from srb_tui.config import Settings
from srb_tui.ui.app import create_app

REPO = Path(__file__).resolve().parents[1]
TASK = "demo01-csvtab-python-to-node"
SIZE = (140, 40)
CAMPAIGN = "screenshots"
# The demo task once per replayed submission: a small campaign, so the Campaign and Reports
# screens have a matrix and tables, and the Runs screen the four runs.
CAMPAIGN_TOML = """\
[campaign]
name = "screenshots"
tasks = ["demo01-csvtab-python-to-node"]
repeats = 1
max_parallel = 2
adversary_budget_sec = 20

[[config]]
label = "reference"
agent = "replay:reference"

[[config]]
label = "subtle"
agent = "replay:subtle"

[[config]]
label = "wrong"
agent = "replay:wrong"

[[config]]
label = "untouched"
agent = "untouched"
"""


def make_runs(state: Path) -> None:
    """Real runs of the demo task (Docker, the three stages) through `srb campaign run`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    state.mkdir(parents=True, exist_ok=True)
    spec = state / "screenshots-campaign.toml"
    spec.write_text(CAMPAIGN_TOML, encoding="utf-8")
    print("running the demo campaign (four graded runs; a few minutes) …", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "srb_tui", "--tasks", str(REPO / "tasks"), "--state",
         str(state), "campaign", "run", str(spec), "--json"],
        cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL,
    )


def run_ids(state: Path) -> dict[str, str]:
    con = sqlite3.connect(state / "srb.sqlite3")
    try:
        return {agent: rid for rid, agent in con.execute("select id, agent from runs")}
    finally:
        con.close()


async def settle(app: Any, pilot: Any, pause: float = 0.2) -> None:
    """Let one-shot workers finish; screens with long-lived workers (the Run screen follows
    the bus) get a plain pause instead."""
    await pilot.pause()
    with contextlib.suppress(TimeoutError, WorkerCancelled):
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=3)
    await pilot.pause(pause)


async def shoot(settings: Settings, out: Path, theme: str, subtle: str) -> list[Path]:
    from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
    from srb_tui.ui.screens.diff import DiffScreen
    from srb_tui.ui.screens.run import RunScreen
    from srb_tui.ui.widgets.diff_tree import DiffTree
    from srb_tui.ui.widgets.diff_view import DiffView

    name = "dark" if "dark" in theme else "light"
    shots: list[Path] = []

    def save(screen: str) -> None:
        shots.append(Path(app.save_screenshot(str(out / f"{screen}-{name}.svg"))))

    app = create_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await settle(app, pilot)
        save("tasks")
        await pilot.press("/", *"node")
        await settle(app, pilot)
        save("tasks-filtered")
        await pilot.press("escape", "l")
        await settle(app, pilot)
        save("launch")
        await pilot.press("escape", "r")
        await settle(app, pilot, 0.5)
        save("runs")

        app.push_screen(RunScreen(subtle))
        for _ in range(300):
            if isinstance(app.screen, RunScreen) and app.screen.detail is not None:
                break
            await pilot.pause(0.02)
        await settle(app, pilot, 0.3)
        save("run-log")
        for key, label in (("2", "audit"), ("3", "behavioural"), ("4", "verification"),
                           ("5", "score")):
            await pilot.press(key)
            await settle(app, pilot)
            save(f"run-{label}")
        app.pop_screen()

        diff = DiffScreen(subtle)
        await app.push_screen(diff)
        for _ in range(500):
            if diff.tree_shown:
                break
            await pilot.pause(0.02)
        await settle(app, pilot)
        diff.query_one(DiffTree).reveal("lib/render.js")
        for _ in range(300):
            if diff.query_one(DiffView).prepared is not None:
                break
            await pilot.pause(0.02)
        await pilot.press("n")
        await settle(app, pilot)
        save("diff")
        await pilot.press("u")
        await settle(app, pilot)
        save("diff-split")
        app.pop_screen()

        app.push_screen(CounterexamplesScreen(subtle))
        await settle(app, pilot, 0.5)
        save("counterexamples")
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path, default=None,
                        help="a state directory that already holds runs of the demo task")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    args = parser.parse_args()
    os.chdir(REPO)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        state = args.state.resolve() if args.state else Path(tmp) / "state"
        if not (state / "srb.sqlite3").exists():
            make_runs(state)
        ids = run_ids(state)
        subtle = ids.get("replay:subtle")
        if subtle is None:
            raise SystemExit(f"{state}: no replay:subtle run to show")
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=state)
        for theme in ("textual-dark", "textual-light"):
            for path in asyncio.run(shoot(settings, args.out, theme, subtle)):
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


if __name__ == "__main__":
    main()
