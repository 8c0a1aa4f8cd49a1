"""The figures of a strength campaign (issue 36), from each mutant's outcome.

A mutant of State A is graded as a submission with Stage I skipped. Stage II *kills* it
when a scored check fails; a mutant that does not build, or fails every scored check, is
*invalid* (it measures nothing) and counted apart; one the author marked *equivalent* (no
observable change) is left out of every score, and the count of such marks is said. On
the Stage II survivors Stage III runs the panel: an adversary *catches* a survivor when it
hands in an upheld counterexample.

- the suite's mutation score: killed / valid, not-equivalent mutants;
- the panel's strength: survivors caught by at least one adversary / survivors graded;
- each adversary's catch rate and its exclusive catches (caught by it alone);
- the retire-k curve: for k adversaries retired, how many survivors the rest let through,
  best and worst over every choice of k and for the k strongest (most catches) retired —
  the paper's "retire the two strongest and the remaining four would accept 46 instead of
  28", measured on controlled differences.

Pure functions over plain records: the store, the CLI, the report and the screen all call
these, so the numbers have one home.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

KILLED = "killed"
SURVIVED = "survived"
INVALID = "invalid"
STAGE_II_OUTCOMES = (KILLED, SURVIVED, INVALID)


@dataclass(frozen=True)
class MutantOutcome:
    """What the stages did to one mutant.

    ``caught_by`` is the set of adversaries that caught it, or None when Stage III did not
    (yet) run on it; ``equivalent`` is the author's mark.
    """

    mutant: str
    stage_ii: str
    caught_by: frozenset[str] | None = None
    equivalent: bool = False

    def __post_init__(self) -> None:
        if self.stage_ii not in STAGE_II_OUTCOMES:
            raise ValueError(f"mutant {self.mutant}: Stage II outcome {self.stage_ii!r} is not "
                             f"one of {', '.join(STAGE_II_OUTCOMES)}")


@dataclass(frozen=True)
class RetireStep:
    """With ``retired`` adversaries retired: survivors the rest let through."""

    retired: int
    strongest_retired: tuple[str, ...]
    let_through_strongest: int
    let_through_best: int
    let_through_worst: int


@dataclass(frozen=True)
class AdversaryStrength:
    """One adversary over the graded survivors: caught, graded, and caught by it alone."""

    adversary: str
    caught: int
    graded: int
    exclusive: int

    @property
    def rate(self) -> float | None:
        return self.caught / self.graded if self.graded else None


@dataclass
class StrengthFigures:
    """The figures of one strength campaign: suite mutation score, panel strength, per
    adversary catches, and the retire-k curve."""

    mutants: int
    invalid: int
    equivalent: int
    valid: int
    killed: int
    survivors: list[str] = field(default_factory=list)
    graded_survivors: int = 0
    caught: int = 0
    uncaught: list[str] = field(default_factory=list)
    adversaries: list[AdversaryStrength] = field(default_factory=list)
    retire: list[RetireStep] = field(default_factory=list)

    @property
    def suite_score(self) -> float | None:
        """Killed / valid (equivalent marks excluded); None with no valid mutant."""
        return self.killed / self.valid if self.valid else None

    @property
    def panel_strength(self) -> float | None:
        """Caught by at least one adversary / Stage II survivors Stage III graded."""
        return self.caught / self.graded_survivors if self.graded_survivors else None


def figures(outcomes: Iterable[MutantOutcome], adversaries: Sequence[str]) -> StrengthFigures:
    """Every figure of a strength campaign from its mutants' outcomes.

    ``adversaries`` is the task's panel in probe order; an adversary named in an outcome but
    not in the panel is an error (a record of another panel)."""
    rows = list(outcomes)
    panel = list(adversaries)
    if len(set(panel)) != len(panel):
        raise ValueError(f"the panel names an adversary twice: {panel}")
    invalid = sum(1 for r in rows if r.stage_ii == INVALID)
    counted = [r for r in rows if r.stage_ii != INVALID and not r.equivalent]
    equivalent = sum(1 for r in rows if r.stage_ii != INVALID and r.equivalent)
    survivors = [r for r in counted if r.stage_ii == SURVIVED]
    graded = [r for r in survivors if r.caught_by is not None]
    for row in graded:
        stray = sorted(set(row.caught_by or ()) - set(panel))
        if stray:
            raise ValueError(f"mutant {row.mutant}: caught by {', '.join(stray)}, not in the "
                             f"panel ({', '.join(panel)})")
    catches = {name: {r.mutant for r in graded if name in (r.caught_by or ())}
               for name in panel}
    out = StrengthFigures(
        mutants=len(rows), invalid=invalid, equivalent=equivalent, valid=len(counted),
        killed=sum(1 for r in counted if r.stage_ii == KILLED),
        survivors=[r.mutant for r in survivors], graded_survivors=len(graded),
        caught=sum(1 for r in graded if r.caught_by),
        uncaught=[r.mutant for r in graded if not r.caught_by],
    )
    for name in panel:
        others = set().union(*(catches[o] for o in panel if o != name)) if len(panel) > 1 \
            else set()
        out.adversaries.append(AdversaryStrength(
            name, len(catches[name]), len(graded), len(catches[name] - others)))
    out.retire = retire_curve(catches, [r.mutant for r in graded])
    return out


def retire_curve(catches: dict[str, set[str]], graded: Sequence[str]) -> list[RetireStep]:
    """For k = 0 … len(panel): survivors let through when k adversaries are retired.

    The strongest are those with the most catches (ties: panel order); best and worst are
    over every choice of k (a panel of six has 64 subsets)."""
    panel = list(catches)
    everyone = set(graded)

    def through(kept: Iterable[str]) -> int:
        seen: set[str] = set()
        for name in kept:
            seen |= catches[name]
        return len(everyone - seen)

    order = sorted(panel, key=lambda name: (-len(catches[name]), panel.index(name)))
    steps = []
    for k in range(len(panel) + 1):
        counts = [through(n for n in panel if n not in gone)
                  for gone in itertools.combinations(panel, k)]
        strongest = tuple(order[:k])
        steps.append(RetireStep(k, strongest, through(n for n in panel if n not in strongest),
                                min(counts), max(counts)))
    return steps
