"""Stage II's suite manifest: a behavioural suite's (or audit scan's) ``suite.toml``, read and
lightly validated inside the stage container (the host validates fully with the schema's own
models, which are not shipped here). :func:`load_suite` gives a :class:`SuiteManifest` of
:class:`SuiteModule` entries resolved against the suite folder, or a :class:`SuiteError` that
lists every problem found.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .contract import DEFAULT_MODULE_TIMEOUT_SEC as DEFAULT_TIMEOUT_SEC
from .contract import SCAN_SCHEMA, SUITE_SCHEMA

_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SuiteError(Exception):
    """A suite.toml the runner cannot use; carries every problem found."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


@dataclass(frozen=True)
class SuiteModule:
    """One `[[module]]` entry, resolved against the suite folder."""

    id: str
    title: str
    weight: float
    dir: Path
    command: tuple[str, ...] | None
    timeout_sec: float
    env: dict[str, str]


@dataclass(frozen=True)
class SuiteManifest:
    """A loaded suite.toml (light validation; the host validates fully)."""

    path: Path
    root: Path
    task: str
    env: dict[str, str]
    modules: tuple[SuiteModule, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    lib_dir: str = "lib"


def is_number(value: object) -> bool:
    """A TOML/JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _env_table(value: object, where: str, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where} must be a table of strings")
        return {}
    env: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, str):
            env[str(key)] = item
        elif is_number(item):
            env[str(key)] = str(item)
        else:
            problems.append(f"{where}.{key} must be a string")
    return env


def load_suite(path: str | os.PathLike[str], *, scan: bool = False) -> SuiteManifest:
    """Read and lightly validate a suite.toml (with ``scan``: an audit scan.toml, whose
    modules also get ``SRB_SCAN=1``); raises SuiteError listing every problem."""
    suite_path = Path(path)
    if suite_path.is_dir():
        suite_path = suite_path / "suite.toml"
    try:
        data = tomllib.loads(suite_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(suite_path, ["file not found"]) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(suite_path, [f"cannot read: {exc}"]) from None
    root = suite_path.resolve().parent
    problems: list[str] = []
    wanted = SCAN_SCHEMA if scan else SUITE_SCHEMA
    if data.get("schema") != wanted:
        problems.append(f"schema must be {wanted!r}, found {data.get('schema')!r}")
    task = data.get("task", "")
    if not isinstance(task, str):
        problems.append("task must be a string")
        task = ""
    default_timeout = data.get("default_timeout_sec", DEFAULT_TIMEOUT_SEC)
    if not is_number(default_timeout) or default_timeout <= 0:
        problems.append("default_timeout_sec must be a number > 0")
        default_timeout = DEFAULT_TIMEOUT_SEC
    env = _env_table(data.get("env"), "env", problems)
    if scan:
        env["SRB_SCAN"] = "1"
    raw_modules = data.get("module")
    if not isinstance(raw_modules, list) or not raw_modules:
        problems.append("at least one [[module]] is required")
        raw_modules = []
    modules: list[SuiteModule] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_modules):
        where = f"module[{index}]"
        if not isinstance(raw, dict):
            problems.append(f"{where} must be a table")
            continue
        module_id = raw.get("id")
        if not isinstance(module_id, str) or not _TOKEN.match(module_id):
            problems.append(f"{where}.id must be a token (letters, digits, . _ -)")
            continue
        where = f"module {module_id!r}"
        if module_id in seen:
            problems.append(f"{where}: duplicate id")
            continue
        seen.add(module_id)
        title = raw.get("title", module_id)
        weight = raw.get("weight", 1.0)
        if not is_number(weight) or not math.isfinite(weight) or weight < 0:
            problems.append(f"{where}: weight must be a number >= 0")
            weight = 0.0
        command = raw.get("command")
        if command is not None and (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            problems.append(f"{where}: command must be a non-empty list of strings")
            command = None
        rel_dir = raw.get("dir", f"modules/{module_id}")
        if not isinstance(rel_dir, str) or not rel_dir:
            problems.append(f"{where}: dir must be a string")
            rel_dir = f"modules/{module_id}"
        module_dir = (root / rel_dir).resolve()
        if module_dir != root and root not in module_dir.parents:
            problems.append(f"{where}: dir {rel_dir!r} leaves the suite folder")
        timeout = raw.get("timeout_sec", default_timeout)
        if not is_number(timeout) or timeout <= 0:
            problems.append(f"{where}: timeout_sec must be a number > 0")
            timeout = default_timeout
        modules.append(
            SuiteModule(
                id=module_id,
                title=str(title),
                weight=float(weight),
                dir=module_dir,
                command=tuple(command) if command else None,
                timeout_sec=float(timeout),
                env=_env_table(raw.get("env"), f"{where}.env", problems),
            )
        )
    if problems:
        raise SuiteError(suite_path, problems)
    metadata = data.get("metadata")
    lib_dir = data.get("lib_dir", "lib")
    return SuiteManifest(
        path=suite_path,
        root=root,
        task=task,
        env=env,
        modules=tuple(modules),
        metadata=metadata if isinstance(metadata, dict) else {},
        lib_dir=lib_dir if isinstance(lib_dir, str) and lib_dir else "lib",
    )
