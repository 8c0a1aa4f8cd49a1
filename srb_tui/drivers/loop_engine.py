"""The engine of the host-side tool loops: turn, dispatch, final answer.

:func:`drive_loop` runs one conversation described by a :class:`LoopPlan` and fills a
:class:`.loop_records.LoopRecord`. Each pass asks the driver for a turn (:func:`_next_turn`:
the turn limit, the deadline, and a model failure waited out and resent up to
``max_resumes`` times), nudges a turn without tool calls (at most ``max_nudges``), executes
the turn's tool calls (:func:`_dispatch`: local tools, channel tools through
:func:`forward`, refusals) and judges its final call (:func:`_settle_final`: accepted,
rejected once, or unusable). The session is ended whatever happens.

Deadlines are absolute ``time.monotonic()`` values (:func:`deadline_in` makes one).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import (
    DriverError,
    ModelDriver,
    ModelTurn,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSchema,
    UserText,
)
from .channel import ChannelError, ToolChannel
from .fence import Fence
from .loop_records import LoopRecord, call_dict

MAX_RESULT_CHARS = 100_000
TRANSCRIPT_RESULT_CHARS = 16_000
RESUME_BACKOFF_SEC = 5.0
ADVERSARY_RESUMES = 3


def deadline_in(seconds: float) -> float:
    """An absolute deadline `seconds` from now, on the loop's clock."""
    return time.monotonic() + seconds


@dataclass(frozen=True)
class FinalDecision:
    """The verdict on a final call: accepted (value, farewell), rejected (message) or
    unusable (reason)."""

    kind: str
    message: str = ""
    value: Any = None
    farewell: Mapping[str, Any] | None = None
    payload: Mapping[str, Any] | None = None


FinalHandler = Callable[[ToolCall], FinalDecision]
LocalTool = Callable[[ToolCall], Awaitable[ToolResult]]


@dataclass(frozen=True)
class LoopPlan:
    """One loop's conversation: prompts, tools, the final tool and its judge, and limits.

    ``fence``: when set, every channel tool's result reaches the model fenced as data.
    ``max_resumes``: how often a model failure that outlived the driver's own retries is
    waited out (backoff doubling from ``resume_backoff_sec``, never past the deadline) and
    the same conversation re-sent, instead of ending the loop as ``driver_error``."""

    system: str
    user: str
    tools: Sequence[ToolSchema]
    channel_tools: Sequence[str]
    local_tools: Mapping[str, LocalTool]
    final_tool: str
    on_final: FinalHandler
    context: Mapping[str, Any]
    max_turns: int
    max_nudges: int
    deadline: float | None
    max_resumes: int = 0
    resume_backoff_sec: float = RESUME_BACKOFF_SEC
    fence: Fence | None = None


@dataclass
class _Progress:
    """What one loop carries from pass to pass."""

    nudges: int = 0
    accepted: Any = None
    farewell: Mapping[str, Any] | None = None


def truncate(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut]", True


def _reply_result(call: ToolCall, reply: Mapping[str, Any]) -> ToolResult:
    """A channel reply as a tool result (model text + scripted payload)."""
    ok = reply.get("ok") is True
    if ok:
        text = json.dumps(reply.get("result"), ensure_ascii=False)
    else:
        text = "error: " + str(reply.get("error", "the tool failed"))
    content, _ = truncate(text, MAX_RESULT_CHARS)
    payload = {"type": "tool_result", **reply}
    return ToolResult(call.id, call.name, content, is_error=not ok, payload=payload)


