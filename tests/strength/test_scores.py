"""Strength figures (issue 36) over hand-made outcomes whose numbers are counted by hand."""

from __future__ import annotations

import pytest

from srb_tui.strength.scores import INVALID, KILLED, SURVIVED, MutantOutcome, figures

PANEL = ["a", "b", "c"]


def _o(mutant: str, stage_ii: str, caught: str | None = None, eq: bool = False) -> MutantOutcome:
    return MutantOutcome(mutant, stage_ii, None if caught is None else frozenset(caught), eq)


OUTCOMES = [
    _o("m1", KILLED), _o("m2", KILLED), _o("m3", KILLED),
    _o("m4", INVALID),
    _o("m5", SURVIVED, "ab"),   # caught by a and b
    _o("m6", SURVIVED, "a"),    # a alone
    _o("m7", SURVIVED, "c"),    # c alone
    _o("m8", SURVIVED, ""),     # nobody
    _o("m9", SURVIVED),         # Stage III not run yet
]


def test_suite_score_panel_strength_and_each_adversary() -> None:
    got = figures(OUTCOMES, PANEL)
    assert (got.mutants, got.invalid, got.valid, got.killed) == (9, 1, 8, 3)
    assert got.suite_score == pytest.approx(3 / 8)
    assert got.survivors == ["m5", "m6", "m7", "m8", "m9"]
    assert (got.graded_survivors, got.caught, got.uncaught) == (4, 3, ["m8"])
    assert got.panel_strength == pytest.approx(3 / 4)
    by = {a.adversary: (a.caught, a.exclusive, a.rate) for a in got.adversaries}
    assert by == {"a": (2, 1, 0.5), "b": (1, 0, 0.25), "c": (1, 1, 0.25)}


def test_retire_curve_counts_let_through_for_every_k() -> None:
    steps = figures(OUTCOMES, PANEL).retire
    assert [s.retired for s in steps] == [0, 1, 2, 3]
    assert steps[0].let_through_strongest == 1  # m8 only
    # retire the strongest (a): m6 is let through too; the best single retirement is b
    assert (steps[1].strongest_retired, steps[1].let_through_strongest) == (("a",), 2)
    assert (steps[1].let_through_best, steps[1].let_through_worst) == (1, 2)
    # two retired: keeping only c lets m5, m6, m8 through; keeping a lets m7, m8 through
    assert (steps[2].let_through_best, steps[2].let_through_worst) == (2, 3)
    assert steps[2].strongest_retired == ("a", "b") and steps[2].let_through_strongest == 3
    assert steps[3].let_through_best == steps[3].let_through_worst == 4


def test_an_equivalent_mark_leaves_the_scores_and_is_counted() -> None:
    marked = [_o("m8", SURVIVED, "", eq=True) if o.mutant == "m8" else o for o in OUTCOMES]
    got = figures(marked, PANEL)
    assert got.equivalent == 1 and got.valid == 7
    assert got.suite_score == pytest.approx(3 / 7)
    assert got.panel_strength == pytest.approx(3 / 3) and got.uncaught == []


def test_records_of_another_panel_and_unknown_outcomes_are_refused() -> None:
    with pytest.raises(ValueError, match="m5: caught by z, not in the panel"):
        figures([_o("m5", SURVIVED, "z")], PANEL)
    with pytest.raises(ValueError, match="'lost' is not one of"):
        MutantOutcome("m1", "lost")
    with pytest.raises(ValueError, match="names an adversary twice"):
        figures([], ["a", "a"])
    empty = figures([_o("m4", INVALID)], PANEL)
    assert empty.suite_score is None and empty.panel_strength is None
