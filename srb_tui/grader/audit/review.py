"""Stage I review logic: prompt rendering, review validation, evidence re-check, voting.

A review is ``{summary, gates: [{id, verdict, confidence, reasoning, evidence: [{path, line,
quote, note}]}]}``. A missing gate, a verdict outside pass/fail, or a fail without a
path-bearing citation earns one rejection and one resubmit (`ReviewIntake`). Every fail is
re-checked (`grade_sample`): a fail with no grounded citation is recorded as a pass, marked
downgraded. Samples vote per gate (`vote`): the majority carries, a tie is pass (recorded),
no usable vote is error. The audit outcome (`audit_outcome`) is fail when any required gate
failed, error when a required gate has no vote and none failed, pass otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..envelope import StageEnvelope

VERDICTS = ("pass", "fail")
PLACEHOLDERS = (
    "task",
    "original",
    "workspace",
    "submission",
    "gates",
    "roots",
    "commands",
    "findings",
)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_PATH_REF = re.compile(r"^\s*(original|submission|workspace)\s*:\s*\S")

CitationChecker = Callable[[object, object, object], Mapping[str, Any]]
"""(path, line, quote) -> {"grounded": bool, "reason": str}; e.g. Toolbox.check_evidence."""


@dataclass(frozen=True)
class AuditGate:
    """One audit gate (``[[stages.audit.gate]]``)."""

    id: str
    title: str = ""
    question: str = ""
    required: bool = True


def gates_from(raw: Iterable[AuditGate | Mapping[str, Any] | str]) -> list[AuditGate]:
    """Gates from AuditGate objects, gate tables or bare ids."""
    gates: list[AuditGate] = []
    for item in raw:
        if isinstance(item, AuditGate):
            gates.append(item)
        elif isinstance(item, str):
            gates.append(AuditGate(item))
        else:
            gates.append(
                AuditGate(
                    id=str(item["id"]),
                    title=str(item.get("title", "")),
                    question=str(item.get("question", "")),
                    required=bool(item.get("required", True)),
                )
            )
    return gates


# --------------------------------------------------------------------------- prompt


def render_prompt(template: str, values: Mapping[str, str]) -> str:
    """Substitute ``{{name}}`` placeholders found in `values`; unknown ones stay visible."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return _PLACEHOLDER.sub(substitute, template)


def format_gates(gates: Sequence[AuditGate]) -> str:
    """The gate list as the prompt shows it."""
    blocks = []
    for gate in gates:
        head = f"### {gate.id}" + (f" — {gate.title}" if gate.title else "")
        head += "" if gate.required else " (advisory)"
        blocks.append(head + ("\n" + gate.question.strip() if gate.question.strip() else ""))
    return "\n\n".join(blocks)


def format_roots(original: str, submission: str) -> str:
    """How paths are written, for the prompt."""
    return (
        f"original: State A, mounted read-only at {original}; cite as original:REL\n"
        f"submission: the submission, mounted read-only at {submission}; cite as submission:REL"
    )


def format_commands(commands: Sequence[str]) -> str:
    """The allowed `run` commands, or a sentence saying there are none."""
    if not commands:
        return "none: the run tool is not available in this review"
    return ", ".join(commands)


def prompt_values(
    *,
    task: str,
    original: str,
    submission: str,
    gates: Sequence[AuditGate],
    commands: Sequence[str] = (),
    findings: str = "",
) -> dict[str, str]:
    """Values for every known placeholder ({{workspace}} and {{submission}} are aliases)."""
    return {
        "task": task,
        "original": original,
        "workspace": submission,
        "submission": submission,
        "gates": format_gates(gates),
        "roots": format_roots(original, submission),
        "commands": format_commands(commands),
        "findings": findings.strip() or "no findings",
    }


# --------------------------------------------------------------------------- validation


def _is_path_citation(item: object) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("path"), str)
        and bool(_PATH_REF.match(item["path"]))
    )


