"""The Docker engine connection: a lazily created docker-py client plus srb's pool.

``DockerEngine`` is what every other runner module takes. Creating it never touches
the engine; the client is made on first use (on the pool), and :meth:`ping` turns an
unreachable engine into a message that says how to start it. docker-py itself is
imported with the client: the calls of a launch (ping, image inspect, create, archive,
start) go through :attr:`DockerEngine.wire` (:mod:`srb_tui.runner.wire`) when the engine
is reachable that way, so ``srb run`` starts its agent before docker-py has loaded.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from srb_tui.runner import sdk
from srb_tui.runner.errors import EngineUnavailable
from srb_tui.runner.pool import RunnerPool
from srb_tui.runner.wire import Wire, WireError

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_TIMEOUT_SEC = 120

START_HINT = (
    "Start it with `sudo systemctl start docker` (or run `sudo dockerd` in another "
    "terminal), make sure your user may use it (`sudo usermod -aG docker $USER`, then "
    "log in again), or point DOCKER_HOST at a running engine."
)
REMOTE_HINT = (
    "It is another machine's engine: check the address, that dockerd there listens on it "
    "(`dockerd -H tcp://0.0.0.0:2375`, or `-H unix://...` behind ssh), that this machine "
    "reaches it (firewall, route) and, for tcp with TLS, the certificate files."
)
REMOTE_SCHEMES = ("tcp://", "http://", "https://", "ssh://")


def start_hint(base_url: str) -> str:
    """How to get the engine at ``base_url`` answering: start the local daemon, or (an
    engine reached over the network) check the address and the remote daemon."""
    return REMOTE_HINT if base_url.startswith(REMOTE_SCHEMES) else START_HINT


@dataclass(frozen=True)
class EngineInfo:
    """What :meth:`DockerEngine.ping` found."""

    ok: bool
    version: str = ""
    api_version: str = ""
    error: str = ""


def outcome_seen(fut: asyncio.Future[Any]) -> None:
    """A done-callback for an engine call nobody awaits any more (its waiter moved on):
    its error is marked retrieved, not logged as "Task exception was never retrieved"."""
    if not fut.cancelled():
        fut.exception()


def unreachable_message(base_url: str, err: BaseException) -> str:
    """The user-facing message for an engine that does not answer."""
    return f"Docker engine not reachable at {base_url}: {err}. {start_hint(base_url)}"


class DockerEngine:
    """A docker-py client created on demand, and the pool its blocking calls run on."""

    def __init__(
        self,
        pool: RunnerPool | None = None,
        *,
        base_url: str | None = None,
        timeout_sec: int = DEFAULT_TIMEOUT_SEC,
        tls: tuple[str, str, str] | None = None,
        name: str = "local",
    ) -> None:
        self.pool = pool or RunnerPool(1)
        self.base_url = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        self._explicit_url = base_url
        self._timeout_sec = timeout_sec
        self._client: Any = None
        self._lock = asyncio.Lock()
        #: (ca, cert, key) files of a ``tcp://`` engine with TLS.
        self.tls = tls
        #: The engine's name in srb's pool (``local`` for the single engine of today).
        self.name = name
        #: The standard-library path to the engine (None: TLS or ssh, docker-py only).
        self.wire = None if tls else Wire.for_url(self.base_url, timeout_sec)

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking function on srb's pool."""
        return await self.pool.call(fn, *args, **kwargs)

    def _make_client(self) -> Any:
        pool_size = self.pool.max_workers + 2
        docker = sdk.docker()
        try:
            if self._explicit_url is not None:
                tls: Any = False
                if self.tls is not None:
                    ca, cert, key = self.tls
                    tls = docker.tls.TLSConfig(client_cert=(cert, key), ca_cert=ca,
                                               verify=True)
                return docker.DockerClient(
                    base_url=self._explicit_url,
                    version="auto",
                    timeout=self._timeout_sec,
                    max_pool_size=pool_size,
                    tls=tls,
                    use_ssh_client=self._explicit_url.startswith("ssh://"),
                )
            return docker.from_env(timeout=self._timeout_sec, max_pool_size=pool_size)
        except (sdk.DockerException, ValueError) as err:  # ValueError: a DOCKER_HOST port
            raise EngineUnavailable(unreachable_message(self.base_url, err)) from err

    async def client(self) -> Any:
        """The high-level ``docker.DockerClient`` (created on first use)."""
        if self._client is None:
            async with self._lock:
                if self._client is None:
                    self._client = await self.call(self._make_client)
        return self._client

    async def api(self) -> Any:
        """The low-level ``docker.APIClient`` of the same connection."""
        return (await self.client()).api

    async def ping(self) -> EngineInfo:
        """Check the engine answers; never raises, the error is in the result."""
        try:
            if self.wire is not None:
                try:
                    data: dict[str, Any] = await self.call(self.wire.ping)
                except EngineUnavailable as err:  # the wire's: say how to start one
                    raise OSError(str(err.__cause__ or err)) from err
            else:
                client = await self.client()
                data = await self.call(client.version)
        except EngineUnavailable as err:
            return EngineInfo(ok=False, error=str(err))
        except (WireError, OSError, ValueError) as err:
            return EngineInfo(ok=False, error=unreachable_message(self.base_url, err))
        except sdk.DockerException as err:
            return EngineInfo(ok=False, error=unreachable_message(self.base_url, err))
        return EngineInfo(
            ok=True,
            version=str(data.get("Version", "")),
            api_version=str(data.get("ApiVersion", "")),
        )

    def close(self) -> None:
        """Close the client's connections and stop the pool."""
        if self._client is not None:
            self._client.close()
            self._client = None
        self.pool.shutdown()
