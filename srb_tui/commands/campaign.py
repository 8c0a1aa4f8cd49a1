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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from srb_tui.campaigns.spec import FORMAT, CampaignSpec, parse_campaign, read_campaign
from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.store.errors import StoreError

if TYPE_CHECKING:  # run, resume, cancel and validate load these (status does not)
    from rich.progress import Progress

    from srb_tui.campaigns.plan import Plan
    from srb_tui.campaigns.scheduler import Progress as CampaignProgress
    from srb_tui.store.campaign_records import CellRecord
    from srb_tui.store.records import RunRecord


def add_parser(sub: Any) -> None:
    p = sub.add_parser("campaign", help="plan and run a matrix of tasks × configurations",
                       epilog=f"campaign file format (TOML):\n{FORMAT}",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    csub = p.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)
    for name, help_text in (("validate", "check a campaign file: every problem, the cells"),
                            ("run", "plan every cell, then run them"),
                            ("resume", "re-attach live runs and run what is left"),
                            ("status", "the matrix and its counts"),
                            ("cancel", "cancel the campaign's live runs")):
        action = csub.add_parser(name, help=help_text,
                                 epilog=f"campaign file format (TOML):\n{FORMAT}"
                                 if name in ("validate", "run") else None,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        action.add_argument("target", metavar="FILE" if name == "validate" else "FILE|NAME")
        if name == "run":
            action.add_argument("--dry-run", action="store_true",
                                help="check the file and print the planned cells; nothing "
                                     "is stored or run")
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
    stored = await store.campaigns.campaign(target)
    if stored is None:
        return None
    return parse_campaign(stored.source, stored.file or stored.id, stored.id)


def _agent_problems(spec: CampaignSpec, plan: Plan) -> list[str]:
    """The check ``srb run`` makes of each configuration's agent (no engine needed)."""
    from srb_tui.campaigns.calls import config_problem
    from srb_tui.schema.reader import Source

    first_task = next(iter(plan.tasks.values()), None)
    if first_task is None:
        return []
    found = []
    where = Source(spec.file, spec.source, [])
    for index, config in enumerate(plan.configs):
        message = config_problem(config, first_task)
        if message:
            line = where.line(f"config[{index}].agent")
            found.append(f"{spec.file}{f':{line}' if line else ''} [config[{index}].agent]: "
                         f"{message} (configuration {config.label})")
    return found


def _show(out: Output, progress: CampaignProgress, bar: Progress, task_id: Any) -> None:
    stopped = f" · {progress.stopped_by}" if progress.stopped_by else ""
    bar.update(task_id, total=progress.total, completed=progress.done + progress.failed,
               description=(f"done {progress.done} · running {progress.running} · failed "
                            f"{progress.failed} · retries {progress.retries} · cost "
                            f"${progress.cost:.2f}{stopped}"))


async def _run(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from srb_tui.campaigns.calls import ServiceCalls
    from srb_tui.campaigns.plan import Machine, plan_campaign
    from srb_tui.campaigns.scheduler import Scheduler
    from srb_tui.commands.run import open_run_service

    async with open_run_service(settings) as service:
        store = service.store
        spec = await _spec(args.target, store)
        if spec is None:
            out.error(f"no campaign file or stored campaign {args.target!r}")
            return codes.NOT_FOUND
        if _problems(out, spec):
            return codes.FAILED
        if args.action == "resume" and await store.campaigns.campaign(spec.name) is None:
            out.error(f"campaign {spec.name!r} was never planned; use `srb campaign run`")
            return codes.NOT_FOUND
        plan = await asyncio.to_thread(plan_campaign, spec, settings.task_roots)
        if _problems(out, plan):
            return codes.FAILED
        calls = ServiceCalls(service)
        bad = _agent_problems(spec, plan)
        for message in bad:
            out.error(message)
        if bad:
            return codes.FAILED
        campaign, added = await store.campaigns.plan_campaign(
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


async def _cell_runs(store: Store, cells: Sequence[CellRecord]) -> dict[str, RunRecord | None]:
    """The run of every cell that has one: the runs of the campaign's tasks in one query
    (not a query per cell), any the query missed one by one."""
    wanted = {c.run_id for c in cells if c.run_id}
    tasks = sorted({c.task_id for c in cells if c.run_id})
    found: dict[str, RunRecord | None] = {
        r.id: r for r in (await store.runs.list_runs(task=tasks, limit=None) if tasks else [])
        if r.id in wanted}
    for run_id in sorted(wanted - found.keys()):
        found[run_id] = await store.runs.get_run(run_id)
    return found


async def _status(store: Store, name: str, out: Output, note: str | None = None) -> int:
    campaign = await store.campaigns.campaign(name)
    if campaign is None:
        out.error(f"no stored campaign {name!r} in {store.path}")
        return codes.NOT_FOUND
    cells = await store.campaigns.cells(name)
    attempts = await store.campaigns.attempts(name)
    counts = Counter(c.state for c in cells)
    if out.json_mode:
        out.emit_json({"campaign": campaign.to_json(), "counts": dict(counts),
                       "cells": [c.to_json() for c in cells],
                       "attempts": [a.to_json() for a in attempts]})
        return codes.OK
    runs = await _cell_runs(store, cells)
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
        table.add_row(Text(task), *(Text(" ".join(row.get(label, []))) for label in labels))
    out.print(table)
    retries = sum(1 for a in attempts if a.attempt > 1)
    out.print(" · ".join(f"{k} {v}" for k, v in sorted(counts.items()))
              + f" · attempts {len(attempts)} ({retries} retries)"
              + (f" · {escape(note)}" if note else ""))
    if len(labels) >= 2 and any(c.state == "done" for c in cells):
        out.print(f"the report (Table 3i: 95% intervals): srb report --campaign "
                  f"{escape(campaign.id)} · did one beat the other: srb report --campaign "
                  f"{escape(campaign.id)} --compare {escape(labels[0])} {escape(labels[1])}")
    return codes.OK


async def _cancel(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    from srb_tui.campaigns.calls import ServiceCalls
    from srb_tui.commands.run import open_run_service

    async with open_run_service(settings) as service:
        store = service.store
        spec = await _spec(args.target, store)
        name = spec.name if spec is not None else args.target
        if await store.campaigns.campaign(name) is None:
            out.error(f"no stored campaign {name!r}")
            return codes.NOT_FOUND
        await store.campaigns.set_campaign_status(name, "cancelled")
        calls = ServiceCalls(service)
        stopped = 0
        for cell in await store.campaigns.cells(name):
            if cell.state != "running" or not cell.run_id:
                continue
            run = await store.runs.require_run(cell.run_id)
            if calls.driven_elsewhere(run):
                continue  # its scheduler sees the campaign cancelled and stops it
            await calls.cancel_stored(run.id)
            await store.campaigns.end_attempt(cell, "cancelled", "cancelled", "campaign cancelled")
            stopped += 1
        if not out.json_mode:
            out.print(f"campaign {escape(name)} cancelled; {stopped} run(s) stopped here")
        return await _status(store, name, out)


def _check_file(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    """``validate`` and ``run --dry-run``: every problem of the file, or its planned cells.
    Neither the store nor the engine is touched."""
    from srb_tui.campaigns.plan import plan_campaign

    path = Path(args.target)
    if not path.is_file():
        out.error(f"{path}: no such campaign file")
        return codes.NOT_FOUND
    spec = read_campaign(path)
    # Every problem at once (issue 35 item 11): the file's, its task selectors' and its
    # agents', each with file:line, rather than one pass at a time.
    plan = plan_campaign(spec, settings.task_roots)
    problems = [str(p) for p in plan.problems]  # the file's own problems come first in it
    problems += _agent_problems(spec, plan)
    cells = plan.cells if plan is not None and not problems else ()
    if out.json_mode:
        out.emit_json({"file": str(path), "name": spec.name, "ok": not problems,
                       "problems": problems,
                       "configs": [c.label for c in spec.configs],
                       "cells": [{"task": c.task_id, "config": c.config, "repeat": c.repeat}
                                 for c in cells]})
        return codes.FAILED if problems else codes.OK
    for problem in problems:
        out.error(problem)
    if problems:
        out.print(f"{escape(str(path))}: {len(problems)} problem(s); nothing planned")
        return codes.FAILED
    assert plan is not None
    if args.action == "run":  # --dry-run: the cells `run` would plan
        table = Table(title=f"campaign {spec.name}: planned cells", title_justify="left")
        for col in ("Task", "Config", "Repeat"):
            table.add_column(col)
        for c in cells:
            table.add_row(escape(c.task_id), escape(c.config), str(c.repeat))
        out.print(table)
    out.print(f"campaign {escape(spec.name)}: ok, {len(cells)} cell(s) = {len(plan.tasks)} "
              f"task(s) × {len(plan.configs)} config(s) × {spec.repeats} repeat(s), "
              f"max_parallel {spec.max_parallel}")
    return codes.OK


def cmd_campaign(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if args.action == "validate" or getattr(args, "dry_run", False):
        return _check_file(args, settings, out)

    if args.action in ("run", "resume", "cancel"):
        from srb_tui.commands.run import guard

        return guard(lambda: (_cancel if args.action == "cancel" else _run)(args, settings, out),
                     out)

    async def status() -> int:  # the store alone: no run service, no engine to load
        if Path(args.target).is_file():  # a file is read: its problems are named here too
            for problem in read_campaign(Path(args.target)).problems:
                out.warn(f"{problem} (`srb campaign validate` checks the file)")
        if not settings.db_path.exists():
            out.error(f"no store at {settings.db_path}")
            return codes.NOT_FOUND
        async with await Store.open(settings.db_path) as store:
            spec = await _spec(args.target, store)
            return await _status(store, spec.name if spec else args.target, out)

    try:
        return asyncio.run(status())
    except StoreError as exc:  # as `guard` says it
        out.error(str(exc))
        return codes.INFRA
