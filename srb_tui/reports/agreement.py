"""Table 6: the Stage I judge against human labels ("is this a genuine migration?").

The human verdict of a run is the majority of its annotators' labels; a tie leaves the run
undecided (counted in a note, in no column). The judge's verdict is Stage I (pass = a
genuine migration). Runs whose Stage I did not give a verdict are left out. Too strict: the
human says genuine, the judge zeroed it; too lenient: the reverse. Cohen's κ is over every
decided run: κ = (p_o − p_e) / (1 − p_e).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srb_tui.reports.model import Column, Table
from srb_tui.reports.records import ReportRun
from srb_tui.reports.tables import group


def human_verdict(labels: Sequence[tuple[str, bool]]) -> bool | None:
    """Majority of the annotators' labels; None on a tie or without labels."""
    yes = sum(1 for _who, genuine in labels if genuine)
    no = len(labels) - yes
    if yes == no:
        return None
    return yes > no


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """κ between two raters over (rater A, rater B) yes/no pairs; None when undefined."""
    n = len(pairs)
    if n == 0:
        return None
    agree = sum(1 for a, b in pairs if a == b)
    a_yes = sum(1 for a, _b in pairs if a) / n
    b_yes = sum(1 for _a, b in pairs if b) / n
    expected = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    if expected >= 1.0:
        return None
    return (agree / n - expected) / (1 - expected)


@dataclass(frozen=True)
class _Counts:
    """The tallies of one human/judge agreement table row."""

    runs: int
    human: int
    judge: int
    agree: int
    strict: int
    lenient: int


def _counts(pairs: Sequence[tuple[bool, bool]]) -> _Counts:
    return _Counts(
        runs=len(pairs),
        human=sum(1 for h, _j in pairs if h),
        judge=sum(1 for _h, j in pairs if j),
        agree=sum(1 for h, j in pairs if h == j),
        strict=sum(1 for h, j in pairs if h and not j),
        lenient=sum(1 for h, j in pairs if j and not h),
    )


def agreement_table(runs: Sequence[ReportRun]) -> Table:
    """Table 6 per task, with an all-tasks row and κ."""
    table = Table("table6", "Table 6 · Stage I judge against human labels", [
        Column("task", "Task", "text"),
        Column("class", "Class", "text"),
        Column("runs", "Runs"),
        Column("human", "Genuine by human"),
        Column("judge", "Genuine by judge"),
        Column("agree", "Agree"),
        Column("strict", "Too strict"),
        Column("lenient", "Too lenient"),
        Column("kappa", "κ", "num"),
    ], bar="agree")
    labelled = [r for r in runs if r.labels and r.counted and r.audit_gate in ("pass", "fail")]
    undecided = 0
    every: list[tuple[bool, bool]] = []
    for task, members in group(labelled, lambda r: r.task).items():
        pairs: list[tuple[bool, bool]] = []
        for r in members:
            human = human_verdict(r.labels)
            if human is None:
                undecided += 1
                continue
            pairs.append((human, r.audit_gate == "pass"))
        if not pairs:
            continue
        every += pairs
        c = _counts(pairs)
        table.rows.append([task, members[0].category, c.runs, c.human, c.judge, c.agree,
                           c.strict, c.lenient, cohen_kappa(pairs)])
    c = _counts(every)
    table.total = [f"{len(table.rows)} tasks", "", c.runs, c.human, c.judge, c.agree, c.strict,
                   c.lenient, cohen_kappa(every)]
    if not labelled:
        table.notes.append("No human labels in this selection (`srb labels import FILE.csv`).")
    if undecided:
        table.notes.append(f"{undecided} labelled run(s) left out: their annotators tie.")
    return table
