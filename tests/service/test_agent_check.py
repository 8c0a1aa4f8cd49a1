"""One table of agent specs, checked by every place that accepts one: ``srb run``'s launch
(``RunService.launch``), the console's launch dialog (``build_request``) and campaign files
(the scheduler's ``ServiceCalls.check_agent``). They share ``service.agent_specs.check_agent``;
this test holds them to the same verdict for every row, a real-client spec included.

No engine is reached: launch stops at the check or creates a ``pending`` run in a real
SQLite store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.campaigns.calls import ServiceCalls
from srb_tui.campaigns.plan import plan_campaign
from srb_tui.campaigns.spec import parse_campaign
from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.service.events import EventBus
from srb_tui.service.run.agent_specs import check_agent
from srb_tui.service.run.orchestrator import LaunchError, RunService
from srb_tui.store import Store
from srb_tui.ui.screens.launch import COMMAND, LaunchTarget, build_request
from tests.conftest import BUILTIN_TASKS, DEMO_TASK

# (spec, effort, max_cost, max_tokens, accepted, words of the problem when refused)
SPECS: list[tuple[str, str | None, float | None, int | None, bool, str]] = [
    ("untouched", None, None, None, True, ""),
    ("replay:reference", None, None, None, True, ""),
    ("replay:nope", None, None, None, False, "this task has"),
    ("command:make migrate", None, None, None, True, ""),
    ("command:echo 'open", None, None, None, False, "cannot split"),
    ("claude-code:claude-sonnet-5", "high", 5.0, 200000, True, ""),
    ("claude-code:claude-opus-5", "max", None, None, True, ""),
    ("codex:gpt-5.5", "xhigh", 2.5, None, True, ""),
    ("codex:gpt-5.5", None, None, None, True, ""),
    ("mini-swe-agent:gpt-5.5", None, 1.0, None, True, ""),
    ("codex:gpt-5.5", "ultra", None, None, False, "ultra"),
    ("claude-code:claude-sonnet-5", "turbo", None, None, False, "turbo"),
    ("claude-code:claude-sonnet-5", "high", -1.0, None, False, "--max-cost must be positive"),
    ("codex:gpt-5.5", None, None, 0, False, "--max-tokens must be positive"),
    ("claude-code:", None, None, None, False, "name the model"),
    ("gemini:pro", None, None, None, False, "unknown kind"),
]
IDS = [f"{row[0]}|{row[1]}|{row[2]}|{row[3]}" for row in SPECS]


@pytest.fixture
async def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> AsyncIterator[RunService]:
    # A real client needs its vendor's key for srb's gateway (checked at launch; none of
    # these runs reaches a model): placeholders, as on a host that has them.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-placeholder")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=tmp_path / "state")
    settings.state_dir.mkdir()
    engine = DockerEngine(RunnerPool(1))
    async with await Store.open(settings.db_path) as store:
        yield RunService(settings, store, engine, EventBus())
    engine.close()
    engine.pool.shutdown()


def _dialog(spec: str, effort: str | None) -> str | None:
    """The launch dialog's verdict: None when it builds a request, else its message."""
    kind, _, rest = spec.partition(":")
    target = LaunchTarget(DEMO_TASK.name, DEMO_TASK, 1800.0)
    if kind == "command":
        got = build_request(target, COMMAND, rest, "", effort or "", "60", "1")
    elif kind in ("claude-code", "codex", "mini-swe-agent"):
        got = build_request(target, kind, "", rest, effort or "", "60", "1")
    else:
        got = build_request(target, spec, "", "", effort or "", "60", "1")
    return got if isinstance(got, str) else None


def _campaign_problem(spec: str, effort: str | None, max_cost: float | None,
                      max_tokens: int | None, calls: ServiceCalls) -> str | None:
    lines = [f"label = \"c\"\nagent = \"{spec}\""]
    lines += [f"effort = \"{effort}\""] if effort else []
    lines += [f"max_cost = {max_cost}"] if max_cost is not None else []
    lines += [f"max_tokens = {max_tokens}"] if max_tokens is not None else []
    text = (f"[campaign]\nname = \"t\"\ntasks = [\"{DEMO_TASK.name}\"]\n\n[[config]]\n"
            + "\n".join(lines) + "\n")
    parsed = parse_campaign(text, "t.toml")
    if parsed.problems:  # the file reader refuses a non-positive budget itself
        return "; ".join(str(p) for p in parsed.problems)
    plan = plan_campaign(parsed, [BUILTIN_TASKS])
    assert not plan.problems, plan.problems
    return calls.check_agent(plan.configs[0], plan.tasks[DEMO_TASK.name])


