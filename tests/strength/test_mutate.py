"""The tree-sitter mutation engine of issue 36 (pure Python, no Docker)."""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

import pytest

from srb_tui.strength.mutate import (
    OPERATORS,
    MutantStale,
    MutationUnavailable,
    apply_mutant,
    find_sites,
    mutant_diff,
    sample_mutants,
    site_counts,
    source_files,
)

PY = """def f(a, b):
    if a < b and not a:
        return a + 1
    print("Hi")
    return True
"""
C = """int f(int a, int b) {
    if (a < b && !a) { g(); }
    return a * 2;
}
const char *s = "Hi";
int t = 1 > 0 ? 1 : 0;
int u = false;
"""
JS = """function f(a, b) {
  if (a >= b || !a) { g(); }
  const s = "Hi";
  return a - 3 === true;
}
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _pairs(tree: Path) -> set[tuple[str, int, str, str]]:
    return {(m.operator, m.line, m.before, m.after) for m in find_sites(tree)}


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("a.py", PY, [("comparison", 2, "<", "<="), ("boolean", 2, "and", "or"),
                  ("boolean", 2, "not a", "a"), ("arithmetic", 3, "+", "-"),
                  ("constant", 3, "1", "2"), ("constant", 3, "1", "0"),
                  ("statement", 3, "return a + 1", "pass"),
                  ("statement", 4, 'print("Hi")', "pass"), ("string-case", 4, "Hi", "hI"),
                  ("boolean", 5, "True", "False")]),
    ("a.c", C, [("comparison", 2, "<", "<="), ("boolean", 2, "&&", "||"),
                ("boolean", 2, "!a", "a"), ("statement", 2, "g();", ";"),
                ("arithmetic", 3, "*", "/"), ("constant", 3, "2", "3"),
                ("string-case", 5, "Hi", "hI"), ("comparison", 6, ">", ">=")]),
    ("a.js", JS, [("comparison", 2, ">=", ">"), ("boolean", 2, "||", "&&"),
                  ("boolean", 2, "!a", "a"), ("statement", 2, "g();", ";"),
                  ("string-case", 3, "Hi", "hI"), ("arithmetic", 4, "-", "+"),
                  ("constant", 4, "3", "4"), ("comparison", 4, "===", "!=="),
                  ("boolean", 4, "true", "false")]),
])
def test_operators_per_language(tmp_path: Path, name: str, text: str,
                                 expected: list[tuple[str, int, str, str]]) -> None:
    found = _pairs(_tree(tmp_path, {name: text}))
    missing = [e for e in expected if e not in found]
    assert not missing, (missing, sorted(found))
    assert {m.operator for m in find_sites(tmp_path)} == set(OPERATORS)


def test_python_skips_docstrings_comments_and_main_guard(tmp_path: Path) -> None:
    text = '"""Doc Here."""\n# x < y\nif __name__ == "__main__":\n    pass\n'
    assert find_sites(_tree(tmp_path, {"m.py": text})) == []


def test_shebang_and_skipped_paths(tmp_path: Path) -> None:
    _tree(tmp_path, {"bin/tool": "#!/usr/bin/env python3\nx = 1 < 2\n",
                     "build.sh": "#!/bin/sh\n[ 1 -lt 2 ]\n",
                     "tests/test_a.py": "x = 1\n", "pkg/test_b.py": "x = 1\n",
                     "pkg/c_test.go": "package c\n", "web/a.test.js": "x = 1;\n",
                     "node_modules/m/i.js": "x = 1;\n", "vendor/v.c": "int x = 1;\n",
                     "pkg/ok.py": "x = 1\n"})
    assert source_files(tmp_path) == [("bin/tool", "python"), ("pkg/ok.py", "python")]
    assert {m.path for m in find_sites(tmp_path)} == {"bin/tool", "pkg/ok.py"}


def test_sample_deterministic_spread_and_short(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": PY, "b.c": C})
    one = sample_mutants(tmp_path, 6, seed=7)
    assert one == sample_mutants(tmp_path, 6, seed=7)
    assert [m.id for m in one] == [f"m{i:03d}" for i in range(1, 7)]
    assert {m.operator for m in one} == set(OPERATORS)
    keys = {s: [m.key for m in sample_mutants(tmp_path, 6, seed=s)] for s in range(5)}
    assert len({tuple(k) for k in keys.values()}) > 1
    total = len(find_sites(tmp_path))
    assert len(sample_mutants(tmp_path, total + 50, seed=1)) == total
    assert sum(site_counts(tmp_path).values()) == total


def test_apply_stale_and_diff(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": PY})
    (tmp_path / "a.py").chmod(0o755)
    site = next(m for m in find_sites(tmp_path) if m.operator == "comparison")
    diff = mutant_diff(tmp_path, site)
    assert "--- a/a.py" in diff and "+    if a <= b and not a:" in diff
    assert "-    if a < b and not a:" in diff
    apply_mutant(tmp_path, site)
    assert (tmp_path / "a.py").read_text() == PY.replace("a < b", "a <= b")
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o755
    (tmp_path / "a.py").write_text(PY.replace("a < b", "b > a"))
    with pytest.raises(MutantStale, match=r"a\.py:2"):
        apply_mutant(tmp_path, site)
    assert site.from_json(site.to_json()) == site


@pytest.mark.parametrize("task", ["demo01", "demo02", "demo03"])
def test_builtin_tasks_have_sites(tmp_path: Path, task: str) -> None:
    archive = next(Path("tasks").glob(f"{task}-*/environment/original.tar.gz"))
    with tarfile.open(archive) as tf:
        tf.extractall(tmp_path, filter="data")
    sites = find_sites(tmp_path)
    assert len(sites) >= 20
    for mutant in sample_mutants(tmp_path, 12, seed=3):
        source = (tmp_path / mutant.path).read_bytes()
        assert source[mutant.start:mutant.end].decode() == mutant.before


def test_unavailable_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, {"a.py": "x = 1\n"})
    monkeypatch.setitem(sys.modules, "tree_sitter", None)
    with pytest.raises(MutationUnavailable, match=r"pip install -e '\.\[strength\]'"):
        find_sites(tmp_path)
