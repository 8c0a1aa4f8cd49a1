"""Stage III adversaries that are the real clients (issue 25), against the STAND-IN model
server (tests/standin, not a vendor API) behind srb's real gateway, on a real engine.

The demo task is copied with a probe of its own: the clients play verifiers through the
stand-in's ``standin-verify`` / ``standin-look`` / ``standin-hostile`` sessions, in a lane
container each, handing candidates in with the lane's ``try_test`` and ``report``. The
default tier runs one case (Claude Code finds `subtle`'s difference, upheld 3/3); the rest
need ``SRB_FULL_AGENTIC=1``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.gateway import Gateway, load_gateway_config
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.service.events import EventBus
from srb_tui.service.run.orchestrator import RunService
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS
from tests.standin.server import StandIn

from .conftest import PRICES, gateway_environ

pytestmark = [pytest.mark.docker]

TASK = "demo01-csvtab-python-to-node"
FULL = pytest.mark.skipif(os.environ.get("SRB_FULL_AGENTIC") != "1",
                          reason="set SRB_FULL_AGENTIC=1 for the slower client lanes")
HEAD = """schema = "swerefactor.verification-probe/1"
task = "demo01-csvtab-python-to-node"
prompt = "prompt.txt"
candidate_command = ["bash", "run-candidate.sh"]
"""
LANE = """
[[adversary]]
id = "{id}"
model = "{model}"
driver = "{driver}"
budget_sec = {budget}
[adversary.metadata]
focus = "control characters in table cells"
seed = {seed}
"""


def _probe(lanes: list[tuple[str, str, str]], budget: int) -> str:
    source = (BUILTIN_TASKS / TASK / "tests" / "verification" / "probe.toml").read_text()
    body = source[source.index("[scope]"):source.index("[[adversary]]")]
    return HEAD + "\n" + body + "".join(
        LANE.format(id=i, model=m, driver=d, budget=budget, seed=n + 1)
        for n, (i, m, d) in enumerate(lanes))


def task_copy(root: Path, lanes: list[tuple[str, str, str]], budget: int = 240) -> Path:
    dest = root / TASK
    shutil.copytree(BUILTIN_TASKS / TASK, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "tests" / "verification" / "probe.toml").write_text(_probe(lanes, budget))
    evaluation = dest / "tests" / "evaluation.toml"
    text = evaluation.read_text().replace(
        "verification_models = 6", f"verification_models = {len(lanes)}").replace(
        "points_per_survived_model = 10.0",
        f"points_per_survived_model = {60.0 / len(lanes)!r}")
    evaluation.write_text(text)
    return root


@pytest.fixture
async def service_for(tmp_path: Path, standin: StandIn, installed_clients: None
                      ) -> AsyncIterator[object]:
    made: list[tuple[Store, Gateway, DockerEngine]] = []

    async def make(lanes: list[tuple[str, str, str]]) -> RunService:
        tasks = task_copy(tmp_path / f"tasks{len(made)}", lanes)
        state = tmp_path / f"state{len(made)}"
        state.mkdir()
        (state / "config.toml").write_text(PRICES, encoding="utf-8")
        settings = Settings(task_roots=(tasks,), state_dir=state)
        engine = DockerEngine(RunnerPool(4))
        store = await Store.open(settings.db_path)
        config = load_gateway_config(state, environ=gateway_environ(standin))
        gateway = await Gateway.start(config, store, state / "gateway")
        made.append((store, gateway, engine))
        service = RunService(settings, store, engine, EventBus())
        service.gateway = gateway
        return service

    yield make
    for store, gateway, engine in made:
        await gateway.close()
        await store.close()
        engine.close()
        engine.pool.shutdown()


async def _verify(service: RunService, submission: str) -> tuple[str, float]:
    run = await service.launch(TASK, f"replay:{submission}")
    done = await service.drive(run.id, grade=False)
    assert done.stop_reason == "completed", done.harness_error
    clock = time.monotonic()
    await service.regrade(run.id, ["verification"], force=True)
    return run.id, time.monotonic() - clock


async def _shown_while_held(service: RunService, run_id: str, want: str) -> list[str]:
    """The lane's stored transcript (what the Verification tab shows) once it holds a line
    starting with ``want``, while the session is still running."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for lane in await service.store.grading.adversary_rounds(run_id):
            tail = [str(t) for t in (lane.extra or {}).get("transcript_tail") or []]
            if lane.status == "running" and any(t.startswith(want) for t in tail):
                return tail
        await asyncio.sleep(0.1)  # polling the store; the session is held meanwhile
    raise AssertionError(f"the lane's live transcript never showed {want!r}")


