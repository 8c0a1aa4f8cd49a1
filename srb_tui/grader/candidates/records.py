"""Stage III: what a candidate run is and what it came to (the spec from probe.toml, one run's
observation, the verdict), and when a verdict counts as a break. Read by the host too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..contract import DEFAULT_FAULT_EXIT_CODES
from .scope import ScopeFinding

ROLES = ("original", "submission")
DEFAULT_FAULT_CODES = frozenset(DEFAULT_FAULT_EXIT_CODES)
NONDETERMINISTIC = "nondeterministic"
NONDETERMINISM_RULES = ("reject", "break")
"""what a submission nondeterministic for a candidate counts as: the published grader's
rejection (recorded, not a break) or srb's own tasks' break"""



@dataclass(frozen=True)
class CandidateSpec:
    """How candidates are run (from probe.toml's candidate_command and [scope])."""

    command: tuple[str, ...]
    reruns: int = 3
    timeout_sec: float = 300.0
    fault_exit_codes: frozenset[int] = DEFAULT_FAULT_CODES
    deny_commands: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    grace_sec: float = 5.0
    slot: int = 0
    """the submission identity candidates run as (one per concurrent Stage III round)"""
    original_digest: str | None = None
    """State A's tree digest: every staged copy of State A is checked against it"""
    token_salt: str = "srb"
    """the stage's salt for SRB_TARGET_TOKEN (the CLI reads it from a grader-only file)"""
    network_allowed: bool = False
    boundary: bool = True
    """programs the candidate starts run as the slot uid, the candidate as its own
    (:mod:`..boundary.exec_broker`); off only to measure what the boundary costs or prevents"""
    nondeterminism: str = "reject"
    """"break": a submission that fails some reruns and passes others while State A passes
    every one is a break (srb's own tasks); "reject": recorded, not counted (published)"""
    behaviour_only: bool = False
    """probe.toml ``[metadata] behaviour_only`` (srb's own tasks): the candidate's identity
    cannot read the tree's working copy (:mod:`.tree_copy`) and a candidate that starts no
    program of the tree on either side is invalid, "did not run the program". Off for
    published tasks, whose run-candidate.sh scripts copy the tree as the candidate and run
    the copy (lang03's /tmp/srb-candidate-view): with either rule every candidate of theirs
    would fail."""


@dataclass(frozen=True)
class RunObservation:
    """One execution of the candidate on one tree."""

    role: str
    attempt: int
    exit_code: int | None
    timed_out: bool
    duration_sec: float
    start_error: str | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    boundary: dict[str, Any] | None = None
    """what the exec broker did (programs started as the slot, refusals, faults), or None
    when the candidate and its programs shared one identity"""

    @property
    def passed(self) -> bool:
        return not self.timed_out and self.start_error is None and self.exit_code == 0


@dataclass
class CandidateVerdict:
    """upheld | nondeterministic | invalid | rejected | error, with the reason and every run;
    ``counts`` when it is a break (upheld, or nondeterministic under the "break" rule)."""

    outcome: str
    reason: str
    runs: list[RunObservation] = field(default_factory=list)
    findings: list[ScopeFinding] = field(default_factory=list)
    counts: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "counts_as_break": self.counts or self.outcome == "upheld",
            "runs": [asdict(run) for run in self.runs],
            "findings": [asdict(finding) for finding in self.findings],
        }


def counts_as_break(verdict: Mapping[str, Any] | CandidateVerdict | None) -> bool:
    """Whether a verdict (a CandidateVerdict or its dict) breaks the submission: upheld, or
    nondeterministic on the submission where the task's rule counts that."""
    if verdict is None:
        return False
    if isinstance(verdict, CandidateVerdict):
        verdict = verdict.to_dict()
    outcome = verdict.get("outcome")
    if outcome == "upheld":
        return True
    return outcome == NONDETERMINISTIC and verdict.get("counts_as_break") is True
