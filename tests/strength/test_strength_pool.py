"""A strength campaign on a configured pool (issue 36 item 4): the engines backend of srb's
own engine by its socket (n1) beside an address where nothing listens (n2). The sitting is
placed as a run is — on the node that answers — its node is recorded in the campaign, and
the mutants are graded there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srb_tui.service import strength
from srb_tui.service.app import open_service
from tests.conftest import DEMO_TASK
from tests.nodes.test_pool_upkeep import pool_settings


@pytest.mark.docker
def test_a_campaign_on_a_pool_is_placed_on_the_node_that_answers(tmp_path: Path) -> None:
    settings = pool_settings(tmp_path)

    async def body() -> None:
        async with open_service(settings) as services:
            load = services.catalog.find(DEMO_TASK.name)
            assert load is not None and load.task is not None
            seen: list[str] = []
            campaign, added, graded, panelled = await strength.run_campaign(
                services, load.task, asked=2, seed=11, stage_iii=False,
                on_mutant=lambda row, outcome: seen.append(row.mutant_id))
            assert (added, graded, panelled) == (2, 2, 0) and seen == ["m001", "m002"]
            store = await services.store()
            stored = await store.strength.campaign(campaign.id)
            assert stored is not None and stored.node == "n1"
            assert stored.baseline is not None and stored.baseline["state_a_sec"] > 0
            rows = await store.strength.mutants(campaign.id)
            assert all(r.stage_ii in ("killed", "survived", "invalid") for r in rows)

    asyncio.run(body())
