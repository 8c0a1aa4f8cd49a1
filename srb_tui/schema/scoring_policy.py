"""The scoring policy: the five [scoring] numbers of evaluation.toml, checked to close.

max_score = behavioural_points + verification_points; verification_points =
points_per_survived_model × verification_models; behavioural_points > 0; the model count is a
whole number ≥ 0. ``arithmetic_problems`` is the one statement of the two sums: the task
loader reports it against the file's keys, and :meth:`ScoringPolicy.check` refuses a policy
built any other way with the same sentences. ``srb_tui.scoring`` re-exports the class.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from srb_tui.schema.reader import fmt_number

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
        found.extend(message for _key, message in self.arithmetic_problems())
        return found

    def arithmetic_problems(self) -> list[tuple[str, str]]:
        """``(key, message)`` for each of the two sums that does not close."""
        found: list[tuple[str, str]] = []
        per_model, models = self.points_per_survived_model, self.verification_models
        product = per_model * models
        if not _close(product, self.verification_points):
            found.append((
                "verification_points",
                f"verification_points ({fmt_number(self.verification_points)}) must equal "
                f"points_per_survived_model × verification_models "
                f"({fmt_number(per_model)} × {fmt_number(models)} = {fmt_number(product)})",
            ))
        total = self.behavioural_points + self.verification_points
        if not _close(total, self.max_score):
            found.append((
                "max_score",
                f"max_score ({fmt_number(self.max_score)}) must equal behavioural_points + "
                f"verification_points ({fmt_number(self.behavioural_points)} + "
                f"{fmt_number(self.verification_points)} = {fmt_number(total)})",
            ))
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
