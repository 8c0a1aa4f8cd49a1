"""The round loop: stop reasons from finished rounds, prompts, resuming after a restart."""

from __future__ import annotations

from dataclasses import dataclass, field

from srb_tui.agents.adapters import python_problem
from srb_tui.agents.rounds import (
    CONTINUE,
    FRESH_CONTEXT,
    FRESH_WEDGED,
    NextRound,
    RoundRecord,
    decide,
    is_complete,
    plan,
    run_rounds,
    turn_ended_prompt,
    wedge_limit,
)


def rec(n: int, msg: str = "", *, changed: bool = False, acted: bool = False,
        failed: bool = False, work: bool = True, rc: int = 0, error: str | None = None,
        fresh: bool = False) -> RoundRecord:
    return RoundRecord(n, msg, rc, changed, acted, failed, work, error, fresh=fresh)


def wedge(n: int, *, fresh: bool = False) -> RoundRecord:
    """A round the per-round cap stopped (exit 124) that produced nothing."""
    return rec(n, failed=True, work=False, rc=124, error="timed out", fresh=fresh)


def test_completion_is_the_last_line_exactly() -> None:
    assert is_complete("done\n\nSRB_TASK_COMPLETE\n")
    assert is_complete("done\n`SRB_TASK_COMPLETE`.")
    assert is_complete("**SRB_TASK_COMPLETE**")
    assert not is_complete("I cannot honestly emit SRB_TASK_COMPLETE.")
    assert not is_complete("SRB_TASK_COMPLETE\nbut one more thing")
    assert not is_complete("")
    assert is_complete("ok\nDONE-42", "DONE-42")


def test_decide_stop_reasons() -> None:
    assert decide([rec(1, changed=True)]) is None
    done = decide([rec(1, changed=True), rec(2, "x\nSRB_TASK_COMPLETE")])
    assert done is not None and (done.stop_reason, done.rounds) == ("completed", 2)
    idle = decide([rec(1, changed=True), rec(2), rec(3), rec(4)])
    assert idle is not None and (idle.stop_reason, idle.rounds) == ("idle", 4)
    # a round that ran commands without writing is thinking, not idle
    assert decide([rec(1), rec(2, acted=True), rec(3)]) is None
    infra = decide([rec(n, failed=True, work=False, rc=1, error="HTTP 500") for n in (1, 2, 3)])
    assert infra is not None and infra.stop_reason == "infrastructure"
    assert "HTTP 500" in infra.detail
    # a failure after real work resets the strike count
    assert decide([rec(1, failed=True, work=False), rec(2, failed=True, work=True),
                   rec(3, failed=True, work=False), rec(4, failed=True, work=False)]) is None
    overflow = "Prompt is too long: 210000 tokens"
    assert plan([rec(1, failed=True, error=overflow)]) == NextRound("fresh", cause=FRESH_CONTEXT)
    # each new session that overflows again uses up one of the three rotations
    ctx = decide([rec(n, failed=True, error=overflow, fresh=n > 1) for n in range(1, 5)])
    assert ctx is not None and ctx.stop_reason == "infrastructure" and ctx.rounds == 4
    assert "context window" in ctx.detail
    # a failed round that says the token is not a completion
    assert decide([rec(1, "SRB_TASK_COMPLETE", failed=True, work=True)]) is None


@dataclass
class FakeIO:
    script: list[RoundRecord]
    done: list[RoundRecord] = field(default_factory=list)
    pending: int | None = None
    started: list[tuple[int, str]] = field(default_factory=list)
    budget: str | None = None
    notes: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    budgets: list[float] = field(default_factory=list)

    async def finished_rounds(self) -> list[RoundRecord]:
        return list(self.done)

    async def unfinished_round(self) -> int | None:
        return self.pending

    async def start_round(self, number: int, prompt: str, budget_sec: float,
                          kind: str = "continue") -> None:
        assert budget_sec > 0
        self.started.append((number, prompt))
        self.kinds.append(kind)
        self.budgets.append(budget_sec)

    async def wait_round(self, number: int) -> RoundRecord:
        return self.script[number - 1]

    async def over_budget(self) -> str | None:
        return self.budget

    def note(self, text: str) -> None:
        self.notes.append(text)


