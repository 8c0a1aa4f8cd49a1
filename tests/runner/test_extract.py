"""Safe extraction of crafted (hostile) archives; no Docker needed."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest

from srb_tui.runner.extract import CollectResult, ExtractLimits, extract_archive

Member = tuple[str, bytes, dict[str, Any]]


def _add(tar: tarfile.TarFile, name: str, kind: bytes, **kw: Any) -> None:
    data = kw.pop("data", b"")
    assert isinstance(data, bytes)
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = int(kw.pop("mode", 0o644))
    for key, value in kw.items():
        setattr(ti, key, value)
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
    else:
        tar.addfile(ti)


def make_tar(path: Path, members: list[Member]) -> Path:
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for name, kind, kw in members:
            _add(tar, name, kind, **kw)
    return path


def snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def run(base: Path, members: list[Member], **kw: Any) -> tuple[CollectResult, Path]:
    """Extract into ``base/jail/dest``; anything new in ``base`` outside dest fails."""
    base.mkdir()
    (base / "jail").mkdir()
    archive = make_tar(base / "in.tar", members)
    before = snapshot(base)
    dest = base / "jail" / "dest"
    result = extract_archive(archive, dest, **kw)
    new = snapshot(base) - before
    outside = {p for p in new if p != "jail/dest" and not p.startswith("jail/dest/")}
    assert outside == set(), f"written outside dest: {outside}"
    return result, dest


REG = tarfile.REGTYPE


def test_hostile_members_are_rejected_with_reasons(tmp_path: Path) -> None:
    members: list[Member] = [
        ("repo", tarfile.DIRTYPE, {"mode": 0o755}),
        ("repo/ok.txt", REG, {"data": b"fine"}),
        ("/etc/evil", REG, {"data": b"x"}),
        ("repo/../../evil", REG, {"data": b"x"}),
        ("repo/passwd", tarfile.SYMTYPE, {"linkname": "/etc/passwd"}),
        ("repo/up", tarfile.SYMTYPE, {"linkname": "../../etc"}),
        ("repo/hl", tarfile.LNKTYPE, {"linkname": "/etc/passwd"}),
        ("repo/hl2", tarfile.LNKTYPE, {"linkname": "repo/missing"}),
        ("repo/hl3", tarfile.LNKTYPE, {"linkname": "repo/ok.txt"}),
        ("repo/tty", tarfile.CHRTYPE, {"devmajor": 5, "devminor": 0}),
        ("repo/sda", tarfile.BLKTYPE, {"devmajor": 8, "devminor": 0}),
        ("repo/pipe", tarfile.FIFOTYPE, {}),
        ("other/file", REG, {"data": b"x"}),
        ("repo/suid", REG, {"data": b"#!/bin/sh\n", "mode": 0o4755}),
    ]
    res, dest = run(tmp_path / "c", members, root="repo")
    reasons = dict(res.rejected)
    assert reasons["/etc/evil"] == "absolute path"
    assert reasons["repo/../../evil"] == "'..' in path"
    assert reasons["repo/passwd"] == "symbolic link to absolute path /etc/passwd"
    assert reasons["repo/up"].startswith("symbolic link points outside the tree")
    assert reasons["repo/hl"] == "hard link to /etc/passwd, outside the tree"
    assert "not a file in the tree" in reasons["repo/hl2"]
    assert reasons["repo/tty"] == reasons["repo/sda"] == "device file"
    assert reasons["repo/pipe"] == "FIFO (named pipe)"
    assert reasons["other/file"].startswith("outside the artifact root")
    assert len(res.rejected) == 10 and res.ok
    assert sorted(snapshot(dest)) == ["hl3", "ok.txt", "suid"]
    assert (dest / "hl3").read_bytes() == b"fine"
    assert os.stat(dest / "hl3").st_ino == os.stat(dest / "ok.txt").st_ino
    assert stat.S_IMODE(os.stat(dest / "suid").st_mode) == 0o755  # setuid dropped
    assert res.files == 3


def test_links_cannot_be_used_to_escape(tmp_path: Path) -> None:
    members: list[Member] = [
        ("repo/sub/f", REG, {"data": b"a"}),
        ("repo/ln", tarfile.SYMTYPE, {"linkname": "sub"}),  # fine, inside
        ("repo/ln/evil", REG, {"data": b"through link"}),  # would write via the link
        ("repo/dot", tarfile.SYMTYPE, {"linkname": "."}),
        ("repo/sneak", tarfile.SYMTYPE, {"linkname": "dot/.."}),  # lexically '.', really '..'
        ("repo/dotdot", tarfile.SYMTYPE, {"linkname": "sub/../.."}),
        # a link made before the link it resolves through: only the final check sees it
        ("repo/late/x", tarfile.SYMTYPE, {"linkname": "up/.."}),
        ("repo/late/up", tarfile.SYMTYPE, {"linkname": ".."}),
    ]
    res, dest = run(tmp_path / "c", members, root="repo")
    reasons = dict(res.rejected)
    assert reasons["repo/ln/evil"] == "path goes through the symbolic link ln"
    # tarfile's data filter resolves 'dot' on disk when 'sneak' is made
    assert reasons["repo/sneak"].startswith("refused by tarfile's data filter")
    assert "outside the destination" in reasons["repo/sneak"]
    assert reasons["repo/late/x"] == "symbolic link resolves outside the tree through other links"
    assert not (dest / "late" / "x").is_symlink() and (dest / "late" / "up").is_symlink()
    assert reasons["repo/dotdot"].startswith("symbolic link points outside the tree")
    assert os.readlink(dest / "ln") == "sub" and not (dest / "sub" / "evil").exists()
    assert not (dest / "sneak").is_symlink()
    assert (dest / "dot").is_symlink()


def test_caps(tmp_path: Path) -> None:
    big = [("repo/big", REG, {"data": b"x" * 5000}), ("repo/small", REG, {"data": b"y"})]
    res, _ = run(tmp_path / "c1", big, root="repo", limits=ExtractLimits(max_file_bytes=4096))
    assert res.rejected == [("repo/big", "file of 4.9 KiB exceeds the per-file cap of 4.0 KiB")]
    assert res.ok and res.files == 1

    many = [(f"repo/f{i}", REG, {"data": b"z"}) for i in range(50)]
    res, dest = run(tmp_path / "c2", many, root="repo", limits=ExtractLimits(max_files=20))
    assert res.aborted_reason is not None and "more than 20 files" in res.aborted_reason
    assert res.files == 20 and len(list(dest.iterdir())) == 20

    heavy = [(f"repo/f{i}", REG, {"data": b"z" * 1000}) for i in range(10)]
    res, _ = run(tmp_path / "c3", heavy, root="repo", limits=ExtractLimits(max_total_bytes=3500))
    assert res.aborted_reason is not None and "total size cap" in res.aborted_reason
    assert res.bytes <= 3500


def test_excludes_and_conflicts(tmp_path: Path) -> None:
    members: list[Member] = [
        ("repo/src/a.py", REG, {"data": b"a"}),
        ("repo/src/__pycache__/a.cpython-311.pyc", REG, {"data": b"c"}),
        ("repo/pkg/node_modules/x/index.js", REG, {"data": b"n"}),
        ("repo/build/out.o", REG, {"data": b"o"}),
        ("repo/src/build/keep.txt", REG, {"data": b"k"}),
        ("repo/docs/build", REG, {"data": b"k"}),
        ("repo/dup", REG, {"data": b"first"}),
        ("repo/dup", REG, {"data": b"second"}),
        ("repo/src", REG, {"data": b"file over a dir"}),
    ]
    res, dest = run(
        tmp_path / "c",
        members,
        root="repo",
        excludes=["node_modules", "__pycache__", "*.pyc", "/build", "docs/build"],
    )
    assert sorted(snapshot(dest)) == ["dup", "src", "src/a.py", "src/build", "src/build/keep.txt"]
    assert (dest / "dup").read_bytes() == b"second"
    assert res.excluded == 4
    assert dict(res.rejected)["repo/src"].startswith("a directory of the same name")


def test_dest_must_be_fresh_and_corrupt_archive(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "old").write_text("x")
    archive = make_tar(tmp_path / "a.tar", [("repo/a", REG, {"data": b"a"})])
    with pytest.raises(ValueError, match="not an empty directory"):
        extract_archive(archive, dest, root="repo")
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"\x00garbage" * 100)
    res = extract_archive(junk, tmp_path / "d2", root="repo")
    assert res.aborted_reason is not None and "corrupt archive" in res.aborted_reason


def test_rules_shared_with_state_a(tmp_path: Path) -> None:
    # the State A side refused these first; the one policy refuses them here too
    members: list[Member] = [
        ("repo/ok.txt", REG, {"data": b"fine"}),
        ("C:/evil", REG, {"data": b"drive letter"}),
        ("repo/empty", tarfile.SYMTYPE, {"linkname": ""}),
    ]
    res, dest = run(tmp_path / "d", members, root="repo")
    reasons = dict(res.rejected)
    assert reasons["C:/evil"] == "absolute path"
    assert reasons["repo/empty"] == "symbolic link with an empty target"
    assert sorted(snapshot(dest)) == ["ok.txt"]
