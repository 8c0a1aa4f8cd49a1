"""srb_tui.schema: the task directory model and its loader (published task schema).

``load_task`` reads a task directory and reports every problem at once;
``discover_tasks`` finds task directories under roots; ``validate_paths`` is what
``srb validate`` calls.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.schema.excludes import ExcludePattern, excluded_files, is_excluded
    from srb_tui.schema.loader import TaskLoad, discover_tasks, load_task, validate_paths
    from srb_tui.schema.locator import KeyLocator
    from srb_tui.schema.models import (
        STAGE_NAMES,
        Adversary,
        AgentSpec,
        Artifact,
        Evaluation,
        Gate,
        Module,
        Probe,
        Scan,
        Scope,
        StageSpec,
        Suite,
        Task,
        TaskManifest,
    )
    from srb_tui.schema.problems import Problem, ProblemKind
    from srb_tui.schema.scoring_policy import ScoringPolicy
    from srb_tui.schema.state_a import StateASource, parse_state_a
    from srb_tui.schema.suggest import did_you_mean

__all__ = [
    "STAGE_NAMES",
    "Adversary",
    "AgentSpec",
    "Artifact",
    "Evaluation",
    "ExcludePattern",
    "Gate",
    "KeyLocator",
    "Module",
    "Probe",
    "Problem",
    "ProblemKind",
    "Scan",
    "Scope",
    "ScoringPolicy",
    "StageSpec",
    "StateASource",
    "Suite",
    "Task",
    "TaskLoad",
    "TaskManifest",
    "did_you_mean",
    "discover_tasks",
    "excluded_files",
    "is_excluded",
    "load_task",
    "parse_state_a",
    "validate_paths",
]

__getattr__ = exports_on_first_use(__name__)
