"""Safe extraction of a State A archive (tar in any compression, or zip) into a directory.

The member rules are srb's one extraction policy (:mod:`srb_tui.extract_policy`, shared
with the submission collector): absolute paths, ``..`` components, links whose target
would resolve outside the tree, hard links to anything but an earlier regular file,
devices, fifos and other special members, writing through a symlink, the per-file,
member-count and total-size caps, and tarfile's own ``data`` filter (zip members are
judged by it too). Here the first refused member refuses the archive, with the member
named. Owners, setuid bits and timestamps are not restored; a file keeps only its
executable bit. ``strip_components`` drops leading path components the way
``tar --strip-components`` does, except that a file shallower than the strip is an error
rather than silently lost.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from srb_tui.extract_policy import (
    CapExceeded,
    Caps,
    MemberKind,
    Refused,
    Tree,
    escaping_links,
    kind_of,
    kind_refusal,
    member_parts,
)
from srb_tui.sources.errors import StateAError, UnsafeArchiveError

MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 8 << 30
MAX_FILE_BYTES = 4 << 30
CAPS = Caps(max_members=MAX_MEMBERS, max_total_bytes=MAX_TOTAL_BYTES,
            max_file_bytes=MAX_FILE_BYTES)


@dataclass(frozen=True)
class _Member:
    """One archive member as the extraction policy sees it."""

    name: str
    type: MemberKind
    size: int
    executable: bool
    link: str  # symlink target or hard-link source; "" otherwise


def _clean_parts(name: str, archive: str) -> list[str]:
    """Path components of a member name, refusing absolute names and ``..``."""
    try:
        return member_parts(name)
    except Refused as why:
        raise UnsafeArchiveError(f"{archive}: member '{name}' refused: {why}") from None


def _strip(parts: list[str], strip: int) -> list[str]:
    return parts[strip:]


def _tar_members(tar: tarfile.TarFile, archive: str) -> Iterator[tuple[_Member, IO[bytes] | None]]:
    for info in tar:
        kind = kind_of(info)
        handle = tar.extractfile(info) if kind == "file" else None
        link = info.linkname if kind in ("symlink", "hardlink") else ""
        yield _Member(info.name, kind, info.size if kind == "file" else 0,
                      bool(info.mode & 0o111), link), handle


def _zip_members(zf: zipfile.ZipFile, archive: str) -> Iterator[tuple[_Member, IO[bytes] | None]]:
    for info in zf.infolist():
        mode = info.external_attr >> 16
        if info.is_dir():
            yield _Member(info.filename, "dir", 0, False, ""), None
        elif stat.S_ISLNK(mode):
            target = zf.read(info).decode("utf-8", "surrogateescape")
            yield _Member(info.filename, "symlink", 0, False, target), None
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            yield _Member(info.filename, "other", 0, False, ""), None
        else:
            with zf.open(info) as handle:
                yield (
                    _Member(info.filename, "file", info.file_size, bool(mode & 0o111), ""),
                    handle,
                )


class _Writer:
    """Places members under ``root`` after the policy accepted each one."""

    def __init__(self, root: Path, archive: str, strip: int) -> None:
        self.root = root
        self.archive = archive
        self.strip = strip
        self.tree = Tree(CAPS)

    @property
    def count(self) -> int:
        return self.tree.members

    def refuse(self, member: _Member, why: object) -> UnsafeArchiveError:
        return UnsafeArchiveError(f"{self.archive}: member '{member.name}' refused: {why}")

    def add(self, member: _Member, data: IO[bytes] | None) -> None:
        try:
            self._add(member, data)
        except Refused as why:
            raise self.refuse(member, why) from None
        except CapExceeded as cap:
            raise UnsafeArchiveError(f"{self.archive}: archive is {cap}") from None

    def _add(self, member: _Member, data: IO[bytes] | None) -> None:
        refusal = kind_refusal(member.type)
        if refusal is not None:
            raise Refused(refusal)
        parts = member_parts(member.name)
        if len(parts) <= self.strip:
            if member.type == "dir" or not parts:
                return
            raise UnsafeArchiveError(
                f"{self.archive}: member '{member.name}' lies above "
                f"strip_components={self.strip} and would be lost"
            )
        rel = "/".join(_strip(parts, self.strip))
        tree = self.tree
        link = tree.judge(str(self.root), rel, member.type, member.link,
                          lambda name: _strip(member_parts(name), self.strip))
        dest = self.root / rel
        if member.type == "dir":
            if rel in tree.files or rel in tree.links:
                raise Refused("a file of the same name was placed before it")
            tree.count(0)
            dest.mkdir(parents=True, exist_ok=True)
            self._parents(rel)
            tree.dirs.add(rel)
            return
        if rel in tree.dirs:
            raise Refused("a directory of the same name was placed before it")
        if member.type == "file":
            tree.check_file_size(member.size)
        tree.count(member.size)
        dest.parent.mkdir(parents=True, exist_ok=True)
        self._parents(rel)
        if rel in tree.files or rel in tree.links:
            dest.unlink()  # a later member of the same name replaces the earlier one
            tree.files.discard(rel)
            tree.links.discard(rel)
        if member.type == "symlink":
            os.symlink(link, dest)
            tree.links.add(rel)
            return
        if member.type == "hardlink":
            shutil.copy2(self.root / link, dest, follow_symlinks=False)
        else:
            assert data is not None
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(dest, flags, 0o755 if member.executable else 0o644)
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(data, out, 1 << 20)
        tree.files.add(rel)

    def _parents(self, rel: str) -> None:
        parent = posixpath.dirname(rel)
        while parent and parent not in self.tree.dirs:
            self.tree.dirs.add(parent)
            parent = posixpath.dirname(parent)


def safe_extract(archive: Path, dest: Path, strip_components: int = 0) -> None:
    """Extract ``archive`` into the existing empty directory ``dest`` (see module doc)."""
    label = archive.name
    writer = _Writer(dest, label, strip_components)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for member, data in _zip_members(zf, label):
                    writer.add(member, data)
        else:
            with tarfile.open(archive, "r:*") as tar:
                for member, data in _tar_members(tar, label):
                    writer.add(member, data)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        if isinstance(exc, tarfile.ReadError) and writer.count == 0:
            raise StateAError(f"{label}: not a tar or zip archive ({exc})") from exc
        raise StateAError(f"{label}: cannot be extracted: {exc}") from exc
    # The per-member checks cannot see a chain of links (``sub/x -> up/..`` made before
    # ``sub/up -> ..``); the finished tree is resolved once more.
    for rel in escaping_links(str(dest), writer.tree.links):
        raise UnsafeArchiveError(
            f"{label}: symlink '{rel}' -> '{os.readlink(dest / rel)}' resolves outside the tree"
        )


def make_read_only(root: Path) -> None:
    """Drop write permission from every file under ``root`` (directories stay writable,
    so the cache can still be cleared)."""
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = Path(base, name)
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            path.chmod(stat.S_IMODE(mode) & ~0o222)
