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


async def test_a_workspace_builder_is_reaped_only_once_it_is_stale(
    engine: DockerEngine, make_container: MakeContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace builder (never started, of no run) may be another srb's image being made
    now: a reap keeps it while it is young and removes it once it is older than the grace
    (an srb that died making it left it: seen on a node after a SIGKILL mid-campaign)."""
    from srb_tui.runner import reaper

    builder_run = f"workspace-{new_run_id()[-12:]}"
    builder, _ = await make_container(command=("true",), run_id=builder_run, role="workspace",
                                      labels={LABEL_STORE: "store-w"})
    others = {c.handle.run_id for c in await list_managed(engine)} - {builder_run}
    young = await reap(engine, live_run_ids=others, store_tag="store-w")
    assert young == []
    assert [c.handle.id for c in await list_managed(engine, builder_run)] == [builder.id]
    listed = (await list_managed(engine, builder_run))[0]
    assert listed.created_at is not None and listed.started_at is None

    monkeypatch.setattr(reaper, "BUILDER_GRACE_SEC", 0.0)
    stale = await reap(engine, live_run_ids=others, store_tag="store-w")
    assert [c.handle.id for c in stale] == [builder.id]
    assert await list_managed(engine, builder_run) == []


async def test_a_run_launched_while_a_reap_reads_the_store_keeps_its_container(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    """``srb gc`` beside ``srb run`` in another process: the reaper asks the store which runs
    are live only after it has listed the engine, so a run launched in between (recorded,
    then its container made) is not taken for a finished one. Read the other way round
    (store first, engine second) the new run's agent container was removed under it."""
    mine = {LABEL_STORE: "store-l"}
    over, _ = await make_container(command=("sleep", "infinity"), run_id=new_run_id(),
                                   labels=mine)
    launched = new_run_id()
    asked: list[str] = []

    async def live_now() -> set[str]:
        # The other process launches now: its run is recorded, its container made.
        handle, _ = await make_container(command=("sleep", "infinity"), run_id=launched,
                                         labels=mine)
        await start(engine, handle)
        asked.append(handle.id)
        others = {c.handle.run_id for c in await list_managed(engine)}
        return others - {over.run_id, launched}  # as read before the launch was recorded

    reaped = await reap(engine, live_run_ids=live_now, store_tag="store-l")
    assert [c.handle.id for c in reaped] == [over.id]
    kept = await list_managed(engine, launched)
    assert [c.handle.id for c in kept] == asked and kept[0].running
