"""The reachability sidecar: the agent container's only way out is the host gateway.

A small container with ``network_mode=none`` (so its namespace holds nothing but loopback)
runs ``socat``, relaying ``127.0.0.1:RELAY_PORT`` to the gateway's Unix socket, which comes
from the host through a read-only bind mount of the socket's *directory* (not the file: a
restarted gateway makes a new socket there, and socat connects afresh for each connection,
so the same relay reaches it). The agent container joins the relay's network namespace
(``network_mode=container:<relay id>``, see :func:`agent_network_mode`) and therefore sees
``http://127.0.0.1:RELAY_PORT`` and nothing else: no route, no DNS, no other interface. The
task image needs nothing installed.

The relay runs as ``nobody`` with every capability dropped, ``no-new-privileges`` and small
memory/pids/CPU limits (the runner's one ``ContainerSpec``); it carries srb's labels with
``srb.role=relay``, so the reaper removes it with its run. Its image ``srb/relay`` is built
once from the base image (Debian's socat) through the runner's cached image build.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from srb_tui.runner.containers import ContainerHandle, create, exec_run, remove, start
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.images import BuildLogSink, ImageInfo, build_image
from srb_tui.runner.spec import Bind, ContainerSpec

RELAY_PORT = 8642
RELAY_IMAGE = "srb/relay:socat"
RELAY_ROLE = "relay"
RELAY_USER = "65534:65534"  # nobody
SOCKET_MOUNT = "/srb/gateway"
SOCKET_NAME = "gateway.sock"
RELAY_MEM_BYTES = 64 * 1024 * 1024
RELAY_PIDS = 512  # socat forks one child per connection
RELAY_NANO_CPUS = 1_000_000_000
READY_TIMEOUT_SEC = 20.0

DOCKERFILE = """\
# srb's reachability relay: socat from Debian, nothing else.
ARG BASE_IMAGE=srb/base:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \\
 && apt-get install -y --no-install-recommends socat \\
 && rm -rf /var/lib/apt/lists/* \\
 && mkdir -p /srb/gateway /srb/channel \\
 && chown 65534:65534 /srb/gateway /srb/channel && chmod 0700 /srb/gateway /srb/channel
USER 65534:65534
"""

_build_lock = asyncio.Lock()


def relay_command(port: int = RELAY_PORT) -> list[str]:
    """socat: accept on loopback only, one child per connection to the gateway socket."""
    return [
        "socat",
        f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,backlog=512",
        f"UNIX-CONNECT:{SOCKET_MOUNT}/{SOCKET_NAME}",
    ]


async def ensure_relay_image(
    engine: DockerEngine,
    base_image: str,
    *,
    tag: str = RELAY_IMAGE,
    on_log: BuildLogSink | None = None,
) -> ImageInfo:
    """Build ``srb/relay`` from ``base_image`` unless the same build is already there."""
    async with _build_lock:
        with tempfile.TemporaryDirectory(prefix="srb-relay-") as folder:
            context = Path(folder)
            (context / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
            return await build_image(engine, context, tag, base_image=base_image, on_log=on_log)


def agent_network_mode(relay: ContainerHandle) -> str:
    """The agent container's ``network_mode``: the relay's namespace and nothing more."""
    return f"container:{relay.id}"


def sidecar_spec(
    run_id: str,
    role: str,
    command: Sequence[str],
    *,
    labels: Mapping[str, str],
    image: str = RELAY_IMAGE,
    network_mode: str = "none",
    binds: tuple[Bind, ...] = (),
    volumes: tuple[str, ...] = (),
    volumes_from: tuple[str, ...] = (),
) -> ContainerSpec:
    """A sidecar of ``run_id`` from the relay image (the relay, and on a node its uplink):
    nobody, small memory/pids/CPU limits, short logs, no network unless ``network_mode``
    gives one; mounted as ``binds``, ``volumes`` and ``volumes_from`` say."""
    return ContainerSpec(
        image=image,
        run_id=run_id,
        role=role,
        command=tuple(command),
        user=RELAY_USER,
        workdir="/",
        mem_limit=RELAY_MEM_BYTES,
        pids_limit=RELAY_PIDS,
        nano_cpus=RELAY_NANO_CPUS,
        network_mode=network_mode,
        labels=dict(labels),
        log_max_size="1m",
        log_max_files=2,
        binds=binds,
        volumes=volumes,
        volumes_from=volumes_from,
    )


def relay_spec(
    run_id: str,
    socket_dir: Path,
    *,
    labels: Mapping[str, str],
    image: str = RELAY_IMAGE,
    port: int = RELAY_PORT,
) -> ContainerSpec:
    """The relay container of ``run_id``: no network, the socket folder read-only, nobody."""
    return sidecar_spec(run_id, RELAY_ROLE, relay_command(port), labels=labels, image=image,
                        binds=(Bind(str(socket_dir), SOCKET_MOUNT, read_only=True),))


async def start_relay(
    engine: DockerEngine,
    run_id: str,
    socket_dir: Path,
    *,
    labels: Mapping[str, str],
    image: str = RELAY_IMAGE,
    port: int = RELAY_PORT,
) -> ContainerHandle:
    """Create and start the relay of ``run_id`` and wait until it accepts connections.

    ``socket_dir`` is the gateway's socket folder on the host (created if absent; it must
    not be deleted while the relay lives). The relay is removed again if it does not come up.
    """
    socket_dir = Path(socket_dir).resolve()
    try:
        socket_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ContainerError(f"run {run_id}: cannot create {socket_dir}: {err}") from err
    spec = relay_spec(run_id, socket_dir, labels=labels, image=image, port=port)
    try:
        handle = await create(engine, spec)
    except ContainerError as err:
        if "not found" in str(err):
            raise ContainerError(
                f"run {run_id}: relay image {image!r} not found; build it with "
                "ensure_relay_image"
            ) from err
        raise
    try:
        await start(engine, handle)
        await _wait_listening(engine, handle, port)
    except BaseException:
        await remove(engine, handle)
        raise
    return handle


async def _wait_listening(engine: DockerEngine, handle: ContainerHandle, port: int) -> None:
    """Poll (with a deadline) until socat accepts on the loopback port."""
    probe = ["socat", "-u", "OPEN:/dev/null", f"TCP:127.0.0.1:{port},connect-timeout=1"]
    deadline = time.monotonic() + READY_TIMEOUT_SEC
    last = ""
    while time.monotonic() < deadline:
        result = await exec_run(engine, handle, probe, timeout_sec=5)
        if result.exit_code == 0:
            return
        last = result.stderr.decode(errors="replace").strip()[-300:]
        await asyncio.sleep(0.1)
    raise ContainerError(
        f"run {handle.run_id}: the relay {handle.name} did not start listening on "
        f"127.0.0.1:{port} within {READY_TIMEOUT_SEC:g} s ({last or 'no output'})"
    )
