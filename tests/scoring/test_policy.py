"""The scoring policy refuses arithmetic that does not close."""

from __future__ import annotations

import pytest

from srb_tui.scoring import PolicyError, ScoringPolicy


def test_published_defaults_close() -> None:
    policy = ScoringPolicy.from_mapping(
        {
            "max_score": 100.0,
            "behavioural_points": 40.0,
            "verification_points": 60.0,
            "verification_models": 6,
            "points_per_survived_model": 10.0,
        }
    )
    assert policy == ScoringPolicy()
    assert policy.problems() == []


def test_other_closing_policy() -> None:
    policy = ScoringPolicy.from_mapping(
        {
            "max_score": 1,
            "behavioural_points": 0.4,
            "verification_points": 0.6,
            "verification_models": 3.0,
            "points_per_survived_model": 0.2,
        }
    )
    assert policy.verification_models == 3 and isinstance(policy.verification_models, int)


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            {"points_per_survived_model": 9.0},
            "verification_points (60) must equal points_per_survived_model × "
            "verification_models (9 × 6 = 54)",
        ),
        # the same sentences the task loader reports (tests/schema/broken/scoring-sum)
        ({"max_score": 90.0},
         "max_score (90) must equal behavioural_points + verification_points (40 + 60 = 100)"),
        ({"behavioural_points": 0.0, "max_score": 60.0}, "behavioural_points must be > 0"),
        (
            {"verification_models": 2.5, "points_per_survived_model": 24.0},
            "verification_models must be a whole number, got 2.5",
        ),
        ({"max_score": "100"}, "max_score must be a number, got '100'"),
        ({"verification_models": True}, "verification_models must be a number, got True"),
        ({"bonus": 1}, "unknown key 'bonus'"),
        (
            {"behavioural_points": -40.0, "max_score": 20.0},
            "behavioural_points must be a finite number >= 0, got -40.0",
        ),
    ],
)
def test_refused_policies(table: dict[str, object], problem: str) -> None:
    with pytest.raises(PolicyError) as caught:
        ScoringPolicy.from_mapping(table, source="tasks/x/tests/evaluation.toml [scoring]")
    assert problem in caught.value.problems
    assert str(caught.value).startswith("tasks/x/tests/evaluation.toml [scoring]: ")


def test_every_problem_at_once() -> None:
    with pytest.raises(PolicyError) as caught:
        ScoringPolicy(max_score=10.0, points_per_survived_model=1.0).check()
    assert len(caught.value.problems) == 2
