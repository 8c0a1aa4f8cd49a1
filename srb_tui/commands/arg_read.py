"""What a command's arguments name, read once for every command: the task (``TASK``) found
in the catalog and loaded, the run filter's words parsed; or the line(s) that say why not
and the exit code to end with."""

from __future__ import annotations

from typing import NamedTuple

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.schema import Task
from srb_tui.service.catalog import Catalog, task_hint
from srb_tui.service.views.runs_table import RunFilter, parse_filter


class UsableTask(NamedTuple):
    """A task that loaded, under the id the catalog knows it by."""

    task_id: str
    task: Task


def usable_task(catalog: Catalog, settings: Settings, task_id: str, out: Output, *,
                graded: bool = False) -> UsableTask | int:
    """``task_id``'s task; else the error written to ``out`` and its exit code (no such
    task: NOT_FOUND; a task that does not load, or with ``graded`` has no evaluation:
    FAILED)."""
    load = catalog.find(task_id)
    if load is None:
        out.error(f"no task {task_id!r}{task_hint(settings.task_roots, task_id)}")
        return codes.NOT_FOUND
    if load.task is None or (graded and load.task.evaluation is None):
        out.error(f"{load.task_id}: the task does not load; run `srb tasks validate`")
        return codes.FAILED
    return UsableTask(load.task_id, load.task)


def run_filter(words: list[str], out: Output) -> RunFilter | None:
    """The filter ``words`` spell; else each problem written to ``out`` and None (the
    command ends with USAGE)."""
    flt, problems = parse_filter(" ".join(words))
    for problem in problems:
        out.error(f"filter: {problem}")
    return None if problems else flt
