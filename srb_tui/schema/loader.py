"""Load a task directory: read every manifest, check it, and report every problem at once.

``load_task`` never raises for bad input: whatever is wrong ends up as a
:class:`~srb_tui.schema.problems.Problem` in the returned :class:`TaskLoad`.  With
``schema_only=True`` only the manifests are read (plus the stage-folder layout);
otherwise the files they refer to are looked for too (missing ones are reported
with ``kind="absent"``), State A's digest is verified and the artifact excludes
are checked against State A's file list.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from srb_tui.grader.manifests.probe import parse_probe
from srb_tui.grader.manifests.suite import parse_scan, parse_suite
from srb_tui.schema import disk
from srb_tui.schema.evaluation_toml import ParsedEvaluation, parse_evaluation
from srb_tui.schema.links import leaving_links
from srb_tui.schema.models import Evaluation, Probe, Scan, Suite, Task, TaskManifest
from srb_tui.schema.problems import Problem
from srb_tui.schema.reader import Source, fmt_number, is_inside, too_large
from srb_tui.schema.task_toml import parse_task_manifest

TASK_FILE = "task.toml"
EVALUATION_FILE = "tests/evaluation.toml"
_TOML_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


@dataclass(frozen=True)
class TaskLoad:
    """The outcome of loading one task directory."""

    path: Path
    task_id: str
    task: Task | None
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """No problem of kind ``error`` (absent files and warnings do not count)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind == "error")

    @property
    def absent(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind == "absent")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind == "warning")

    @property
    def missing(self) -> tuple[Problem, ...]:
        """Absent files a run needs (instruction.md, a module folder, run.py, a prompt):
        errors for ``srb tasks validate`` by default."""
        return tuple(p for p in self.absent if run_needs(p))

    @property
    def state_a_absent(self) -> tuple[Problem, ...]:
        """State A's archive or digest absent: a category of its own (``[srb.state_a]`` or
        a later copy supplies it); fails validation only with ``--strict``."""
        return tuple(p for p in self.absent if p.file in disk.STATE_A_FILES)


#: Absent files the published harness alone reads; srb's runs do without them.
PUBLISHED_ONLY = ("score.py",)


def run_needs(problem: Problem) -> bool:
    """Whether an absent file is one a run of the task needs."""
    if problem.kind != "absent" or problem.file in disk.STATE_A_FILES:
        return False
    return problem.file not in PUBLISHED_ONLY and not problem.file.endswith("/.dockerignore")


class _Missing:
    """Marker: the file is not there (the caller decides whether that matters)."""


_MISSING = _Missing()


