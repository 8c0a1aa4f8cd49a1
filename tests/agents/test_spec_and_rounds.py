"""Agent specifications (the round loop is in test_rounds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.agents import AgentSpecError, parse_agent_spec, plan_agent
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
    assert "did you mean" not in str(err.value)


def test_replay_misspelt_name_says_which_it_means_once() -> None:
    """Issue 35 item 13: `replay:refrence` printed the path tried and then a stray
    ", refrence" (the name as a path of the working folder)."""
    with pytest.raises(AgentSpecError) as err:
        parse_agent_spec("replay:refrence", DEMO_TASK)
    text = str(err.value)
    assert "did you mean replay:reference?" in text
    assert ", refrence" not in text and text.count("refrence") == 3, text


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
