"""What every Pilot test of the console shares: waiting for a condition with a deadline
(never a bare sleep), settling the screen's workers, and an app that does not re-attach
to live runs at start unless a test asks for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from srb_tui.config import Settings
from srb_tui.ui.app import SrbApp, create_app

POLL_SEC = 0.02


async def until(pilot: Any, cond: Callable[[], object], what: str = "the condition",
                timeout: float = 10.0) -> None:
    """Let the app run until ``cond()`` holds; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        await pilot.pause(POLL_SEC)


async def settle(pilot: Any) -> None:
    """Process pending messages, wait for the app's workers, process what they posted."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def quiet_app(settings: Settings, *, grade: bool = True) -> SrbApp:
    """The console over ``settings`` without the start-up re-attach (tests that seed the
    store with live runs decide themselves when anything is driven)."""
    app = create_app(settings)
    app.run_host.recover_on_start = False
    app.run_host.grade = grade
    return app
