"""Two runs side by side: score, stages, module pass rates, gate and adversary outcomes.

``compare_runs`` lines up two ``RunDetail`` records (and their score.json stage marks) as
rows of (section, label, left, right); a row whose two sides differ is flagged so the
console can point at what changed between two attempts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from srb_tui.service.views.runs_table import MARK, StageMarks
from srb_tui.store import RunDetail


@dataclass(frozen=True)
class CompareRow:
    """One line of the two-run comparison (section, label, left and right values)."""

    section: str
    label: str
    left: str
    right: str

    @property
    def differs(self) -> bool:
        return self.left != self.right


def _duration(detail: RunDetail) -> str:
    run = detail.run
    try:
        start = datetime.fromisoformat(run.started_at) if run.started_at else None
        end = datetime.fromisoformat(run.finished_at) if run.finished_at else None
    except ValueError:
        return "—"
    if start is None or end is None:
        return "—"
    minutes, seconds = divmod(int((end - start).total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def _score(detail: RunDetail) -> str:
    run = detail.run
    if run.score is None:
        return "—"
    return f"{run.score:g}/{run.max_score:g}" if run.max_score else f"{run.score:g}"


def _keyed(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    return dict(pairs)


def compare_runs(
    a: RunDetail, b: RunDetail, marks_a: StageMarks, marks_b: StageMarks
) -> list[CompareRow]:
    """Every comparable fact of two runs, in a fixed order."""
    rows: list[CompareRow] = []

    def add(section: str, label: str, left: str, right: str) -> None:
        rows.append(CompareRow(section, label, left, right))

    ra, rb = a.run, b.run
    add("run", "task", ra.task_id, rb.task_id)
    add("run", "agent", ra.agent, rb.agent)
    add("run", "model", ra.model or "—", rb.model or "—")
    add("run", "effort", ra.effort or "—", rb.effort or "—")
    add("run", "status", ra.status, rb.status)
    add("run", "stop reason", ra.stop_reason or "—", rb.stop_reason or "—")
    add("run", "duration", _duration(a), _duration(b))
    add("score", "score", _score(a), _score(b))
    valid = {None: "—", True: "valid", False: "invalid"}
    add("score", "validity", valid[ra.valid], valid[rb.valid])
    add("score", "blocked by", ra.blocked_by or "—", rb.blocked_by or "—")
    for label, left, right in (
        ("I audit", marks_a.audit, marks_b.audit),
        ("II behavioural", marks_a.behavioural, marks_b.behavioural),
        ("III verification", marks_a.verification, marks_b.verification),
    ):
        add("stages", label, f"{MARK[left]} {left or 'not reached'}",
            f"{MARK[right]} {right or 'not reached'}")
    gates_a = _keyed((g.gate_id, g.verdict) for g in a.gate_outcomes)
    gates_b = _keyed((g.gate_id, g.verdict) for g in b.gate_outcomes)
    for gate in dict.fromkeys([*gates_a, *gates_b]):
        add("gates", gate, gates_a.get(gate, "—"), gates_b.get(gate, "—"))

    def rate(module: object) -> str:
        value = getattr(module, "rate", None)
        status = getattr(module, "status", "")
        text = "—" if value is None else f"{value:.0%}"
        return text if status == "ok" else f"{text} ({status})"

    modules_a = _keyed((m.module_id, rate(m)) for m in a.module_results)
    modules_b = _keyed((m.module_id, rate(m)) for m in b.module_results)
    for module in dict.fromkeys([*modules_a, *modules_b]):
        add("modules", module, modules_a.get(module, "—"), modules_b.get(module, "—"))
    adv_a = _keyed((r.adversary_id, r.status) for r in a.adversary_rounds)
    adv_b = _keyed((r.adversary_id, r.status) for r in b.adversary_rounds)
    for adversary in dict.fromkeys([*adv_a, *adv_b]):
        add("adversaries", adversary, adv_a.get(adversary, "—"), adv_b.get(adversary, "—"))
    return rows
