"""Anthropic driver through the official SDK against a LOCAL STAND-IN server.

The server in fake_vendor.py is not Anthropic's API: it is a stdlib HTTP server on 127.0.0.1
that speaks the Messages API wire protocol (POST /v1/messages with tool_use / tool_result
content blocks and usage) and plays a scripted conversation. These tests check what the real
`anthropic` SDK sends and how srb reads the answers; they say nothing about the live service.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from srb_tui.drivers.anthropic_driver import AnthropicDriver
from srb_tui.drivers.base import DriverConfigError, DriverError, RetryPolicy, UserText
from srb_tui.drivers.channel import SubprocessToolChannel
from srb_tui.drivers.loop import run_review
from srb_tui.drivers.tools import LIST_DIR

from .conftest import GATES, KEY
from .fake_vendor import anthropic_error, anthropic_message, closed_port_url, serving

FAST = RetryPolicy(max_attempts=3, base_delay_sec=0.01, max_delay_sec=5.0, jitter=0.0)


class Sleeps:
    """Records backoff waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def driver(url: str, **options: Any) -> AnthropicDriver:
    return AnthropicDriver(
        "claude-test", api_key=KEY, base_url=url, options=options, retry=FAST, sleep=Sleeps()
    )


REVIEW = {
    "summary": "Python is still shipped.",
    "gates": [
        {
            "id": "no-python",
            "verdict": "fail",
            "confidence": 0.9,
            "reasoning": "calc/core.py is still Python",
            "evidence": [
                {
                    "path": "submission:calc/core.py",
                    "line": 1,
                    "quote": "def add(a, b):",
                    "note": "a Python definition",
                }
            ],
        },
        {
            "id": "node-present",
            "verdict": "pass",
            "confidence": 0.8,
            "reasoning": "lib/core.js implements add",
            "evidence": [],
        },
    ],
}


def conversation() -> list[Any]:
    return [
        anthropic_message(
            [
                {"type": "thinking", "thinking": "Start with the layout.", "signature": "sig-1"},
                {"type": "text", "text": "Listing the submission."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "list_dir",
                    "input": {"path": "submission:", "depth": 3},
                },
            ],
            "tool_use",
            120,
            30,
        ),
        anthropic_message(
            [
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "fetch_source",
                    "input": {"path": "submission:calc/core.py", "start_line": 1, "end_line": 2},
                }
            ],
            "tool_use",
            200,
            25,
        ),
        anthropic_message(
            [{"type": "tool_use", "id": "toolu_03", "name": "submit_review", "input": REVIEW}],
            "tool_use",
            300,
            80,
        ),
    ]


async def test_review_conversation_over_messages_api(channel: SubprocessToolChannel) -> None:
    with serving(conversation()) as server:
        model = driver(server.url, reasoning_effort="high")
        sample = await run_review(
            model, channel, "You audit migrations.", "Review the submission.", GATES
        )
        await model.aclose()

    # what the SDK sent
    assert [r.path for r in server.requests] == ["/v1/messages"] * 3
    for seen in server.requests:
        # anthropic 2.14 sends the key as a bearer token (not x-api-key)
        assert seen.headers["authorization"] == f"Bearer {KEY}"
        assert "anthropic-version" in seen.headers
    first = server.requests[0].body
    assert first["model"] == "claude-test"
    assert first["system"] == "You audit migrations."
    assert [t["name"] for t in first["tools"]] == [
        "list_dir",
        "fetch_source",
        "search",
        "diff",
        "submit_review",
    ]
    assert first["tools"][0]["input_schema"]["required"] == ["path"]
    assert first["thinking"] == {"type": "adaptive"}
    assert first["output_config"] == {"effort": "high"}
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Review the submission."}]}
    ]

    second = server.requests[1].body["messages"]
    assistant, results = second[-2], second[-1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Start with the layout.",
        "signature": "sig-1",
    }
    assert assistant["content"][2]["id"] == "toolu_01"
    assert results["role"] == "user"
    assert results["content"][0]["type"] == "tool_result"
    assert results["content"][0]["tool_use_id"] == "toolu_01"
    listing = json.loads(results["content"][0]["content"])
    assert "submission:lib/core.js" in [e["path"] for e in listing["entries"]]

    third = server.requests[2].body["messages"][-1]["content"][0]
    assert third["tool_use_id"] == "toolu_02"
    assert "1: def add(a, b):" in json.loads(third["content"])["text"]

    # what srb made of it
    assert sample.status == "accepted" and sample.ending == "accepted"
    assert sample.review == REVIEW
    assert sample.turns == 3 and sample.tool_calls == 3 and sample.rejections == 0
    assert (sample.usage.input_tokens, sample.usage.output_tokens) == (620, 135)
    assert sample.grade is not None and sample.grade.usable
    assert sample.grade.gates["no-python"].recorded == "fail"
    assert not sample.grade.gates["no-python"].downgraded
    assert sample.grade.gates["node-present"].recorded == "pass"
    tools_run = [e["name"] for e in sample.transcript if e["kind"] == "tool"]
    assert tools_run == ["list_dir", "fetch_source"]
    assert sample.wall_sec > 0
    dumped = json.dumps(sample.to_dict())
    assert KEY not in dumped
    assert KEY not in repr(model)


