"""The plain per-run record every table is computed from, and how a run's outcome is named.

``ReportRun`` holds only facts (verdicts, counts, durations); the tables are pure functions
over lists of them (``tables.py``, ``figures.py``, ``agreement.py``). ``runs_from_source``
turns the store's raw rows (``Store.reports.report_source``) into records.

Outcomes (Table 2, mutually exclusive): a valid run stops at exactly one of
``audit_fail`` (Stage I failed, fixed checks also fail or were not measured),
``blindness`` (Stage I failed, every fixed check passes), ``behavioural_fail`` (Stage I
passed, a fixed check fails), ``counterexample`` (Stage III upheld at least one break),
``accepted``. A run that is not valid is ``invalid`` (a stage could not measure, or the run
ended in ``infra_error``); ``cancelled`` and ``unfinished`` runs are counted apart, too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

OUTCOMES = ("audit_fail", "blindness", "behavioural_fail", "counterexample", "accepted")
EXCLUDED = ("invalid", "cancelled", "unfinished")
LIVE_STATUSES = frozenset(
    {"pending", "preparing", "agent", "collecting", "audit", "behavioural", "verification"}
)
UNCLASSIFIED = "unclassified"


class Round(NamedTuple):
    """One Stage III adversary lane of a run. ``effort`` is the verifier's reasoning effort
    (the round's record, else the task's probe.toml ``driver_options``; "" when unknown)."""

    adversary: str
    model: str
    outcome: str  # broken | survived | error | pending | running
    duration_sec: float | None = None
    effort: str = ""

    @property
    def slot(self) -> str:
        """The verifier slot: the adversary id up to its first ``-`` (``a03-c-api`` → a03),
        the position a probe gives one model at one effort in every task."""
        return self.adversary.split("-", 1)[0]


class GateSummary(NamedTuple):
    """A run's Stage I gate verdicts after the vote (gates with a pass/fail verdict only)."""

    verdicts: int
    unanimous: int  # no sample dissented
    tied: int  # as many pass as fail votes (a tie passes)
    majority_only: bool  # a required gate passed although a sample voted fail


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
    gates: GateSummary | None = None
    category: str = UNCLASSIFIED
    agent: str = ""
    model: str = ""
    effort: str = ""
    cost: float | None = None  # the agent's spend
    reviewer_cost: float | None = None  # Stage I's reviewer samples
    verifier_cost: float | None = None  # Stage III's model adversaries
    imported: bool = False
    labels: tuple[tuple[str, bool], ...] = ()
    missed: tuple[str, ...] | None = None  # ids of missed fixed checks, when loaded
    addressed_judge: int = 0  # places where the submission addressed its judge (issue 37)
    grader: str = ""  # the grader fingerprint that graded it ("" when not recorded)
    task_digest: str = ""  # the task directory's digest as the run loaded it ("": unrecorded)

    @property
    def harness(self) -> str:
        return self.agent.split(":", 1)[0] if self.agent else ""

    # Derived once (the tables ask these of every run many times).
    outcome: str = field(init=False, compare=False)
    counted: bool = field(init=False, compare=False)
    migrated: bool = field(init=False, compare=False)
    all_pass: bool = field(init=False, compare=False)
    entered_stage3: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        outcome = self._outcome()
        counted = outcome in OUTCOMES
        migrated = counted and self.audit_gate == "pass"
        all_pass = counted and self.complete is True
        for name, value in (("outcome", outcome), ("counted", counted), ("migrated", migrated),
                            ("all_pass", all_pass), ("entered_stage3", migrated and all_pass)):
            object.__setattr__(self, name, value)

    def _outcome(self) -> str:
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


def runs_from_source(
    src: Any,
    categories: Mapping[str, str] | None = None,
    missed: Mapping[str, list[str]] | None = None,
    efforts: Mapping[tuple[str, str], str] | None = None,
) -> list[ReportRun]:
    """Records from a ``ReportSource`` (``efforts``: (task, adversary id) → the verifier's
    effort from the task's probe.toml, for rounds whose record does not carry one).

    The fixed-check denominator of a module that could not report its checks (``error`` or
    ``unreached``) is the largest count any run of the same task recorded for it, so a
    crashed module counts as checks missed rather than vanishing from the fraction.
    """
    cats = dict(categories or {})
    expected: dict[tuple[str, str], int] = {}
    task_of = {str(r["id"]): str(r["task_id"]) for r in src.runs}
    for rid, modules in src.modules.items():
        task = task_of.get(rid, "")
        for mid, _passed, scored in modules:
            key = (task, mid)
            if scored > expected.get(key, 0):
                expected[key] = scored
    out: list[ReportRun] = []
    no_score = ("", None, False, None, 6)
    for row in src.runs:
        rid = str(row["id"])
        task = str(row["task_id"])
        audit_gate, complete, ran, survivors, models_total = src.scores.get(rid, no_score)
        modules = src.modules.get(rid)
        passed = total = None
        if modules and complete is not None:
            passed = sum(m[1] for m in modules)
            total = sum(max(m[2], expected.get((task, m[0]), 0)) for m in modules)
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
                audit_gate=audit_gate,
                complete=complete,
                checks_passed=passed,
                checks_total=total,
                verification_ran=ran,
                survivors=survivors if ran else None,
                models_total=models_total,
                rounds=tuple(_round(r, task, efforts) for r in src.rounds.get(rid, ()))
                if ran else (),
                gates=GateSummary(*gates) if (gates := src.gates.get(rid)) else None,
                addressed_judge=src.addressed.get(rid, 0),
                category=str(category),
                agent=str(row["agent"]),
                model=str(row["model"] or ""),
                effort=str(row["effort"] or ""),
                cost=cost,
                reviewer_cost=src.role_costs.get(rid, {}).get("reviewer"),
                verifier_cost=src.role_costs.get(rid, {}).get("adversary"),
                imported=imported is not None,
                labels=tuple(src.labels.get(rid, [])),
                missed=tuple(missed[rid]) if missed is not None and rid in missed else None,
                grader=_text(row, "grader"),
                task_digest=_text(row, "task_digest"),
            )
        )
    return out


def _text(row: Any, key: str) -> str:
    """A text column that older callers' rows may lack ("" when absent or NULL)."""
    try:
        value = row[key]
    except (IndexError, KeyError):
        return ""
    return str(value) if value else ""


def _round(raw: Sequence[Any], task: str,
           efforts: Mapping[tuple[str, str], str] | None) -> Round:
    found = Round(*raw)
    if not found.effort and efforts:
        return found._replace(effort=efforts.get((task, found.adversary), ""))
    return found


def _default_config(row: Mapping[str, Any]) -> str:
    """A configuration label for a run outside any campaign: agent, model, effort."""
    parts = [str(row["agent"])]
    model = row["model"]
    if model and str(model) not in parts[0]:
        parts.append(str(model))
    if row["effort"]:
        parts.append(str(row["effort"]))
    return " · ".join(parts)
