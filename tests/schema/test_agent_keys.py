"""Every ``[agent]`` key a reader reads is a key the schema accepts (issue 22).

``[agent].completion_token`` was read by the client agents from the raw TOML while the
schema's list of ``[agent]`` keys rejected it, so a task that set it could not load. Now the
schema reads every ``[agent]`` key into :class:`AgentSpec` and the readers read that; this
test walks the readers (srb's sources and the README) for the keys they name and holds them
against the schema.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import fields
from functools import cache
from pathlib import Path

from srb_tui.agents.rounds import COMPLETION_TOKEN
from srb_tui.schema import load_task
from srb_tui.schema.models import AgentSpec
from srb_tui.schema.task_toml import AGENT_KEYS
from srb_tui.service.run.agent_clients import completion_token

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "srb_tui").rglob("*.py"))
MINIMAL = Path(__file__).parent / "valid" / "minimal"
# `[agent].key`, `[agent] key` and `agent.key` as prose and docstrings name them
NAMED = re.compile(r"\[agent\]\.?\s?([a-z_]+)\b")


@cache
def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"))


def _raw_reads(path: Path) -> set[str]:
    """Keys read off a raw ``agent`` mapping (``.get`` or ``[]``): ``x["agent"]["k"]``."""
    if '"agent"' not in path.read_text(encoding="utf-8"):
        return set()
    tree = _tree(path)
    keys: set[str] = set()
    for node in ast.walk(tree):
        inner: ast.AST | None = None
        key: ast.AST | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args:
            inner, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Subscript):
            inner, key = node.value, node.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        for sub in ast.walk(inner) if inner is not None else ():
            if isinstance(sub, ast.Constant) and sub.value == "agent":
                keys.add(key.value)
    return keys


def _spec_reads(path: Path) -> set[str]:
    """Attributes read off a manifest's ``agent``: ``manifest.agent.k``."""
    if "manifest.agent." not in path.read_text(encoding="utf-8"):
        return set()
    return {node.attr for node in ast.walk(_tree(path))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "agent"
            and isinstance(node.value.value, ast.Attribute) and node.value.value.attr == "manifest"}


def test_the_schema_reads_exactly_the_spec_fields() -> None:
    assert set(AGENT_KEYS) == {f.name for f in fields(AgentSpec)}


def test_every_key_a_reader_names_is_accepted() -> None:
    named: dict[str, set[str]] = {}
    for path in [*SOURCES, ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        found = set(NAMED.findall(text))
        if path.suffix == ".py":
            found |= _raw_reads(path) | _spec_reads(path)
        for key in found:
            named.setdefault(key, set()).add(str(path.relative_to(ROOT)))
    assert "completion_token" in named and "timeout_sec" in named  # the walk finds readers
    unknown = {key: sorted(where) for key, where in named.items()
               if key not in AGENT_KEYS and key != "and"}
    assert unknown == {}


def test_no_reader_reads_the_agent_table_raw() -> None:
    raw = {str(p.relative_to(ROOT)): _raw_reads(p)
           for p in SOURCES if not p.is_relative_to(ROOT / "srb_tui" / "schema")}
    assert {path: keys for path, keys in raw.items() if keys} == {}


def _task_with(tmp_path: Path, agent_line: str) -> Path:
    task = tmp_path / "minimal"
    shutil.copytree(MINIMAL, task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'user = "root"\n', f'user = "root"\n{agent_line}\n', 1), encoding="utf-8")
    return task


def test_a_task_that_sets_completion_token_loads_and_the_client_reads_it(tmp_path: Path) -> None:
    load = load_task(_task_with(tmp_path, 'completion_token = "ALL_DONE"'))
    assert load.errors == ()
    task = load.task
    assert task is not None and task.manifest.agent.completion_token == "ALL_DONE"
    assert completion_token(task) == "ALL_DONE"


def test_without_completion_token_the_official_default_holds() -> None:
    task = load_task(MINIMAL).task
    assert task is not None and completion_token(task) == COMPLETION_TOKEN


def test_an_empty_completion_token_is_named(tmp_path: Path) -> None:
    load = load_task(_task_with(tmp_path, 'completion_token = " "'))
    assert [str(p) for p in load.errors] == [
        "task.toml:27 [agent.completion_token]: is empty; leave it out for the default token"]
