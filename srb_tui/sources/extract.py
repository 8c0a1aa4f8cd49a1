"""Safe extraction of a State A archive (tar in any compression, or zip) into a directory.

Refused, with the member named: absolute paths, ``..`` components, links whose target
would resolve outside the tree, hard links to anything but an earlier regular file,
devices, fifos and other special members, writing through a symlink, and archives past
the size or member limits. Owners, setuid bits and timestamps are not restored; a file
keeps only its executable bit. ``strip_components`` drops leading path components the way
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
from typing import IO, Literal

from srb_tui.sources.errors import StateAError, UnsafeArchiveError

MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 8 << 30

MemberType = Literal["file", "dir", "symlink", "hardlink"]


@dataclass(frozen=True)
class _Member:
    name: str
    type: MemberType
    size: int
    executable: bool
    link: str  # symlink target or hard-link source; "" otherwise


def _clean_parts(name: str, archive: str) -> list[str]:
    """Path components of a member name, refusing absolute names and ``..``."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        raise UnsafeArchiveError(f"{archive}: member '{name}' has an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchiveError(f"{archive}: member '{name}' contains '..'")
    return parts


def _strip(parts: list[str], strip: int) -> list[str]:
    return parts[strip:]


def _tar_members(tar: tarfile.TarFile, archive: str) -> Iterator[tuple[_Member, IO[bytes] | None]]:
    for info in tar:
        if info.isreg():
            handle = tar.extractfile(info)
            yield _Member(info.name, "file", info.size, bool(info.mode & 0o111), ""), handle
        elif info.isdir():
            yield _Member(info.name, "dir", 0, False, ""), None
        elif info.issym():
            yield _Member(info.name, "symlink", 0, False, info.linkname), None
        elif info.islnk():
            yield _Member(info.name, "hardlink", 0, False, info.linkname), None
        else:
            what = (
                "device"
                if info.ischr() or info.isblk()
                else "fifo"
                if info.isfifo()
                else "special member"
            )
            raise UnsafeArchiveError(f"{archive}: member '{info.name}' is a {what}")


def _zip_members(zf: zipfile.ZipFile, archive: str) -> Iterator[tuple[_Member, IO[bytes] | None]]:
    for info in zf.infolist():
        mode = info.external_attr >> 16
        if info.is_dir():
            yield _Member(info.filename, "dir", 0, False, ""), None
        elif stat.S_ISLNK(mode):
            target = zf.read(info).decode("utf-8", "surrogateescape")
            yield _Member(info.filename, "symlink", 0, False, target), None
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            raise UnsafeArchiveError(f"{archive}: member '{info.filename}' is a special file")
        else:
            with zf.open(info) as handle:
                yield (
                    _Member(info.filename, "file", info.file_size, bool(mode & 0o111), ""),
                    handle,
                )


class _Writer:
    """Places members under ``root`` after checking each one."""

    def __init__(self, root: Path, archive: str, strip: int) -> None:
        self.root = root
        self.archive = archive
        self.strip = strip
        self.count = 0
        self.total = 0

    def _target(self, member: _Member) -> tuple[str, Path] | None:
        parts = _clean_parts(member.name, self.archive)
        if len(parts) <= self.strip:
            if member.type == "dir" or not parts:
                return None
            raise UnsafeArchiveError(
                f"{self.archive}: member '{member.name}' lies above "
                f"strip_components={self.strip} and would be lost"
            )
        rel = "/".join(_strip(parts, self.strip))
        dest = self.root / rel
        # Never write through a symlink that an earlier member created.
        probe = self.root
        for part in rel.split("/")[:-1]:
            probe = probe / part
            if probe.is_symlink():
                raise UnsafeArchiveError(
                    f"{self.archive}: member '{member.name}' would be written through "
                    f"the symlink '{probe.relative_to(self.root).as_posix()}'"
                )
            if probe.exists() and not probe.is_dir():
                raise UnsafeArchiveError(
                    f"{self.archive}: member '{member.name}' needs '{probe.name}' to be a "
                    "directory, but it is a file"
                )
        return rel, dest

    def _clear(self, dest: Path) -> None:
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            raise UnsafeArchiveError(
                f"{self.archive}: '{dest.relative_to(self.root).as_posix()}' is both a "
                "directory and a file in this archive"
            )

    def add(self, member: _Member, data: IO[bytes] | None) -> None:
        self.count += 1
        if self.count > MAX_MEMBERS:
            raise UnsafeArchiveError(f"{self.archive}: more than {MAX_MEMBERS} members")
        placed = self._target(member)
        if placed is None:
            return
        rel, dest = placed
        if member.type == "dir":
            if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
                self._clear(dest)
            dest.mkdir(parents=True, exist_ok=True)
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        self._clear(dest)
        if member.type == "symlink":
            self._symlink(member, rel, dest)
        elif member.type == "hardlink":
            self._hardlink(member, dest)
        else:
            assert data is not None
            self._file(member, data, dest)

    def _symlink(self, member: _Member, rel: str, dest: Path) -> None:
        target = member.link
        if not target or target.startswith("/"):
            raise UnsafeArchiveError(
                f"{self.archive}: symlink '{member.name}' points to '{target}', an absolute path"
            )
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if resolved == ".." or resolved.startswith("../"):
            raise UnsafeArchiveError(
                f"{self.archive}: symlink '{member.name}' points to '{target}', outside the tree"
            )
        os.symlink(target, dest)

    def _hardlink(self, member: _Member, dest: Path) -> None:
        parts = _strip(_clean_parts(member.link, self.archive), self.strip)
        through_link = any(
            self.root.joinpath(*parts[:i]).is_symlink() for i in range(1, len(parts) + 1)
        )
        source = self.root.joinpath(*parts) if parts else None
        if source is None or through_link or not source.is_file():
            raise UnsafeArchiveError(
                f"{self.archive}: hard link '{member.name}' refers to '{member.link}', "
                "which is not an earlier regular file of the archive"
            )
        shutil.copy2(source, dest, follow_symlinks=False)

    def _file(self, member: _Member, data: IO[bytes], dest: Path) -> None:
        self.total += member.size
        if self.total > MAX_TOTAL_BYTES:
            raise UnsafeArchiveError(
                f"{self.archive}: unpacks to more than {MAX_TOTAL_BYTES} bytes"
            )
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(dest, flags, 0o755 if member.executable else 0o644)
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(data, out, 1 << 20)


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
    check_links_inside(dest, label)


def check_links_inside(root: Path, label: str) -> None:
    """Refuse a tree in which any symlink, fully resolved, lands outside ``root``.

    The per-member check is lexical; a chain of links (``sub/up -> ..`` then
    ``sub/x -> up/..``) can only be judged on the finished tree.
    """
    real_root = os.path.realpath(root)
    for base, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = os.path.join(base, name)
            if not os.path.islink(path):
                continue
            resolved = os.path.realpath(path)
            if os.path.commonpath([real_root, resolved]) != real_root:
                rel = Path(path).relative_to(root).as_posix()
                raise UnsafeArchiveError(
                    f"{label}: symlink '{rel}' -> '{os.readlink(path)}' resolves outside the tree"
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
