"""Fixtures of the fault tests: the engine under test, which they may stop and restart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.engine import EngineControl, answers


@pytest.fixture
def engine_control() -> Iterator[EngineControl]:
    """The dockerd serving ``DOCKER_HOST`` (CI's default engine or a developer's own);
    a test may stop and start it. Whatever the test does or however it fails, the
    engine answers again afterwards, started with its original command line."""
    if not answers():
        pytest.fail("the engine under test does not answer `docker info`")
    control = EngineControl()
    control.learn()
    try:
        yield control
    finally:
        control.ensure_up()
