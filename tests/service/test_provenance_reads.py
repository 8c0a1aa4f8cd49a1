"""What the launch record reads of srb and of the task (srb_tui.service.provenance):
srb's source commit, read once a process and possibly early on a thread
(srb_tui.service.source_commit), and the task's digest, walked with os.scandir, which must
name the files ``rglob`` named before it, and not read again while every file is the same."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from srb_tui.service import provenance
from srb_tui.service import source_commit as sc
from srb_tui.service.provenance import _SKIP_PARTS, source_commit, task_digest
from srb_tui.store.provenance import NOT_A_CHECKOUT


def _rglob_digest(task_dir: Path) -> str:
    """The digest as it was computed before the walk used os.scandir."""
    digest = hashlib.sha256()
    files = sorted((p.relative_to(task_dir).as_posix(), p) for p in task_dir.rglob("*")
                   if p.is_file() and not _SKIP_PARTS.intersection(p.parts))
    for rel, path in files:
        data = path.read_bytes()
        digest.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    return "sha256:" + digest.hexdigest()


def _tree(root: Path) -> Path:
    task = root / "task"
    (task / "environment" / "deep" / "er").mkdir(parents=True)
    (task / "task.toml").write_text("id = 'x'\n")
    (task / ".hidden").write_text("dot file\n")
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "environment" / "deep" / "er" / "a b.txt").write_bytes(b"\x00\xff" * 100)
    (task / "environment" / "deep" / "Z.txt").write_text("upper case sorts first\n")
    for skipped in ("__pycache__", ".git", ".pytest_cache", ".ruff_cache"):
        (task / "environment" / skipped).mkdir()
        (task / "environment" / skipped / "f").write_text("left out\n")
    (task / "sub.git").mkdir()  # not a skipped name: kept
    (task / "sub.git" / "f").write_text("kept\n")
    (task / "gitfile").mkdir()
    (task / "gitfile" / ".git").write_text("gitdir: elsewhere\n")  # a file named .git
    outside = root / "outside"
    (outside / "inner").mkdir(parents=True)
    (outside / "target.txt").write_text("through a link\n")
    (outside / "inner" / "g").write_text("behind a linked folder\n")
    (task / "linked.txt").symlink_to(outside / "target.txt")
    (task / "linked-dir").symlink_to(outside / "inner", target_is_directory=True)
    (task / "dangling").symlink_to(root / "nowhere")
    (task / "empty").mkdir()
    return task


def test_the_scandir_walk_digests_what_rglob_did(tmp_path: Path) -> None:
    task = _tree(tmp_path)
    assert task_digest(task) == _rglob_digest(task)
    (task / "environment" / "deep" / "Z.txt").write_text("changed\n")
    assert task_digest(task) == _rglob_digest(task)


def test_a_task_under_a_skipped_folder_digests_as_empty_as_before(tmp_path: Path) -> None:
    task = _tree(tmp_path / ".git")
    assert task_digest(task) == _rglob_digest(task) == "sha256:" + hashlib.sha256().hexdigest()


def test_the_digest_changes_with_a_file(tmp_path: Path) -> None:
    task = _tree(tmp_path)
    before = task_digest(task)
    (task / "task.toml").write_text("id = 'y'\n")
    assert task_digest(task) != before


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    (root / "m.py").write_text("x = 1\n")
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL",
                 "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "t")
    _git(root, "init", "-q")
    _git(root, "add", "m.py")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_a_checkout_is_read_once_a_process_even_early(checkout: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []
    real = sc._git

    def counting(root: Path, *args: str) -> str | None:
        calls.append(args)
        return real(root, *args)

    monkeypatch.setattr(sc, "_git", counting)
    head = _git(checkout, "rev-parse", "HEAD")
    sc.read_early(checkout)
    sc.read_early(checkout)
    assert source_commit(checkout) == head
    (checkout / "m.py").write_text("x = 2\n")  # dirty now, but read already
    assert source_commit(checkout) == head
    assert [c[0] for c in calls] == ["rev-parse", "status"]


def test_a_dirty_checkout_read_now(checkout: Path) -> None:
    (checkout / "m.py").write_text("x = 3\n")
    assert source_commit(checkout) == _git(checkout, "rev-parse", "HEAD") + "+dirty"


def test_a_folder_outside_git_is_not_a_checkout(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    sc.read_early(tmp_path / "plain")
    assert source_commit(tmp_path / "plain") == NOT_A_CHECKOUT
    assert sc.source_commit(tmp_path / "plain") is None


def test_a_second_digest_reads_no_file_that_is_still_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = _tree(tmp_path)
    first = task_digest(task)
    opened: list[str] = []

    def counting_open(path: str, mode: str = "r") -> object:
        opened.append(path)
        return open(path, mode)

    monkeypatch.setattr(provenance, "open", counting_open, raising=False)
    assert task_digest(task) == first and opened == []
    (task / "new.txt").write_text("one more\n")
    assert task_digest(task) == _rglob_digest(task) != first
    assert len(opened) > 1  # read again, every file


def test_a_same_size_edit_with_its_time_put_back_is_still_seen(tmp_path: Path) -> None:
    task = _tree(tmp_path)
    target = task / "task.toml"
    before = task_digest(task)
    st = target.stat()
    target.write_text("id = 'z'\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime as it was; ctime moves
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    assert task_digest(task) == _rglob_digest(task) != before
