"""Stage II: what a module starts itself runs as the submission, and the suite stays the suite.

A module written to the published contract starts submission code itself (``sh build.sh
PREFIX`` in ``$SRB_REPO``, the program it installed, ``make`` in the tree) instead of going
through ``$SRB_SUBMISSION_RUN``. The module is the task's code and runs as the grader's uid
0; what it starts of the tree must not. So a module runs behind the exec boundary Stage III
puts between a candidate and its programs (:mod:`.exec_broker`): the module process installs
the seccomp filter before its command is exec'd, and each exec it (or anything of its own it
starts) makes is classified by the grader. Code under test (a file in ``$SRB_REPO``,
``$SRB_WORK`` or ``$SRB_SUITE_WORK``, a shell or interpreter given a script there, a tool that
loads code started there) is started by the grader as the slot uid, in the module's
descriptors, without ``SRB_*`` names, with the slot's HOME and TMPDIR, umask 002 (the shared
folders are the slot group's, so the module can read and clear what it made); the module's
process becomes the stub that ends as the program ended. A program started from a folder the
slot may not enter (the module's own, under the private ``/tests``) starts in the slot's
``work`` folder instead. Everything else (``readelf``, ``nm``, ``cp``, the module's own
helpers) stays the module's.

The suite's files are digested before the first module and after every module
(:class:`SuiteWatch`): a change is that module's failure, recorded as tampering
(``error``, rate 0), and the modules after it are not run on a changed suite.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import sandbox
from .slot import drop as slot_drop

IGNORED = frozenset({".pytest_cache"})
"""Folders a module's tools may write next to their files (pytest's cache): not loaded as
code, so a change there is not counted as tampering."""
PROGRAM_UMASK = 0o002


def suite_files(root: Path) -> dict[str, str]:
    """Every entry under ``root`` -> what it is (kind, mode, and content hash or link target)."""
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED)
        here = Path(current)
        for name in [*dirs, *files]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            try:
                info = os.lstat(path)
            except OSError as exc:
                found[rel] = f"unreadable {exc.errno}"
                continue
            mode = f"{stat.S_IMODE(info.st_mode):o}"
            if stat.S_ISLNK(info.st_mode):
                found[rel] = f"link {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = f"dir {mode}"
                if path.is_symlink():
                    dirs.remove(name)
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256()
                try:
                    with path.open("rb") as handle:
                        while block := handle.read(1 << 20):
                            digest.update(block)
                except OSError as exc:
                    found[rel] = f"unreadable {exc.errno}"
                    continue
                found[rel] = f"file {mode} {digest.hexdigest()}"
            else:
                found[rel] = f"special {info.st_mode:o}"
    return found


class SuiteWatch:
    """The suite's files as last digested (:func:`suite_files`). The listing taken after one
    module is the one the next module is compared with: between two modules only the
    grader runs (the module's group and every process of the submission's uid have been
    ended), so each boundary between modules is digested once, not twice, and a change made
    between two modules is still caught (by the next module's comparison) rather than
    falling between two digests."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.listing = suite_files(root)

    def changed(self) -> list[str]:
        """What changed since the last digest (:func:`changes`); the new digest is kept."""
        after = suite_files(self.root)
        found = changes(self.listing, after)
        self.listing = after
        return found


def changes(before: Mapping[str, str], after: Mapping[str, str], most: int = 10) -> list[str]:
    """What differs between two :func:`suite_files` listings, one line per entry."""
    lines = [f"{rel} added" for rel in sorted(after.keys() - before.keys())]
    lines += [f"{rel} removed" for rel in sorted(before.keys() - after.keys())]
    lines += [f"{rel} changed" for rel in sorted(before.keys() & after.keys())
              if before[rel] != after[rel]]
    return sorted(lines)[:most]


def tamper_message(changed: list[str]) -> str:
    return ("tampering: the suite's files changed while this module ran (" + "; ".join(changed)
            + "): the module fails, and no later module runs on a changed suite")


def share_folder(path: Path, slot: int) -> None:
    """A grader-made work folder the slot's group may write (sticky, set-group-ID: 3770),
    so the programs a module starts can write $SRB_WORK and $SRB_SUITE_WORK (the install
    prefix of a build) and the module can read and clear what they made, while the slot can
    neither remove nor rename what the module made there. (What the module writes with its
    umask 002 stays group-writable: a module keeps what it compares against in its HOME or
    its suite, not there.)"""
    if not sandbox.enabled():
        return
    os.chown(path, -1, sandbox.slot_ids(slot)[1])
    os.chmod(path, 0o3770)


class ModuleBoundary:
    """The exec broker of one module run (start before the module, :meth:`stop` after)."""

    def __init__(self, *, slot: int, repo: Path, built: list[Path], own: list[Path]) -> None:
        from .exec_broker import Broker

        scratch = sandbox.scratch_dir(slot)
        self.slot = slot
        self.dirs = {name: scratch / name for name in ("home", "tmp", "work")}
        limits = sandbox.load_limits()
        make = tuple(str(p) for p in self.dirs.values())

        def become(folder: str) -> Callable[[], None]:
            def enter() -> None:
                try:
                    slot_drop(slot, limits, folder, make)()
                except PermissionError:  # the module's own folder: the slot's work instead
                    os.chdir(self.dirs["work"])
                os.umask(PROGRAM_UMASK)

            return enter

        self.broker = Broker(
            tree=[str(repo)],
            built=[str(p) for p in built],
            own=[str(p) for p in own],
            become=become,
            program_env=self._program_env,
            passes=sandbox.slot_ids(slot)[0],
        )
        self._send = self.broker.child_fd
        self.broker.start()

    def _program_env(self, seen: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
        """What the launcher gives submission code (:func:`.slot.submission_env`), in bytes."""
        text = {os.fsdecode(k): os.fsdecode(v) for k, v in seen.items()}
        env = sandbox.submission_env(text, home=str(self.dirs["home"]),
                                     tmpdir=str(self.dirs["tmp"]))
        return {os.fsencode(k): os.fsencode(v) for k, v in env.items()}

    def preexec(self) -> None:
        """In the module's child, last before its command is exec'd: the filter."""
        from .seccomp import install_filter

        install_filter(self._send)

    def launched(self, pid: int) -> None:
        self.broker.launched(pid)

    def stop(self) -> dict[str, Any]:
        return self.broker.stop().summary()


def boundary_for(slot: int, repo: Path, built: list[Path], own: list[Path]) -> tuple[
        ModuleBoundary | None, str]:
    """The module's exec boundary, or None and why not (outside a stage container the
    module and what it starts share the caller's identity anyway)."""
    if not sandbox.enabled():
        return None, ""
    from .exec_broker import supported

    why_not = supported()
    if why_not is not None:
        return None, why_not
    return ModuleBoundary(slot=slot, repo=repo, built=built, own=own), ""


def resolve_command(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """``argv`` with its program found on the module's PATH: one exec, which the broker
    lets through as the module's own."""
    if "/" in argv[0]:
        return argv
    found = shutil.which(argv[0], path=env.get("PATH"))
    return [found or argv[0], *argv[1:]]