def validate_review(review: object, gates: Sequence[AuditGate]) -> list[str]:
    """Every reason to reject `review` (empty list = acceptable)."""
    if not isinstance(review, dict):
        return ["the review must be a JSON object with 'summary' and 'gates'"]
    answers = review.get("gates")
    if not isinstance(answers, list):
        return ["'gates' must be a list with one entry per gate"]
    problems: list[str] = []
    by_id: dict[str, dict[str, Any]] = {}
    for index, answer in enumerate(answers):
        if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
            problems.append(f"gates[{index}] must be an object with a string 'id'")
            continue
        if answer["id"] in by_id:
            problems.append(f"gate {answer['id']!r} is answered more than once")
            continue
        by_id[answer["id"]] = answer
    for gate in gates:
        answer = by_id.get(gate.id)
        if answer is None:
            problems.append(f"gate {gate.id!r} is missing")
            continue
        verdict = answer.get("verdict")
        if verdict not in VERDICTS:
            problems.append(f"gate {gate.id!r}: verdict must be 'pass' or 'fail', got {verdict!r}")
            continue
        evidence = answer.get("evidence", [])
        if verdict == "fail" and (
            not isinstance(evidence, list) or not any(_is_path_citation(e) for e in evidence)
        ):
            problems.append(
                f"gate {gate.id!r}: a fail must cite evidence with a path 'original:REL' or "
                "'submission:REL', a line and a quote"
            )
    return problems


def rejection_message(problems: Sequence[str]) -> str:
    """The single rejection sent back to a reviewer before its one resubmit."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        "Your review was not accepted:\n"
        f"{listed}\n"
        "Submit the whole review again, answering every gate with verdict 'pass' or 'fail'; "
        "every fail needs at least one citation {path, line, quote}. This is the only resubmit."
    )


class ReviewIntake:
    """Accepts a review, rejects it once with a message, then gives up."""

    def __init__(self, gates: Sequence[AuditGate], max_rejections: int = 1) -> None:
        self.gates = list(gates)
        self.max_rejections = max_rejections
        self.rejections = 0
        self.problems: list[str] = []

    def offer(self, review: object) -> tuple[str, str]:
        """("accepted", "") | ("rejected", message to send back) | ("unusable", reason)."""
        problems = validate_review(review, self.gates)
        if not problems:
            return "accepted", ""
        self.problems = problems
        if self.rejections < self.max_rejections:
            self.rejections += 1
            return "rejected", rejection_message(problems)
        return "unusable", "review still invalid after one resubmit: " + "; ".join(problems)


# --------------------------------------------------------------------------- grading


@dataclass
class GateVerdict:
    """One sample's answer on one gate, after the evidence re-check."""

    gate: str
    reported: str
    recorded: str
    downgraded: bool
    confidence: Any = None
    reasoning: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    tainted: str = ""  # why this answer counts as a fail: it quoted or followed injected text


@dataclass
class SampleGrade:
    """One review sample: usable or not, and its per-gate verdicts."""

    index: int
    usable: bool
    reason: str = ""
    summary: str = ""
    gates: dict[str, GateVerdict] = field(default_factory=dict)


def unusable_sample(index: int, reason: str) -> SampleGrade:
    """A sample that produced no usable review (no submission, invalid twice, crashed)."""
    return SampleGrade(index=index, usable=False, reason=reason)


def grade_sample(
    review: object, gates: Sequence[AuditGate], check: CitationChecker, index: int = 0
) -> SampleGrade:
    """Grade one accepted review: re-check every fail's citations and downgrade ungrounded
    fails to pass. A review that does not validate is unusable."""
    problems = validate_review(review, gates)
    if problems:
        return unusable_sample(index, "invalid review: " + "; ".join(problems))
    assert isinstance(review, dict)
    answers = {answer["id"]: answer for answer in review["gates"] if isinstance(answer, dict)}
    grade = SampleGrade(index=index, usable=True, summary=str(review.get("summary", "")))
    for gate in gates:
        answer = answers[gate.id]
        verdict = answer["verdict"]
        raw_evidence = answer.get("evidence", [])
        checked: list[dict[str, Any]] = []
        for item in raw_evidence if isinstance(raw_evidence, list) else []:
            if not isinstance(item, dict):
                checked.append({"raw": item, "grounded": False, "reason": "not an object"})
                continue
            record = {key: item.get(key) for key in ("path", "line", "quote", "note")}
            if verdict == "fail":
                outcome = check(item.get("path"), item.get("line"), item.get("quote"))
                record["grounded"] = bool(outcome.get("grounded"))
                record["reason"] = str(outcome.get("reason", ""))
            checked.append(record)
        grounded = any(record.get("grounded") for record in checked)
        downgraded = verdict == "fail" and not grounded
        reasoning = answer.get("reasoning", "")
        grade.gates[gate.id] = GateVerdict(
            gate=gate.id,
            reported=verdict,
            recorded="pass" if downgraded else verdict,
            downgraded=downgraded,
            confidence=answer.get("confidence"),
            reasoning=reasoning if isinstance(reasoning, str) else str(reasoning),
            evidence=checked,
        )
    return grade


