"""RunMoves, the run service's collaborator for transitions, progress and drive-time holdings,
over a real SQLite store and the real event bus (no engine needed)."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.service.events import EventBus, LogLines, Progress, RunFinished, StatusChanged
from srb_tui.service.run.run_faults import LEASE, LeaseHeld
from srb_tui.service.run.run_moves import RunMoves
from srb_tui.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "state" / "srb.sqlite3")
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_move_is_stored_before_it_is_announced(store: Store) -> None:
    bus = EventBus()
    moves = RunMoves(store, bus)
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
    seen: list[object] = []
    async with bus.subscribe() as sub:
        await moves.to(run.id, "preparing", "because")
        moves.say(run.id, "a line")
        moves.publish("not an event")  # a stage's callable may hand anything over
        moves.publish(Progress(run.id, "from a stage"))
        while not sub.empty():
            seen.append(sub.get_nowait())
    assert seen == [StatusChanged(run.id, "preparing", "because"), Progress(run.id, "a line"),
                    Progress(run.id, "from a stage")]
    history = [(t.to_status, t.reason) for t in await store.runs.transitions(run.id)]
    assert history[-1] == ("preparing", "because")
    assert (await store.runs.require_run(run.id)).status == "preparing"


async def test_a_drive_holds_the_lease_and_its_budget_until_it_lets_go(store: Store) -> None:
    moves = RunMoves(store, EventBus())
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
    await moves.hold(run.id)
    moves.set_budget(run.id, 12.5)
    lease = (await store.runs.require_run(run.id)).extra[LEASE]
    assert lease["pid"] == os.getpid() and moves.budget(run.id) == 12.5
    await moves.let_go(run.id)
    assert LEASE not in (await store.runs.require_run(run.id)).extra
    assert moves.budget(run.id) is None


async def test_a_live_lease_of_another_process_is_refused(store: Store) -> None:
    moves = RunMoves(store, EventBus())
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
    other = {"pid": os.getppid(), "host": socket.gethostname(), "since": "earlier"}
    await store.runs.update_run(run.id, extra={LEASE: other})
    with pytest.raises(LeaseHeld, match=f"pid {os.getppid()}"):
        await moves.hold(run.id)
    await moves.let_go(run.id)  # not ours: left in place
    assert (await store.runs.require_run(run.id)).extra[LEASE] == other


async def _drain(sub: object) -> list[object]:
    seen: list[object] = []
    while not sub.empty():  # type: ignore[attr-defined]
        seen.append(sub.get_nowait())  # type: ignore[attr-defined]
    return seen


async def test_finish_stores_moves_and_announces_once(store: Store) -> None:
    """The one finish move: fields and finished_at stored, the status moved, RunFinished last
    with the run as stored (issue 22: it was written five times)."""
    bus = EventBus()
    moves = RunMoves(store, bus)
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
    await moves.to(run.id, "preparing")
    await moves.log.flush(run.id)  # the earlier move's log line is not part of what follows
    async with bus.subscribe() as sub:
        done = await moves.finish(run.id, "infra_error", "engine gone", detail="engine gone",
                                  if_live=True, harness_error="engine gone", valid=False)
        seen = await _drain(sub)
    # the run's own log lines (stream srb) are flushed before the end is announced
    said = [line[2] for event in seen if isinstance(event, LogLines) for line in event.lines]
    assert said == ["status → infra_error (engine gone)",
                    "run ended: infra_error · valid no · engine gone"]
    assert [e for e in seen if not isinstance(e, LogLines)] == [
        StatusChanged(run.id, "infra_error", "engine gone"),
        RunFinished(run.id, "infra_error", None, False, "engine gone")]
    assert isinstance(seen[-1], RunFinished)
    assert done.status == "infra_error" and done.harness_error == "engine gone"
    assert done.finished_at is not None and done.valid is False
    # if_live: a run already final is only announced again, not rewritten
    async with bus.subscribe() as sub:
        again = await moves.finish(run.id, "infra_error", "x", detail="later", if_live=True,
                                   harness_error="later")
        seen = await _drain(sub)
    assert [e for e in seen if not isinstance(e, LogLines)] == [
        RunFinished(run.id, "infra_error", None, False, "later")]
    assert again.harness_error == "engine gone"


async def test_a_cancelled_run_is_announced_without_a_verdict(store: Store) -> None:
    bus = EventBus()
    moves = RunMoves(store, bus)
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay")
    await store.runs.update_run(run.id, score=10.0, valid=True)
    async with bus.subscribe() as sub:
        done = await moves.finish(run.id, "cancelled", "by the operator", detail="cancelled")
        seen = await _drain(sub)
    assert done.status == "cancelled"
    assert seen[-1] == RunFinished(run.id, "cancelled", None, None, "cancelled")
