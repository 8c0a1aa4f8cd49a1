"""Engine connection, the dedicated pool, and putting State A into a container."""

from __future__ import annotations

import asyncio
import tarfile
import threading
from pathlib import Path

import pytest

from srb_tui.runner import (
    ContainerError,
    DockerEngine,
    RunnerPool,
    exec_run,
    put_tree,
    start,
)
from tests.runner.conftest import MakeContainer


async def test_pool_is_srbs_own() -> None:
    pool = RunnerPool(concurrent_runs=3)
    assert pool.max_workers == 3 * 4 + 4
    name = await pool.call(lambda: threading.current_thread().name)
    assert name.startswith("srb-docker")
    pool.shutdown()
    with pytest.raises(ValueError, match="concurrent_runs"):
        RunnerPool(0)


async def test_unreachable_engine_says_how_to_start_it(tmp_path: Path) -> None:
    engine = DockerEngine(base_url=f"unix://{tmp_path}/no-docker.sock")
    info = await engine.ping()
    assert not info.ok
    assert f"unix://{tmp_path}/no-docker.sock" in info.error
    assert "systemctl start docker" in info.error
    engine.close()


@pytest.mark.docker
async def test_ping(engine: DockerEngine) -> None:
    info = await engine.ping()
    assert info.ok and info.version and info.api_version and info.error == ""


@pytest.mark.docker
async def test_put_state_a_archive_owned_by_agent(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    src = tmp_path / "proj"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.py").write_text("x = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (src / "run.sh").chmod(0o755)
    archive = tmp_path / "original.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname="proj-1.0")
    handle, spec = await make_container(command=("sleep", "infinity"))
    packed = await put_tree(engine, handle, archive, uid=spec.uid, gid=spec.gid, strip_components=1)
    assert packed.files == 2 and packed.skipped == []
    await start(engine, handle)
    ls = await exec_run(
        engine,
        handle,
        [
            "bash",
            "-c",
            "stat -c '%u:%g %n' /workspace /workspace/repo "
            "/workspace/repo/lib/util.py && ./run.sh && touch new && echo ok",
        ],
    )
    assert ls.exit_code == 0, ls.stderr
    assert ls.stdout.decode().split("\n") == [
        "1000:1000 /workspace",
        "1000:1000 /workspace/repo",
        "1000:1000 /workspace/repo/lib/util.py",
        "ran",
        "ok",
        "",
    ]
    slow = await exec_run(engine, handle, ["sleep", "30"], timeout_sec=0.5)
    assert slow.timed_out and slow.exit_code == 124
    with pytest.raises(ContainerError, match="State A missing"):
        await put_tree(engine, handle, tmp_path / "nope", uid=1000, gid=1000)
    assert await asyncio.wait_for(engine.ping(), 10)
