"""Real Claude Code and Codex CLI (pinned npm builds) in the demo's agent container, against
a STAND-IN model server behind srb's real gateway and relay.

The stand-in plays scripted sessions (tests/standin/script.py): it performs the demo's
reference migration through the client's own shell tool and ends with the completion
token; other scripts never finish (idle), overspend (budget) or fail upstream
(infrastructure).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from srb_tui.agents.clients import CLIENTS, ensure_installed, resolve_pin
from srb_tui.runner import exec_run, list_managed
from srb_tui.sources import compare_trees
from tests.agents.conftest import SENTINEL, Harness
from tests.conftest import DEMO_TASK

pytestmark = pytest.mark.docker
TASK = DEMO_TASK.name
REFERENCE = DEMO_TASK / "submissions" / "reference"
ADVERSARY_BUDGET = 15.0


async def _assert_one_start_per_round(h: Harness, run_id: str, rounds: int) -> None:
    lines = await h.service.store.agent.stdout_lines_after(run_id, 0)
    starts = [t for _, _, t in lines if t.startswith("@@srb round") and t.endswith("start")]
    assert starts == [f"@@srb round {n} start" for n in range(1, rounds + 1)]


async def _assert_clean(h: Harness, run_id: str) -> None:
    assert await list_managed(h.service.engine, run_id) == []


# Both clients perform the migration; one of them is graded through the whole ladder (the
# grading reads only the collected tree, which the diff shows is the same for both).
@pytest.mark.parametrize("client, graded", [("claude-code", True), ("codex", False)])
async def test_standin_migration_reaches_100_through_the_ladder(
        harness: Harness, client: str, graded: bool) -> None:
    h = harness
    run = await h.service.launch(TASK, f"{client}:standin-migrate", budget_sec=600,
                                 effort="high", max_cost_usd=50)
    done = await h.service.drive(run.id, grade=graded, adversary_budget_sec=ADVERSARY_BUDGET)
    assert done.stop_reason == "completed", done.harness_error
    if graded:
        assert done.status == "scored" and done.valid is True
        assert done.score == 100.0
    else:
        assert done.status == "collecting" and done.score is None
    diff = compare_trees(REFERENCE, h.service.submission_dir(run.id))
    assert diff.identical, diff
    rounds = await h.service.store.agent.agent_rounds(run.id)
    assert [r.round for r in rounds] == [1]
    assert rounds[0].exit_code == 0 and rounds[0].session_id
    assert rounds[0].input_tokens > 0
    events = await h.service.store.agent.agent_events(run.id)
    kinds = [e.kind for e in events]
    assert kinds.count("tool_call") == kinds.count("tool_result") >= 13
    assert kinds[-1] == "result" or "result" in kinds
    raw = h.service.run_dir(run.id) / "agent" / "round-001.jsonl"
    assert raw.is_file() and raw.read_text().count("\n") > 10
    ledger = await h.service.store.ledger.ledger_totals(run.id)
    assert ledger.by_role["agent"].requests >= 14
    assert done.extra["client"]["version"] in ("2.1.220", "0.146.0")
    assert done.extra["agent_loop"]["stop_reason"] == "completed"
    await _assert_one_start_per_round(h, run.id, len(rounds))
    await _assert_clean(h, run.id)


async def test_a_session_that_never_says_the_token_ends_idle(harness: Harness) -> None:
    h = harness
    run = await h.service.launch(TASK, "codex:standin-idle", budget_sec=300)
    done = await h.service.drive(run.id, grade=False)
    assert done.stop_reason == "idle", (done.stop_reason, done.harness_error)
    rounds = await h.service.store.agent.agent_rounds(run.id)
    assert [r.round for r in rounds] == [1, 2, 3]
    assert [r.prompt_kind for r in rounds] == ["instruction", "continue", "continue"]
    assert len({r.session_id for r in rounds}) == 1  # the same session resumed
    await _assert_one_start_per_round(h, run.id, 3)
    assert done.status == "collecting"
    await _assert_clean(h, run.id)


async def test_overspending_ends_with_stop_reason_budget(harness: Harness) -> None:
    h = harness
    run = await h.service.launch(TASK, "codex:standin-overspend", budget_sec=300,
                                 max_cost_usd=50)
    done = await h.service.drive(run.id, grade=False)
    assert done.stop_reason == "budget", (done.stop_reason, done.harness_error)
    assert "budget" in (done.extra["agent_loop"]["detail"] or "")
    assert done.extra["agent_loop"]["ledger"]["cost_usd"] > 50
    await _assert_clean(h, run.id)


@pytest.mark.parametrize("agent", ["codex:standin-500", "claude-code:standin-drop"])
async def test_a_failing_upstream_makes_the_run_invalid_not_zero(
        harness: Harness, agent: str) -> None:
    h = harness
    run = await h.service.launch(TASK, agent, budget_sec=400)
    done = await h.service.drive(run.id)
    assert done.stop_reason == "infrastructure", (done.stop_reason, done.harness_error)
    assert done.status == "infra_error"
    assert done.valid is False and done.score is None
    assert "infrastructure" in (done.harness_error or "")
    rounds = await h.service.store.agent.agent_rounds(run.id)
    assert len(rounds) == 3 and all(r.failed for r in rounds)
    ledger = await h.service.store.ledger.ledger_totals(run.id)
    assert ledger.total.errors >= 3
    await _assert_clean(h, run.id)


async def test_sentinel_key_stays_on_the_host_and_only_the_gateway_answers(
        harness: Harness) -> None:
    h = harness
    run = await h.service.launch(TASK, "claude-code:standin-slow", budget_sec=600)
    driving = asyncio.create_task(h.service.drive(run.id, grade=False))
    handle = None
    for _ in range(600):
        rounds = await h.service.store.agent.agent_rounds(run.id)
        events = await h.service.store.agent.agent_events(run.id)
        if rounds and any(e.kind == "tool_call" for e in events):
            handle = await h.service.agent_phase.find_agent_container(run.id)
            break
        await asyncio.sleep(0.2)
    assert handle is not None, "the first round never got going"
    probe = (
        f"grep -rlsF {SENTINEL} / --exclude-dir=proc --exclude-dir=sys 2>/dev/null"
        " | head -5; echo ENV; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'"
        f" | grep -c {SENTINEL}; echo NET; ls /sys/class/net | tr '\\n' ' '; echo;"
        " (timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8642' && echo GATEWAY-OPEN);"
        " (timeout 3 bash -c 'exec 3<>/dev/tcp/1.1.1.1/443' && echo OUT-OPEN || echo OUT-SHUT);"
        " (timeout 3 bash -c 'exec 3<>/dev/tcp/deb.debian.org/80' && echo DNS-OPEN"
        " || echo DNS-SHUT); env | grep -ci proxy"
    )
    got = await exec_run(h.service.engine, handle, ["bash", "-c", probe], user="0:0")
    text = got.stdout.decode()
    head, _, rest = text.partition("ENV\n")
    assert head.strip() == "", f"files holding the key: {head}"
    assert rest.split("\n")[0].strip() == "0"
    assert "lo" in text.split("NET\n")[1].split()
    assert "eth0" not in text.split("NET\n")[1].split("\n")[0]
    assert "GATEWAY-OPEN" in text and "OUT-SHUT" in text and "DNS-SHUT" in text
    assert text.strip().endswith("0")  # no proxy variables
    done = await driving
    assert done.stop_reason == "completed"
    assert any(s.auth.endswith(SENTINEL) for s in h.standin.seen)  # the gateway put it in
    leaks = subprocess.run(["grep", "-rlaF", SENTINEL, str(h.state)], capture_output=True,
                           text=True, check=False).stdout
    assert leaks == "", f"the key leaked into {leaks}"
    await _assert_clean(h, run.id)


async def test_a_client_whose_version_does_not_match_is_refused(
        harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache entry for 9.9.9 whose binary reports 2.1.220: refused before round 1."""
    cache = tmp_path / "clients"
    entry = cache / "claude-code-9.9.9"
    binary = entry / CLIENTS["claude-code"].binary
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho '2.1.220 (Claude Code)'\n")
    binary.chmod(0o755)
    (entry / ".srb-client.json").write_text(json.dumps(
        {"name": "claude-code", "version": "9.9.9", "sha256": "x", "version_output": ""}))
    monkeypatch.setenv("SRB_CLIENT_CACHE", str(cache))
    h = harness
    run = await h.service.launch(TASK, "claude-code:standin-migrate", budget_sec=120,
                                 client_version="9.9.9")
    done = await h.service.drive(run.id, grade=False)
    assert done.status == "infra_error" and done.valid is False
    assert "not version 9.9.9" in (done.harness_error or "")
    assert await h.service.store.agent.agent_rounds(run.id) == []
    await _assert_clean(h, run.id)


