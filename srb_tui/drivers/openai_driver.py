"""OpenAI Chat Completions driver (official `openai` SDK, imported lazily).

Works with any OpenAI-compatible base URL. srb's neutral conversation becomes chat messages:
a `system` message, `user` messages, `assistant` messages with `tool_calls` (function type,
arguments as a JSON string) and one `tool` message per result, threaded by `tool_call_id`.
Arguments that are not a JSON object become a `ToolCall` with `error` set, which the loop
answers with an error result. The SDK's own retries are off; `ModelDriver.complete` retries.

driver_options:
  max_tokens        int > 0 -> max_completion_tokens (or max_tokens, see token_param)
  reasoning_effort  none | minimal | low | medium | high | xhigh | max
  temperature       0..2
  timeout_sec       per-request HTTP timeout (default: the stage deadline)
  token_param       max_completion_tokens (default) | max_tokens, for older compatible servers
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    AssistantMessage,
    DriverError,
    Message,
    ModelTurn,
    ToolCall,
    ToolResults,
    ToolSchema,
    Usage,
    UserText,
    float_between,
    one_of,
    parse_options,
    positive_float,
    positive_int,
)
from .sdk_driver import SdkDriver

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_STOP = {
    "stop": "end",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

OPTIONS = {
    "max_tokens": positive_int,
    "reasoning_effort": one_of(*EFFORTS),
    "temperature": float_between(0.0, 2.0),
    "timeout_sec": positive_float,
    "token_param": one_of("max_completion_tokens", "max_tokens"),
}


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Validate OpenAI driver_options, every problem at once."""
    return parse_options("openai", options, OPTIONS)


class OpenAIDriver(SdkDriver):
    """Any chat model behind `AsyncOpenAI(...).chat.completions.create` with tools."""

    name = "openai"

    default_key_env = "OPENAI_API_KEY"
    check_options = staticmethod(check_options)
    sdk_module, sdk_pin = "openai", "3.57.0"
    client_class = "AsyncOpenAI"

    def request_body(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> dict[str, Any]:
        """The keyword arguments for `chat.completions.create` (no credentials in here)."""
        wire: list[dict[str, Any]] = []
        if system:
            wire.append({"role": "system", "content": system})
        wire.extend(to_wire(messages))
        body: dict[str, Any] = {"model": self.model, "messages": wire}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": dict(t.input_schema),
                    },
                }
                for t in tools
            ]
        if "max_tokens" in self.options:
            body[self.options.get("token_param", "max_completion_tokens")] = self.options[
                "max_tokens"
            ]
        for key in ("reasoning_effort", "temperature"):
            if key in self.options:
                body[key] = self.options[key]
        return body

    async def create(self, body: dict[str, Any]) -> Any:
        return await self._client.chat.completions.create(**body)

    def read_turn(self, response: Any, latency: float) -> ModelTurn:
        return from_wire(response, latency, self.label)


# --------------------------------------------------------------------------- translation


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages -> chat `messages` (without the system message)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserText):
            wire.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.arguments, ensure_ascii=False),
                        },
                    }
                    for call in message.tool_calls
                ]
            elif not message.text:
                entry["content"] = ""
            wire.append(entry)
        elif isinstance(message, ToolResults):
            for result in message.results:
                wire.append(
                    {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
                )
            if message.text:
                wire.append({"role": "user", "content": message.text})
    return wire


def _parse_call(raw: Any) -> ToolCall:
    function = getattr(raw, "function", None)
    call_id = str(getattr(raw, "id", "") or "")
    name = str(getattr(function, "name", "") or "")
    text = getattr(function, "arguments", None)
    if text is None or (isinstance(text, str) and not text.strip()):
        return ToolCall(call_id, name, {})
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except ValueError as exc:
        return ToolCall(call_id, name, {}, error=f"arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, {}, error="arguments must be a JSON object")
    return ToolCall(call_id, name, arguments)


def from_wire(response: Any, latency: float, label: str) -> ModelTurn:
    """A chat completion -> ModelTurn (first choice)."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise DriverError(f"{label}: the response has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = str(getattr(message, "content", None) or "")
    calls = tuple(_parse_call(raw) for raw in (getattr(message, "tool_calls", None) or []))
    usage = getattr(response, "usage", None)
    raw_stop = getattr(choice, "finish_reason", None)
    stop = _STOP.get(str(raw_stop), "other")
    if calls and stop == "end":
        stop = "tool_use"
    return ModelTurn(
        text=text,
        tool_calls=calls,
        stop_reason=stop,
        usage=Usage(
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        latency_sec=latency,
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
    )
