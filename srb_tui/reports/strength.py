"""`srb report --strength`: the instrument strength of tasks as report tables (issue 36).

One :class:`Report` over one or more strength campaigns, so every format (md, csv, json,
latex, html) and the figure path (``--figures``) work as for the paper's tables:

- ``strength``: per campaign, the suite's mutation score and the panel's strength;
- ``strength-adversaries`` (drawn as a figure): each adversary's catches, catch rate over
  the graded survivors and exclusive catches — the paper's Figure 6 on controlled
  differences;
- ``strength-retire`` (drawn as a figure): survivors let through with k adversaries
  retired (the k strongest, and the best and worst choice of k);
- ``strength-survivors``: every Stage II survivor with its change and who caught it,
  uncaught first (the candidates for an equivalent mark), marked ones last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srb_tui.reports.model import Column, Report, Table
from srb_tui.store.strength_records import MutantRow, StrengthCampaign
from srb_tui.strength.scores import StrengthFigures

STRENGTH_TABLE_IDS = ("strength", "strength-adversaries", "strength-retire",
                      "strength-survivors")


@dataclass(frozen=True)
class CampaignStrength:
    """One strength campaign as read from the store: its record, figures and mutants."""

    campaign: StrengthCampaign
    figures: StrengthFigures
    rows: Sequence[MutantRow]


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100.0 * value, 1)


def _summary(items: Sequence[CampaignStrength]) -> Table:
    table = Table("strength", "Instrument strength · suite mutation score and panel strength",
                  [Column("campaign", "Campaign", "text"), Column("task", "Task", "text"),
                   Column("mutants", "Mutants"), Column("invalid", "Invalid"),
                   Column("equivalent", "Equivalent"), Column("valid", "Valid"),
                   Column("killed", "Killed"), Column("suite", "Suite score %", "pct"),
                   Column("survivors", "Survivors"), Column("graded", "Panel graded"),
                   Column("caught", "Caught"), Column("panel", "Panel strength %", "pct")])
    for item in items:
        f = item.figures
        table.rows.append([item.campaign.id, item.campaign.task_id, f.mutants, f.invalid,
                           f.equivalent, f.valid, f.killed, _pct(f.suite_score),
                           len(f.survivors), f.graded_survivors, f.caught,
                           _pct(f.panel_strength)])
    table.notes.append("Suite score = killed / valid mutants; panel strength = survivors "
                       "caught by at least one adversary / survivors the panel graded. "
                       "Invalid mutants (they do no better than a State A that cannot start) "
                       "and mutants marked equivalent are left out of both.")
    for item in items:
        c = item.campaign
        table.notes.append(f"{c.id}: {c.asked} mutants of {c.of_tree} sampled with seed "
                           f"{c.seed}" + (f", each adversary {c.budget_sec:g} s per survivor"
                                          if c.budget_sec else ", the probe's budgets"))
    return table


def _adversaries(items: Sequence[CampaignStrength]) -> Table:
    table = Table("strength-adversaries", "Instrument strength · catches per adversary",
                  [Column("adversary", "Adversary", "text"),
                   Column("campaign", "Campaign", "text"), Column("caught", "Caught"),
                   Column("graded", "Graded"), Column("rate", "Catch rate %", "pct"),
                   Column("exclusive", "Exclusive")], bar="rate")
    for item in items:
        for a in item.figures.adversaries:
            table.rows.append([a.adversary, item.campaign.id, a.caught, a.graded,
                               _pct(a.rate), a.exclusive])
    table.notes.append("Exclusive: survivors this adversary caught and no other did — what "
                       "the panel loses without it.")
    return table


def _retire(items: Sequence[CampaignStrength]) -> Table:
    table = Table("strength-retire", "Instrument strength · survivors let through with k "
                  "adversaries retired",
                  [Column("k", "Retired (k)"), Column("campaign", "Campaign", "text"),
                   Column("strongest", "k strongest retired"), Column("best", "Best choice"),
                   Column("worst", "Worst choice"),
                   Column("retired", "Strongest retired", "text")])
    for item in items:
        for step in item.figures.retire:
            table.rows.append([step.retired, item.campaign.id, step.let_through_strongest,
                               step.let_through_best, step.let_through_worst,
                               ", ".join(step.strongest_retired) or None])
    table.notes.append("Of the survivors the panel graded, how many the remaining "
                       "adversaries accept (the paper: 'retire the two strongest and the "
                       "remaining four would accept 46 submissions instead of 28').")
    return table


def _survivors(items: Sequence[CampaignStrength]) -> Table:
    table = Table("strength-survivors", "Instrument strength · Stage II survivors",
                  [Column("mutant", "Mutant", "text"), Column("campaign", "Campaign", "text"),
                   Column("where", "File:line", "text"),
                   Column("operator", "Operator", "text"),
                   Column("change", "Change", "text"),
                   Column("caught_by", "Caught by", "text"),
                   Column("equivalent", "Equivalent", "text")])
    for item in items:
        survivors = [r for r in item.rows if r.stage_ii == "survived"]
        survivors.sort(key=lambda r: (r.equivalent is not None, bool(caught_by(r)),
                                      r.position))
        for row in survivors:
            caught = caught_by(row)
            mark = row.equivalent
            table.rows.append([
                row.mutant_id, item.campaign.id, f"{row.path}:{row.line}", row.operator,
                f"{_short(row.doc.get('before'))} → {_short(row.doc.get('after'))}",
                ", ".join(caught) if caught else ("nobody" if row.stage_iii_done
                                                  else "not graded"),
                None if mark is None else f"{mark.marked_by}: {mark.reason}"])
    return table


def caught_by(row: MutantRow) -> list[str]:
    """The adversaries that broke a survivor (none before its Stage III)."""
    return sorted(a for a, o in row.catches.items() if o == "broken")


def _short(value: object, limit: int = 40) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def strength_report(items: Sequence[CampaignStrength], *, selection: str) -> Report:
    """The strength tables over ``items`` (campaigns in the order given)."""
    report = Report(title=f"srb report — instrument strength — {selection}",
                    selection=selection,
                    tables=[_summary(items), _adversaries(items), _retire(items),
                            _survivors(items)])
    report.counts = {"campaigns": len(items),
                     "mutants": sum(i.figures.mutants for i in items)}
    return report