async def test_prompts_instruction_then_continue() -> None:
    io = FakeIO([rec(1, changed=True), rec(2, changed=True), rec(3, "SRB_TASK_COMPLETE")])
    out = await run_rounds(io, "INSTRUCTION", deadline=1e12)
    assert (out.stop_reason, out.rounds) == ("completed", 3)
    # a clean turn without the token is told how to finish; it is not told it broke off
    assert io.started == [(1, "INSTRUCTION"), (2, turn_ended_prompt()),
                          (3, turn_ended_prompt())]
    assert "single line SRB_TASK_COMPLETE" in turn_ended_prompt()
    assert io.kinds == ["instruction", "continue", "continue"]


async def test_a_dropped_round_is_resumed_with_the_continue_prompt() -> None:
    io = FakeIO([rec(1, failed=True, work=True, rc=1), rec(2, "SRB_TASK_COMPLETE")])
    out = await run_rounds(io, "I", deadline=1e12, backoff_sec=0)
    assert out.stop_reason == "completed"
    assert io.started[1] == (2, CONTINUE)
    assert "interrupted on our side" in CONTINUE


def test_wedges_rotate_the_session_then_end_as_infrastructure() -> None:
    # a capped round that produced work is dropped and resumed, never counted
    assert plan([rec(n, failed=True, work=True, rc=124) for n in (1, 2, 3, 4)]) == NextRound(
        "continue")
    assert plan([wedge(1), wedge(2)]) == NextRound("continue")
    assert plan([wedge(1), wedge(2), wedge(3)]) == NextRound("fresh", cause=FRESH_WEDGED)
    # any round that was not stopped by the cap resets the wedge count
    assert plan([wedge(1), wedge(2), rec(3, changed=True), wedge(4), wedge(5)]) == NextRound(
        "continue")
    # three rotations, each followed by max_wedges more wedges, then the phase stops
    history = [wedge(n, fresh=n in (4, 7, 10)) for n in range(1, 13)]
    assert plan(history[:11]) == NextRound("continue")
    out = decide(history)
    assert out is not None and out.stop_reason == "infrastructure" and out.rounds == 12
    assert "per-round cap" in out.detail and "3 new sessions" in out.detail
    # the count is about 15 % of the phase's budget in caps, never under 3
    assert wedge_limit(3600.0) == 3
    assert wedge_limit(40 * 3600.0) == 12


async def test_a_fresh_session_gets_the_instruction_again_and_a_per_round_cap() -> None:
    script = [wedge(1), wedge(2), wedge(3), rec(4, "SRB_TASK_COMPLETE", fresh=True)]
    io = FakeIO(script)
    out = await run_rounds(io, "THE TASK", deadline=1e12, backoff_sec=0, max_wedges=3)
    assert out.stop_reason == "completed"
    assert io.kinds == ["instruction", "continue", "continue", "fresh"]
    fresh = io.started[3][1]
    assert fresh.startswith(FRESH_WEDGED) and fresh.endswith("THE TASK")
    assert all(b == 1800.0 for b in io.budgets)  # the cap, not the remaining day
    assert any("new session" in n for n in io.notes)


async def test_resume_waits_for_the_unfinished_round_then_goes_on() -> None:
    script = [rec(1, changed=True), rec(2, changed=True), rec(3, "SRB_TASK_COMPLETE")]
    io = FakeIO(script, done=[script[0]], pending=2)
    out = await run_rounds(io, "I", deadline=1e12)
    assert out.stop_reason == "completed"
    assert io.started == [(3, turn_ended_prompt())]  # round 2 was not started again
    assert any("round 2" in n for n in io.notes)


async def test_budget_and_deadline() -> None:
    io = FakeIO([rec(1, changed=True)] * 5, budget="budget: run spent $60 of $50")
    out = await run_rounds(io, "I", deadline=1e12)
    assert out.stop_reason == "budget" and "$60" in out.detail
    now = [1000.0]
    io2 = FakeIO([rec(1, changed=True)] * 5)
    out2 = await run_rounds(io2, "I", deadline=1005.0, clock=lambda: now[0])
    assert out2.stop_reason == "deadline" and io2.started == []


def test_mini_swe_agent_is_refused_without_python_3_10() -> None:
    # what `python3 -c 'print(major.minor)'` gives in the agent container, case by case
    missing = python_problem(127, "")
    assert missing is not None and "no python3" in missing and "exit 127" in missing
    old = python_problem(0, "3.9\n")
    assert old is not None and "Python 3.9" in old and ">= 3.10" in old
    odd = python_problem(0, "Python 3.12.1")
    assert odd is not None and "not a version" in odd
    assert python_problem(0, "3.10\n") is None
    assert python_problem(0, "3.13") is None
