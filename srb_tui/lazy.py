"""Package exports that load on first use.

A room's package (``srb_tui.store``, ``srb_tui.runner`` …) names its public API once, as
imports under ``if TYPE_CHECKING:`` in its ``__init__.py`` plus ``__all__``, and ends with::

    __getattr__ = exports_on_first_use(__name__)

``from srb_tui.runner import DockerEngine`` then imports ``srb_tui.runner.engine`` only,
not every module of the room. Eager re-exports made each ``import srb_tui.store.X`` load
the whole store (and the whole runner, schema …): about half of ``srb run``'s start-up
before the agent's container was created went to modules the launch never calls.
Type checkers and linters read the ``TYPE_CHECKING`` imports as ordinary re-exports.

The table of names is read from the package's own source (its ``TYPE_CHECKING`` block)
the first time a name is asked for, so a name is listed in one place only. Standard
library only: the schema room, which imports nothing else, uses it too.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _table(package: str) -> dict[str, tuple[str, str]]:
    """``exported name -> (module, name in it)`` from the package's TYPE_CHECKING block."""
    source = Path(sys.modules[package].__file__ or "").read_text(encoding="utf-8")
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom) or stmt.module is None:
                continue
            module = stmt.module
            if stmt.level:
                base = package.rsplit(".", stmt.level - 1)[0] if stmt.level > 1 else package
                module = f"{base}.{module}"
            for alias in stmt.names:
                table[alias.asname or alias.name] = (module, alias.name)
    return table


def exports_on_first_use(package: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` (see the module docstring)."""
    table: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> Any:
        if not table:
            table.update(_table(package))
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[0]), where[1])
        setattr(sys.modules[package], name, value)  # asked once per process
        return value

    return __getattr__


__all__ = ["exports_on_first_use"]
