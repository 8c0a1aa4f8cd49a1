"""The scheduler's bookkeeping over a real store, with a STAND-IN for the run service.

``StandInCalls`` creates real runs in the store and walks them through the real lifecycle,
ending each as the test's script says (scored valid / scored invalid / infra_error); no
container is started. The Docker end-to-end campaign is in test_campaign_e2e.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from srb_tui.campaigns.plan import Machine, TaskInfo
from srb_tui.campaigns.scheduler import Scheduler
from srb_tui.campaigns.spec import parse_campaign, select_tasks
from srb_tui.store import RunRecord, Store
from srb_tui.store.campaign_records import CampaignConfigRecord, PlannedCell

Script = Callable[[str, int], str]  # (config label, attempt number) -> outcome


class StandInCalls:
    """STAND-IN run service: real store rows, no containers."""

    def __init__(self, store: Store, script: Script, *, hold: asyncio.Event | None = None,
                 cost: float = 0.0) -> None:
        self.store = store
        self.script = script
        self.hold = hold
        self.cost = cost
        self.live = 0
        self.max_live = 0
        self.launched: list[str] = []
        self.reaped = 0  # reap_leftovers calls (one per scheduler run, before reconcile)
        self.driven: list[str] = []
        self.attempt_of: dict[str, int] = {}

    def check_agent(self, config: CampaignConfigRecord, task: TaskInfo) -> str | None:
        return None

    async def launch(self, task_path: str, config: CampaignConfigRecord, *, campaign: str,
                     budget_sec: float | None) -> RunRecord:
        run = await self.store.runs.create_run(task_id=Path(task_path).name, task_path=task_path,
                                               agent=config.agent, batch_id=campaign)
        self.launched.append(run.id)
        return run

    async def drive(self, run_id: str, *, adversary_budget_sec: float | None) -> RunRecord:
        self.driven.append(run_id)
        self.live += 1
        self.max_live = max(self.max_live, self.live)
        try:
            run = await self.store.runs.require_run(run_id)
            if run.status == "pending":
                await self.store.runs.transition(run_id, "preparing")
                await self.store.runs.transition(run_id, "agent")
            if self.hold is not None:
                await self.hold.wait()
            attempts = len([r for r in self.launched if r == run_id]) or 1
            cells = [
                c
                for c in await self.store.campaigns.cells(run.batch_id or "")
                if c.run_id == run_id
            ]
            attempt = cells[0].attempts if cells else attempts
            outcome = self.script(run.agent, attempt)
            if outcome == "infra_error":
                await self.store.runs.update_run(run_id, valid=False, harness_error="engine lost")
                await self.store.runs.transition(run_id, "infra_error", "stand-in")
            else:
                for status in ("collecting", "audit"):
                    await self.store.runs.transition(run_id, status)
                await self.store.runs.update_run(run_id, valid=outcome == "scored", score=40.0,
                                                 harness_error=None if outcome == "scored"
                                                 else "stage error")
                await self.store.runs.transition(run_id, "scored", "stand-in")
            await asyncio.sleep(0)
            return await self.store.runs.require_run(run_id)
        finally:
            self.live -= 1

    def driven_elsewhere(self, run: RunRecord) -> bool:
        return False

    def request_cancel(self, run_id: str) -> None:
        return None

    async def clear_grading(self, run_id: str) -> int:
        return 0

    async def reap_leftovers(self) -> None:
        self.reaped += 1

    async def cancel_stored(self, run_id: str) -> RunRecord:
        run = await self.store.runs.require_run(run_id)
        if run.status not in ("scored", "cancelled", "infra_error"):
            await self.store.runs.transition(run_id, "cancelled", "stand-in cancel")
        return await self.store.runs.require_run(run_id)


TASKS = {
    "big": TaskInfo("big", "/tasks/big", cpus=2, memory_mb=1000),
    "small": TaskInfo("small", "/tasks/small", cpus=1, memory_mb=1000),
}
CONFIGS = (CampaignConfigRecord("ok", "replay:ok"), CampaignConfigRecord("flaky", "replay:fl"))


async def _plan(store: Store, name: str = "c1", retry_limit: int = 2,
                max_cost: float | None = None) -> None:
    cells = [PlannedCell(t, TASKS[t].path, c.label, r) for t in TASKS for c in CONFIGS
             for r in (1, 2)]
    await store.campaigns.plan_campaign(name, file=None, source="", max_parallel=4,
                                        retry_limit=retry_limit, max_cost=max_cost, configs=CONFIGS,
                                        cells=cells)


def _flaky(agent: str, attempt: int) -> str:
    if agent == "replay:fl":
        return {1: "infra_error", 2: "invalid"}.get(attempt, "scored")
    return "scored"


async def test_retries_are_recorded_and_scored_cells_run_once(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _plan(store)
        calls = StandInCalls(store, _flaky)
        campaign = await store.campaigns.campaign("c1")
        assert campaign is not None
        progress = await Scheduler(calls, campaign, TASKS, machine=Machine(3, 4000)).run()
        cells = await store.campaigns.cells("c1")
        assert {c.state for c in cells} == {"done"}
        assert progress.done == 8
        attempts = await store.campaigns.attempts("c1")
        by_cell: dict[tuple[str, str, int], list[str | None]] = {}
        for a in attempts:
            by_cell.setdefault((a.task_id, a.config, a.repeat), []).append(a.outcome)
        for (_task, config, _repeat), outcomes in by_cell.items():
            if config == "ok":
                assert outcomes == ["scored"]
            else:
                assert outcomes == ["infra_error", "invalid", "scored"]
        assert len(calls.launched) == 4 + 4 * 3
        # resources: big needs 2 of 3 cpus, so at most one big beside one small
        assert 1 <= calls.max_live <= 2
        assert (await store.campaigns.campaign("c1")).status == "done"  # type: ignore[union-attr]
        # running again starts nothing: every cell is scored
        again = StandInCalls(store, _flaky)
        await Scheduler(again, campaign, TASKS, machine=Machine(3, 4000)).run()
        assert again.launched == []


async def test_retry_limit_then_failed(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _plan(store, retry_limit=1)
        campaign = await store.campaigns.campaign("c1")
        assert campaign is not None
        await Scheduler(StandInCalls(store, _flaky), campaign, TASKS,
                        machine=Machine(8, 8000)).run()
        states = {(c.config, c.state) for c in await store.campaigns.cells("c1")}
        assert states == {("ok", "done"), ("flaky", "failed")}
        flaky = [a for a in await store.campaigns.attempts("c1") if a.config == "flaky"]
        assert len(flaky) == 4 * 2  # first run + one retry each


async def test_stop_leaves_runs_live_and_resume_reattaches(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _plan(store)
        campaign = await store.campaigns.campaign("c1")
        assert campaign is not None
        hold = asyncio.Event()
        first = StandInCalls(store, lambda agent, attempt: "scored", hold=hold)
        scheduler = Scheduler(first, campaign, TASKS, machine=Machine(8, 8000))
        job = asyncio.create_task(scheduler.run())
        deadline = asyncio.get_running_loop().time() + 10
        while first.live < 4:  # max_parallel 4: four cells are in their agent phase
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        # an orphan: a campaign run that no cell points at (a crash between two writes)
        orphan = await store.runs.create_run(task_id="small", task_path="/tasks/small",
                                             agent="replay:ok", batch_id="c1")
        scheduler.stop()
        await job
        live = [c for c in await store.campaigns.cells("c1") if c.state == "running"]
        assert len(live) == 4
        assert (await store.campaigns.campaign("c1")).status == "stopped"  # type: ignore[union-attr]

        second = StandInCalls(store, lambda agent, attempt: "scored")
        await Scheduler(second, campaign, TASKS, machine=Machine(8, 8000)).run()
        assert sorted(second.driven[:4]) == sorted(c.run_id for c in live)  # re-attached
        assert (first.reaped, second.reaped) == (1, 1)  # leftovers cleared before each start
        assert len(second.launched) == 4  # only the four never-started cells
        assert (await store.runs.require_run(orphan.id)).status == "cancelled"
        cells = await store.campaigns.cells("c1")
        assert all(c.state == "done" and c.attempts == 1 for c in cells)


async def test_cost_ceiling_stops_starting_cells(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _plan(store, max_cost=0.0)
        campaign = await store.campaigns.campaign("c1")
        assert campaign is not None
        calls = StandInCalls(store, lambda agent, attempt: "scored")
        progress = await Scheduler(calls, campaign, TASKS, machine=Machine(8, 8000)).run()
        assert calls.launched == []
        assert progress.stopped_by is not None and "cost ceiling" in progress.stopped_by


def test_campaign_file_problems_all_at_once() -> None:
    text = """
[campaign]
name = "demo run"
tasks = ["demo0*", "nope*"]
repeats = "2"
max_paralel = 2

[[config]]
label = "ref"
agent = "replay:reference"

[[config]]
label = "ref"
agent = 3
"""
    spec = parse_campaign(text, "demo.toml")
    found = [str(p) for p in spec.problems]
    assert "demo.toml:3 [campaign.name]: campaign name `demo run` is not a token" \
        " (letters, digits, `._-`)" in found
    assert any(p.startswith("demo.toml:5 [campaign.repeats]: expected an integer, found the "
                            'string "2"') for p in found)
    assert any("demo.toml:6 [campaign.max_paralel]: unknown key `max_paralel`" in p
               and "max_parallel" in p for p in found)
    assert any("[config[1].label]: duplicate configuration label `ref`" in p for p in found)
    assert any("[config[1].agent]: expected a string" in p for p in found)
    chosen, missing = select_tasks(spec, ["demo01-csvtab", "demo02-x", "other"])
    assert chosen == ["demo01-csvtab", "demo02-x"]
    assert [str(p) for p in missing] == [
        "demo.toml:4 [campaign.tasks[1]]: `nope*` matches no task under the task roots"
    ]
