"""The agent phase's container work for the run service: start the agent container with
State A and the agent's uploads, follow its log into the store (resuming after the last
stored line per stream), wait for it under the budget, and collect the submission.

:class:`AgentPhase` is a mixin of :class:`srb_tui.service.orchestrator.RunService`; it uses
the service's store, engine, bus, limits and cancel events.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.agents import AgentSpec, plan_agent
from srb_tui.runner import (
    CollectError,
    ContainerHandle,
    ContainerSpec,
    DiskCap,
    DockerEngine,
    ExitInfo,
    ExtractLimits,
    LogCursor,
    LogFollower,
    LogLine,
    Stream,
    collect_submission,
    create,
    cursors_after,
    inspect_state,
    list_managed,
    put_tree,
    start,
    wait_with_budget,
)
from srb_tui.schema import Task
from srb_tui.service.events import EventBus, LogLines
from srb_tui.store import RunRecord, Store, utc_now

if TYPE_CHECKING:
    from srb_tui.service.orchestrator import Limits

AGENT_ROLE = "agent"
STORE_LABEL = "srb.store"


class AgentPhase:
    """Container side of the agent phase (mixed into RunService)."""

    store: Store
    engine: DockerEngine
    bus: EventBus
    limits: Limits
    extract_limits: ExtractLimits
    store_tag: str
    _cancel: dict[str, asyncio.Event]

    def _say(self, run_id: str, message: str) -> None:
        raise NotImplementedError

    def submission_dir(self, run_id: str) -> Path:
        raise NotImplementedError

    async def _start_agent(
        self, run: RunRecord, task: Task, agent: AgentSpec, state_a: Path, image: str
    ) -> ContainerHandle:
        plan = plan_agent(agent)
        spec = ContainerSpec(
            image=image,
            run_id=run.id,
            role=AGENT_ROLE,
            command=plan.command,
            env=dict(plan.env),
            mem_limit=self.limits.mem_bytes,
            pids_limit=self.limits.pids,
            nano_cpus=self.limits.nano_cpus,
            max_file_bytes=self.limits.max_file_bytes,
            labels={"srb.task": task.id, STORE_LABEL: self.store_tag},
        )
        handle = await create(self.engine, spec)
        await self.store.record_container(run.id, AGENT_ROLE, container_id=handle.id,
                                          name=handle.name, created_at=utc_now())
        await put_tree(self.engine, handle, state_a, uid=spec.uid, gid=spec.gid)
        for upload in plan.uploads:
            await put_tree(self.engine, handle, upload.source, dest=upload.dest,
                           uid=spec.uid, gid=spec.gid)
        await start(self.engine, handle)
        await self.store.update_run(run.id, started_at=utc_now())
        self._say(run.id, f"agent {agent.text} started in {handle.name}")
        return handle

    async def _find_agent_container(self, run_id: str) -> ContainerHandle | None:
        for c in await list_managed(self.engine, run_id):
            if c.handle.role == AGENT_ROLE:
                return c.handle
        return None

    async def _resume_cursors(self, run_id: str) -> dict[Stream, LogCursor]:
        cursors: dict[Stream, LogCursor] = {}
        for stream in ("stdout", "stderr"):
            count = await self.store.count_log_lines(run_id, stream=stream)
            if count == 0:
                continue
            tail = await self.store.read_log_lines(
                run_id, offset=max(0, count - 500), limit=500, stream=stream
            )
            lines = [LogLine(e.ts, e.stream, e.text) for e in tail]  # type: ignore[arg-type]
            cursors.update(cursors_after(lines))
        return cursors

    async def _watch_agent(self, run: RunRecord, handle: ContainerHandle) -> ExitInfo:
        run_id = run.id

        async def sink(lines: list[LogLine]) -> None:
            last = await self.store.append_log_lines(
                run_id, [(ln.ts, ln.stream, ln.text) for ln in lines]
            )
            self.bus.publish(LogLines(
                run_id, AGENT_ROLE, tuple((ln.ts, ln.stream, ln.text) for ln in lines), last,
            ))

        resume = await self._resume_cursors(run_id)
        follower = LogFollower(self.engine, handle, sink, resume=resume)
        follow_task = asyncio.create_task(follower.run())
        budget = run.budget_sec or 3600.0
        stop = self._cancel.setdefault(run_id, asyncio.Event())
        try:
            exit_info = await wait_with_budget(
                self.engine, handle, budget, grace_sec=self.limits.grace_sec,
                disk_cap=DiskCap(self.limits.disk_bytes), stop=stop,
            )
        except asyncio.CancelledError:
            # srb itself is stopping (the operator left the run going): the container
            # keeps running and its log is picked up again by `srb resume`.
            follower.close()
            follow_task.cancel()
            raise
        finally:
            try:
                await asyncio.wait_for(asyncio.shield(follow_task), timeout=30)
            except TimeoutError:
                follower.close()
                with contextlib.suppress(Exception):
                    await follow_task
        stop_reason = _stop_reason(exit_info, stop.is_set())
        state = await inspect_state(self.engine, handle)
        duration = None
        if state.started_at is not None and state.finished_at is not None:
            duration = round((state.finished_at - state.started_at).total_seconds(), 3)
        extra = dict(run.extra)
        extra["agent_exit"] = {
            "duration_sec": duration,
            "exit_code": exit_info.exit_code,
            "reason": exit_info.reason,
            "oom_killed": exit_info.oom_killed,
            "escalated_to_kill": exit_info.escalated_to_kill,
            "disk_bytes": exit_info.disk_bytes,
            "detail": exit_info.detail,
        }
        await self.store.update_run(run_id, stop_reason=stop_reason, extra=extra)
        self._say(run_id, f"agent stopped: {stop_reason} ({exit_info.detail or exit_info.reason})")
        return exit_info

    async def _collect(self, run: RunRecord, task: Task, handle: ContainerHandle) -> str | None:
        dest = self.submission_dir(run.id)
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = task.manifest.artifacts[0].source if task.manifest.artifacts else None
        excludes = task.manifest.artifacts[0].exclude if task.manifest.artifacts else ()
        self._say(run.id, "collecting the submission")
        began = time.monotonic()
        try:
            result = await collect_submission(
                self.engine, handle, dest, source=source or "/workspace/repo",
                excludes=excludes, limits=self.extract_limits,
            )
        except CollectError as exc:
            return str(exc)
        extra = dict(run.extra)
        extra["collect"] = {
            "duration_sec": round(time.monotonic() - began, 3),
            "files": result.files, "bytes": result.bytes, "excluded": result.excluded,
            "archive_bytes": result.archive_bytes,
            "rejected": [{"member": m, "reason": r} for m, r in result.rejected[:200]],
            "rejected_total": len(result.rejected),
            "aborted_reason": result.aborted_reason,
        }
        await self.store.update_run(
            run.id, submission_files=result.files, submission_bytes=result.bytes, extra=extra
        )
        for member, reason in result.rejected[:20]:
            await self.store.add_run_note(run.id, f"collect: rejected {member}: {reason}")
        self._say(run.id, f"collected {result.files} files, {result.bytes} bytes"
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
