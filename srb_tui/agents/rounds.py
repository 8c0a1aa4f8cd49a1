"""The paper's round loop for real agent clients, resumable after srb itself died.

Round 1 gets the instruction; later rounds resume the session with "continue". The
phase stops (names as in the official harness):

``completed``       the final message's last line is the completion token (whitespace and
                    markdown decoration around it ignored; a mention inside prose is not it)
``idle``            ``max_idle`` clean rounds in a row changed nothing and ran no command
``deadline``        the loop's own deadline (a margin inside the container budget, so the
                    reason is always written) passed
``budget``          the model gateway says the run's cost or token budget is spent
``infrastructure``  ``max_strikes`` rounds in a row failed without producing any work
                    (gateway or upstream unreachable, 5xx, dropped streams, a client that
                    crashes at start), or the context window is exhausted

The decision is a pure function of the finished rounds (:func:`decide`), so a resumed
srb rebuilds the loop's state from the store instead of keeping it in memory.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

StopReason = Literal["completed", "deadline", "idle", "budget", "infrastructure"]
COMPLETION_TOKEN = "SRB_TASK_COMPLETE"
CONTINUE = "continue"
MIN_ROUND_SEC = 15.0
TIMEOUT_EXIT = 124

_CONTEXT = re.compile(r"context_length_exceeded|ContextWindowExceeded|maximum context length is|"
                      r"prompt is too long", re.IGNORECASE)


@dataclass(frozen=True)
class RoundRecord:
    """What one finished round tells the loop."""

    number: int
    final_message: str
    exit_code: int | None
    tree_changed: bool
    acted: bool
    failed: bool
    produced_work: bool
    error: str | None = None
    submitted: bool = False  # the client's own completion (mini-swe-agent's "Submitted")

    @property
    def context_exhausted(self) -> bool:
        return self.failed and bool(self.error) and bool(_CONTEXT.search(self.error or ""))


@dataclass(frozen=True)
class LoopOutcome:
    stop_reason: StopReason
    rounds: int
    detail: str


def last_line(message: str) -> str:
    lines = [ln.strip() for ln in message.replace("\r", "").splitlines() if ln.strip()]
    if not lines:
        return ""
    return re.sub(r"[`*_.]+$", "", re.sub(r"^[`*_]+", "", lines[-1])).strip()


def is_complete(message: str, token: str = COMPLETION_TOKEN) -> bool:
    return bool(token) and last_line(message) == token


def decide(
    history: Sequence[RoundRecord], *, token: str = COMPLETION_TOKEN, max_idle: int = 3,
    max_strikes: int = 3,
) -> LoopOutcome | None:
    """The stop reason the finished rounds in ``history`` add up to, or None to go on."""
    idle = strikes = 0
    for rec in history:
        if rec.context_exhausted:
            return LoopOutcome("infrastructure", rec.number,
                               f"round {rec.number}: the context window is exhausted "
                               f"({(rec.error or '')[:200]})")
        if not rec.failed and rec.submitted:
            return LoopOutcome("completed", rec.number,
                               f"round {rec.number}: the client submitted its work")
        if not rec.failed and is_complete(rec.final_message, token):
            return LoopOutcome("completed", rec.number,
                               f"round {rec.number} ended with {token}")
        if rec.failed and not rec.produced_work:
            strikes += 1
            if strikes >= max_strikes:
                return LoopOutcome("infrastructure", rec.number,
                                   f"{strikes} rounds in a row failed without any work; last "
                                   f"error: {(rec.error or f'exit {rec.exit_code}')[:300]}")
            continue
        strikes = 0
        if rec.failed:
            continue  # a dropped round that did work: resume it
        if rec.tree_changed or rec.acted:
            idle = 0
            continue
        idle += 1
        if idle >= max_idle:
            return LoopOutcome("idle", rec.number,
                               f"{idle} clean rounds in a row changed nothing and ran nothing")
    return None


class RoundIO(Protocol):
    """What the loop needs from the agent phase (the container side of rounds)."""

    async def finished_rounds(self) -> list[RoundRecord]: ...

    async def unfinished_round(self) -> int | None: ...

    async def start_round(self, number: int, prompt: str, budget_sec: float) -> None: ...

    async def wait_round(self, number: int) -> RoundRecord: ...

    async def over_budget(self) -> str | None: ...

    def note(self, text: str) -> None: ...


async def run_rounds(
    io: RoundIO,
    instruction: str,
    deadline: float,
    *,
    token: str = COMPLETION_TOKEN,
    max_idle: int = 3,
    max_strikes: int = 3,
    max_rounds: int = 400,
    max_round_sec: float = 3600.0,
    backoff_sec: float = 2.0,
    clock: Callable[[], float] = time.time,
) -> LoopOutcome:
    """Drive rounds until a stop reason; ``deadline`` is wall-clock epoch seconds.

    Picks up after the rounds already recorded, first waiting out a round that was
    started by an earlier srb process and had not ended when it died.
    """
    history = await io.finished_rounds()
    pending = await io.unfinished_round()
    if pending is not None:
        io.note(f"round {pending} was running when srb stopped; waiting for it")
        history.append(await io.wait_round(pending))
    while True:
        outcome = decide(history, token=token, max_idle=max_idle, max_strikes=max_strikes)
        if outcome is not None:
            return outcome
        last = history[-1] if history else None
        if last is not None and last.exit_code == TIMEOUT_EXIT and clock() >= deadline - 1:
            return LoopOutcome("deadline", last.number, "the deadline passed during a round")
        spent = await io.over_budget()
        if spent:
            return LoopOutcome("budget", len(history), spent)
        if len(history) >= max_rounds:
            return LoopOutcome("idle", len(history), f"stopped after {max_rounds} rounds")
        if last is not None and last.failed:
            pause = min(backoff_sec * (2 ** min(_strikes(history), 5)), 60.0)
            await asyncio.sleep(max(0.0, min(pause, deadline - clock() - MIN_ROUND_SEC)))
        remaining = deadline - clock()
        if remaining <= MIN_ROUND_SEC:
            return LoopOutcome("deadline", len(history),
                               f"{max(remaining, 0):.0f}s left of the agent budget")
        number = len(history) + 1
        prompt = instruction if number == 1 else CONTINUE
        await io.start_round(number, prompt, min(remaining, max_round_sec))
        history.append(await io.wait_round(number))


def _strikes(history: Sequence[RoundRecord]) -> int:
    n = 0
    for rec in reversed(history):
        if not (rec.failed and not rec.produced_work):
            break
        n += 1
    return n
