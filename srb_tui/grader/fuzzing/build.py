"""Stage III: building a tree before it is fuzzed (probe.toml ``[metadata] fuzz_build``).

A build-toolchain task ships sources, not a program: its probe names a script under
``tests/verification`` (``fuzz_build = "fuzz-build.sh"``) and ``fuzz_entry`` names what that
script leaves in the tree (``stage/bin/greet``). Before a tree's first fuzz execution the
script runs as ``sh SCRIPT TREE`` with the working folder TREE:

* as the round's slot uid (the build is the program's side of the Stage III boundary: it
  runs the tree's own Makefile or CMakeLists), in a folder of the grader's lent to the slot's
  group, with no network (the stage container has none) and its own time limit; the slot is
  ended whole when it returns;
* once per tree content: the result (the built tree, or the failure and its log) is kept
  under the cache folder by the digest of the tree and of the script, behind a file lock, so
  six concurrent rounds, or two trees with the same content, build it once;
* what it leaves is copied back into a grader-owned tree (regular files, folders and links
  only: a FIFO or device left by a build is refused, it would hang the copy), which the
  fuzzer parks and mounts like any other tree.

A build that fails on State A is a harness fault (the round is invalid); one that fails on
the submission is the submission's own failure: the fuzzer sees it as a program that does not
start, and the candidate it writes builds the tree the same way first (so it passes on State
A and fails on the submission: a break).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..boundary import sandbox
from ..boundary.lockdown import tree_digest
from ..boundary.wipe import remove_owned

DEFAULT_BUILD_TIMEOUT_SEC = 300.0
LOG_TAIL_BYTES = 4000


@dataclass(frozen=True)
class BuildSpec:
    """How a tree is built before it is fuzzed (from the fuzz CLI's --build options)."""

    script: Path
    """the build script, as the grader and the slot see it (under /tests/verification)"""
    timeout_sec: float = DEFAULT_BUILD_TIMEOUT_SEC
    cache: Path | None = None
    """where built trees are kept by content (default: ``builds`` beside the round's work
    folder, which every round of the stage shares)"""


@dataclass(frozen=True)
class BuildResult:
    """A built tree (``tree``) or why the build failed (``error``, with the log's tail)."""

    tree: Path | None
    error: str | None
    cached: bool
    log_tail: str = ""


class BuildFault(Exception):
    """The harness could not run the build at all (not a finding about either tree)."""


def build_key(tree: Path, script: Path) -> str:
    """The cache key: the tree's content digest and the script's bytes."""
    digest = hashlib.sha256()
    digest.update(tree_digest(tree).encode())
    digest.update(b"\0")
    digest.update(script.read_bytes())
    return digest.hexdigest()[:32]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _plain_only(folder: str, names: list[str]) -> list[str]:
    """copytree's ``ignore``: nothing but regular files, folders and links is copied; the
    rest is collected by :func:`_copy_back` as a refusal."""
    odd = []
    for name in names:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            odd.append(name)
    return odd


def _copy_back(built: Path, dest: Path) -> str | None:
    """Copy what the build left into a grader-owned ``dest``; an error text or None."""
    odd: list[str] = []

    def ignore(folder: str, names: list[str]) -> list[str]:
        found = _plain_only(folder, names)
        odd.extend(os.path.join(folder, n) for n in found)
        return found

    try:
        shutil.copytree(built, dest, symlinks=True, ignore=ignore)
        os.chmod(dest, 0o755)
    except (OSError, shutil.Error) as exc:
        return f"cannot copy the built tree back: {exc}"
    if odd:
        return f"the build left files that are not regular files, folders or links: {odd[:3]}"
    return None


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-LOG_TAIL_BYTES:].decode("utf-8", "replace")


def _share_with_grader(slot: int, folder: Path) -> None:
    """As the slot: make everything it wrote under ``folder`` readable by its group (the
    grader has joined it), so the grader can copy the product back."""

    def widen() -> None:
        for current, dirs, files in os.walk(folder):
            for name in [".", *dirs, *files]:
                path = os.path.join(current, name)
                with contextlib.suppress(OSError):
                    if not os.path.islink(path) and os.lstat(path).st_uid == os.getuid():
                        mode = stat.S_IMODE(os.lstat(path).st_mode)
                        os.chmod(path, mode | 0o040 | (0o010 if mode & 0o111 or
                                                       os.path.isdir(path) else 0))

    sandbox.run_as_slot(slot, widen)


