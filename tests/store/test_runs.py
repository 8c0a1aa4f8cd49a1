"""Runs: creation, whitelisted updates, notes, listing with filters/sort/paging, deletion."""

from __future__ import annotations

import asyncio
import re

import pytest

from srb_tui.store import RunNotFound, Store, StoreError

from .conftest import make_run


async def test_create_run_fills_defaults_and_validates(store: Store) -> None:
    run = await make_run(
        store, model="opus", effort="high", budget_sec=3600, notes=["first"], extra={"k": 1}
    )
    assert re.fullmatch(r"r-\d{8}-\d{6}-[0-9a-f]{4}", run.id)
    assert (run.status, run.model, run.budget_sec, run.notes) == (
        "pending",
        "opus",
        3600.0,
        ("first",),
    )
    assert run.extra == {"k": 1} and run.valid is None
    with pytest.raises(StoreError, match="task_id"):
        await store.runs.create_run(task_id="", task_path="x", agent="replay")
    with pytest.raises(StoreError, match="budget_sec"):
        await make_run(store, budget_sec=True)
    with pytest.raises(StoreError, match="does not look like"):
        await make_run(store, run_id="run-1")


async def test_given_run_id_must_be_unused(store: Store) -> None:
    run = await make_run(store, run_id="r-20261129-164012-ab12")
    assert run.id == "r-20261129-164012-ab12"
    with pytest.raises(StoreError, match="already exists"):
        await make_run(store, run_id="r-20261129-164012-ab12")


async def test_update_run_whitelist(store: Store) -> None:
    run = await make_run(store)
    updated = await store.runs.update_run(
        run.id,
        valid=True,
        score=50,
        max_score=100,
        grader_fingerprint="0123456789ab",
        submission_files=12,
        submission_bytes=3456,
        phase="round 2",
        extra={"digest": "sha256:x"},
    )
    assert (updated.valid, updated.score, updated.submission_files) == (True, 50.0, 12)
    assert updated.updated_at >= run.updated_at
    with pytest.raises(StoreError, match="use transition"):
        await store.runs.update_run(run.id, status="scored")
    with pytest.raises(StoreError, match="cannot change id"):
        await store.runs.update_run(run.id, id="r-x")
    with pytest.raises(StoreError, match="valid"):
        await store.runs.update_run(run.id, valid=1)
    with pytest.raises(StoreError, match="submission_files"):
        await store.runs.update_run(run.id, submission_files=-1)
    with pytest.raises(RunNotFound):
        await store.runs.update_run("r-20990101-000000-0000", phase="x")
    again = await store.runs.require_run(run.id)
    assert again.score == 50.0 and again.status == "pending"


async def test_add_run_note_appends(store: Store) -> None:
    run = await make_run(store, notes=["a"])
    await store.runs.add_run_note(run.id, "b")
    assert (await store.runs.add_run_note(run.id, "c")).notes == ("a", "b", "c")


async def _fixture_runs(store: Store) -> dict[str, str]:
    ids: dict[str, str] = {}
    specs = [
        ("a", "lang03", "replay", None, None),
        ("b", "lang03", "claude-code", "opus", 100.0),
        ("c", "build03", "claude-code", "sonnet", 40.0),
        ("d", "build03", "codex", "gpt-5", 0.0),
        ("e", "web01", "untouched", None, None),
    ]
    for name, task, agent, model, score in specs:
        run = await make_run(store, task_id=task, agent=agent, model=model)
        if score is not None:
            await store.runs.update_run(run.id, score=score)
        ids[name] = run.id
    for status in ("preparing", "agent"):
        await store.runs.transition(ids["b"], status)
    await store.runs.transition(ids["c"], "cancelled")
    await store.runs.add_run_note(ids["d"], "Flaky_Docker% here")
    return ids


async def test_list_runs_filters_and_counts(store: Store) -> None:
    ids = await _fixture_runs(store)
    names = {v: k for k, v in ids.items()}

    async def listed(**filters: object) -> list[str]:
        runs = await store.runs.list_runs(sort="id", **filters)  # type: ignore[arg-type]
        count = await store.runs.count_runs(**filters)  # type: ignore[arg-type]
        assert count == len(runs)
        return sorted(names[r.id] for r in runs)

    assert await listed() == ["a", "b", "c", "d", "e"]
    assert await listed(task="lang03") == ["a", "b"]
    assert await listed(task=["lang03", "web01"]) == ["a", "b", "e"]
    assert await listed(status="pending") == ["a", "d", "e"]
    assert await listed(status=["agent", "cancelled"]) == ["b", "c"]
    assert await listed(agent="claude-code", task="build03") == ["c"]
    assert await listed(model="gpt-5") == ["d"]
    assert await listed(text="SONNET") == ["c"]  # case-insensitive
    assert await listed(text="_docker%") == ["d"]  # LIKE wildcards are literal
    assert await listed(text="%") == ["d"]
    assert await listed(text=ids["e"][-4:]) == ["e"]
    with pytest.raises(StoreError, match="unknown run status"):
        await store.runs.list_runs(status="done")


