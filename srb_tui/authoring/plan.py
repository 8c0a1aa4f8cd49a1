"""What ``srb tasks new`` was asked for, checked before anything is written.

:func:`make_plan` turns the command line into a :class:`Plan` or raises
:class:`AuthoringError` with the kind of refusal (``exists``, ``not_found``, ``usage``),
which the command maps to its exit code. Nothing touches the disk here but reads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from srb_tui.authoring.cases import Case, CaseError, parse_cases, read_cases_file
from srb_tui.authoring.languages import Language, UnknownLanguage, find_language

ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
SKIPPED = {".git", "__pycache__", ".hg", ".svn"}
MAX_STATE_A_FILES = 5000


class AuthoringError(Exception):
    """A refusal: ``kind`` is ``exists``, ``not_found`` or ``usage``."""

    def __init__(self, message: str, kind: str = "usage") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Plan:
    """A checked request for a new task: everything the scaffold writes from."""

    task_id: str
    task_dir: Path
    source_dir: Path
    files: tuple[str, ...]
    """State A's files (relative, sorted), without version-control folders and caches"""
    lang_from: Language
    lang_to: Language
    entry: str
    cases: tuple[Case, ...]
    inputs_dir: Path | None
    inputs: tuple[str, ...]
    """``inputs/NAME`` for every file of ``inputs_dir``"""
    title: str


def state_a_files(folder: Path) -> list[str]:
    """State A's files under ``folder``; a symbolic link is refused (State A is plain
    files), version-control folders and ``__pycache__`` are left out."""
    found: list[str] = []
    for current, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        here = Path(current)
        for name in [*dirs, *names]:
            if (here / name).is_symlink():
                rel = (here / name).relative_to(folder).as_posix()
                raise AuthoringError(f"--from-dir {folder}: {rel} is a symbolic link; "
                                     "State A must be plain files")
        found += [(here / n).relative_to(folder).as_posix() for n in names
                  if not n.endswith(".pyc")]
        if len(found) > MAX_STATE_A_FILES:
            raise AuthoringError(f"--from-dir {folder}: more than {MAX_STATE_A_FILES} files; "
                                 "is this the right folder?")
    return sorted(found)


def _entry(folder: Path, files: list[str], given: str | None, lang: Language) -> str:
    if given is None:
        under_bin = [f for f in files if f.startswith("bin/") and f.count("/") == 1]
        if len(under_bin) != 1:
            found = ", ".join(under_bin) or "no file under bin/"
            raise AuthoringError(f"--from-dir {folder}: cannot tell the entry point ({found}); "
                                 "pass --entry PATH (the program, relative to the folder)")
        given = under_bin[0]
    entry = Path(given.strip()).as_posix().removeprefix("./")
    if entry not in files:
        raise AuthoringError(f"--entry {given}: no such file in {folder}", "not_found")
    path = folder / entry
    if not os.access(path, os.X_OK):
        raise AuthoringError(f"--entry {entry}: not executable; run chmod +x {path}")
    with open(path, "rb") as handle:
        first = handle.readline(200).decode("utf-8", "replace").strip()
    names = "|".join(re.escape(n) for n in lang.interpreters)
    if not (first.startswith("#!") and re.search(rf"\b({names})", first)):
        raise AuthoringError(
            f"--entry {entry}: its first line must be a #! line naming "
            f"{' or '.join(lang.interpreters)} (e.g. {lang.shebang}); it is {first[:60]!r}. "
            "That line is how the suite recognises State A's program")
    return entry


def _inputs(inputs_dir: Path | None) -> tuple[str, ...]:
    if inputs_dir is None:
        return ()
    if not inputs_dir.is_dir():
        kind = "usage" if inputs_dir.exists() else "not_found"
        raise AuthoringError(f"--inputs {inputs_dir}: not a folder", kind)
    return tuple(sorted(f"inputs/{rel}" for rel in state_a_files(inputs_dir)))


def make_plan(
    task_id: str, source_dir: Path, tasks_root: Path, lang_from: str, lang_to: str, *,
    entry: str | None = None, case_lines: list[str] | None = None,
    cases_file: Path | None = None, inputs_dir: Path | None = None, title: str | None = None,
) -> Plan:
    """Check everything ``srb tasks new`` was given; the first problem is raised."""
    if not ID_RE.match(task_id):
        raise AuthoringError(f"task id {task_id!r}: use 2-64 characters of a-z, 0-9, '.', "
                             "'_' and '-', starting with a letter or digit")
    try:
        source, target = find_language(lang_from), find_language(lang_to)
    except UnknownLanguage as exc:
        raise AuthoringError(str(exc)) from None
    if source.key == target.key:
        raise AuthoringError(f"--lang-from and --lang-to are both {source.key}: a task ports "
                             "a program from one language to another")
    task_dir = tasks_root / task_id
    if task_dir.exists():
        raise AuthoringError(f"{task_dir} already exists: choose another ID or remove it",
                             "exists")
    if not source_dir.exists():
        raise AuthoringError(f"--from-dir {source_dir}: no such folder", "not_found")
    if not source_dir.is_dir():
        raise AuthoringError(f"--from-dir {source_dir}: not a folder")
    files = state_a_files(source_dir)
    if not files:
        raise AuthoringError(f"--from-dir {source_dir}: the folder has no files (State A is "
                             "the program to port)")
    if cases_file is not None and not cases_file.is_file():
        raise AuthoringError(f"--cases-file {cases_file}: no such file", "not_found")
    inputs = _inputs(inputs_dir)
    lines = [*(case_lines or []), *(read_cases_file(cases_file) if cases_file else [])]
    if not lines:
        raise AuthoringError("no cases: give at least one --case \"ARGS\" or --cases-file "
                             "FILE (the command lines the behavioural suite runs)")
    try:
        cases = parse_cases(lines, set(inputs))
    except CaseError as exc:
        raise AuthoringError(str(exc)) from None
    chosen = _entry(source_dir, files, entry, source)
    return Plan(
        task_id=task_id, task_dir=task_dir, source_dir=source_dir, files=tuple(files),
        lang_from=source, lang_to=target, entry=chosen, cases=tuple(cases),
        inputs_dir=inputs_dir, inputs=inputs,
        title=title or f"{task_id}: port {chosen} from {source.title} to {target.title}",
    )