@pytest.mark.parametrize("spec, effort, max_cost, max_tokens, accepted, words", SPECS,
                         ids=IDS)
async def test_every_entry_point_gives_the_same_verdict(
        service: RunService, spec: str, effort: str | None, max_cost: float | None,
        max_tokens: int | None, accepted: bool, words: str) -> None:
    checked = check_agent(spec, DEMO_TASK, effort=effort, max_cost=max_cost,
                          max_tokens=max_tokens)
    assert (checked.text is not None) is accepted, checked
    if not accepted:
        assert words in (checked.problem or ""), checked.problem

    try:
        run = await service.launch(DEMO_TASK.name, spec, budget_sec=60, effort=effort,
                                   max_cost_usd=max_cost, max_tokens=max_tokens)
    except LaunchError as exc:
        assert not accepted, f"srb run refused an accepted spec: {exc}"
        assert words in str(exc) or words.lstrip("-") in str(exc)
    else:
        assert accepted, f"srb run accepted {spec!r}"
        assert run.status == "pending" and run.agent == spec
        if spec.startswith(("claude-code", "codex", "mini-swe-agent")) and max_cost:
            assert run.extra["budget"]["max_cost_usd"] == max_cost

    campaign = _campaign_problem(spec, effort, max_cost, max_tokens, ServiceCalls(service))
    assert (campaign is None) is accepted, campaign
    if campaign is not None:
        # the file reader refuses a non-positive budget with its file and key first
        refused_by_reader = "t.toml" in campaign and (
            "greater than 0" in campaign or "at least 1" in campaign)
        assert words in campaign or refused_by_reader, campaign

    if max_cost is None and max_tokens is None:  # the dialog has no budget fields
        dialog = _dialog(spec, effort)
        assert (dialog is None) is accepted, dialog


def test_a_real_client_spec_is_accepted_wherever_a_spec_is_accepted(tmp_path: Path) -> None:
    """The issue's case: a campaign configuration ``claude-code:MODEL`` used to be refused
    ("the claude-code client is not available in this build") by the campaign's own copy
    of the check while ``srb run`` took it."""
    text = (f"[campaign]\nname = \"real\"\ntasks = [\"{DEMO_TASK.name}\"]\n\n"
            "[[config]]\nlabel = \"cc\"\nagent = \"claude-code:claude-sonnet-5\"\n"
            "effort = \"high\"\nmax_cost = 3.0\nmax_tokens = 500000\nbudget_sec = 900\n\n"
            "[[config]]\nlabel = \"cx\"\nagent = \"codex:gpt-5.5\"\neffort = \"low\"\n")
    plan = plan_campaign(parse_campaign(text, "real.toml"), [BUILTIN_TASKS])
    assert not plan.problems
    cc, cx = plan.configs
    assert (cc.max_cost, cc.max_tokens, cc.budget_sec, cc.effort) == (3.0, 500000, 900.0, "high")
    from srb_tui.service.run.cells import agent_problem

    task = plan.tasks[DEMO_TASK.name]
    for config in (cc, cx):
        assert agent_problem(config.agent, task.path, effort=config.effort,
                             harness=task.harness, max_cost=config.max_cost,
                             max_tokens=config.max_tokens) is None


@pytest.mark.parametrize(("spec", "key"), [("claude-code:claude-sonnet-5", "ANTHROPIC_API_KEY"),
                                          ("codex:gpt-5.5", "OPENAI_API_KEY"),
                                          ("mini-swe-agent:gpt-5.5", "OPENAI_API_KEY")])
async def test_a_real_client_without_its_key_is_refused_before_anything_runs(
        service: RunService, monkeypatch: pytest.MonkeyPatch, spec: str, key: str) -> None:
    """Issue 35 item 9: a real client with no model key used to start its container, burn
    three rounds on "server-side issue, try again" and end with nothing collected. `srb
    run` (launch) and a campaign's check refuse it up front, naming the variable; no run
    is created. Built-in agents need no key."""
    monkeypatch.delenv(key)
    with pytest.raises(LaunchError, match=rf"\${key} is not set on this host"):
        await service.launch(DEMO_TASK.name, spec, budget_sec=60)
    assert await service.store.runs.list_runs() == []
    problem = _campaign_problem(spec, None, None, None, ServiceCalls(service))
    assert problem is not None and f"${key} is not set" in problem, problem
    run = await service.launch(DEMO_TASK.name, "replay:reference", budget_sec=60)
    assert run.status == "pending"