async def test_parsed_turn_fields() -> None:
    reply = anthropic_message(
        [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_9", "name": "list_dir", "input": {"path": "a:"}},
        ],
        "tool_use",
        11,
        7,
    )
    with serving([reply]) as server:
        model = driver(server.url, max_tokens=2048)
        turn = await model.complete("sys", [UserText("hi")], [LIST_DIR])
        await model.aclose()
    assert turn.text == "Looking."
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_9", "list_dir", {"path": "a:"})
    ]
    assert turn.stop_reason == "tool_use" and turn.raw_stop_reason == "tool_use"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (11, 7)
    assert turn.latency_sec > 0 and turn.attempts == 1
    assert turn.replay == {}
    body = server.requests[0].body
    assert body["max_tokens"] == 2048
    assert "thinking" not in body


async def test_rate_limit_is_retried_then_succeeds() -> None:
    ok = anthropic_message([{"type": "text", "text": "done"}], "end_turn", 5, 1)
    with serving(
        [anthropic_error(429, "rate_limit_error", "slow down", retry_after="0.5"), ok]
    ) as s:
        sleeps = Sleeps()
        model = AnthropicDriver(
            "claude-test", api_key=KEY, base_url=s.url, retry=FAST, sleep=sleeps
        )
        turn = await model.complete("sys", [UserText("hi")], [])
        await model.aclose()
    assert len(s.requests) == 2
    assert turn.text == "done" and turn.stop_reason == "end" and turn.attempts == 2
    assert sleeps.waits == [0.5]  # the server's retry-after beats the 0.01 s backoff


async def test_unauthorised_is_fatal_with_a_clear_message() -> None:
    with serving([anthropic_error(401, "authentication_error", "invalid x-api-key")]) as s:
        model = driver(s.url)
        with pytest.raises(DriverError) as caught:
            await model.complete("sys", [UserText("hi")], [])
        await model.aclose()
    assert len(s.requests) == 1
    error = caught.value
    assert not error.retryable and error.status == 401
    assert "HTTP 401" in str(error) and "$ANTHROPIC_API_KEY" in str(error)
    assert "invalid x-api-key" in str(error)
    assert KEY not in str(error)


async def test_server_error_retried_until_gave_up() -> None:
    errors = [anthropic_error(529, "overloaded_error", "overloaded")] * 3
    with serving(errors) as s:
        model = driver(s.url)
        with pytest.raises(DriverError) as caught:
            await model.complete("sys", [UserText("hi")], [])
        await model.aclose()
    assert len(s.requests) == 3
    assert caught.value.retryable and caught.value.attempts == 3
    assert "gave up after 3 attempts" in str(caught.value)


async def test_connection_refused_is_retryable_then_gives_up() -> None:
    sleeps = Sleeps()
    model = AnthropicDriver(
        "claude-test", api_key=KEY, base_url=closed_port_url(), retry=FAST, sleep=sleeps
    )
    with pytest.raises(DriverError) as caught:
        await model.complete("sys", [UserText("hi")], [])
    await model.aclose()
    assert caught.value.retryable and caught.value.attempts == 3
    assert "cannot reach the API" in str(caught.value)
    assert "gave up after 3 attempts" in str(caught.value)
    assert len(sleeps.waits) == 2


def test_options_are_checked() -> None:
    with pytest.raises(DriverConfigError) as caught:
        AnthropicDriver("m", api_key=KEY, options={"reasoning_efort": "high", "max_tokens": 0})
    text = str(caught.value)
    assert "unknown option 'reasoning_efort'" in text and "did you mean 'reasoning_effort'" in text
    assert "option 'max_tokens': must be a whole number > 0" in text
    with pytest.raises(DriverConfigError, match="unknown option 'temperature'"):
        AnthropicDriver("m", api_key=KEY, options={"temperature": 1})  # not in SDK 2.14
    with pytest.raises(DriverConfigError, match="must be below max_tokens"):
        AnthropicDriver("m", api_key=KEY, options={"thinking_budget": 4096, "max_tokens": 2048})
    with pytest.raises(DriverConfigError, match="must be one of low, medium, high, xhigh, max"):
        AnthropicDriver("m", api_key=KEY, options={"reasoning_effort": "huge"})


def test_thinking_budget_becomes_manual_thinking(tmp_path: Path) -> None:
    model = AnthropicDriver(
        "m", api_key=KEY, options={"thinking_budget": 2048, "reasoning_effort": "medium"}
    )
    body = model.request_body("s", [UserText("u")], [])
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["output_config"] == {"effort": "medium"}
    assert KEY not in json.dumps(body)
