"""demo02 (shelf, http.server → aiohttp) on the three-stage ladder, against a real engine.

Every submission is graded once (module fixture), with short adversary budgets: the HTTP
fuzzer must break ``subtle`` and leave ``reference`` standing within them.

| submission | Stage I | Stage II | Stage III | score |
| untouched | fail | complete (blindness, uncredited) | not run | 0 |
| wrapper | fail | complete (it forwards faithfully) | not run | 0 |
| half | fail | incomplete (writes answer 501) | not run | 0 |
| wrong | pass | incomplete (routing, negotiation) | not run | 0 |
| subtle | pass | complete | >= 1 HTTP fuzz adversary breaks it | 40-90 |
| reference | pass | complete | all six survive | 100 |
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

from ..conftest import BUILTIN_TASKS
from .harness import BASE_IMAGE, Graded, Ladder

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

DEMO02 = BUILTIN_TASKS / "demo02-shelf-httpserver-to-aiohttp"
ADVERSARY_BUDGET_SEC = 15.0
WALL: dict[str, float] = {}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ladder02(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ladder]:
    root = tmp_path_factory.mktemp("ladder02")
    load = load_task(DEMO02)
    assert load.task is not None and load.ok, load.problems
    task = load.task
    state_a = prepare_state_a(DEMO02, task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(4))
    info = await engine.ping()
    assert info.ok, info.error
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    for stage in ("audit", "behavioural", "verification"):
        await images.get(stage)
    store = await Store.open(root / "srb.sqlite3")
    try:
        yield Ladder(engine, store, task, state_a, root)
    finally:
        await store.close()
        engine.close()


async def graded(ladder: Ladder, name: str) -> Graded:
    if name not in ladder.cache:
        started = time.monotonic()
        ladder.cache[name] = await ladder.grade(
            DEMO02 / "submissions" / name, adversary_budget_sec=ADVERSARY_BUDGET_SEC
        )
        WALL[name] = round(time.monotonic() - started, 1)
        print(f"demo02 {name}: {WALL[name]} s, score {ladder.cache[name].envelope.score}")
    return ladder.cache[name]


def rates(got: Graded) -> dict[str, float]:
    return {m["id"]: m["rate"] for m in got.envelope.behavioural["modules"]}


async def test_untouched_is_blind_to_stage_two_and_fails_audit(ladder02: Ladder) -> None:
    env = (await graded(ladder02, "untouched")).envelope
    assert env.audit_gate == "fail" and env.score == 0.0 and env.valid
    assert env.blocked_by == "audit"
    assert env.behavioural["complete"] is True and env.behavioural["credited"] is False
    assert env.verification["ran"] is False


async def test_wrapper_passes_stage_two_but_stage_one_sees_the_proxy(ladder02: Ladder) -> None:
    got = await graded(ladder02, "wrapper")
    env = got.envelope
    assert env.audit_gate == "fail" and env.score == 0.0 and env.valid
    assert env.behavioural["complete"] is True
    detail = await ladder02.store.run_detail(got.run_id)
    failed = {o.gate_id for o in detail.gate_outcomes if o.verdict == "fail"}
    assert {"no-old-framework", "aiohttp-serves-routes", "no-proxy"} <= failed


async def test_half_fails_audit_and_its_writes(ladder02: Ladder) -> None:
    got = await graded(ladder02, "half")
    env = got.envelope
    assert env.audit_gate == "fail" and env.score == 0.0 and env.valid
    assert env.behavioural["complete"] is False
    assert rates(got)["negotiation"] < 1.0 and rates(got)["queries"] == 1.0
    assert env.verification["ran"] is False


async def test_wrong_passes_audit_but_not_stage_two(ladder02: Ladder) -> None:
    got = await graded(ladder02, "wrong")
    env = got.envelope
    assert env.audit_gate == "pass" and env.score == 0.0 and env.valid
    assert env.blocked_by == "behavioural"
    assert rates(got)["routing"] < 1.0 and rates(got)["negotiation"] < 1.0
    assert rates(got)["queries"] == 1.0
    checks = await ladder02.store.grading.checks(got.run_id, "behavioural", "routing")
    slash = [c for c in checks if c.check_id == "trailing-slash"]
    assert slash and slash[0].verdict == "fail" and "308" in (slash[0].summary or "")


async def test_subtle_is_broken_by_the_http_fuzzer(ladder02: Ladder) -> None:
    got = await graded(ladder02, "subtle")
    env = got.envelope
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True
    assert env.valid and 40.0 <= env.score <= 90.0, env.to_json()
    assert env.blocked_by == "verification"
    rounds = await ladder02.store.grading.adversary_rounds(got.run_id)
    assert len(rounds) == 6 and all(r.driver == "fuzz" for r in rounds)
    assert any(r.status == "broken" for r in rounds)
    # issue 32: no round is a harness fault, and the score is what the rounds say
    assert all(r.status in ("broken", "survived") for r in rounds), [
        (r.status, r.notes) for r in rounds]
    assert env.score == 40.0 + 10.0 * sum(r.status == "survived" for r in rounds)
    upheld = [c for c in await ladder02.store.grading.counterexamples(got.run_id)
              if c.verdict == "upheld"]
    assert upheld
    for cx in upheld:
        assert cx.code.startswith("#!/bin/bash") and "SERVICE_URL" in cx.code
        assert cx.exit_a == 0 and cx.exit_b not in (None, 0)
        runs = cx.extra["runs"]
        assert sum(1 for r in runs if r["role"] == "original") == 3
        observed = cx.output_a["observed"], cx.output_b["observed"]
        assert observed[0]["status"] == 400 and observed[1]["status"] != 400


async def test_reference_survives_every_http_adversary(ladder02: Ladder) -> None:
    got = await graded(ladder02, "reference")
    env = got.envelope
    assert env.score == 100.0 and env.valid and env.blocked_by is None, env.to_json()
    rounds = await ladder02.store.grading.adversary_rounds(got.run_id)
    assert [r.status for r in rounds] == ["survived"] * 6
    assert all(r.extra["iterations"] > 0 for r in rounds)
    # A difference that did not hold up (a request timing out on a loaded host) may be
    # recorded; none may be upheld.
    cxs = await ladder02.store.grading.counterexamples(got.run_id)
    assert [c for c in cxs if c.verdict == "upheld"] == []


async def test_wall_times_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a timing assertion: prints the per-submission wall times for the closing note."""
    with capsys.disabled():
        print("demo02 ladder wall times:", WALL)
    assert set(WALL) <= {"untouched", "wrapper", "half", "wrong", "subtle", "reference"}


__all__ = ["Path"]
