"""The round loop: stop reasons from finished rounds, prompts, resuming after a restart."""

from __future__ import annotations

from dataclasses import dataclass, field

from srb_tui.agents.rounds import (
    CONTINUE,
    RoundRecord,
    decide,
    is_complete,
    run_rounds,
)


def rec(n: int, msg: str = "", *, changed: bool = False, acted: bool = False,
        failed: bool = False, work: bool = True, rc: int = 0, error: str | None = None
        ) -> RoundRecord:
    return RoundRecord(n, msg, rc, changed, acted, failed, work, error)


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
    ctx = decide([rec(1, failed=True, error="prompt is too long: 210000 tokens")])
    assert ctx is not None and ctx.stop_reason == "infrastructure"
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

    async def finished_rounds(self) -> list[RoundRecord]:
        return list(self.done)

    async def unfinished_round(self) -> int | None:
        return self.pending

    async def start_round(self, number: int, prompt: str, budget_sec: float) -> None:
        assert budget_sec > 0
        self.started.append((number, prompt))

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
    assert io.started == [(1, "INSTRUCTION"), (2, CONTINUE), (3, CONTINUE)]


async def test_resume_waits_for_the_unfinished_round_then_goes_on() -> None:
    script = [rec(1, changed=True), rec(2, changed=True), rec(3, "SRB_TASK_COMPLETE")]
    io = FakeIO(script, done=[script[0]], pending=2)
    out = await run_rounds(io, "I", deadline=1e12)
    assert out.stop_reason == "completed"
    assert io.started == [(3, CONTINUE)]  # round 2 was not started again
    assert any("round 2" in n for n in io.notes)


async def test_budget_and_deadline() -> None:
    io = FakeIO([rec(1, changed=True)] * 5, budget="budget: run spent $60 of $50")
    out = await run_rounds(io, "I", deadline=1e12)
    assert out.stop_reason == "budget" and "$60" in out.detail
    now = [1000.0]
    io2 = FakeIO([rec(1, changed=True)] * 5)
    out2 = await run_rounds(io2, "I", deadline=1005.0, clock=lambda: now[0])
    assert out2.stop_reason == "deadline" and io2.started == []
