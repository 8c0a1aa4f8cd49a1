"""``srb run``, ``srb resume``, ``srb runs cancel`` and ``srb gc``: driving runs headless.

The Rich display (:mod:`.run_view`) is one subscriber of the run service's events,
exactly as the console is. Ctrl-C asks whether to leave the run going or to cancel it; a
run left going is handed to a background driver (:mod:`srb_tui.service.run.handoff`)
and goes on to its end without this process (the agent's container keeps its budget).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.commands.run_view import Display, follow
from srb_tui.config import Settings
from srb_tui.service.app import EngineUnreachable, GatewayConfigError
from srb_tui.service.app import open_service as open_core
from srb_tui.service.run.orchestrator import LaunchError, RunService, TaskInvalid, TaskNotFound
from srb_tui.store import RunNotFound, Store, StoreError
from srb_tui.store.errors import AmbiguousRunId

if TYPE_CHECKING:
    pass


def escape(text: str) -> str:
    """Rich markup escaped (Rich loads only when something is printed for people)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def add_parsers(sub: Any) -> None:
    run = sub.add_parser("run", help="run an agent on a task, collect and grade the result")
    run.add_argument("task", metavar="TASK", help="task id (or a task directory)")
    run.add_argument("--agent", required=True, metavar="SPEC",
                     help="untouched | replay:NAME|PATH | command:ARGV | claude-code:MODEL | "
                          "codex:MODEL | mini-swe-agent:MODEL")
    run.add_argument("--agent-budget", "--budget", dest="budget", type=float,
                     metavar="SECONDS",
                     help="the agent's wall-clock budget (default: the task's "
                          "[agent].timeout_sec; --budget is the old name)")
    run.add_argument("--model", help="model name recorded with the run")
    run.add_argument("--effort", help="effort level (claude-code: low|medium|high|xhigh|max; "
                     "codex: minimal|low|medium|high|xhigh)")
    run.add_argument("--client-version", metavar="VERSION",
                     help="client version instead of the task's pin / srb's default")
    run.add_argument("--max-cost", type=float, metavar="USD",
                     help="model budget of the run in USD (the gateway refuses past it)")
    run.add_argument("--max-tokens", type=int, metavar="N",
                     help="model budget of the run in tokens")
    run.add_argument("--no-grade", action="store_true",
                     help="stop after collecting the submission")
    run.add_argument("--adversary-budget", type=float, metavar="SECONDS",
                     help="override every Stage III adversary's budget (a quick look)")
    run.add_argument("--json", action="store_true",
                     help="no live display; print the run's record as one JSON document")
    run.set_defaults(handler=cmd_run)

    resume = sub.add_parser("resume", help="re-attach to runs a stopped srb left live")
    resume.add_argument("run_ids", nargs="*", metavar="ID",
                        help="only these runs (ids or unique prefixes; default: every live run)")
    resume.add_argument("--no-grade", action="store_true")
    resume.add_argument("--handed-over", action="store_true", help=argparse.SUPPRESS)
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(handler=cmd_resume)

    gcp = sub.add_parser(
        "gc", help="remove containers of finished runs, unused workspace images, dangling images")
    gcp.add_argument("--json", action="store_true")
    gcp.set_defaults(handler=cmd_gc)


def add_cancel_parser(runs_sub: Any) -> None:
    cancel = runs_sub.add_parser("cancel", help="cancel a run that is not being driven")
    cancel.add_argument("run_id", metavar="ID", help="a run id or a unique prefix of one")
    cancel.add_argument("--json", action="store_true")
    cancel.set_defaults(handler=cmd_cancel)


class Unavailable(LaunchError):
    """What a run needs (the engine, the gateway's configuration) is not there: exit INFRA."""


FAILURES: tuple[tuple[type[Exception], int, str], ...] = (
    (Unavailable, codes.INFRA, ""),
    (TaskNotFound, codes.NOT_FOUND, ""),
    (TaskInvalid, codes.FAILED, " (`srb tasks validate` lists every problem)"),
    (LaunchError, codes.USAGE, ""),
    (AmbiguousRunId, codes.USAGE, ""),
    (RunNotFound, codes.NOT_FOUND, ""),
    (StoreError, codes.INFRA, ""),
)
"""Every failure ``guard`` ends a command body with: its exit code and a hint after its
message (the first row that matches wins)."""


