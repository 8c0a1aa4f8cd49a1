"""The agent phase's container work for the run service: start the agent container with
State A and the agent's uploads, follow its log into the store (resuming after the last
stored line per stream), wait for it under the budget, and collect the submission.

It holds what both kinds of agent share, and a built-in agent's start and watch (its work
is the container's main process). A real client's start and round loop are in
:mod:`srb_tui.service.run.agent_clients`, which builds on this module; the orchestrator
chooses between the two once, through :mod:`srb_tui.service.run.agent_kinds`.

:class:`AgentPhase` is a collaborator of :class:`srb_tui.service.run.orchestrator.RunService`
built from a :class:`PhaseContext`; it imports neither the orchestrator nor the clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.agents import AgentSpec, plan_agent
from srb_tui.runner import (
    LABEL_STORE,
    CollectError,
    ContainerError,
    ContainerHandle,
    ContainerLogLine,
    ContainerSpec,
    DockerEngine,
    Stream,
    create,
    inspect_image,
    inspect_state,
    put_tree,
    start,
    workspace_image,
)
from srb_tui.schema import Task
from srb_tui.service.events import EventBus, LogLines
from srb_tui.sources.cache import read_record
from srb_tui.store import RunRecord, Store, utc_now
from srb_tui.store.run_extra import AGENT_EXIT, COLLECT, AgentExit, Collected

if TYPE_CHECKING:
    from srb_tui.runner import ExitInfo, ExtractLimits, LogCursor, LogFollower
    from srb_tui.service.run.model_access import ModelAccess

# What runs after the agent's container has started (following its log, the budget
# watch, collection) imports its runner parts where it starts: a launch never waits
# for them (bench/bench_launch.py).

AGENT_ROLE = "agent"
STORE_LABEL = LABEL_STORE
GIB = 1024**3


@dataclass(frozen=True)
class AgentLimits:
    """Resource limits of the agent container."""

    mem_bytes: int = 4 * GIB
    pids: int = 1024
    nano_cpus: int = 2_000_000_000
    disk_bytes: int = 8 * GIB
    max_file_bytes: int = 2 * GIB
    grace_sec: float = 10.0


@dataclass(frozen=True)
class AgentOutcome:
    """How an agent's phase ended, as the kind of agent that ran it judged it: the
    container's exit, the stop reason written to the run, its detail, and whether the run
    is invalid (an infrastructure fault of a real client's round loop) rather than a
    submission to collect."""

    exit: ExitInfo
    stop_reason: str
    detail: str | None
    invalid: bool


@dataclass
class PhaseContext:
    """What the agent phase uses of the run service."""

    store: Store
    engine: DockerEngine
    bus: EventBus
    limits: AgentLimits
    extract_limits: ExtractLimits | None
    store_tag: str
    cancel: dict[str, asyncio.Event]
    say: Callable[[str, str], None]
    run_dir: Callable[[str], Path]
    access: Callable[[], ModelAccess | None]


class AgentPhase:
    """Container side of the agent phase."""

    def __init__(self, ctx: PhaseContext) -> None:
        self.ctx = ctx

    @property
    def store(self) -> Store:
        return self.ctx.store

    @property
    def engine(self) -> DockerEngine:
        return self.ctx.engine

    def submission_dir(self, run_id: str) -> Path:
        return self.ctx.run_dir(run_id) / "submission"

    async def start_builtin(
        self, run: RunRecord, task: Task, agent: AgentSpec, state_a: Path, image: str
    ) -> ContainerHandle:
        """Start a built-in agent: its work is the container's main process."""
        plan = plan_agent(agent)
        spec = self.container_spec(run, task, image, plan.command, dict(plan.env))
        start_image = await self.workspace(run, image, state_a, spec)
        for attempt in (1, 2):
            made = spec if start_image is None else self.container_spec(
                run, task, start_image, plan.command, dict(plan.env))
            try:
                handle = await create(self.engine, made)
                break
            except ContainerError:
                # A shared workspace image that an `srb gc` of another process removed
                # between finding it and this create: make it again, once.
                if (attempt == 2 or start_image is None
                        or await inspect_image(self.engine, start_image) is not None):
                    raise
                self.ctx.say(run.id, "the workspace image was removed meanwhile; making it again")
                start_image = await self.workspace(run, image, state_a, spec)
        await self.store.infra.record_container(run.id, AGENT_ROLE, container_id=handle.id,
                                                name=handle.name, created_at=utc_now())
        if start_image is None:
            await put_tree(self.engine, handle, state_a, uid=spec.uid, gid=spec.gid)
        for upload in plan.uploads:
            await put_tree(self.engine, handle, upload.source, dest=upload.dest,
                           uid=spec.uid, gid=spec.gid)
        await start(self.engine, handle)
        await self.store.runs.update_run(run.id, started_at=utc_now())
        self.ctx.say(run.id, f"agent {agent.text} started in {handle.name}")
        return handle

    async def workspace(self, run: RunRecord, image: str, state_a: Path,
                        spec: ContainerSpec) -> str | None:
        """The id of the image with State A already in it (recorded as the run's
        ``workspace`` image), for a tree the State A cache has sealed; None for any other
        tree, which is then copied into the container."""
        record = read_record(state_a.parent) if state_a.name == "tree" else None
        if record is None or not record.content_digest:
            return None
        made = await workspace_image(self.engine, image, state_a, record.content_digest,
                                     uid=spec.uid, gid=spec.gid, store_tag=self.ctx.store_tag,
                                     for_run=run.id)
        await self.store.infra.record_image(run.id, "workspace", tag=made.tag, image_id=made.id,
                                            digest=made.id)
        if made.made:
            self.ctx.say(run.id, f"State A put in {made.tag} (later runs start from it)")
        # By id: a run making the same image meanwhile may move the tag to its own copy.
        return made.id

    def container_spec(self, run: RunRecord, task: Task, image: str,
                       command: tuple[str, ...], env: dict[str, str], **extra: object
                       ) -> ContainerSpec:
        lim = self.ctx.limits
        return ContainerSpec(
            image=image, run_id=run.id, role=AGENT_ROLE, command=command, env=env,
            mem_limit=lim.mem_bytes, pids_limit=lim.pids, nano_cpus=lim.nano_cpus,
            max_file_bytes=lim.max_file_bytes,
            labels={"srb.task": task.id, STORE_LABEL: self.ctx.store_tag},
            **extra,  # type: ignore[arg-type]
        )

    async def find_agent_container(self, run_id: str) -> ContainerHandle | None:
        from srb_tui.runner.reaper import list_managed  # a re-attach's: not a launch's

        for c in await list_managed(self.engine, run_id, store_tag=self.ctx.store_tag):
            if c.handle.role == AGENT_ROLE:
                return c.handle
        return None

    async def _resume_cursors(self, run_id: str) -> dict[Stream, LogCursor]:
        from srb_tui.runner.logs import cursors_after

        cursors: dict[Stream, LogCursor] = {}
        for stream in ("stdout", "stderr"):
            count = await self.store.logs.count_log_lines(run_id, stream=stream)
            if count == 0:
                continue
            tail = await self.store.logs.read_log_lines(
                run_id, offset=max(0, count - 500), limit=500, stream=stream
            )
            lines = [ContainerLogLine(e.ts, e.stream, e.text) for e in tail]  # type: ignore[arg-type]
            cursors.update(cursors_after(lines))
        return cursors

    async def follow(self, run_id: str, handle: ContainerHandle,
                     also: Callable[[list[tuple[str, str, str]]], object] | None = None
                     ) -> tuple[LogFollower, asyncio.Task[int]]:
        """Start following the container's log into the store (after the stored lines)."""

        async def sink(lines: list[ContainerLogLine]) -> None:
            rows: list[tuple[str, str, str]] = [(ln.ts, ln.stream, ln.text) for ln in lines]
            last = await self.store.logs.append_log_lines(run_id, rows)
            self.ctx.bus.publish(LogLines(run_id, AGENT_ROLE, tuple(rows), last))
            if also is not None:
                result = also(rows)
                if asyncio.iscoroutine(result):
                    await result

        from srb_tui.runner.logs import LogFollower

        resume = await self._resume_cursors(run_id)
        follower = LogFollower(self.engine, handle, sink, resume=resume)
        return follower, asyncio.create_task(follower.run())

    async def watch_builtin(self, run: RunRecord, handle: ContainerHandle) -> AgentOutcome:
        """Follow a built-in agent's log and wait for its container under the budget."""
        run_id = run.id
        follower, follow_task = await self.follow(run_id, handle)
        stop = self.ctx.cancel.setdefault(run_id, asyncio.Event())
        exit_info = await self.wait_container(run, handle, follower, follow_task, stop)
        reason = _stop_reason(exit_info, stop.is_set())
        await self.record_exit(run, handle, exit_info, reason)
        # A built-in agent's own failure is its submission's: collected and graded.
        return AgentOutcome(exit_info, reason, exit_info.detail, invalid=False)

    async def wait_container(self, run: RunRecord, handle: ContainerHandle,
                             follower: LogFollower, follow_task: asyncio.Task[int],
                             stop: asyncio.Event) -> ExitInfo:
        from srb_tui.runner.budget import DiskCap, wait_with_budget

        budget = run.budget_sec or 3600.0
        lim = self.ctx.limits
        stopping = False
        try:
            return await wait_with_budget(
                self.engine, handle, budget, grace_sec=lim.grace_sec,
                disk_cap=DiskCap(lim.disk_bytes), stop=stop,
            )
        except asyncio.CancelledError:
            # srb itself is stopping (the operator left the run going): the container
            # keeps running and its log is picked up again by `srb resume`. Closing the
            # follower can end a read it had in flight with an error (EBADF); that is the
            # close, not a fault of the run, and must not replace the cancellation.
            stopping = True
            follower.close()
            follow_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await follow_task
            raise
        finally:
            if not stopping:
                try:
                    await asyncio.wait_for(asyncio.shield(follow_task), timeout=30)
                except TimeoutError:
                    follower.close()
                    with contextlib.suppress(Exception):
                        await follow_task

    async def record_exit(self, run: RunRecord, handle: ContainerHandle, exit_info: ExitInfo,
                          stop_reason: str, detail: str | None = None) -> None:
        run = await self.store.runs.require_run(run.id)
        state = await inspect_state(self.engine, handle)
        duration = None
        if state.started_at is not None and state.finished_at is not None:
            duration = round((state.finished_at - state.started_at).total_seconds(), 3)
        agent_exit = AgentExit(
            duration_sec=duration, exit_code=exit_info.exit_code, reason=exit_info.reason,
            oom_killed=exit_info.oom_killed, escalated_to_kill=exit_info.escalated_to_kill,
            disk_bytes=exit_info.disk_bytes, detail=exit_info.detail, stop_detail=detail)
        await self.store.runs.merge_extra(run.id, {AGENT_EXIT: agent_exit.to_json()},
                                          stop_reason=stop_reason)
        self.ctx.say(run.id, f"agent stopped: {stop_reason} "
                     f"({detail or exit_info.detail or exit_info.reason})")

    async def collect(self, run: RunRecord, task: Task, handle: ContainerHandle) -> str | None:
        dest = self.submission_dir(run.id)
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = task.manifest.artifacts[0].source if task.manifest.artifacts else None
        excludes = task.manifest.artifacts[0].exclude if task.manifest.artifacts else ()
        self.ctx.say(run.id, "collecting the submission")
        from srb_tui.runner.collect import collect_submission

        began = time.monotonic()
        try:
            result = await collect_submission(
                self.engine, handle, dest, source=source or "/workspace/repo",
                excludes=excludes, limits=self.ctx.extract_limits,
            )
        except CollectError as exc:
            return str(exc)
        collected = Collected(
            duration_sec=round(time.monotonic() - began, 3), files=result.files,
            bytes=result.bytes, excluded=result.excluded, archive_bytes=result.archive_bytes,
            rejected=tuple(result.rejected[:200]), rejected_total=len(result.rejected),
            aborted_reason=result.aborted_reason)
        await self.store.runs.merge_extra(
            run.id, {COLLECT: collected.to_json()},
            submission_files=result.files, submission_bytes=result.bytes,
        )
        for member, reason in result.rejected[:20]:
            await self.store.runs.add_run_note(run.id, f"collect: rejected {member}: {reason}")
        self.ctx.say(run.id, f"collected {result.files} files, {result.bytes} bytes"
                     + (f", {len(result.rejected)} rejected" if result.rejected else ""))
        return result.aborted_reason


def _stop_reason(info: ExitInfo, cancelled: bool) -> str:
    if cancelled:
        return "cancelled"
    if info.reason == "exited":
        return "completed"
    if info.reason == "deadline":
        return "deadline"
    if info.reason in ("oom", "disk"):
        return "limit"
    return "infrastructure"
