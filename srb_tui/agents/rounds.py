"""The paper's round loop for real agent clients, resumable after srb itself died.

Round 1 gets the instruction; later rounds resume the same session. The prompt of a later
round says what happened, as the official harness's loop does (its rules, in srb's words):
after a round that ended its turn cleanly without the completion token, ``TURN_ENDED``
(a turn boundary, not a verdict; how to finish); after a round that broke off, ``CONTINUE``
(interrupted on our side; nothing was judged); and a round that starts a *new* session
gets ``FRESH_*`` plus the instruction again (the tree holds earlier work; look first).

Each round runs under a per-round wall cap (``max_round_sec``, 1800 s like the official
loop's ``MAX_ROUND_SEC``) as well as the loop's deadline, so a client that hangs instead of
failing costs one cap, not the phase. A round stopped by the cap (exit 124) that produced
no work is a *wedge*; one that produced work is dropped and resumed without counting.
``max_wedges`` wedges in a row (default: 15 % of the phase's budget in caps, at least 3)
retire the session: the next round starts a new one. A context-window overflow retires it
at once. At most ``max_rotations`` (3) sessions are retired; past that the phase stops as
``infrastructure``.

The phase stops (names as in the official harness):

``completed``       the final message's last line is the completion token (whitespace and
                    markdown decoration around it ignored; a mention inside prose is not it)
``idle``            ``max_idle`` clean rounds in a row changed nothing and ran no command
``deadline``        the loop's own deadline (a margin inside the container budget, so the
                    reason is always written) passed
``budget``          the model gateway says the run's cost or token budget is spent
``infrastructure``  ``max_strikes`` rounds in a row failed without producing any work
                    (gateway or upstream unreachable, 5xx, dropped streams, a client that
                    crashes at start), wedged rounds or context overflows that new sessions
                    did not cure

The decision is a pure function of the finished rounds (:func:`plan`), so a resumed
srb rebuilds the loop's state from the store instead of keeping it in memory.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from srb_tui.grader.contract import EXIT_TIMEOUT

StopReason = Literal["completed", "deadline", "idle", "budget", "infrastructure"]
PromptKind = Literal["instruction", "continue", "fresh"]
COMPLETION_TOKEN = "SRB_TASK_COMPLETE"
MIN_ROUND_SEC = 15.0
MAX_ROUND_SEC = 1800.0
MAX_ROTATIONS = 3
MIN_WEDGES = 3
WEDGE_SHARE = 0.15

CONTINUE = (
    "Please carry on with the task from where you stopped. The last round was interrupted "
    "on our side (the connection to the model broke off); that says nothing about your "
    "work, which has not been reviewed or judged. Go on with your own plan until you "
    "consider the task finished."
)
_TURN_ENDED = (
    "Your previous turn ended without a tool call, so the round stopped there. That is only "
    "a turn boundary: nothing about your work has been reviewed or judged, and no deadline "
    "has passed.\n\nIf you have finished, answer with the single line {token} and nothing "
    "else; that line is the only thing that ends the task, and a turn that just stops is "
    "resumed like this one. Otherwise go on with your plan."
)
FRESH_CONTEXT = (
    "Your previous conversation grew longer than the model's context window and was closed."
)
FRESH_WEDGED = (
    "Your previous conversation was closed because its requests stopped being answered; a "
    "new conversation sends a smaller request."
)
_FRESH_BODY = (
    " This is a limit on our side, not a judgement of your work, and no deadline has "
    "passed.\n\nThe repository is exactly as the previous conversation left it and its work "
    "is kept, but this conversation is new: you do not remember what was done or planned. "
    "Do not assume the tree is untouched and do not start from scratch. Read the task below "
    "again, look at the repository to find out what is already done, and continue from "
    "there.\n\n--- task ---\n"
)

_CONTEXT = re.compile(r"context_length_exceeded|ContextWindowExceeded|maximum context length is|"
                      r"prompt is too long", re.IGNORECASE)


def turn_ended_prompt(token: str = COMPLETION_TOKEN) -> str:
    return _TURN_ENDED.format(token=token)


def fresh_prompt(cause: str, instruction: str) -> str:
    return cause + _FRESH_BODY + instruction


def wedge_limit(phase_sec: float, max_round_sec: float = MAX_ROUND_SEC) -> int:
    """Wedged rounds in a row tolerated: ~15 % of the phase's budget spent in caps."""
    if max_round_sec <= 0:
        return MIN_WEDGES
    return max(MIN_WEDGES, int(phase_sec * WEDGE_SHARE / max_round_sec))


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
    fresh: bool = False  # the round started a new session (a rotation)

    @property
    def context_exhausted(self) -> bool:
        return self.failed and bool(self.error) and bool(_CONTEXT.search(self.error or ""))

    @property
    def timed_out(self) -> bool:
        """Stopped by the round's wall clock (the per-round cap, while time was left)."""
        return self.exit_code == EXIT_TIMEOUT


