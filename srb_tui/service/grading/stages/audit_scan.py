"""The audit scan: ``tests/audit/scan.toml`` modules, run before the reviews.

The modules run in the audit container through the same module runner as Stage II (the
grader's ``suite`` subcommand with ``--scan``: the scan schema, ``SRB_SCAN=1``), against the
submission with State A beside it. Their checks are advisory — ids prefixed ``scan/``,
never a gate by themselves — and reach the reviewers as ``{{findings}}``: failures and
errors first (at most :data:`MAX_FINDINGS`), passes counted, a "scan incomplete" warning for
a module that died or wrote nothing. The checks, the units and a ``metadata.scan`` summary
go into ``audit.json``. A scan.toml the runner refuses is a configuration error and fails
the stage (:class:`ScanConfigError`); any other scan failure becomes a note in the findings
and the review goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from srb_tui.grader.contract import EXIT_UNUSABLE
from srb_tui.runner import RunnerError
from srb_tui.runner.files import fetch_file
from srb_tui.schema import Task

from .common import StageFault, option_str
from .stage_container import StageContainer
from .stage_layout import ORIGINAL_DIR, SCRATCH, SHARED_WORK, SUBMISSION_DIR, container_path

MAX_FINDINGS = 60
SCAN_RESULT = f"{SCRATCH}/scan.json"
PREFIX = "scan/"
_ORDER = {"fail": 0, "error": 0, "skip": 1}


class ScanConfigError(StageFault):
    """scan.toml cannot be used (the message names the file and the problem)."""


@dataclass
class ScanReport:
    """What the scan contributes to the audit."""

    findings: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    units: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def scan_rel(task: Task) -> str:
    """scan.toml relative to tests/ ([stages.audit].scan, default audit/scan.toml)."""
    assert task.evaluation is not None
    rel = option_str(task.evaluation.audit, "scan", "audit/scan.toml")
    return rel.removeprefix("tests/")


def _incomplete(unit: Mapping[str, Any]) -> str:
    status = str(unit.get("status", ""))
    if status not in ("ok",):
        return f"{unit.get('id')}: {status or 'no status'} ({unit.get('message', '')})".strip()
    counted = sum(int(unit.get(k, 0) or 0) for k in ("passed", "failed", "skipped", "errored"))
    if counted == 0 and not unit.get("observations"):
        return f"{unit.get('id')}: wrote no checks"
    return ""


def render_findings(checks: Sequence[Mapping[str, Any]], units: Sequence[Mapping[str, Any]]) -> str:
    """``{{findings}}``: failures and errors first, at most MAX_FINDINGS lines, passes
    counted, and a warning for every module that died or wrote nothing."""
    counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
    for check in checks:
        verdict = str(check.get("verdict"))
        counts[verdict if verdict in counts else "error"] += 1
    lines = [
        f"Scan: {len(checks)} advisory check(s) from {len(units)} module(s): "
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errored, "
        f"{counts['skip']} skipped. No scan check decides a gate; read them as pointers."
    ]
    for problem in filter(None, (_incomplete(unit) for unit in units)):
        lines.append(f"WARNING: scan incomplete — {problem}")
    listed = sorted(
        (c for c in checks if c.get("verdict") != "pass"),
        key=lambda c: _ORDER.get(str(c.get("verdict")), 1),
    )
    for check in listed[:MAX_FINDINGS]:
        summary = " ".join(str(check.get("summary") or "").split())[:300]
        lines.append(f"- [{check.get('verdict')}] {check.get('id')}: {summary}".rstrip(": "))
    if len(listed) > MAX_FINDINGS:
        lines.append(f"(+{len(listed) - MAX_FINDINGS} more not shown; all are in audit.json)")
    return "\n".join(lines)


def _prefixed(checks: Sequence[Any]) -> list[dict[str, Any]]:
    out = []
    for raw in checks:
        if not isinstance(raw, dict):
            continue
        module, ident = raw.get("module"), str(raw.get("id", ""))
        name = f"{module}/{ident}" if module else ident
        out.append({**raw, "id": PREFIX + name, "required": False, "advisory": True})
    return out


async def run_scan(box: StageContainer, task: Task, timeout_sec: float) -> ScanReport:
    """Run the scan in the audit container (trees in place). Raises ScanConfigError for a
    scan.toml the runner refuses; every other failure is reported in the findings."""
    rel = scan_rel(task)
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    try:
        await box.put_context(task, [folder] if folder else [])
        res = await box.grader(
            [
                "suite", "--scan", "--suite", container_path(rel),
                "--repo", SUBMISSION_DIR, "--original", ORIGINAL_DIR,
                "--result", SCAN_RESULT, "--work", f"{SHARED_WORK}/scan",
                "--private", f"{SCRATCH}/scan", "--task", task.id,
            ],
            timeout_sec=timeout_sec,
        )  # fmt: skip
        raw = await fetch_file(box.engine, box.h, SCAN_RESULT)
    except (StageFault, RunnerError, OSError) as err:
        return _broken(f"the scan could not run: {err}")
    doc: Any = None
    if raw is not None:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            doc = None
    notes = [str(n) for n in (doc.get("notes") or [])] if isinstance(doc, dict) else []
    if res.exit_code == EXIT_UNUSABLE and notes and notes[0].startswith("cannot use"):
        problem = notes[0].split(": ", 1)[-1]
        raise ScanConfigError(f"audit: tests/{rel} cannot be used: {problem}")
    if not isinstance(doc, dict) or not isinstance(doc.get("units"), list):
        tail = res.stderr.decode("utf-8", "replace").strip()[-300:]
        return _broken(f"the scan wrote no usable result ({res.describe()}): {tail}")
    units = [u for u in doc["units"] if isinstance(u, dict)]
    checks = _prefixed(doc.get("checks") or [])
    findings = render_findings(checks, units)
    if res.timed_out or res.exit_code != 0:
        findings += f"\nWARNING: scan incomplete — the scan did not finish ({res.describe()})"
    summary = {
        "ran": True,
        "file": f"tests/{rel}",
        "modules": len(units),
        "checks": len(checks),
        "failed": sum(1 for c in checks if c.get("verdict") == "fail"),
        "errored": sum(1 for c in checks if c.get("verdict") == "error"),
        "incomplete": [p for p in (_incomplete(u) for u in units) if p],
        "status": "ok" if res.exit_code == 0 and not res.timed_out else "error",
    }
    return ScanReport(findings, checks, [{**u, "kind": "scan"} for u in units], summary)


def _broken(message: str) -> ScanReport:
    return ScanReport(
        f"Scan: no findings. NOTE: {message}; the review goes on without them.",
        summary={"ran": False, "status": "error", "note": message},
    )
