"""Regenerate screenshots/: one SVG per screen and state, dark and light themes, from real runs.

First it runs the built-in demo task for real (Docker, the three stages) into a private
state directory, as a small campaign (``srb campaign run``: replay:reference, replay:subtle,
replay:wrong and untouched, one run each, 20 s Stage III budgets; a few minutes) — unless
--state names a directory that already holds runs. Then it drives the console (the same
factory as the CLI) over that store and saves, each as ``<screen>-dark.svg`` and
``<screen>-light.svg``:

tasks, tasks-filtered, launch, runs, run-log, run-audit, run-behavioural, run-verification,
run-score, run-transcript, diff, diff-split, counterexamples, campaign, reports, nodes,
strength.

    export DOCKER_HOST=unix:///var/run/docker.sock   # the engine to run the demo on
    .venv/bin/python scripts/screenshots.py [--state DIR] [--out screenshots]

``--size 80x24 --text`` walks the same screens at another terminal size and writes each as
plain text (``<screen>-<W>x<H>.txt``, the dark theme only): the walk of every screen at
80×24 and 100×32 that checks nothing is cut, trapped or stale.

Keep the state directory (``--state /tmp/shots``) to shoot again without re-running: the
runs are made only when DIR has no store yet. Every screen is waited for by a condition
with a deadline; a screen that does not come up stops the script naming it (nothing is
saved half-drawn). The replayed agents keep no transcript, so run-transcript shows the
tab's own explanation of that.
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
import time
from collections.abc import Callable
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


STRENGTH = ["tasks", "strength", "demo01-csvtab-python-to-node", "--mutants", "8",
            "--seed", "1", "--budget", "20"]


def make_strength(state: Path) -> None:
    """A real strength campaign of the demo task (Docker: Stage II of 8 mutants, the panel
    on the survivors) for the Strength screen, when the store holds none."""
    con = sqlite3.connect(state / "srb.sqlite3")
    try:
        have = con.execute("select count(*) from sqlite_master where name = "
                           "'strength_campaigns'").fetchone()[0] and \
            con.execute("select count(*) from strength_campaigns").fetchone()[0]
    finally:
        con.close()
    if have:
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    print("running a strength campaign of the demo task (a few minutes) …", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "srb_tui", "--tasks", str(REPO / "tasks"),
                    "--state", str(state), *STRENGTH, "--json"],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)


def run_ids(state: Path) -> dict[str, str]:
    con = sqlite3.connect(state / "srb.sqlite3")
    try:
        rows = con.execute("select id, agent from runs where status = 'scored'"
                           " order by created_at")
        return {agent: rid for rid, agent in rows}  # the newest scored run of each agent
    finally:
        con.close()


async def settle(app: Any, pilot: Any, pause: float = 0.2) -> None:
    """Let one-shot workers finish; screens with long-lived workers (the Run screen follows
    the bus) get a plain pause instead."""
    await pilot.pause()
    with contextlib.suppress(TimeoutError, WorkerCancelled):
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=3)
    await pilot.pause(pause)


async def until(pilot: Any, cond: Callable[[], object], what: str, timeout: float = 20.0) -> None:
    """Let the app run until ``cond()`` holds; stop the script naming ``what`` if it never
    does (a screenshot of a screen still loading is worse than none)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: {what} did not appear within {timeout:g} s")
        await pilot.pause(0.05)


