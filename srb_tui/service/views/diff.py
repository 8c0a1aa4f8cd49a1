"""Compare two trees (State A and a submission) file by file, cheaply.

``compare_trees`` lists both trees (one ``scandir`` walk each: name, kind and size), then
decides each file present on both sides: different sizes ⇒ changed without reading; equal
sizes ⇒ the bytes are compared (reading stops at the first difference). Nothing is diffed
here; per-file diffs (``diff_files``) and line counts (``diff_stats``) are computed later,
only for what is looked at. ``trees_for_run`` finds the two trees of a stored run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from srb_tui.config import Settings
from srb_tui.schema import load_task
from srb_tui.service.views.safe_read import display_name, open_regular
from srb_tui.sources import StateAError, prepare_state_a
from srb_tui.store import RunRecord, Store, StoreError

FileStatus = Literal["added", "removed", "changed", "same"]
STATUSES: tuple[FileStatus, ...] = ("changed", "added", "removed", "same")
SKIPPED_NAMES = frozenset({".git", "__pycache__"})
COMPARE_CHUNK = 1 << 16


class DiffSourceError(Exception):
    """The trees to compare could not be found or prepared (message names run / path)."""


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One path of the union of both trees (``/``-separated, relative)."""

    path: str
    status: FileStatus
    size_a: int | None
    size_b: int | None

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def shown(self) -> str:
        """The path as the screens show it: control characters visibly escaped."""
        return display_name(self.path)


@dataclass(frozen=True)
class TreeComparison:
    """Both roots and every file of either, sorted by path."""

    left: Path
    right: Path
    entries: tuple[FileEntry, ...]

    def count(self, status: FileStatus) -> int:
        return sum(1 for entry in self.entries if entry.status == status)

    def differing(self) -> list[FileEntry]:
        """Entries that are added, removed or changed."""
        return [entry for entry in self.entries if entry.status != "same"]

    def get(self, path: str) -> FileEntry | None:
        for entry in self.entries:
            if entry.path == path:
                return entry
        return None

    def summary(self) -> str:
        """``3 changed · 7 added · 6 removed · 12 same``."""
        return " · ".join(f"{self.count(status)} {status}" for status in STATUSES)


# (size, is_link) for every regular file or symlink, by relative path.
Listing = dict[str, tuple[int, bool]]


def list_tree(root: Path, skip: Iterable[str] = SKIPPED_NAMES) -> Listing:
    """Every regular file and symlink under ``root`` (folders in ``skip`` left out)."""
    skipped = frozenset(skip)
    found: Listing = {}
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name in skipped:
                    continue
                rel = prefix + entry.name
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append((entry.path, rel + "/"))
                elif stat.S_ISREG(st.st_mode):
                    found[rel] = (st.st_size, False)
                elif stat.S_ISLNK(st.st_mode):
                    found[rel] = (st.st_size, True)
    return found


def same_content(a: str | Path, b: str | Path, *, links: bool = False) -> bool:
    """Whether two files (or two symlinks, by target) hold the same bytes."""
    if links:
        try:
            return os.readlink(a) == os.readlink(b)
        except OSError:
            return False
    try:  # O_NOFOLLOW | O_NONBLOCK, regular files only: a swapped-in FIFO cannot block
        with open(open_regular(a), "rb") as fa, open(open_regular(b), "rb") as fb:
            while True:
                block_a = fa.read(COMPARE_CHUNK)
                if block_a != fb.read(COMPARE_CHUNK):
                    return False
                if not block_a:
                    return True
    except OSError:
        return False


def compare_trees(left: Path, right: Path) -> TreeComparison:
    """Classify every file of ``left`` (State A) and ``right`` (submission)."""
    for label, root in (("left", left), ("right", right)):
        if not root.is_dir():
            raise DiffSourceError(f"{label} tree {root} is not a folder")
    a, b = list_tree(left), list_tree(right)
    entries: list[FileEntry] = []
    to_read: list[str] = []
    for path in a.keys() | b.keys():
        info_a, info_b = a.get(path), b.get(path)
        if info_b is None:
            assert info_a is not None
            entries.append(FileEntry(path, "removed", info_a[0], None))
        elif info_a is None:
            entries.append(FileEntry(path, "added", None, info_b[0]))
        elif info_a != info_b:
            entries.append(FileEntry(path, "changed", info_a[0], info_b[0]))
        else:
            to_read.append(path)

    left_prefix, right_prefix = str(left) + os.sep, str(right) + os.sep

    def check(path: str) -> FileEntry:
        size, link = a[path]
        same = same_content(left_prefix + path, right_prefix + path, links=link)
        return FileEntry(path, "same" if same else "changed", size, b[path][0])

    # One thread is faster than a pool here: the reads are page-cache copies and a pool's
    # hand-offs cost more than they overlap (measured by bench/bench_diff.py).
    entries.extend(check(path) for path in to_read)
    entries.sort(key=lambda entry: entry.path)
    return TreeComparison(left, right, tuple(entries))


# --------------------------------------------------------------------------- run trees


def task_dir_of(settings: Settings, run: RunRecord) -> Path:
    """The task folder of a run: its recorded path, else the task id under the roots."""
    path = Path(run.task_path)
    if (path / "task.toml").is_file():
        return path
    from srb_tui.service.catalog import load_catalog

    load = load_catalog(settings.task_roots).find(run.task_id)
    if load is None:
        raise DiffSourceError(
            f"run {run.id}: its task {run.task_id!r} is neither at {run.task_path} nor under "
            + ", ".join(str(root) for root in settings.task_roots)
        )
    return load.path


def state_a_tree(settings: Settings, run: RunRecord) -> Path:
    """The run's State A tree, prepared (verified, cached) if needed. Blocking."""
    task_dir = task_dir_of(settings, run)
    load = load_task(task_dir)
    if load.task is None:
        raise DiffSourceError(f"run {run.id}: task {task_dir} cannot be read")
    try:
        prepared = prepare_state_a(
            task_dir, load.task.state_a, settings.state_a_cache, offline=True
        )
    except StateAError as exc:
        raise DiffSourceError(f"run {run.id}: State A not available: {exc}") from exc
    return prepared.tree


def submission_tree(settings: Settings, run_id: str) -> Path:
    return settings.submission_dir(run_id)


async def trees_for_run(settings: Settings, run_id: str,
                        store: Store | None = None) -> tuple[Path, Path]:
    """(State A tree, submission tree) of a stored run; DiffSourceError says what is missing.

    ``store`` is the caller's open store (the console's: one store per process per file);
    without one, the store is opened for the read (sharing this loop's if one is open)."""
    import asyncio

    if store is None and not settings.db_path.exists():
        raise DiffSourceError(f"run {run_id}: no store at {settings.db_path}")
    try:
        if store is not None:
            run = await store.runs.get_run(run_id)
        else:
            async with await Store.open(settings.db_path) as opened:
                run = await opened.runs.get_run(run_id)
    except StoreError as exc:
        raise DiffSourceError(str(exc)) from exc
    if run is None:
        raise DiffSourceError(f"run {run_id}: no such run in {settings.db_path}")
    submission = submission_tree(settings, run_id)
    if not submission.is_dir():
        raise DiffSourceError(
            f"run {run_id}: no submission collected yet (expected {submission}); "
            f"the run is {run.status}"
        )
    state_a = await asyncio.to_thread(state_a_tree, settings, run)
    return state_a, submission
