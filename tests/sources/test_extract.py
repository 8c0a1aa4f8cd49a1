"""safe_extract against well-formed and hostile archives."""

from __future__ import annotations

import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from srb_tui.sources import StateAError, UnsafeArchiveError, safe_extract, tree_manifest
from tests.sources.helpers import SAMPLE, make_tarball


def hostile(tmp_path: Path, *members: tarfile.TarInfo, data: bytes = b"x") -> Path:
    path = tmp_path / "hostile.tar"
    with tarfile.open(path, "w") as tar:
        for info in members:
            if info.isreg():
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    return info


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


def test_extracts_with_strip_and_keeps_exec_bit(tmp_path: Path, dest: Path) -> None:
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(make_tarball(SAMPLE, prefix="pkg-1.0"))
    safe_extract(archive, dest, strip_components=1)
    assert [p for p, _s, _d in tree_manifest(dest)] == sorted(SAMPLE)
    assert (dest / "pkg/core.py").read_bytes() == SAMPLE["pkg/core.py"]
    assert os.access(dest / "run.sh", os.X_OK)
    assert not os.access(dest / "README.md", os.X_OK)


def test_extracts_zip_and_internal_links(tmp_path: Path, dest: Path) -> None:
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("p/a.txt", "hello")
        link = zipfile.ZipInfo("p/b.txt")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "a.txt")
    safe_extract(archive, dest, strip_components=1)
    assert (dest / "a.txt").read_text() == "hello"
    assert os.readlink(dest / "b.txt") == "a.txt"


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([member("/etc/evil")], "hostile.tar: member '/etc/evil' refused: absolute path"),
        ([member("a/../../evil")], "hostile.tar: member 'a/../../evil' refused: '..' in path"),
        (
            [member("link", tarfile.SYMTYPE, "../outside")],
            "hostile.tar: member 'link' refused: symbolic link points outside the tree "
            "(../outside)",
        ),
        (
            [member("link", tarfile.SYMTYPE, "/etc/passwd")],
            "hostile.tar: member 'link' refused: symbolic link to absolute path /etc/passwd",
        ),
        ([member("dev", tarfile.CHRTYPE)], "hostile.tar: member 'dev' refused: device file"),
        ([member("blk", tarfile.BLKTYPE)], "hostile.tar: member 'blk' refused: device file"),
        (
            [member("pipe", tarfile.FIFOTYPE)],
            "hostile.tar: member 'pipe' refused: FIFO (named pipe)",
        ),
        (
            [member("hard", tarfile.LNKTYPE, "/etc/passwd")],
            "hostile.tar: member 'hard' refused: hard link to /etc/passwd, outside the tree",
        ),
        (
            [member("d", tarfile.SYMTYPE, "."), member("d/x")],
            "hostile.tar: member 'd/x' refused: path goes through the symbolic link d",
        ),
        (
            # made after the link it goes through: tarfile's data filter resolves it
            [
                member("sub", tarfile.DIRTYPE),
                member("sub/up", tarfile.SYMTYPE, ".."),
                member("sub/x", tarfile.SYMTYPE, "up/.."),
            ],
            "hostile.tar: member 'sub/x' refused: refused by tarfile's data filter: 'sub/x' "
            "would link to '{outside}', which is outside the destination",
        ),
        (
            # made before it: only the check of the finished tree sees the chain
            [
                member("sub", tarfile.DIRTYPE),
                member("sub/x", tarfile.SYMTYPE, "up/.."),
                member("sub/up", tarfile.SYMTYPE, ".."),
            ],
            "hostile.tar: symlink 'sub/x' -> 'up/..' resolves outside the tree",
        ),
        ([member("C:/evil")], "hostile.tar: member 'C:/evil' refused: absolute path"),
        (
            [member("empty", tarfile.SYMTYPE, "")],
            "hostile.tar: member 'empty' refused: symbolic link with an empty target",
        ),
    ],
)
def test_hostile_members_are_refused(
    tmp_path: Path, dest: Path, members: list[tarfile.TarInfo], message: str
) -> None:
    with pytest.raises(UnsafeArchiveError) as caught:
        safe_extract(hostile(tmp_path, *members), dest)
    assert str(caught.value) == message.format(outside=os.path.realpath(tmp_path))
    assert not (tmp_path / "evil").exists()
    assert not (tmp_path / "outside").exists()


def test_file_above_strip_is_an_error(tmp_path: Path, dest: Path) -> None:
    archive = hostile(tmp_path, member("top.txt"), member("pkg/a.txt"))
    with pytest.raises(
        UnsafeArchiveError,
        match=re.escape("member 'top.txt' lies above strip_components=1 and would be lost"),
    ):
        safe_extract(archive, dest, strip_components=1)


def test_hardlink_to_earlier_file_is_copied(tmp_path: Path, dest: Path) -> None:
    archive = hostile(
        tmp_path, member("a.txt"), member("b.txt", tarfile.LNKTYPE, "a.txt"), data=b"same"
    )
    safe_extract(archive, dest)
    assert (dest / "b.txt").read_bytes() == b"same"
    assert (dest / "a.txt").stat().st_ino != (dest / "b.txt").stat().st_ino


def test_not_an_archive(tmp_path: Path, dest: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"this is not an archive")
    with pytest.raises(StateAError, match=r"^junk.tar.gz: not a tar or zip archive"):
        safe_extract(junk, dest)


def test_caps_refuse_the_archive(
    tmp_path: Path, dest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # State A gets the same caps as a submission (one policy): per file, members, bytes
    from srb_tui import extract_policy
    from srb_tui.sources import extract

    monkeypatch.setattr(extract, "CAPS", extract_policy.Caps(
        max_members=3, max_total_bytes=10_000, max_file_bytes=4))
    with pytest.raises(UnsafeArchiveError,
                       match=r"member 'big' refused: file of 5 bytes exceeds the per-file cap"):
        safe_extract(hostile(tmp_path, member("big"), data=b"12345"), dest)
    many = tmp_path / "many"
    many.mkdir()
    with pytest.raises(UnsafeArchiveError, match=r"more than 3 files \(file-count cap\)"):
        safe_extract(hostile(many, *(member(f"d{i}", tarfile.DIRTYPE) for i in range(5))),
                     dest)
