"""Benchmark: time to first paint of the Diff screen against ``git diff --no-index --stat``.

Two trees of ``--files`` text files (100 per folder) are written to a temporary folder; the
submission side has ``--changed`` files edited (half keep their size, so their bytes must be
read), ``--added`` new files and ``--removed`` files gone. srb's figure is the time from
pushing the Diff screen (in a running console under Pilot) until its file tree is shown and
painted; git's is the wall time of ``git diff --no-index --stat A B``. Each is measured
``--repeat`` times after a warm-up (page cache warm for both) and the medians are compared.

    .venv/bin/python bench/bench_diff.py [--files 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from srb_tui.config import Settings
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.diff import DiffScreen
from srb_tui.ui.widgets.diff_tree import DiffTree

GOAL_RATIO = 1.5


def _body(rng: random.Random, n: int) -> str:
    lines = [f"def function_{n}_{i}(x):\n    return x * {rng.randint(1, 999)}\n"
             for i in range(rng.randint(10, 60))]
    return "".join(lines)


def make_trees(root: Path, files: int, changed: int, added: int, removed: int) -> tuple[Path, Path]:
    rng = random.Random(7)
    left, right = root / "state-a", root / "submission"
    names = [f"pkg{n // 100:03d}/module_{n:05d}.py" for n in range(files)]
    for rel in names:
        text = _body(rng, len(rel))
        for side in (left, right):
            path = side / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    picks = rng.sample(names, changed + removed)
    for index, rel in enumerate(picks[:changed]):
        path = right / rel
        text = path.read_text(encoding="utf-8")
        if index % 2:  # same size, different bytes
            text = text.replace("return x", "return y", 1)
        else:
            text += "\n# edited by the agent\n"
        path.write_text(text, encoding="utf-8")
    for rel in picks[changed:]:
        (right / rel).unlink()
    for n in range(added):
        path = right / f"lib{n // 100:03d}/module_{n:05d}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"export function f{n}(x) {{\n  return x + {n};\n}}\n", encoding="utf-8")
    return left, right


def time_git(left: Path, right: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        ["git", "diff", "--no-index", "--stat", str(left), str(right)],
        capture_output=True, check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"git diff failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def watch_first_paint() -> dict[str, asyncio.Event]:
    """Make DiffTree signal the first time it renders lines with files in it.

    Waiting on an event (rather than polling) keeps the benchmark from waking the event
    loop while the comparison runs in its worker thread.
    """
    signal: dict[str, asyncio.Event] = {}
    original = DiffTree.render_lines

    def render_lines(self: DiffTree, crop: Any) -> Any:
        lines = original(self, crop)
        event = signal.get("painted")
        if self.shown_files and event is not None and not event.is_set():
            event.set()
        return lines

    DiffTree.render_lines = render_lines  # type: ignore[method-assign]
    return signal


async def time_srb(settings: Settings, left: Path, right: Path, repeat: int) -> list[float]:
    app = create_app(settings)
    signal = watch_first_paint()
    times: list[float] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        for _ in range(repeat + 1):  # the first is the warm-up
            screen = DiffScreen(left=left, right=right)
            painted = signal["painted"] = asyncio.Event()
            started = time.perf_counter()
            await app.push_screen(screen)
            await painted.wait()
            times.append(time.perf_counter() - started)
            assert screen.tree_shown
            await app.workers.wait_for_complete()
            app.pop_screen()
            await pilot.pause()
    return times[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=300)
    parser.add_argument("--added", type=int, default=200)
    parser.add_argument("--removed", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("git") is None:
        raise SystemExit("git is not installed")
    with tempfile.TemporaryDirectory(prefix="srb-bench-diff-") as tmp:
        root = Path(tmp)
        left, right = make_trees(root, args.files, args.changed, args.added, args.removed)
        settings = Settings(task_roots=(root,), state_dir=root / "state")
        time_git(left, right)  # warm-up
        git = [time_git(left, right) for _ in range(args.repeat)]
        srb = asyncio.run(time_srb(settings, left, right, args.repeat))
    git_median, srb_median = statistics.median(git), statistics.median(srb)
    ratio = srb_median / git_median
    print(f"trees: {args.files} files, {args.changed} changed, {args.added} added, "
          f"{args.removed} removed")
    print(f"git diff --no-index --stat: median {git_median * 1000:.0f} ms "
          f"(runs: {', '.join(f'{t * 1000:.0f}' for t in git)})")
    print(f"srb diff screen first paint: median {srb_median * 1000:.0f} ms "
          f"(runs: {', '.join(f'{t * 1000:.0f}' for t in srb)})")
    verdict = "meets" if ratio <= GOAL_RATIO else "misses"
    print(f"ratio srb/git: {ratio:.2f}x ({verdict} the goal of <= {GOAL_RATIO}x)")


if __name__ == "__main__":
    main()
