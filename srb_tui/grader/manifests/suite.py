"""The one reader of a module suite: ``behavioural/suite.toml`` and ``audit/scan.toml``.

Both share the module contract (``[[module]]`` with ``id``, ``title``, ``weight``,
``command``, ``dir``, ``timeout_sec``, ``env``, ``about``, ``metadata``); they differ only in
their ``schema`` string. The keys, their types and their defaults are written here once:
the host's task loader reads a suite with these rules (its :class:`Reporter` adds the file
and the line), and so does the grader inside a stage container
(``srb_tui/grader/suite/manifest.py`` resolves the folders and refuses a suite with
problems). Where srb's two earlier readers disagreed, the published reader decided.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..contract import DEFAULT_LIB_DIR, DEFAULT_MODULE_TIMEOUT_SEC, SCAN_SCHEMA, SUITE_SCHEMA
from .table import EMPTY, Reporter, Table, check_unique_ids, describe, is_inside

SUITE_KEYS = ("schema", "task", "lib_dir", "default_timeout_sec", "env", "metadata", "module")
MODULE_KEYS = ("id", "title", "weight", "command", "dir", "timeout_sec", "env", "about",
               "metadata")

_EMPTY_ENV: Mapping[str, str] = MappingProxyType({})


def _empty() -> Mapping[str, object]:
    return EMPTY


def _empty_env() -> Mapping[str, str]:
    return _EMPTY_ENV


@dataclass(frozen=True)
class Module:
    """One ``[[module]]`` of a behavioural suite or an audit scan.

    ``command`` is ``None`` when the module relies on the default (``run.sh`` via
    bash, else ``run.py``); ``dir`` is relative to the suite's folder;
    ``timeout_sec`` is already resolved to the suite default when not given.
    """

    id: str
    title: str
    weight: float
    dir: str
    timeout_sec: float
    command: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=_empty_env)
    about: str = ""
    metadata: Mapping[str, object] = field(default_factory=_empty)


@dataclass(frozen=True)
class _Modules:
    """What suite.toml and scan.toml share: the modules and their defaults."""

    schema: str
    task: str
    modules: tuple[Module, ...]
    lib_dir: str = DEFAULT_LIB_DIR
    default_timeout_sec: float = DEFAULT_MODULE_TIMEOUT_SEC
    env: Mapping[str, str] = field(default_factory=_empty_env)
    metadata: Mapping[str, object] = field(default_factory=_empty)


@dataclass(frozen=True)
class Suite(_Modules):
    """``tests/behavioural/suite.toml``: the Stage II modules."""

    @property
    def total_weight(self) -> float:
        return sum(m.weight for m in self.modules)


@dataclass(frozen=True)
class Scan(_Modules):
    """``tests/audit/scan.toml``: advisory read-only modules run before the review."""


def check_schema_and_task(top: Table, expected_schema: str,
                          task_id: str | None) -> tuple[str, str]:
    """The ``schema`` and ``task`` keys every manifest under tests/ carries (``task_id``:
    the task directory's name it must match; None inside a stage container)."""
    schema = top.string("schema", required=True)
    if top.has("schema") and isinstance(top.raw("schema"), str) and schema != expected_schema:
        top.report("schema", f"expected `{expected_schema}`, found `{schema}`")
    task = top.string("task", required=True)
    if (task_id is not None and top.has("task") and isinstance(top.raw("task"), str)
            and task != task_id):
        top.report("task", f"task `{task}` does not match the task directory `{task_id}`")
    return schema, task


def _relative(table: Table, key: str, value: str) -> bool:
    if not is_inside(value):
        table.report(key, f"`{value}` must be a relative path inside the suite's folder")
        return False
    return True


def _stays_inside(value: str) -> bool:
    """A relative path whose ``..`` steps (the published reader allows them) never climb
    above the suite's folder: ``modules/../m1`` is inside, ``../m1`` is not."""
    return (bool(value.strip()) and not value.startswith("/")
            and posixpath.normpath(value).split("/", 1)[0] != "..")


def _env(table: Table, name: str) -> Mapping[str, str]:
    """A table of environment values: strings, and numbers written as their text (the
    published reader's ``str(value)``); anything else is reported."""
    inner = table.table(name)
    if inner is None:
        return _EMPTY_ENV
    out: dict[str, str] = {}
    for key, value in inner.data.items():
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = str(value)
        else:
            inner.report(key, f"expected a string, found {describe(value)}")
    return MappingProxyType(out)


def _text(table: Table, name: str, default: str) -> str:
    """A module's title or about: any value, as its text (the published reader's
    ``str(value)``; srb's grader read it so too)."""
    value = table.raw(name)
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def _module(table: Table, default_timeout: float) -> Module:
    table.check_keys(MODULE_KEYS)
    ident = table.string("id", required=True)
    title = _text(table, "title", ident)
    weight = table.number("weight", 1.0, minimum=0)
    command: tuple[str, ...] | None = None
    if table.has("command"):
        command = table.string_list("command")
        if isinstance(table.raw("command"), list) and not command:
            table.report("command", "must name a program (an empty argv cannot run)")
    directory = table.string("dir", f"modules/{ident}")
    if table.has("dir") and isinstance(table.raw("dir"), str) and not _stays_inside(directory):
        table.report("dir", f"`{directory}` must be a relative path inside the suite's folder")
    timeout = table.number("timeout_sec", default_timeout, positive=True)
    return Module(
        id=ident,
        title=title,
        weight=weight,
        dir=directory,
        timeout_sec=timeout,
        command=command,
        env=_env(table, "env"),
        about=_text(table, "about", ""),
        metadata=table.mapping("metadata"),
    )


def _read(source: Reporter, data: Mapping[str, object], schema: str,
          task_id: str | None) -> Suite | Scan:
    top = Table(source, "", data)
    top.check_keys(SUITE_KEYS)
    found_schema, task = check_schema_and_task(top, schema, task_id)
    lib_dir = top.string("lib_dir", DEFAULT_LIB_DIR)
    if top.has("lib_dir") and isinstance(top.raw("lib_dir"), str):
        _relative(top, "lib_dir", lib_dir)
    default_timeout = top.number("default_timeout_sec", DEFAULT_MODULE_TIMEOUT_SEC,
                                 positive=True)
    env = _env(top, "env")
    metadata = top.mapping("metadata")
    tables = top.tables("module", required=True)
    if top.has("module") and isinstance(top.raw("module"), list) and not tables:
        top.report("module", "at least one [[module]] is required")
    modules = tuple(_module(t, default_timeout) for t in tables)
    check_unique_ids(tables, [m.id for m in modules], "module", any_length=True)
    kind = Scan if schema == SCAN_SCHEMA else Suite
    return kind(found_schema, task, modules, lib_dir, default_timeout, env, metadata)


def parse_suite(source: Reporter, data: Mapping[str, object],
                task_id: str | None = None) -> Suite:
    """Read a behavioural ``suite.toml``; problems go to ``source``."""
    suite = _read(source, data, SUITE_SCHEMA, task_id)
    assert isinstance(suite, Suite)
    return suite


def parse_scan(source: Reporter, data: Mapping[str, object],
               task_id: str | None = None) -> Scan:
    """Read an audit ``scan.toml``; problems go to ``source``."""
    suite = _read(source, data, SCAN_SCHEMA, task_id)
    assert isinstance(suite, Scan)
    return suite
