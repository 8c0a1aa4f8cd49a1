"""Tree comparison, per-file diffs, line counts, languages and search (no console)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.service.views.diff import DiffSourceError, compare_trees, trees_for_run
from srb_tui.service.views.diff_files import diff_lines, file_diff, side_by_side, unified_text
from srb_tui.service.views.diff_stats import (
    iter_line_counts,
    language_of,
    language_table,
    line_count,
    search,
)
from srb_tui.store import Store
from tests.conftest import DEMO_TASK

SUBMISSIONS = DEMO_TASK / "submissions"


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def test_demo_migration_is_python_removed_and_javascript_added() -> None:
    comparison = compare_trees(SUBMISSIONS / "untouched", SUBMISSIONS / "reference")
    status = {e.path: e.status for e in comparison.entries}
    assert status["csvtab/cli.py"] == "removed"
    assert status["lib/cli.js"] == "added"
    assert status["bin/csvtab"] == "changed"
    assert all(s == "removed" for p, s in status.items() if p.endswith(".py"))
    languages = {row.language: row for row in language_table(comparison)}
    assert languages["Python"].lines_a > 500 and languages["Python"].lines_b == 0
    assert languages["JavaScript"].lines_a == 0 and languages["JavaScript"].lines_b > 500
    # bin/csvtab has no extension: its #! line decides (python before, node after)
    assert languages["Python"].files_a == 1 + sum(1 for p in status if p.endswith(".py"))


def test_equal_size_files_are_compared_by_content(tmp_path: Path) -> None:
    left = _write(tmp_path / "a", {"same.txt": "abc\n", "flip.txt": "abc\n", "d/x.bin": b"\0\1"})
    right = _write(tmp_path / "b", {"same.txt": "abc\n", "flip.txt": "abd\n", "d/x.bin": b"\0\1"})
    os.utime(right / "same.txt", (1, 1))  # timestamps never matter
    comparison = compare_trees(left, right)
    assert {e.path: e.status for e in comparison.entries} == {
        "d/x.bin": "same", "flip.txt": "changed", "same.txt": "same",
    }
    assert comparison.summary() == "1 changed · 0 added · 0 removed · 2 same"


def test_many_equal_size_files_use_the_pool_and_agree(tmp_path: Path) -> None:
    files = {f"f{n:04d}.txt": f"line {n:04d}\n" for n in range(600)}
    left = _write(tmp_path / "a", files)
    changed = dict(files, **{"f0007.txt": "LINE 0007\n", "f0500.txt": "line 9999\n"})
    right = _write(tmp_path / "b", changed)
    comparison = compare_trees(left, right)
    assert [e.path for e in comparison.differing()] == ["f0007.txt", "f0500.txt"]


def test_missing_tree_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DiffSourceError, match=r"left tree .* is not a folder"):
        compare_trees(tmp_path / "nope", tmp_path)


def test_hunks_match_difflib_unified_diff() -> None:
    old = (SUBMISSIONS / "reference" / "lib" / "width.js").read_text(encoding="utf-8")
    new = (SUBMISSIONS / "subtle" / "lib" / "width.js").read_text(encoding="utf-8")
    diff = file_diff(SUBMISSIONS / "reference", SUBMISSIONS / "subtle", "lib/width.js")
    expected = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""))[2:]
    assert unified_text(diff).splitlines() == expected
    assert diff.removed == 17 and diff.added == 2


def test_hunk_line_numbers_and_side_by_side_pairs() -> None:
    old = [f"l{n}" for n in range(1, 21)]
    new = list(old)
    new[1] = "changed"
    del new[15]
    hunks = diff_lines(old, new, context=1)
    assert [h.header for h in hunks] == ["@@ -1,3 +1,3 @@", "@@ -15,3 +15,2 @@"]
    rows = side_by_side(hunks[0])
    assert [(a and a.kind, b and b.kind) for a, b in rows] == [(" ", " "), ("-", "+"), (" ", " ")]
    assert rows[1][0].old_no == 2 and rows[1][1].new_no == 2
    assert side_by_side(hunks[1])[1] == (hunks[1].lines[1], None)


def test_binary_and_added_files(tmp_path: Path) -> None:
    left = _write(tmp_path / "a", {"x.bin": b"\0abc", "gone.py": "a\nb\n"})
    right = _write(tmp_path / "b", {"x.bin": b"\0abd", "new.js": "1\n2\n3\n"})
    comparison = compare_trees(left, right)
    assert file_diff(left, right, "x.bin").binary
    counts = {c.path: c for batch in iter_line_counts(comparison) for c in batch}
    assert counts["x.bin"].binary
    assert (counts["new.js"].added, counts["new.js"].removed) == (3, 0)
    assert (counts["gone.py"].added, counts["gone.py"].removed) == (0, 2)
    added = file_diff(left, right, "new.js")
    assert [line.kind for line in added.hunks[0].lines] == ["+", "+", "+"]


def test_changed_line_count_counts_only_changes() -> None:
    comparison = compare_trees(SUBMISSIONS / "reference", SUBMISSIONS / "subtle")
    entry = comparison.get("lib/width.js")
    assert entry is not None
    count = line_count(comparison, entry)
    assert (count.added, count.removed) == (2, 17)


def test_language_of_extension_and_shebang() -> None:
    assert language_of("a/b.py") == "Python"
    assert language_of("bin/tool", b"#!/usr/bin/env node\n") == "JavaScript"
    assert language_of("bin/tool", b"#!/usr/bin/env python3\n") == "Python"
    assert language_of("Makefile") == "Other"


def test_search_finds_names_and_content_on_both_sides() -> None:
    comparison = compare_trees(SUBMISSIONS / "untouched", SUBMISSIONS / "reference")
    result = search(comparison, "East Asian")
    # the removed Python module (side A), the added table (side B), the README on both
    assert result.paths == {"README.md", "csvtab/width.py", "lib/unicode-data.js"}
    assert {(hit.path, hit.side) for hit in result.hits} == {
        ("README.md", "A"), ("README.md", "B"),
        ("csvtab/width.py", "A"), ("lib/unicode-data.js", "B"),
    }
    named = search(comparison, "UNICODE-DATA")
    assert "lib/unicode-data.js" in named.paths
    assert search(comparison, "   ").paths == frozenset()


async def test_trees_for_unknown_run_and_missing_submission(builtin_settings: Settings) -> None:
    with pytest.raises(DiffSourceError, match="no store"):
        await trees_for_run(builtin_settings, "r-20260101-000000-aaaa")
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:reference")
    with pytest.raises(DiffSourceError, match="no such run"):
        await trees_for_run(builtin_settings, "r-20260101-000000-aaaa")
    with pytest.raises(DiffSourceError, match="no submission collected"):
        await trees_for_run(builtin_settings, run.id)


async def test_trees_for_run_prepares_state_a(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:reference")
    submission = builtin_settings.runs_dir / run.id / "submission"
    _write(submission, {"README.md": "x\n"})
    state_a, found = await trees_for_run(builtin_settings, run.id)
    assert found == submission
    assert (state_a / "csvtab" / "cli.py").is_file()
    assert compare_trees(state_a, SUBMISSIONS / "untouched").differing() == []
