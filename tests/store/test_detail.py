"""Grading records and run_detail: everything about a run as one JSON round-trippable object."""

from __future__ import annotations

import asyncio
import json

import pytest

from srb_tui.store import RunDetail, RunNotFound, Store, StoreError

from .conftest import make_run


async def _graded_run(store: Store) -> str:
    run = await make_run(store, model="opus", effort="high", budget_sec=7200)
    for status in ("preparing", "agent", "collecting", "audit"):
        await store.runs.transition(run.id, status)
    await store.infra.record_image(run.id, "agent", tag="srb/lang03-agent", image_id="sha256:aa")
    await store.infra.record_image(run.id, "audit", tag="srb/lang03-audit", digest="sha256:bb")
    await store.infra.record_container(run.id, "agent", container_id="c0ffee", name="srb-x-agent")
    await store.infra.update_container("c0ffee", last_log_ts="2026-11-29T16:40:13Z", exit_code=0)
    await store.logs.append_log_lines(run.id, [("2026-11-29T16:40:13Z", "stdout", "done")])
    votes = [
        {
            "gate_id": "migrated",
            "sample": sample,
            "verdict": "pass" if sample else "fail",
            "confidence": 0.8,
            "reasoning": "…",
            "evidence": [{"path": "submission:src/a.ts", "line": 3, "quote": "x", "note": ""}],
            "downgraded": sample == 0,
        }
        for sample in range(3)
    ]
    await store.grading.record_gate_votes(run.id, votes)
    await store.grading.record_gate_outcomes(
        run.id,
        [{"gate_id": "migrated", "title": "Moved?", "verdict": "pass", "votes_pass": 3}],
    )
    envelope = {"schema": "swerefactor.stage-result/1", "stage": "audit", "status": "pass"}
    await store.grading.record_stage_result(
        run.id,
        "audit",
        "pass",
        started_at="2026-11-29T16:41:00Z",
        duration_sec=12.5,
        fingerprint="0123456789ab",
        result=envelope,
    )
    await store.runs.transition(run.id, "behavioural")
    modules = [
        {
            "id": "cli",
            "title": "CLI",
            "weight": 2,
            "status": "ok",
            "rate": 1.0,
            "passed": 2,
            "scored": 2,
            "duration_sec": 1.5,
        },
        {"id": "api", "status": "timeout", "rate": 0.5, "passed": 1, "failed": 1, "scored": 2},
    ]
    await store.grading.record_module_results(run.id, "behavioural", modules)
    await store.grading.record_checks(
        run.id,
        "behavioural",
        [
            {"id": "help", "verdict": "pass", "weight": 1, "summary": "ok", "detail": {"n": 1}},
            {"id": "exit", "verdict": "fail", "evidence": ["stdout differs"]},
        ],
        module_id="cli",
    )
    await store.grading.record_stage_result(run.id, "behavioural", "complete", result={"units": []})
    await store.runs.transition(run.id, "verification")
    await store.grading.record_adversary_round(
        run.id,
        "adv-1",
        status="broken",
        model="m1",
        driver="scripted",
        focus="parsing",
        started_at="2026-11-29T16:50:00Z",
        duration_sec=30.0,
        candidates=2,
        notes=["n"],
    )
    await store.grading.record_adversary_round(run.id, "adv-2", status="survived")
    await store.grading.record_counterexample(
        run.id,
        "adv-1",
        code="print(1)\n",
        verdict="upheld",
        reason="differs",
        output_a={"stdout": "1"},
        output_b={"stdout": "2"},
        exit_a=0,
        exit_b=1,
        duration_a=0.1,
        duration_b=0.2,
    )
    await store.infra.add_event(run.id, "score", {"score": 50})
    await store.runs.transition(run.id, "scored")
    await store.runs.update_run(
        run.id, valid=True, score=50, max_score=100, stop_reason="completed"
    )
    return run.id


async def test_run_detail_round_trips_through_json(store: Store) -> None:
    run_id = await _graded_run(store)
    detail = await store.run_detail(run_id)
    text = json.dumps(detail.to_json())
    again = RunDetail.from_json(json.loads(text))
    assert again == detail
    assert again.to_json() == detail.to_json()

    assert detail.run.status == "scored" and detail.run.score == 50.0
    assert [s.stage for s in detail.stage_results] == ["audit", "behavioural"]
    assert detail.stage_results[0].result["schema"] == "swerefactor.stage-result/1"
    assert [m.module_id for m in detail.module_results] == ["cli", "api"]
    assert detail.module_results[1].status == "timeout"
    assert [c.check_id for c in detail.checks] == ["help", "exit"]
    assert detail.checks[0].detail == {"n": 1}
    assert [v.downgraded for v in detail.gate_votes] == [True, False, False]
    assert detail.gate_outcomes[0].votes_pass == 3 and detail.gate_outcomes[0].required
    assert [a.status for a in detail.adversary_rounds] == ["broken", "survived"]
    assert detail.counterexamples[0].output_b == {"stdout": "2"}
    assert detail.images[1].digest == "sha256:bb"
    assert detail.containers[0].exit_code == 0
    assert [e.kind for e in detail.events] == ["score"]
    assert detail.log_lines == 1 and detail.last_log_ts == "2026-11-29T16:40:13Z"
    assert detail.transitions[-1].to_status == "scored"


