"""The one shape every grading stage has: a :class:`Stage` runs on a :class:`StageContext`
and answers with a :class:`~.common.StageOutcome`.

The ladder builds one context per grading and hands the same object to Stage I, II and III
in turn; a strength campaign builds one per survivor. A stage reads what it needs from the
context and records its own rows (votes, modules, rounds); the envelope and the stage row
are the caller's (:mod:`srb_tui.service.grading.stage_record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from srb_tui.gateway import Gateway
from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.store import Store

from .common import Publish, StageImages, StageOutcome

DEFAULT_PARALLEL = 6
"""How many Stage III adversaries run at once unless the caller says otherwise."""


@dataclass(frozen=True)
class StageContext:
    """What a stage may use of one run.

    ``original`` is State A's tree on the host, ``submission`` the tree under grading,
    ``run_dir`` the run's folder (transcripts go there; ``None`` only for a stage run on
    its own that writes none, e.g. Stage II in a contract test). ``environ`` is where model
    drivers look up API keys (default ``os.environ``); with ``gateway`` they send their
    requests through it with run tokens. ``budget_override`` replaces every adversary's
    budget; ``max_parallel`` bounds the adversaries that run at once.
    """

    engine: DockerEngine
    store: Store
    run_id: str
    task: Task
    original: Path
    submission: Path
    images: StageImages
    publish: Publish
    run_dir: Path | None = None
    environ: Mapping[str, str] | None = None
    gateway: Gateway | None = None
    budget_override: float | None = None
    max_parallel: int = DEFAULT_PARALLEL

    def folder(self) -> Path:
        """The run folder a stage writes its transcripts into."""
        if self.run_dir is None:
            raise ValueError(f"run {self.run_id}: this stage needs the run folder (run_dir)")
        return self.run_dir


class Stage(Protocol):
    """One rung of the ladder. ``name`` is the stage's key (audit | behavioural |
    verification); ``run`` grades ``ctx``'s submission and records the stage's own rows;
    a harness fault is raised (:class:`~.common.StageFault`, RunnerError), never scored."""

    name: str

    async def run(self, ctx: StageContext) -> StageOutcome: ...
