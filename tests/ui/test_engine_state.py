"""The console shows the Docker engine's state and re-attaches when it is back.

The engine "goes away" and "comes back" at an address the test controls: the console is
pointed (DOCKER_HOST) at a unix socket in the test's folder, where at first nothing
listens; then the test opens a byte relay there to the real engine's socket. The console
and docker-py see exactly what they see when dockerd stops and starts again at its socket
(stopping the real dockerd under a run is in tests/faults/test_engine_restart.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.service.engine_state import EngineState, EngineStateChanged
from srb_tui.store import Store
from srb_tui.ui.app import SrbApp, create_app
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

pytestmark = pytest.mark.docker


def _real_engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if not host.startswith("unix://"):
        pytest.fail(f"this test relays to a unix-socket engine; DOCKER_HOST is {host}")
    return host.removeprefix("unix://")


@contextlib.asynccontextmanager
async def relay(at: Path, to: str) -> AsyncIterator[None]:
    """Forward every connection made to ``at`` to the unix socket ``to``, byte for byte."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_unix_connection(to)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_unix_server(serve, path=str(at))
    try:
        yield
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)


async def _live_run(settings: Settings) -> str:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="untouched")
        await store.runs.transition(run.id, "preparing")
        await store.runs.transition(run.id, "agent")
        return run.id


def _recorded_drives(app: SrbApp) -> list[str]:
    driven: list[str] = []
    app.run_host.drive = driven.append  # type: ignore[method-assign]  # record, do not run
    return driven


async def test_engine_down_at_start_is_shown_then_live_runs_reattach_when_it_is_back(
        builtin_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _real_engine_socket()
    sock = tmp_path / "engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    run_id = await _live_run(builtin_settings)
    app = create_app(builtin_settings)
    app.run_host.engine_watch_sec = 0.1
    driven = _recorded_drives(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: "engine down since" in app.title, "the engine-down header")
        assert driven == []
        messages = [n.message for n in app._notifications]
        assert any("cannot be re-attached now" in m and str(sock) in m for m in messages)
        assert any("does not answer" in m and "re-attaches" in m for m in messages)
        async with relay(sock, real):
            await until(pilot, lambda: driven == [run_id], "the re-attach of the live run")
            assert app.title == "srb"
            assert app.run_host.engine_state is not None
            assert app.run_host.engine_state.status == "up"
            assert any("answers again" in n.message for n in app._notifications)


async def test_a_flip_on_the_bus_is_shown_once_and_clears(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    driven = _recorded_drives(app)
    down = EngineState("down", detail="connection refused", checked_at="2026-12-01T14:02:03Z")
    async with app.run_test(size=(120, 30)) as pilot:
        bus = app.run_host.bus
        bus.publish(EngineStateChanged("", EngineState("up", version="20.10")))
        await pilot.pause()
        assert app.title == "srb" and not list(app._notifications)  # up as expected: quiet
        bus.publish(EngineStateChanged("", down))
        bus.publish(EngineStateChanged("", down))  # the same state again: told once
        await until(pilot, lambda: "engine down since 14:02:03 UTC" in app.title, "the header")
        await pilot.pause()
        assert sum("does not answer" in n.message for n in app._notifications) == 1
        bus.publish(EngineStateChanged("", EngineState("up", version="20.10")))
        await until(pilot, lambda: app.title == "srb", "the header cleared")
        assert driven == []  # the quiet app re-attaches nothing
        # Following the engine is no app worker: screens (and tests) that wait for the
        # workers to complete are not held up by it for as long as the console lives.
        await asyncio.wait_for(app.workers.wait_for_complete(), 10)