def error_result(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(
        call.id,
        call.name,
        "error: " + message,
        is_error=True,
        payload={"type": "tool_result", "ok": False, "error": message},
    )


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


async def drive_loop(
    record: LoopRecord, driver: ModelDriver, channel: ToolChannel, plan: LoopPlan
) -> Any:
    """Run the loop, filling `record`; returns the accepted final value (or None)."""
    started = time.monotonic()
    record.driver = driver.label
    record.tools = [t.name for t in plan.tools]
    record.messages.append(UserText(plan.user))
    progress = _Progress()
    try:
        while not record.ending:
            turn = await _next_turn(record, driver, plan)
            if turn is None:
                continue  # the loop ended (the condition sees it) or resumes after a wait
            if not turn.tool_calls:
                _nudge_or_end(record, plan, turn, progress)
                continue
            results, final_index = await _dispatch(record, channel, plan, turn)
            if record.ending:
                break
            if final_index is not None:
                call = turn.tool_calls[final_index]
                results[final_index] = _settle_final(record, plan, call, progress)
            record.messages.append(ToolResults(tuple(r for r in results if r is not None)))
    finally:
        record.wall_sec = time.monotonic() - started
        try:
            await driver.end_session(record.session, progress.farewell)
        except DriverError as exc:
            record.transcript.append({"kind": "note", "text": f"ending the session: {exc}"})
    return progress.accepted


async def _next_turn(record: LoopRecord, driver: ModelDriver, plan: LoopPlan) -> ModelTurn | None:
    """The model's next turn, recorded; None when the loop ends here (``record.ending`` set)
    or a model failure was waited out and the same conversation is to be re-sent."""
    if record.turns >= plan.max_turns:
        record.ending = "max_turns"
        record.reason = f"no {plan.final_tool} in {plan.max_turns} turns"
        return None
    remaining = _remaining(plan.deadline)
    if remaining is not None and remaining <= 0:
        record.ending, record.reason = "deadline", f"the time ran out before {plan.final_tool}"
        return None
    try:
        turn = await driver.complete(
            plan.system,
            record.messages,
            plan.tools,
            session=record.session,
            context=plan.context,
            timeout_sec=remaining,
        )
    except DriverError as exc:
        after = _remaining(plan.deadline)
        wait = plan.resume_backoff_sec * (2**record.resumes)
        if after is not None and after <= 0:
            record.ending = "deadline"
            record.reason = f"the time ran out waiting for the model ({exc})"
        elif (
            exc.retryable
            and record.resumes < plan.max_resumes
            and (after is None or after > wait)
        ):
            record.resumes += 1
            record.transcript.append(
                {"kind": "resume", "after_sec": wait, "error": str(exc)[:500]}
            )
            await asyncio.sleep(wait)
        else:
            record.ending, record.reason = "driver_error", str(exc)
        return None
    record.turns += 1
    record.usage = record.usage + turn.usage
    record.messages.append(turn.as_message())
    record.transcript.append(
        {
            "kind": "assistant",
            "turn": record.turns,
            "text": turn.text,
            "tool_calls": [call_dict(c) for c in turn.tool_calls],
            "stop_reason": turn.stop_reason,
            "input_tokens": turn.usage.input_tokens,
            "output_tokens": turn.usage.output_tokens,
            "latency_sec": round(turn.latency_sec, 3),
            "attempts": turn.attempts,
        }
    )
    return turn


def _nudge_or_end(
    record: LoopRecord, plan: LoopPlan, turn: ModelTurn, progress: _Progress
) -> None:
    """A turn without tool calls: the model exited or used up its nudges (the loop ends
    ``no_submission``), or it is told once more how to finish."""
    if turn.stop_reason == "exited":
        record.ending, record.reason = "no_submission", turn.text
        return
    if progress.nudges >= plan.max_nudges:
        record.ending = "no_submission"
        record.reason = f"the model stopped without calling {plan.final_tool}"
        return
    progress.nudges += 1
    nudge = (
        f"Keep going with the tools. When you are done, call {plan.final_tool}; "
        "that is the only way to finish."
    )
    record.messages.append(UserText(nudge))
    record.transcript.append({"kind": "nudge", "text": nudge})


async def _dispatch(
    record: LoopRecord, channel: ToolChannel, plan: LoopPlan, turn: ModelTurn
) -> tuple[list[ToolResult | None], int | None]:
    """Execute the turn's tool calls in order; their results (the final call's slot left
    empty) and the index of its one final call. Stops early when a call ends the loop."""
    forward_names = set(plan.channel_tools)
    offered = ", ".join(t.name for t in plan.tools)
    results: list[ToolResult | None] = [None] * len(turn.tool_calls)
    final_index: int | None = None
    for index, call in enumerate(turn.tool_calls):
        record.tool_calls += 1
        if call.name == plan.final_tool:
            if final_index is None:
                final_index = index
            else:
                results[index] = error_result(call, f"only one {plan.final_tool} per turn")
            continue
        if call.error:
            results[index] = error_result(call, call.error)
        elif call.name in plan.local_tools:
            results[index] = await plan.local_tools[call.name](call)
        elif call.name in forward_names:
            results[index] = await forward(record, channel, call, plan.deadline, plan.fence)
        else:
            results[index] = error_result(
                call, f"tool {call.name!r} is not offered; tools: {offered}"
            )
        result = results[index]
        if result is not None and result.is_error:
            record.tool_errors += 1
        if record.ending:
            break
    return results, final_index


def _settle_final(
    record: LoopRecord, plan: LoopPlan, call: ToolCall, progress: _Progress
) -> ToolResult:
    """Judge the final call (``plan.on_final``): accepted ends the loop with its value,
    rejected lets the model try again, unusable ends it ``invalid_twice``."""
    decision = plan.on_final(call)
    record.transcript.append(
        {
            "kind": plan.final_tool,
            "call_id": call.id,
            "arguments": call.arguments,
            "decision": decision.kind,
            "message": decision.message,
        }
    )
    if decision.kind == "accepted":
        progress.accepted, progress.farewell = decision.value, decision.farewell
        record.ending = "accepted"
        return ToolResult(call.id, call.name, "accepted", payload=decision.farewell)
    if decision.kind == "rejected":
        record.rejections += 1
    else:
        record.ending, record.reason = "invalid_twice", decision.message
        progress.farewell = decision.payload
    return ToolResult(call.id, call.name, decision.message, True, decision.payload)


async def forward(
    record: LoopRecord,
    channel: ToolChannel,
    call: ToolCall,
    deadline: float | None,
    fence: Fence | None = None,
) -> ToolResult | None:
    """Execute one call through the channel; a channel fault or the deadline ends the loop.
    With a `fence`, the model reads the result fenced as data (the payload names it)."""
    started = time.monotonic()
    remaining = _remaining(deadline)
    try:
        if remaining is None:
            reply = await channel.call(call.name, call.arguments)
        else:
            reply = await asyncio.wait_for(
                channel.call(call.name, call.arguments), max(remaining, 0.001)
            )
    except TimeoutError:
        record.ending, record.reason = "deadline", f"the time ran out during {call.name}"
        return None
    except ChannelError as exc:
        record.ending, record.reason = "channel_error", str(exc)
        return None
    result = _reply_result(call, reply)
    if fence is not None:
        payload = {**(result.payload or {}), "fence": fence.marker}
        result = ToolResult(
            call.id, call.name, fence.wrap(result.content), result.is_error, payload
        )
    event: dict[str, Any] = {
        "kind": "tool",
        "call_id": call.id,
        "name": call.name,
        "args": call.arguments,
        "ok": not result.is_error,
        "elapsed_sec": round(time.monotonic() - started, 3),
    }
    shown, cut = truncate(result.content, TRANSCRIPT_RESULT_CHARS)
    event["result" if not result.is_error else "error"] = shown
    if cut:
        event["truncated"] = True
    record.transcript.append(event)
    return result
