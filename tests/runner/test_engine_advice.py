"""The advice that comes with an engine that does not answer fits how it is reached: a local
socket is started here (systemctl, dockerd), an engine over the network is checked there
(its address, its daemon listening, the route). No engine is asked."""

from __future__ import annotations

import pytest

from srb_tui.runner.engine import REMOTE_HINT, START_HINT, start_hint, unreachable_message


@pytest.mark.parametrize("url", ["tcp://10.0.0.2:2375", "ssh://srb@node-2", "http://n:2375"])
def test_a_remote_engine_gets_remote_advice(url: str) -> None:
    message = unreachable_message(url, OSError("Connection refused"))
    assert start_hint(url) == REMOTE_HINT
    assert url in message and "listens" in message
    assert "systemctl" not in message


def test_a_local_socket_gets_the_start_advice() -> None:
    message = unreachable_message("unix:///var/run/docker.sock", OSError("No such file"))
    assert start_hint("unix:///var/run/docker.sock") == START_HINT
    assert "systemctl start docker" in message
