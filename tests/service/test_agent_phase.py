"""The agent phase end to end on a real Docker engine: create, run, budget, collect.

These tests drive :class:`RunService` in-process over the built-in demo task; the
crash test drives the real ``srb`` process and kills it with SIGKILL.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool, list_managed
from srb_tui.service.events import EventBus, LogLines, StatusChanged
from srb_tui.service.run.orchestrator import LaunchError, RunService
from srb_tui.sources import compare_trees
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO

pytestmark = pytest.mark.docker
TASK = DEMO_TASK.name


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[RunService]:
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=tmp_path / "state")
    settings.state_dir.mkdir()
    engine = DockerEngine(RunnerPool(2))
    async with await Store.open(settings.db_path) as store:
        yield RunService(settings, store, engine, EventBus())
    engine.close()
    engine.pool.shutdown()


async def _logs(service: RunService, run_id: str) -> list[str]:
    """The agent's own lines (srb's lines, stream srb, quote the agent's command)."""
    n = await service.store.logs.count_log_lines(run_id)
    return [ln.text for ln in await service.store.logs.read_log_lines(run_id, 0, n + 1)
            if ln.stream != "srb"]


async def test_replay_reference_collects_the_submission(service: RunService) -> None:
    run = await service.launch(TASK, "replay:reference", budget_sec=120)
    async with service.bus.subscribe() as queue:  # before drive: nothing can be missed
        done = await service.drive(run.id, grade=False)
        events = []
        while not queue.empty():
            events.append(queue.get_nowait())
    seen = [e.status if isinstance(e, StatusChanged) else "log" for e in events
            if isinstance(e, StatusChanged | LogLines) and e.run_id == run.id]
    assert [s for s in seen if s != "log"] == ["preparing", "agent", "collecting"]
    # the agent's log lines arrive while it runs: after "agent", before "collecting"
    assert "log" in seen[seen.index("agent"):seen.index("collecting")]
    assert done.status == "collecting"
    assert done.stop_reason == "completed"
    assert done.extra["agent_exit"]["duration_sec"] >= 0
    assert done.extra["collect"]["duration_sec"] >= 0
    submission = service.submission_dir(run.id)
    diff = compare_trees(DEMO_TASK / "submissions" / "reference", submission)
    assert diff.identical, diff
    assert done.submission_files == sum(
        1 for p in (DEMO_TASK / "submissions" / "reference").rglob("*") if p.is_file()
    )
    detail = await service.store.run_detail(run.id)
    assert [t.to_status for t in detail.transitions] == [
        "pending", "preparing", "agent", "collecting",
    ]
    assert detail.images and detail.images[0].image_id.startswith("sha256:")
    assert any("replay:" in line for line in await _logs(service, run.id))
    assert await list_managed(service.engine, run.id) == []


async def test_untouched_hands_back_state_a(service: RunService) -> None:
    run = await service.launch(TASK, "untouched", budget_sec=120)
    done = await service.drive(run.id, grade=False)
    assert done.status == "collecting"
    original = DEMO_TASK / "submissions" / "untouched"
    assert compare_trees(original, service.submission_dir(run.id)).identical


async def test_budget_stops_a_sleeping_agent_as_deadline(service: RunService) -> None:
    run = await service.launch(TASK, "command:sleep infinity", budget_sec=3)
    started = time.monotonic()
    done = await service.drive(run.id, grade=False)
    assert time.monotonic() - started < 60
    assert done.stop_reason == "deadline"
    assert done.extra["agent_exit"]["reason"] == "deadline"
    assert done.status == "collecting"


async def test_network_is_off_and_no_socket_or_host_paths(service: RunService) -> None:
    script = (
        "ls /sys/class/net | tr '\\n' ' '; echo; "
        "(timeout 5 bash -c 'exec 3<>/dev/tcp/1.1.1.1/53' && echo NET-OPEN) || echo NET-CLOSED; "
        "(timeout 5 bash -c 'exec 3<>/dev/tcp/deb.debian.org/80' && echo DNS-OPEN) "
        "|| echo DNS-CLOSED; "
        "test -e /var/run/docker.sock && echo SOCKET || echo NO-SOCKET; "
        "awk '$2 ~ /^\\/workspace|^\\/home|^\\/root|^\\/work/ {print \"MOUNT \" $2}' /proc/mounts; "
        "id -u"
    )
    run = await service.launch(TASK, "command:" + shlex.join(["bash", "-c", script]),
                               budget_sec=60)
    await service.drive(run.id, grade=False)
    text = "\n".join(await _logs(service, run.id))
    # Docker does not order one stream's lines against the other's: the interface list is
    # the first line of stdout, whichever stream's line the log shows first.
    stdout = await service.store.logs.read_log_lines(run.id, 0, 50, stream="stdout")
    assert stdout and stdout[0].text.split() == ["lo"], [ln.text for ln in stdout]
    assert "NET-CLOSED" in text and "NET-OPEN" not in text
    assert "DNS-CLOSED" in text and "DNS-OPEN" not in text
    assert "NO-SOCKET" in text
    assert "MOUNT" not in text
    assert "\n1000" in text


