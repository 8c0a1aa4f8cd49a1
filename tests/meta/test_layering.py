"""The two import boundaries of the design: textual only in ui/, docker only in runner/."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "srb_tui"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _offenders(module: str, allowed_room: str) -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == allowed_room:
            continue
        if module in _imports(path):
            out.append(str(rel))
    return out


def test_textual_only_in_ui() -> None:
    assert _offenders("textual", "ui") == []


def test_docker_only_in_runner() -> None:
    assert _offenders("docker", "runner") == []


def test_grader_is_stdlib_only() -> None:
    import sys

    stdlib = set(sys.stdlib_module_names)
    bad = []
    for path in sorted((PACKAGE / "grader").rglob("*.py")):
        for name in _imports(path):
            if name not in stdlib:
                bad.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert bad == []


def test_core_does_not_import_textual_at_runtime() -> None:
    """Importing the CLI entry and the service must not pull textual in (harlequin's rule)."""
    import subprocess
    import sys

    code = (
        "import sys, srb_tui.cli, srb_tui.service.catalog, srb_tui.service.history; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
