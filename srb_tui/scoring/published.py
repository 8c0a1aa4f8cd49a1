"""``score.json`` in the published verdict shape (schema ``swerefactor.score/1``).

The keys and their meaning follow ``infra/swerefactor/scoring.py`` (``Verdict.to_dict``) of
Einsia/SWE-Refactor-Bench: ``task``, ``reward``, ``score``, ``max_score``, ``valid``,
``audit_gate`` (pass | fail | not-run), ``behavioural.modules[]`` with ``checks`` and
``scored_weight``, ``verification.{models_total, models_survived, breaks}``, ``stages_run``,
``unscored_stages``, ``blocked_by`` (audit-gate | behavioural-incomplete | …),
``harnesses``, ``harness_error``, ``audit_failures``, ``notes``, ``metadata.audit.samples``,
``metadata.verification.rounds``, and the discarded-stage record under its three published
names ``unscored`` / ``uncredited`` / ``uncounted``. srb's own fields stay beside them (and
srb's reading of the gate and the blocking stage under ``srb``). The code is srb's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srb_tui.grader import contract

from .score import ScoreEnvelope

SCORE_SCHEMA = contract.SCORE_SCHEMA
TELEMETRY_SCHEMA = contract.TELEMETRY_SCHEMA
_GATE = {"pass": "pass", "fail": "fail", "error": "not-run"}
_BLOCKED = {"audit": "audit-gate", "behavioural": "behavioural-incomplete"}


def key_of(raw: str) -> str:
    """An id as a reward.json key part: lowercase, ``_`` for anything not alphanumeric."""
    out = "".join(c if c.isalnum() else "_" for c in str(raw).lower())
    return out.strip("_") or "unnamed"


def _module(unit: Mapping[str, Any]) -> dict[str, Any]:
    passed = int(unit.get("passed", 0) or 0)
    scored = int(unit.get("scored", 0) or 0)
    failed = int(unit.get("failed", max(0, scored - passed)) or 0)
    return {
        "id": str(unit.get("id", "")),
        "title": str(unit.get("title", "") or ""),
        "weight": float(unit.get("weight", 0.0) or 0.0),
        "rate": float(unit.get("rate", 0.0) or 0.0),
        "complete": bool(scored > 0 and passed == scored),
        "status": str(unit.get("status", "ok")),
        "scored_weight": float(scored),
        "checks": {
            "passed": passed,
            "failed": failed,
            "errored": int(unit.get("errored", 0) or 0),
            "skipped": int(unit.get("skipped", 0) or 0),
        },
        "note": str(unit.get("reason", "") or ""),
        "notes": [str(n) for n in unit.get("notes", []) or []],
        "observations": [],
        # srb's own names for the same two counts
        "passed": passed,
        "scored": scored,
    }


def _rounds(verification: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    rounds = []
    for unit in (verification or {}).get("units", []) or []:
        if not isinstance(unit, Mapping):
            continue
        rounds.append(
            {
                "adversary": str(unit.get("id", "")),
                "model": str(unit.get("model", "")),
                "outcome": str(unit.get("status", "error")),
                "reason": str(unit.get("reason", ""))[:2000],
                "elapsed_sec": unit.get("duration_sec"),
                "candidates_written": unit.get("candidates", 0),
                "tool_calls": unit.get("tool_calls", 0),
                "tool_errors": unit.get("tool_errors", 0),
                "resumes": unit.get("resumes", 0),
                "usage": {
                    "driver": unit.get("driver"),
                    "model": unit.get("model"),
                    "calls": unit.get("turns"),
                    "input_tokens": unit.get("input_tokens"),
                    "output_tokens": unit.get("output_tokens"),
                },
            }
        )
    return rounds


def _samples(audit: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    meta = (audit or {}).get("metadata") or {}
    out = []
    for sample in meta.get("samples", []) or []:
        if isinstance(sample, Mapping):
            usage = dict(sample.get("usage") or {})
            usage.setdefault("driver", meta.get("driver"))
            usage.setdefault("calls", sample.get("turns"))
            out.append({**sample, "elapsed_sec": sample.get("wall_sec"), "usage": usage})
    return out


def _uncounted(unscored: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for stage, got in unscored.items():
        view: dict[str, Any] = {"ran": True, "measured": "error" not in got}
        for key in ("points", "rate", "complete", "models_total", "models_survived", "status"):
            if key in got:
                view[key] = got[key]
        if isinstance(got.get("modules"), list):
            view["modules"] = len(got["modules"])
            view["measured"] = view["measured"] and bool(got["modules"])
        out[stage] = view
    return out


def verdict_document(
    envelope: ScoreEnvelope,
    *,
    task: str,
    stages: Mapping[str, Mapping[str, Any] | None],
    harnesses: Sequence[Mapping[str, Any]] = (),
    behavioural_points: float = 40.0,
) -> dict[str, Any]:
    """score.json: the published verdict's keys, srb's envelope fields kept beside them."""
    srb = envelope.to_json()
    gate = envelope.audit_gate
    behavioural = dict(srb["behavioural"])
    modules = [_module(m) for m in behavioural.get("modules", [])]
    verification = dict(srb["verification"])
    survived = int(verification.get("models_survived", 0))
    stages_run = []
    if gate in ("pass", "fail"):
        stages_run.append("audit")
    if behavioural.get("credited") or (gate == "pass" and behavioural.get("complete") is False):
        stages_run.append("behavioural")
    if verification.get("ran"):
        stages_run.append("verification")
    unscored: dict[str, dict[str, Any]] = {}
    unscored_stages: dict[str, str] = {}
    if gate == "fail" and behavioural.get("complete") is not None:
        unscored["behavioural"] = {
            "points": behavioural_points if behavioural.get("complete") else 0.0,
            "rate": behavioural.get("rate", 0.0),
            "complete": bool(behavioural.get("complete")),
            "modules": modules,
            "status": behavioural.get("status"),
        }
        unscored_stages["behavioural"] = "ran, not counted: Stage I failed"
    extra = verification.get("uncredited")
    if isinstance(extra, Mapping):
        unscored["verification"] = {
            "models_total": int(verification.get("models_total", 0)),
            "models_survived": int(extra.get("models_survived", 0)),
            "status": "ok",
        }
        unscored_stages["verification"] = "ran, not counted: the gate was closed"
    audit = stages.get("audit") or {}
    failures = [
        {"gate": c.get("id"), "summary": c.get("summary", "")}
        for c in audit.get("checks", []) or []
        if isinstance(c, Mapping)
        and c.get("verdict") == "fail"
        and not str(c.get("id", "")).startswith("scan/")  # advisory: never a gate failure
    ]
    score = envelope.score if envelope.score is not None else 0.0
    behavioural.update(
        {"points": float(behavioural.get("points", 0.0)), "modules": modules}
    )
    verification.update(
        {
            "points": float(verification.get("points", 0.0)),
            "models_total": int(verification.get("models_total", 0)),
            "models_survived": survived,
            "breaks": list(verification.get("breaks", [])),
        }
    )
    return {
        "schema": SCORE_SCHEMA,
        "task": task,
        "reward": round(score / envelope.max_score, 6) if envelope.max_score else 0.0,
        "score": round(score, 4),
        "max_score": envelope.max_score,
        "valid": envelope.valid,
        "audit_gate": _GATE.get(gate, "not-run"),
        "behavioural": behavioural,
        "verification": verification,
        "stages_run": stages_run,
        "unscored_stages": unscored_stages,
        "blocked_by": _BLOCKED.get(envelope.blocked_by or "", envelope.blocked_by or ""),
        "harnesses": [dict(h) for h in harnesses],
        "harness_error": envelope.harness_error or "",
        "audit_failures": failures,
        "notes": list(envelope.notes),
        "uncredited": unscored,
        "metadata": {
            "audit": {"samples": _samples(stages.get("audit"))},
            "verification": {"rounds": _rounds(stages.get("verification"))},
        },
        "unscored": unscored,
        "uncounted": _uncounted(unscored),
        "srb": {"score": srb["score"], "reward": srb["reward"], "audit_gate": gate,
                "blocked_by": envelope.blocked_by},
    }


def error_document(task: str, message: str, max_score: float = 100.0) -> dict[str, Any]:
    """score.json for a grading that did not complete: reward 0, ``valid`` false, the
    message in ``harness_error`` (a zero that is no judgement about the submission)."""
    envelope = ScoreEnvelope(
        score=None,
        max_score=max_score,
        valid=False,
        audit_gate="error",
        behavioural={"points": 0.0, "rate": 0.0, "complete": None, "modules": []},
        verification={"points": 0.0, "models_total": 0, "models_survived": 0, "breaks": []},
        harness_error=message,
        notes=["the score is not a judgement about the submission; the grader did not complete"],
    )
    return verdict_document(envelope, task=task, stages={})
