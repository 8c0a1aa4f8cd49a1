"""Review validation, the single resubmit, evidence re-check, voting and prompt rendering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from srb_tui.grader.audit.review import (
    AuditGate,
    ReviewIntake,
    SampleGrade,
    audit_envelope,
    audit_outcome,
    gates_from,
    grade_sample,
    prompt_values,
    render_prompt,
    unusable_sample,
    validate_review,
    vote,
)
from srb_tui.grader.audit.tools import Toolbox

from .helpers import write_tree

GATES = [
    AuditGate("no-python", "python is gone"),
    AuditGate("node-here", "node exists"),
    AuditGate("advice", "optional", required=False),
]


def answer(gate: str, verdict: str, *evidence: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": gate,
        "verdict": verdict,
        "confidence": 0.9,
        "reasoning": "r",
        "evidence": list(evidence),
    }


def review(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"summary": "s", "gates": list(answers)}


CITE = {"path": "submission:app.py", "line": 2, "quote": "import  SYS", "note": "python"}


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    original = write_tree(tmp_path / "a", {"app.py": "#!/usr/bin/env python3\nimport sys\n"})
    submission = write_tree(tmp_path / "b", {"app.py": "# left over\nimport sys\nprint(1)\n"})
    return Toolbox(original, submission)


def test_valid_review_has_no_problems() -> None:
    good = review(
        answer("no-python", "fail", CITE), answer("node-here", "pass"), answer("advice", "pass")
    )
    assert validate_review(good, GATES) == []


def test_every_rejection_reason_is_listed() -> None:
    bad = review(
        answer("no-python", "fail", {"path": "app.py", "line": 1, "quote": "x"}),
        answer("node-here", "maybe"),
        answer("node-here", "pass"),
    )
    assert validate_review(bad, GATES) == [
        "gate 'node-here' is answered more than once",
        "gate 'no-python': a fail must cite evidence with a path 'original:REL' or "
        "'submission:REL', a line and a quote",
        "gate 'node-here': verdict must be 'pass' or 'fail', got 'maybe'",
        "gate 'advice' is missing",
    ]
    assert validate_review([], GATES) == [
        "the review must be a JSON object with 'summary' and 'gates'"
    ]
    assert validate_review({"gates": {}}, GATES) == [
        "'gates' must be a list with one entry per gate"
    ]


def test_one_rejection_then_unusable() -> None:
    intake = ReviewIntake(GATES)
    maybe = review(
        answer("no-python", "maybe"), answer("node-here", "pass"), answer("advice", "pass")
    )
    status, message = intake.offer(maybe)
    assert status == "rejected"
    assert "verdict must be 'pass' or 'fail', got 'maybe'" in message
    assert "This is the only resubmit." in message
    status, reason = intake.offer(maybe)
    assert status == "unusable"
    assert reason.startswith("review still invalid after one resubmit: ")
    fixed = ReviewIntake(GATES)
    assert fixed.offer(maybe)[0] == "rejected"
    corrected = review(
        answer("no-python", "pass"), answer("node-here", "pass"), answer("advice", "pass")
    )
    assert fixed.offer(corrected) == ("accepted", "")


def test_grounded_fail_stands_and_ungrounded_fail_is_downgraded(toolbox: Toolbox) -> None:
    ghost = {"path": "submission:app.py", "line": 40, "quote": "import sys"}
    wrong_quote = {"path": "submission:app.py", "line": 1, "quote": "import os"}
    sample = review(
        answer("no-python", "fail", CITE),
        answer("node-here", "fail", ghost, wrong_quote),
        answer("advice", "pass", {"path": "nowhere", "line": 0, "quote": ""}),
    )
    grade = grade_sample(sample, GATES, toolbox.check_evidence, index=4)
    assert grade.usable and grade.index == 4
    first = grade.gates["no-python"]
    assert (first.reported, first.recorded, first.downgraded) == ("fail", "fail", False)
    assert first.evidence[0]["grounded"] is True
    second = grade.gates["node-here"]
    assert (second.reported, second.recorded, second.downgraded) == ("fail", "pass", True)
    assert [e["reason"] for e in second.evidence] == [
        "line 40 is out of range (submission:app.py has 3 lines)",
        "quote not found within 3 lines of submission:app.py:1",
    ]
    assert "grounded" not in grade.gates["advice"].evidence[0], "pass evidence is not checked"


def test_invalid_review_is_an_unusable_sample(toolbox: Toolbox) -> None:
    grade = grade_sample(review(answer("no-python", "maybe")), GATES, toolbox.check_evidence)
    assert grade.usable is False and grade.reason.startswith("invalid review: ")


def _sample(index: int, **verdicts: str) -> SampleGrade:
    from srb_tui.grader.audit.review import GateVerdict

    grade = SampleGrade(index=index, usable=True)
    for gate, verdict in verdicts.items():
        gate_id = gate.replace("_", "-")
        grade.gates[gate_id] = GateVerdict(gate_id, verdict, verdict, False)
    return grade


def test_majority_tie_and_no_vote() -> None:
    gates = [AuditGate("a"), AuditGate("b"), AuditGate("c")]
    samples = [
        _sample(0, a="fail", b="fail", c="pass"),
        _sample(1, a="fail", b="pass", c="pass"),
        unusable_sample(2, "crashed"),
    ]
    outcomes = {o.gate: o for o in vote(samples, gates)}
    assert outcomes["a"].outcome == "fail" and outcomes["a"].votes == {"pass": 0, "fail": 2}
    assert outcomes["b"].outcome == "pass" and outcomes["b"].tie is True
    assert outcomes["c"].outcome == "pass" and outcomes["c"].tie is False
    samples = [_sample(0, a="fail"), _sample(1, a="pass"), _sample(2, a="fail")]
    three = vote(samples, [AuditGate("a")])
    assert three[0].outcome == "fail"
    none = vote([unusable_sample(0, "x")], gates)
    assert [o.outcome for o in none] == ["error", "error", "error"]


def test_audit_outcome_rules() -> None:
    gates = [AuditGate("req"), AuditGate("opt", required=False)]
    fail_opt = vote([_sample(0, req="pass", opt="fail")], gates)
    assert audit_outcome(fail_opt) == "pass", "an advisory gate does not veto"
    fail_req = vote([_sample(0, req="fail", opt="pass")], gates)
    assert audit_outcome(fail_req) == "fail"
    assert audit_outcome(vote([], gates)) == "error"


def test_audit_envelope_records_downgrades_ties_and_unusable(toolbox: Toolbox) -> None:
    gates = [AuditGate("no-python"), AuditGate("node-here")]
    grounded = grade_sample(
        review(answer("no-python", "fail", CITE), answer("node-here", "pass")),
        gates,
        toolbox.check_evidence,
        0,
    )
    ghost = grade_sample(
        review(answer("no-python", "fail", {**CITE, "line": 99}), answer("node-here", "pass")),
        gates,
        toolbox.check_evidence,
        1,
    )
    samples = [grounded, ghost, unusable_sample(2, "reviewer ran out of time (300 s)")]
    data = audit_envelope("demo", gates, samples).to_dict()
    assert data["stage"] == "audit" and data["status"] == "ok"
    unit = data["units"][0]
    assert unit["votes"] == {"pass": 1, "fail": 1} and unit["tie"] is True
    assert unit["status"] == "pass" and unit["downgraded"] == 1
    assert data["metadata"]["gate"] == "pass"
    assert data["metadata"]["samples_usable"] == 2
    assert "gate no-python: tie {'pass': 1, 'fail': 1} resolved to pass" in data["notes"]
    assert "sample 2 unusable: reviewer ran out of time (300 s)" in data["notes"]
    assert {c["id"] for c in data["checks"]} == {
        "no-python#0",
        "node-here#0",
        "no-python#1",
        "node-here#1",
    }
    dead = audit_envelope("demo", gates, [unusable_sample(0, "x")]).to_dict()
    assert dead["status"] == "error" and dead["metadata"]["gate"] == "error"


def test_prompt_rendering() -> None:
    gates = gates_from([{"id": "g1", "title": "T", "question": "Q?"}, "g2"])
    values = prompt_values(
        task="demo01", original="/opt/a", submission="/opt/b", gates=gates, commands=[], findings=""
    )
    template = (
        "Task {{task}} {{ original }} {{workspace}} {{submission}}\n{{gates}}\n"
        "{{roots}}\n{{commands}}\n{{findings}}\n{{mystery}} {{ }}"
    )
    text = render_prompt(template, values)
    assert text.startswith("Task demo01 /opt/a /opt/b /opt/b\n### g1 — T\nQ?\n\n### g2\n")
    assert "cite as original:REL" in text and "cite as submission:REL" in text
    assert "none: the run tool is not available" in text and "no findings" in text
    assert text.endswith("{{mystery}} {{ }}"), "unknown placeholders stay visible"
    assert (
        prompt_values(task="t", original="", submission="", gates=[], commands=["ls", "grep"])[
            "commands"
        ]
        == "ls, grep"
    )
