"""Container operations: create, start, copy a tree in, exec, inspect, kill, remove.

Each function is async and runs its engine call on srb's pool (create, archive upload and
start over :mod:`srb_tui.runner.wire` when the engine has one, the rest through
docker-py). Containers are
created locked down: no network unless the spec says otherwise, a non-root user,
memory/pids/CPU limits, no-new-privileges, every capability dropped, bounded
json-file logs, an init process, and no mounts at all (so no Docker socket).
"""

from __future__ import annotations

import signal as _signal
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srb_tui.grader.contract import EXIT_KILLED, EXIT_SIGNAL_BASE, EXIT_TIMEOUT
from srb_tui.runner import sdk
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.spec import LABEL_ROLE, LABEL_RUN, REPO_DIR, ContainerSpec
from srb_tui.runner.wire import WireError
from srb_tui.timestamps import parse_ts

if TYPE_CHECKING:
    from srb_tui.runner.tarpack import PackResult

EXEC_KILL_AFTER_SEC = 5


@dataclass(frozen=True)
class ContainerHandle:
    """A container srb created (or found again by its labels)."""

    id: str
    name: str
    run_id: str
    role: str


@dataclass(frozen=True)
class ContainerState:
    """The parts of ``docker inspect`` the runner uses."""

    status: str
    running: bool
    exit_code: int
    oom_killed: bool
    started_at: datetime | None
    finished_at: datetime | None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecResult:
    """How one exec ended. ``timed_out`` only when the time budget really ran out (124, or
    137 from ``timeout -k`` at or past the budget); an earlier death by a signal is a kill,
    named by ``signal`` (exit code 128+N), never read as a timeout."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    signal: int | None = None

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return _signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    def describe(self) -> str:
        """'exit N', 'killed by SIGKILL (exit 137)' or 'ran past its time budget'."""
        if self.timed_out:
            return f"ran past its time budget (exit {self.exit_code})"
        if self.signal is not None:
            return f"killed by {self.signal_name} (exit {self.exit_code})"
        return f"exit {self.exit_code}"


def _create(engine: DockerEngine, api: Any, spec: ContainerSpec) -> str:
    config = spec.engine_config()
    try:
        if engine.wire is not None:
            return engine.wire.create_container(config, spec.name)
        return str(api.create_container_from_config(config, spec.name)["Id"])
    except (WireError, sdk.APIError) as err:
        explanation = getattr(err, "explanation", None) or str(err)
        if err.status_code == 404:
            raise ContainerError(
                f"run {spec.run_id}: image {spec.image!r} not found; build it first "
                f"({explanation})") from err
        if err.status_code == 409:
            raise ContainerError(
                f"run {spec.run_id}: a container named {spec.name} already exists; "
                "reap the run's old containers first"
            ) from err
        raise ContainerError(f"run {spec.run_id}: cannot create {spec.name}: {err}") from err


async def _launch_api(engine: DockerEngine) -> Any:
    """docker-py's API client, or None when the call goes over the wire."""
    return None if engine.wire is not None else await engine.api()


async def create(engine: DockerEngine, spec: ContainerSpec) -> ContainerHandle:
    """Create (not start) a locked-down container for ``spec``."""
    api = await _launch_api(engine)
    cid = await engine.call(_create, engine, api, spec)
    return ContainerHandle(id=cid, name=spec.name, run_id=spec.run_id, role=spec.role)


async def start(engine: DockerEngine, handle: ContainerHandle) -> None:
    api = await _launch_api(engine)
    try:
        if engine.wire is not None:
            await engine.call(engine.wire.start, handle.id)
        else:
            await engine.call(api.start, handle.id)
    except (WireError, sdk.APIError) as err:
        raise ContainerError(f"run {handle.run_id}: cannot start {handle.name}: {err}") from err


def _put_tree(
    engine: DockerEngine, api: Any, cid: str, source: Path, dest: str, uid: int, gid: int,
    strip: int,
) -> PackResult:
    from srb_tui.runner.tarpack import pack_tree  # tarfile: only when a tree is uploaded

    with tempfile.TemporaryFile(prefix="srb-put-") as fh:
        result = pack_tree(source, dest, fh, uid=uid, gid=gid, strip_components=strip)
        length = fh.tell()
        fh.seek(0)
        if engine.wire is not None:
            engine.wire.put_archive(cid, "/", fh, length)
        else:
            api.put_archive(cid, "/", fh)
    return result


async def put_tree(
    engine: DockerEngine,
    handle: ContainerHandle,
    source: Path,
    *,
    dest: str = REPO_DIR,
    uid: int,
    gid: int,
    strip_components: int = 0,
) -> PackResult:
    """Copy a host directory or tar archive to ``dest`` in the container.

    Works on a created (not yet started) container. Ownership is ``uid:gid`` for
    every member and for each directory on the way to ``dest``.
    """
    if not source.exists():
        raise ContainerError(f"run {handle.run_id}: {source} does not exist (State A missing?)")
    api = await _launch_api(engine)
    try:
        return await engine.call(
            _put_tree, engine, api, handle.id, source, dest, uid, gid, strip_components
        )
    except (WireError, ValueError, OSError, sdk.APIError) as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot copy {source} into {handle.name}:{dest}: {err}"
        ) from err


