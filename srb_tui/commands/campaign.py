"""``srb campaign run|resume|status|cancel FILE|NAME``: a matrix of runs, unattended.

``run`` reads the campaign file (every problem at once), plans every cell in the store, then
schedules them; ``resume`` does the same for a stored campaign (by name, or its file): live
runs are re-attached, invalid cells re-run up to the retry limit, scored cells never.
Ctrl-C stops starting cells and leaves live runs going for ``resume``. ``status`` prints the
matrix; ``cancel`` stops a campaign's live runs and marks it cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from srb_tui.campaigns.calls import ServiceCalls
from srb_tui.campaigns.plan import Machine, Plan, plan_campaign
from srb_tui.campaigns.scheduler import Progress as CampaignProgress
from srb_tui.campaigns.scheduler import Scheduler
from srb_tui.campaigns.spec import CampaignSpec, parse_campaign, read_campaign
from srb_tui.commands.output import Output
from srb_tui.commands.run import guard, open_service
from srb_tui.config import Settings
from srb_tui.store import Store


def add_parser(sub: Any) -> None:
    p = sub.add_parser("campaign", help="plan and run a matrix of tasks × configurations")
    csub = p.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)
    for name, help_text in (("run", "plan every cell, then run them"),
                            ("resume", "re-attach live runs and run what is left"),
                            ("status", "the matrix and its counts"),
                            ("cancel", "cancel the campaign's live runs")):
        action = csub.add_parser(name, help=help_text)
        action.add_argument("target", metavar="FILE|NAME")
        action.add_argument("--json", action="store_true")
        action.set_defaults(handler=cmd_campaign, action=name)


def _problems(out: Output, spec_or_plan: CampaignSpec | Plan) -> bool:
    for problem in spec_or_plan.problems:
        out.error(str(problem))
    return bool(spec_or_plan.problems)


async def _spec(target: str, store: Store) -> CampaignSpec | None:
    path = Path(target)
    if path.is_file():
        return read_campaign(path)
    stored = await store.campaign(target)
    if stored is None:
        return None
    return parse_campaign(stored.source, stored.file or stored.id, stored.id)


def _agent_problems(calls: ServiceCalls, spec: CampaignSpec, plan: Plan) -> list[str]:
    first_task = next(iter(plan.tasks.values()), None)
    if first_task is None:
        return []
    found = []
    for config in plan.configs:
        message = calls.check_agent(config, first_task)
        if message:
            found.append(f"{spec.file} [config label={config.label}]: agent: {message}")
    return found


def _show(out: Output, progress: CampaignProgress, bar: Progress, task_id: Any) -> None:
    stopped = f" · {progress.stopped_by}" if progress.stopped_by else ""
    bar.update(task_id, total=progress.total, completed=progress.done + progress.failed,
               description=(f"done {progress.done} · running {progress.running} · failed "
                            f"{progress.failed} · retries {progress.retries} · cost "
                            f"${progress.cost:.2f}{stopped}"))


async def _run(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async with open_service(settings) as service:
        store = service.store
        spec = await _spec(args.target, store)
        if spec is None:
            out.error(f"no campaign file or stored campaign {args.target!r}")
            return 2
        if _problems(out, spec):
            return 2
        if args.action == "resume" and await store.campaign(spec.name) is None:
            out.error(f"campaign {spec.name!r} was never planned; use `srb campaign run`")
            return 2
        plan = await asyncio.to_thread(plan_campaign, spec, settings.task_roots)
        if _problems(out, plan):
            return 2
        calls = ServiceCalls(service)
        bad = _agent_problems(calls, spec, plan)
        for message in bad:
            out.error(message)
        if bad:
            return 2
        campaign, added = await store.plan_campaign(
            spec.name, file=str(Path(spec.file).resolve()) if Path(spec.file).is_file()
            else spec.file, source=spec.source, max_parallel=spec.max_parallel,
            retry_limit=spec.retry_limit, max_cost=spec.max_cost, configs=plan.configs,
            cells=plan.cells,
        )
        if not out.json_mode:
            out.err.print(f"campaign {escape(campaign.id)}: {len(plan.cells)} cells "
                          f"({added} newly planned), max_parallel {campaign.max_parallel}")
        bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                       TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                       console=out.err, disable=out.json_mode)
        with bar:
            bar_task = bar.add_task("starting", total=len(plan.cells))
            pool = await service.pool_capacity()  # a pool: its engines' CPUs and memory
            scheduler = Scheduler(
                calls, campaign, plan.tasks, adversary_budget_sec=spec.adversary_budget_sec,
                machine=Machine(*pool) if pool else None,
                budget_sec=spec.budget_sec, configs=plan.configs,
                on_progress=lambda p: _show(out, p, bar, bar_task),
            )
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signal.SIGINT, scheduler.stop)
            try:
                progress = await scheduler.run()
            finally:
                with contextlib.suppress(NotImplementedError):
                    loop.remove_signal_handler(signal.SIGINT)
        return await _status(store, campaign.id, out, progress.stopped_by)


async def _status(store: Store, name: str, out: Output, note: str | None = None) -> int:
    campaign = await store.campaign(name)
    if campaign is None:
        out.error(f"no stored campaign {name!r} in {store.path}")
        return 2
    cells = await store.cells(name)
    attempts = await store.attempts(name)
    runs = {c.run_id: await store.get_run(c.run_id) for c in cells if c.run_id}
    counts = Counter(c.state for c in cells)
    if out.json_mode:
        out.emit_json({"campaign": campaign.to_json(), "counts": dict(counts),
                       "cells": [c.to_json() for c in cells],
                       "attempts": [a.to_json() for a in attempts]})
        return 0
    table = Table(title=f"campaign {campaign.id} · {campaign.status}", title_justify="left")
    table.add_column("Task")
    labels = [c.label for c in campaign.configs]
    for label in labels:
        table.add_column(label)
    by_task: dict[str, dict[str, list[str]]] = {}
    for c in cells:
        run = runs.get(c.run_id) if c.run_id else None
        mark = c.state if run is None else (
            f"{run.score:g}" if c.state == "done" and run.score is not None else c.state)
        by_task.setdefault(c.task_id, {}).setdefault(c.config, []).append(mark)
    for task, row in by_task.items():
        table.add_row(escape(task), *(escape(" ".join(row.get(label, []))) for label in labels))
    out.print(table)
    retries = sum(1 for a in attempts if a.attempt > 1)
    out.print(" · ".join(f"{k} {v}" for k, v in sorted(counts.items()))
              + f" · attempts {len(attempts)} ({retries} retries)"
              + (f" · {escape(note)}" if note else ""))
    return 0


async def _cancel(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async with open_service(settings) as service:
        store = service.store
        spec = await _spec(args.target, store)
        name = spec.name if spec is not None else args.target
        if await store.campaign(name) is None:
            out.error(f"no stored campaign {name!r}")
            return 2
        await store.set_campaign_status(name, "cancelled")
        calls = ServiceCalls(service)
        stopped = 0
        for cell in await store.cells(name):
            if cell.state != "running" or not cell.run_id:
                continue
            run = await store.require_run(cell.run_id)
            if calls.driven_elsewhere(run):
                continue  # its scheduler sees the campaign cancelled and stops it
            await calls.cancel_stored(run.id)
            await store.end_attempt(cell, "cancelled", "cancelled", "campaign cancelled")
            stopped += 1
        if not out.json_mode:
            out.print(f"campaign {escape(name)} cancelled; {stopped} run(s) stopped here")
        return await _status(store, name, out)


def cmd_campaign(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async def body() -> int:
        if args.action in ("run", "resume"):
            return await _run(args, settings, out)
        if args.action == "cancel":
            return await _cancel(args, settings, out)
        if not settings.db_path.exists():
            out.error(f"no store at {settings.db_path}")
            return 2
        async with await Store.open(settings.db_path) as store:
            spec = await _spec(args.target, store)
            return await _status(store, spec.name if spec else args.target, out)

    return guard(body, out)
