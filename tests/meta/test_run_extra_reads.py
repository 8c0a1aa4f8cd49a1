"""No module outside ``srb_tui/store`` reads a record's ``extra`` document raw.

A run's ``extra`` (and a grading record's) is a JSON document beside the columns; every key
srb reads back has one typed reader in the store (``store/run_extra.py`` and
``store/run_extra_more.py`` for runs, ``store/record_extra.py`` for gate votes and
outcomes, adversary rounds and counterexamples). Elsewhere ``x.extra`` may only be
handed whole to such a reader (``DriverLease.read(run.extra)``, ``read_node(run.extra)``),
or be a document being written (``result.extra[key] = value``, ``extra=result.extra``,
``{**result.extra}``). Anything else — ``run.extra.get("imported")``, ``run.extra[KEY]``,
passing the raw document to a helper of one's own — fails here with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("srb_tui", "bench", "scripts")
STORE = ROOT / "srb_tui" / "store"
READERS = ("read", "read_all", "of")


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _allowed(node: ast.Attribute, parent: ast.AST | None) -> bool:
    if isinstance(parent, ast.Call) and node in parent.args:
        name = _callee(parent)
        return name in READERS or name.startswith("read_")
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return isinstance(parent.ctx, ast.Store)  # a document being built
    if isinstance(parent, ast.keyword):
        return parent.arg == "extra"  # handed whole to a writer
    if isinstance(parent, ast.Dict):
        return any(k is None and v is node for k, v in zip(parent.keys, parent.values,
                                                            strict=True))
    return False


def raw_reads(source: str, name: str) -> list[str]:
    """``file:line: code`` of every raw read of an ``extra`` document in ``source``."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr == "extra"
                and isinstance(node.ctx, ast.Load)
                and not _allowed(node, parents.get(node))):
            shown = ast.unparse(parents.get(node, node))[:80]
            found.append((node.lineno, f"{name}:{node.lineno}: {shown}"))
    return [text for _, text in sorted(found)]


def test_no_module_outside_the_store_reads_an_extra_document_raw() -> None:
    found: list[str] = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if STORE in path.parents:
                continue
            found += raw_reads(path.read_text(), str(path.relative_to(ROOT)))
    assert found == [], "read these through a typed reader in srb_tui/store:\n" + "\n".join(
        found)


def test_the_check_sees_raw_reads_and_lets_typed_ones_pass() -> None:
    raw = '''
def imported_from(run):
    imported = run.extra.get("imported")
    lease = run.extra[LEASE]
    return show(run.extra), imported, lease
'''
    assert [line.split(": ", 1)[0] for line in raw_reads(raw, "m.py")] == [
        "m.py:3", "m.py:4", "m.py:5"]
    typed = '''
def node_of(run, result, cx):
    result.extra["early"] = True
    store.record(extra=result.extra)
    doc = {**result.extra, "k": 1}
    return read_node(run.extra), DriverLease.read(run.extra), ModuleProgress.read_all(cx.extra)
'''
    assert raw_reads(typed, "m.py") == []
