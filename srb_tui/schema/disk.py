"""Checks of a task directory against the disk, beyond what its manifests say.

* files the manifests refer to and that are not there (``kind="absent"``);
* the stage-folder layout rule (only ``lib/``, ``modules/``, ``data/``);
* ``original.sha256`` against ``original.tar.gz``;
* ``[[artifacts]]`` excludes that would drop a file State A ships.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from srb_tui.schema.archive_facts import archive_files, file_sha256
from srb_tui.schema.excludes import excluded_files
from srb_tui.schema.models import (
    STAGE_NAMES,
    Evaluation,
    Module,
    Probe,
    Scan,
    Suite,
    TaskManifest,
)
from srb_tui.schema.problems import Problem
from srb_tui.schema.reader import Source, is_inside, too_large
from srb_tui.schema.state_a import StateASource

STAGE_DIRS = STAGE_NAMES
STAGE_SUBFOLDERS = ("lib", "modules", "data")
SCRIPT_SUFFIXES = (".sh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".bash")
ARCHIVE = "environment/original.tar.gz"
SHA_FILE = "environment/original.sha256"
#: Where some official tasks keep their digest instead (beside a copy of the archive).
SHA_FALLBACKS = (
    "tests/behavioural/data/original.sha256",
    "tests/verification/data/original.sha256",
)
#: State A's archive and its digest, wherever a task keeps them.
STATE_A_FILES = frozenset({ARCHIVE, SHA_FILE, *SHA_FALLBACKS})
_SHA_LINE = re.compile(r"([0-9a-fA-F]{64})(?:\s+\*?(\S.*))?")


def rel(task_dir: Path, path: Path) -> str:
    """``path`` relative to the task directory, with ``/`` separators."""
    try:
        return path.relative_to(task_dir).as_posix()
    except ValueError:
        return path.as_posix()


def _absent(problems: list[Problem], name: str, why: str, *, folder: bool = False) -> None:
    what = "folder" if folder else "file"
    problems.append(Problem(name, "", f"{what} is absent ({why})", kind="absent"))


def check_layout(task_dir: Path, problems: list[Problem]) -> None:
    """Inside a stage folder the only subfolders are lib/, modules/ and data/."""
    for stage in STAGE_DIRS:
        folder = task_dir / "tests" / stage
        if not folder.is_dir():
            continue
        for child in sorted(folder.iterdir()):
            if child.is_dir() and child.name not in STAGE_SUBFOLDERS:
                problems.append(
                    Problem(
                        rel(task_dir, child),
                        "",
                        "unexpected folder: a stage folder may hold only lib/, modules/ and data/",
                    )
                )


def _script_path(arg: str, base: Path, task_dir: Path) -> Path | None:
    """The file an argv element names, if it looks like a script path we can check."""
    if not arg or arg.startswith("-"):
        return None
    if arg.startswith("/tests/"):
        return task_dir / arg.lstrip("/")
    if arg.startswith("/"):
        return None
    if "/" in arg or arg.endswith(SCRIPT_SUFFIXES):
        return base / arg
    return None


def _check_command(
    command: Sequence[str], base: Path, task_dir: Path, owner: str, problems: list[Problem]
) -> None:
    for arg in command:
        path = _script_path(arg, base, task_dir)
        if path is not None and not path.exists():
            _absent(problems, rel(task_dir, path), f"named by {owner}")


def _check_modules(
    task_dir: Path,
    manifest_file: str,
    modules: Sequence[Module],
    lib_dir: str,
    problems: list[Problem],
) -> None:
    base = (task_dir / manifest_file).parent
    if not (base / lib_dir).is_dir():
        _absent(problems, rel(task_dir, base / lib_dir), f"lib_dir of {manifest_file}", folder=True)
    for module in modules:
        folder = base / module.dir
        owner = f"module `{module.id}` of {manifest_file}"
        if not folder.is_dir():
            _absent(problems, rel(task_dir, folder), owner, folder=True)
            continue
        if module.command is None:
            if not (folder / "run.sh").is_file() and not (folder / "run.py").is_file():
                _absent(
                    problems,
                    rel(task_dir, folder / "run.sh"),
                    f"{owner} declares no command, so it needs run.sh or run.py",
                )
        else:
            _check_command(module.command, folder, task_dir, f"the command of {owner}", problems)


def check_referenced_files(
    task_dir: Path,
    *,
    evaluation: Evaluation | None,
    suite: tuple[str, Suite] | None,
    scan: tuple[str, Scan] | None,
    probe: tuple[str, Probe] | None,
    problems: list[Problem],
) -> None:
    """Report every file or folder the task refers to that is not on disk."""
    if not (task_dir / "instruction.md").is_file():
        _absent(problems, "instruction.md", "what the agent is told")
    if not (task_dir / "environment" / "Dockerfile").is_file():
        _absent(problems, "environment/Dockerfile", "the agent image's build file")
    if evaluation is not None:
        for stage in evaluation.enabled_stages:
            context = stage.option_str("context") or stage.name
            if not is_inside(context):
                continue
            dockerfile = task_dir / "tests" / context / "Dockerfile"
            if not dockerfile.is_file():
                _absent(
                    problems,
                    rel(task_dir, dockerfile),
                    f"the build file of the {stage.name} stage's image",
                )
        if evaluation.audit.enabled:
            prompt = evaluation.audit.option_str("prompt") or "audit/prompt.txt"
            if is_inside(prompt) and not (task_dir / "tests" / prompt).is_file():
                _absent(
                    problems, f"tests/{prompt}", "the audit prompt named by tests/evaluation.toml"
                )
    if suite is not None:
        _check_modules(task_dir, suite[0], suite[1].modules, suite[1].lib_dir, problems)
    if scan is not None:
        _check_modules(task_dir, scan[0], scan[1].modules, scan[1].lib_dir, problems)
    if probe is not None:
        file, model = probe
        base = (task_dir / file).parent
        # Official probes name the prompt relative to their own folder ("prompt.txt");
        # a path relative to tests/ ("verification/prompt.txt") is accepted as well.
        candidates = (base / model.prompt, task_dir / "tests" / model.prompt)
        if is_inside(model.prompt) and not any(c.is_file() for c in candidates):
            _absent(problems, rel(task_dir, base / model.prompt), f"the prompt named by {file}")
        _check_command(
            model.candidate_command, base, task_dir, f"candidate_command of {file}", problems
        )


def _read_sha_file(task_dir: Path, name: str, problems: list[Problem]) -> str | None:
    if (large := too_large(task_dir / name, 4096)) is not None:
        problems.append(Problem(name, "", large))
        return None
    try:
        text = (task_dir / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(name, "", f"cannot read: {exc}"))
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    match = _SHA_LINE.fullmatch(lines[0]) if len(lines) == 1 else None
    if match is None:
        problems.append(
            Problem(name, "", "expected one line `<64 hex digits>  original.tar.gz`", line=1)
        )
        return None
    return match.group(1).lower()


def check_state_a(
    task_dir: Path,
    manifest: TaskManifest,
    state_a: StateASource | None,
    task_source: Source,
    problems: list[Problem],
) -> None:
    """State A's archive and digest are present and agree; excludes spare its files."""
    archive = task_dir / ARCHIVE
    needs_archive = state_a is None or state_a.kind == "archive"
    if needs_archive and not archive.is_file():
        _absent(problems, ARCHIVE, "State A, unless task.toml declares [srb.state_a]")
    if state_a is None:
        sha_name = next((n for n in (SHA_FILE, *SHA_FALLBACKS) if (task_dir / n).is_file()), None)
        if sha_name is None:
            _absent(problems, SHA_FILE, "the sha256 of State A's archive")
        else:
            beside = (task_dir / sha_name).parent / "original.tar.gz"
            target = beside if beside.is_file() else archive
            expected = _read_sha_file(task_dir, sha_name, problems)
            if expected is not None and target.is_file():
                actual = file_sha256(target)
                if actual != expected:
                    problems.append(
                        Problem(
                            sha_name,
                            "",
                            f"{rel(task_dir, target)} has sha256 {actual}, not {expected}",
                            line=1,
                        )
                    )
    elif state_a.kind == "archive" and archive.is_file():
        actual = file_sha256(archive)
        if actual != state_a.sha256:
            task_source.report(
                "srb.state_a.sha256", f"{ARCHIVE} has sha256 {actual}, not {state_a.sha256}"
            )
    if archive.is_file():
        check_excludes(task_dir, manifest, task_source, problems)


def check_excludes(
    task_dir: Path, manifest: TaskManifest, task_source: Source, problems: list[Problem]
) -> None:
    """An exclude that matches a file State A ships is a scoring bug."""
    patterns = [p for artifact in manifest.artifacts for p in artifact.exclude]
    if not patterns:
        return
    try:
        files = archive_files(task_dir / ARCHIVE)
    except OSError as exc:
        problems.append(Problem(ARCHIVE, "", f"cannot list the archive: {exc}"))
        return
    for index, artifact in enumerate(manifest.artifacts):
        hits = excluded_files(artifact.exclude, files)
        for position, pattern in enumerate(artifact.exclude):
            dropped = hits.get(pattern)
            if not dropped:
                continue
            count = len(dropped)
            noun = "file" if count == 1 else "files"
            task_source.report(
                f"artifacts[{index}].exclude[{position}]",
                f"exclude `{pattern}` drops {count} {noun} State A ships "
                f"(e.g. `{PurePosixPath(dropped[0])}`); the grader would never see them",
            )