def _exec(
    api: Any,
    cid: str,
    argv: list[str],
    user: str | None,
    workdir: str | None,
    env: Mapping[str, str] | None,
) -> ExecResult:
    made = api.exec_create(
        cid,
        argv,
        stdout=True,
        stderr=True,
        user=user or "",
        workdir=workdir,
        environment=dict(env) if env else None,
    )
    out, err = api.exec_start(made["Id"], demux=True)
    code = api.exec_inspect(made["Id"]).get("ExitCode")
    return ExecResult(
        exit_code=int(code) if code is not None else -1, stdout=out or b"", stderr=err or b""
    )


def with_timeout(argv: list[str], timeout_sec: float) -> list[str]:
    """``argv`` under coreutils ``timeout -k`` in the container (read by :func:`interpret_exit`)."""
    return ["timeout", "-k", str(EXEC_KILL_AFTER_SEC), f"{timeout_sec:g}", *argv]


async def exec_run(
    engine: DockerEngine,
    handle: ContainerHandle,
    argv: list[str],
    *,
    user: str | None = None,
    workdir: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_sec: float | None = None,
) -> ExecResult:
    """Run ``argv`` in a running container; with ``timeout_sec`` it is wrapped in
    coreutils ``timeout -k`` inside the container (exit 124/137 ⇒ ``timed_out``)."""
    if timeout_sec is not None:
        argv = with_timeout(argv, timeout_sec)
    api = await engine.api()
    started = time.monotonic()
    try:
        result = await engine.call(_exec, api, handle.id, argv, user, workdir, env)
    except sdk.APIError as err:
        raise ContainerError(f"run {handle.run_id}: exec in {handle.name} failed: {err}") from err
    return interpret_exit(result, timeout_sec, time.monotonic() - started)


def interpret_exit(result: ExecResult, timeout_sec: float | None, elapsed: float) -> ExecResult:
    """Tell a timeout from a kill: 124 is ``timeout``'s own; 137 is a timeout only when the
    budget had run out, else something SIGKILLed the process; 128+N names signal N."""
    code = result.exit_code
    ran_out = timeout_sec is not None and elapsed >= timeout_sec - 0.5
    timed_out = timeout_sec is not None and (
        code == EXIT_TIMEOUT or (code == EXIT_KILLED and ran_out))
    sig = (code - EXIT_SIGNAL_BASE
           if EXIT_SIGNAL_BASE < code < EXIT_SIGNAL_BASE + 65 and not timed_out else None)
    return ExecResult(code, result.stdout, result.stderr, timed_out=timed_out, signal=sig)


def state_from_inspect(data: dict[str, Any]) -> ContainerState:
    st = data.get("State") or {}
    labels = (data.get("Config") or {}).get("Labels") or {}
    return ContainerState(
        status=str(st.get("Status", "")),
        running=bool(st.get("Running")),
        exit_code=int(st.get("ExitCode") or 0),
        oom_killed=bool(st.get("OOMKilled")),
        started_at=parse_ts(st["StartedAt"]) if st.get("StartedAt") else None,
        finished_at=parse_ts(st["FinishedAt"]) if st.get("FinishedAt") else None,
        labels={str(k): str(v) for k, v in labels.items()},
    )


async def inspect_state(engine: DockerEngine, handle: ContainerHandle) -> ContainerState:
    api = await engine.api()
    try:
        data = await engine.call(api.inspect_container, handle.id)
    except sdk.NotFound as err:
        raise ContainerError(f"run {handle.run_id}: container {handle.name} is gone") from err
    return state_from_inspect(data)


def handle_from_inspect(data: dict[str, Any]) -> ContainerHandle:
    labels = (data.get("Config") or {}).get("Labels") or {}
    return ContainerHandle(
        id=str(data["Id"]),
        name=str(data.get("Name", "")).lstrip("/"),
        run_id=str(labels.get(LABEL_RUN, "")),
        role=str(labels.get(LABEL_ROLE, "")),
    )


def _kill(api: Any, cid: str, signal: str) -> bool:
    try:
        api.kill(cid, signal=signal)
    except sdk.NotFound:
        return False
    except sdk.APIError as err:
        if err.status_code == 409:  # not running
            return False
        raise
    return True


async def kill(engine: DockerEngine, handle: ContainerHandle, signal: str = "SIGKILL") -> bool:
    """Signal the container's init; False if it was not running (or is gone)."""
    api = await engine.api()
    return await engine.call(_kill, api, handle.id, signal)


def _remove(api: Any, cid: str) -> None:
    try:
        api.remove_container(cid, force=True, v=True)
    except sdk.NotFound:
        return
    except sdk.APIError as err:
        if err.status_code == 409 and "already in progress" in str(err):
            return
        raise


async def remove(engine: DockerEngine, handle: ContainerHandle) -> None:
    """Force-remove the container and its anonymous volumes; gone already is fine."""
    api = await engine.api()
    try:
        await engine.call(_remove, api, handle.id)
    except sdk.APIError as err:
        raise ContainerError(f"run {handle.run_id}: cannot remove {handle.name}: {err}") from err
