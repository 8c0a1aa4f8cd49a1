"""How srb reads a submission's files on the host: one policy for every screen and export.

A submission is written by the agent under test, so a file in it may be a symbolic link
out of the tree (``lib -> /etc``), a FIFO that blocks whoever opens it, a device, or a
file of many gigabytes, and a name may hold control characters that would drive the
operator's terminal. Everything srb reads from such a tree on the host goes through here:

- :func:`open_in_tree` opens ``root/rel`` one component at a time relative to the
  previous folder's descriptor with ``O_NOFOLLOW``, so no link, in any component, is
  followed; the final open is ``O_NONBLOCK`` (a FIFO cannot block) and anything that is
  not a regular file is refused after ``fstat``;
- :func:`read_in_tree` reads at most ``cap`` bytes and says whether there was more;
- :func:`link_target` reads a link itself (never through it);
- :func:`display_name` escapes control characters visibly (``\\x1b``, ``\\n``), so a
  name shows what it is and cannot forge another name on screen.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CAP = 4_000_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class UnsafeRead(OSError):
    """The path leaves the tree, is a link, or is not a regular file; the message says
    which (it is an OSError so callers that report unreadable files report this too)."""


@dataclass(frozen=True)
class ReadResult:
    """Bytes read from a tree without following links, with the file's real size."""

    data: bytes
    size: int  # the file's size on disk (``data`` may be shorter: see ``truncated``)
    truncated: bool


def _parts(rel: str | Path) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UnsafeRead(f"{rel}: not a path inside the tree")
    return parts


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _open_parent(root: Path, parts: list[str]) -> int:
    """A descriptor of the folder holding ``parts[-1]``, every component link-free."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as err:
                raise UnsafeRead(f"{'/'.join(parts)}: {name} is not a plain folder "
                                 f"({err.strerror or err})") from err
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_in_tree(root: Path, rel: str | Path) -> int:
    """An ``O_RDONLY`` descriptor of the regular file ``root/rel`` (caller closes it)."""
    parts = _parts(rel)
    parent = _open_parent(root, parts)
    try:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
        except OSError as err:
            if err.errno == errno.ELOOP:  # the name is a symbolic link
                raise UnsafeRead(f"{rel}: a symbolic link, not followed") from err
            raise
    finally:
        os.close(parent)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeRead(f"{rel}: {_kind(mode)}, not read")
    return fd


def read_in_tree(root: Path, rel: str | Path, cap: int = DEFAULT_CAP) -> ReadResult:
    """At most ``cap`` bytes of the regular file ``root/rel``; UnsafeRead (an OSError)
    when it is a link, a FIFO, a device or outside the tree."""
    fd = open_in_tree(root, rel)
    try:
        size = os.fstat(fd).st_size
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return ReadResult(data[:cap], max(size, len(data)), len(data) > cap)


def is_link_in_tree(root: Path, rel: str | Path) -> bool:
    """Whether ``root/rel`` is itself a symbolic link (its folders must be plain)."""
    parts = _parts(rel)
    parent = _open_parent(root, parts)
    try:
        return stat.S_ISLNK(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False
    finally:
        os.close(parent)


def link_target(root: Path, rel: str | Path) -> str:
    """The text of the link ``root/rel`` (read, never followed)."""
    parts = _parts(rel)
    parent = _open_parent(root, parts)
    try:
        return os.readlink(parts[-1], dir_fd=parent)
    finally:
        os.close(parent)


def exists_in_tree(root: Path, rel: str | Path) -> bool:
    """Whether ``root/rel`` names anything (a link counts; its folders must be plain)."""
    try:
        parts = _parts(rel)
        parent = _open_parent(root, parts)
    except OSError:
        return False
    try:
        os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        return True
    except OSError:
        return False
    finally:
        os.close(parent)


def open_regular(path: str | Path) -> int:
    """An ``O_RDONLY`` descriptor of ``path`` when its last component is a regular file
    (not a link, FIFO or device); for callers that walked the tree without following
    links and only need the final name checked."""
    fd = os.open(path, _FILE_FLAGS)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeRead(f"{path}: {_kind(mode)}, not read")
    return fd


def lines_around(root: Path | None, rel: str, line: int | None, *, context: int = 12,
                 cap: int = DEFAULT_CAP) -> tuple[list[tuple[int, str]], str | None]:
    """The lines of ``root/rel`` within ``context`` of ``line`` as ``(number, text)``, read
    under this module's policy (no link followed, no FIFO opened, at most ``cap`` bytes),
    or no lines and what stopped the read (for a cited piece of evidence)."""
    if root is None:
        return [], "tree not available"
    try:
        read = read_in_tree(root, rel, cap)
    except FileNotFoundError:
        return [], f"{display_name(rel)}: not in this tree"
    except OSError as exc:
        return [], str(exc) if isinstance(exc, UnsafeRead) else \
            f"{display_name(rel)}: {exc.strerror or exc}"
    lines = read.data.decode("utf-8", errors="replace").splitlines()
    if read.truncated:
        lines = lines[:-1]  # the last one may be cut mid-line
    centre = line or 1
    if read.truncated and centre > len(lines):
        return [], f"{display_name(rel)}: line {centre} lies beyond the first {cap:,} bytes"
    start, end = max(1, centre - context), min(len(lines), centre + context)
    return [(n, lines[n - 1]) for n in range(start, end + 1)], None


def display_name(name: str) -> str:
    """``name`` with control and other invisible format characters escaped visibly
    (``\\n``, ``\\x1b``, ``\\u202e``) and backslashes doubled, so what the operator sees
    is unambiguous and cannot move the cursor or recolour the terminal."""
    out: list[str] = []
    for ch in name:
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or ch == "\x7f":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


__all__ = [
    "DEFAULT_CAP",
    "ReadResult",
    "UnsafeRead",
    "display_name",
    "exists_in_tree",
    "is_link_in_tree",
    "lines_around",
    "link_target",
    "open_in_tree",
    "open_regular",
    "read_in_tree",
]
