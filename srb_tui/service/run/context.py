"""What a run's phase functions are handed: the small typed part of the run service they
use, so a phase (preparing, grading, finishing) returns what happened to the orchestrator
instead of calling back into it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine
from srb_tui.service.run.run_moves import RunMoves
from srb_tui.store import Store


@dataclass(frozen=True)
class RunContext:
    """Settings, store, the engine that holds the run's containers, the moves that write a
    run's transitions and announce them, and the store's container tag."""

    settings: Settings
    store: Store
    engine: DockerEngine
    moves: RunMoves
    store_tag: str

    def run_dir(self, run_id: str) -> Path:
        return self.settings.run_dir(run_id)

    def submission_dir(self, run_id: str) -> Path:
        return self.settings.submission_dir(run_id)
