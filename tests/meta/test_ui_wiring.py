"""The console's screens, widgets and palette providers get what they use from whoever
makes them (the ConsoleService, the settings, a key-name function) instead of casting
``self.app`` to the console app and reaching into it. Nothing in srb_tui/ui but the app
module itself may name the app class."""

from __future__ import annotations

import ast
import re
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "srb_tui" / "ui"
APP_MODULE = "srb_tui.ui.app"
CAST_TO_APP = re.compile(r"""cast\(\s*["']?SrbApp""")


def _ui_modules() -> list[Path]:
    found = sorted(p for p in UI.rglob("*.py") if p.name != "app.py" or p.parent != UI)
    assert len(found) > 20, f"expected the console's modules under {UI}, found {len(found)}"
    return found


def _imported(node: ast.AST) -> set[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return {node.module}
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    return set()


def test_no_module_casts_the_app() -> None:
    bad = [f"{path.relative_to(UI)}:{n}"
           for path in _ui_modules()
           for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if CAST_TO_APP.search(line)]
    assert bad == [], f"cast to SrbApp (hand the collaborator in instead): {bad}"


def test_no_module_imports_the_app() -> None:
    """Not even under TYPE_CHECKING: a screen that names SrbApp is one cast away from it."""
    bad = []
    for path in _ui_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if APP_MODULE in _imported(node):
                bad.append(f"{path.relative_to(UI)}:{getattr(node, 'lineno', 0)}")
    assert bad == [], f"imports {APP_MODULE}: {bad}"


def test_the_checks_see_a_cast_and_an_import() -> None:
    """The two checks above would fail on the code they forbid."""
    sample = 'from srb_tui.ui.app import SrbApp\napp = cast("SrbApp", self.app)\n'
    assert CAST_TO_APP.search(sample)
    tree = ast.parse(sample)
    assert any(APP_MODULE in _imported(n) for n in ast.walk(tree))
