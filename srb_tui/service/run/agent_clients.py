"""The agent phase of a real client: container set-up and the round loop under the budget.

Set-up: resolve and install the pinned client (host cache, read-only mount), open the
run's access to the model gateway (relay network, endpoint), create the container with
a holder as main process, put State A, the round wrapper and the client's config in,
start it and check the client's ``--version`` inside before round 1.

Watching: the log follower stores the container's log and feeds the rounds' transcript
parser; the round loop runs until its stop reason, while ``wait_with_budget`` guards the
container's own budget and disk cap. The loop's deadline is a margin inside the
container budget, so the loop's stop reason is the one written.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

from srb_tui.agents.adapters import (
    AGENT_DIR,
    ClientAdapter,
    Endpoint,
    make_adapter,
    python_problem,
)
from srb_tui.agents.clients import ClientPin, ensure_installed, resolve_pin
from srb_tui.agents.errors import ClientError
from srb_tui.agents.plan import HOLDER
from srb_tui.agents.rounds import COMPLETION_TOKEN, LoopOutcome, run_rounds
from srb_tui.agents.spec import AgentSpec
from srb_tui.agents.wrapper import ROUND_SH
from srb_tui.runner import (
    Bind,
    ContainerHandle,
    create,
    exec_run,
    inspect_state,
    put_tree,
    start,
)
from srb_tui.runner.files import put_readonly_tree
from srb_tui.runner.relay_uplink import engine_is_local
from srb_tui.runner.rounds_exec import put_files
from srb_tui.schema import Task
from srb_tui.service.run.agent_phase import AGENT_ROLE, AgentOutcome, AgentPhase, _stop_reason
from srb_tui.service.run.agent_rounds import ContainerRounds
from srb_tui.service.run.model_access import ModelAccess, NoModelAccess
from srb_tui.store import RunRecord, utc_now
from srb_tui.store.run_extra import (
    AGENT_LOOP,
    CLIENT,
    AgentBudget,
    AgentLoop,
    ClientRecord,
    read_client_version,
)


def completion_token(task: Task) -> str:
    """``[agent].completion_token`` as the schema read it, else the official default."""
    return task.manifest.agent.completion_token or COMPLETION_TOKEN


def loop_margin(budget_sec: float) -> float:
    return min(120.0, max(10.0, 0.05 * budget_sec))


def _access(phase: AgentPhase, agent: AgentSpec) -> ModelAccess:
    access = phase.ctx.access()
    if access is None:
        raise NoModelAccess(f"agent {agent.text}: srb has no model gateway configured, so a "
                            "real client cannot reach a model (see `srb doctor`)")
    return access


def _budget(run: RunRecord) -> tuple[float | None, int | None]:
    b = AgentBudget.read(run.extra)
    return b.max_cost_usd, b.max_tokens


def _adapter(run: RunRecord, pin: ClientPin, agent: AgentSpec) -> ClientAdapter:
    return make_adapter(pin, agent.model or run.model or "", run.effort)


async def start_client_container(
    phase: AgentPhase, run: RunRecord, task: Task, agent: AgentSpec, state_a: Any, image: str
) -> ContainerHandle:
    ctx = phase.ctx
    pin = resolve_pin(agent.kind, task.manifest.agent.harness,
                      read_client_version(run.extra))
    adapter = _adapter(run, pin, agent)
    ctx.say(run.id, f"client {pin.name} {pin.version} (from {pin.source}); installing if needed")
    installed = await asyncio.to_thread(ensure_installed, pin)
    access = _access(phase, agent)
    max_cost, max_tokens = _budget(run)
    got = await access.open_run(run.id, {"srb.task": task.id}, max_cost_usd=max_cost,
                                max_tokens=max_tokens)
    # The host cache is mounted read-only on this machine's engine; a remote node has no
    # such path, so there the client is copied in (root-owned, read-only to the agent).
    local = engine_is_local(phase.engine.base_url)
    spec = phase.container_spec(
        run, task, image, HOLDER, {}, network_mode=got.network_mode,
        binds=(Bind(str(installed.path), pin.mount, read_only=True),) if local else ())
    handle = await create(phase.engine, spec)
    await phase.store.infra.record_container(run.id, AGENT_ROLE, container_id=handle.id,
                                             name=handle.name, created_at=utc_now())
    if not local:
        await put_readonly_tree(phase.engine, handle, installed.path, pin.mount)
    await put_tree(phase.engine, handle, state_a, uid=spec.uid, gid=spec.gid)
    await put_files(phase.engine, handle, AGENT_DIR, {"round.sh": ROUND_SH.encode()},
                    uid=spec.uid, gid=spec.gid, mode=0o755)
    files = {"home/.srb": b"", "rounds/.srb": b"", "claude/.srb": b"", "codex/.srb": b"",
             "mini/.srb": b"", **adapter.files(got.endpoint)}
    await put_files(phase.engine, handle, AGENT_DIR, files, uid=spec.uid, gid=spec.gid)
    record = ClientRecord(pin.name, pin.version, pin.source, installed.sha256, pin.mount,
                          spec.user, got.endpoint.anthropic_base, got.endpoint.openai_base)
    await phase.store.runs.merge_extra(run.id, {CLIENT: record.to_json()})
    await start(phase.engine, handle)
    await phase.store.runs.update_run(run.id, started_at=utc_now())
    await _check_in_container(phase, run, handle, adapter, spec.user)
    ctx.say(run.id, f"agent {agent.text} started in {handle.name} ({pin.name} {pin.version})")
    return handle


async def _check_in_container(phase: AgentPhase, run: RunRecord, handle: ContainerHandle,
                              adapter: ClientAdapter, user: str) -> None:
    pin = adapter.pin
    if pin.kind.needs_python:
        py = await exec_run(phase.engine, handle, [
            "sh", "-c", "python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'"],
            user=user, timeout_sec=60)
        problem = python_problem(py.exit_code, py.stdout.decode(errors="replace"))
        if problem is not None:
            raise ClientError(f"run {run.id}: {problem}")
    got = await exec_run(phase.engine, handle, adapter.version_argv(), user=user,
                         env=adapter.base_env(), timeout_sec=120)
    text = (got.stdout or got.stderr).decode(errors="replace").strip()
    if got.exit_code != 0 or not pin.version_matches(text):
        raise ClientError(
            f"run {run.id}: {pin.name} in the container reports {text[:200]!r} "
            f"(exit {got.exit_code}), not version {pin.version}; refusing to run it")
    phase.ctx.say(run.id, f"{pin.name} --version in the container: {text.splitlines()[0]}")


async def watch_client(
    phase: AgentPhase, run: RunRecord, task: Task, agent: AgentSpec, handle: ContainerHandle
) -> AgentOutcome:
    ctx = phase.ctx
    run = await phase.store.runs.require_run(run.id)
    info = ClientRecord.read(run.extra)
    if info is None:
        raise ClientError(f"run {run.id}: no client record; the agent phase cannot go on")
    pin = ClientPin(info.name, info.version, info.source)
    adapter = _adapter(run, pin, agent)
    access = _access(phase, agent)
    max_cost, max_tokens = _budget(run)
    await access.resume_run(run.id, max_cost_usd=max_cost, max_tokens=max_tokens)
    endpoint = Endpoint(info.anthropic_base, info.openai_base, "")
    rounds = ContainerRounds(
        store=phase.store, engine=phase.engine, bus=ctx.bus, access=access, run_id=run.id,
        handle=handle, adapter=adapter, endpoint=endpoint,
        instruction=task.instruction or "", raw_dir=ctx.run_dir(run.id) / "agent",
        user=info.user, say=lambda m: ctx.say(run.id, m))
    await rounds.prime()
    follower, follow_task = await phase.follow(run.id, handle, also=rounds.on_lines)
    cancel = ctx.cancel.setdefault(run.id, asyncio.Event())
    halt = asyncio.Event()
    budget = run.budget_sec or 3600.0
    started = (await inspect_state(phase.engine, handle)).started_at or datetime.now(UTC)
    deadline = started.timestamp() + budget - loop_margin(budget)
    loop = asyncio.create_task(run_rounds(rounds, task.instruction or "", deadline,
                                          token=completion_token(task), clock=time.time))
    waiter = asyncio.create_task(phase.wait_container(run, handle, follower, follow_task, halt))
    cancelled = asyncio.create_task(cancel.wait())
    outcome: LoopOutcome | None = None
    try:
        await asyncio.wait({loop, waiter, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        if loop.done() and not cancel.is_set():
            outcome = loop.result()
        halt.set()
        if not loop.done():
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await loop
        exit_info = await waiter
    except asyncio.CancelledError:
        for t in (loop, waiter):
            t.cancel()
        raise
    finally:
        cancelled.cancel()
    if cancel.is_set():
        reason, detail = "cancelled", None
    elif outcome is not None:
        reason, detail = outcome.stop_reason, outcome.detail
    else:
        reason, detail = _stop_reason(exit_info, False), None
    run = await phase.store.runs.require_run(run.id)
    agent_loop = AgentLoop(
        reason,
        detail,
        outcome.rounds if outcome else None,
        await phase.store.agent.agent_totals(run.id),
        await access.totals(run.id),
    )
    await phase.store.runs.merge_extra(run.id, {AGENT_LOOP: agent_loop.to_json()})
    await phase.record_exit(run, handle, exit_info, reason, detail)
    return AgentOutcome(exit_info, reason, detail, invalid=reason == "infrastructure")


async def close_client_access(phase: AgentPhase, run_id: str) -> None:
    """End the run's model access; a failure here changes nothing."""
    access = phase.ctx.access()
    if access is not None:
        with contextlib.suppress(Exception):
            await access.close_run(run_id)