async def shoot(settings: Settings, out: Path, theme: str, subtle: str,
                size: tuple[int, int] = SIZE, text: bool = False) -> list[Path]:
    from srb_tui.ui.screens.campaign import CampaignScreen
    from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
    from srb_tui.ui.screens.diff import DiffScreen
    from srb_tui.ui.screens.nodes import NodesScreen
    from srb_tui.ui.screens.reports import ReportsScreen
    from srb_tui.ui.screens.run import RunScreen
    from srb_tui.ui.screens.runs import RunsScreen
    from srb_tui.ui.screens.strength import StrengthScreen
    from srb_tui.ui.widgets.diff_tree import DiffTree
    from srb_tui.ui.widgets.diff_view import DiffView

    name = "dark" if "dark" in theme else "light"
    shots: list[Path] = []

    def save(screen: str) -> None:
        if text:  # the screen as the terminal shows it, one line per row
            path = out / f"{screen}-{size[0]}x{size[1]}.txt"
            rows = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]
            path.write_text("\n".join(rows) + "\n", encoding="utf-8")
            shots.append(path)
            return
        shots.append(Path(app.save_screenshot(str(out / f"{screen}-{name}.svg"))))

    app = create_app(settings)
    app.run_host.recover_on_start = False  # a picture of the store, not a resumed run
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        await settle(app, pilot)
        save("tasks")
        await pilot.press("/", *"node")
        await settle(app, pilot)
        save("tasks-filtered")
        await pilot.press("escape", "l")
        await until(pilot, lambda: type(app.screen).__name__ == "LaunchDialog", "launch")
        await settle(app, pilot)
        save("launch")
        await pilot.press("escape", "r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen)
                    and app.screen.runs_page is not None, "the Runs screen")
        await settle(app, pilot, 0.5)
        save("runs")

        app.push_screen(RunScreen(app.run_host, subtle))
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the Run screen")
        await settle(app, pilot, 0.3)
        save("run-log")
        for key, label in (("3", "audit"), ("4", "behavioural"), ("5", "verification"),
                           ("6", "score"), ("2", "transcript")):
            await pilot.press(key)
            await settle(app, pilot)
            save(f"run-{label}")
        app.pop_screen()

        diff = DiffScreen(subtle, settings=app.settings)
        await app.push_screen(diff)
        await until(pilot, lambda: diff.tree_shown, "the diff's file tree", 30)
        await settle(app, pilot)
        diff.query_one(DiffTree).reveal("lib/render.js")
        await until(pilot, lambda: diff.query_one(DiffView).prepared is not None,
                    "the diff of lib/render.js")
        await pilot.press("n")
        await settle(app, pilot)
        save("diff")
        await pilot.press("u")
        await settle(app, pilot)
        save("diff-split")
        app.pop_screen()

        app.push_screen(CounterexamplesScreen(app.run_host, subtle))
        await settle(app, pilot, 0.5)
        save("counterexamples")
        app.pop_screen()

        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen)
                    and app.screen.matrix is not None, "the Campaign matrix", 60)
        await settle(app, pilot, 0.3)
        save("campaign")
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ReportsScreen)
                    and app.screen.report is not None, "the report", 60)
        await settle(app, pilot, 0.3)
        save("reports")
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, NodesScreen)
                    and app.screen.loads >= 1, "the Nodes screen's engines", 30)
        await settle(app, pilot, 0.3)
        save("nodes")
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, StrengthScreen)
                    and app.screen.loads >= 1 and bool(app.screen.lines),
                    "the Strength screen's mutants", 30)
        await pilot.press("enter")
        await settle(app, pilot, 0.3)
        save("strength")
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path, default=None,
                        help="a state directory that already holds runs of the demo task")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", metavar="WxH",
                        help=f"terminal size (default {SIZE[0]}x{SIZE[1]})")
    parser.add_argument("--text", action="store_true",
                        help="write each screen as plain text instead of SVG (dark only)")
    args = parser.parse_args()
    try:
        width, height = (int(n) for n in args.size.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--size {args.size}: want WIDTHxHEIGHT, e.g. 80x24") from None
    os.chdir(REPO)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        state = args.state.resolve() if args.state else Path(tmp) / "state"
        if not (state / "srb.sqlite3").exists():
            make_runs(state)
        make_strength(state)
        ids = run_ids(state)
        subtle = ids.get("replay:subtle")
        if subtle is None:
            raise SystemExit(f"{state}: no replay:subtle run to show")
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=state)
        themes = ("textual-dark",) if args.text else ("textual-dark", "textual-light")
        for theme in themes:
            for path in asyncio.run(shoot(settings, args.out, theme, subtle, (width, height),
                                          args.text)):
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


if __name__ == "__main__":
    main()
