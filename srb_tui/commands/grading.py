"""``srb eval RUN`` (re-grade a stored run) and ``srb tasks record ID`` (the identity run).

``srb eval`` grades the run's collected submission (``state/runs/<id>/submission``) against
the task's State A with the three-stage ladder, all stages or one (``--stage``), and prints
the score. ``srb tasks record`` grades State A against itself with the behavioural suite in
the verification image and refuses the task unless every module scores 1.0.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.grader.envelope import atomic_write_json
from srb_tui.runner import DockerEngine, RunnerError, RunnerPool
from srb_tui.schema import Task, TaskLoad, load_task
from srb_tui.service.catalog import load_catalog
from srb_tui.service.events import Progress, StageFinished, StatusChanged
from srb_tui.service.ladder import STAGES, LadderContext, LadderError, grade_run
from srb_tui.service.ladder_identity import IdentityResult, record_identity
from srb_tui.service.stages.common import StageFault
from srb_tui.sources import StateAError, prepare_state_a
from srb_tui.store import Store, StoreError

ENGINE_RUNS = 4


class CommandError(Exception):
    """A message for the user and the exit status to end with."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def add_eval_parser(sub: Any) -> None:
    p = sub.add_parser("eval", help="re-grade a stored run's collected submission")
    p.add_argument("run_id", metavar="RUN")
    p.add_argument(
        "--stage",
        choices=STAGES,
        help="re-grade this stage only; the others keep their stored results",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="run Stage III even when Stage I or II closed the gate (shown, not credited)",
    )
    p.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="give every adversary this budget instead of probe.toml's",
    )
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
        raise CommandError(f"no task {what}", 2)
    if load.task is None or not load.ok or load.task.evaluation is None:
        first = "; ".join(str(p) for p in load.errors[:3]) or "it does not load"
        raise CommandError(
            f"{load.task_id}: the task is not usable ({first}); run `srb tasks validate`", 2
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


async def _engine() -> DockerEngine:
    engine = DockerEngine(RunnerPool(ENGINE_RUNS))
    info = await engine.ping()
    if not info.ok:
        engine.close()
        raise CommandError(info.error or "the Docker engine does not answer")
    return engine


async def _state_a(task: Task, settings: Settings) -> Path:
    try:
        prepared = await asyncio.to_thread(
            prepare_state_a, task.dir, task.state_a, settings.cache_dir / "state-a"
        )
    except StateAError as exc:
        raise CommandError(f"{task.id}: {exc}") from exc
    return prepared.tree


# --------------------------------------------------------------------------- srb eval


async def _eval(args: argparse.Namespace, settings: Settings, out: Output) -> dict[str, Any]:
    if not settings.db_path.exists():
        raise CommandError(f"no store at {settings.db_path}; no run {args.run_id!r}", 2)
    async with await Store.open(settings.db_path) as store:
        run = await store.get_run(args.run_id)
        if run is None:
            raise CommandError(f"no run {args.run_id!r} in {settings.db_path}", 2)
        task_path = Path(run.task_path)
        if task_path.is_dir():
            load: TaskLoad | None = load_task(task_path)
        else:
            load = load_catalog(settings.task_roots).find(run.task_id)
        task = _usable_task(load, f"{run.task_id!r} (run {run.id})")
        run_dir = settings.runs_dir / run.id
        submission = run_dir / "submission"
        if not submission.is_dir():
            raise CommandError(
                f"run {run.id} has no collected submission at {submission}; nothing to grade", 2
            )
        original = await _state_a(task, settings)
        engine = await _engine()
        try:
            ctx = LadderContext(
                store=store,
                engine=engine,
                task=task,
                run_id=run.id,
                submission_dir=submission,
                original_dir=original,
                run_dir=run_dir,
                base_image=settings.base_image,
                publish=_progress_printer(out),
                adversary_budget_sec=args.budget,
            )
            envelope = await grade_run(
                ctx, stages=[args.stage] if args.stage else None, force=args.force
            )
        except LadderError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            engine.close()
    return {"run": run.id, "task": task.id, "run_dir": str(run_dir), **envelope.to_json()}


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
    try:
        doc = asyncio.run(_eval(args, settings, out))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    except (StoreError, RunnerError) as exc:
        out.error(str(exc))
        return 1
    if out.json_mode:
        out.emit_json(doc)
    else:
        _print_score(out, doc)
    return 0 if doc["valid"] else 1


# --------------------------------------------------------------------------- srb tasks record


async def _record(args: argparse.Namespace, settings: Settings, out: Output) -> IdentityResult:
    load = load_catalog(settings.task_roots).find(args.task_id)
    task = _usable_task(load, repr(args.task_id))
    original = await _state_a(task, settings)
    engine = await _engine()
    try:
        return await record_identity(
            engine, task, original, base_image=settings.base_image, publish=_progress_printer(out)
        )
    except (StageFault, RunnerError) as exc:
        raise CommandError(f"{task.id}: identity run failed: {exc}") from exc
    finally:
        engine.close()


def cmd_record(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    try:
        result = asyncio.run(_record(args, settings, out))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    doc = result.to_json()
    target = settings.state_dir / "identity" / f"{result.task_id}.json"
    atomic_write_json(target, {**doc, "envelope": result.envelope})
    doc["record"] = str(target)
    if out.json_mode:
        out.emit_json(doc)
        return 0 if result.ok else 1
    title = f"Identity run: {result.task_id} (State A vs State A)"
    table = Table(title=title, title_justify="left")
    for col in ("Module", "Weight", "Status", "Passed", "Scored", "Rate"):
        table.add_column(col)
    for m in result.modules:
        rate = float(m["rate"])
        shown = f"[green]{rate:.3f}[/]" if rate == 1.0 else f"[red]{rate:.3f}[/]"
        table.add_row(
            escape(str(m["id"])),
            f"{m['weight']:g}",
            escape(str(m["status"])),
            str(m["passed"]),
            str(m["scored"]),
            shown,
        )
    out.print(table)
    if result.ok:
        out.print(f"[green]recorded[/]: every module scores 1.0 ({escape(str(target))})")
        return 0
    out.error(
        f"{result.task_id} refused: State A does not score 1.0 against itself on "
        f"{', '.join(result.failing) or 'the suite (stage error)'}"
    )
    for note in result.envelope.get("notes", []):
        out.print(f"  [dim]{escape(str(note))}[/]")
    return 1
