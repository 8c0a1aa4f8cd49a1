"""OpenAI driver through the official SDK against a LOCAL STAND-IN server.

The server in fake_vendor.py is not OpenAI's API (nor any real OpenAI-compatible service): it
is a stdlib HTTP server on 127.0.0.1 that speaks the Chat Completions wire protocol (POST
/v1/chat/completions with tool_calls, tool messages and usage) and plays a scripted
conversation. These tests check what the real `openai` SDK sends and how srb reads the
answers; they say nothing about the live service.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from srb_tui.drivers.base import DriverConfigError, DriverError, RetryPolicy, UserText
from srb_tui.drivers.channel import SubprocessToolChannel
from srb_tui.drivers.loop import run_review
from srb_tui.drivers.openai_driver import OpenAIDriver
from srb_tui.drivers.tools import LIST_DIR

from .conftest import GATES, KEY
from .fake_vendor import closed_port_url, openai_completion, openai_error, serving

FAST = RetryPolicy(max_attempts=3, base_delay_sec=0.01, max_delay_sec=5.0, jitter=0.0)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def driver(url: str, **options: Any) -> OpenAIDriver:
    return OpenAIDriver(
        "gpt-test", api_key=KEY, base_url=f"{url}/v1", options=options, retry=FAST, sleep=Sleeps()
    )


REVIEW = {
    "summary": "Python is still shipped.",
    "gates": [
        {
            "id": "no-python",
            "verdict": "fail",
            "confidence": 0.9,
            "reasoning": "calc/core.py is still Python",
            "evidence": [{"path": "submission:calc/core.py", "line": 2, "quote": "return a + b"}],
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
        openai_completion(
            "Let me look around.",
            [("call_list", "list_dir", json.dumps({"path": "submission:", "depth": 2}))],
            "tool_calls",
            100,
            12,
        ),
        openai_completion(
            None,
            [
                (
                    "call_fetch",
                    "fetch_source",
                    json.dumps({"path": "submission:calc/core.py", "start_line": 1}),
                )
            ],
            "tool_calls",
            150,
            18,
        ),
        openai_completion(
            None, [("call_submit", "submit_review", json.dumps(REVIEW))], "tool_calls", 210, 90
        ),
    ]


async def test_review_conversation_over_chat_completions(channel: SubprocessToolChannel) -> None:
    with serving(conversation()) as server:
        model = driver(server.url, reasoning_effort="medium", max_tokens=4000)
        sample = await run_review(model, channel, "You audit.", "Review it.", GATES)
        await model.aclose()

    assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 3
    for seen in server.requests:
        assert seen.headers["authorization"] == f"Bearer {KEY}"
    first = server.requests[0].body
    assert first["model"] == "gpt-test"
    assert first["reasoning_effort"] == "medium"
    assert first["max_completion_tokens"] == 4000
    assert first["messages"] == [
        {"role": "system", "content": "You audit."},
        {"role": "user", "content": "Review it."},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == [
        "list_dir",
        "fetch_source",
        "search",
        "diff",
        "submit_review",
    ]
    assert all(t["type"] == "function" for t in first["tools"])
    gate_schema = first["tools"][-1]["function"]["parameters"]["properties"]["gates"]["items"]
    assert gate_schema["properties"]["id"]["enum"] == ["no-python", "node-present"]

    second = server.requests[1].body["messages"]
    assert second[2]["role"] == "assistant"
    assert second[2]["content"] == "Let me look around."
    assert second[2]["tool_calls"][0]["id"] == "call_list"
    assert json.loads(second[2]["tool_calls"][0]["function"]["arguments"]) == {
        "path": "submission:",
        "depth": 2,
    }
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_list"
    entries = json.loads(second[3]["content"])["entries"]
    assert {"path": "submission:calc", "type": "dir"} in entries

    third = server.requests[2].body["messages"]
    assert third[-1]["tool_call_id"] == "call_fetch"
    assert "2:     return a + b" in json.loads(third[-1]["content"])["text"]

    assert sample.status == "accepted" and sample.review == REVIEW
    assert sample.turns == 3 and sample.tool_calls == 3
    assert (sample.usage.input_tokens, sample.usage.output_tokens) == (460, 120)
    assert sample.grade is not None
    assert sample.grade.gates["no-python"].recorded == "fail"
    assert sample.grade.gates["no-python"].evidence[0]["grounded"] is True
    assert KEY not in json.dumps(sample.to_dict())
    assert sample.to_dict()["driver"] == "openai:gpt-test"


async def test_parsed_turn_and_bad_arguments() -> None:
    reply = openai_completion(
        "two calls",
        [("c1", "list_dir", '{"path": "original:"}'), ("c2", "search", "{not json")],
        "tool_calls",
        9,
        4,
    )
    with serving([reply]) as server:
        model = driver(server.url, token_param="max_tokens", max_tokens=99, temperature=0.0)
        turn = await model.complete("", [UserText("hi")], [LIST_DIR])
        await model.aclose()
    body = server.requests[0].body
    assert body["max_tokens"] == 99 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.0
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert turn.text == "two calls" and turn.stop_reason == "tool_use"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (9, 4)
    good, bad = turn.tool_calls
    assert (good.id, good.name, good.arguments, good.error) == (
        "c1",
        "list_dir",
        {"path": "original:"},
        None,
    )
    assert bad.id == "c2" and bad.arguments == {}
    assert bad.error is not None and "not valid JSON" in bad.error


async def test_rate_limit_is_retried_then_succeeds() -> None:
    ok = openai_completion("fine", [], "stop", 3, 1)
    with serving([openai_error(429, "Rate limit reached"), ok]) as server:
        sleeps = Sleeps()
        model = OpenAIDriver(
            "gpt-test", api_key=KEY, base_url=f"{server.url}/v1", retry=FAST, sleep=sleeps
        )
        turn = await model.complete("s", [UserText("u")], [])
        await model.aclose()
    assert len(server.requests) == 2
    assert turn.text == "fine" and turn.stop_reason == "end" and turn.attempts == 2
    assert sleeps.waits == [0.01]


async def test_unauthorised_is_fatal_with_a_clear_message() -> None:
    with serving([openai_error(401, "Incorrect API key provided")]) as server:
        model = OpenAIDriver(
            "gpt-test",
            api_key=KEY,
            base_url=f"{server.url}/v1",
            key_env="MY_GATEWAY_KEY",
            retry=FAST,
        )
        with pytest.raises(DriverError) as caught:
            await model.complete("s", [UserText("u")], [])
        await model.aclose()
    assert len(server.requests) == 1
    assert not caught.value.retryable and caught.value.status == 401
    assert "$MY_GATEWAY_KEY" in str(caught.value) and "Incorrect API key" in str(caught.value)
    assert KEY not in str(caught.value)


async def test_bad_request_is_fatal() -> None:
    with serving([openai_error(400, "Unknown parameter: reasoning_effort")]) as server:
        model = driver(server.url)
        with pytest.raises(DriverError) as caught:
            await model.complete("s", [UserText("u")], [])
        await model.aclose()
    assert len(server.requests) == 1
    assert not caught.value.retryable
    assert "request rejected (HTTP 400)" in str(caught.value)


async def test_connection_refused_is_retryable_then_gives_up() -> None:
    sleeps = Sleeps()
    model = OpenAIDriver(
        "gpt-test", api_key=KEY, base_url=closed_port_url() + "/v1", retry=FAST, sleep=sleeps
    )
    with pytest.raises(DriverError) as caught:
        await model.complete("s", [UserText("u")], [])
    await model.aclose()
    assert caught.value.retryable and caught.value.attempts == 3
    assert "cannot reach the API" in str(caught.value)
    assert "gave up after 3 attempts" in str(caught.value)
    assert sleeps.waits == [0.01, 0.02]


def test_options_are_checked() -> None:
    with pytest.raises(DriverConfigError) as caught:
        OpenAIDriver("m", api_key=KEY, options={"reasoning_effort": "extreme", "top_k": 3})
    text = str(caught.value)
    assert "option 'reasoning_effort': must be one of none, minimal" in text
    assert "unknown option 'top_k'" in text
