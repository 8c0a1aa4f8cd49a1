"""Stdlib parts of the runner: timestamps, log cursors, tar packing,
context hashing, specs. No Docker needed."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from srb_tui.runner.contexthash import context_hash
from srb_tui.runner.logs import LogCursor, cursors_after, parse_frame
from srb_tui.runner.spec import ContainerLogLine, ContainerSpec, container_name
from srb_tui.runner.tarpack import pack_tree
from srb_tui.timestamps import normalize_ts, parse_ts, ts_epoch


def test_timestamps() -> None:
    assert normalize_ts("2024-01-02T03:04:05.1Z") == "2024-01-02T03:04:05.100000000Z"
    assert normalize_ts("2024-01-02T03:04:05Z") == "2024-01-02T03:04:05.000000000Z"
    assert normalize_ts("2024-01-02T05:04:05.123456789+02:00") == "2024-01-02T03:04:05.123456789Z"
    assert normalize_ts("2024-01-02T03:04:05.9Z") > normalize_ts("2024-01-02T03:04:05.123456789Z")
    assert parse_ts("0001-01-01T00:00:00Z") is None
    dt = parse_ts("2024-01-02T03:04:05.123456789Z")
    assert dt is not None and dt.microsecond == 123456
    assert ts_epoch("1970-01-01T00:00:10.5Z") == pytest.approx(10.5)
    with pytest.raises(ValueError, match="not an RFC 3339"):
        normalize_ts("yesterday")


def test_frames_and_cursors() -> None:
    line = parse_frame(b"2024-01-02T03:04:05.5Z caf\xc3\xa9 \xff\n", "stderr")
    assert line == ContainerLogLine("2024-01-02T03:04:05.500000000Z", "stderr", "café \ufffd")
    a = ContainerLogLine("2024-01-01T00:00:01.000000000Z", "stdout", "a")
    b = ContainerLogLine("2024-01-01T00:00:02.000000000Z", "stdout", "b")
    b2 = ContainerLogLine("2024-01-01T00:00:02.000000000Z", "stdout", "b2")
    e = ContainerLogLine("2024-01-01T00:00:01.500000000Z", "stderr", "e")
    assert cursors_after([a, e, b, b2]) == {
        "stdout": LogCursor(b.ts, 2),
        "stderr": LogCursor(e.ts, 1),
    }


def test_spec_validation_and_names() -> None:
    spec = ContainerSpec(image="img", run_id="r 1/x", role="agent")
    assert spec.name == "srb-r-1-x-agent" == container_name("r 1/x", "agent")
    assert spec.all_labels() == {"srb.managed": "1", "srb.run": "r 1/x", "srb.role": "agent"}
    with pytest.raises(ValueError, match=r"run 'r9'.*root"):
        ContainerSpec(image="img", run_id="r9", role="agent", user="0:0")
    with pytest.raises(ValueError, match="numeric 'uid:gid'"):
        ContainerSpec(image="img", run_id="r9", role="agent", user="agent")
    assert ContainerSpec(image="i", run_id="r", role="x", user="0:0", allow_root=True).uid == 0


def test_pack_tree_from_dir_and_tar(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "f.txt").write_text("hello")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    os.symlink("d/f.txt", src / "ln")
    os.mkfifo(src / "fifo")
    buf = io.BytesIO()
    res = pack_tree(src, "/workspace/repo", buf, uid=1000, gid=1001)
    assert res.files == 3 and res.skipped == [
        ("workspace/repo/fifo", "special file (device, FIFO or socket)")
    ]
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == [
        "workspace",
        "workspace/repo",
        "workspace/repo/d",
        "workspace/repo/d/f.txt",
        "workspace/repo/ln",
        "workspace/repo/run.sh",
    ]
    assert {(m.uid, m.gid) for m in members.values()} == {(1000, 1001)}
    assert members["workspace/repo/run.sh"].mode == 0o755
    assert members["workspace/repo/ln"].linkname == "d/f.txt"

    archive = tmp_path / "state-a.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src / "d", arcname="project-1.0/d")
        evil = tarfile.TarInfo("../escape")
        tar.addfile(evil, io.BytesIO(b""))
    buf = io.BytesIO()
    res = pack_tree(archive, "/workspace/repo", buf, uid=7, gid=7, strip_components=1)
    assert res.skipped == [("../escape", "absolute path or '..' component")]
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        names = tar.getnames()
    assert names == ["workspace", "workspace/repo", "workspace/repo/d", "workspace/repo/d/f.txt"]
    with pytest.raises(ValueError, match="absolute path"):
        pack_tree(src, "relative/path", io.BytesIO(), uid=1, gid=1)


def test_context_hash(tmp_path: Path) -> None:
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM $BASE_IMAGE\n")
    h1 = context_hash(ctx, buildargs={"BASE_IMAGE": "a"})
    assert h1 == context_hash(ctx, buildargs={"BASE_IMAGE": "a"})
    assert h1 != context_hash(ctx, buildargs={"BASE_IMAGE": "b"})
    assert h1 != context_hash(ctx, buildargs={"BASE_IMAGE": "a"}, base_id="sha256:1")
    (ctx / "x.sh").write_text("echo\n")
    h2 = context_hash(ctx, buildargs={"BASE_IMAGE": "a"})
    assert h2 != h1
    (ctx / "x.sh").chmod(0o755)
    assert context_hash(ctx, buildargs={"BASE_IMAGE": "a"}) != h2
