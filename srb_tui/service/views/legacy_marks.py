"""Stage outcomes of runs graded before the ladder recorded its score envelope as a store
event: rebuilt from what those runs do have, so the Runs screen shows their marks instead
of "—".

First the ``stage_finished`` events the ladder has always written (the audit gate, whether
Stage II was complete, each adversary's outcome); else the run's ``score.json`` on disk,
which the Runs screen read before score events existed. A run with neither keeps blank
marks: nothing is guessed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from srb_tui.store import RunRecord, Store

GRADED = frozenset({"audit", "behavioural", "verification", "scored"})
STAGE_EVENT = "stage_finished"
EVENT_PAGE = 1000


def score_like(stages: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A score-envelope-shaped document from per-stage ``stage_finished`` payloads."""
    doc: dict[str, Any] = {}
    audit = stages.get("audit")
    if audit is not None:
        doc["audit_gate"] = "error" if audit.get("status") == "error" else audit.get("gate")
    behavioural = stages.get("behavioural")
    if behavioural is not None:
        doc["behavioural"] = ({"error": True} if behavioural.get("status") == "error"
                              else {"complete": behavioural.get("complete")})
    verification = stages.get("verification")
    if verification is not None:
        outcomes = verification.get("adversaries")
        outcomes = dict(outcomes) if isinstance(outcomes, Mapping) else {}
        if verification.get("status") == "error" and "error" not in outcomes.values():
            outcomes["(stage)"] = "error"
        doc["verification"] = {"ran": True, "adversaries": outcomes,
                               "models_total": len(outcomes)}
    return doc


async def _stage_events(store: Store, run_id: str) -> dict[str, Mapping[str, Any]]:
    stages: dict[str, Mapping[str, Any]] = {}
    after = 0
    while True:
        events = await store.infra.events(run_id, after_seq=after, limit=EVENT_PAGE)
        for event in events:
            payload = event.payload
            if event.kind == STAGE_EVENT and isinstance(payload, Mapping):
                stage = payload.get("stage")
                if isinstance(stage, str):
                    stages[stage] = payload  # the newest grading of a stage wins
        if len(events) < EVENT_PAGE:
            return stages
        after = events[-1].seq


def _score_file(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


async def legacy_envelopes(
    store: Store, runs: Sequence[RunRecord], run_dir: Callable[[str], Path] | None = None
) -> dict[str, dict[str, Any]]:
    """Score-like documents of graded ``runs`` that have no score event (absent when a run
    has nothing to rebuild one from)."""
    found: dict[str, dict[str, Any]] = {}
    for run in runs:
        if run.status not in GRADED:
            continue
        stages = await _stage_events(store, run.id)
        if stages:
            found[run.id] = score_like(stages)
        elif run_dir is not None:
            doc = _score_file(run_dir(run.id) / "score.json")
            if doc is not None:
                found[run.id] = doc
    return found


__all__ = ["legacy_envelopes", "score_like"]
