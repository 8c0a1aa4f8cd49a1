"""The gateway's two listening sockets: the Unix socket relays reach, and TCP on loopback.

The Unix socket's folder is bind-mounted into relay containers, so it is made traversable
and the socket connectable by their non-root user (the token is the credential). A socket
file left by a killed srb is replaced; one that still answers belongs to a live gateway and
is left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Callable
from pathlib import Path

SOCKET_NAME = "gateway.sock"
UNIX_PATH_MAX = 107


class GatewayError(Exception):
    """The gateway cannot start or was used wrongly (the message says what to fix)."""


async def _socket_is_live(path: Path) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 2.0)
    except (TimeoutError, OSError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def unix_socket(socket_dir: Path) -> socket.socket:
    path = socket_dir / SOCKET_NAME
    if len(str(path).encode()) > UNIX_PATH_MAX:
        raise GatewayError(
            f"gateway socket path {path} is longer than {UNIX_PATH_MAX} bytes; "
            "use a shorter state directory"
        )
    try:
        socket_dir.mkdir(parents=True, exist_ok=True)
        # Traversable by the relay's non-root user (the directory is its bind mount).
        socket_dir.chmod(0o711)
    except OSError as err:
        raise GatewayError(f"cannot create the gateway socket folder {socket_dir}: {err}") from err
    if path.exists() or path.is_symlink():
        if await _socket_is_live(path):
            raise GatewayError(f"another srb gateway is already listening on {path}")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale socket of a killed srb
    # The token is the credential; the relay's uid must be able to connect.
    return _listening(socket.AF_UNIX, str(path), lambda: os.chmod(path, 0o666))


def tcp_socket() -> socket.socket:
    return _listening(socket.AF_INET, ("127.0.0.1", 0))


def _listening(family: socket.AddressFamily, address: str | tuple[str, int],
               after_bind: Callable[[], object] = lambda: None) -> socket.socket:
    """A non-blocking stream socket listening on ``address`` (``after_bind`` runs between
    bind and listen); GatewayError when it cannot be had."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        after_bind()
        sock.listen(512)
    except OSError as err:
        sock.close()
        where = address if isinstance(address, str) else address[0]
        raise GatewayError(f"cannot listen on {where}: {err}") from err
    sock.setblocking(False)
    return sock
