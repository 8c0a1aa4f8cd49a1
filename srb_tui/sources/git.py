"""Check out one exact commit of a git repository into a plain directory (no ``.git``).

Fetches only that commit (``--depth 1``) when the server allows it, otherwise the whole
history as ``git clone --no-checkout`` would; then checks the commit out into a separate
work tree. User and system git configuration are ignored so that no filter, autocrlf or
credential helper changes the bytes or prompts.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from srb_tui.sources.errors import StateAError

TIMEOUT_SEC = 900.0


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "true",
            "LC_ALL": "C",
        }
    )
    return env


def _git(args: list[str], git_dir: Path, what: str) -> str:
    command = [
        "git",
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "core.autocrlf=false",
        "-c",
        "core.symlinks=true",
        "-c",
        "advice.detachedHead=false",
        f"--git-dir={git_dir}",
        *args,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=_env(), timeout=TIMEOUT_SEC, check=False
        )
    except FileNotFoundError as exc:
        raise StateAError("git is not installed on this host") from exc
    except subprocess.TimeoutExpired as exc:
        raise StateAError(f"{what}: git took longer than {TIMEOUT_SEC:.0f} s") from exc
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise StateAError(f"{what}: {detail}")
    return done.stdout


def checkout_commit(
    url: str, commit: str, work: Path, tree: Path, progress: Callable[[str], None] | None = None
) -> None:
    """Fill the new directory ``tree`` with ``commit`` of ``url``; ``work`` holds the
    repository (a scratch directory the caller removes)."""
    git_dir = work / "repo.git"
    _git(["init", "--quiet", "--bare"], git_dir, f"git init for {url}")
    if progress is not None:
        progress(f"fetching {commit[:12]} from {url}")
    try:
        _git(
            ["fetch", "--quiet", "--depth=1", "--no-tags", url, commit],
            git_dir,
            f"fetching commit {commit} from {url}",
        )
    except StateAError:
        if progress is not None:
            progress(f"{url} refuses a single-commit fetch; fetching its whole history")
        _git(
            ["fetch", "--quiet", "--tags", url, "+refs/heads/*:refs/remotes/origin/*"],
            git_dir,
            f"cloning {url}",
        )
    try:
        kind = _git(["cat-file", "-t", commit], git_dir, "checking the commit").strip()
    except StateAError:
        kind = ""
    if kind != "commit":
        raise StateAError(f"{url} has no commit {commit}")
    tree.mkdir()
    _git(
        [f"--work-tree={tree}", "checkout", "--quiet", "--force", "--detach", commit],
        git_dir,
        f"checking out {commit} of {url}",
    )
    head = _git(["rev-parse", "HEAD"], git_dir, "reading HEAD").strip()
    if head != commit:
        raise StateAError(f"checked out {head}, not the pinned commit {commit}")
