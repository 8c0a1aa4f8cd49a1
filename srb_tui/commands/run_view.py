"""The live view of ``srb run`` / ``srb resume``: what a run shows while it is driven,
updated from the run service's events (one subscriber, exactly as the console is)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from srb_tui.service.events import (
    Event,
    LogLines,
    Progress,
    RunFinished,
    StageFinished,
    StatusChanged,
)
from srb_tui.service.run.harness_log import HARNESS_ROLE

if TYPE_CHECKING:
    from rich.console import Group
    from rich.live import Live

    from srb_tui.service.run.orchestrator import RunService


@dataclass
class Display:
    """What the live view shows, updated from events."""

    run_id: str = ""
    task: str = ""
    agent: str = ""
    status: str = "pending"
    budget: float | None = None
    started: float = field(default_factory=time.monotonic)
    tail: deque[tuple[str, str]] = field(default_factory=lambda: deque(maxlen=12))
    lines: int = 0
    progress: str = ""
    stages: list[str] = field(default_factory=list)
    rounds: int = 0
    tokens: int = 0
    client_cost: float = 0.0
    ledger_cost: float | None = None

    def apply(self, event: Event) -> None:
        if isinstance(event, StatusChanged):
            self.status = event.status
        elif isinstance(event, LogLines):
            if event.role == HARNESS_ROLE:
                return  # srb's own lines: the panel shows them as progress already
            self.lines += len(event.lines)
            for _ts, stream, text in event.lines[-12:]:
                self.tail.append((stream, text))
        elif isinstance(event, Progress):
            self.progress = event.message
        elif isinstance(event, StageFinished):
            self.stages.append(stage_line(event))
        else:
            self._apply_round(event)

    def _apply_round(self, event: Event) -> None:
        # A real client's rounds; the module loads with the first such event, not at launch.
        from srb_tui.service.agent_events import AgentRoundFinished

        if isinstance(event, AgentRoundFinished):
            self.rounds = max(self.rounds, event.round)
            self.tokens += sum(event.tokens.values())
            self.client_cost += event.client_cost_usd or 0.0
            if event.ledger_cost_usd is not None:
                self.ledger_cost = event.ledger_cost_usd

    def render(self) -> Group:
        from rich.console import Group
        from rich.text import Text

        elapsed = time.monotonic() - self.started
        budget = f" / {self.budget:.0f}s budget" if self.budget else ""
        head = Text.assemble(
            (f"{self.run_id} ", "bold"), f"{self.task} · {self.agent} · ",
            (self.status, "bold cyan"), f" · {elapsed:.0f}s{budget} · {self.lines} log lines",
        )
        parts: list[Any] = [head]
        if self.rounds:
            cost = ("unpriced" if self.ledger_cost is None
                    else f"${self.ledger_cost:.4f}")
            parts.append(Text(f"agent: {self.rounds} round(s), {self.tokens:,} tokens, "
                              f"cost {cost} (gateway), client estimate "
                              f"${self.client_cost:.4f}"))
        if self.progress:
            parts.append(Text(self.progress[:200], style="dim"))
        if self.stages:
            parts.append(Text(" · ".join(self.stages)))
        for stream, text in self.tail:
            parts.append(Text(f"  {text[:200]}", style="red" if stream == "stderr" else ""))
        return Group(*parts)


def stage_line(event: StageFinished) -> str:
    """``audit: fail`` / ``behavioural: complete (4/4 modules at 1.0)`` / ``verification:
    2 broken, 4 survived``; the harness error when the stage could not measure."""
    info = event.summary
    if event.status != "ok":
        return f"{event.stage}: {event.status} ({info.get('harness_error', 'no detail')})"
    if event.stage == "audit":
        return f"audit: {info.get('gate', '?')}"
    if event.stage == "behavioural":
        rates = info.get("modules") or {}
        perfect = sum(1 for r in rates.values() if r == 1.0)
        state = "complete" if info.get("complete") else "incomplete"
        return f"behavioural: {state} ({perfect}/{len(rates)} modules at 1.0)"
    outcomes = list((info.get("adversaries") or {}).values())
    counts = {k: outcomes.count(k) for k in ("broken", "survived", "error") if k in outcomes}
    return "verification: " + (", ".join(f"{n} {k}" for k, n in counts.items()) or "no rounds")


async def follow(service: RunService, display: Display, live: Live | None,
                 ready: asyncio.Event) -> None:
    """Apply the run's events to ``display`` (and redraw ``live``) until the run finishes;
    ``ready`` is set once subscribed, so no event of the drive is missed."""
    async with service.bus.subscribe() as queue:
        ready.set()
        while True:
            event = await queue.get()
            if event.run_id != display.run_id:
                continue
            display.apply(event)
            if live is not None:
                live.update(display.render())
            if isinstance(event, RunFinished):
                return
