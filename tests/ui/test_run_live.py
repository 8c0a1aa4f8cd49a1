"""The live Run screen on a real Docker engine: launch from the dialog, stream, filter,
jump to the error, cancel, and re-attach at console start.

Grading is switched off (``run_host.grade = False``) so a run ends after collection with
its container removed; the ladder has its own tests.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable

import pytest
from textual.widgets import Input

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool, list_managed
from srb_tui.store import Store
from srb_tui.ui.app import SrbApp, create_app
from srb_tui.ui.console_service import LaunchRequest
from srb_tui.ui.screens.launch import COMMAND, LaunchDialog
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.run_dialogs import ConfirmDialog
from srb_tui.ui.widgets.log_view import LogView
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO
from tests.ui import helpers

SCRIPT = "bash -c 'for i in $(seq 1 2000); do echo line $i; done; echo oops >&2'"


@pytest.fixture(autouse=True)
async def _no_leftovers(builtin_settings: Settings) -> AsyncIterator[None]:
    """A failing test quits the console mid-run (which leaves the run live by design):
    remove whatever containers its runs still have."""
    yield
    if not builtin_settings.db_path.exists():
        return
    from srb_tui.runner import remove
    from srb_tui.service.events import EventBus
    from srb_tui.service.run.orchestrator import RunService

    engine = DockerEngine(RunnerPool(1))
    try:
        async with await Store.open(builtin_settings.db_path) as store:
            service = RunService(builtin_settings, store, engine, EventBus())
            for run in await store.runs.list_runs(limit=100):
                for container in await list_managed(engine, run.id):
                    await remove(engine, container.handle)
                if run.status not in ("scored", "cancelled", "infra_error", "collecting"):
                    await service.cancel_stored(run.id)
    finally:
        engine.close()


async def until(pilot: object, cond: Callable[[], object], what: str,
                timeout: float = 120.0) -> None:
    """helpers.until with a deadline fit for Docker runs."""
    await helpers.until(pilot, cond, what, timeout)


def _app(settings: Settings) -> SrbApp:
    app = create_app(settings)
    app.run_host.grade = False
    return app


def _status(app: SrbApp) -> str | None:
    screen = app.screen
    if isinstance(screen, RunScreen) and screen.detail is not None:
        return screen.detail.run.status
    return None


async def _containers(run_id: str) -> list[str]:
    engine = DockerEngine(RunnerPool(1))
    try:
        return [c.handle.name for c in await list_managed(engine, run_id)]
    finally:
        engine.close()


@pytest.mark.docker
async def test_launch_from_dialog_streams_filters_and_finds_the_error(
        builtin_settings: Settings) -> None:
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.screen.query_one("#task-table")
        await until(pilot, lambda: table.row_count > 0, "tasks")  # type: ignore[attr-defined]
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LaunchDialog), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, LaunchDialog)
        dialog.select_agent(COMMAND)
        await pilot.pause()
        dialog.query_one("#launch-command", Input).value = SCRIPT
        dialog.query_one("#launch-budget", Input).value = "120"
        await pilot.press("ctrl+s")
        # the screen is pushed before it is composed: wait for its first load
        await until(pilot, lambda: _status(app) is not None, "the run screen")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        log = screen.query_one("#run-log", LogView)
        await until(pilot, lambda: log.line_count >= 2001, "2001 log lines")
        await until(pilot, lambda: _status(app) == "collecting"
                    and screen.run_id not in app.run_host.driving, "the run to be collected")
        total = await _stored_lines(builtin_settings, screen.run_id)
        assert total > 2001  # the agent's 2001 lines and srb's own (stream srb)
        await until(pilot, lambda: log.line_count == total, "every stored line in the view", 10)
        # stdout and stderr are followed separately: "oops" may land anywhere near the end
        texts = {seq: log.line_text(seq) for seq in range(1, total + 1)}
        assert "line 2000" in texts.values() and "oops" in texts.values()
        assert "status → agent" in texts.values()
        oops = next(seq for seq, text in texts.items() if text == "oops")
        assert log.follow
        await until(pilot, lambda: total in log.visible_seqs(), "the view to follow the end", 5)
        assert await _containers(screen.run_id) == []

        await pilot.press("s", "s")
        assert log.stream == "stderr"
        await until(pilot, lambda: log.index_ready, "the stderr index", 10)
        assert log.line_count == 1
        await until(pilot, lambda: log.line_text(log.visible_seqs()[0]) is not None, "line")
        assert log.line_text(log.visible_seqs()[0]) == "oops"
        await pilot.press("s")  # srb's own lines only
        assert log.stream == "srb"
        await until(pilot, lambda: log.index_ready, "the srb index", 10)
        assert log.line_count == total - 2001
        await pilot.press("s")
        assert log.stream == "all" and log.line_count == total
        await pilot.press("e")
        await until(pilot, lambda: log.cursor_seq is not None, "the first error", 10)
        assert log.cursor_seq == oops and not log.follow


@pytest.mark.docker
async def test_cancel_asks_then_cancels_the_running_agent(builtin_settings: Settings) -> None:
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.launch(LaunchRequest(DEMO_TASK.name, "command:sleep 600", 300.0))
        await until(pilot, lambda: _status(app) == "agent", "the agent phase")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirm dialog")
        await pilot.press("n")  # no: nothing happens
        await pilot.pause()
        assert _status(app) == "agent"
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirm dialog")
        await pilot.press("y")
        await until(pilot, lambda: _status(app) == "cancelled", "cancelled", 90)
        await until(pilot, lambda: screen.run_id not in app.run_host.driving, "driver end")
        assert await _containers(screen.run_id) == []
        header = str(screen.query_one("#run-timeline").render())
        assert "cancelled" in header


@pytest.mark.docker
async def test_console_start_reattaches_to_a_run_left_live(builtin_settings: Settings) -> None:
    state = builtin_settings.state_dir
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "srb_tui", "--tasks", str(BUILTIN_TASKS), "--state", str(state),
         "run", DEMO_TASK.name, "--agent", "command:bash -c 'echo started; sleep 4; echo back'",
         "--budget", "120", "--no-grade", "--json"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    run_id = None
    try:
        deadline = time.monotonic() + 120
        while run_id is None or await _stored_lines(builtin_settings, run_id, "stdout") < 1:
            assert proc.poll() is None, "srb run ended before it was killed"
            assert time.monotonic() < deadline, "the agent never printed"
            run_id = run_id or await _first_run(builtin_settings)
            await asyncio.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)  # srb dies; the agent container keeps running
        proc.wait(timeout=30)
    assert run_id is not None

    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: run_id in app.run_host.driving, "re-attach")
        app.open_run(run_id)
        await until(pilot, lambda: _status(app) == "collecting"
                    and run_id not in app.run_host.driving, "the re-attached run to finish")
        log = app.screen.query_one("#run-log", LogView)
        log.stream = "stdout"  # the agent's own lines (srb's sit between them)
        await until(pilot, lambda: log.index_ready and log.line_count == 2, "the index", 20)
        await until(pilot, lambda: log.line_text(log.buffer.filtered[1]) == "back"
                    if log.buffer.filtered else False, "log", 20)
        assert log.line_text(log.buffer.filtered[0]) == "started"
    assert await _containers(run_id) == []


@pytest.mark.docker
async def test_console_start_drives_a_pending_run_an_earlier_console_left(
    builtin_settings: Settings,
) -> None:
    """A pending run whose creator died (its lease names a dead pid) is started by the next
    console; one whose creator is still alive is left to it (same lease rule as re-attach)."""
    import socket

    builtin_settings.state_dir.mkdir(parents=True, exist_ok=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        async with await Store.open(builtin_settings.db_path) as store:
            ids = {}
            for name, pid in (("left", gone.pid), ("owned", sleeper.pid)):
                run = await store.runs.create_run(
                    task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                    agent=f"command:bash -c 'echo {name} run started'", budget_sec=60.0)
                lease = {"pid": pid, "host": socket.gethostname(), "since": "2026-12-01"}
                await store.runs.update_run(run.id, extra={"driver": lease})
                ids[name] = run.id
        app = _app(builtin_settings)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: ids["left"] in app.run_host.driving, "the pickup")
            assert ids["owned"] not in app.run_host.driving
            app.open_run(ids["left"])
            await until(pilot, lambda: _status(app) == "collecting"
                        and ids["left"] not in app.run_host.driving, "the run to be collected")
            log = app.screen.query_one("#run-log", LogView)
            await until(pilot, lambda: "left run started" in [
                log.line_text(seq) for seq in range(1, log.line_count + 1)], "its log", 20)
        async with await Store.open(builtin_settings.db_path) as store:
            assert (await store.runs.require_run(ids["owned"])).status == "pending"
            assert "driver" not in (await store.runs.require_run(ids["left"])).extra
    finally:
        sleeper.kill()
        sleeper.wait()
    assert await _containers(ids["left"]) == []


async def _first_run(settings: Settings) -> str | None:
    if not settings.db_path.exists():
        return None
    async with await Store.open(settings.db_path) as store:
        runs = await store.runs.list_runs(limit=1)
    return runs[0].id if runs else None


async def _stored_lines(settings: Settings, run_id: str, stream: str | None = None) -> int:
    async with await Store.open(settings.db_path) as store:
        return await store.logs.count_log_lines(run_id, stream=stream)


async def test_launch_without_docker_says_how_to_fix(builtin_settings: Settings,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        app.launch(LaunchRequest(DEMO_TASK.name, "untouched", 60.0))
        await until(pilot, lambda: any("ensure-docker.sh" in n.message
                                       for n in app._notifications), "the message", 30)
        assert not isinstance(app.screen, RunScreen)
        message = next(n.message for n in app._notifications if "ensure-docker" in n.message)
        assert "not reachable" in message or "does not answer" in message
