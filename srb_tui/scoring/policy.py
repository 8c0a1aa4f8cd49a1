"""The scoring policy: the five [scoring] numbers of evaluation.toml, checked to close.

max_score = behavioural_points + verification_points; verification_points =
points_per_survived_model × verification_models; behavioural_points > 0; the model count is a
whole number ≥ 0. A policy that does not close is refused with every problem listed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TOLERANCE = 1e-9
FIELDS = (
    "max_score",
    "behavioural_points",
    "verification_points",
    "verification_models",
    "points_per_survived_model",
)


class PolicyError(ValueError):
    """A [scoring] table that cannot be used; `problems` lists every reason."""

    def __init__(self, problems: list[str], source: str = "[scoring]") -> None:
        self.problems = problems
        self.source = source
        super().__init__(f"{source}: " + "; ".join(problems))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


@dataclass(frozen=True)
class ScoringPolicy:
    """The published defaults: 100 = 40 + 6 × 10."""

    max_score: float = 100.0
    behavioural_points: float = 40.0
    verification_points: float = 60.0
    verification_models: int = 6
    points_per_survived_model: float = 10.0

    def problems(self) -> list[str]:
        """Every arithmetic problem with this policy (empty = usable)."""
        found: list[str] = []
        for name in FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                found.append(f"{name} must be a number, got {value!r}")
            elif not math.isfinite(value) or value < 0:
                found.append(f"{name} must be a finite number >= 0, got {value!r}")
        if found:
            return found
        if self.behavioural_points <= 0:
            found.append("behavioural_points must be > 0")
        if self.max_score <= 0:
            found.append("max_score must be > 0")
        if not float(self.verification_models).is_integer():
            found.append(
                f"verification_models must be a whole number, got {self.verification_models!r}"
            )
        per_model_total = self.points_per_survived_model * self.verification_models
        if not _close(per_model_total, self.verification_points):
            found.append(
                f"points_per_survived_model × verification_models = {per_model_total:g}, "
                f"but verification_points = {self.verification_points:g}"
            )
        if not _close(self.behavioural_points + self.verification_points, self.max_score):
            found.append(
                f"behavioural_points + verification_points = "
                f"{self.behavioural_points + self.verification_points:g}, "
                f"but max_score = {self.max_score:g}"
            )
        return found

    def check(self, source: str = "[scoring]") -> ScoringPolicy:
        """Return self, or raise PolicyError naming `source` and every problem."""
        problems = self.problems()
        if problems:
            raise PolicyError(problems, source)
        return self

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], source: str = "[scoring]") -> ScoringPolicy:
        """Build from a parsed [scoring] table (missing keys take the defaults); unknown keys,
        quoted numbers and booleans are refused along with any arithmetic problem."""
        problems = [f"unknown key {key!r}" for key in table if key not in FIELDS]
        values: dict[str, Any] = {}
        for name in FIELDS:
            if name not in table:
                continue
            value = table[name]
            if isinstance(value, bool) or not isinstance(value, int | float):
                problems.append(f"{name} must be a number, got {value!r}")
                continue
            values[name] = value
        if "verification_models" in values:
            models = values["verification_models"]
            if float(models).is_integer():
                values["verification_models"] = int(models)
        if problems:  # arithmetic over half-read numbers would only add noise
            raise PolicyError(problems, source)
        return cls(**values).check(source)
