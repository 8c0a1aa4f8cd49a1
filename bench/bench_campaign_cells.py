"""Benchmark: a campaign of N cells (default 520) through srb's scheduler vs ``docker run``.

Issue 38 item 6. One state folder (a new temporary one), one Docker engine, one process:

1. warm-up (not counted): one ungraded run of the agent, so State A and the task's agent
   image are cached for both sides;
2. plan: a campaign file of N cells (demo01 × ``command:true`` × N repeats, max_parallel 1,
   retry_limit 0) read, planned (``plan_campaign``) and written to the store
   (``Store.campaigns.plan_campaign``), timed;
3. srb, first half: srb's real ``Scheduler`` over ``ServiceCalls`` (what ``srb campaign run``
   drives) with grading off (``grade=False``: each run stops once its submission is
   collected, as ``srb run --no-grade``), stopped (``Scheduler.stop``, what Ctrl-C does)
   once half the cells are done, right after it started the next one -- that cell is left
   in flight (its drive cancelled, its run live) unless it ends within the poll;
4. ``docker run``, first half: ``docker run --rm --network none IMAGE true`` with the same
   agent image, N/2 times, one after another (the docker CLI; the container srb's cell
   runs its agent command in, without srb);
5. srb, resume: a new ``Scheduler`` on the same campaign (what ``srb campaign resume``
   does): it reconciles the cell left in flight and runs the rest; checked afterwards: every
   cell done, exactly one attempt each, and exactly N runs in the campaign -- the resume
   redid no finished cell;
6. ``docker run``, second half.

Printed: the plan's time, srb's seconds per cell (plan + both scheduler passes over N),
``docker run``'s seconds per container, the ratio (goal <= 1.5), and the load average.

    flock /tmp/srb-engine.lock .venv/bin/python bench/bench_campaign_cells.py [--cells 520]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from srb_tui.campaigns.calls import ServiceCalls
from srb_tui.campaigns.plan import plan_campaign
from srb_tui.campaigns.scheduler import Progress, Scheduler
from srb_tui.campaigns.spec import parse_campaign
from srb_tui.commands.run import open_run_service
from srb_tui.config import Settings
from srb_tui.service.run.orchestrator import RunService
from srb_tui.service.run.run_prepare import env_image_tag
from srb_tui.store import Store

REPO = Path(__file__).resolve().parents[1]
TASK = "demo01-csvtab-python-to-node"
AGENT = "command:true"
NAME = "bench-cells"
GOAL = 1.5


def campaign_text(cells: int) -> str:
    return (f'[campaign]\nname = "{NAME}"\ntasks = ["{TASK}"]\nrepeats = {cells}\n'
            'max_parallel = 1\nretry_limit = 0\n\n'
            f'[[config]]\nlabel = "true"\nagent = "{AGENT}"\n')


def docker_runs(image: str, count: int) -> float:
    """``count`` plain ``docker run --rm`` of ``true`` in ``image``; seconds in all."""
    began = time.perf_counter()
    for _ in range(count):
        subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"],
                       check=True, capture_output=True, timeout=120)
    return time.perf_counter() - began


async def warm(service: RunService) -> None:
    run = await service.launch(str(REPO / "tasks" / TASK), AGENT)
    done = await service.drive(run.id, grade=False)
    if done.status != "collecting":
        raise SystemExit(f"warm-up run {run.id} ended {done.status}: {done.harness_error}")


async def scheduler_pass(service: RunService, store: Store, settings: Settings, text: str,
                         stop_at: int | None) -> float:
    """One ``srb campaign run``/``resume`` pass (without the CLI's progress bar); stopped
    once ``stop_at`` cells are done. Seconds it took."""
    spec = parse_campaign(text, "bench-cells.toml")
    plan = plan_campaign(spec, settings.task_roots)
    campaign = await store.campaigns.campaign(NAME)
    assert campaign is not None
    scheduler: Scheduler

    loop = asyncio.get_running_loop()

    def on_progress(progress: Progress) -> None:
        # Stopped as Ctrl-C stops ``srb campaign run`` (``Scheduler.stop``), but only once
        # the pass has started its next cell: that cell is left in flight for the resume.
        if stop_at is not None and progress.done >= stop_at:
            loop.call_soon(scheduler.stop)

    scheduler = Scheduler(ServiceCalls(service), campaign, plan.tasks, configs=plan.configs,
                          on_progress=on_progress, grade=False)
    began = time.perf_counter()
    await scheduler.run()
    return time.perf_counter() - began


@dataclass
class Figures:
    cells: int
    image: str
    load: float
    planned: float  # seconds
    first: float
    second: float
    done_first: int
    in_flight: int
    docker: float
    runs: int
    attempts: int

    @property
    def srb_cell(self) -> float:
        return (self.planned + self.first + self.second) / self.cells

    @property
    def docker_cell(self) -> float:
        return self.docker / self.cells


async def measure(n: int) -> Figures:
    """Plan, run (stopped half-way), resume and compare; raises SystemExit when the resume
    redid a finished cell or left one undone."""
    half = n // 2
    text = campaign_text(n)
    with tempfile.TemporaryDirectory(prefix="srb-bench-cells-") as tmp:
        settings = Settings(task_roots=(REPO / "tasks",), state_dir=Path(tmp) / "state")
        async with open_run_service(settings) as service:
            store = service.store
            await warm(service)
            image = env_image_tag(TASK)
            docker_runs(image, 2)  # the image's layers in the page cache for docker too
            load = os.getloadavg()[0]

            began = time.perf_counter()
            spec = parse_campaign(text, "bench-cells.toml")
            plan = await asyncio.to_thread(plan_campaign, spec, settings.task_roots)
            assert not plan.problems, plan.problems
            await store.campaigns.plan_campaign(NAME, file=spec.file, source=spec.source,
                                                max_parallel=1, retry_limit=0, max_cost=None,
                                                configs=plan.configs, cells=plan.cells)
            planned = time.perf_counter() - began

            first = await scheduler_pass(service, store, settings, text, stop_at=half)
            after_first = await store.campaigns.cells(NAME)
            done_first = sum(c.state == "done" for c in after_first)
            in_flight = sum(c.state == "running" for c in after_first)
            docker = docker_runs(image, half)
            second = await scheduler_pass(service, store, settings, text, stop_at=None)
            docker += docker_runs(image, n - half)
            load = max(load, os.getloadavg()[0])

            cells = await store.campaigns.cells(NAME)
            runs = await store.runs.list_runs(batch=NAME, limit=None)
            attempts = await store.campaigns.attempts(NAME)
    states = {c.state for c in cells}
    if states != {"done"} or len(runs) != n or len(attempts) != n:
        raise SystemExit(f"resume check failed: cell states {states}, {len(runs)} runs and "
                         f"{len(attempts)} attempts for {n} cells")
    return Figures(n, image, load, planned, first, second, done_first, in_flight, docker,
                   len(runs), len(attempts))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=520, help="cells of the campaign")
    args = parser.parse_args()
    f = await measure(args.cells)
    n = f.cells
    ratio = f.srb_cell / f.docker_cell
    print(f"campaign of {n} cells ({TASK} × {AGENT}, grading off, max_parallel 1), "
          f"image {f.image}, load average up to {f.load:.2f} on {os.cpu_count()} CPUs")
    print(f"  plan (read, plan_campaign, store.campaigns.plan_campaign): {f.planned * 1000:.0f} ms")
    print(f"  srb scheduler: first pass {f.first:.1f} s, stopped with {f.done_first} done, "
          f"{f.in_flight} in flight; resume pass {f.second:.1f} s; afterwards {n} done, "
          f"{f.runs} runs, {f.attempts} attempts (no finished cell redone)")
    print(f"  srb per cell     : {f.srb_cell:.3f} s (plan + both passes / {n})")
    print(f"  docker run -> rm : {f.docker_cell:.3f} s per container ({n} in two halves, "
          "alternating with srb's)")
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"  ratio srb/docker run = {ratio:.2f}x (goal <= {GOAL}) {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
