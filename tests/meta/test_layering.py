"""What the import-linter contracts (pyproject.toml, run by scripts/test.sh) cannot say:
the grader imports nothing but the standard library, and the CLI does not load textual at
run time. The room table itself, textual only in ui/ and docker only in runner/ are
contracts; ``test_contracts_hold`` runs them so a plain pytest run checks them too."""

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
        "import sys, srb_tui.cli, srb_tui.service.catalog, srb_tui.service.views.history; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_contracts_hold() -> None:
    import re
    import shutil
    import subprocess
    import sys

    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint is not None, "lint-imports is missing: pip install -e '.[dev]'"
    out = subprocess.run([lint, "--no-cache"], cwd=PACKAGE.parent, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert re.search(r"Contracts: \d+ kept, 0 broken", out.stdout), out.stdout[-2000:]
