"""From a campaign file to the cell plan: tasks chosen by the selectors, every (task,
configuration, repeat) cell, and each task's declared resources against the machine's."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srb_tui.campaigns.spec import CampaignSpec, select_tasks
from srb_tui.schema import Problem, TaskLoad, discover_tasks, load_task
from srb_tui.store.campaign_records import CampaignConfigRecord, PlannedCell

DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 1024


@dataclass(frozen=True)
class TaskInfo:
    """What the scheduler needs of a task: where it is and what it declares it uses."""

    task_id: str
    path: str
    cpus: float = DEFAULT_CPUS
    memory_mb: int = DEFAULT_MEMORY_MB
    harness: str | None = None  # the task's client pin ([agent].harness), for the agent check


@dataclass(frozen=True)
class Machine:
    """The CPUs and memory a campaign may schedule runs on."""

    cpus: float
    memory_mb: int

    @classmethod
    def this(cls) -> Machine:
        cpus = float(os.cpu_count() or 1)
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
        except (ValueError, OSError):
            memory = 4096
        return cls(cpus, int(memory))


@dataclass(frozen=True)
class Plan:
    """The tasks, configurations and cells of a campaign file, or its problems."""

    tasks: dict[str, TaskInfo]
    configs: tuple[CampaignConfigRecord, ...]
    cells: tuple[PlannedCell, ...]
    problems: tuple[Problem, ...]


def task_info(load: TaskLoad) -> TaskInfo:
    env = load.task.manifest.environment if load.task is not None else {}
    cpus = env.get("cpus", DEFAULT_CPUS)
    memory = env.get("memory_mb", DEFAULT_MEMORY_MB)
    return TaskInfo(
        task_id=load.task_id, path=str(load.path),
        cpus=float(cpus) if isinstance(cpus, int | float) and cpus > 0 else DEFAULT_CPUS,
        memory_mb=int(memory) if isinstance(memory, int | float) and memory > 0
        else DEFAULT_MEMORY_MB,
        harness=load.task.manifest.agent.harness if load.task is not None else None,
    )


def plan_campaign(spec: CampaignSpec, roots: Sequence[Path]) -> Plan:
    """Every cell of ``spec`` over the tasks under ``roots`` (problems: nothing planned)."""
    problems = list(spec.problems)
    loads = {load.task_id: load
             for load in (load_task(p) for p in discover_tasks([r for r in roots if r.exists()]))}
    chosen, missing = select_tasks(spec, sorted(loads))
    problems += missing
    tasks: dict[str, TaskInfo] = {}
    for task_id in chosen:
        load = loads[task_id]
        if load.task is None or not load.ok or load.missing:  # as a launch refuses it
            first = "; ".join(str(p) for p in (load.errors or load.missing)[:2])
            problems.append(Problem(spec.file, "campaign.tasks",
                                    f"task {task_id} does not validate: {first}"))
            continue
        tasks[task_id] = task_info(load)
    configs = spec.configs
    cells = tuple(
        PlannedCell(task_id=t, task_path=tasks[t].path, config=c.label, repeat=r)
        for t in tasks for c in configs for r in range(1, spec.repeats + 1)
    )
    if problems:  # nothing planned; the tasks that load are kept for further checks
        return Plan(tasks, configs, (), tuple(problems))
    return Plan(tasks, configs, cells, ())
