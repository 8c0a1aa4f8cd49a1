"""The host-side tool loops: one Stage I review sample, one Stage III adversary round.

A loop asks the driver for a turn, executes its tool calls (reading tools and `try_test`
through a `ToolChannel`, i.e. inside the stage container), threads the results back, and
stops at the final call (`submit_review` / `report`), the turn limit, the deadline, or a
fault. An invalid final call earns exactly one rejection and one resubmit (reviews are
checked by the grader's `ReviewIntake`). A turn without tool calls gets a short nudge (at
most `max_nudges`). Token use, wall time and a transcript (the neutral messages plus an
event list for the console) are recorded. Nothing here ever sees an API key.

Deadlines are absolute `time.monotonic()` values (`deadline_in(seconds)` makes one).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..grader.review import AuditGate, ReviewIntake, SampleGrade, gates_from, grade_sample
from .base import (
    AssistantMessage,
    DriverError,
    Message,
    ModelDriver,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSchema,
    Usage,
    UserText,
)
from .channel import ChannelError, ToolChannel
from .tools import (
    REPORT,
    TRY_TEST,
    candidate_problems,
    reading_tools,
    rejection_text,
    report_problems,
    submit_review_schema,
)

MAX_RESULT_CHARS = 100_000
TRANSCRIPT_RESULT_CHARS = 16_000
ENDINGS = (
    "accepted",
    "invalid_twice",
    "no_submission",
    "max_turns",
    "deadline",
    "driver_error",
    "channel_error",
)
HARNESS_FAULTS = ("driver_error", "channel_error")


def deadline_in(seconds: float) -> float:
    """An absolute deadline `seconds` from now, on the loop's clock."""
    return time.monotonic() + seconds


# --------------------------------------------------------------------------- records


def message_to_dict(message: Message) -> dict[str, Any]:
    """A neutral message as JSON-ready data (for the store and the console)."""
    if isinstance(message, UserText):
        return {"role": "user", "text": message.text}
    if isinstance(message, AssistantMessage):
        return {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [_call_dict(call) for call in message.tool_calls],
        }
    return {
        "role": "tool",
        "results": [
            {"call_id": r.call_id, "name": r.name, "is_error": r.is_error, "content": r.content}
            for r in message.results
        ],
        **({"text": message.text} if message.text else {}),
    }


def _call_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.error:
        out["error"] = call.error
    return out


@dataclass
class _Record:
    """What every loop records."""

    ending: str = ""
    reason: str = ""
    rejections: int = 0
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    resumes: int = 0
    wall_sec: float = 0.0
    driver: str = ""
    session: str = ""
    tools: list[str] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    def common_dict(self) -> dict[str, Any]:
        return {
            "ending": self.ending,
            "reason": self.reason,
            "rejections": self.rejections,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "resumes": self.resumes,
            "wall_sec": round(self.wall_sec, 3),
            "driver": self.driver,
            "session": self.session,
            "tools": list(self.tools),
            "transcript": self.transcript,
            "messages": [message_to_dict(m) for m in self.messages],
        }


@dataclass
class ReviewSample(_Record):
    """One Stage I review sample: accepted (with its grade) or unusable, and why."""

    index: int = 0
    status: str = "unusable"
    """accepted | unusable"""
    review: dict[str, Any] | None = None
    grade: SampleGrade | None = None
    grade_error: str = ""

    @property
    def usable(self) -> bool:
        return self.status == "accepted"

    @property
    def harness_fault(self) -> bool:
        """The sample is missing because of the driver or the channel, not the reviewer."""
        return self.ending in HARNESS_FAULTS

    def to_dict(self) -> dict[str, Any]:
        grade = None
        if self.grade is not None:
            grade = {
                "usable": self.grade.usable,
                "reason": self.grade.reason,
                "gates": {
                    gid: {
                        "reported": v.reported,
                        "recorded": v.recorded,
                        "downgraded": v.downgraded,
                        "evidence": v.evidence,
                    }
                    for gid, v in self.grade.gates.items()
                },
            }
        return {
            "index": self.index,
            "status": self.status,
            "review": self.review,
            "grade": grade,
            "grade_error": self.grade_error,
            **self.common_dict(),
        }


@dataclass
class AdversaryTranscript(_Record):
    """One Stage III round: the reported candidate (if any), every try, and why it ended.

    status: reported (a candidate was handed in; the stage adjudicates it) | gave_up
    (reported that nothing was found) | no_report (turns, deadline, no valid report) |
    error (driver or channel fault: the round is not a verdict).
    """

    adversary_id: str = ""
    status: str = "no_report"
    report: dict[str, Any] | None = None
    candidate: dict[str, str] | None = None
    tries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def harness_error(self) -> str | None:
        return self.reason if self.ending in HARNESS_FAULTS else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "adversary_id": self.adversary_id,
            "status": self.status,
            "report": self.report,
            "candidate": self.candidate,
            "tries": self.tries,
            **self.common_dict(),
        }