def _run_build(spec: BuildSpec, tree: Path, slot: int, room: Path, dest: Path) -> BuildResult:
    """Copy ``tree`` into ``room`` (a folder lent to the slot's group), build it there as the
    slot, and copy the product to ``dest`` as the grader."""
    work, home, log = room / "tree", room / "home", room / "build.log"
    if sandbox.enabled():
        sandbox.give_to_slot(room, slot, 0o770)
        if sandbox.copy_as_slot(slot, tree, work) != 0:
            raise BuildFault(f"cannot copy {tree} for the build as slot {slot}")
        if sandbox.run_as_slot(slot, home.mkdir) != 0:
            raise BuildFault(f"cannot make the build's HOME as slot {slot}")
    else:
        shutil.copytree(tree, work, symlinks=True)
        home.mkdir()
    env = sandbox.submission_env(os.environ, home=str(home), tmpdir=str(home))
    with log.open("wb") as out:
        try:
            code, timed_out, duration, start_error, _ = sandbox.run_in_slot(
                ["sh", str(spec.script), str(work)], slot=slot, cwd=str(work), env=env,
                timeout_sec=spec.timeout_sec, stdout=out, stderr=out,
            )  # fmt: skip
        except sandbox.SandboxError as exc:
            raise BuildFault(str(exc)) from None
    if sandbox.enabled():
        _share_with_grader(slot, room)
    tail = _tail(log)
    if start_error is not None:
        raise BuildFault(f"the build script did not start: {start_error}")
    if timed_out or code != 0:
        why = f"timed out after {spec.timeout_sec:g} s" if timed_out else f"exited {code}"
        return BuildResult(None, f"fuzz_build {spec.script.name} {why} ({duration:.1f} s)",
                           False, tail)
    problem = _copy_back(work, dest)
    if problem is not None:
        shutil.rmtree(dest, ignore_errors=True)
        return BuildResult(None, problem, False, tail)
    return BuildResult(dest, None, False, tail)


def _discard_room(slot: int, room: Path) -> None:
    """Remove what the slot wrote in ``room`` (as the slot), then the room (as the grader)."""
    if sandbox.enabled():

        def wipe() -> None:
            for name in ("tree", "home"):
                if (room / name).exists():
                    remove_owned(room / name)

        sandbox.kill_slot(slot)
        sandbox.run_as_slot(slot, wipe)
    shutil.rmtree(room, ignore_errors=True)


def build_tree(spec: BuildSpec, tree: Path, slot: int, cache: Path, rooms: Path) -> BuildResult:
    """``tree`` built by ``spec`` (from ``cache`` when this content was built before);
    ``rooms`` is a folder the slot may reach (the build runs in a fresh folder below it)."""
    cache.mkdir(parents=True, exist_ok=True)
    try:
        key = build_key(tree, spec.script)
    except OSError as exc:
        raise BuildFault(f"cannot read the tree or the build script: {exc}") from None
    built, record = cache / key, cache / f"{key}.json"
    with _locked(cache / f"{key}.lock"):
        if record.is_file():
            doc = json.loads(record.read_text(encoding="utf-8"))
            error = doc.get("error")
            return BuildResult(None if error else built, error, True, str(doc.get("log_tail")))
        shutil.rmtree(built, ignore_errors=True)
        rooms.mkdir(parents=True, exist_ok=True)
        room = Path(tempfile.mkdtemp(prefix="build.", dir=rooms))
        try:
            result = _run_build(spec, tree, slot, room, built)
        finally:
            _discard_room(slot, room)
        tmp = record.with_suffix(".tmp")
        tmp.write_text(json.dumps({"error": result.error, "log_tail": result.log_tail}),
                       encoding="utf-8")
        os.replace(tmp, record)
        return result
