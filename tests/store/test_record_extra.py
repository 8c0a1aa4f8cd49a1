"""The readers of the grading records' ``extra`` documents (``store/record_extra.py``)."""

from __future__ import annotations

from typing import Any

from srb_tui.store import AdversaryRoundRecord, CounterexampleRecord
from srb_tui.store.record_extra import (
    CandidateRun,
    LaneTranscript,
    candidate_runs,
    counts_as_break,
    recorded_files,
)


def _lane(extra: dict[str, Any]) -> AdversaryRoundRecord:
    return AdversaryRoundRecord(run_id="r", adversary_id="cx", model=None, driver="client",
                                focus=None, status="survived", started_at=None,
                                duration_sec=None, candidates=None, notes=(), extra=extra)


def _cx(extra: dict[str, Any]) -> CounterexampleRecord:
    return CounterexampleRecord(id=1, run_id="r", adversary_id="cx", created_at="", code="echo",
                                verdict="nondeterministic", reason=None, output_a=None,
                                output_b=None, exit_a=None, exit_b=None, duration_a=None,
                                duration_b=None, extra=extra)


def test_a_lane_transcript_reads_its_facts_and_none_without_a_tail() -> None:
    lane = LaneTranscript.read(_lane({"transcript_tail": ["a", 2], "requests": 3,
                                      "cost_usd": 0.5, "time_to_counterexample_sec": 61}))
    assert lane == LaneTranscript(("a", "2"), 61.0, 3, 0.5)
    assert LaneTranscript.read(_lane({"requests": 3})) is None
    assert LaneTranscript.read(_lane({"transcript_tail": [], "requests": "3"})) == (
        LaneTranscript((), None, None, None))


def test_candidate_runs_files_and_break() -> None:
    cx = _cx({"runs": [{"attempt": 1, "role": "original", "exit_code": 0},
                       {"attempt": 1, "role": "submission", "exit_code": 0, "timed_out": True},
                       "not a run"],
              "files": {"candidate.py": "print(1)"}, "counts_as_break": True})
    assert candidate_runs(cx) == (CandidateRun(1, "original", True),
                                  CandidateRun(1, "submission", False))
    assert recorded_files(cx) == {"candidate.py": "print(1)"} and counts_as_break(cx)
    empty = _cx({"files": {"a": 1}, "counts_as_break": "yes"})
    assert candidate_runs(empty) == () and recorded_files(empty) is None
    assert not counts_as_break(empty)
