"""What the host-side tool loops record: one record a loop, its transcript and messages.

:class:`LoopRecord` holds what every loop counts (ending and why, rejections, token use, turns,
tool calls and errors, resumes, wall time, the transcript events and the neutral messages);
:class:`ReviewSample` (Stage I) and :class:`AdversaryTranscript` (Stage III) add what their
loop produced. ``to_dict`` gives the JSON-ready form the store and the console read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..grader.audit.review import SampleGrade
from .base import AssistantMessage, Message, ToolCall, Usage, UserText

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


def message_to_dict(message: Message) -> dict[str, Any]:
    """A neutral message as JSON-ready data (for the store and the console)."""
    if isinstance(message, UserText):
        return {"role": "user", "text": message.text}
    if isinstance(message, AssistantMessage):
        return {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [call_dict(call) for call in message.tool_calls],
        }
    return {
        "role": "tool",
        "results": [
            {"call_id": r.call_id, "name": r.name, "is_error": r.is_error, "content": r.content}
            for r in message.results
        ],
        **({"text": message.text} if message.text else {}),
    }


def call_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.error:
        out["error"] = call.error
    return out


@dataclass
class LoopRecord:
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
class ReviewSample(LoopRecord):
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
                        **({"tainted": v.tainted} if v.tainted else {}),
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
class AdversaryTranscript(LoopRecord):
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
