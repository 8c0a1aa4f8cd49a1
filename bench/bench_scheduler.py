"""Benchmark: the campaign scheduler's overhead per cell vs ``srb run`` of the same cell.

One cell, the demo task with ``replay:untouched`` (a real graded run: agent phase,
collection, the ladder until Stage I stops it), is run both ways as a fresh process, in
alternation on one state directory whose images and State A are cached first:

* ``srb campaign run FILE`` of a one-cell campaign (a new campaign name each time: planning
  in the store, the scheduler, its progress, the cell's run);
* ``srb run TASK --agent replay:untouched``.

Reported per side: median wall time of the command, median time of the run itself (the
run's own ``created_at`` to ``finished_at`` in the store), and what the command added
around it; then the ratio campaign/srb run of the wall times, and the scheduler's own
overhead: what the campaign command adds around its cell's run beyond what ``srb run``
adds around the same run, as a ratio to ``srb run``'s wall time (goal <= 1.05); and the
1-minute load average.

    .venv/bin/python bench/bench_scheduler.py [-n 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from srb_tui.timestamps import ts_epoch

REPO = Path(__file__).resolve().parents[1]
TASK = "demo01-csvtab-python-to-node"
AGENT = "replay:untouched"
GOAL = 1.05


def _srb(state: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "srb_tui", "--tasks", str(REPO / "tasks"), "--state",
         str(state), *args, "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: the run scored below its goal, still a run
        raise SystemExit(f"srb {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    json.loads(done.stdout)  # one JSON document either way
    return wall


def _last_run_sec(state: Path) -> float:
    with sqlite3.connect(f"file:{state / 'srb.sqlite3'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT created_at, finished_at FROM runs ORDER BY created_at DESC"
                         " LIMIT 1").fetchone()
    if row is None or row[1] is None:
        raise SystemExit("the cell's run did not finish")
    return ts_epoch(row[1]) - ts_epoch(row[0])


def campaign_once(state: Path, folder: Path, index: int) -> tuple[float, float]:
    spec = folder / f"cell{index}.toml"
    spec.write_text(f'[campaign]\nname = "bench-cell-{index}"\ntasks = ["{TASK}"]\n'
                    'repeats = 1\nmax_parallel = 1\nretry_limit = 0\n\n'
                    f'[[config]]\nlabel = "untouched"\nagent = "{AGENT}"\n')
    wall = _srb(state, "campaign", "run", str(spec))
    return wall, _last_run_sec(state)


def run_once(state: Path) -> tuple[float, float]:
    wall = _srb(state, "run", TASK, "--agent", AGENT)
    return wall, _last_run_sec(state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="pairs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srb-bench-sched-") as tmp:
        folder = Path(tmp)
        state = folder / "state"
        run_once(state)  # images, State A and the stage images cached; not counted
        load = os.getloadavg()[0]
        camp: list[tuple[float, float]] = []
        bare: list[tuple[float, float]] = []
        for i in range(args.n):
            if i % 2:
                bare.append(run_once(state))
                camp.append(campaign_once(state, folder, i))
            else:
                camp.append(campaign_once(state, folder, i))
                bare.append(run_once(state))
        load = max(load, os.getloadavg()[0])
    print(f"one cell ({TASK} × {AGENT}, graded), {args.n} each, load average up to "
          f"{load:.2f} on {os.cpu_count()} CPUs")
    for name, rows in (("srb campaign run", camp), ("srb run", bare)):
        wall = statistics.median(r[0] for r in rows)
        inner = statistics.median(r[1] for r in rows)
        added = statistics.median(r[0] - r[1] for r in rows)
        print(f"  {name:16}: wall {wall:7.2f} s  run itself {inner:7.2f} s  added around it "
              f"{added:5.2f} s")
    bare_wall = statistics.median(r[0] for r in bare)
    ratio = statistics.median(r[0] for r in camp) / bare_wall
    # The runs' own durations vary with the machine's load far more than the scheduler
    # costs; what the scheduler adds is what the command adds around its cell's run,
    # beyond what ``srb run`` adds around the same run.
    extra = (statistics.median(r[0] - r[1] for r in camp)
             - statistics.median(r[0] - r[1] for r in bare))
    overhead = 1 + extra / bare_wall
    verdict = "met" if overhead <= GOAL else "NOT met"
    print(f"  ratio of wall times campaign/srb run = {ratio:.3f} (includes the runs' own "
          "variation)")
    print(f"  scheduler overhead per cell: {extra:+.2f} s over srb run's, "
          f"{overhead:.4f}x srb run (goal <= {GOAL}) {verdict}")


if __name__ == "__main__":
    main()
