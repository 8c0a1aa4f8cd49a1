"""Events of Stage III lanes, published as each one ends (not once when all six have).

Each is written to the store (``adversary_rounds``, ``counterexamples``) before it is
published, like every other service event, so a view that misses one rebuilds from the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from srb_tui.service.events import Event


@dataclass(frozen=True)
class AdversaryRoundEnded(Event):
    """One adversary lane ended: its outcome, how long it ran, how many candidates."""

    adversary_id: str
    outcome: str
    duration_sec: float
    candidates: int


__all__ = ["AdversaryRoundEnded"]
