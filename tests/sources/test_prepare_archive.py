"""prepare_state_a for a task that ships environment/original.tar.gz (no network)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from srb_tui.schema.state_a import StateASource
from srb_tui.sources import StateAError, content_digest, prepare_state_a, tree_manifest
from tests.sources.helpers import SAMPLE, cache_files, make_tarball, sha256


def make_task(
    tmp_path: Path,
    archive: bytes,
    digest: str | None,
    digest_at: str = "environment/original.sha256",
) -> Path:
    task = tmp_path / "demo-task"
    (task / "environment").mkdir(parents=True)
    (task / "environment/original.tar.gz").write_bytes(archive)
    if digest is not None:
        (task / digest_at).parent.mkdir(parents=True, exist_ok=True)
        (task / digest_at).write_text(f"{digest}  original.tar.gz\n")
    return task


def test_shipped_archive_is_verified_extracted_and_cached(tmp_path: Path) -> None:
    data = make_tarball(SAMPLE)
    task = make_task(tmp_path, data, sha256(data))
    cache_dir = tmp_path / "cache"
    seen: list[str] = []
    first = prepare_state_a(task, None, cache_dir, offline=True, progress=seen.append)
    assert first.sha256 == sha256(data)
    assert first.archive == task / "environment/original.tar.gz"
    assert first.tree == cache_dir / sha256(data) / "strip-0" / "tree"
    assert first.file_count == len(SAMPLE)
    assert first.total_bytes == sum(len(v) for v in SAMPLE.values())
    assert first.content_digest == content_digest(tree_manifest(first.tree))
    assert first.source == "demo-task/environment/original.tar.gz"
    assert not first.from_cache
    assert "extracting environment/original.tar.gz" in seen
    assert (first.tree / "README.md").stat().st_mode & 0o222 == 0
    second = prepare_state_a(task, None, cache_dir, offline=True)
    assert second.from_cache
    assert (second.tree, second.content_digest) == (first.tree, first.content_digest)


def test_digest_kept_in_tests_data_is_found(tmp_path: Path) -> None:
    data = make_tarball(SAMPLE)
    task = make_task(tmp_path, data, sha256(data), "tests/behavioural/data/original.sha256")
    assert prepare_state_a(task, None, tmp_path / "cache").file_count == len(SAMPLE)


def test_tampered_archive_is_refused_and_nothing_cached(tmp_path: Path) -> None:
    data = make_tarball(SAMPLE)
    pinned = sha256(b"something else")
    task = make_task(tmp_path, data, pinned)
    cache_dir = tmp_path / "cache"
    with pytest.raises(StateAError) as caught:
        prepare_state_a(task, None, cache_dir)
    assert str(caught.value) == (
        f"demo-task: sha256 mismatch for environment/original.tar.gz: expected {pinned} "
        f"(environment/original.sha256), got {sha256(data)}; nothing was kept"
    )
    assert cache_files(cache_dir) == []


def test_archive_kind_must_agree_with_original_sha256(tmp_path: Path) -> None:
    data = make_tarball(SAMPLE, prefix="root")
    task = make_task(tmp_path, data, sha256(data))
    other = "0" * 64
    with pytest.raises(
        StateAError, match=f"disagrees with environment/original.sha256 {sha256(data)}"
    ):
        prepare_state_a(task, StateASource("archive", other), tmp_path / "cache")
    agreed = prepare_state_a(
        task, StateASource("archive", sha256(data), strip_components=1), tmp_path / "cache"
    )
    assert sorted(p for p, _s, _d in tree_manifest(agreed.tree)) == sorted(SAMPLE)
    assert agreed.tree.parent.name == "strip-1"


def test_missing_state_a_is_a_clear_error(tmp_path: Path) -> None:
    task = tmp_path / "empty-task"
    task.mkdir()
    with pytest.raises(
        StateAError,
        match=re.escape(
            "empty-task: no State A: environment/original.tar.gz is missing and task.toml has no"
        ),
    ):
        prepare_state_a(task, None, tmp_path / "cache")
    with pytest.raises(
        StateAError, match=re.escape('kind = "archive" but environment/original.tar.gz is missing')
    ):
        prepare_state_a(task, StateASource("archive", "0" * 64), tmp_path / "cache")


def test_hostile_shipped_archive_leaves_no_cache_entry(tmp_path: Path) -> None:
    data = make_tarball({"../escape": b"x"})
    task = make_task(tmp_path, data, sha256(data))
    cache_dir = tmp_path / "cache"
    with pytest.raises(StateAError, match=re.escape("member '../escape' refused: '..' in path")):
        prepare_state_a(task, None, cache_dir)
    assert cache_files(cache_dir) == []
    assert not (tmp_path / "escape").exists()