@contextlib.asynccontextmanager
async def open_run_service(settings: Settings) -> AsyncIterator[RunService]:
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with open_core(settings) as core:
        try:
            service = await core.runs()
        except (EngineUnreachable, GatewayConfigError) as exc:
            raise Unavailable(str(exc)) from exc
        yield service



async def _ask_leave_or_cancel(out: Output) -> str:
    if out.json_mode or not sys.stdin.isatty():
        return "leave"
    answer = await asyncio.to_thread(
        input, "\nLeave the run going in the background, or cancel it? [L/c] "
    )
    return "cancel" if answer.strip().lower().startswith("c") else "leave"


async def _drive_interruptibly(
    service: RunService, run_id: str, drive: Callable[[], Coroutine[Any, Any, Any]], out: Output
) -> str | None:
    """Drive; on Ctrl-C ask. Returns "leave" when the operator left the run going."""
    loop = asyncio.get_running_loop()
    interrupted = asyncio.Event()
    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGINT, interrupted.set)
    task = asyncio.create_task(drive())
    waiter = asyncio.create_task(interrupted.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            task.result()
            return None
        choice = await _ask_leave_or_cancel(out)
        if choice == "cancel":
            service.request_cancel(run_id)
            await task
            return None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return "leave"
    finally:
        waiter.cancel()
        with contextlib.suppress(NotImplementedError):
            loop.remove_signal_handler(signal.SIGINT)


async def _run(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async with open_run_service(settings) as service:
        run = await service.launch(args.task, args.agent, budget_sec=args.budget,
                                   model=args.model, effort=args.effort,
                                   client_version=args.client_version,
                                   max_cost_usd=args.max_cost, max_tokens=args.max_tokens)
        display = Display(run_id=run.id, task=run.task_id, agent=run.agent,
                          budget=run.budget_sec)
        live = None
        if not out.json_mode:
            from rich.live import Live

            live = Live(display.render(), console=out.err, refresh_per_second=8,
                        transient=False)
        ready = asyncio.Event()
        with live if live is not None else contextlib.nullcontext():
            follower = asyncio.create_task(follow(service, display, live, ready))
            await ready.wait()
            left = await _drive_interruptibly(
                service, run.id, lambda: service.drive(run.id, grade=not args.no_grade,
                                      adversary_budget_sec=args.adversary_budget),
                out
            )
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        if live is not None and not out.err.is_terminal:
            out.err.line()  # Rich ends a live display with a new line on terminals only
        if left == "leave":
            from srb_tui.service.run.handoff import hand_over

            handoff = hand_over(settings, run.id)
            out.err.print(f"run {run.id} goes on in the background (driver pid {handoff.pid}, "
                          f"its output in {handoff.log}); the console and `srb runs show "
                          f"{run.id}` follow it, `srb runs cancel {run.id}` stops it")
            return codes.INTERRUPTED
        return await _report(service.store, run.id, out)


async def _report(store: Store, run_id: str, out: Output) -> int:
    detail = await store.run_detail(run_id)
    run = detail.run
    if out.json_mode:
        out.emit_json(detail.to_json())
    else:
        score = "—" if run.score is None else f"{run.score:g}/{run.max_score or 100:g}"
        valid = "—" if run.valid is None else ("yes" if run.valid else "no")
        out.print(f"[bold]{escape(run.id)}[/] {escape(run.status)}: score {score}, "
                  f"valid {valid}, stop reason {escape(str(run.stop_reason))}, "
                  f"{run.submission_files} files collected")
        if run.harness_error:
            out.print(f"[red]harness error:[/] {escape(run.harness_error)}")
    return run_exit_code(run, out)


def run_exit_code(run: Any, out: Output) -> int:
    """OK for a run that was measured (whatever its score); INFRA for one that ended
    ``infra_error`` or invalid, so a script can tell a harness fault from a score."""
    if run.status == "infra_error" or run.valid is False:
        out.error(f"run {run.id} {run.status}, not measured: "
                  f"{run.harness_error or 'invalid'}")
        return codes.INFRA
    return codes.OK


def guard(coro_fn: Callable[[], Coroutine[Any, Any, int]], out: Output) -> int:
    """Run a command body; each failure one line and its exit code (see exit_codes)."""
    try:
        return asyncio.run(coro_fn())
    except tuple(kind for kind, _code, _hint in FAILURES) as exc:
        code, hint = next((c, h) for kind, c, h in FAILURES if isinstance(exc, kind))
        out.error(f"{exc}{hint}")
        return code


def cmd_run(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    return guard(lambda: _run(args, settings, out), out)


def cmd_resume(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if args.handed_over:
        from srb_tui.service.run.handoff import drive_in_background

        drive_in_background()

    async def body() -> int:
        async with open_run_service(settings) as service:
            only = ({await service.store.runs.resolve_run_id(r) for r in args.run_ids}
                    if args.run_ids else None)
            live = [r for r in await service.store.runs.live_runs()
                    if only is None or r.id in only]
            if not out.json_mode:
                out.err.print(f"{len(live)} live run(s) to resume")
            runs = await service.recover(grade=not args.no_grade, only=only)
            if out.json_mode:
                out.emit_json({"resumed": [r.to_json() for r in runs]})
            else:
                for r in runs:
                    out.print(f"{escape(r.id)}: {escape(r.status)} score {r.score}")
            failed = any(r.status == "infra_error" or r.valid is False for r in runs)
            return codes.INFRA if failed else codes.OK

    return guard(body, out)


def cmd_cancel(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if not settings.db_path.exists():  # nothing to cancel, and no store made to say so
        out.error(f"no store at {settings.db_path}; no run {args.run_id!r}")
        return codes.NOT_FOUND

    async def body() -> int:
        try:  # the id first (a prefix will do), before the engine is asked for anything
            async with await Store.open(settings.db_path) as store:
                run_id = await store.runs.resolve_run_id(args.run_id)
        except AmbiguousRunId:
            raise
        except RunNotFound:
            out.error(f"no run {args.run_id!r} in {settings.db_path}")
            return codes.NOT_FOUND
        async with open_run_service(settings) as service:
            try:
                run = await service.cancel_stored(run_id)
            except RunNotFound:
                out.error(f"no run {args.run_id!r} in {settings.db_path}")
                return codes.NOT_FOUND
            if out.json_mode:
                out.emit_json(run.to_json())
            else:
                out.print(f"{escape(run.id)}: {escape(run.status)}")
            return codes.OK

    return guard(body, out)


def cmd_gc(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    async def body() -> int:
        async with open_run_service(settings) as service:
            report, live = await service.gc()
            swept = await service.store.imports.sweep_import_files()
            if out.json_mode:
                out.emit_json({"containers_removed": report.containers_removed,
                               "image_bytes_reclaimed": report.image_bytes_reclaimed,
                               "workspace_images_removed": len(report.workspace_images_removed),
                               "workspace_image_bytes_reclaimed":
                                   report.workspace_bytes_reclaimed,
                               "workspace_images_kept": report.workspace_images_kept,
                               "live_runs_kept": sorted(live),
                               "other_stores_containers_kept": report.foreign_kept,
                               "container_rows_marked_removed": report.rows_marked_removed,
                               "import_folders_removed": swept,
                               "complete": report.complete,
                               "skipped_nodes": [{"node": e.name, "url": e.url,
                                                  "error": e.error}
                                                 for e in report.skipped]})
            else:
                out.print(f"removed {report.containers_removed} container(s), reclaimed "
                          f"{report.image_bytes_reclaimed} bytes of images; removed "
                          f"{len(report.workspace_images_removed)} workspace image(s), "
                          f"{report.workspace_bytes_reclaimed} bytes "
                          f"({report.workspace_images_kept} in use or another store's kept); "
                          f"{len(live)} live run(s) untouched, {report.foreign_kept} "
                          "container(s) of other stores left alone"
                          + (f"; {report.rows_marked_removed} recorded container(s) found "
                             "gone, marked removed" if report.rows_marked_removed else "")
                          + (f"; removed {len(swept)} import folder(s) no run names"
                             if swept else ""))
                for skipped in report.skipped:
                    out.print(f"[red]✗[/] node {escape(skipped.name)} ({escape(skipped.url)})"
                              f" skipped, nothing collected there: {escape(skipped.error)}")
            if report.skipped:
                out.error(f"gc did not finish: {len(report.skipped)} node(s) not visited "
                          f"({', '.join(e.name for e in report.skipped)}); run it again "
                          "when they answer")
            return codes.OK if report.complete else codes.INFRA

    return guard(body, out)


__all__ = ["add_cancel_parser", "add_parsers", "open_run_service"]