@dataclass
class GateOutcome:
    """The vote on one gate across samples."""

    gate: str
    required: bool
    outcome: str
    votes: dict[str, int]
    tie: bool = False
    downgraded: int = 0
    overruled: str = ""  # why a voted pass was overruled to fail (deterministic evidence)
    voted: str = ""  # the outcome of the vote before an overrule


def vote(
    samples: Sequence[SampleGrade],
    gates: Sequence[AuditGate],
    overrules: Mapping[str, str] | None = None,
) -> list[GateOutcome]:
    """Majority per gate over usable samples; tie => pass (recorded); no vote => error.
    A gate in `overrules` (gate id -> the evidence) whose vote is pass becomes fail,
    recorded as overruled."""
    overrules = overrules or {}
    outcomes: list[GateOutcome] = []
    for gate in gates:
        votes = {"pass": 0, "fail": 0}
        downgraded = 0
        for sample in samples:
            verdict = sample.gates.get(gate.id) if sample.usable else None
            if verdict is None:
                continue
            votes[verdict.recorded] += 1
            downgraded += int(verdict.downgraded)
        if votes["pass"] + votes["fail"] == 0:
            outcome, tie = "error", False
        elif votes["fail"] > votes["pass"]:
            outcome, tie = "fail", False
        else:
            outcome, tie = "pass", votes["fail"] == votes["pass"]
        result = GateOutcome(gate.id, gate.required, outcome, votes, tie, downgraded)
        result.voted = outcome
        if outcome == "pass" and overrules.get(gate.id):
            result.outcome, result.overruled = "fail", overrules[gate.id]
        outcomes.append(result)
    return outcomes


def audit_outcome(outcomes: Sequence[GateOutcome]) -> str:
    """fail if any required gate failed; error if a required gate has no vote; else pass."""
    required = [outcome for outcome in outcomes if outcome.required]
    if any(outcome.outcome == "fail" for outcome in required):
        return "fail"
    if any(outcome.outcome == "error" for outcome in required):
        return "error"
    return "pass"


def audit_envelope(
    task: str,
    gates: Sequence[AuditGate],
    samples: Sequence[SampleGrade],
    overrules: Mapping[str, str] | None = None,
) -> StageEnvelope:
    """The Stage I result: units = gate outcomes, checks = per-sample gate verdicts.

    Status is error only when no sample is usable; the gate outcome is in metadata["gate"].
    """
    envelope = StageEnvelope(stage="audit", task=task)
    outcomes = vote(samples, gates, overrules)
    titles = {gate.id: gate.title for gate in gates}
    for outcome in outcomes:
        envelope.units.append(
            {
                "id": outcome.gate,
                "title": titles.get(outcome.gate, ""),
                "required": outcome.required,
                "status": outcome.outcome,
                "votes": outcome.votes,
                "tie": outcome.tie,
                "downgraded": outcome.downgraded,
                **({"overruled": outcome.overruled} if outcome.overruled else {}),
            }
        )
        if outcome.overruled:
            envelope.notes.append(
                f"gate {outcome.gate}: the vote said pass; overruled to fail by "
                f"{outcome.overruled}"
            )
        if outcome.tie:
            envelope.notes.append(f"gate {outcome.gate}: tie {outcome.votes} resolved to pass")
    for sample in samples:
        if not sample.usable:
            envelope.notes.append(f"sample {sample.index} unusable: {sample.reason}")
            continue
        for verdict in sample.gates.values():
            envelope.checks.append(
                {
                    "id": f"{verdict.gate}#{sample.index}",
                    "gate": verdict.gate,
                    "sample": sample.index,
                    "verdict": verdict.recorded,
                    "reported": verdict.reported,
                    "downgraded": verdict.downgraded,
                    "confidence": verdict.confidence,
                    "reasoning": verdict.reasoning,
                    "evidence": verdict.evidence,
                    **({"tainted": verdict.tainted} if verdict.tainted else {}),
                }
            )
    usable = sum(1 for sample in samples if sample.usable)
    envelope.metadata = {
        "gate": audit_outcome(outcomes) if usable else "error",
        "samples_total": len(samples),
        "samples_usable": usable,
        "summaries": [sample.summary for sample in samples if sample.usable],
    }
    envelope.finish("ok" if usable else "error")
    return envelope