async def test_rerecording_replaces_and_clear_stage_forgets(store: Store) -> None:
    run_id = await _graded_run(store)
    checks = await store.grading.record_checks(
        run_id, "behavioural", [{"id": "only", "verdict": "skip"}], module_id="cli"
    )
    assert [c.check_id for c in checks] == ["only"]
    assert [c.check_id for c in await store.grading.checks(run_id, "behavioural")] == ["only"]
    await store.grading.record_gate_votes(
        run_id, [{"gate_id": "migrated", "sample": 0, "verdict": "pass"}]
    )
    assert [v.verdict for v in await store.grading.gate_votes(run_id)] == ["pass", "pass", "pass"]
    await store.grading.clear_stage(run_id, "verification")
    assert await store.grading.adversary_rounds(run_id) == []
    assert await store.grading.counterexamples(run_id) == []
    assert len(await store.grading.stage_results(run_id)) == 2
    await store.grading.clear_stage(run_id, "audit")
    assert (
        await store.grading.gate_votes(run_id) == []
        and await store.grading.gate_outcomes(run_id) == []
    )
    assert [s.stage for s in await store.grading.stage_results(run_id)] == ["behavioural"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s, r: s.grading.record_checks(r, "behavioural", [{"id": "a", "verdict": "ok"}]),
            "verdict: 'ok' is not one of",
        ),
        (
            lambda s, r: s.grading.record_checks(
                r, "behavioural", [{"id": "a", "verdict": "pass", "x": 1}]
            ),
            "unknown keys x",
        ),
        (
            lambda s, r: s.grading.record_checks(r, "behavioural", [{"verdict": "pass"}]),
            "missing keys id",
        ),
        (
            lambda s, r: s.grading.record_module_results(
                r, "behavioural", [{"id": "m", "status": "done"}]
            ),
            "status: 'done'",
        ),
        (
            lambda s, r: s.grading.record_module_results(
                r, "behavioural", [{"id": "m", "status": "ok", "passed": 1.5}]
            ),
            "passed",
        ),
        (
            lambda s, r: s.grading.record_gate_votes(
                r, [{"gate_id": "g", "sample": 0, "verdict": "pass", "downgraded": "yes"}]
            ),
            "downgraded",
        ),
        (lambda s, r: s.grading.record_adversary_round(r, "a", status="won"), "status: 'won'"),
        (
            lambda s, r: s.grading.record_counterexample(r, "a", code="x", verdict="maybe"),
            "verdict",
        ),
        (
            lambda s, r: s.grading.record_stage_result(r, "audit", "pass", result={1, 2}),
            "not storable",
        ),
        (
            lambda s, r: s.grading.record_stage_result(
                r, "audit", "pass", duration_sec=float("nan")
            ),
            "finite",
        ),
        (lambda s, r: s.infra.add_event(r, ""), "event kind"),
    ],
)
async def test_bad_records_are_refused_with_a_clear_message(
    store: Store, call: object, message: str
) -> None:
    run = await make_run(store)
    with pytest.raises(StoreError, match=message) as caught:
        await call(store, run.id)  # type: ignore[operator]
    assert run.id in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"exit_code": 1}, "no container 'nope' recorded"),
     ({"name": "x"}, "container nope: cannot change name")],
)
async def test_bad_container_updates_name_the_container(
    store: Store, fields: dict[str, object], message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        await store.infra.update_container("nope", **fields)


async def test_records_for_unknown_runs_and_details(store: Store) -> None:
    missing = "r-20990101-000000-0000"
    with pytest.raises(RunNotFound, match=missing):
        await store.run_detail(missing)
    with pytest.raises(RunNotFound):
        await store.grading.record_stage_result(missing, "audit", "pass")
    with pytest.raises(RunNotFound):
        await store.infra.add_event(missing, "x")
    global_event = await store.infra.add_event(None, "reaped", {"container": "abc"})
    assert (await store.infra.events())[-1] == global_event


async def test_one_failing_write_does_not_undo_its_neighbours(store: Store) -> None:
    run = await make_run(store)
    results = await asyncio.gather(
        store.infra.add_event(run.id, "one"),
        store.grading.record_stage_result("r-20990101-000000-0000", "audit", "pass"),
        store.infra.add_event(run.id, "two"),
        store.logs.append_log_lines(run.id, [("2026-01-01T00:00:00Z", "stdout", "x")]),
        return_exceptions=True,
    )
    assert isinstance(results[1], RunNotFound)
    assert [e.kind for e in await store.infra.events(run.id)] == ["one", "two"]
    assert await store.logs.count_log_lines(run.id) == 1


def test_from_json_rejects_unknown_and_missing_keys() -> None:
    with pytest.raises(StoreError, match="unknown keys"):
        RunDetail.from_json({"bogus": 1})
    from srb_tui.store import ImageRecord

    with pytest.raises(StoreError, match="missing key 'tag'"):
        ImageRecord.from_json({"run_id": "r", "role": "agent"})


async def test_latest_score_payloads_and_the_change_mark(store: Store) -> None:
    first = await make_run(store)
    second = await make_run(store)
    before = await store.infra.change_mark()
    await store.infra.add_event(first.id, "score", {"score": 40.0})
    await store.infra.add_event(first.id, "score", {"score": 100.0})  # a re-grade: newest wins
    await store.infra.add_event(second.id, "other", {"score": 1})
    found = await store.infra.latest_payloads(
        "score", [first.id, second.id, "r-20990101-000000-0000"]
    )
    assert found == {first.id: {"score": 100.0}}
    assert await store.infra.change_mark() == before  # events alone do not touch run rows
    await store.runs.update_run(second.id, score=0.0)
    after_update = await store.infra.change_mark()
    assert after_update != before and after_update[0] == before[0]
    await make_run(store)
    assert (await store.infra.change_mark())[0] == before[0] + 1