async def test_claude_code_finds_subtles_difference_upheld_3_of_3(service_for,
                                                                  standin: StandIn) -> None:
    service = await service_for([("cc-verify", "standin-verify", "claude-code")])
    run = await service.launch(TASK, "replay:subtle")
    done = await service.drive(run.id, grade=False)
    assert done.stop_reason == "completed", done.harness_error
    run_id, clock = run.id, time.monotonic()
    # The stand-in keeps its second answer back until the client's first tool call is on
    # the lane's record: the transcript is parsed as the client prints it (item 5), not
    # when its session ends.
    grading = asyncio.create_task(service.regrade(run_id, ["verification"], force=True))
    try:
        with standin.holding("verify", 1):
            live = await _shown_while_held(service, run_id, "Bash: id -un && ls /srb/original")
        await grading
    finally:
        grading.cancel()
    took = time.monotonic() - clock
    assert not any(line.startswith("try_test") for line in live), live
    (lane,) = await service.store.grading.adversary_rounds(run_id)
    transcript = service.run_dir(run_id) / "verification" / "round-cc-verify.jsonl"
    assert lane.driver == "claude-code"
    assert lane.status == "broken", (lane.notes, lane.extra, transcript.read_text()[-3000:])
    (try1,) = lane.extra["try_results"]
    assert try1["sides"] == {"original": "pass", "submission": "fail"}
    (cx,) = await service.store.grading.counterexamples(run_id)
    assert cx.verdict == "upheld" and "reproduced 3 times" in (cx.reason or "")
    assert "caret" in cx.code
    kinds = transcript.read_text().count('"kind": "tool_call"')
    assert kinds >= 4, transcript.read_text()[:2000]
    # its shell commands ran as the runner, not as the client (issue 25 item 3), and its
    # own plain try_test/report calls were still credited to it (the try above, the report)
    assert "srb-runner" in transcript.read_text(), transcript.read_text()[:3000]
    ledger = await service.store.ledger.ledger_totals(run_id)
    spent = ledger.by_role["adversary"]
    assert spent.requests >= 5
    print(f"\nclaude-code lane on subtle: stage {took:.1f} s, lane {lane.duration_sec} s, "
          f"{spent.requests} gateway requests, ledger {spent.to_json()}")


@FULL
async def test_codex_finds_nothing_on_reference_and_survives(service_for) -> None:
    service = await service_for([("cx-verify", "standin-verify", "codex"),
                                 ("cc-look", "standin-look", "claude-code")])
    run_id, took = await _verify(service, "reference")
    lanes = {r.adversary_id: r for r in await service.store.grading.adversary_rounds(run_id)}
    assert lanes["cx-verify"].status == "survived", lanes["cx-verify"].notes
    text = (service.run_dir(run_id) / "verification" / "round-cx-verify.jsonl").read_text()
    assert text.count("\"kind\": \"try\"") == 1, text[-2000:]
    assert "srb-runner" in text, text[:3000]  # Codex's commands ran as the runner too
    assert lanes["cx-verify"].extra["try_results"][0]["sides"] == {
        "original": "pass", "submission": "pass"}
    assert lanes["cc-look"].status == "survived", lanes["cc-look"].notes
    assert all(c.verdict != "upheld" for c in await service.store.grading.counterexamples(run_id))
    print(f"\nreference: stage {took:.1f} s, "
          + ", ".join(f"{k} {v.duration_sec} s" for k, v in lanes.items()))


@FULL
async def test_a_hostile_client_is_refused_and_recorded(service_for) -> None:
    service = await service_for([("cc-hostile", "standin-hostile", "claude-code")])
    run_id, _took = await _verify(service, "subtle")
    (lane,) = await service.store.grading.adversary_rounds(run_id)
    assert lane.status == "survived", (lane.notes, lane.extra)
    (cx,) = await service.store.grading.counterexamples(run_id)
    assert cx.verdict == "rejected" and "out of scope" in (cx.reason or ""), cx.reason
    assert any(n.startswith("refused: try 1") for n in lane.notes), lane.notes
    text = (service.run_dir(run_id) / "verification" / "round-cc-hostile.jsonl").read_text()
    assert "sandbox.json: No such file" in text or "No such file" in text
    assert "Read-only file system" in text or "Permission denied" in text
    assert "no-dns" in text
    # held apart from the client: the commands ran as the runner, the client's HOME was
    # closed to them, no readable process held a token, a report from a script was refused
    assert "srb-runner" in text and "token-bearing env lines: 0" in text, text[-4000:]
    assert "cannot open directory '/srb/lane/home'" in text or "Permission denied" in text
    assert "count only when the client runs them itself" in text, text[-4000:]
    assert "forged" not in (cx.reason or "") and lane.extra.get("claim") != "forged"


@FULL
async def test_a_mixed_panel_is_scored_as_the_sum_of_its_lanes(service_for) -> None:
    service = await service_for([("f01", "fuzz", "fuzz"), ("s01", "scripted", "scripted"),
                                 ("cc", "standin-verify", "claude-code"),
                                 ("cx", "standin-look", "codex")])
    run_id, _took = await _verify(service, "subtle")
    lanes = {r.adversary_id: r.status for r in await service.store.grading.adversary_rounds(run_id)}
    assert lanes["cc"] == "broken" and lanes["cx"] == "survived", lanes
    results = {r.stage: r for r in await service.store.grading.stage_results(run_id)}
    meta = (results["verification"].result or {}).get("metadata") or {}
    assert meta.get("models_survived", 0) + meta.get("models_broken", 0) + \
        meta.get("models_errored", 0) == 4