@dataclass(frozen=True)
class NextRound:
    """How the next round starts: its prompt kind and, for a new session, why."""

    kind: PromptKind
    cause: str = ""  # FRESH_CONTEXT / FRESH_WEDGED for kind == "fresh"
    after_clean_turn: bool = False


@dataclass(frozen=True)
class LoopOutcome:
    """How the round loop ended: why, after how many rounds, with what detail."""

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
    max_strikes: int = 3, max_wedges: int = MIN_WEDGES, max_rotations: int = MAX_ROTATIONS,
) -> LoopOutcome | None:
    """The stop reason the finished rounds in ``history`` add up to, or None to go on."""
    step = plan(history, token=token, max_idle=max_idle, max_strikes=max_strikes,
                max_wedges=max_wedges, max_rotations=max_rotations)
    return step if isinstance(step, LoopOutcome) else None


def plan(
    history: Sequence[RoundRecord], *, token: str = COMPLETION_TOKEN, max_idle: int = 3,
    max_strikes: int = 3, max_wedges: int = MIN_WEDGES, max_rotations: int = MAX_ROTATIONS,
) -> LoopOutcome | NextRound:
    """A stop reason, or how the next round starts, from the finished rounds."""
    idle = strikes = wedges = rotations = 0
    fresh_cause = ""
    for rec in history:
        if rec.fresh:
            fresh_cause = ""  # the rotation asked for has happened
        if rec.context_exhausted:
            rotations += 1
            strikes = wedges = 0
            if rotations > max_rotations:
                return LoopOutcome("infrastructure", rec.number,
                                   f"round {rec.number}: the context window is exhausted "
                                   f"after {max_rotations} new sessions "
                                   f"({(rec.error or '')[:200]})")
            fresh_cause = FRESH_CONTEXT
            continue
        if not rec.failed and rec.submitted:
            return LoopOutcome("completed", rec.number,
                               f"round {rec.number}: the client submitted its work")
        if not rec.failed and is_complete(rec.final_message, token):
            return LoopOutcome("completed", rec.number,
                               f"round {rec.number} ended with {token}")
        if rec.timed_out:
            strikes = 0
            if rec.produced_work:
                continue  # still answering when the cap fired: resume, not a wedge
            wedges += 1
            if wedges < max_wedges:
                continue
            if rotations < max_rotations:
                rotations += 1
                wedges = 0
                fresh_cause = FRESH_WEDGED
                continue
            return LoopOutcome("infrastructure", rec.number,
                               f"{wedges} rounds in a row produced nothing before the "
                               f"per-round cap, after {rotations} new sessions")
        wedges = 0
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
    if not history:
        return NextRound("instruction")
    if fresh_cause:
        return NextRound("fresh", cause=fresh_cause)
    last = history[-1]
    return NextRound("continue", after_clean_turn=not last.failed)


def prompt_for(step: NextRound, instruction: str, token: str = COMPLETION_TOKEN) -> str:
    if step.kind == "instruction":
        return instruction
    if step.kind == "fresh":
        return fresh_prompt(step.cause, instruction)
    return turn_ended_prompt(token) if step.after_clean_turn else CONTINUE


class RoundIO(Protocol):
    """What the loop needs from the agent phase (the container side of rounds)."""

    async def finished_rounds(self) -> list[RoundRecord]: ...

    async def unfinished_round(self) -> int | None: ...

    async def start_round(self, number: int, prompt: str, budget_sec: float,
                          kind: PromptKind = "continue") -> None: ...

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
    max_round_sec: float = MAX_ROUND_SEC,
    max_wedges: int | None = None,
    max_rotations: int = MAX_ROTATIONS,
    backoff_sec: float = 2.0,
    clock: Callable[[], float] = time.time,
) -> LoopOutcome:
    """Drive rounds until a stop reason; ``deadline`` is wall-clock epoch seconds.

    Picks up after the rounds already recorded, first waiting out a round that was
    started by an earlier srb process and had not ended when it died.
    """
    if max_wedges is None:
        max_wedges = wedge_limit(max(0.0, deadline - clock()), max_round_sec)
    history = await io.finished_rounds()
    pending = await io.unfinished_round()
    if pending is not None:
        io.note(f"round {pending} was running when srb stopped; waiting for it")
        history.append(await io.wait_round(pending))
    while True:
        last = history[-1] if history else None
        if last is not None and last.timed_out and clock() >= deadline - MIN_ROUND_SEC:
            return LoopOutcome("deadline", last.number, "the deadline passed during a round")
        step = plan(history, token=token, max_idle=max_idle, max_strikes=max_strikes,
                    max_wedges=max_wedges, max_rotations=max_rotations)
        if isinstance(step, LoopOutcome):
            return step
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
        if step.kind == "fresh":
            io.note(f"round {number} starts a new session: {step.cause}")
        await io.start_round(number, prompt_for(step, instruction, token),
                             min(remaining, max_round_sec), kind=step.kind)
        history.append(await io.wait_round(number))


def _strikes(history: Sequence[RoundRecord]) -> int:
    n = 0
    for rec in reversed(history):
        if not (rec.failed and not rec.produced_work):
            break
        n += 1
    return n
