"""Parse and check module suites: ``behavioural/suite.toml`` and ``audit/scan.toml``.

Both share the module contract (``[[module]]`` with ``id``, ``title``, ``weight``,
``command``, ``dir``, ``timeout_sec``, ``env``, ``about``); they differ only in
their ``schema`` string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from srb_tui.grader.contract import DEFAULT_MODULE_TIMEOUT_SEC
from srb_tui.schema.evaluation_toml import check_schema_and_task
from srb_tui.schema.models import SCHEMA_SCAN, SCHEMA_SUITE, Module, Scan, Suite
from srb_tui.schema.reader import Source, Table, check_unique_ids, is_inside

SUITE_KEYS = ("schema", "task", "lib_dir", "default_timeout_sec", "env", "metadata", "module")
MODULE_KEYS = ("id", "title", "weight", "command", "dir", "timeout_sec", "env", "about")


@dataclass(frozen=True)
class _ModuleSet:
    """A suite manifest's modules and defaults as read from its TOML."""

    schema: str
    task: str
    modules: tuple[Module, ...]
    lib_dir: str
    default_timeout_sec: float
    env: Mapping[str, str]
    metadata: Mapping[str, object]


def _relative(table: Table, key: str, value: str) -> bool:
    if not is_inside(value):
        table.report(key, f"`{value}` must be a relative path inside the suite's folder")
        return False
    return True


def _parse(source: Source, data: Mapping[str, object], schema: str, task_id: str) -> _ModuleSet:
    top = Table(source, "", data)
    top.check_keys(SUITE_KEYS)
    found_schema, task = check_schema_and_task(top, schema, task_id)
    lib_dir = top.string("lib_dir", "lib")
    if top.has("lib_dir"):
        _relative(top, "lib_dir", lib_dir)
    default_timeout = top.number("default_timeout_sec", DEFAULT_MODULE_TIMEOUT_SEC, positive=True)
    env = top.string_mapping("env")
    metadata = top.mapping("metadata")
    tables = top.tables("module", required=True)
    if top.has("module") and isinstance(top.raw("module"), list) and not tables:
        top.report("module", "at least one [[module]] is required")
    modules = [_module(t, default_timeout) for t in tables]
    check_unique_ids(tables, [m.id for m in modules], "module")
    return _ModuleSet(found_schema, task, tuple(modules), lib_dir, default_timeout, env, metadata)


def _module(table: Table, default_timeout: float) -> Module:
    table.check_keys(MODULE_KEYS)
    ident = table.string("id", required=True)
    title = table.string("title", ident)
    weight = table.number("weight", 1.0, minimum=0)
    command: tuple[str, ...] | None = None
    if table.has("command"):
        command = table.string_list("command")
        if isinstance(table.raw("command"), list) and not command:
            table.report("command", "must name a program (an empty argv cannot run)")
    directory = table.string("dir", f"modules/{ident}")
    if table.has("dir"):
        _relative(table, "dir", directory)
    timeout = table.number("timeout_sec", default_timeout, positive=True)
    env = table.string_mapping("env")
    about = table.string("about")
    return Module(
        id=ident,
        title=title,
        weight=weight,
        dir=directory,
        timeout_sec=timeout,
        command=command,
        env=env,
        about=about,
    )


def parse_suite(source: Source, data: Mapping[str, object], task_id: str) -> Suite:
    """Read a behavioural ``suite.toml``; problems go to ``source``."""
    s = _parse(source, data, SCHEMA_SUITE, task_id)
    return Suite(s.schema, s.task, s.modules, s.lib_dir, s.default_timeout_sec, s.env, s.metadata)


def parse_scan(source: Source, data: Mapping[str, object], task_id: str) -> Scan:
    """Read an audit ``scan.toml``; problems go to ``source``."""
    s = _parse(source, data, SCHEMA_SCAN, task_id)
    return Scan(s.schema, s.task, s.modules, s.lib_dir, s.default_timeout_sec, s.env, s.metadata)