async def test_list_runs_sort_and_paging(store: Store) -> None:
    ids = await _fixture_runs(store)
    names = {v: k for k, v in ids.items()}
    by_score = [names[r.id] for r in await store.runs.list_runs(sort="-score")]
    assert by_score[:3] == ["b", "c", "d"] and set(by_score[3:]) == {"a", "e"}  # NULLs last
    ascending = [names[r.id] for r in await store.runs.list_runs(sort="score")]
    assert ascending[:3] == ["d", "c", "b"]
    by_task = [r.task_id for r in await store.runs.list_runs(sort="task")]
    assert by_task == sorted(by_task)
    page1 = await store.runs.list_runs(sort="id", limit=2)
    page2 = await store.runs.list_runs(sort="id", limit=2, offset=2)
    page3 = await store.runs.list_runs(sort="id", limit=2, offset=4)
    everything = [r.id for r in await store.runs.list_runs(sort="id", limit=None)]
    assert [r.id for r in page1 + page2 + page3] == everything == sorted(ids.values())
    with pytest.raises(StoreError, match="unknown sort key"):
        await store.runs.list_runs(sort="-nope")
    with pytest.raises(StoreError, match="negative"):
        await store.runs.list_runs(offset=-1)


async def test_created_at_sort_is_newest_first_by_default(store: Store) -> None:
    first = await make_run(store)
    second = await make_run(store)
    listed = [r.id for r in await store.runs.list_runs()]
    assert listed.index(second.id) < listed.index(first.id)


async def test_live_runs_and_delete(store: Store) -> None:
    ids = await _fixture_runs(store)
    live = {r.id for r in await store.runs.live_runs()}
    assert live == set(ids.values()) - {ids["c"]}
    await store.logs.append_log_lines(ids["a"], [("2026-01-01T00:00:00Z", "stdout", "x")])
    assert await store.runs.delete_run(ids["a"]) is True
    assert await store.runs.delete_run(ids["a"]) is False
    assert await store.runs.get_run(ids["a"]) is None
    assert await store.logs.count_log_lines(ids["a"]) == 0
    assert await store.runs.transitions(ids["a"]) == []


async def test_a_unique_prefix_names_a_run_and_an_ambiguous_one_lists_candidates(
    store: Store,
) -> None:
    from srb_tui.store.errors import AmbiguousRunId

    first, second = await make_run(store), await make_run(store)
    assert await store.runs.resolve_run_id(first.id) == first.id
    common = 0
    while first.id[common] == second.id[common]:
        common += 1
    assert await store.runs.resolve_run_id(first.id[: common + 1]) == first.id
    with pytest.raises(AmbiguousRunId) as caught:
        await store.runs.resolve_run_id(first.id[:common])
    assert first.id in str(caught.value) and second.id in str(caught.value)
    with pytest.raises(RunNotFound):
        await store.runs.resolve_run_id("no-such-run")
    with pytest.raises(RunNotFound):
        await store.runs.resolve_run_id(first.id.upper())


async def test_merge_extra_changes_only_its_keys_in_one_transaction(store: Store) -> None:
    """Concurrent writers of different keys of ``extra`` lose nothing (issue 22: eight places
    read the whole document, changed a key and wrote it all back)."""
    run = await make_run(store)
    await store.runs.merge_extra(run.id, {"lease": {"pid": 1}, "table": {"a": 1}})
    await asyncio.gather(
        *(store.runs.merge_extra(run.id, {f"k{i}": i}) for i in range(20)),
        *(store.runs.merge_extra(run.id, into={"table": {f"r{i}": i}}) for i in range(20)),
    )
    done = await store.runs.merge_extra(run.id, drop=["lease", "never-there"], stop_reason="idle")
    assert done.stop_reason == "idle"
    assert done.extra == {"table": {"a": 1, **{f"r{i}": i for i in range(20)}},
                          **{f"k{i}": i for i in range(20)}}
    with pytest.raises(StoreError, match="merge_extra cannot change extra, status"):
        await store.runs.merge_extra(run.id, extra={}, status="scored")