async def test_mini_swe_agent_performs_the_migration_and_submits(harness: Harness) -> None:
    """mini-swe-agent 2.4.6 (PyPI, installed into the cache; the demo image has Python
    3.11) through Chat Completions: its trajectory becomes the round's transcript."""
    await asyncio.to_thread(ensure_installed, resolve_pin("mini-swe-agent", None))
    h = harness
    run = await h.service.launch(TASK, "mini-swe-agent:standin-migrate", budget_sec=300)
    done = await h.service.drive(run.id, grade=False)
    assert done.stop_reason == "completed", (done.stop_reason, done.harness_error)
    rounds = await h.service.store.agent.agent_rounds(run.id)
    assert [(r.round, r.verdict) for r in rounds] == [(1, "submitted")]
    kinds = [e.kind for e in await h.service.store.agent.agent_events(run.id)]
    assert kinds.count("tool_call") >= 14
    assert compare_trees(REFERENCE, h.service.submission_dir(run.id)).identical
    assert (h.service.run_dir(run.id) / "agent" / "trajectory-001.json").is_file()
    await _assert_one_start_per_round(h, run.id, 1)
    await _assert_clean(h, run.id)


@pytest.mark.parametrize("client", ["codex", "claude-code"])
async def test_a_long_tool_result_reaches_the_transcript_from_its_start(
        harness: Harness, client: str) -> None:
    """Issue 35 item 7: a Codex tool result kept only its last ~280 characters. A 3,000-line
    command output (STAND-IN session ``standin-long``) now reaches the transcript from its
    first line: as much as the client's own stream carries, up to srb's 8,000 characters,
    with the length cut said."""
    from srb_tui.agents.streams import MAX_OUTPUT
    from tests.standin.script import LONG_LINES

    h = harness
    run = await h.service.launch(TASK, f"{client}:standin-long", budget_sec=300)
    done = await h.service.drive(run.id, grade=False)
    assert done.stop_reason == "completed", (done.stop_reason, done.harness_error)
    events = await h.service.store.agent.agent_events(run.id)
    results = [e for e in events if e.kind == "tool_result"]
    assert len(results) == 1
    output = str(results[0].data.get("output") or "")
    raw = (h.service.run_dir(run.id) / "agent" / "round-001.jsonl").read_text()
    # what the client itself printed of the command's output (its stream is the ceiling)
    carried = sum(1 for n in range(1, LONG_LINES + 1) if f"line {n}\\n" in raw)
    assert output.startswith("line 1\nline 2\nline 3\n"), output[:200]
    assert carried >= 100, f"{client} carried only {carried} lines"
    kept = output.split("\n… [")[0]
    assert len(kept) >= min(MAX_OUTPUT, len("".join(f"line {n}\n" for n in
                                                    range(1, carried + 1)))) - 64
    if len(kept) >= MAX_OUTPUT:
        assert "more characters in the raw stream]" in output
    print(f"{client}: the stream carried {carried} of {LONG_LINES} lines;"
          f" the transcript keeps {len(kept)} characters")
    await _assert_clean(h, run.id)
