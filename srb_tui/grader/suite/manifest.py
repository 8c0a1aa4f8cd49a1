"""Stage II's suite manifest: a behavioural suite's (or audit scan's) ``suite.toml``, read
inside the stage container by the same rules the host's task loader uses
(:mod:`.manifests.suite`). :func:`load_suite` gives a :class:`SuiteManifest` of
:class:`SuiteModule` entries resolved against the suite folder, or a :class:`SuiteError` that
lists every problem found.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contract import DEFAULT_LIB_DIR
from ..manifests.suite import parse_scan, parse_suite
from ..manifests.table import Collected


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
    """A loaded suite.toml, its modules' folders resolved."""

    path: Path
    root: Path
    task: str
    env: dict[str, str]
    modules: tuple[SuiteModule, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    lib_dir: str = DEFAULT_LIB_DIR


def is_number(value: object) -> bool:
    """A TOML/JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def load_suite(path: str | os.PathLike[str], *, scan: bool = False) -> SuiteManifest:
    """Read a suite.toml by the manifests' one set of rules (with ``scan``: an audit
    scan.toml, whose modules also get ``SRB_SCAN=1``) and resolve each module's folder,
    which must stay inside the suite's folder once links are followed; raises SuiteError
    listing every problem."""
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
    collected = Collected()
    read = parse_scan(collected, data) if scan else parse_suite(collected, data)
    problems = collected.problems
    modules: list[SuiteModule] = []
    for index, module in enumerate(read.modules):
        module_dir = (root / module.dir).resolve()
        where = f"module[{index}].dir"
        if (module_dir != root and root not in module_dir.parents
                and not any(p.startswith(f"{where}:") for p in problems)):
            problems.append(f"{where}: `{module.dir}` leaves the suite folder")
        modules.append(
            SuiteModule(
                id=module.id,
                title=module.title,
                weight=module.weight,
                dir=module_dir,
                command=module.command or None,
                timeout_sec=module.timeout_sec,
                env=dict(module.env),
            )
        )
    if problems:
        raise SuiteError(suite_path, problems)
    env = dict(read.env)
    if scan:
        env["SRB_SCAN"] = "1"
    return SuiteManifest(
        path=suite_path,
        root=root,
        task=read.task,
        env=env,
        modules=tuple(modules),
        metadata=dict(read.metadata),
        lib_dir=read.lib_dir,
    )
