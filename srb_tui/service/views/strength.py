"""What the console's Strength screen shows (issue 36): every stored strength campaign
with its figures, and one campaign's mutants as rows — survivors first (those no adversary
caught at the very top: the candidates for an equivalent mark or a stronger suite), then
killed, then invalid — with one cell per adversary of the panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from srb_tui.reports.strength import CampaignStrength, caught_by
from srb_tui.store import Store
from srb_tui.store.strength_records import MutantRow
from srb_tui.strength.scores import MutantOutcome, figures

CAUGHT, MISSED, ERRORED, NOT_GRADED = "caught", "missed", "error", ""


@dataclass(frozen=True)
class MutantLine:
    """One mutant of a campaign as the Strength screen's row."""

    row: MutantRow
    panel: dict[str, str]  # adversary → caught | missed | error | "" (not graded)

    @property
    def where(self) -> str:
        return f"{self.row.path}:{self.row.line}"

    @property
    def diff(self) -> str:
        return str(self.row.doc.get("diff") or "")


@dataclass
class StrengthView:
    """The stored strength campaigns, newest first, and a problem reading them."""

    campaigns: list[CampaignStrength] = field(default_factory=list)
    problem: str | None = None


def _rank(row: MutantRow) -> tuple[int, int]:
    if row.stage_ii == "survived":
        return (0 if row.stage_iii_done and not caught_by(row) else
                1 if not row.stage_iii_done else 2, row.position)
    return ({"killed": 3, "invalid": 4}.get(row.stage_ii or "", 5), row.position)


def mutant_lines(item: CampaignStrength) -> list[MutantLine]:
    """The campaign's mutants, survivors first (uncaught, ungraded, caught), then killed,
    invalid and not yet graded."""
    out = []
    for row in sorted(item.rows, key=_rank):
        cells = {}
        for name in item.campaign.panel:
            got = row.catches.get(name)
            cells[name] = (CAUGHT if got == "broken" else MISSED if got == "survived"
                           else ERRORED if got else NOT_GRADED)
        out.append(MutantLine(row, cells))
    return out


async def load_strength(store: Store) -> StrengthView:
    """Every strength campaign of the store with figures and mutants."""
    return StrengthView(await read_campaigns(store))


def outcomes(rows: Sequence[MutantRow]) -> list[MutantOutcome]:
    """The scored outcomes of the graded mutants (ungraded ones are left out)."""
    out = []
    for row in rows:
        if row.stage_ii is None:
            continue
        caught = None
        if row.stage_iii_done:
            caught = frozenset(caught_by(row))
        out.append(MutantOutcome(row.mutant_id, row.stage_ii, caught,
                                 row.equivalent is not None))
    return out



async def read_campaigns(store: Store, *, campaign: str | None = None,
                         tasks: Sequence[str] = ()) -> list[CampaignStrength]:
    """Stored strength campaigns with their figures and mutants: one by id, or every one
    (of ``tasks``: ids or unique prefixes), newest first. KeyError names an unknown id."""
    if campaign is not None:
        found = await store.strength.campaign(campaign)
        if found is None:
            raise KeyError(campaign)
        chosen = [found]
    else:
        chosen = [c for c in await store.strength.campaigns()
                  if not tasks or any(c.task_id.startswith(t) for t in tasks)]
    out = []
    for item in chosen:
        rows = await store.strength.mutants(item.id)
        out.append(CampaignStrength(item, figures(outcomes(rows), item.panel), rows))
    return out
