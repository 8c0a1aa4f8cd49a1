"""Round execs for the real agent clients: start a command detached, read small files back.

A round runs as a *detached* ``exec`` in the agent container, so it is a child of the
engine, not of srb: when srb dies mid-round the client keeps working, and a resumed srb
learns how the round went from the files the round wrapper leaves in the container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import ContainerHandle
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.files import fetch_file, put_files

__all__ = ["exec_detached", "fetch_file", "is_running", "put_files"]


def _exec_detached(
    api: Any, cid: str, argv: list[str], user: str, workdir: str, env: Mapping[str, str]
) -> str:
    made = api.exec_create(cid, argv, stdout=False, stderr=False, stdin=False, user=user,
                           workdir=workdir, environment=dict(env))
    api.exec_start(made["Id"], detach=True)
    return str(made["Id"])


async def exec_detached(
    engine: DockerEngine,
    handle: ContainerHandle,
    argv: list[str],
    *,
    user: str,
    workdir: str,
    env: Mapping[str, str],
) -> str:
    """Start ``argv`` in the running container without waiting; return the exec id."""
    api = await engine.api()
    try:
        return await engine.call(_exec_detached, api, handle.id, argv, user, workdir, env)
    except (sdk.APIError, sdk.NotFound) as err:
        raise ContainerError(f"run {handle.run_id}: cannot start a round in {handle.name}: "
                             f"{err}") from err


def _running(api: Any, cid: str) -> bool:
    try:
        return bool(api.inspect_container(cid)["State"]["Running"])
    except sdk.NotFound:
        return False


async def is_running(engine: DockerEngine, handle: ContainerHandle) -> bool:
    api = await engine.api()
    return await engine.call(_running, api, handle.id)
