"""After a restart: managed containers are found by label; dead runs reaped, live kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from srb_tui.runner import (
    LABEL_STORE,
    DockerEngine,
    inspect_state,
    list_managed,
    reap,
    reattach,
    start,
)
from tests.runner.conftest import MakeContainer, new_run_id

pytestmark = pytest.mark.docker


async def test_reap_dead_and_reattach_live(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    live_run, dead_run = new_run_id(), new_run_id()
    mine = {LABEL_STORE: "store-a"}
    live, _ = await make_container(command=("sleep", "infinity"), run_id=live_run, labels=mine)
    dead, _ = await make_container(command=("sleep", "infinity"), run_id=dead_run, labels=mine)
    dead_stage, _ = await make_container(
        command=("sleep", "infinity"), run_id=dead_run, role="audit"
    )  # unlabelled (as stage containers were): owned because store-a knows the run
    foreign, _ = await make_container(
        command=("sleep", "infinity"), run_id=dead_run, role="relay",
        labels={LABEL_STORE: "store-b"},
    )  # another store's container of a run with the same id (a copied store)
    for h in (live, dead, dead_stage, foreign):
        await start(engine, h)

    ours = {
        c.handle.id for c in await list_managed(engine) if c.handle.run_id in (live_run, dead_run)
    }
    assert ours == {live.id, dead.id, dead_stage.id, foreign.id}
    assert {c.handle.role for c in await list_managed(engine, dead_run, store_tag="store-a")
            } == {"agent", "audit"}

    others = {c.handle.run_id for c in await list_managed(engine)} - {live_run, dead_run}
    reaped = await reap(engine, live_run_ids={live_run, *others}, store_tag="store-a",
                        known_run_ids={live_run, dead_run})
    assert {c.handle.id for c in reaped} == {dead.id, dead_stage.id}
    assert [c.handle.id for c in await list_managed(engine, dead_run)] == [foreign.id]

    back = [c for c in await reattach(engine, {live_run}) if c.handle.run_id == live_run]
    assert [c.handle for c in back] == [live]
    assert back[0].running
    state = await inspect_state(engine, live)
    assert back[0].started_at == state.started_at
    assert back[0].started_at is not None and back[0].started_at <= datetime.now(UTC)