async def test_grader_tests_never_reach_the_agent(tmp_path: Path) -> None:
    sentinel = "SRB-SENTINEL-7f3c1a9e"
    tasks = tmp_path / "tasks"
    copy = tasks / TASK
    shutil.copytree(DEMO_TASK, copy, ignore=shutil.ignore_patterns("submissions"))
    (copy / "tests" / "behavioural" / "data" / "sentinel.txt").write_text(sentinel)
    settings = Settings(task_roots=(tasks,), state_dir=tmp_path / "state")
    settings.state_dir.mkdir()
    engine = DockerEngine(RunnerPool(2))
    needle = sentinel[:8] + "\"\"" + sentinel[8:]  # the command line must not contain it
    script = (
        f"grep -rlsF --exclude-dir=proc --exclude-dir=sys \"{needle}\" / "
        "&& echo FOUND || echo CLEAN"
    )
    try:
        async with await Store.open(settings.db_path) as store:
            svc = RunService(settings, store, engine, EventBus())
            run = await svc.launch(str(copy), "command:" + shlex.join(["bash", "-c", script]),
                                   budget_sec=120)
            await svc.drive(run.id, grade=False)
            text = "\n".join(await _logs(svc, run.id))
    finally:
        engine.close()
        engine.pool.shutdown()
    assert "CLEAN" in text and "FOUND" not in text


async def test_bad_agent_and_task_are_refused_before_anything_runs(
    service: RunService,
) -> None:
    with pytest.raises(LaunchError, match="unknown kind"):
        await service.launch(TASK, "teleport")
    with pytest.raises(LaunchError, match="no task 'nope'"):
        await service.launch("nope", "untouched")
    assert await service.store.runs.count_runs() == 0


def _count(db: Path, run_id: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("select count(*) from log_lines where run_id = ?",
                               (run_id,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def _run_id(db: Path) -> str | None:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        row = con.execute("select id from runs").fetchone()
        con.close()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0])


def test_kill_9_then_resume_keeps_every_line_exactly_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    total = 600
    agent = (f"command:bash -c 'for i in $(seq 1 {total}); do echo line-$i; "
             "if [ $((i % 7)) = 0 ]; then echo err-$i >&2; fi; sleep 0.01; done'")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    cmd = [sys.executable, "-m", "srb_tui", "--tasks", str(BUILTIN_TASKS), "--state",
           str(state), "run", TASK, "--agent", agent, "--budget", "300", "--no-grade",
           "--json"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    db = state / "srb.sqlite3"
    deadline = time.monotonic() + 120
    run_id = None
    while time.monotonic() < deadline:
        run_id = run_id or _run_id(db)
        if run_id and _count(db, run_id) >= 50:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert run_id is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = _count(db, run_id)
    assert 0 < before < total + total // 7
    resumed = subprocess.run(
        [sys.executable, "-m", "srb_tui", "--tasks", str(BUILTIN_TASKS), "--state",
         str(state), "resume", "--no-grade", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    con = sqlite3.connect(db)
    rows = con.execute(
        "select stream, text from log_lines where run_id = ? order by seq", (run_id,)
    ).fetchall()
    status = con.execute("select status, stop_reason from runs where id = ?",
                         (run_id,)).fetchone()
    con.close()
    out = [t for s, t in rows if s == "stdout"]
    err = [t for s, t in rows if s == "stderr"]
    assert out == [f"line-{i}" for i in range(1, total + 1)]
    assert err == [f"err-{i}" for i in range(7, total + 1, 7)]
    assert tuple(status) == ("collecting", "completed")


async def test_recover_reaps_only_this_stores_leftovers(service: RunService) -> None:
    from srb_tui.runner import ContainerSpec, create, remove
    from srb_tui.service.run.orchestrator import STORE_LABEL

    mine = await create(service.engine, ContainerSpec(
        image="srb/base:bookworm", run_id="r-20000101-000000-aaaa", role="leftover",
        command=("true",), labels={STORE_LABEL: service.store_tag},
    ))
    other = await create(service.engine, ContainerSpec(
        image="srb/base:bookworm", run_id="r-20000101-000000-bbbb", role="leftover",
        command=("true",), labels={STORE_LABEL: "someone-else"},
    ))
    try:
        await service.recover()
        ids = {c.handle.id for c in await list_managed(service.engine)}
        assert mine.id not in ids
        assert other.id in ids
    finally:
        await remove(service.engine, other)
        await remove(service.engine, mine)


async def test_resume_leaves_a_run_driven_by_a_live_process_alone(
    service: RunService,
) -> None:
    """A second srb (console or `srb resume`) must not drive a run another live process is
    driving: its lease names a running pid. A dead pid's lease does not count."""
    import socket

    run = await service.launch(TASK, "untouched", budget_sec=60)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        extra = {"driver": {"pid": sleeper.pid, "host": socket.gethostname(), "since": "x"}}
        await service.store.runs.update_run(run.id, extra=extra)
        assert RunService.driven_elsewhere(await service.store.runs.require_run(run.id))
        results = await service.recover(grade=False)
        assert [r.status for r in results] == ["pending"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not RunService.driven_elsewhere(await service.store.runs.require_run(run.id))
    results = await service.recover(grade=False)
    assert [r.status for r in results] == ["collecting"]
    assert "driver" not in (await service.store.runs.require_run(run.id)).extra
