"""Fixtures for State A tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sources.helpers import LocalServer, start_server


@pytest.fixture
def http_server() -> Iterator[LocalServer]:
    """A local HTTP server on 127.0.0.1 (stopped at the end of the test)."""
    state = LocalServer()
    start_server(state)
    try:
        yield state
    finally:
        state.stop()
