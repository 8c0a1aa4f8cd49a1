"""Stage III counterexamples: one judged candidate as the store records it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srb_tui.grader.candidates.records import counts_as_break


def _code_of(files: Mapping[str, str]) -> str:
    if len(files) == 1:
        return next(iter(files.values()))
    return "\n".join(f"# ==== {name} ====\n{text}" for name, text in sorted(files.items()))


def _first_run(verdict: Mapping[str, Any], role: str) -> dict[str, Any] | None:
    for run in verdict.get("runs") or []:
        if isinstance(run, dict) and run.get("role") == role:
            return run
    return None


def counterexample_fields(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """record_counterexample keyword arguments for one judged candidate."""
    verdict = candidate.get("verdict") or {}
    files = {str(k): str(v) for k, v in (candidate.get("files") or {}).items()}
    observed = candidate.get("observed") or {}
    sides: dict[str, Any] = {}
    for role, key in (("original", "a"), ("submission", "b")):
        run = _first_run(verdict, role)
        output: dict[str, Any] = {}
        if run is not None:
            output = {"stdout": run.get("stdout_tail", ""), "stderr": run.get("stderr_tail", "")}
        if role in observed:
            output["observed"] = observed[role]
        sides[f"output_{key}"] = output or None
        code = run.get("exit_code") if run else None
        sides[f"exit_{key}"] = code if isinstance(code, int) else None
        duration = run.get("duration_sec") if run else None
        sides[f"duration_{key}"] = float(duration) if isinstance(duration, int | float) else None
    extra = {
        key: candidate[key]
        for key in ("argv", "input_hex", "input_bytes", "original_input_bytes", "shrink_tests")
        if key in candidate
    }
    extra["files"] = files
    extra["runs"] = verdict.get("runs") or []
    extra["findings"] = verdict.get("findings") or []
    extra["counts_as_break"] = counts_as_break(verdict)
    return {
        "code": _code_of(files),
        "verdict": str(verdict.get("outcome", "")),
        "reason": str(verdict.get("reason", "")),
        "extra": extra,
        **sides,
    }
