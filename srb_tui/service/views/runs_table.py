"""What the Runs screen's table shows: pages of runs, stage marks, filters and the funnel.

A page is one ``list_runs`` query (filters and sort done by SQLite) plus each run's stage
outcomes, read from the store: the score envelope the ladder recorded as the run's newest
``score`` event (the same document it writes to ``score.json``; the files on disk are not
read). ``parse_filter`` turns the filter bar's text (``task:demo01 status:scored agent:x
words``) into store filters, reporting every problem at once. ``funnel_over`` walks every
run matching the filters, a page at a time, and feeds the scored ones to
``srb_tui.scoring.funnel``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.scoring import Funnel, ScoredRun, funnel
from srb_tui.service.views.agent_report import cost_text
from srb_tui.store import RUN_STATUSES, RunRecord, Store

PAGE_SIZE = 100
FUNNEL_PAGE = 2000
FILTER_KEYS = ("task", "status", "agent", "model", "node")
Outcome = str  # "pass" | "fail" | "error" | "" (not reached / unknown)
MARK = {"pass": "✓", "fail": "✗", "error": "!", "": "—"}


@dataclass(frozen=True)
class RunFilter:
    """Store filters from the filter bar (None: no filter on that field)."""

    task: str | None = None
    status: str | None = None
    agent: str | None = None
    model: str | None = None
    node: str | None = None  # "local" for runs of the local backend
    text: str | None = None

    def kwargs(self) -> dict[str, Any]:
        return {
            "task": self.task, "status": self.status, "agent": self.agent,
            "model": self.model, "node": self.node, "text": self.text,
        }

    @property
    def empty(self) -> bool:
        return not any(self.kwargs().values())


def parse_filter(text: str) -> tuple[RunFilter, list[str]]:
    """``key:value`` words for task/status/agent/model/node, other words as free text."""
    values: dict[str, str] = {}
    words: list[str] = []
    problems: list[str] = []
    for word in text.split():
        key, sep, value = word.partition(":")
        if sep and key.lower() in FILTER_KEYS:
            if not value:
                problems.append(f"{key}: needs a value")
            else:
                values[key.lower()] = value
        else:
            words.append(word)
    status = values.get("status")
    if status is not None and status not in RUN_STATUSES:
        problems.append(f"status:{status} is not a run status ({', '.join(RUN_STATUSES)})")
        values.pop("status")
    found = RunFilter(text=" ".join(words) or None, **values)
    return found, problems


@dataclass(frozen=True)
class StageMarks:
    """Outcome of Stage I (audit gate), II (suite complete) and III (no adversary broke it)."""

    audit: Outcome = ""
    behavioural: Outcome = ""
    verification: Outcome = ""

    @property
    def text(self) -> str:
        return " ".join(MARK[o] for o in (self.audit, self.behavioural, self.verification))


def marks_from_score(score: Mapping[str, Any]) -> StageMarks:
    """Stage outcomes from a score.json document."""
    audit = str(score.get("audit_gate") or "")
    behavioural_doc = score.get("behavioural") or {}
    complete = behavioural_doc.get("complete") if isinstance(behavioural_doc, Mapping) else None
    if audit == "error" or audit == "":
        behavioural = ""
    elif complete is True:
        behavioural = "pass"
    elif complete is False:
        behavioural = "fail"
    else:
        behavioural = "error" if behavioural_doc else ""
    verification = ""
    doc = score.get("verification") or {}
    if isinstance(doc, Mapping) and doc.get("ran"):
        outcomes = doc.get("adversaries") or {}
        values = list(outcomes.values()) if isinstance(outcomes, Mapping) else []
        if "broken" in values:
            verification = "fail"
        elif "error" in values or len(values) < int(doc.get("models_total") or 0):
            verification = "error"
        else:
            verification = "pass"
    return StageMarks(audit if audit in MARK else "", behavioural, verification)


def duration_seconds(started: str | None, finished: str | None) -> float | None:
    """Seconds from start to finish (None while either is missing or unreadable)."""
    from datetime import datetime

    try:
        start = datetime.fromisoformat(started) if started else None
        end = datetime.fromisoformat(finished) if finished else None
    except ValueError:
        return None
    return None if start is None or end is None else (end - start).total_seconds()


SCORE_EVENT = "score"


async def score_envelopes(store: Store, runs: list[RunRecord]) -> dict[str, dict[str, Any]]:
    """The recorded score envelope of each of ``runs`` that has one."""
    found = await store.infra.latest_payloads(SCORE_EVENT, [run.id for run in runs])
    return {run_id: doc for run_id, doc in found.items() if isinstance(doc, dict)}


@dataclass(frozen=True)
class RunsPage:
    """One page of the filtered, sorted history."""

    runs: list[RunRecord]
    total: int
    offset: int
    marks: dict[str, StageMarks] = field(default_factory=dict)
    costs: dict[str, str] = field(default_factory=dict)


async def load_page(
    store: Store, flt: RunFilter, sort: str, offset: int, limit: int = PAGE_SIZE,
    run_dir: Callable[[str], Path] | None = None,
) -> RunsPage:
    """The runs of one page, how many match in all, and their stage marks."""
    total = await store.runs.count_runs(**flt.kwargs())
    offset = max(0, min(offset, max(0, total - 1) // limit * limit))
    runs = await store.runs.list_runs(**flt.kwargs(), sort=sort, limit=limit, offset=offset)
    brief = await store.agent.ledger_brief([run.id for run in runs])
    costs = {run.id: cost_text(brief.get(run.id, {})) for run in runs}
    return RunsPage(runs, total, offset, await stage_marks(store, runs, run_dir), costs)


async def stage_marks(store: Store, runs: list[RunRecord],
                      run_dir: Callable[[str], Path] | None = None) -> dict[str, StageMarks]:
    """Stage marks of ``runs`` (blank for a run not graded yet). A run graded before score
    events existed gets its marks from its stage events or score.json (``run_dir``)."""
    from srb_tui.service.views.legacy_marks import legacy_envelopes

    envelopes = await score_envelopes(store, runs)
    older = [run for run in runs if run.id not in envelopes]
    if older:
        envelopes.update(await legacy_envelopes(store, older, run_dir))
    return {run.id: marks_from_score(envelopes[run.id]) if run.id in envelopes
            else StageMarks() for run in runs}


def scored_run(run: RunRecord, score: Mapping[str, Any]) -> ScoredRun:
    """The scoring package's view of a scored run."""
    return ScoredRun.from_score(
        score, run_id=run.id, task=run.task_id, agent=run.agent, model=run.model or ""
    )


@dataclass(frozen=True)
class FunnelSummary:
    """The funnel over the scored runs among ``matching`` filtered runs."""

    funnel: Funnel
    matching: int

    def text(self) -> str:
        f = self.funnel
        if f.runs == 0:
            return f"{self.matching} runs, none scored yet: no funnel"
        return (
            f"{f.runs} scored of {self.matching} · valid {f.valid} · migrated {f.migrated} · "
            f"all tests pass {f.all_tests_pass} · blindness {f.blindness} · "
            f"accepted {f.accepted}"
        )


async def funnel_over(store: Store, flt: RunFilter) -> FunnelSummary:
    """Funnel of every scored run matching ``flt`` (read a page at a time)."""
    matching = await store.runs.count_runs(**flt.kwargs())
    scored: list[ScoredRun] = []
    offset = 0
    while True:
        runs = await store.runs.list_runs(
            **flt.kwargs(), sort="id", limit=FUNNEL_PAGE, offset=offset
        )
        if not runs:
            break
        done = [run for run in runs if run.status == "scored"]
        envelopes = await score_envelopes(store, done)
        scored.extend(scored_run(run, envelopes[run.id]) for run in done if run.id in envelopes)
        offset += len(runs)
    return FunnelSummary(funnel(scored), matching)
