"""Agent specifications and the round loop's four stop reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.agents import AgentSpecError, RoundResult, parse_agent_spec, plan_agent, run_rounds
from tests.conftest import DEMO_TASK


def test_replay_by_name_resolves_in_submissions() -> None:
    spec = parse_agent_spec("replay:reference", DEMO_TASK)
    assert spec.replay_tree == (DEMO_TASK / "submissions" / "reference").resolve()
    plan = plan_agent(spec)
    assert plan.uploads[0].source == spec.replay_tree
    assert plan.uploads[0].dest.startswith("/workspace/")


def test_replay_unknown_name_lists_available() -> None:
    with pytest.raises(AgentSpecError) as err:
        parse_agent_spec("replay:nope", DEMO_TASK)
    assert "this task has:" in str(err.value)
    assert "reference" in str(err.value)


def test_command_is_shell_split(tmp_path: Path) -> None:
    spec = parse_agent_spec("command:bash -c 'echo hi; exit 3'")
    assert spec.argv == ("bash", "-c", "echo hi; exit 3")
    assert plan_agent(spec).command == spec.argv


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("command:", "needs a command"),
        ("command:'unclosed", "cannot split"),
        ("untouched:x", "takes no argument"),
        ("teleport", "unknown kind 'teleport'"),
        ("claude-code", "name the model"),
    ],
)
def test_bad_specs_say_why(text: str, needle: str) -> None:
    with pytest.raises(AgentSpecError) as err:
        parse_agent_spec(text, DEMO_TASK)
    assert needle in str(err.value)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_completion_token_on_last_line_ends_the_loop() -> None:
    prompts: list[str] = []

    async def round_fn(n: int, prompt: str, deadline: float) -> RoundResult:
        prompts.append(prompt)
        msg = "working" if n < 3 else "all done\nMIGRATION COMPLETE\n"
        return RoundResult(msg, workspace_changed=True)

    out = await run_rounds(round_fn, "INSTRUCTION", deadline=100.0, clock=FakeClock())
    assert (out.stop_reason, out.rounds) == ("completed", 3)
    assert prompts == ["INSTRUCTION", "continue", "continue"]


async def test_token_not_on_last_line_does_not_count() -> None:
    async def round_fn(n: int, prompt: str, deadline: float) -> RoundResult:
        return RoundResult("MIGRATION COMPLETE\nbut one more thing", workspace_changed=False)

    out = await run_rounds(round_fn, "I", deadline=100.0, max_idle=2, clock=FakeClock())
    assert (out.stop_reason, out.rounds) == ("idle", 2)


async def test_deadline_and_infrastructure() -> None:
    clock = FakeClock()

    async def slow(n: int, prompt: str, deadline: float) -> RoundResult:
        clock.now += 60
        return RoundResult("x", workspace_changed=True)

    out = await run_rounds(slow, "I", deadline=100.0, clock=clock)
    assert (out.stop_reason, out.rounds) == ("deadline", 2)

    async def broken(n: int, prompt: str, deadline: float) -> RoundResult:
        return RoundResult("", False, infrastructure_error="gateway refused the connection")

    out = await run_rounds(broken, "I", deadline=100.0, clock=FakeClock())
    assert out.stop_reason == "infrastructure"
    assert "gateway" in out.detail
