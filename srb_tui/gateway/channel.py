"""The node channel: model traffic of an agent on another machine, back to this host's gateway.

On a remote engine the gateway's Unix socket cannot be bind-mounted into the relay, so the
run's *uplink* sidecar on the node dials back to a listener srb opens here, on the address
the node reaches this host by. The listener is per run and speaks TLS 1.3 only, with mutual
authentication by two per-run self-signed certificates made here (``openssl``, EC P-256):

* the listener accepts a connection only if the peer proves the run's *relay* key (its
  certificate is the only trust anchor of the listener's context, and its SHA-256
  fingerprint is checked again after the handshake);
* the uplink accepts the listener only if it proves the run's *gateway* key (the uplink's
  ``cafile`` is that one certificate, and its name is checked).

Only the relay's key pair and the gateway's certificate are handed to the node (to the uplink
container, never in its environment); the gateway's private key stays in memory here, the
model keys never leave this host. Each accepted connection is spliced to the gateway's Unix
socket, where the per-run token and the ledger work exactly as for a local run. A connection
that fails the handshake is refused, counted in :attr:`NodeChannel.refusals` and logged on
``srb.gateway.channel`` (its peer address and the TLS reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import shutil
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from srb_tui.gateway.listen import GatewayError

LOG = logging.getLogger("srb.gateway.channel")
GATEWAY_NAME = "srb-gateway-channel"
HANDSHAKE_TIMEOUT_SEC = 10.0
CHUNK = 256 * 1024


@dataclass(frozen=True)
class Refusal:
    """A connection the listener refused: when, from where, and the TLS reason."""

    at: float
    peer: str
    reason: str


@dataclass(frozen=True)
class Credentials:
    """A run's two certificates (PEM). ``relay_pem`` is the relay's certificate and key
    (for the uplink), ``gateway_cert`` the listener's certificate (the uplink's pin)."""

    gateway_cert: bytes
    gateway_key: bytes
    relay_cert: bytes
    relay_key: bytes

    @property
    def relay_pem(self) -> bytes:
        return self.relay_cert + self.relay_key

    @property
    def relay_fingerprint(self) -> str:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(self.relay_cert.decode())).hexdigest()


def _self_signed(folder: Path, stem: str, name: str) -> tuple[bytes, bytes]:
    key, cert = folder / f"{stem}.key", folder / f"{stem}.crt"
    cmd = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
           "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "30",
           "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}"]
    proc = subprocess.run(cmd, capture_output=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise GatewayError("cannot make the node channel's certificate: "
                           f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
    return cert.read_bytes(), key.read_bytes()


def make_credentials(run_id: str) -> Credentials:
    """Two fresh per-run key pairs (made in a private temporary folder, removed at once)."""
    if shutil.which("openssl") is None:
        raise GatewayError("the node channel needs the openssl command (apt-get install openssl)")
    with tempfile.TemporaryDirectory(prefix="srb-channel-") as folder:
        os.chmod(folder, 0o700)
        gw_cert, gw_key = _self_signed(Path(folder), "gateway", GATEWAY_NAME)
        relay_cert, relay_key = _self_signed(Path(folder), "relay", f"srb-relay-{run_id}"[:60])
    return Credentials(gw_cert, gw_key, relay_cert, relay_key)


def _server_context(creds: Credentials) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(cadata=creds.relay_cert.decode())
    # load_cert_chain reads files only: a 0600 file in a 0700 folder, removed at once.
    with tempfile.TemporaryDirectory(prefix="srb-channel-") as folder:
        os.chmod(folder, 0o700)
        path = Path(folder) / "gateway.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(creds.gateway_cert + creds.gateway_key)
        ctx.load_cert_chain(str(path))
    return ctx


class _Incoming(asyncio.Protocol):
    """A new TCP connection: reading paused at once, the TLS handshake takes it over."""

    def __init__(self, channel: NodeChannel) -> None:
        self.channel = channel

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.pause_reading()  # type: ignore[attr-defined]
        self.channel._connected(transport)


@dataclass
class NodeChannel:
    """The per-run TLS listener on ``host:port`` that splices to the gateway's socket."""

    run_id: str
    host: str
    port: int
    credentials: Credentials
    gateway_socket: Path
    refusals: list[Refusal] = field(default_factory=list)
    accepted: int = 0
    on_refused: Callable[[Refusal], None] | None = None
    _server: asyncio.Server | None = None
    _context: ssl.SSLContext | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @classmethod
    async def open(cls, run_id: str, host: str, gateway_socket: Path, *, port: int = 0,
                   on_refused: Callable[[Refusal], None] | None = None) -> NodeChannel:
        """Listen on ``host`` (the address the node reaches this host by) for ``run_id``."""
        creds = await asyncio.to_thread(make_credentials, run_id)
        channel = cls(run_id, host, port, creds, Path(gateway_socket), on_refused=on_refused)
        channel._context = _server_context(creds)
        try:
            loop = asyncio.get_running_loop()
            channel._server = await loop.create_server(
                lambda: _Incoming(channel), host, port, backlog=512)
        except OSError as err:
            raise GatewayError(f"run {run_id}: cannot listen for its node on "
                               f"{host}:{port}: {err}") from err
        channel.port = int(channel._server.sockets[0].getsockname()[1])
        return channel

    def _refuse(self, peer: str, reason: str) -> None:
        refusal = Refusal(time.time(), peer, reason)
        self.refusals.append(refusal)
        LOG.warning("node channel of run %s refused %s: %s", self.run_id, peer, reason)
        if self.on_refused is not None:
            with contextlib.suppress(Exception):
                self.on_refused(refusal)

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        """A TCP connection came in: the handshake runs before a byte is read as data."""
        task = asyncio.get_running_loop().create_task(self._handshake(transport))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handshake(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        peername = transport.get_extra_info("peername")
        peer = f"{peername[0]}:{peername[1]}" if peername else "?"
        reader = asyncio.StreamReader(limit=CHUNK)
        protocol = asyncio.StreamReaderProtocol(reader)
        assert self._context is not None
        try:
            tls = await loop.start_tls(transport, protocol, self._context,  # type: ignore[arg-type]
                                       server_side=True,
                                       ssl_handshake_timeout=HANDSHAKE_TIMEOUT_SEC)
            if tls is None:
                raise ConnectionError("the connection closed during the handshake")
            der = tls.get_extra_info("ssl_object").getpeercert(binary_form=True)
            if hashlib.sha256(der or b"").hexdigest() != self.credentials.relay_fingerprint:
                tls.abort()
                raise ssl.SSLError("the peer's certificate is not this run's relay's")
        except (ssl.SSLError, OSError, TimeoutError, ConnectionError) as err:
            self._refuse(peer, f"{type(err).__name__}: {err}"[:300])
            transport.abort()
            return
        self.accepted += 1
        writer = asyncio.StreamWriter(tls, protocol, reader, loop)
        await self._splice(reader, writer)

    async def _splice(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.gateway_socket))
        except OSError as err:
            LOG.warning("node channel of run %s: gateway socket unreachable: %s", self.run_id, err)
            writer.transport.abort()
            return

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while chunk := await src.read(CHUNK):
                    dst.write(chunk)
                    await dst.drain()
                if dst.can_write_eof():
                    dst.write_eof()
            except (OSError, ConnectionError, ssl.SSLError, RuntimeError):
                pass

        try:
            await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        finally:
            for w in (up_writer, writer):
                w.close()
                with contextlib.suppress(Exception):
                    await w.wait_closed()

    async def close(self) -> None:
        """Stop listening and cut every open connection of the run."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
