"""Plain helpers for the Run screen: durations, stage states, citations, expected/actual.

No widgets here, so every rule is easy to test on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from srb_tui.schema import STAGE_NAMES
from srb_tui.store import RunDetail, RunRecord
from srb_tui.store.run_extra_more import ImportedFrom

STAGES = STAGE_NAMES
LIFECYCLE = ("preparing", "agent", "collecting", *STAGES, "scored")
GLYPH = {"done": "✓", "failed": "✗", "running": "●", "waiting": "○", "skipped": "–"}
ROOTS = ("original", "submission")
_CITATION = re.compile(r"^(original|submission):(.+?)(?::(\d+))?$")


def parse_time(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        value = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def clock(seconds: float | None) -> str:
    """``1:02:03`` / ``2:03`` / ``—``."""
    if seconds is None:
        return "—"
    total = max(0, int(seconds))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def elapsed_sec(run: RunRecord, now: datetime | None = None) -> float | None:
    """Seconds since the run started: to its finish, or to ``now`` while it is live."""
    start = parse_time(run.started_at)
    if start is None:
        return None
    end = parse_time(run.finished_at) or now or datetime.now(UTC)
    return (end - start).total_seconds()


def imported_from(run: RunRecord) -> str | None:
    """The published-harness folder an imported run was read from (``srb import``), or
    ``None`` for a run srb ran itself."""
    found = ImportedFrom.read(run.extra)
    if found is None:
        return None
    return found.source_dir or "another harness"


def reached(detail: RunDetail) -> set[str]:
    """Every status the run has been in."""
    seen = {t.to_status for t in detail.transitions}
    seen.add(detail.run.status)
    return seen


def stage_state(detail: RunDetail, stage: str) -> str:
    """``done`` / ``failed`` / ``running`` / ``waiting`` / ``skipped`` for one stage."""
    run = detail.run
    if run.status == stage:
        return "running"
    result = next((r for r in detail.stage_results if r.stage == stage), None)
    if result is not None:
        return "done" if result.status == "ok" else "failed"
    if run.status in ("scored", "cancelled", "infra_error"):
        return "skipped"
    return "waiting"


def lifecycle_state(detail: RunDetail, status: str) -> str:
    """The state of one lifecycle step for the header's timeline."""
    if status in STAGES:
        return stage_state(detail, status)
    run = detail.run
    if run.status == status:
        return "done" if status == "scored" else "running"
    if status in reached(detail):
        return "done"
    if run.status in ("cancelled", "infra_error"):
        return "skipped"
    return "waiting"


def score_text(run: RunRecord) -> str:
    if run.score is None:
        return "—"
    return f"{run.score:g}/{run.max_score or 100:g}"


def validity(run: RunRecord) -> str:
    return {None: "validity —", True: "valid", False: "invalid"}[run.valid]


def invalid_because(run: RunRecord) -> str | None:
    if run.valid is not False:
        return None
    return run.harness_error or "; ".join(run.notes) or "no reason recorded"


@dataclass(frozen=True)
class Citation:
    """One piece of evidence: ``root:path`` at ``line`` with the quoted text."""

    root: str
    path: str
    line: int | None
    quote: str = ""
    note: str = ""
    grounded: bool | None = None
    reason: str = ""

    @property
    def label(self) -> str:
        where = f"{self.root}:{self.path}"
        return f"{where}:{self.line}" if self.line is not None else where


def parse_citation(item: Any) -> Citation | None:
    """A citation from a stored evidence item (``{path, line, quote, …}`` or the text
    ``root:path:line``); None when the item does not name a tree."""
    if isinstance(item, str):
        match = _CITATION.match(item.strip())
        if match is None:
            return None
        number = int(match.group(3)) if match.group(3) else None
        return Citation(match.group(1), match.group(2), number)
    if not isinstance(item, dict):
        return None
    raw_path = item.get("path")
    if not isinstance(raw_path, str):
        return None
    match = _CITATION.match(raw_path.strip())
    if match is None:
        return None
    line_value = item.get("line")
    line: int | None
    if isinstance(line_value, int) and not isinstance(line_value, bool):
        line = line_value
    elif isinstance(line_value, str) and line_value.isdigit():
        line = int(line_value)
    else:
        line = int(match.group(3)) if match.group(3) else None
    grounded = item.get("grounded")
    return Citation(
        root=match.group(1),
        path=match.group(2),
        line=line,
        quote=str(item.get("quote") or ""),
        note=str(item.get("note") or ""),
        grounded=grounded if isinstance(grounded, bool) else None,
        reason=str(item.get("reason") or ""),
    )


def evidence_items(evidence: Any) -> list[Any]:
    if isinstance(evidence, list):
        return evidence
    if evidence is None:
        return []
    return [evidence]


def expected_actual(detail: Any) -> tuple[str, str] | None:
    """Split a check's detail into (expected, actual) when it has both, else None.

    Understands ``{"expected": …, "actual": …}`` and text with an ``expected …`` part
    followed by an ``actual …`` part (what the demo suites write).
    """
    if isinstance(detail, dict):
        if "expected" in detail or "actual" in detail:
            return _show(detail.get("expected")), _show(detail.get("actual"))
        return None
    if not isinstance(detail, str):
        return None
    lower = detail.lower()
    start = lower.find("expected")
    split = lower.find("\nactual", start + 1) if start >= 0 else -1
    if start < 0 or split < 0:
        return None
    return detail[start:split].strip("\n"), detail[split + 1:].strip("\n")


def _show(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else repr(value)


def detail_text(detail: Any) -> str:
    if detail is None:
        return ""
    if isinstance(detail, str):
        return detail
    import json

    return json.dumps(detail, indent=1, ensure_ascii=False)
