"""Run lifecycle: legal and illegal transitions, timestamps, re-grading, races."""

from __future__ import annotations

import asyncio

import pytest

from srb_tui.store import (
    IllegalTransition,
    RunNotFound,
    Store,
    StoreError,
    is_legal,
    next_statuses,
)

from .conftest import make_run

HAPPY_PATH = [
    "preparing",
    "agent",
    "collecting",
    "audit",
    "behavioural",
    "verification",
    "scored",
]


async def test_happy_path_records_every_transition(store: Store) -> None:
    run = await make_run(store)
    assert run.status == "pending" and run.started_at is None
    for status in HAPPY_PATH:
        record = await store.runs.transition(run.id, status, reason=f"to {status}")
        assert record.to_status == status
    done = await store.runs.require_run(run.id)
    assert done.status == "scored"
    assert done.started_at is not None and done.finished_at is not None
    history = await store.runs.transitions(run.id)
    assert [(t.from_status, t.to_status) for t in history] == list(
        zip([None, "pending", *HAPPY_PATH[:-1]], ["pending", *HAPPY_PATH], strict=True)
    )
    assert history[1].reason == "to preparing"


@pytest.mark.parametrize(
    ("path", "illegal"),
    [
        ([], "agent"),  # skipping preparing
        ([], "scored"),
        (["preparing", "agent"], "preparing"),  # backwards
        (["preparing", "agent", "collecting"], "verification"),  # skipping stages
        (["preparing", "cancelled"], "preparing"),  # out of a final state
        (["preparing", "infra_error"], "audit"),
        (["preparing", "cancelled"], "infra_error"),
        (HAPPY_PATH, "agent"),  # re-grade only from a stage
        (HAPPY_PATH, "cancelled"),
        ([], "pending"),  # self transition
    ],
)
async def test_illegal_transitions_are_refused_and_change_nothing(
    store: Store, path: list[str], illegal: str
) -> None:
    run = await make_run(store)
    for status in path:
        await store.runs.transition(run.id, status)
    before = await store.runs.transitions(run.id)
    with pytest.raises(IllegalTransition) as caught:
        await store.runs.transition(run.id, illegal)
    assert run.id in str(caught.value) and illegal in str(caught.value)
    assert (await store.runs.require_run(run.id)).status == (path[-1] if path else "pending")
    assert await store.runs.transitions(run.id) == before


@pytest.mark.parametrize("stage", ["pending", "agent", "audit", "verification"])
async def test_side_exits_from_any_live_state(store: Store, stage: str) -> None:
    run = await make_run(store)
    for status in HAPPY_PATH[: HAPPY_PATH.index(stage) + 1] if stage != "pending" else []:
        await store.runs.transition(run.id, status)
    await store.runs.transition(run.id, "infra_error", reason="docker went away")
    failed = await store.runs.require_run(run.id)
    assert failed.status == "infra_error" and failed.finished_at is not None


async def test_grading_may_end_early_and_scored_runs_can_be_regraded(store: Store) -> None:
    run = await make_run(store)
    for status in HAPPY_PATH[:5]:  # up to behavioural
        await store.runs.transition(run.id, status)
    await store.runs.transition(run.id, "scored", reason="stage II incomplete")
    await store.runs.transition(run.id, "audit", reason="re-grade")
    regrading = await store.runs.require_run(run.id)
    assert regrading.status == "audit" and regrading.finished_at is None
    await store.runs.transition(run.id, "scored")
    assert (await store.runs.require_run(run.id)).finished_at is not None


async def test_expect_guards_against_a_lost_race(store: Store) -> None:
    run = await make_run(store)
    await store.runs.transition(run.id, "preparing")
    with pytest.raises(IllegalTransition):
        await store.runs.transition(run.id, "agent", expect="pending")
    await store.runs.transition(run.id, "agent", expect="preparing")


async def test_concurrent_cancel_and_advance_leave_one_consistent_history(store: Store) -> None:
    run = await make_run(store)
    await store.runs.transition(run.id, "preparing")
    results = await asyncio.gather(
        store.runs.transition(run.id, "agent", expect="preparing"),
        store.runs.transition(run.id, "cancelled", expect="preparing"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, IllegalTransition) for r in results) == 1
    final = await store.runs.require_run(run.id)
    history = await store.runs.transitions(run.id)
    assert history[-1].to_status == final.status


async def test_unknown_run_and_unknown_status(store: Store) -> None:
    with pytest.raises(RunNotFound, match="r-20990101-000000-dead"):
        await store.runs.transition("r-20990101-000000-dead", "preparing")
    run = await make_run(store)
    with pytest.raises(StoreError, match="unknown status 'running'"):
        await store.runs.transition(run.id, "running")


def test_lifecycle_table() -> None:
    assert is_legal("pending", "preparing")
    assert not is_legal("scored", "scored")
    assert next_statuses("collecting") == ("audit", "cancelled", "infra_error")
    assert next_statuses("cancelled") == ()
    assert set(next_statuses("scored")) == {"audit", "behavioural", "verification"}
    # issue 35 item 19: a resumed grading steps back to an earlier stage, never via scored
    assert set(next_statuses("behavioural")) == {"audit", "verification", "scored",
                                                 "cancelled", "infra_error"}
    assert set(next_statuses("verification")) == {"audit", "behavioural", "scored",
                                                  "cancelled", "infra_error"}
    assert not is_legal("audit", "verification")


def test_a_grading_resumed_in_a_later_stage_goes_back_without_reading_as_scored() -> None:
    """Issue 35 item 19: the ladder's chain from a run left in `behavioural` back to
    `audit` (a resume that grades from Stage I again) used to be behavioural → scored
    → audit ("passing through to audit")."""
    from srb_tui.service.grading.ladder import _path

    assert _path("behavioural", "audit") == ["audit"]
    assert _path("verification", "behavioural") == ["behavioural"]
    assert _path("collecting", "verification") == ["audit", "behavioural", "verification"]
    assert _path("scored", "audit") == ["audit"]
