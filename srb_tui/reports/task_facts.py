"""What the reports read of the task directories: each task's debt class and each verifier's
effort. Kept apart from :mod:`.build` so ``srb import`` (which needs only the classes) does
not load the report tables and figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from srb_tui.schema import TaskLoad, discover_tasks, load_task

__all__ = ["EFFORT_KEYS", "adversary_efforts", "task_categories", "task_facts"]


def task_categories(roots: Sequence[Path]) -> dict[str, str]:
    """Task id → debt class ([metadata].category) of every task under ``roots`` that loads."""
    return task_facts(roots)[0]


EFFORT_KEYS = ("reasoning_effort", "effort")


def task_facts(
    roots: Sequence[Path],
) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """From every task under ``roots`` that loads: task id → debt class, and (task id,
    adversary id) → the verifier's effort (probe.toml ``[adversary.driver_options]``
    ``reasoning_effort``/``effort``), read once for both."""
    categories: dict[str, str] = {}
    loads = [load_task(path, schema_only=True)
             for path in discover_tasks([r for r in roots if r.exists()])]
    for load in loads:
        if load.task is not None and load.task.category:
            categories[load.task_id] = load.task.category
    efforts = adversary_efforts(loads)
    return categories, efforts


def adversary_efforts(loads: Sequence[TaskLoad]) -> dict[tuple[str, str], str]:
    """(task id, adversary id) → the verifier's effort from each loaded task's probe.toml
    (``[adversary.driver_options]`` ``reasoning_effort`` or ``effort``)."""
    efforts: dict[tuple[str, str], str] = {}
    for load in loads:
        probe = load.task.probe if load.task is not None else None
        for adversary in probe.adversaries if probe is not None else ():
            options = adversary.driver_options
            effort = next((str(options[k]) for k in EFFORT_KEYS if options.get(k)), "")
            if effort:
                efforts[(load.task_id, adversary.id)] = effort
    return efforts
