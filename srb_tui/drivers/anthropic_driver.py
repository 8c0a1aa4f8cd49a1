"""Anthropic Messages API driver (official `anthropic` SDK, imported lazily).

srb's neutral conversation becomes Messages API content blocks: assistant turns carry `text`
and `tool_use` blocks (and, when thinking is on, the thinking blocks returned by the API,
replayed verbatim as the API requires), tool results go back as `tool_result` blocks in one
user message. The SDK's own retries are off; `ModelDriver.complete` owns the retry policy.

driver_options:
  max_tokens        int > 0 (default 16000)
  reasoning_effort  low | medium | high | xhigh | max -> output_config.effort, with adaptive
                    thinking unless thinking_budget is given
  thinking_budget   int >= 1024, < max_tokens -> manual extended thinking with that budget
  timeout_sec       per-request HTTP timeout (default: the stage deadline)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    AssistantMessage,
    DriverConfigError,
    Message,
    ModelTurn,
    ToolCall,
    ToolResults,
    ToolSchema,
    Usage,
    UserText,
    one_of,
    parse_options,
    positive_float,
    positive_int,
)
from .sdk_driver import SdkDriver

EFFORTS = ("low", "medium", "high", "xhigh", "max")
DEFAULT_MAX_TOKENS = 16_000
REPLAY_KEY = "anthropic_content"
_STOP = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "pause_turn": "other",
}


def _thinking_budget(value: Any) -> int:
    budget = positive_int(value)
    if budget < 1024:
        raise ValueError(f"must be at least 1024 tokens, got {budget}")
    return budget


OPTIONS = {
    "max_tokens": positive_int,
    "reasoning_effort": one_of(*EFFORTS),
    "thinking_budget": _thinking_budget,
    "timeout_sec": positive_float,
}


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Validate Anthropic driver_options, every problem at once."""
    parsed = parse_options("anthropic", options, OPTIONS)
    max_tokens = parsed.get("max_tokens", DEFAULT_MAX_TOKENS)
    problems: list[str] = []
    budget = parsed.get("thinking_budget")
    if budget is not None and budget >= max_tokens:
        problems.append(f"thinking_budget ({budget}) must be below max_tokens ({max_tokens})")
    if problems:
        raise DriverConfigError("anthropic driver_options: " + "; ".join(problems))
    return parsed


class AnthropicDriver(SdkDriver):
    """Claude models through `AsyncAnthropic(...).messages.create` with tools."""

    name = "anthropic"

    default_key_env = "ANTHROPIC_API_KEY"
    check_options = staticmethod(check_options)
    sdk_module, sdk_pin = "anthropic", "2.14.0"
    client_class = "AsyncAnthropic"

    # ------------------------------------------------------------------ request

    def request_body(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> dict[str, Any]:
        """The keyword arguments for `messages.create` (no credentials in here)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.options.get("max_tokens", DEFAULT_MAX_TOKENS),
            "messages": to_wire(messages),
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
                for t in tools
            ]
        effort = self.options.get("reasoning_effort")
        budget = self.options.get("thinking_budget")
        if budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif effort is not None:
            body["thinking"] = {"type": "adaptive"}
        if effort is not None:
            body["output_config"] = {"effort": effort}
        return body

    async def create(self, body: dict[str, Any]) -> Any:
        return await self._client.messages.create(**body)

    def read_turn(self, response: Any, latency: float) -> ModelTurn:
        return from_wire(response, latency)


# --------------------------------------------------------------------------- translation


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages -> Messages API `messages` (consecutive user parts merged)."""
    wire: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, UserText):
            add("user", [{"type": "text", "text": message.text}])
        elif isinstance(message, AssistantMessage):
            replay = message.replay.get(REPLAY_KEY)
            if isinstance(replay, list) and replay:
                add("assistant", [dict(block) for block in replay])
                continue
            blocks: list[dict[str, Any]] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in message.tool_calls
            )
            add("assistant", blocks or [{"type": "text", "text": "(no answer)"}])
        elif isinstance(message, ToolResults):
            parts: list[dict[str, Any]] = [
                {
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.content,
                    **({"is_error": True} if result.is_error else {}),
                }
                for result in message.results
            ]
            if message.text:
                parts.append({"type": "text", "text": message.text})
            add("user", parts)
    return wire


def _block_dict(block: Any) -> dict[str, Any] | None:
    """An output content block as an input block for replay (known kinds only)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": str(block.text)}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return None


def from_wire(response: Any, latency: float) -> ModelTurn:
    """A Messages API response -> ModelTurn."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    replay: list[dict[str, Any]] = []
    thinking = False
    for block in getattr(response, "content", None) or []:
        kind = getattr(block, "type", None)
        as_dict = _block_dict(block)
        if as_dict is not None:
            replay.append(as_dict)
        if kind == "text":
            texts.append(str(block.text))
        elif kind == "tool_use":
            arguments = block.input
            if isinstance(arguments, dict):
                calls.append(ToolCall(str(block.id), str(block.name), arguments))
            else:
                calls.append(
                    ToolCall(
                        str(block.id),
                        str(block.name),
                        {},
                        error=f"tool input must be a JSON object, got {json.dumps(arguments)}",
                    )
                )
        elif kind in ("thinking", "redacted_thinking"):
            thinking = True
    usage = getattr(response, "usage", None)
    input_tokens = sum(
        int(getattr(usage, name, 0) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    raw_stop = getattr(response, "stop_reason", None)
    return ModelTurn(
        text="\n".join(texts),
        tool_calls=tuple(calls),
        stop_reason=_STOP.get(str(raw_stop), "other"),
        usage=Usage(input_tokens, output_tokens),
        latency_sec=latency,
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
        replay={REPLAY_KEY: replay} if thinking else {},
    )
