"""Strength campaigns in a real SQLite store (issue 36): planned whole, resumable (what
has an outcome is never planned again), catches per adversary, and equivalent marks that
belong to the task and the mutant's key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.store import Store, StoreError


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "srb.sqlite3")
    try:
        yield opened
    finally:
        await opened.close()


def _mutant(n: int) -> dict[str, object]:
    return {"id": f"m00{n}", "key": f"k{n}", "path": "a.py", "line": n, "operator": "constant"}


async def _plan(store: Store, cid: str = "s1", count: int = 3, seed: int = 7):
    return await store.strength.plan(
        cid, task_id="demo", task_path="tasks/demo", of_tree="state-a", asked=count, seed=seed,
        panel=["f1", "f2"], budget_sec=30.0, mutants=[_mutant(n) for n in range(1, count + 1)])


async def test_a_plan_is_whole_and_a_second_plan_adds_nothing(store: Store) -> None:
    campaign, added = await _plan(store)
    assert added == 3 and campaign.panel == ("f1", "f2") and campaign.status == "planned"
    await store.strength.record_stage_ii("s1", "m001", "killed", {"failing": ["cli::c1"]})
    again, added = await _plan(store)
    assert added == 0 and again == campaign
    rows = await store.strength.mutants("s1")
    assert [(r.mutant_id, r.stage_ii) for r in rows] == [
        ("m001", "killed"), ("m002", None), ("m003", None)]
    assert rows[0].stage_ii_doc == {"failing": ["cli::c1"]}
    with pytest.raises(StoreError, match=r"s1 is of demo .* seed 7.*seed 8"):
        await _plan(store, seed=8)


async def test_stage_iii_only_on_survivors_and_catches_are_replaced(store: Store) -> None:
    await _plan(store)
    await store.strength.record_stage_ii("s1", "m002", "survived", {})
    with pytest.raises(StoreError, match="m001 is not a Stage II survivor"):
        await store.strength.record_stage_iii("s1", "m001", None, {})
    await store.strength.record_stage_iii("s1", "m002", "r-1", {"f1": ("broken", 4),
                                                               "f2": ("survived", None)})
    await store.strength.record_stage_iii("s1", "m002", "r-2", {"f1": ("broken", 9),
                                                               "f2": ("broken", 10)})
    row = (await store.strength.mutants("s1"))[1]
    assert row.stage_iii_done and row.stage_iii_run == "r-2"
    assert row.catches == {"f1": "broken", "f2": "broken"}
    with pytest.raises(StoreError, match="no mutant m009"):
        await store.strength.record_stage_ii("s1", "m009", "killed", {})
    with pytest.raises(StoreError, match="'lost' is not one of"):
        await store.strength.record_stage_ii("s1", "m001", "lost", {})


async def test_an_equivalent_mark_holds_for_the_tasks_later_campaigns(store: Store) -> None:
    await _plan(store)
    await store.strength.mark_equivalent("demo", "k3", by="ada", reason="dead branch")
    await _plan(store, cid="s2", count=3, seed=7)
    for cid in ("s1", "s2"):
        marks = {r.mutant_id: r.equivalent for r in await store.strength.mutants(cid)}
        assert marks["m003"] is not None and marks["m003"].marked_by == "ada"
        assert marks["m001"] is None
    with pytest.raises(StoreError, match="say who marks it and why"):
        await store.strength.mark_equivalent("demo", "k1", by="", reason="x")
    assert await store.strength.unmark_equivalent("demo", "k3") is True
    assert all(r.equivalent is None for r in await store.strength.mutants("s1"))
    assert {c.id for c in await store.strength.campaigns("demo")} == {"s1", "s2"}
    assert await store.strength.campaigns("other") == []
