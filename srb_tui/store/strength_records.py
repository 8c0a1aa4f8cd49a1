"""The records of strength campaigns (:mod:`.strength`): a campaign, one planned mutant
and what the stages made of it, an author's equivalent mark; and the readers of their rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StrengthCampaign:
    """A strength campaign as stored: which task and tree, how many mutants, which seed."""

    id: str
    task_id: str
    task_path: str
    of_tree: str
    asked: int
    seed: int
    panel: tuple[str, ...]
    budget_sec: float | None
    status: str
    created_at: str
    updated_at: str
    node: str | None = None
    """The node of a pool the last sitting graded on (None: the local engine)."""
    baseline: dict[str, Any] | None = None
    """What the mutants are measured against (State A's own suite run, the checks a State A
    that cannot start passes), as the service wrote it; None: not graded yet."""


@dataclass(frozen=True)
class MutantRow:
    """One planned mutant and what the stages made of it so far."""

    campaign_id: str
    mutant_id: str
    key: str
    position: int
    path: str
    line: int
    operator: str
    doc: dict[str, Any]
    stage_ii: str | None
    stage_ii_doc: dict[str, Any] | None
    stage_iii_run: str | None
    stage_iii_done: bool
    catches: dict[str, str] = field(default_factory=dict)
    """adversary → outcome (broken / survived / error) once Stage III ran."""
    equivalent: EquivalentMark | None = None


@dataclass(frozen=True)
class EquivalentMark:
    """An author's mark that a mutant does not change behaviour: who, why, when."""

    task_id: str
    key: str
    marked_by: str
    reason: str
    marked_at: str


def json_doc(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def campaign_from_row(row: Any) -> StrengthCampaign:
    """A campaign from its stored row."""
    return StrengthCampaign(
        id=row["id"], task_id=row["task_id"], task_path=row["task_path"],
        of_tree=row["of_tree"], asked=int(row["asked"]), seed=int(row["seed"]),
        panel=tuple(json.loads(row["panel"])), budget_sec=row["budget_sec"],
        status=row["status"], created_at=row["created_at"], updated_at=row["updated_at"],
        baseline=json_doc(row["baseline"]), node=row["node"])
