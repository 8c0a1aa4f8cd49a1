"""``srb eval RUN`` (re-grade a stored run) and ``srb tasks record ID`` (the identity run).

``srb eval`` grades the run's collected submission (``state/runs/<id>/submission``) against
the task's State A with the three-stage ladder, all stages or one (``--stage``), and prints
the score. ``srb tasks record`` grades State A against itself with the behavioural suite in
the verification image and refuses the task unless every module scores 1.0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.schema import STAGE_NAMES, Task, TaskLoad, load_task
from srb_tui.service.app import (
    EngineUnreachable,
    IdentityFailed,
    RunnerError,
    Services,
    StateAError,
    open_service,
)
from srb_tui.service.events import Progress, StageFinished, StatusChanged, Subscription
from srb_tui.service.run.orchestrator import LaunchError
from srb_tui.store import RunNotFound, StoreError
from srb_tui.store.errors import AmbiguousRunId

if TYPE_CHECKING:  # the ladder loads when something is graded, not for every srb command
    from srb_tui.service.grading.ladder_identity import IdentityResult


class CommandError(Exception):
    """A message for the user and the exit status to end with."""

    def __init__(self, message: str, code: int = codes.FAILED) -> None:
        super().__init__(message)
        self.code = code


def add_eval_parser(sub: Any) -> None:
    p = sub.add_parser("eval", help="re-grade a stored run's collected submission")
    p.add_argument("run_id", metavar="RUN", help="a run id or a unique prefix of one")
    p.add_argument(
        "--stage",
        choices=STAGE_NAMES,
        help="re-grade this stage only; the others keep their stored results",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="run Stage III even when Stage I or II closed the gate (shown, not credited)",
    )
    p.add_argument(
        "--adversary-budget",
        dest="budget",
        type=float,
        metavar="SECONDS",
        help="give every Stage III adversary this budget instead of probe.toml's "
             "(as `srb run --adversary-budget`)",
    )
    p.add_argument("--budget", dest="old_budget", type=float, metavar="SECONDS",
                   help="deprecated name of --adversary-budget (it was never the agent's)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=cmd_eval)


def add_record_parser(tasks_sub: Any) -> None:
    p = tasks_sub.add_parser(
        "record",
        help="identity run: State A against itself must score 1.0 on every behavioural module",
    )
    p.add_argument("task_id", metavar="ID")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=cmd_record)


# --------------------------------------------------------------------------- helpers


def _usable_task(load: TaskLoad | None, what: str) -> Task:
    if load is None:
        raise CommandError(f"no task {what}", codes.NOT_FOUND)
    if load.task is None or not load.ok or load.task.evaluation is None:
        first = "; ".join(str(p) for p in load.errors[:3]) or "it does not load"
        raise CommandError(
            f"{load.task_id}: the task is not usable ({first}); run `srb tasks validate`",
            codes.FAILED,
        )
    return load.task


def _progress_printer(out: Output) -> Any:
    def publish(event: object) -> None:
        if out.json_mode:
            return
        if isinstance(event, Progress):
            out.err.print(f"[dim]{escape(event.message)}[/]")
        elif isinstance(event, StatusChanged):
            out.err.print(f"[cyan]→ {escape(event.status)}[/]")
        elif isinstance(event, StageFinished):
            out.err.print(f"[bold]{escape(event.stage)}[/]: {escape(event.status)}")

    return publish


# --------------------------------------------------------------------------- srb eval


async def _eval(args: argparse.Namespace, settings: Settings, out: Output) -> dict[str, Any]:
    from srb_tui.service.grading import ladder

    if not settings.db_path.exists():
        raise CommandError(f"no store at {settings.db_path}; no run {args.run_id!r}",
                           codes.NOT_FOUND)
    async with open_service(settings) as services:
        store = await services.store()
        try:
            run_id = await store.runs.resolve_run_id(args.run_id)  # a unique prefix will do
        except AmbiguousRunId as exc:
            raise CommandError(str(exc), codes.USAGE) from exc
        except RunNotFound:
            run_id = args.run_id
        run = await store.runs.get_run(run_id)
        if run is None:
            raise CommandError(f"no run {args.run_id!r} in {settings.db_path}",
                               codes.NOT_FOUND)
        task_path = Path(run.task_path)
        if task_path.is_dir():
            load: TaskLoad | None = load_task(task_path)
        else:
            load = services.catalog.find(run.task_id)
        task = _usable_task(load, f"{run.task_id!r} (run {run.id})")
        submission = settings.submission_dir(run.id)
        if not submission.is_dir():
            raise CommandError(
                f"run {run.id} has no collected submission at {submission}; nothing to grade",
                codes.NOT_FOUND,
            )
        try:
            service = await services.runs()
        except EngineUnreachable as exc:
            raise CommandError(str(exc), codes.INFRA) from exc
        async with _printing(services, run.id, out):
            try:
                graded = await service.regrade(
                    run.id, [args.stage] if args.stage else None, force=args.force,
                    adversary_budget_sec=args.budget,
                )
            except (ladder.LadderError, LaunchError) as exc:
                raise CommandError(str(exc), codes.INFRA) from exc
            except StateAError as exc:
                raise CommandError(f"{task.id}: {exc}", codes.INFRA) from exc
    return {"run": run.id, "task": task.id, "run_dir": str(settings.run_dir(run.id)),
            **graded.envelope.to_json()}


@contextlib.asynccontextmanager
async def _printing(services: Services, run_id: str, out: Output) -> AsyncIterator[None]:
    """Print the service's progress events for ``run_id`` while the body runs (subscribed
    before the body starts, so nothing is missed)."""
    printer = _progress_printer(out)

    async def follow(queue: Subscription) -> None:
        while True:
            event = await queue.get()
            if event.run_id == run_id:
                printer(event)

    async with services.bus.subscribe() as queue:
        listener = asyncio.create_task(follow(queue))
        try:
            yield
        finally:
            listener.cancel()
            while not queue.empty():  # what was published after the last wake-up
                event = queue.get_nowait()
                if event.run_id == run_id:
                    printer(event)


def _print_score(out: Output, doc: dict[str, Any]) -> None:
    score = "—" if doc["score"] is None else f"{doc['score']:g} / {doc['max_score']:g}"
    valid = "[green]valid[/]" if doc["valid"] else "[red]invalid[/]"
    out.print(f"[bold]{escape(doc['run'])}[/]  {escape(doc['task'])}  score {score}  {valid}")
    out.print(f"  Stage I (audit): {escape(str(doc['audit_gate']))}")
    beh = doc["behavioural"]
    credit = "credited" if beh.get("credited") else "uncredited"
    rates = ", ".join(f"{m['id']} {m['rate']:.2f}" for m in beh.get("modules", []))
    out.print(
        f"  Stage II (behavioural): complete={beh.get('complete')} rate={beh.get('rate')} "
        f"({credit}) {escape(rates)}"
    )
    ver = doc["verification"]
    if ver.get("ran"):
        out.print(
            f"  Stage III (verification): {ver['models_survived']} of {ver['models_total']} "
            f"survived, {len(ver.get('breaks', []))} broke it"
        )
    elif "uncredited" in ver:
        un = ver["uncredited"]
        out.print(
            f"  Stage III (verification, forced, uncredited): {un['models_survived']} survived"
        )
    else:
        out.print("  Stage III (verification): not run")
    for key in ("blocked_by", "harness_error"):
        if doc.get(key):
            out.print(f"  {key}: {escape(str(doc[key]))}")
    for note in doc.get("notes", []):
        out.print(f"  [dim]{escape(str(note))}[/]")


def cmd_eval(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if args.old_budget is not None:
        out.warn("`srb eval --budget` is deprecated: it is the adversaries' budget; "
                 "use --adversary-budget")
        if args.budget is None:
            args.budget = args.old_budget
    try:
        doc = asyncio.run(_eval(args, settings, out))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    except (StoreError, RunnerError) as exc:
        out.error(str(exc))
        return codes.INFRA
    if out.json_mode:
        out.emit_json(doc)
    else:
        _print_score(out, doc)
    return codes.OK if doc["valid"] else codes.INFRA


# --------------------------------------------------------------------------- srb tasks record


async def _record(
    args: argparse.Namespace, settings: Settings, out: Output
) -> tuple[IdentityResult, Path]:
    async with open_service(settings) as services:
        task = _usable_task(services.catalog.find(args.task_id), repr(args.task_id))
        try:
            return await services.record_identity(task, publish=_progress_printer(out))
        except IdentityFailed as exc:
            raise CommandError(str(exc)) from exc
        except EngineUnreachable as exc:
            raise CommandError(str(exc), codes.INFRA) from exc


def cmd_record(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    try:
        result, target = asyncio.run(_record(args, settings, out))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    doc = result.to_json()
    doc["record"] = str(target)
    if out.json_mode:
        out.emit_json(doc)
        return codes.OK if result.ok else codes.FAILED
    title = f"Identity run: {result.task_id} (State A vs State A)"
    table = Table(title=title, title_justify="left")
    for col in ("Module", "Weight", "Status", "Passed", "Scored", "Rate", "Checked"):
        table.add_column(col)
    for m in result.modules:
        rate = float(m["rate"])
        good = "green" if m.get("passed_identity") else ("red" if m.get("required") else "dim")
        table.add_row(
            escape(str(m["id"])),
            f"{m['weight']:g}",
            escape(str(m["status"])),
            str(m["passed"]),
            str(m["scored"]),
            f"[{good}]{rate:.3f}[/]",
            escape(str(m.get("checked", ""))),
        )
    out.print(table)
    where = ("State A mounted as the original (/opt/original)" if result.reference
             else "State A withheld as the original ([stages.behavioural] reference = false)")
    out.print(f"[dim]{where}[/]")
    if result.boundary:
        out.print(f"[yellow]{escape(result.boundary)}[/]")
    if result.ok:
        out.print(f"[green]recorded[/]: State A fails no scored check ({escape(str(target))})")
        return codes.OK
    out.error(
        f"{result.task_id} refused: State A fails scored checks against itself on "
        f"{', '.join(result.failing) or 'the suite (stage error)'}"
    )
    for note in result.envelope.get("notes", []):
        out.print(f"  [dim]{escape(str(note))}[/]")
    return codes.FAILED
