"""A campaign as a matrix: rows (task, repeat) × columns (configurations), each cell the
state of its current run named the way the Campaign screen colours it.

Cell outcomes: ``planned``, ``running``, ``not migrated``, ``blindness``,
``fixed checks fail``, ``counterexample``, ``accepted``, ``invalid`` (its run was invalid
and it waits for a retry, or retries are exhausted: ``failed``), ``cancelled``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from srb_tui.reports.records import ReportRun, runs_from_source
from srb_tui.store import Store
from srb_tui.store.campaign_records import CampaignRecord

LABELS = {
    "audit_fail": "not migrated",
    "blindness": "blindness",
    "behavioural_fail": "fixed checks fail",
    "counterexample": "counterexample",
    "accepted": "accepted",
    "invalid": "invalid",
    "cancelled": "cancelled",
    "unfinished": "running",
}
OUTCOME_ORDER = ("accepted", "counterexample", "fixed checks fail", "blindness",
                 "not migrated", "invalid", "failed", "running", "planned", "cancelled")


@dataclass(frozen=True)
class MatrixCell:
    """One (task, repeat, config) cell of a campaign matrix and its outcome."""

    task: str
    config: str
    repeat: int
    outcome: str
    run_id: str | None = None
    score: float | None = None
    attempts: int = 0


@dataclass
class Matrix:
    """A campaign's cells laid out by task and repeat (rows) and config (columns)."""

    campaign: CampaignRecord
    configs: list[str]
    rows: list[tuple[str, int]]
    cells: dict[tuple[str, int, str], MatrixCell] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(OUTCOME_ORDER, 0)
        for cell in self.cells.values():
            out[cell.outcome] = out.get(cell.outcome, 0) + 1
        return out


def cell_outcome(state: str, run: ReportRun | None) -> str:
    if state == "planned" and run is None:
        return "planned"
    if state == "failed":
        return "failed"
    if state == "cancelled":
        return "cancelled"
    if run is None:
        return "planned" if state == "planned" else "running"
    label = LABELS[run.outcome]
    if state == "planned" and label != "running":
        return "invalid"  # waits for its retry
    return label


async def load_matrix(store: Store, campaign_id: str) -> Matrix | None:
    """The matrix of ``campaign_id`` (None if there is no such campaign)."""
    campaign = await store.campaigns.campaign(campaign_id)
    if campaign is None:
        return None
    cells = await store.campaigns.cells(campaign_id)
    src = await store.reports.report_source(campaign=campaign_id)
    runs = {r.run_id: r for r in runs_from_source(src)}
    matrix = Matrix(campaign, [c.label for c in campaign.configs], [])
    seen: set[tuple[str, int]] = set()
    for cell in cells:
        row = (cell.task_id, cell.repeat)
        if row not in seen:
            seen.add(row)
            matrix.rows.append(row)
        run = runs.get(cell.run_id) if cell.run_id else None
        matrix.cells[(cell.task_id, cell.repeat, cell.config)] = MatrixCell(
            cell.task_id, cell.config, cell.repeat, cell_outcome(cell.state, run), cell.run_id,
            None if run is None else run.score, cell.attempts,
        )
    matrix.rows.sort()
    return matrix
