"""The relay of an agent on a remote engine: a loopback relay and an uplink, two containers.

On a local engine the relay (:mod:`.relay`) reaches the gateway's Unix socket through a bind
mount. A remote engine's node has no such socket, so the run gets two sidecars there:

* the **relay** (role ``relay``), exactly as locally: ``network_mode=none``, socat from
  ``127.0.0.1:8642`` to ``/srb/gateway/gateway.sock``; the agent joins its network namespace
  and so has loopback only (no route, no DNS). The socket folder is not a host path but the
  uplink's anonymous volume (``VolumesFrom``, read-only);
* the **uplink** (role ``relay-uplink``), the only container of the run with a network (the
  node's default bridge): socat listens on that socket in its volume (mode 0600, uid nobody)
  and carries each connection over TLS to srb's per-run node channel on srb's host
  (:mod:`srb_tui.gateway.channel`), proving the run's relay key and checking the gateway's
  certificate. Key and certificates are written into the created container's filesystem
  (mode 0400, nobody), never into its environment or labels.

Which of the two paths a run takes is :func:`relay_route` of the engine's URL: a Unix
socket (or a TCP engine on loopback) is this machine, anything else is a node, reached back
at the address of this host that routes to it (:func:`host_address_for`, or given).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from srb_tui.runner.containers import (
    ContainerHandle,
    create,
    exec_run,
    inspect_state,
    kill,
    remove,
    start,
)
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.files import put_files
from srb_tui.runner.relay import (
    RELAY_IMAGE,
    RELAY_PORT,
    RELAY_ROLE,
    SOCKET_MOUNT,
    SOCKET_NAME,
    _wait_listening,
    relay_command,
    sidecar_spec,
)
from srb_tui.runner.spec import ContainerSpec

UPLINK_ROLE = "relay-uplink"
CHANNEL_DIR = "/srb/channel"
UPLINK_NETWORK = "bridge"
NOBODY = 65534
SOCKET_TIMEOUT_SEC = 20.0


@dataclass(frozen=True)
class RelayRoute:
    """How a run's relay reaches the gateway: ``local`` (the bind-mounted Unix socket) or
    through the node channel at ``host_address`` (srb's host as the node sees it)."""

    local: bool
    host_address: str | None = None


@dataclass(frozen=True)
class Uplink:
    """Where the uplink dials and what it proves: the channel's address, the relay's
    certificate and key (PEM), the gateway's certificate and name (its pin)."""

    host: str
    port: int
    relay_pem: bytes
    gateway_cert: bytes
    gateway_name: str


def _engine_host(base_url: str) -> str | None:
    """The host name in a ``tcp://``/``ssh://``/``http(s)://`` engine URL (None: a socket)."""
    parts = urlsplit(base_url)
    if parts.scheme in ("unix", "npipe", "") or not parts.hostname:
        return None
    return parts.hostname


def engine_is_local(base_url: str) -> bool:
    """True for a Unix socket (or named pipe) engine and a TCP engine on loopback."""
    host = _engine_host(base_url)
    if host is None:
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_address_for(base_url: str) -> str:
    """This host's own address on the route to the engine's host (what the node dials)."""
    host = _engine_host(base_url)
    if host is None:
        return "127.0.0.1"
    try:
        target = socket.getaddrinfo(host, 2375, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((target, 9))  # no packet is sent: this only picks the route
            return str(probe.getsockname()[0])
    except OSError as err:
        raise ContainerError(f"cannot find this host's address towards {host}: {err}") from err


def relay_route(base_url: str, host_address: str | None = None) -> RelayRoute:
    """The relay path for an engine at ``base_url`` (``host_address`` overrides the guess)."""
    if engine_is_local(base_url):
        return RelayRoute(local=True)
    return RelayRoute(local=False, host_address=host_address or host_address_for(base_url))


ADDRESS_FILE = "address"


def uplink_command() -> list[str]:
    """socat: the Unix socket in the shared volume to TLS 1.3 with the run's relay key, to
    the channel named in the container's ``address`` file (so a restarted srb can point the
    uplink at its new channel, :func:`repoint_uplink`)."""
    dial = (f"OPENSSL:$(cat {CHANNEL_DIR}/{ADDRESS_FILE}),cert={CHANNEL_DIR}/relay.pem,"
            f"cafile={CHANNEL_DIR}/gateway.crt,verify=1,"
            f"commonname=$(cat {CHANNEL_DIR}/gateway.name),nodelay")
    listen = f"UNIX-LISTEN:{SOCKET_MOUNT}/{SOCKET_NAME},fork,unlink-early,mode=600,backlog=512"
    return ["sh", "-c", f'exec socat {listen} "{dial}"']


def _channel_files(uplink: Uplink) -> dict[str, bytes]:
    return {"relay.pem": uplink.relay_pem, "gateway.crt": uplink.gateway_cert,
            "gateway.name": uplink.gateway_name.encode(),
            ADDRESS_FILE: f"{uplink.host}:{uplink.port}".encode()}


def uplink_spec(run_id: str, uplink: Uplink, *, labels: Mapping[str, str],
                image: str = RELAY_IMAGE) -> ContainerSpec:
    return sidecar_spec(run_id, UPLINK_ROLE, uplink_command(), labels=labels, image=image,
                        network_mode=UPLINK_NETWORK, volumes=(SOCKET_MOUNT,))


def inner_relay_spec(run_id: str, uplink: ContainerHandle, *, labels: Mapping[str, str],
                     image: str = RELAY_IMAGE, port: int = RELAY_PORT) -> ContainerSpec:
    """The relay, as locally, but its socket folder is the uplink's volume (read-only)."""
    return sidecar_spec(run_id, RELAY_ROLE, relay_command(port), labels=labels, image=image,
                        volumes_from=(f"{uplink.id}:ro",))


async def _wait_socket(engine: DockerEngine, handle: ContainerHandle) -> None:
    probe = ["test", "-S", f"{SOCKET_MOUNT}/{SOCKET_NAME}"]
    deadline = time.monotonic() + SOCKET_TIMEOUT_SEC
    while time.monotonic() < deadline:
        if (await exec_run(engine, handle, probe, timeout_sec=5)).exit_code == 0:
            return
        await asyncio.sleep(0.1)
    raise ContainerError(f"run {handle.run_id}: the uplink's socket did not appear within "
                         f"{SOCKET_TIMEOUT_SEC:g} s")


async def start_remote_relay(
    engine: DockerEngine,
    run_id: str,
    uplink: Uplink,
    *,
    labels: Mapping[str, str],
    image: str = RELAY_IMAGE,
    port: int = RELAY_PORT,
) -> tuple[ContainerHandle, ContainerHandle]:
    """Start the uplink and the loopback relay of ``run_id`` on a remote engine; returns
    (relay, uplink). The agent joins the relay (:func:`.relay.agent_network_mode`)."""
    up = await create(engine, uplink_spec(run_id, uplink, labels=labels, image=image))
    relay: ContainerHandle | None = None
    try:
        await put_files(engine, up, CHANNEL_DIR, _channel_files(uplink),
                        uid=NOBODY, gid=NOBODY, mode=0o400)
        await start(engine, up)
        relay = await create(engine, inner_relay_spec(run_id, up, labels=labels, image=image,
                                                      port=port))
        await start(engine, relay)
        await _wait_socket(engine, relay)
        await _wait_listening(engine, relay, port)
    except BaseException:
        await remove_remote_relay(engine, relay, up)
        raise
    return relay, up


async def repoint_uplink(engine: DockerEngine, handle: ContainerHandle, uplink: Uplink) -> None:
    """Point a run's uplink at a new channel (srb restarted: the old channel, its port and
    its keys died with the old process): stop it, write the new keys and address, start it.

    The relay and the agent in its network namespace are not touched; connections the
    agent opens meanwhile fail as they did while srb was away, and its client retries.
    """
    await kill(engine, handle)
    deadline = time.monotonic() + SOCKET_TIMEOUT_SEC
    while (await inspect_state(engine, handle)).running:
        if time.monotonic() > deadline:
            raise ContainerError(f"run {handle.run_id}: the uplink {handle.name} did not stop")
        await asyncio.sleep(0.05)
    await put_files(engine, handle, CHANNEL_DIR, _channel_files(uplink),
                    uid=NOBODY, gid=NOBODY, mode=0o400)
    await start(engine, handle)


async def remove_remote_relay(engine: DockerEngine, relay: ContainerHandle | None,
                              uplink: ContainerHandle | None) -> None:
    """The relay first (it uses the uplink's volume), then the uplink with its volume."""
    for handle in (relay, uplink):
        if handle is not None:
            with contextlib.suppress(ContainerError):
                await remove(engine, handle)