def _read_toml(
    task_dir: Path, name: str, problems: list[Problem]
) -> tuple[Source, Mapping[str, object]] | _Missing | None:
    """A parsed manifest; ``_MISSING`` if there is no such file; ``None`` after a problem."""
    path = task_dir / name
    if not path.is_file():
        if path.exists():
            problems.append(Problem(name, "", "not a regular file"))
            return None
        return _MISSING
    if (large := too_large(path)) is not None:
        problems.append(Problem(name, "", large))
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(name, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
        return None
    except OSError as exc:
        problems.append(Problem(name, "", f"cannot read: {exc.strerror or exc}"))
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = _TOML_WHERE.search(message)
        line = None
        if where is not None:
            line = int(where.group(1))
            message = f"{message[: where.start()]} (column {where.group(2)})"
        problems.append(Problem(name, "", f"invalid TOML: {message}", line=line))
        return None
    return Source(name, text, problems), data


def _inside_tests(value: str | None, default: str) -> str:
    """``tests/<value>`` (``value`` is checked by the evaluation parser; a bad one
    falls back to the default location)."""
    chosen = value if value is not None and is_inside(value) else default
    return (PurePosixPath("tests") / chosen).as_posix()


def _task_id(path: Path) -> str:
    return Path(os.path.abspath(path)).name


def load_task(path: Path, *, schema_only: bool = False) -> TaskLoad:
    """Read and check the task directory at ``path``."""
    path = Path(path)
    task_id = _task_id(path)
    problems: list[Problem] = []
    if not path.is_dir():
        why = "does not exist" if not path.exists() else "is not a directory"
        problems.append(Problem(path.as_posix(), "", f"task folder {why}"))
        return TaskLoad(path, task_id, None, tuple(problems))
    leaving = leaving_links(path)
    if leaving:
        # Nothing of a task with a link out of it is read: the link could be any manifest.
        problems.extend(Problem(item.link, "", item.message) for item in leaving)
        return TaskLoad(path, task_id, None, tuple(problems))

    read = _read_toml(path, TASK_FILE, problems)
    if isinstance(read, _Missing):
        problems.append(Problem(TASK_FILE, "", "file is missing: a task directory holds task.toml"))
    if not isinstance(read, tuple):
        return TaskLoad(path, task_id, None, tuple(problems))
    task_source, task_data = read
    manifest, state_a = parse_task_manifest(task_source, task_data)

    evaluation: Evaluation | None = None
    parsed: ParsedEvaluation | None = None
    read = _read_toml(path, EVALUATION_FILE, problems)
    if isinstance(read, _Missing):
        problems.append(
            Problem(
                EVALUATION_FILE,
                "",
                "file is missing: every task needs its stages, scoring and gates",
            )
        )
    elif read is not None:
        parsed = parse_evaluation(read[0], read[1], task_id)
        evaluation = parsed.evaluation

    suite_file = probe_file = scan_file = None
    suite: Suite | None = None
    probe: Probe | None = None
    scan: Scan | None = None
    probe_source: Source | None = None
    if parsed is not None and evaluation is not None:
        behavioural = evaluation.behavioural
        suite_file = _inside_tests(behavioural.option_str("suite"), "behavioural/suite.toml")
        suite_source = _manifest(
            path, suite_file, "stages.behavioural.suite", behavioural.enabled, problems
        )
        if suite_source is not None:
            suite = parse_suite(suite_source[0], suite_source[1], task_id)

        verification = evaluation.verification
        if verification is not None:
            probe_file = _inside_tests(verification.option_str("probe"), "verification/probe.toml")
            probe_read = _manifest(
                path, probe_file, "stages.verification.probe", verification.enabled, problems
            )
            if probe_read is not None:
                probe_source = probe_read[0]
                probe = parse_probe(probe_read[0], probe_read[1], task_id)

        declared_scan = evaluation.audit.option_str("scan")
        scan_file = _inside_tests(declared_scan, "audit/scan.toml")
        scan_read = _read_toml(path, scan_file, problems)
        if isinstance(scan_read, tuple):
            scan = parse_scan(scan_read[0], scan_read[1], task_id)
        elif isinstance(scan_read, _Missing) and declared_scan is not None and not schema_only:
            problems.append(
                Problem(
                    scan_file,
                    "",
                    "file is absent (the scan named by tests/evaluation.toml [stages.audit.scan])",
                    kind="absent",
                )
            )

        _cross_checks(task_source, manifest, parsed, probe, probe_source)

    instruction = _read_instruction(path, problems)
    disk.check_layout(path, problems)
    if not schema_only:
        disk.check_referenced_files(
            path,
            evaluation=evaluation,
            suite=(suite_file, suite) if suite is not None and suite_file else None,
            scan=(scan_file, scan) if scan is not None and scan_file else None,
            probe=(probe_file, probe) if probe is not None and probe_file else None,
            problems=problems,
        )
        disk.check_state_a(path, manifest, state_a, task_source, problems)

    task = Task(
        dir=path,
        id=task_id,
        manifest=manifest,
        evaluation=evaluation,
        suite=suite,
        probe=probe,
        scan=scan,
        instruction=instruction,
        state_a=state_a,
    )
    return TaskLoad(path, task_id, task, _ordered(problems))


def _ordered(problems: list[Problem]) -> tuple[Problem, ...]:
    """Problems grouped by file (in the order files were read), by line within a file."""
    first_seen: dict[str, int] = {}
    for problem in problems:
        first_seen.setdefault(problem.file, len(first_seen))
    return tuple(
        sorted(problems, key=lambda p: (first_seen[p.file], p.line is not None, p.line or 0))
    )


def _manifest(
    task_dir: Path, name: str, named_by: str, enabled: bool, problems: list[Problem]
) -> tuple[Source, Mapping[str, object]] | None:
    """A stage manifest: required while its stage is enabled."""
    read = _read_toml(task_dir, name, problems)
    if isinstance(read, _Missing):
        if enabled:
            problems.append(
                Problem(name, "", f"file is missing (named by {EVALUATION_FILE} [{named_by}])")
            )
        return None
    return read


def _cross_checks(
    task_source: Source,
    manifest: TaskManifest,
    parsed: ParsedEvaluation,
    probe: Probe | None,
    probe_source: Source | None,
) -> None:
    """Checks that need two manifests at once (skipped where a value is a stand-in)."""
    evaluation = parsed.evaluation
    budget = manifest.verifier_timeout_sec
    if budget is not None and parsed.budget_known:
        stages = evaluation.enabled_stages
        total = evaluation.stage_budget_sec
        if budget < total:
            parts = " + ".join(fmt_number(s.timeout_sec) for s in stages)
            task_source.report(
                "verifier.timeout_sec",
                f"verifier timeout_sec ({fmt_number(budget)}) is less than the sum of the "
                f"enabled stages' timeout_sec ({parts} = {fmt_number(total)})",
            )
    verification = evaluation.verification
    if (
        probe is not None
        and probe_source is not None
        and parsed.scoring_known
        and verification is not None
        and verification.enabled
    ):
        models = evaluation.scoring.verification_models
        count = len(probe.adversaries)
        if count != models:
            probe_source.report(
                "adversary",
                f"{count} [[adversary]] rounds, but {EVALUATION_FILE} "
                f"scoring.verification_models is {models}",
            )


def _read_instruction(task_dir: Path, problems: list[Problem]) -> str | None:
    path = task_dir / "instruction.md"
    if not path.is_file():
        return None
    if (large := too_large(path)) is not None:
        problems.append(Problem("instruction.md", "", large))
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem("instruction.md", "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        )
    except OSError as exc:
        problems.append(Problem("instruction.md", "", f"cannot read: {exc.strerror or exc}"))
    return None


def discover_tasks(roots: Sequence[Path]) -> list[Path]:
    """Task directories under ``roots``.

    A root that holds ``task.toml`` is a task; otherwise each of its immediate
    subdirectories that holds one is.  Sorted, without duplicates.
    """
    found: dict[str, Path] = {}
    for root in roots:
        root = Path(root)
        if (root / TASK_FILE).is_file():
            candidates = [root]
        elif root.is_dir():
            candidates = [c for c in root.iterdir() if c.is_dir() and (c / TASK_FILE).is_file()]
        else:
            candidates = []
        for candidate in candidates:
            found.setdefault(os.path.realpath(candidate), candidate)
    return sorted(found.values())


def validate_paths(paths: Sequence[Path], *, schema_only: bool) -> list[TaskLoad]:
    """Load every task found under ``paths`` (for ``srb validate``).

    A path under which no task is found yields a :class:`TaskLoad` with one error
    saying so, so that a typo on the command line is not a silent success.
    """
    loads: list[TaskLoad] = []
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        tasks = discover_tasks([path])
        if not tasks:
            why = (
                "does not exist"
                if not path.exists()
                else "holds no task.toml (nor do its subfolders)"
            )
            loads.append(
                TaskLoad(
                    path,
                    _task_id(path),
                    None,
                    (Problem(path.as_posix(), "", f"no task here: {why}"),),
                )
            )
            continue
        for task_dir in tasks:
            key = os.path.realpath(task_dir)
            if key not in seen:
                seen.add(key)
                loads.append(load_task(task_dir, schema_only=schema_only))
    return loads
