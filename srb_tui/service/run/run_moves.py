"""How a driven run moves and what it says: the run service's collaborator for its phases.

Every status change is written to the store, then announced on the bus; progress lines and
the stages' own events go to the bus; each of these is also a line of the run's log (stream
``srb``, :mod:`.harness_log`); and while this process drives or re-grades a run it
holds the run's driver lease in the store and, for that drive only, the Stage III budget
override. The run service (:mod:`.orchestrator`) and its phase modules (``run_prepare``,
``run_grading``, ``run_upkeep``, ``run_faults``, the agent phase) all go through one
:class:`RunMoves`, so none of them reaches into another's private state.
"""

from __future__ import annotations

import contextlib
from typing import Any

from srb_tui.service.events import (
    Event,
    EventBus,
    Progress,
    RunFinished,
    StageFinished,
    StatusChanged,
)
from srb_tui.service.run.harness_log import HarnessLog
from srb_tui.service.run.run_faults import release_lease, take_lease
from srb_tui.store import FINAL_STATUSES, RunRecord, Store, utc_now

_HARNESS_ERROR = object()  # finish's default detail: the run's recorded harness error


class RunMoves:
    """Transitions, progress and the drive-time holdings of the runs this process drives."""

    def __init__(self, store: Store, bus: EventBus) -> None:
        self.store = store
        self.bus = bus
        self.log = HarnessLog(store, bus)
        self._budgets: dict[str, float | None] = {}

    async def to(self, run_id: str, status: str, reason: str | None = None) -> None:
        """Move the run to ``status`` in the store, then announce it."""
        await self.store.runs.transition(run_id, status, reason)
        self.log.note(run_id, status_line(status, reason))
        self.bus.publish(StatusChanged(run_id, status, reason))

    async def finish(
        self,
        run_id: str,
        status: str | None,
        reason: str | None = None,
        *,
        detail: object = _HARNESS_ERROR,
        if_live: bool = False,
        **fields: Any,
    ) -> RunRecord:
        """The one way a run ends: write ``fields`` with ``finished_at``, move it to
        ``status`` (``None``: the ladder has moved it already), then announce
        :class:`RunFinished` with the run as stored and ``detail`` (default: its harness
        error). ``if_live``: a run already final is left as it is, and only announced.
        A cancelled run is announced without a score or validity."""
        run = await self.store.runs.require_run(run_id) if if_live else None
        if run is None or run.status not in FINAL_STATUSES:
            await self.store.runs.update_run(run_id, finished_at=utc_now(), **fields)
            if status is not None:
                await self.to(run_id, status, reason)
        run = await self.store.runs.require_run(run_id)
        said = run.harness_error if detail is _HARNESS_ERROR else detail
        assert said is None or isinstance(said, str)
        verdict = run.status != "cancelled"
        self.log.note(run_id, ended_line(run, said))
        await self.log.flush(run_id)
        self.bus.publish(RunFinished(run_id, run.status, run.score if verdict else None,
                                     run.valid if verdict else None, said))
        return run

    def say(self, run_id: str, message: str) -> None:
        """A progress line for the run's watchers and its log."""
        self.log.note(run_id, message)
        self.bus.publish(Progress(run_id, message))

    def publish(self, event: object) -> None:
        """Pass a stage's event on to the bus (anything that is not an srb event is
        dropped: stages publish through a plain callable); its progress lines and stage
        ends go to the run's log too."""
        if not isinstance(event, Event):
            return
        if isinstance(event, Progress):
            self.log.note(event.run_id, event.message)
        elif isinstance(event, StatusChanged):
            self.log.note(event.run_id, status_line(event.status, event.reason))
        elif isinstance(event, StageFinished):
            self.log.note(event.run_id, f"{event.stage}: ended {event.status}")
        self.bus.publish(event)

    async def hold(self, run_id: str) -> None:
        """Take the run's driver lease (LeaseHeld when a live process holds it)."""
        await take_lease(self.store, run_id)

    def set_budget(self, run_id: str, adversary_budget_sec: float | None) -> None:
        """The Stage III budget override of this drive (None: the task's budgets)."""
        self._budgets[run_id] = adversary_budget_sec

    def budget(self, run_id: str) -> float | None:
        return self._budgets.get(run_id)

    async def let_go(self, run_id: str) -> None:
        """End the drive: forget its budget override and release its lease (a store that
        cannot be written any more leaves a lease that dies with this process)."""
        self._budgets.pop(run_id, None)
        await self.log.flush(run_id)
        with contextlib.suppress(Exception):
            await release_lease(self.store, run_id)


def status_line(status: str, reason: str | None) -> str:
    return f"status → {status}" + (f" ({reason})" if reason else "")


def ended_line(run: RunRecord, detail: str | None) -> str:
    """``run ended: scored · score 70/100 · valid yes`` (and the harness error, if any)."""
    parts = [f"run ended: {run.status}"]
    if run.score is not None:
        top = f"/{run.max_score:g}" if run.max_score is not None else ""
        parts.append(f"score {run.score:g}{top}")
    if run.valid is not None:
        parts.append(f"valid {'yes' if run.valid else 'no'}")
    if detail:
        parts.append(detail)
    return " · ".join(parts)
