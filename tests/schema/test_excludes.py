"""Artifact excludes against a file list, and archive member names (the matching rule's
table of cases is tests/test_exclude_match.py)."""

from __future__ import annotations

from srb_tui.schema.excludes import (
    archive_root,
    excluded_files,
    is_excluded,
    relative_name,
)


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