# --------------------------------------------------------------------------- engine


@dataclass(frozen=True)
class _Final:
    """The verdict on a final call: accepted (value, farewell), rejected (message) or
    unusable (reason)."""

    kind: str
    message: str = ""
    value: Any = None
    farewell: Mapping[str, Any] | None = None
    payload: Mapping[str, Any] | None = None


FinalHandler = Callable[[ToolCall], _Final]
LocalTool = Callable[[ToolCall], Awaitable[ToolResult]]


def _truncate(text: str, limit: int) -> tuple[str, bool]:
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
    content, _ = _truncate(text, MAX_RESULT_CHARS)
    payload = {"type": "tool_result", **reply}
    return ToolResult(call.id, call.name, content, is_error=not ok, payload=payload)


def _error_result(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(
        call.id,
        call.name,
        "error: " + message,
        is_error=True,
        payload={"type": "tool_result", "ok": False, "error": message},
    )


RESUME_BACKOFF_SEC = 5.0
ADVERSARY_RESUMES = 3


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


async def _drive(
    record: _Record,
    driver: ModelDriver,
    channel: ToolChannel,
    *,
    system: str,
    user: str,
    tools: Sequence[ToolSchema],
    channel_tools: Iterable[str],
    local_tools: Mapping[str, LocalTool],
    final_tool: str,
    on_final: FinalHandler,
    context: Mapping[str, Any],
    max_turns: int,
    max_nudges: int,
    deadline: float | None,
    max_resumes: int = 0,
    resume_backoff_sec: float = RESUME_BACKOFF_SEC,
) -> Any:
    """Run the loop, filling `record`; returns the accepted final value (or None).

    ``max_resumes``: how often a model failure that outlived the driver's own retries is
    waited out (backoff doubling from ``resume_backoff_sec``, never past the deadline) and
    the same conversation re-sent, instead of ending the loop as ``driver_error``."""
    started = time.monotonic()
    forward = set(channel_tools)
    offered = [t.name for t in tools]
    record.driver = driver.label
    record.tools = offered
    record.messages.append(UserText(user))
    accepted: Any = None
    farewell: Mapping[str, Any] | None = None
    nudges = 0
    try:
        while not record.ending:
            if record.turns >= max_turns:
                record.ending, record.reason = "max_turns", f"no {final_tool} in {max_turns} turns"
                break
            remaining = _remaining(deadline)
            if remaining is not None and remaining <= 0:
                record.ending, record.reason = "deadline", f"the time ran out before {final_tool}"
                break
            try:
                turn = await driver.complete(
                    system,
                    record.messages,
                    tools,
                    session=record.session,
                    context=context,
                    timeout_sec=remaining,
                )
            except DriverError as exc:
                after = _remaining(deadline)
                wait = resume_backoff_sec * (2**record.resumes)
                if after is not None and after <= 0:
                    record.ending = "deadline"
                    record.reason = f"the time ran out waiting for the model ({exc})"
                elif (
                    exc.retryable
                    and record.resumes < max_resumes
                    and (after is None or after > wait)
                ):
                    record.resumes += 1
                    record.transcript.append(
                        {"kind": "resume", "after_sec": wait, "error": str(exc)[:500]}
                    )
                    await asyncio.sleep(wait)
                    continue
                else:
                    record.ending, record.reason = "driver_error", str(exc)
                break
            record.turns += 1
            record.usage = record.usage + turn.usage
            record.messages.append(turn.as_message())
            record.transcript.append(
                {
                    "kind": "assistant",
                    "turn": record.turns,
                    "text": turn.text,
                    "tool_calls": [_call_dict(c) for c in turn.tool_calls],
                    "stop_reason": turn.stop_reason,
                    "input_tokens": turn.usage.input_tokens,
                    "output_tokens": turn.usage.output_tokens,
                    "latency_sec": round(turn.latency_sec, 3),
                    "attempts": turn.attempts,
                }
            )
            if not turn.tool_calls:
                if turn.stop_reason == "exited":
                    record.ending, record.reason = "no_submission", turn.text
                    break
                if nudges >= max_nudges:
                    record.ending = "no_submission"
                    record.reason = f"the model stopped without calling {final_tool}"
                    break
                nudges += 1
                nudge = (
                    f"Keep going with the tools. When you are done, call {final_tool}; "
                    "that is the only way to finish."
                )
                record.messages.append(UserText(nudge))
                record.transcript.append({"kind": "nudge", "text": nudge})
                continue
            results: list[ToolResult | None] = [None] * len(turn.tool_calls)
            final_index: int | None = None
            for index, call in enumerate(turn.tool_calls):
                record.tool_calls += 1
                if call.name == final_tool:
                    if final_index is None:
                        final_index = index
                    else:
                        results[index] = _error_result(call, f"only one {final_tool} per turn")
                    continue
                if call.error:
                    results[index] = _error_result(call, call.error)
                elif call.name in local_tools:
                    results[index] = await local_tools[call.name](call)
                elif call.name in forward:
                    results[index] = await _forward(record, channel, call, deadline)
                else:
                    results[index] = _error_result(
                        call, f"tool {call.name!r} is not offered; tools: {', '.join(offered)}"
                    )
                result = results[index]
                if result is not None and result.is_error:
                    record.tool_errors += 1
                if record.ending:
                    break
            if record.ending:
                break
            if final_index is not None:
                call = turn.tool_calls[final_index]
                decision = on_final(call)
                record.transcript.append(
                    {
                        "kind": final_tool,
                        "call_id": call.id,
                        "arguments": call.arguments,
                        "decision": decision.kind,
                        "message": decision.message,
                    }
                )
                if decision.kind == "accepted":
                    accepted, farewell = decision.value, decision.farewell
                    record.ending = "accepted"
                    results[final_index] = ToolResult(
                        call.id, call.name, "accepted", payload=decision.farewell
                    )
                elif decision.kind == "rejected":
                    record.rejections += 1
                    results[final_index] = ToolResult(
                        call.id, call.name, decision.message, True, decision.payload
                    )
                else:
                    record.ending, record.reason = "invalid_twice", decision.message
                    farewell = decision.payload
                    results[final_index] = ToolResult(
                        call.id, call.name, decision.message, True, decision.payload
                    )
            record.messages.append(ToolResults(tuple(r for r in results if r is not None)))
    finally:
        record.wall_sec = time.monotonic() - started
        try:
            await driver.end_session(record.session, farewell)
        except DriverError as exc:
            record.transcript.append({"kind": "note", "text": f"ending the session: {exc}"})
    return accepted


async def _forward(
    record: _Record, channel: ToolChannel, call: ToolCall, deadline: float | None
) -> ToolResult | None:
    """Execute one call through the channel; a channel fault or the deadline ends the loop."""
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
    event: dict[str, Any] = {
        "kind": "tool",
        "call_id": call.id,
        "name": call.name,
        "args": call.arguments,
        "ok": not result.is_error,
        "elapsed_sec": round(time.monotonic() - started, 3),
    }
    shown, cut = _truncate(result.content, TRANSCRIPT_RESULT_CHARS)
    event["result" if not result.is_error else "error"] = shown
    if cut:
        event["truncated"] = True
    record.transcript.append(event)
    return result


# --------------------------------------------------------------------------- Stage I


async def run_review(
    driver: ModelDriver,
    channel: ToolChannel,
    system_prompt: str,
    user_prompt: str,
    gates: Iterable[AuditGate | Mapping[str, Any] | str],
    *,
    max_turns: int = 80,
    deadline: float | None = None,
    sample: int = 0,
    allowed_commands: Sequence[str] = (),
    grade: bool = True,
    max_nudges: int = 2,
) -> ReviewSample:
    """Run one review sample to its accepted review (graded with the evidence re-check
    through the channel's `check_evidence` when `grade`) or to the reason it has none."""
    gate_list = gates_from(gates)
    tools = [*reading_tools(allowed_commands), submit_review_schema([g.id for g in gate_list])]
    record = ReviewSample(index=sample, session=f"review-{sample}-{uuid.uuid4().hex[:8]}")
    intake = ReviewIntake(gate_list)

    def on_final(call: ToolCall) -> _Final:
        review: object = None if call.error else call.arguments
        verdict, text = intake.offer(review)
        if verdict == "accepted":
            return _Final("accepted", value=review, farewell={"type": "review_accepted"})
        if verdict == "rejected":
            return _Final("rejected", text, payload={"type": "review_rejected", "message": text})
        return _Final("unusable", text, payload={"type": "review_unusable", "message": text})

    context = {
        "role": "reviewer",
        "sample": sample,
        "gates": [
            {"id": g.id, "title": g.title, "question": g.question, "required": g.required}
            for g in gate_list
        ],
    }
    review = await _drive(
        record,
        driver,
        channel,
        system=system_prompt,
        user=user_prompt,
        tools=tools,
        channel_tools=[t.name for t in tools if t.name != "submit_review"],
        local_tools={},
        final_tool="submit_review",
        on_final=on_final,
        context=context,
        max_turns=max_turns,
        max_nudges=max_nudges,
        deadline=deadline,
    )
    if record.ending == "accepted" and isinstance(review, dict):
        record.status, record.review = "accepted", review
        if grade:
            await _grade(record, channel, review, gate_list)
    return record


async def _grade(
    record: ReviewSample, channel: ToolChannel, review: dict[str, Any], gates: Sequence[AuditGate]
) -> None:
    """Re-check every fail's citations through the channel, then grade the sample."""
    wanted: dict[str, tuple[object, object, object]] = {}
    for answer in review.get("gates", []):
        if not isinstance(answer, dict) or answer.get("verdict") != "fail":
            continue
        for item in answer.get("evidence", []) or []:
            if isinstance(item, dict):
                triple = (item.get("path"), item.get("line"), item.get("quote"))
                wanted[json.dumps(triple, default=str)] = triple
    checked: dict[str, Mapping[str, Any]] = {}
    for key, (path, line, quote) in wanted.items():
        try:
            reply = await channel.call(
                "check_evidence", {"path": path, "line": line, "quote": quote}
            )
        except ChannelError as exc:
            record.grade_error = f"evidence re-check failed: {exc}"
            return
        if reply.get("ok") is not True or not isinstance(reply.get("result"), dict):
            record.grade_error = f"evidence re-check failed: {reply.get('error', reply)}"
            return
        checked[key] = reply["result"]

    def lookup(path: object, line: object, quote: object) -> Mapping[str, Any]:
        key = json.dumps((path, line, quote), default=str)
        return checked.get(key, {"grounded": False, "reason": "not re-checked"})

    record.grade = grade_sample(review, gates, lookup, record.index)


# --------------------------------------------------------------------------- Stage III


async def run_adversary_round(
    driver: ModelDriver,
    channel: ToolChannel,
    system_prompt: str,
    user_prompt: str,
    *,
    adversary_id: str,
    max_turns: int = 200,
    deadline: float | None = None,
    allowed_commands: Sequence[str] = (),
    max_nudges: int = 2,
    max_resumes: int = ADVERSARY_RESUMES,
    resume_backoff_sec: float = RESUME_BACKOFF_SEC,
) -> AdversaryTranscript:
    """Run one adversary round: read both trees, `try_test` candidates through the channel,
    and `report` the final candidate (or that none was found). A model outage that outlives
    the driver's retries is resumed up to ``max_resumes`` times inside the deadline."""
    tools = [*reading_tools(allowed_commands), TRY_TEST, REPORT]
    record = AdversaryTranscript(
        adversary_id=adversary_id, session=f"adversary-{adversary_id}-{uuid.uuid4().hex[:8]}"
    )
    state = {"rejected": 0}

    async def try_test(call: ToolCall) -> ToolResult:
        files = call.arguments.get("files")
        problems = candidate_problems(files)
        if problems:
            return _error_result(call, "; ".join(problems))
        result = await _forward(record, channel, call, deadline)
        if result is None:
            return _error_result(call, record.reason)
        assert isinstance(files, dict)
        record.tries.append(
            {
                "call_id": call.id,
                "files": dict(files),
                "ok": not result.is_error,
                "reply": dict(result.payload or {}),
            }
        )
        return result

    def on_final(call: ToolCall) -> _Final:
        report: object = None if call.error else call.arguments
        problems = report_problems(report) if not call.error else [str(call.error)]
        if not problems:
            return _Final("accepted", value=report, farewell={"type": "report_accepted"})
        text = rejection_text(problems, "report")
        if state["rejected"] < 1:
            state["rejected"] += 1
            return _Final("rejected", text, payload={"type": "report_rejected", "message": text})
        reason = "report still invalid after one resubmit: " + "; ".join(problems)
        return _Final("unusable", reason, payload={"type": "report_unusable", "message": reason})

    report = await _drive(
        record,
        driver,
        channel,
        system=system_prompt,
        user=user_prompt,
        tools=tools,
        channel_tools=[t.name for t in reading_tools(allowed_commands)],
        local_tools={"try_test": try_test},
        final_tool="report",
        on_final=on_final,
        context={"role": "adversary", "adversary_id": adversary_id},
        max_turns=max_turns,
        max_nudges=max_nudges,
        deadline=deadline,
        max_resumes=max_resumes,
        resume_backoff_sec=resume_backoff_sec,
    )
    if record.ending == "accepted" and isinstance(report, dict):
        record.report = report
        if report.get("found") is True:
            record.status = "reported"
            record.candidate = {str(k): str(v) for k, v in report["files"].items()}
        else:
            record.status = "gave_up"
    elif record.ending in HARNESS_FAULTS:
        record.status = "error"
    return record
