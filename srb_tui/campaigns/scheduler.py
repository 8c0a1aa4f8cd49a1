"""Run a planned campaign's cells: resources, retries, cost ceiling, re-attach after a crash.

Every cell is in the store before anything runs (``Store.campaigns.plan_campaign``).
``Scheduler.run`` first reconciles what a previous process left: a cell whose run finished is
settled; a cell whose run is still live is re-attached (driven again: the run service picks up a
live agent container where it is); a run the campaign created but never pointed a cell at (a
crash between the two writes) is cancelled; cancelled cells are queued again. Then it
starts planned cells while the machine has room for each task's declared CPUs and memory
(one cell always may run, so a task larger than the machine still runs alone), at most
``max_parallel`` at once, until the campaign's cost ceiling is reached.

With ``grade=False`` (benches, a look at the agents alone) each run stops once its
submission is collected (``srb run --no-grade``): a run left ``collecting`` with no harness
error settles its cell as done (outcome ``collected``).

A cell whose run ends invalid or in ``infra_error`` is re-run, a new attempt each time, up
to ``retry_limit`` re-runs; every attempt is a row of ``cell_attempts``. A cell whose run is
scored and valid is done and never runs again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from srb_tui.campaigns.calls import RunCalls
from srb_tui.campaigns.plan import Machine, TaskInfo
from srb_tui.grader.contract import STAGES
from srb_tui.store import FINAL_STATUSES, RunRecord, StoreError
from srb_tui.store.campaign_records import CampaignConfigRecord, CampaignRecord, CellRecord

POLL_SEC = 2.0


@dataclass
class Progress:
    """What a progress display shows."""

    total: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0
    running: int = 0
    retries: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    stopped_by: str | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _key(cell: CellRecord) -> tuple[str, str, int]:
    return (cell.task_id, cell.config, cell.repeat)


class Scheduler:
    """Drives one campaign's cells (one instance per ``srb campaign run/resume``)."""

    def __init__(
        self,
        calls: RunCalls,
        campaign: CampaignRecord,
        tasks: dict[str, TaskInfo],
        *,
        machine: Machine | None = None,
        adversary_budget_sec: float | None = None,
        budget_sec: float | None = None,
        configs: Sequence[CampaignConfigRecord] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        grade: bool = True,
    ) -> None:
        self.calls = calls
        self.grade = grade
        self.store = calls.store
        self.campaign = campaign
        self.tasks = tasks
        self.machine = machine or Machine.this()
        self.adversary_budget_sec = adversary_budget_sec
        self.budget_sec = budget_sec
        self.on_progress = on_progress or (lambda progress: None)
        self.progress = Progress()
        # the plan's configurations (with the file's per-run token and wall-clock budgets)
        # when given, else the stored ones
        self.configs = {c.label: c for c in (configs or campaign.configs)}
        self._running: dict[asyncio.Task[RunRecord | None], CellRecord] = {}
        self._stop = asyncio.Event()

    def stop(self) -> None:
        """Start no more cells; live runs are left going (``resume`` re-attaches them)."""
        self._stop.set()

    # -- bookkeeping -------------------------------------------------------------

    async def _refresh(self) -> list[CellRecord]:
        cells = await self.store.campaigns.cells(self.campaign.id)
        p = self.progress
        p.total = len(cells)
        p.done = sum(c.state == "done" for c in cells)
        p.failed = sum(c.state == "failed" for c in cells)
        p.cancelled = sum(c.state == "cancelled" for c in cells)
        p.running = len(self._running)
        p.retries = sum(max(0, c.attempts - 1) for c in cells)
        src = await self.store.reports.report_source(campaign=self.campaign.id)
        p.cost = sum(src.costs.values())
        self.on_progress(p)
        return cells

    async def settle(self, cell: CellRecord, run: RunRecord) -> CellRecord:
        """Record how the cell's current run ended and what the cell does next."""
        if self._collected(run):
            return await self.store.campaigns.end_attempt(cell, "done", "collected")
        if run.status == "scored" and run.valid is True:
            return await self.store.campaigns.end_attempt(cell, "done", "scored")
        if run.status == "cancelled":
            return await self.store.campaigns.end_attempt(cell, "cancelled", "cancelled")
        outcome = "infra_error" if run.status == "infra_error" else "invalid"
        retry = cell.attempts <= self.campaign.retry_limit
        return await self.store.campaigns.end_attempt(
            cell, "planned" if retry else "failed", outcome, run.harness_error
        )

    def _collected(self, run: RunRecord) -> bool:
        """An ungraded run (``grade=False``) that ended with its submission collected."""
        return not self.grade and run.status == "collecting" and not run.harness_error

    # -- resume ------------------------------------------------------------------

    async def reconcile(self) -> None:
        """Settle, re-attach or re-queue what a previous process left."""
        cells = await self.store.campaigns.cells(self.campaign.id)
        pointed = {c.run_id for c in cells if c.run_id}
        pointed |= {
            a.run_id for a in await self.store.campaigns.attempts(self.campaign.id) if a.run_id
        }
        for orphan in await self.store.runs.list_runs(batch=self.campaign.id, limit=None):
            if orphan.id not in pointed and orphan.status not in FINAL_STATUSES:
                await self.calls.cancel_stored(orphan.id)  # created, never attached to a cell
        for cell in cells:
            if cell.state == "cancelled":
                await self.store.campaigns.set_cell_state(cell, "planned")
            if cell.state != "running" or cell.run_id is None:
                continue
            run = await self.store.runs.get_run(cell.run_id)
            if run is None:
                await self.store.campaigns.end_attempt(
                    cell, "planned", "invalid", "its run is gone"
                )
            elif run.status in FINAL_STATUSES or self._collected(run):
                await self.settle(cell, run)
            elif self.calls.driven_elsewhere(run):
                continue  # another live srb process drives it
            else:
                if run.status in STAGES:
                    await self.calls.clear_grading(run.id)
                self._spawn(cell, self._reattach(cell))

    # -- running -----------------------------------------------------------------

    def _fits(self, info: TaskInfo) -> bool:
        if not self._running:
            return True
        if len(self._running) >= self.campaign.max_parallel:
            return False
        busy = [self.tasks.get(c.task_id) for c in self._running.values()]
        cpus = sum(t.cpus for t in busy if t is not None)
        memory = sum(t.memory_mb for t in busy if t is not None)
        return (cpus + info.cpus <= self.machine.cpus
                and memory + info.memory_mb <= self.machine.memory_mb)

    def _spawn(self, cell: CellRecord, body: asyncio.Future[RunRecord | None] | object) -> None:
        task: asyncio.Task[RunRecord | None] = asyncio.ensure_future(body)  # type: ignore[arg-type]
        self._running[task] = cell

    async def _drive(self, run_id: str) -> RunRecord:
        if self.grade:  # the calls' own default: a stand-in need not know the option
            return await self.calls.drive(run_id, adversary_budget_sec=self.adversary_budget_sec)
        return await self.calls.drive(run_id, adversary_budget_sec=self.adversary_budget_sec,
                                      grade=False)

    async def _reattach(self, cell: CellRecord) -> RunRecord | None:
        assert cell.run_id is not None
        return await self._drive(cell.run_id)

    async def _start(self, cell: CellRecord) -> RunRecord | None:
        config = self.configs[cell.config]
        run = await self.calls.launch(cell.task_path, config, campaign=self.campaign.id,
                                      budget_sec=self.budget_sec)
        self._running[asyncio.current_task()] = await self.store.campaigns.start_attempt(  # type: ignore[index]
            cell, run.id
        )
        return await self._drive(run.id)

    async def _finished(self, task: asyncio.Task[RunRecord | None]) -> None:
        cell = self._running.pop(task)
        cell = next((c for c in await self.store.campaigns.cells(self.campaign.id)
                     if _key(c) == _key(cell)), cell)
        error: BaseException | None = None
        try:
            task.result()
        except asyncio.CancelledError:
            return  # stopped: the run stays live for resume
        except Exception as exc:
            error = exc
        if cell.run_id is None:
            await self.store.campaigns.set_cell_state(
                cell, "planned" if cell.attempts <= self.campaign.retry_limit else "failed"
            )
            return
        run = await self.store.runs.require_run(cell.run_id)
        if run.status not in FINAL_STATUSES and not self._collected(run):
            message = f"the scheduler lost the run: {type(error).__name__}: {error}"
            with contextlib.suppress(StoreError):
                await self.store.runs.update_run(run.id, valid=False, harness_error=message)
                await self.store.runs.transition(run.id, "infra_error", message)
            run = await self.store.runs.require_run(run.id)
        await self.settle(cell, run)

    def _over_budget(self) -> bool:
        ceiling = self.campaign.max_cost
        if ceiling is not None and self.progress.cost >= ceiling:
            self.progress.stopped_by = (f"cost ceiling reached: {self.progress.cost:.2f} of "
                                        f"{ceiling:.2f} USD")
            return True
        return False

    async def run(self) -> Progress:
        """Run every cell that still needs it; return the final progress."""
        await self.store.campaigns.set_campaign_status(self.campaign.id, "running")
        await self.calls.reap_leftovers()
        await self.reconcile()
        try:
            while True:
                cells = await self._refresh()
                campaign = await self.store.campaigns.campaign(self.campaign.id)
                if campaign is not None and campaign.status == "cancelled":
                    for cell in list(self._running.values()):
                        if cell.run_id:
                            self.calls.request_cancel(cell.run_id)
                    self.progress.stopped_by = "cancelled"
                    self._stop.set()
                busy = {_key(c) for c in self._running.values()}
                if not self._stop.is_set() and not self._over_budget():
                    for cell in cells:
                        if cell.state != "planned" or _key(cell) in busy:
                            continue
                        info = self.tasks.get(cell.task_id)
                        if info is None or not self._fits(info):
                            break
                        self._spawn(cell, self._start(cell))
                        busy.add(_key(cell))
                if not self._running:
                    break
                if self._stop.is_set() and self.progress.stopped_by != "cancelled":
                    break  # Ctrl-C: leave the live runs going; resume re-attaches them
                done, _ = await asyncio.wait(set(self._running), timeout=POLL_SEC,
                                             return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    await self._finished(task)
        finally:
            for task in list(self._running):
                task.cancel()
            for task in list(self._running):
                with contextlib.suppress(BaseException):
                    await task
            self._running.clear()
        cells = await self._refresh()
        final = all(c.state in ("done", "failed") for c in cells)
        status = "done" if final else ("cancelled" if self.progress.stopped_by == "cancelled"
                                        else "stopped")
        await self.store.campaigns.set_campaign_status(self.campaign.id, status)
        return self.progress
