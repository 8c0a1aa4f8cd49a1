"""The keys of the grading records' ``extra`` documents that srb reads back, one reader each.

Gate votes and outcomes, adversary rounds and counterexamples carry an ``extra`` JSON
object beside their columns (written by the stages: ``audit_review``, ``counterexamples``,
``verification_record``). A reader outside the store never picks fields out of it: it
asks here, as it asks ``run_extra`` about a run's ``extra``
(``tests/meta/test_run_extra_reads.py``). Readers are lenient: a missing or mistyped key
reads as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from srb_tui.store.grading_records import (
    AdversaryRoundRecord,
    CounterexampleRecord,
    GateOutcomeRecord,
    GateVoteRecord,
)


def vote_tainted(vote: GateVoteRecord) -> bool:
    """``tainted``: the reviewer followed text injected into the submission."""
    return bool(vote.extra.get("tainted"))


def outcome_overruled(outcome: GateOutcomeRecord) -> bool:
    """``overruled``: the gate's verdict is not its votes' (a proven fail overruled them)."""
    return bool(outcome.extra.get("overruled"))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class LaneTranscript:
    """A client lane's ``transcript_tail`` (live while it runs), its
    ``time_to_counterexample_sec``, and its ``requests`` and ``cost_usd``."""

    tail: tuple[str, ...]
    time_to_counterexample_sec: float | None
    requests: int | None
    cost_usd: float | None

    @classmethod
    def read(cls, lane: AdversaryRoundRecord) -> LaneTranscript | None:
        """The lane's transcript, None when it records none (a fuzzing lane)."""
        extra = lane.extra
        tail = extra.get("transcript_tail")
        if not isinstance(tail, list):
            return None
        requests = extra.get("requests")
        return cls(tuple(str(line) for line in tail),
                   _number(extra.get("time_to_counterexample_sec")),
                   requests if isinstance(requests, int) else None,
                   _number(extra.get("cost_usd")))


@dataclass(frozen=True)
class CandidateRun:
    """One run of a counterexample on one tree (``runs``): which attempt, which tree
    (``original`` or ``submission``), and whether it passed (exit 0, in time, started)."""

    attempt: int | None
    role: str
    passed: bool

    @classmethod
    def of(cls, run: Mapping[str, Any]) -> CandidateRun:
        passed = (run.get("exit_code") == 0 and not run.get("timed_out")
                  and not run.get("start_error"))
        attempt = run.get("attempt")
        return cls(attempt if isinstance(attempt, int) else None, str(run.get("role")),
                   bool(passed))


def candidate_runs(record: CounterexampleRecord) -> tuple[CandidateRun, ...]:
    """``runs``: each run of the candidate on either tree, in the order they ran."""
    runs = record.extra.get("runs") or ()
    return tuple(CandidateRun.of(r) for r in runs if isinstance(r, Mapping))


def counts_as_break(record: CounterexampleRecord) -> bool:
    """``counts_as_break``: the task counts this (nondeterministic) candidate as a break."""
    return record.extra.get("counts_as_break") is True


def recorded_files(record: CounterexampleRecord) -> dict[str, str] | None:
    """``files``: the candidate's files by name, None when none were recorded."""
    files = record.extra.get("files")
    if isinstance(files, Mapping) and files and all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        return {str(k): str(v) for k, v in files.items()}
    return None
