"""Budgets are enforced from outside: deadline, TERM → grace → KILL, OOM, pids, disk."""

from __future__ import annotations

import asyncio
import subprocess
import time
from datetime import UTC, datetime, timedelta

import pytest

from srb_tui.runner import DiskCap, DockerEngine, exec_run, inspect_state, start, wait_with_budget
from tests.runner.conftest import MakeContainer

pytestmark = pytest.mark.docker


async def test_deadline_stops_sleep_infinity(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    handle, _ = await make_container(command=("sleep", "infinity"))
    await start(engine, handle)
    t0 = time.monotonic()
    info = await wait_with_budget(engine, handle, 1.5, grace_sec=5)
    took = time.monotonic() - t0
    assert info.reason == "deadline"
    assert not info.escalated_to_kill  # docker-init passes TERM on; sleep dies of it
    assert info.exit_code == 143
    assert 1.0 <= took < 4.5
    assert "time budget of 1.5s" in info.detail
    assert not (await inspect_state(engine, handle)).running


async def test_term_ignored_gets_killed_after_grace(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    script = "trap '' TERM; while :; do sleep 0.2; done"
    handle, _ = await make_container(command=("bash", "-c", script))
    await start(engine, handle)
    t0 = time.monotonic()
    info = await wait_with_budget(engine, handle, 1.0, grace_sec=1.5)
    took = time.monotonic() - t0
    assert info.reason == "deadline"
    assert info.escalated_to_kill
    assert info.exit_code == 137
    assert took >= 2.5  # budget + full grace before KILL
    assert "SIGKILL after 1.5s grace" in info.detail


async def test_budget_counts_from_original_start(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    """A re-attached run keeps its deadline: 100 s of a 101 s budget are already spent."""
    handle, _ = await make_container(command=("sleep", "infinity"))
    await start(engine, handle)
    started = (await inspect_state(engine, handle)).started_at
    assert started is not None and abs((datetime.now(UTC) - started).total_seconds()) < 30
    t0 = time.monotonic()
    info = await wait_with_budget(
        engine, handle, 101.0, started_at=datetime.now(UTC) - timedelta(seconds=100), grace_sec=5
    )
    assert info.reason == "deadline"
    assert time.monotonic() - t0 < 4.0


async def test_stop_request_is_recorded(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    handle, _ = await make_container(command=("sleep", "infinity"))
    await start(engine, handle)
    stop = asyncio.Event()
    waiter = asyncio.create_task(wait_with_budget(engine, handle, 600, grace_sec=5, stop=stop))
    stop.set()
    info = await asyncio.wait_for(waiter, 20)
    assert info.reason == "killed" and info.exit_code == 143


async def test_natural_exit_and_oom(engine: DockerEngine, make_container: MakeContainer) -> None:
    ok, _ = await make_container(command=("bash", "-c", "exit 3"))
    await start(engine, ok)
    info = await wait_with_budget(engine, ok, 60)
    assert (info.reason, info.exit_code, info.oom_killed) == ("exited", 3, False)

    hog, _ = await make_container(
        command=("bash", "-c", "x=$(head -c 400M /dev/zero | tr '\\0' a); echo ${#x}"),
        mem_limit=48 * 1024**2,
        role="hog",
    )
    await start(engine, hog)
    info = await wait_with_budget(engine, hog, 60)
    assert info.reason == "oom" and info.oom_killed
    assert "out of memory" in info.detail


async def test_fork_bomb_is_held_by_pids_limit(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    handle, _ = await make_container(
        command=("bash", "-c", "b() { b | b & }; b; sleep infinity"),
        pids_limit=64,
        nano_cpus=500_000_000,
    )
    await start(engine, handle)
    api = await engine.api()
    cgroup_pids = 0
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and cgroup_pids < 60:  # wait until the bomb hits the cap
        stats = await engine.call(api.stats, handle.id, stream=False)
        cgroup_pids = int(stats.get("pids_stats", {}).get("current", 0))
    assert 60 <= cgroup_pids <= 64
    host = subprocess.run(["bash", "-c", "for i in $(seq 20); do true & done; wait"], timeout=10)
    assert host.returncode == 0  # the host can still fork
    t0 = time.monotonic()
    info = await wait_with_budget(engine, handle, 0.5, grace_sec=1)
    assert info.reason == "deadline"
    assert time.monotonic() - t0 < 15
    assert not (await inspect_state(engine, handle)).running


async def test_disk_cap_stops_a_5gb_writer(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    writer = "for i in $(seq 50); do head -c 100M /dev/zero > /tmp/f$i; done; echo done"
    handle, _ = await make_container(command=("bash", "-c", writer), workdir="/")
    api = await engine.api()
    await start(engine, handle)
    cap = 300 * 1024**2
    info = await wait_with_budget(
        engine, handle, 120, grace_sec=2, disk_cap=DiskCap(max_bytes=cap, poll_sec=0.2)
    )
    assert info.reason == "disk"
    assert info.disk_bytes is not None and info.disk_bytes > cap
    assert "disk cap of 314572800 bytes exceeded" in info.detail
    rows = await engine.call(api.containers, all=True, size=True, filters={"id": handle.id})
    assert rows[0]["SizeRw"] < 5 * 1024**3 // 2  # stopped long before 5 GB


async def test_single_file_size_limit(engine: DockerEngine, make_container: MakeContainer) -> None:
    handle, _ = await make_container(command=("sleep", "infinity"), max_file_bytes=4 * 1024**2)
    await start(engine, handle)
    res = await exec_run(
        engine,
        handle,
        ["bash", "-c", "head -c 50M /dev/zero > /tmp/big; echo rc=$?; stat -c %s /tmp/big"],
    )
    assert res.stdout.split() == [b"rc=153", str(4 * 1024**2).encode()]  # 128 + SIGXFSZ
