"""Is a task's State A prepared in the cache, and if not, why — without touching the network
or re-hashing archives (the Tasks screen asks this for every selection)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from srb_tui.schema import Task
from srb_tui.sources.prepare import SHIPPED_ARCHIVE, shipped_digest


@dataclass(frozen=True)
class StateAStatus:
    """Whether a task's State A is in the cache, in words for the console."""

    prepared: bool
    detail: str


def state_a_status(task: Task, cache_dir: Path) -> StateAStatus:
    """Look for the cache entry keyed by the digest the task pins."""
    shipped = (task.dir / SHIPPED_ARCHIVE).is_file()
    digest: str | None = None
    if shipped:
        found = shipped_digest(task.dir)
        if found is None:
            return StateAStatus(False, f"{SHIPPED_ARCHIVE} ships without an original.sha256")
        digest = found[0]
        source = f"the shipped {SHIPPED_ARCHIVE}"
    elif task.state_a is not None:
        digest = task.state_a.sha256
        source = f"[srb.state_a] kind {task.state_a.kind}"
    else:
        return StateAStatus(False, f"no State A: no {SHIPPED_ARCHIVE} and no [srb.state_a]")
    for record in sorted((cache_dir / digest).glob("strip-*/state-a.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        files = data.get("file_count", "?")
        return StateAStatus(True, f"prepared: {files} files from {source}")
    return StateAStatus(False, f"not prepared yet ({source}); press p to prepare")
