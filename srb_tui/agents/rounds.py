"""The paper's round loop for real agent clients.

Round 1 gets the instruction; later rounds resume the session with a plain
"continue". The run ends when the final message's last line is exactly the
completion token (``completed``), after ``max_idle`` rounds that changed nothing
(``idle``), when the deadline passes (``deadline``), or when a round fails for a
reason that is not the agent's (``infrastructure``). The loop keeps its own deadline
a margin inside the container's budget so the stop reason is always written.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

StopReason = Literal["completed", "deadline", "idle", "infrastructure"]
COMPLETION_TOKEN = "MIGRATION COMPLETE"
CONTINUE = "continue"


@dataclass(frozen=True)
class RoundResult:
    """What one round produced: the client's last message, whether the workspace
    changed, and whether the round failed for an infrastructure reason."""

    final_message: str
    workspace_changed: bool
    infrastructure_error: str | None = None


@dataclass(frozen=True)
class LoopOutcome:
    stop_reason: StopReason
    rounds: int
    detail: str


RoundFn = Callable[[int, str, float], Awaitable[RoundResult]]


def is_complete(message: str, token: str = COMPLETION_TOKEN) -> bool:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return bool(lines) and lines[-1] == token


async def run_rounds(
    run_round: RoundFn,
    instruction: str,
    deadline: float,
    *,
    max_idle: int = 3,
    max_rounds: int = 1000,
    token: str = COMPLETION_TOKEN,
    clock: Callable[[], float] = time.monotonic,
) -> LoopOutcome:
    """Drive rounds until one of the four stop reasons; ``run_round(n, prompt, deadline)``."""
    idle = 0
    for number in range(1, max_rounds + 1):
        if clock() >= deadline:
            return LoopOutcome("deadline", number - 1, "the budget ran out between rounds")
        prompt = instruction if number == 1 else CONTINUE
        result = await run_round(number, prompt, deadline)
        if result.infrastructure_error:
            return LoopOutcome("infrastructure", number, result.infrastructure_error)
        if is_complete(result.final_message, token):
            return LoopOutcome("completed", number, "the agent printed the completion token")
        if clock() >= deadline:
            return LoopOutcome("deadline", number, "the budget ran out during a round")
        idle = 0 if result.workspace_changed else idle + 1
        if idle >= max_idle:
            return LoopOutcome("idle", number, f"{idle} rounds in a row changed nothing")
    return LoopOutcome("idle", max_rounds, f"stopped after {max_rounds} rounds")
