"""Where srb finds its tasks and keeps its state.

Command-line options win over environment variables, which win over defaults:

* tasks: ``--tasks DIR`` (repeatable) > ``SRB_TASKS`` (colon-separated) > ``./tasks``
* state: ``--state DIR`` > ``SRB_STATE_DIR`` > ``./state``
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TASKS = Path("tasks")
DEFAULT_STATE = Path("state")
DB_NAME = "srb.sqlite3"
DEFAULT_BASE_IMAGE = "srb/base:bookworm"


@dataclass(frozen=True)
class Settings:
    """Resolved locations for one srb invocation."""

    task_roots: tuple[Path, ...]
    state_dir: Path
    base_image: str = DEFAULT_BASE_IMAGE

    @property
    def db_path(self) -> Path:
        return self.state_dir / DB_NAME

    @property
    def runs_dir(self) -> Path:
        return self.state_dir / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.state_dir / "cache"

    @property
    def state_a_cache(self) -> Path:
        """Where prepared State A trees are cached (``sources.prepare_state_a``)."""
        return self.cache_dir / "state-a"

    @property
    def archive_facts_dir(self) -> Path:
        """State A archives' digests and file lists, kept per file version
        (``schema.archive_facts``)."""
        return self.cache_dir / "archive-facts"

    @property
    def identity_dir(self) -> Path:
        """Identity-run records, one ``<task-id>.json`` each."""
        return self.state_dir / "identity"

    @property
    def exports_dir(self) -> Path:
        """Counterexamples exported as runnable folders."""
        return self.state_dir / "exports"

    @property
    def gateway_dir(self) -> Path:
        """The folder holding the model gateway's Unix socket (bind-mounted into relays)."""
        return self.state_dir / "gateway"

    def run_dir(self, run_id: str) -> Path:
        """A run's folder: stage envelopes, score files, the collected submission."""
        return self.runs_dir / run_id

    def submission_dir(self, run_id: str) -> Path:
        """The collected submission of ``run_id``."""
        return self.run_dir(run_id) / "submission"


def resolve_settings(
    tasks: Sequence[str] | None = None,
    state: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Combine options, environment and defaults into absolute paths."""
    env = os.environ if environ is None else environ
    if tasks:
        roots = [Path(t) for t in tasks]
    elif env.get("SRB_TASKS"):
        roots = [Path(t) for t in env["SRB_TASKS"].split(":") if t]
    else:
        roots = [DEFAULT_TASKS]
    if state:
        state_dir = Path(state)
    elif env.get("SRB_STATE_DIR"):
        state_dir = Path(env["SRB_STATE_DIR"])
    else:
        state_dir = DEFAULT_STATE
    base = env.get("SRB_BASE_IMAGE", DEFAULT_BASE_IMAGE)
    return Settings(
        task_roots=tuple(r.expanduser().resolve() for r in roots),
        state_dir=state_dir.expanduser().resolve(),
        base_image=base,
    )
