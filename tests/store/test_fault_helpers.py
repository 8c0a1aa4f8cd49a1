"""The store's helpers for faults: an atomic claim of a run (the driver lease), the
recorded removal of a container, and which run ids a store knows (the reaper's test)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from srb_tui.store import Store
from tests.store.conftest import make_run


async def test_claim_extra_lets_exactly_one_claimant_win(store: Store) -> None:
    run = await make_run(store, extra={"keep": 1})
    held = {"pid": 1, "host": "h"}
    first = await store.runs.claim_extra(run.id, "driver", held, held=lambda _v: True)
    assert first is None  # nothing held it: claimed
    second = await store.runs.claim_extra(run.id, "driver", {"pid": 2}, held=lambda _v: True)
    assert second == held  # still held: the holder is returned, nothing written
    stale = await store.runs.claim_extra(run.id, "driver", {"pid": 3}, held=lambda _v: False)
    assert stale is None  # a dead holder does not hold
    extra = (await store.runs.require_run(run.id)).extra
    assert extra == {"keep": 1, "driver": {"pid": 3}}


async def test_claim_extra_from_two_stores_on_one_file(db_path: Path, store: Store) -> None:
    run = await make_run(store)
    async with await Store.open(db_path) as other:
        results = await asyncio.gather(
            store.runs.claim_extra(run.id, "driver", {"pid": 10}, held=lambda _v: True),
            other.runs.claim_extra(run.id, "driver", {"pid": 20}, held=lambda _v: True),
        )
    assert sorted(r is None for r in results) == [False, True]  # one won, one was told


async def test_container_removal_is_recorded_once(store: Store) -> None:
    run = await make_run(store)
    await store.infra.record_container(run.id, "agent", container_id="c1", name="srb-x-agent")
    assert await store.infra.mark_container_removed("c1") is True
    first = (await store.infra.containers(run.id))[0].removed_at
    assert first is not None
    assert await store.infra.mark_container_removed("c1") is False  # already marked: kept
    assert (await store.infra.containers(run.id))[0].removed_at == first
    assert await store.infra.mark_container_removed("never-recorded") is False
    assert await store.infra.containers(run.id, present_only=True) == []


async def test_known_run_ids(store: Store) -> None:
    a, b = await make_run(store), await make_run(store)
    many = [f"r-20000101-000000-{i:04x}" for i in range(1200)]  # more than one chunk
    assert await store.runs.known_run_ids([a.id, b.id, *many]) == {a.id, b.id}
    assert await store.runs.known_run_ids([]) == set()
