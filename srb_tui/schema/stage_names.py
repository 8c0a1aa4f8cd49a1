"""The three grading stages by name, in order: a leaf, so the store can name them without
loading the task model."""

from __future__ import annotations

from srb_tui.grader.contract import STAGES

STAGE_NAMES: tuple[str, ...] = STAGES
