"""The plain per-run record every table is computed from, and how a run's outcome is named.

``ReportRun`` holds only facts (verdicts, counts, durations); the tables are pure functions
over lists of them (``tables.py``, ``figures.py``, ``agreement.py``). ``runs_from_source``
turns the store's raw rows (``Store.report_source``) into records.

Outcomes (Table 2, mutually exclusive): a valid run stops at exactly one of
``audit_fail`` (Stage I failed, fixed checks also fail or were not measured),
``blindness`` (Stage I failed, every fixed check passes), ``behavioural_fail`` (Stage I
passed, a fixed check fails), ``counterexample`` (Stage III upheld at least one break),
``accepted``. A run that is not valid is ``invalid`` (a stage could not measure, or the run
ended in ``infra_error``); ``cancelled`` and ``unfinished`` runs are counted apart, too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

OUTCOMES = ("audit_fail", "blindness", "behavioural_fail", "counterexample", "accepted")
EXCLUDED = ("invalid", "cancelled", "unfinished")
LIVE_STATUSES = frozenset(
    {"pending", "preparing", "agent", "collecting", "audit", "behavioural", "verification"}
)
UNCLASSIFIED = "unclassified"


@dataclass(frozen=True)
class Round:
    """One Stage III adversary lane of a run."""

    adversary: str
    model: str
    outcome: str  # broken | survived | error | pending | running
    duration_sec: float | None = None


@dataclass(frozen=True)
class GateTally:
    """One Stage I gate of a run after the vote."""

    gate: str
    verdict: str
    votes_pass: int
    votes_fail: int
    required: bool = True


@dataclass(frozen=True)
class ReportRun:
    """One run as the reports see it."""

    run_id: str
    task: str
    config: str
    status: str = "scored"
    valid: bool | None = True
    score: float | None = None
    audit_gate: str = ""  # pass | fail | error | "" (never audited)
    complete: bool | None = None  # every fixed check passed (None: not measured)
    checks_passed: int | None = None
    checks_total: int | None = None
    verification_ran: bool = False
    survivors: int | None = None
    models_total: int = 6
    rounds: tuple[Round, ...] = ()
    gates: tuple[GateTally, ...] = ()
    category: str = UNCLASSIFIED
    agent: str = ""
    model: str = ""
    effort: str = ""
    cost: float | None = None
    imported: bool = False
    labels: tuple[tuple[str, bool], ...] = ()
    missed: tuple[str, ...] | None = None  # ids of missed fixed checks, when loaded

    @property
    def harness(self) -> str:
        return self.agent.split(":", 1)[0] if self.agent else ""

    @property
    def outcome(self) -> str:
        """One of OUTCOMES for a valid finished run, else one of EXCLUDED."""
        if self.status in LIVE_STATUSES:
            return "unfinished"
        if self.status == "cancelled":
            return "cancelled"
        if self.status != "scored" or self.valid is not True:
            return "invalid"
        if self.audit_gate != "pass":
            return "blindness" if self.complete is True else "audit_fail"
        if self.complete is not True:
            return "behavioural_fail"
        if any(r.outcome == "broken" for r in self.rounds) or (
            self.verification_ran and (self.survivors or 0) < self.models_total
        ):
            return "counterexample"
        return "accepted"

    @property
    def counted(self) -> bool:
        """Valid and finished: the runs every table is over."""
        return self.outcome in OUTCOMES

    @property
    def migrated(self) -> bool:
        return self.counted and self.audit_gate == "pass"

    @property
    def all_pass(self) -> bool:
        return self.counted and self.complete is True

    @property
    def entered_stage3(self) -> bool:
        return self.migrated and self.complete is True

    @property
    def fraction(self) -> float | None:
        """Share of the fixed checks passed (None when Stage II did not measure)."""
        if self.checks_passed is None or not self.checks_total:
            return None
        return self.checks_passed / self.checks_total

    @property
    def missed_count(self) -> int | None:
        if self.checks_passed is None or self.checks_total is None:
            return None
        return self.checks_total - self.checks_passed


@dataclass
class _ModuleCounts:
    passed: dict[str, int] = field(default_factory=dict)
    scored: dict[str, int] = field(default_factory=dict)


def _modules(score: Mapping[str, Any]) -> _ModuleCounts:
    counts = _ModuleCounts()
    behavioural = score.get("behavioural")
    modules = behavioural.get("modules") if isinstance(behavioural, Mapping) else None
    for module in modules if isinstance(modules, list) else []:
        if not isinstance(module, Mapping):
            continue
        weight = module.get("weight", 1.0)
        if isinstance(weight, int | float) and weight <= 0:
            continue
        mid = str(module.get("id"))
        counts.passed[mid] = int(module.get("passed") or 0)
        counts.scored[mid] = int(module.get("scored") or 0)
    return counts


def _verification(score: Mapping[str, Any]) -> tuple[bool, int | None, int]:
    doc = score.get("verification")
    if not isinstance(doc, Mapping):
        return False, None, 6
    total = int(doc.get("models_total") or 6)
    ran = bool(doc.get("ran"))
    survived = doc.get("models_survived")
    return ran, (int(survived) if ran and isinstance(survived, int | float) else None), total


def runs_from_source(
    src: Any,
    categories: Mapping[str, str] | None = None,
    missed: Mapping[str, list[str]] | None = None,
) -> list[ReportRun]:
    """Records from a ``ReportSource``.

    The fixed-check denominator of a module that could not report its checks (``error`` or
    ``unreached``) is the largest count any run of the same task recorded for it, so a
    crashed module counts as checks missed rather than vanishing from the fraction.
    """
    cats = dict(categories or {})
    modules = {rid: _modules(score) for rid, score in src.scores.items()
               if isinstance(score, Mapping)}
    expected: dict[tuple[str, str], int] = {}
    task_of = {str(r["id"]): str(r["task_id"]) for r in src.runs}
    for rid, counts in modules.items():
        task = task_of.get(rid, "")
        for mid, scored in counts.scored.items():
            key = (task, mid)
            expected[key] = max(expected.get(key, 0), scored)
    out: list[ReportRun] = []
    for row in src.runs:
        rid = str(row["id"])
        task = str(row["task_id"])
        score = src.scores.get(rid)
        score = score if isinstance(score, Mapping) else {}
        found = modules.get(rid)
        passed = total = None
        complete = None
        behavioural = score.get("behavioural")
        if isinstance(behavioural, Mapping):
            value = behavioural.get("complete")
            complete = value if isinstance(value, bool) else None
        if found is not None and found.scored:
            passed = sum(found.passed.values())
            total = sum(max(found.scored[m], expected.get((task, m), 0)) for m in found.scored)
            if complete is None:
                passed = total = None
        ran, survivors, models_total = _verification(score)
        imported = src.imported.get(rid)
        category = cats.get(task) or (imported or {}).get("category") or UNCLASSIFIED
        cost = src.costs.get(rid)
        if cost is None and imported is not None and imported.get("cost_usd") is not None:
            cost = float(imported["cost_usd"])
        valid = row["valid"]
        out.append(
            ReportRun(
                run_id=rid,
                task=task,
                config=src.configs.get(rid) or _default_config(row),
                status=str(row["status"]),
                valid=None if valid is None else bool(valid),
                score=row["score"],
                audit_gate=str(score.get("audit_gate") or ""),
                complete=complete,
                checks_passed=passed,
                checks_total=total,
                verification_ran=ran,
                survivors=survivors,
                models_total=models_total,
                rounds=tuple(
                    Round(str(r["adversary_id"]), str(r["model"] or ""), str(r["status"]),
                          r["duration_sec"])
                    for r in src.rounds.get(rid, [])
                ) if ran else (),
                gates=tuple(
                    GateTally(str(g["gate_id"]), str(g["verdict"]), int(g["votes_pass"]),
                              int(g["votes_fail"]), bool(g["required"]))
                    for g in src.gates.get(rid, [])
                ),
                category=str(category),
                agent=str(row["agent"]),
                model=str(row["model"] or ""),
                effort=str(row["effort"] or ""),
                cost=cost,
                imported=imported is not None,
                labels=tuple(src.labels.get(rid, [])),
                missed=tuple(missed[rid]) if missed is not None and rid in missed else None,
            )
        )
    return out


def _default_config(row: Mapping[str, Any]) -> str:
    """A configuration label for a run outside any campaign: agent, model, effort."""
    parts = [str(row["agent"])]
    model = row["model"]
    if model and str(model) not in parts[0]:
        parts.append(str(model))
    if row["effort"]:
        parts.append(str(row["effort"]))
    return " · ".join(parts)
