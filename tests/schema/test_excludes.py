"""Artifact excludes with tar --exclude semantics."""

from __future__ import annotations

import pytest

from srb_tui.schema.excludes import (
    ExcludePattern,
    archive_root,
    excluded_files,
    is_excluded,
    relative_name,
)


@pytest.mark.parametrize(
    ("pattern", "path", "dropped"),
    [
        ("build", "build/out.o", True),
        ("build", "src/build/x", True),
        ("build", "build-aux/install-sh", False),
        ("build*", "build-aux/install-sh", True),
        ("*.o", "src/deep/a.o", True),
        ("*.o", "src/a.oo", False),
        ("*.so.*", "lib/libx.so.26", True),
        ("__pycache__", "a/__pycache__/m.pyc", True),
        ("CMakeCache.txt", "CMakeCache.txt", True),
        ("testdata/charts/*/*.tgz", "testdata/charts/a/b.tgz", True),
        ("testdata/charts/*/*.tgz", "sub/testdata/charts/a/b.tgz", False),
        ("testdata/charts/*/*.tgz", "testdata/charts/a/b/c.tgz", False),
        (".husky/_", ".husky/_/husky.sh", True),
        (".husky/_", "x/.husky/_/husky.sh", False),
        ("./dist", "dist/a.js", True),
        ("dist/", "src/dist/a.js", True),
        ("*", "anything", True),
        ("", "anything", False),
        ("Build", "build/x", False),
    ],
)
def test_pattern_matching(pattern: str, path: str, dropped: bool) -> None:
    assert ExcludePattern(pattern).matches(path) is dropped


def test_wildcards_do_not_cross_a_slash() -> None:
    assert not ExcludePattern("src*h").matches("src/a.h")
    assert ExcludePattern("src*h").matches("lib/src_h")


def test_excluded_files_groups_hits_by_pattern() -> None:
    files = ["Makefile", "src/a.c", "src/a.o", "build-aux/config.guess", "build/x.o"]
    hits = excluded_files(["build", "*.o", "*.md"], files)
    assert hits == {"build": ["build/x.o"], "*.o": ["build/x.o", "src/a.o"]}
    assert is_excluded("src/a.o", ["*.md", "*.o"])
    assert not is_excluded("src/a.c", ["*.md", "*.o"])


def test_archive_root_and_relative_names() -> None:
    wrapped = ["repo", "repo/src", "./repo/src/a.c", "repo/Makefile"]
    assert archive_root(wrapped) == "repo"
    assert relative_name("./repo/src/a.c", "repo") == "src/a.c"
    assert relative_name("repo", "repo") == ""
    assert archive_root(["Makefile", "src/a.c"]) == ""
    assert archive_root(["README"]) == ""
    assert relative_name("./src/a.c", "") == "src/a.c"
