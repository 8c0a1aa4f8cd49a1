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

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..grader.audit.review import AuditGate, ReviewIntake, gates_from, grade_sample
from .base import ModelDriver, ToolCall, ToolResult
from .channel import ChannelError, ToolChannel
from .fence import Fence
from .loop_engine import (
    ADVERSARY_RESUMES,
    RESUME_BACKOFF_SEC,
    FinalDecision,
    LoopPlan,
    deadline_in,
    drive_loop,
    error_result,
    forward,
)
from .loop_records import (
    ENDINGS,
    HARNESS_FAULTS,
    AdversaryTranscript,
    ReviewSample,
    message_to_dict,
)
from .tools import (
    REPORT,
    TRY_TEST,
    candidate_problems,
    reading_tools,
    rejection_text,
    report_problems,
    submit_review_schema,
)

__all__ = [
    "ADVERSARY_RESUMES", "ENDINGS", "HARNESS_FAULTS", "RESUME_BACKOFF_SEC", "AdversaryTranscript",
    "ReviewSample", "deadline_in", "message_to_dict", "run_adversary_round", "run_review",
]  # fmt: skip


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
    fence: Fence | None = None,
) -> ReviewSample:
    """Run one review sample to its accepted review (graded with the evidence re-check
    through the channel's `check_evidence` when `grade`) or to the reason it has none.
    With a `fence`, tool results reach the model fenced as data and the system prompt says
    so (issue 37)."""
    gate_list = gates_from(gates)
    tools = [*reading_tools(allowed_commands), submit_review_schema([g.id for g in gate_list])]
    record = ReviewSample(index=sample, session=f"review-{sample}-{uuid.uuid4().hex[:8]}")
    intake = ReviewIntake(gate_list)

    def on_final(call: ToolCall) -> FinalDecision:
        review: object = None if call.error else call.arguments
        verdict, text = intake.offer(review)
        if verdict == "accepted":
            return FinalDecision("accepted", value=review, farewell={"type": "review_accepted"})
        if verdict == "rejected":
            return FinalDecision(
                "rejected", text, payload={"type": "review_rejected", "message": text}
            )
        return FinalDecision("unusable", text, payload={"type": "review_unusable", "message": text})

    context = {
        "role": "reviewer",
        "sample": sample,
        "gates": [
            {"id": g.id, "title": g.title, "question": g.question, "required": g.required}
            for g in gate_list
        ],
    }
    review = await drive_loop(record, driver, channel, LoopPlan(
        system=system_prompt + (fence.rule() if fence is not None else ""),
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
        fence=fence,
    ))
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
            return error_result(call, "; ".join(problems))
        result = await forward(record, channel, call, deadline)
        if result is None:
            return error_result(call, record.reason)
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

    def on_final(call: ToolCall) -> FinalDecision:
        report: object = None if call.error else call.arguments
        problems = report_problems(report) if not call.error else [str(call.error)]
        if not problems:
            return FinalDecision("accepted", value=report, farewell={"type": "report_accepted"})
        text = rejection_text(problems, "report")
        if state["rejected"] < 1:
            state["rejected"] += 1
            return FinalDecision(
                "rejected", text, payload={"type": "report_rejected", "message": text}
            )
        reason = "report still invalid after one resubmit: " + "; ".join(problems)
        return FinalDecision(
            "unusable", reason, payload={"type": "report_unusable", "message": reason}
        )

    report = await drive_loop(record, driver, channel, LoopPlan(
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
    ))
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
