"""srb_tui/runner/files.py against a real container: read-only trees, owned files, fetching
a file back, and the stdin-attached exec session the tools loop runs over."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from srb_tui.runner import (
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    RunnerPool,
    create,
    exec_run,
    remove,
    start,
)
from srb_tui.runner.exec_session import open_exec_session
from srb_tui.runner.files import fetch_file, put_files, put_readonly_tree, put_symlink

pytestmark = pytest.mark.docker


@pytest_asyncio.fixture
async def box() -> AsyncIterator[tuple[DockerEngine, ContainerHandle]]:
    engine = DockerEngine(RunnerPool(2))
    spec = ContainerSpec(
        image="srb/base:bookworm",
        run_id=f"lt-{uuid.uuid4().hex[:10]}",
        role="files",
        command=("sleep", "infinity"),
        workdir="/tmp",
    )
    handle = await create(engine, spec)
    try:
        await start(engine, handle)
        yield engine, handle
    finally:
        await remove(engine, handle)
        engine.close()


async def sh(engine: DockerEngine, handle: ContainerHandle, script: str) -> tuple[int, str]:
    res = await exec_run(engine, handle, ["sh", "-c", script], timeout_sec=30)
    return res.exit_code, (res.stdout + res.stderr).decode()


async def test_readonly_tree_is_readable_not_writable(
    box: tuple[DockerEngine, ContainerHandle], tmp_path: Path
) -> None:
    engine, handle = box
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    secret = tree / "sub" / "private.txt"
    secret.write_text("only the owner could read this on the host\n")
    secret.chmod(0o600)
    tool = tree / "tool.sh"
    tool.write_text("#!/bin/sh\necho ran\n")
    tool.chmod(0o700)
    os.symlink("sub/private.txt", tree / "link")
    (tree / "__pycache__").mkdir()
    count = await put_readonly_tree(engine, handle, tree, "/srb/original")
    assert count == 3  # two files and the link; __pycache__ left out
    code, out = await sh(engine, handle, "cat /srb/original/link && /srb/original/tool.sh")
    assert code == 0 and "only the owner" in out and "ran" in out
    code, out = await sh(engine, handle, "echo x > /srb/original/sub/private.txt")
    assert code != 0 and "Permission denied" in out
    code, out = await sh(engine, handle, "touch /srb/original/new")
    assert code != 0
    code, out = await sh(engine, handle, "stat -c '%U %a' /srb/original /tmp; ls /srb/original")
    assert out.splitlines()[:2] == ["root 755", "root 1777"]
    assert "__pycache__" not in out


async def test_files_owned_by_the_stage_user_and_fetched_back(
    box: tuple[DockerEngine, ContainerHandle],
) -> None:
    engine, handle = box
    await put_files(
        engine, handle, "/tmp/srb/cand/001", {"candidate.sh": b"echo hi\n", "d/x.txt": b"\x00\xff"},
        uid=1000, gid=1000, mode=0o755,
    )  # fmt: skip
    code, out = await sh(
        engine, handle, "stat -c '%u %a' /tmp /tmp/srb /tmp/srb/cand/001/candidate.sh"
    )
    assert out.split("\n")[:3] == ["0 1777", "1000 755", "1000 755"]
    assert await fetch_file(engine, handle, "/tmp/srb/cand/001/d/x.txt") == b"\x00\xff"
    assert await fetch_file(engine, handle, "/tmp/srb/none.json") is None
    await put_symlink(engine, handle, "/opt/srb/python/bin/python3", "/bin/sh")
    code, out = await sh(engine, handle, "/opt/srb/python/bin/python3 -c 'echo via-link'")
    assert code == 0 and "via-link" in out


async def test_exec_session_lines_in_lines_out(box: tuple[DockerEngine, ContainerHandle]) -> None:
    engine, handle = box
    loop = 'while read -r l; do echo "got $l"; echo "err $l" >&2; done; echo bye'
    session = await open_exec_session(engine, handle, ["sh", "-c", loop])
    await session.send(b"one\ntwo\n")
    assert await session.readline(10) == b"got one"
    assert await session.readline(10) == b"got two"
    with pytest.raises(TimeoutError):
        await session.readline(0.3)
    await session.send(b"x" * 200_000 + b"\n")  # larger than one frame
    big = await session.readline(10)
    assert big is not None and big == b"got " + b"x" * 200_000
    await session.close()
    # stderr keeps a bounded tail. Whether the huge last line was read before close()
    # depends on timing; either way the tail is bounded and made of what the loop wrote.
    tail = session.stderr_tail
    assert 0 < len(tail) <= 4000
    assert tail.startswith("err one") or tail.rstrip("\n").endswith("x" * 100)
    assert await session.exit_code() == 0
