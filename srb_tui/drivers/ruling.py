"""One scope ruling through a ``rule`` tool: Stage III's model adjudicator.

A few turns, no resumes (an outage here has its designed outcome: the ruling is undecided
and the round is an error, to be re-run), no reading tools. ``in_scope`` is True/False when
the model called ``rule`` with a usable answer; False with a reason when it answered
without ruling (asking again would not change that); None when it could not be reached.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import ModelDriver, ToolCall, ToolSchema
from .loop_engine import FinalDecision, LoopPlan, drive_loop
from .loop_records import HARNESS_FAULTS, LoopRecord

RULE = ToolSchema(
    "rule",
    "Record your scope ruling, once.",
    {
        "type": "object",
        "properties": {
            "in_scope": {"type": "boolean"},
            "reason": {
                "type": "string",
                "description": "One or two sentences naming the assertion you ruled on.",
            },
        },
        "required": ["in_scope", "reason"],
    },
)
MAX_TURNS = 4


@dataclass
class Ruling(LoopRecord):
    """The adjudicator's answer and its transcript."""

    in_scope: bool | None = None
    ruling: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"in_scope": self.in_scope, "ruling": self.ruling, "error": self.error,
                **self.common_dict()}  # fmt: skip


@dataclass
class _NoChannel:
    """The ruling offers no channel tool; nothing is ever forwarded."""

    calls: list[str] = field(default_factory=list)

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append(tool)
        return {"ok": False, "error": f"no tool {tool!r} here"}


async def run_ruling(
    driver: ModelDriver, system: str, prompt: str, *, deadline: float | None = None
) -> Ruling:
    """Ask for one ruling (see the module docstring)."""
    record = Ruling(session=f"adjudicator-{uuid.uuid4().hex[:8]}")

    def on_final(call: ToolCall) -> FinalDecision:
        args = call.arguments if not call.error else {}
        verdict, reason = args.get("in_scope"), args.get("reason")
        if isinstance(verdict, bool) and isinstance(reason, str):
            return FinalDecision("accepted", value={"in_scope": verdict, "reason": reason},
                          farewell={"type": "ruling_recorded"})  # fmt: skip
        text = "rule needs in_scope (true or false) and a reason; call it again"
        return FinalDecision("rejected", text, payload={"type": "ruling_rejected", "message": text})

    answer = await drive_loop(record, driver, _NoChannel(), LoopPlan(
        system=system, user=prompt, tools=[RULE], channel_tools=(), local_tools={},
        final_tool="rule", on_final=on_final, context={"role": "adjudicator"},
        max_turns=MAX_TURNS, max_nudges=1, deadline=deadline, max_resumes=0,
    ))  # fmt: skip
    if isinstance(answer, dict):
        record.in_scope, record.ruling = bool(answer["in_scope"]), str(answer["reason"])
    elif record.ending in HARNESS_FAULTS or record.ending == "deadline":
        record.error = record.reason or record.ending
    else:
        record.in_scope = False
        record.ruling = f"the adjudicator did not return a ruling ({record.ending})"
    return record
