"""Aggregate metrics over many scored runs: the three-stage funnel and a leaderboard.

Funnel columns follow the paper: migrated (Stage I passed), all tests pass (Stage II complete,
whatever Stage I said), blindness (all tests pass but Stage I failed), reached verification,
accepted (every stage passed). The exclusive "where did it stop" columns (audit, blindness,
behavioural, verification, accepted) sum to the valid runs. Invalid runs are counted apart and
enter no other column; the leaderboard's mean score is over valid runs only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ScoredRun:
    """The facts of one scored run that the aggregates need."""

    run_id: str
    task: str
    agent: str
    model: str
    audit_gate: str
    behavioural_complete: bool | None
    score: float | None
    valid: bool
    blocked_by: str | None = None
    models_survived: int = 0

    @classmethod
    def from_score(
        cls, score: Mapping[str, Any], *, run_id: str, task: str, agent: str, model: str
    ) -> ScoredRun:
        """From a score.json document."""
        behavioural = score.get("behavioural") or {}
        verification = score.get("verification") or {}
        raw_score = score.get("score")
        return cls(
            run_id=run_id,
            task=task,
            agent=agent,
            model=model,
            audit_gate=str(score.get("audit_gate", "error")),
            behavioural_complete=behavioural.get("complete"),
            score=float(raw_score) if isinstance(raw_score, int | float) else None,
            valid=bool(score.get("valid")),
            blocked_by=score.get("blocked_by"),
            models_survived=int(verification.get("models_survived", 0)),
        )

    @property
    def migrated(self) -> bool:
        return self.audit_gate == "pass"

    @property
    def all_tests_pass(self) -> bool:
        return self.behavioural_complete is True

    @property
    def blindness(self) -> bool:
        return self.all_tests_pass and self.audit_gate == "fail"

    @property
    def reached_verification(self) -> bool:
        return self.migrated and self.all_tests_pass

    @property
    def accepted(self) -> bool:
        return self.valid and self.reached_verification and self.blocked_by is None


@dataclass(frozen=True)
class Funnel:
    """Counts over a set of runs (stage columns count valid runs only)."""

    runs: int
    invalid: int
    migrated: int
    all_tests_pass: int
    blindness: int
    reached_verification: int
    accepted: int
    stopped_audit: int
    stopped_behavioural: int
    stopped_verification: int

    @property
    def valid(self) -> int:
        return self.runs - self.invalid


def funnel(records: Iterable[ScoredRun]) -> Funnel:
    """The funnel over `records`."""
    runs = list(records)
    valid = [run for run in runs if run.valid]
    return Funnel(
        runs=len(runs),
        invalid=len(runs) - len(valid),
        migrated=sum(run.migrated for run in valid),
        all_tests_pass=sum(run.all_tests_pass for run in valid),
        blindness=sum(run.blindness for run in valid),
        reached_verification=sum(run.reached_verification for run in valid),
        accepted=sum(run.accepted for run in valid),
        stopped_audit=sum(not run.migrated and not run.blindness for run in valid),
        stopped_behavioural=sum(run.migrated and not run.all_tests_pass for run in valid),
        stopped_verification=sum(run.reached_verification and not run.accepted for run in valid),
    )


def funnel_by(records: Iterable[ScoredRun], key: Callable[[ScoredRun], str]) -> dict[str, Funnel]:
    """One funnel per group (e.g. key=lambda r: r.task)."""
    groups: dict[str, list[ScoredRun]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    return {name: funnel(group) for name, group in sorted(groups.items())}


@dataclass(frozen=True)
class LeaderboardRow:
    """One agent/model pair's standing."""

    agent: str
    model: str
    runs: int
    valid_runs: int
    mean_score: float | None
    accepted: int
    migrated: int
    blindness: int


def leaderboard(records: Iterable[ScoredRun]) -> list[LeaderboardRow]:
    """Mean score per (agent, model) over valid runs, best first (no valid run sorts last)."""
    groups: dict[tuple[str, str], list[ScoredRun]] = {}
    for record in records:
        groups.setdefault((record.agent, record.model), []).append(record)
    rows: list[LeaderboardRow] = []
    for (agent, model), runs in groups.items():
        scored = [run.score for run in runs if run.valid and run.score is not None]
        rows.append(
            LeaderboardRow(
                agent=agent,
                model=model,
                runs=len(runs),
                valid_runs=sum(run.valid for run in runs),
                mean_score=round(sum(scored) / len(scored), 4) if scored else None,
                accepted=sum(run.accepted for run in runs),
                migrated=sum(run.migrated for run in runs if run.valid),
                blindness=sum(run.blindness for run in runs if run.valid),
            )
        )
    rows.sort(
        key=lambda row: (row.mean_score is None, -(row.mean_score or 0.0), row.agent, row.model)
    )
    return rows
