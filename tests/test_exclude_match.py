"""One table of ``[[artifacts]] exclude`` cases, held against every place that applies it.

The matcher has one home (:mod:`srb_tui.exclude_match`); submission collection
(``runner.extract``) and task validation (``schema.excludes``) must agree with it on every
row, so a pattern validation reports is the pattern collection applies (issue 22: the two
copies disagreed on ``**/node_modules`` against ``a/b/node_modules/x.js``).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from srb_tui.exclude_match import ExcludeMatcher, ExcludePattern, path_segments
from srb_tui.runner.extract import extract_archive
from srb_tui.schema.excludes import excluded_files, is_excluded

# (pattern, path below the artifact root, dropped)
CASES: list[tuple[str, str, bool]] = [
    ("build", "build/out.o", True),
    ("build", "src/build/x", True),
    ("build", "build-aux/install-sh", False),
    ("build*", "build-aux/install-sh", True),
    ("*.o", "src/deep/a.o", True),
    ("*.o", "src/a.oo", False),
    ("*.so.*", "lib/libx.so.26", True),
    ("*.pyc", "a/b/c.py", False),
    ("__pycache__", "a/__pycache__/m.pyc", True),
    ("node_modules", "packages/web/node_modules/x/y.js", True),
    ("node_modules", "src/node_modules_helper.js", False),
    ("CMakeCache.txt", "CMakeCache.txt", True),
    ("testdata/charts/*/*.tgz", "testdata/charts/a/b.tgz", True),
    ("testdata/charts/*/*.tgz", "sub/testdata/charts/a/b.tgz", False),
    ("testdata/charts/*/*.tgz", "testdata/charts/a/b/c.tgz", False),
    ("src/*.o", "src/sub/a.o", False),
    (".husky/_", ".husky/_/husky.sh", True),
    (".husky/_", "x/.husky/_/husky.sh", False),
    ("docs/_build", "docs/_build/html/i.html", True),
    ("docs/_build", "x/docs/_build/i.html", False),
    ("/build", "build/x", True),
    ("/build", "src/build/x", False),
    ("./dist", "dist/a.js", True),
    ("./dist", "src/dist/a.js", True),  # "./" is dropped: a bare name, as collection has it
    ("dist/", "src/dist/a.js", True),  # a trailing slash keeps a bare name bare
    ("**/node_modules", "a/b/node_modules/x.js", True),
    ("**/node_modules", "node_modules/x.js", True),
    ("**/gen", "a/b/gen/f", True),
    ("a/**/z.txt", "a/z.txt", True),
    ("a/**/z.txt", "a/b/c/z.txt", True),
    ("a/**/z.txt", "b/a/z.txt", False),
    ("src*h", "src/a.h", False),  # a wildcard never crosses a slash
    ("src*h", "lib/src_h", True),
    ("*", "anything", True),
    ("", "anything", False),
    ("  ", "anything", False),
    ("Build", "build/x", False),
]
KEPT = "kept/README"
IDS = [f"{pattern or '<empty>'}~{path}" for pattern, path, _ in CASES]


@pytest.mark.parametrize(("pattern", "path", "dropped"), CASES, ids=IDS)
def test_the_matcher(pattern: str, path: str, dropped: bool) -> None:
    assert ExcludePattern(pattern).matches(path) is dropped
    assert ExcludeMatcher([pattern]).excluded(path_segments(path)) is dropped


@pytest.mark.parametrize(("pattern", "path", "dropped"), CASES, ids=IDS)
def test_validation_reports_what_the_matcher_drops(pattern: str, path: str, dropped: bool) -> None:
    assert is_excluded(path, [pattern]) is dropped
    dropped_too = [KEPT] if pattern == "*" else []  # only "*" drops the bystander
    hits = excluded_files([pattern, "never-there"], [path, KEPT])
    assert hits == ({pattern: sorted([path, *dropped_too])} if dropped else {})


def _archive(paths: list[str]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in paths:
            data = path.encode()
            info = tarfile.TarInfo(f"repo/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def test_collection_drops_exactly_what_the_table_says(tmp_path: Path) -> None:
    """Every row through a real tar stream and the real collector, one archive per row."""
    for i, (pattern, path, dropped) in enumerate(CASES):
        dest = tmp_path / f"row{i}"
        result = extract_archive(_archive([path, KEPT]), dest, root="repo", excludes=[pattern])
        assert (dest / path).is_file() is (not dropped), (pattern, path)
        assert result.excluded == (1 if dropped else 0) + (pattern == "*"), (pattern, path)
