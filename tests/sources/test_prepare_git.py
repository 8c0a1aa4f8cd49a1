"""prepare_state_a for the git kind against a local repository made in tmp (file:// URL)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from srb_tui.schema.state_a import StateASource
from srb_tui.sources import StateAError, content_digest, prepare_state_a, tree_manifest
from tests.sources.helpers import cache_files

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=GIT_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two commits; returns (path, first commit, second commit)."""
    path = tmp_path / "upstream"
    path.mkdir()
    git(path, "init", "-q")
    (path / "src").mkdir()
    (path / "src/lib.py").write_text("X = 1\n")
    (path / "README").write_text("v1\n")
    os.symlink("src/lib.py", path / "lib-link")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "one")
    first = git(path, "rev-parse", "HEAD")
    (path / "README").write_text("v2\n")
    (path / "NEW").write_text("added later\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "two")
    return path, first, git(path, "rev-parse", "HEAD")


def expected_digest(tmp_path: Path, files: dict[str, str], link: tuple[str, str]) -> str:
    tree = tmp_path / "expected"
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    os.symlink(link[1], tree / link[0])
    return content_digest(tree_manifest(tree))


def test_git_pins_the_commit_and_checks_content(
    repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    path, first, _second = repo
    digest = expected_digest(
        tmp_path, {"src/lib.py": "X = 1\n", "README": "v1\n"}, ("lib-link", "src/lib.py")
    )
    task = tmp_path / "git-task"
    task.mkdir()
    source = StateASource("git", digest, url=path.as_uri(), commit=first)
    cache_dir = tmp_path / "cache"
    seen: list[str] = []
    prepared = prepare_state_a(task, source, cache_dir, progress=seen.append)
    assert seen[0] == f"fetching {first[:12]} from {path.as_uri()}"
    assert not any("whole history" in line for line in seen)  # single-commit fetch sufficed
    assert prepared.archive is None
    assert prepared.content_digest == digest
    assert (prepared.tree / "README").read_text() == "v1\n"  # the pinned commit, not HEAD
    assert not (prepared.tree / "NEW").exists()
    assert not (prepared.tree / ".git").exists()
    assert os.readlink(prepared.tree / "lib-link") == "src/lib.py"
    assert prepared.source == f"git {path.as_uri()} @ {first}"
    assert sorted(os.listdir(cache_dir)) == [digest]
    again = prepare_state_a(task, source, cache_dir, offline=True)
    assert again.from_cache and again.tree == prepared.tree


def test_git_content_mismatch_names_both_digests(
    repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    path, _first, second = repo
    task = tmp_path / "git-task"
    task.mkdir()
    pinned = "e" * 64
    cache_dir = tmp_path / "cache"
    with pytest.raises(StateAError) as caught:
        prepare_state_a(
            task, StateASource("git", pinned, url=path.as_uri(), commit=second), cache_dir
        )
    message = str(caught.value)
    assert message.startswith(
        f"git-task: sha256 mismatch for the content of {path.as_uri()} "
        f"@ {second}: expected {pinned} (task.toml [srb.state_a].sha256, "
        "a content digest), got "
    )
    assert "(4 files); nothing was kept" in message
    assert cache_files(cache_dir) == []


def test_git_unknown_commit_and_offline(repo: tuple[Path, str, str], tmp_path: Path) -> None:
    path, _first, _second = repo
    task = tmp_path / "git-task"
    task.mkdir()
    missing = "1" * 40
    source = StateASource("git", "e" * 64, url=path.as_uri(), commit=missing)
    with pytest.raises(StateAError, match=f"^git-task: {path.as_uri()} has no commit {missing}$"):
        prepare_state_a(task, source, tmp_path / "cache")
    with pytest.raises(StateAError, match=r"^git-task: offline, and State A \(git "):
        prepare_state_a(task, source, tmp_path / "cache", offline=True)
    assert cache_files(tmp_path / "cache") == []
