"""What srb reads from a submission on the host is safe: the diff screen's data (tree
comparison, file diff, line counts, languages, search) never follows a link out of the
tree, never blocks on a FIFO, caps what it reads from a huge file, and shows names with
control characters escaped. The submission here is built on the real file system."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from srb_tui.service.views.diff import compare_trees
from srb_tui.service.views.diff_files import MAX_DIFF_BYTES, file_diff
from srb_tui.service.views.diff_stats import iter_line_counts, language_table, search
from srb_tui.service.views.safe_read import (
    UnsafeRead,
    display_name,
    lines_around,
    open_in_tree,
    read_in_tree,
)
from tests.faults.harness import Outcome

SECRET = "operator-secret-5f1c"
EVIL = "evil\x1b[2J\x1b]0;pwned\x07.txt"


def _bounded(fn: Callable[[], Any], what: str, seconds: float = 20.0) -> Any:
    """``fn()`` in a thread; fails (instead of hanging the suite) if it blocks."""
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # re-raised below, in the test's thread
            box["error"] = err

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{what} blocked for {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    left, right = tmp_path / "a", tmp_path / "b"
    for root in (left, right):
        root.mkdir()
        (root / "same.txt").write_text("same\n")
        (root / "lib").mkdir()
        (root / "lib" / "secret.txt").write_text("inside\n")
    # the submission's hostile entries
    (right / "link.txt").symlink_to(outside / "secret.txt")
    (right / "lib" / "secret.txt").unlink()
    (right / "lib").rmdir()
    (right / "lib").symlink_to(outside)  # a folder link: lib/secret.txt is outside
    os.mkfifo(right / "pipe.txt")
    os.mkfifo(left / "pipe.txt")
    with (right / "huge.txt").open("wb") as f:
        f.truncate(5 * 1024**3)  # sparse: 5 GiB on paper, nothing on disk
    (left / "huge.txt").write_text("small\n")
    (right / EVIL).write_text(SECRET + "?\n")
    return left, right, outside


def test_diff_data_never_follows_links_blocks_or_reads_everything(
        trees: tuple[Path, Path, Path]) -> None:
    left, right, _outside = trees
    comparison = _bounded(lambda: compare_trees(left, right), "compare_trees")
    by_path = {e.path: e for e in comparison.entries}
    assert "lib/secret.txt" in by_path and by_path["lib/secret.txt"].status == "removed"
    assert "pipe.txt" not in by_path  # a FIFO is neither a file nor a link

    link = _bounded(lambda: file_diff(left, right, "link.txt"), "diff of a link")
    assert link.new_text is not None and link.new_text.startswith("-> ")
    assert SECRET not in (link.new_text or "")
    through = _bounded(lambda: file_diff(left, right, "lib/secret.txt"), "diff via a link")
    assert SECRET not in (through.new_text or "") and "inside" in (through.old_text or "")
    pipe = _bounded(lambda: file_diff(left, right, "pipe.txt"), "diff of a FIFO")
    assert pipe.note and "FIFO" in pipe.note
    huge = _bounded(lambda: file_diff(left, right, "huge.txt"), "diff of a huge file")
    assert huge.note and "too large" in huge.note

    counts = _bounded(lambda: [c for batch in iter_line_counts(comparison) for c in batch],
                      "line counts")
    assert {c.path for c in counts} >= {"link.txt", "huge.txt"}
    _bounded(lambda: language_table(comparison), "language table")
    found = _bounded(lambda: search(comparison, SECRET), "search")
    assert {h.path for h in found.hits} == {EVIL}  # the tree's own file, nothing outside

    entry = by_path[EVIL]
    assert "\x1b" not in entry.shown and "\\x1b" in entry.shown and "\\x07" in entry.shown
    Outcome("hostile-tree-read", "diff/stats/search", "refused").record()


def test_the_read_policy_itself(trees: tuple[Path, Path, Path]) -> None:
    _left, right, _ = trees
    for rel, why in (("link.txt", "symbolic link"), ("lib/secret.txt", "not a plain folder"),
                     ("pipe.txt", "FIFO"), ("../outside/secret.txt", "inside the tree")):
        with pytest.raises(UnsafeRead, match=why):
            _bounded(lambda rel=rel: open_in_tree(right, rel), f"open {rel}")
    read = _bounded(lambda: read_in_tree(right, "huge.txt", cap=1024), "capped read")
    assert read.truncated and len(read.data) == 1024 and read.size == 5 * 1024**3
    assert MAX_DIFF_BYTES < 5 * 1024**3
    assert display_name("a\nb\\c\u202ed") == "a\\nb\\\\c\\u202ed"


def test_the_evidence_window_reads_under_the_policy(trees: tuple[Path, Path, Path]) -> None:
    """The Run screen's evidence dialog shows a cited line of either tree through
    ``lines_around``: never through a link, never blocked by a FIFO, never past its cap."""
    _left, right, _ = trees
    (right / "src.py").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    window, problem = lines_around(right, "src.py", 50, context=2)
    assert problem is None and window == [(n, f"line {n}") for n in range(48, 53)]
    for rel, why in (("link.txt", "symbolic link"), ("lib/secret.txt", "not a plain folder"),
                     ("pipe.txt", "FIFO")):
        window, problem = _bounded(lambda rel=rel: lines_around(right, rel, 1), f"read {rel}")
        assert window == [] and problem is not None and why in problem, problem
        assert SECRET not in problem
    window, problem = _bounded(lambda: lines_around(right, "huge.txt", 10**9, cap=4096),
                               "capped window")
    assert window == [] and problem is not None and "beyond the first 4,096 bytes" in problem
    window, problem = lines_around(right, "gone.py", 3)
    assert window == [] and problem == "gone.py: not in this tree"
    window, problem = lines_around(right, EVIL, 1)
    assert problem is None and window == [(1, SECRET + "?")]
    assert lines_around(None, "src.py", 1) == ([], "tree not available")
