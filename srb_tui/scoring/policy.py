"""The scoring policy (one class, defined beside the task model it is read into): the five
[scoring] numbers, checked to close. See :mod:`srb_tui.schema.scoring_policy`."""

from __future__ import annotations

from srb_tui.schema.scoring_policy import FIELDS, PolicyError, ScoringPolicy

__all__ = ["FIELDS", "PolicyError", "ScoringPolicy"]
