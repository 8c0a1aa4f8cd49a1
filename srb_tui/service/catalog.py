"""The task catalogue: every task directory under the configured roots, loaded and summarised.

The console and the headless CLI both read tasks through this module, so what the
Tasks screen shows and what ``srb tasks list`` prints come from the same place.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srb_tui.schema import TaskLoad, discover_tasks, load_task
from srb_tui.schema.loader import TASK_FILE


@dataclass(frozen=True)
class TaskSummary:
    """One row of the task table."""

    task_id: str
    path: Path
    category: str
    state_a: str
    state_b: str
    budget_sec: float | None
    gates: int
    modules: int
    adversaries: int
    errors: int
    absent: int
    title: str

    @property
    def stacks(self) -> str:
        """``python → node`` from an id like ``lang03-sqlparse-python-to-go``, else the
        heads of the State A / State B descriptions."""
        if "-to-" in self.task_id:
            left, right = self.task_id.split("-to-", 1)
            return f"{left.rsplit('-', 1)[-1]} → {right.split('-', 1)[0]}"
        a = self.state_a.split(":")[0].strip()
        b = self.state_b.split(":")[0].strip()
        text = f"{a} → {b}" if a or b else "—"
        return text if len(text) <= 32 else text[:31] + "…"

    @property
    def status(self) -> str:
        if self.errors:
            return "invalid"
        if self.absent:
            return "incomplete"
        return "ok"

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.task_id,
            "path": str(self.path),
            "category": self.category,
            "state_a": self.state_a,
            "state_b": self.state_b,
            "stacks": self.stacks,
            "budget_sec": self.budget_sec,
            "gates": self.gates,
            "modules": self.modules,
            "adversaries": self.adversaries,
            "status": self.status,
            "errors": self.errors,
            "absent": self.absent,
            "title": self.title,
        }


def summarise(load: TaskLoad) -> TaskSummary:
    """Reduce a loaded task to the numbers and strings a table shows."""
    task = load.task
    errors = sum(1 for p in load.problems if p.kind == "error")
    absent = sum(1 for p in load.problems if p.kind == "absent")
    if task is None:
        return TaskSummary(
            task_id=load.task_id, path=load.path, category="?", state_a="", state_b="",
            budget_sec=None, gates=0, modules=0, adversaries=0, errors=errors, absent=absent,
            title="",
        )
    return TaskSummary(
        task_id=load.task_id,
        path=load.path,
        category=task.category or "",
        state_a=task.state_a_description or "",
        state_b=task.state_b_description or "",
        budget_sec=task.budget_sec,
        gates=task.gate_count,
        modules=task.module_count,
        adversaries=task.adversary_count,
        errors=errors,
        absent=absent,
        title=task.title or "",
    )


@dataclass(frozen=True)
class DuplicateTask:
    """One task id held by more than one task root: the first root's copy is used."""

    task_id: str
    used: Path
    ignored: tuple[Path, ...]

    @property
    def message(self) -> str:
        others = ", ".join(str(p) for p in self.ignored)
        return (
            f"task id {self.task_id!r} is in more than one task root: using {self.used}, "
            f"ignoring {others} (the first --tasks root wins; rename one to use both)"
        )


@dataclass(frozen=True)
class Catalog:
    """All tasks found under the roots, in discovery order, one per task id.

    ``duplicates`` names every id that a later root also held (that copy is left out);
    ``warnings`` are their messages, for the console and ``srb tasks`` to show."""

    loads: tuple[TaskLoad, ...]
    duplicates: tuple[DuplicateTask, ...] = ()

    @property
    def warnings(self) -> list[str]:
        return [d.message for d in self.duplicates]

    def summaries(self) -> list[TaskSummary]:
        return [summarise(load) for load in self.loads]

    def find(self, task_id: str) -> TaskLoad | None:
        for load in self.loads:
            if load.task_id == task_id or str(load.path) == task_id:
                return load
        return None

    def ids(self) -> list[str]:
        return [load.task_id for load in self.loads]


def task_hint(roots: Sequence[Path], ref: str) -> str:
    """`` (did you mean 'ID'?)`` for a task reference no task answers to: the one id it
    begins (``demo01``), else the id it most plausibly misspells; empty when none is near.
    Read on the error path only (it lists every task of the roots)."""
    from srb_tui.schema.suggest import suggest

    ids = sorted({i for i in load_catalog(roots).ids() if i})
    starting = [i for i in ids if ref and i.startswith(ref)]
    near = starting[0] if len(starting) == 1 else suggest(ref, ids, cutoff=0.6)
    return f" (did you mean {near!r}?)" if near else ""


def find_task(roots: Sequence[Path], task_id: str) -> TaskLoad | None:
    """What ``load_catalog(roots).find(task_id)`` returns, loading only that task.

    A task's id is its directory's name, so the task is the first (in discovery order)
    of the directories of that name that discovery would find: a root that is that task,
    or that subdirectory of a root that is not a task itself."""
    if not task_id or "/" in task_id or task_id in (".", ".."):
        return load_catalog(roots).find(task_id)
    found: dict[str, Path] = {}
    for root in roots:
        if (root / TASK_FILE).is_file():
            candidates = [root] if Path(os.path.abspath(root)).name == task_id else []
        else:
            candidates = [root / task_id] if (root / task_id / TASK_FILE).is_file() else []
        for candidate in candidates:
            found.setdefault(os.path.realpath(candidate), candidate)
    if not found:
        return load_catalog(roots).find(task_id)
    return load_task(next(iter(found.values())))


def task_dirs(roots: Sequence[Path]) -> tuple[list[Path], tuple[DuplicateTask, ...]]:
    """The task directories under ``roots`` (sorted), one per task id, and the ids held
    by more than one root: the copy in the first root given wins."""
    chosen: dict[str, Path] = {}
    ignored: dict[str, list[Path]] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in discover_tasks([root]):
            task_id = Path(os.path.abspath(path)).name
            if task_id not in chosen:
                chosen[task_id] = path
            elif os.path.realpath(chosen[task_id]) != os.path.realpath(path):
                ignored.setdefault(task_id, []).append(path)
    duplicates = tuple(
        DuplicateTask(task_id, chosen[task_id], tuple(paths))
        for task_id, paths in sorted(ignored.items())
    )
    return sorted(chosen.values()), duplicates


def load_catalog(roots: Sequence[Path], *, schema_only: bool = False) -> Catalog:
    """Discover and load every task under ``roots`` (one per id; see :func:`task_dirs`)."""
    paths, duplicates = task_dirs(roots)
    return Catalog(tuple(load_task(p, schema_only=schema_only) for p in paths), duplicates)
