"""A small stored campaign with known cell outcomes, for the screen tests and snapshots."""

from __future__ import annotations

from pathlib import Path

from srb_tui.store import Store
from srb_tui.store.campaign_records import CampaignConfigRecord, PlannedCell

from ..reports.synth import Spec, add_run

CONFIGS = (CampaignConfigRecord("reference", "replay:reference"),
           CampaignConfigRecord("subtle", "replay:subtle"),
           CampaignConfigRecord("untouched", "replay:untouched"))
# (task, config) -> spec of the run, or None for a cell that has not started
OUTCOMES: dict[tuple[str, str], Spec | None] = {
    ("t1", "reference"): Spec("t1", "replay:reference"),
    ("t1", "subtle"): Spec("t1", "replay:subtle", broken=("a01",)),
    ("t1", "untouched"): Spec("t1", "replay:untouched", audit="fail"),
    ("t2", "reference"): Spec("t2", "replay:reference", modules=(("m1", 9, 10),)),
    ("t2", "subtle"): Spec("t2", "replay:subtle", infra_error=True),
    ("t2", "untouched"): None,
}


async def seed_campaign(db: Path, name: str = "demo") -> dict[tuple[str, str], str]:
    """Plan the campaign and give each started cell its run; return cell -> run id."""
    ids: dict[tuple[str, str], str] = {}
    async with await Store.open(db) as store:
        cells = [PlannedCell(t, f"/tasks/{t}", c.label, 1) for t in ("t1", "t2")
                 for c in CONFIGS]
        await store.campaigns.plan_campaign(
            name,
            file=None,
            source="",
            max_parallel=2,
            retry_limit=0,
            max_cost=None,
            configs=CONFIGS,
            cells=cells,
        )
        for cell in await store.campaigns.cells(name):
            spec = OUTCOMES[(cell.task_id, cell.config)]
            if spec is None:
                continue
            rid = await add_run(store, spec)
            started = await store.campaigns.start_attempt(cell, rid)
            run = await store.runs.require_run(rid)
            state = "done" if run.valid else "failed"
            await store.campaigns.end_attempt(
                started, state, "scored" if run.valid else "infra_error"
            )
            ids[(cell.task_id, cell.config)] = rid
    return ids
