"""The engine's HTTP API through the standard library, for the calls of a launch.

A launch asks the engine for little before the agent starts: its version (:meth:`Wire.ping`),
an image's inspect, a container's create, an archive upload and the start. docker-py costs a
Python process more to import (requests, urllib3, charset detection …) than all of those
calls take, so they go over the engine's socket through :mod:`.http1` (the little of
HTTP/1.1 they need; even :mod:`http.client` costs more to import than the calls take)
instead; docker-py loads later for logs, waits, execs and collection. Engines this
cannot reach — TLS (``DOCKER_TLS_VERIFY``), ``ssh://`` — have no wire: every call then
goes through docker-py as before.

One connection per call (a Unix socket connect is cheap), so the pool's threads never
share one. A status of 400 or more is :class:`WireError` with the engine's message; an
engine that does not answer (socket refused, gone, timed out) is
:class:`~srb_tui.runner.errors.EngineUnavailable`, as docker-py's connection errors are
reported elsewhere in the runner.
"""

from __future__ import annotations

import json
import os
import socket
from typing import IO, Any
from urllib.parse import quote, urlencode, urlsplit

from srb_tui.runner.errors import EngineUnavailable
from srb_tui.runner.http1 import exchange


class WireError(Exception):
    """The engine answered a call with an error status."""

    def __init__(self, status: int, explanation: str, what: str) -> None:
        super().__init__(f"{status} {explanation} ({what})")
        self.status_code = status
        self.explanation = explanation


class Wire:
    """Blocking calls to one engine (run them on srb's pool)."""

    def __init__(self, *, socket_path: str | None = None, host: str | None = None,
                 port: int | None = None, timeout: float = 120.0) -> None:
        self.socket_path = socket_path
        self.host = host
        self.port = port
        self.timeout = timeout
        self.prefix = ""  # "/v1.41" once the engine's API version is known

    @classmethod
    def for_url(cls, base_url: str, timeout: float = 120.0) -> Wire | None:
        """A wire to ``base_url`` (``unix://``, or plain ``tcp://`` / ``http://``), or None
        for an engine reached another way (TLS, ssh)."""
        if os.environ.get("DOCKER_TLS_VERIFY"):
            return None
        parts = urlsplit(base_url)
        if parts.scheme in ("unix", "http+unix"):
            return cls(socket_path=parts.path or parts.netloc, timeout=timeout)
        if parts.scheme in ("tcp", "http") and parts.hostname:
            try:
                port = parts.port or 2375
            except ValueError:  # out of range: docker-py's connect names the bad DOCKER_HOST
                return None
            return cls(host=parts.hostname, port=port, timeout=timeout)
        return None

    @property
    def where(self) -> str:
        return (f"unix://{self.socket_path}" if self.socket_path is not None
                else f"tcp://{self.host}:{self.port}")

    def _connect(self) -> socket.socket:
        if self.socket_path is None:
            return socket.create_connection((self.host or "localhost", self.port or 2375),
                                            timeout=self.timeout)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        return sock

    def call(self, method: str, path: str, *, query: dict[str, str] | None = None,
             body: bytes | IO[bytes] | None = None, content_type: str | None = None,
             length: int | None = None, answered: dict[str, str] | None = None) -> bytes:
        """One request; the response body (its headers into ``answered`` when given).
        WireError for a status of 400 or more."""
        url = self.prefix + path + (f"?{urlencode(query)}" if query else "")
        headers = {"Connection": "close"}
        if content_type:
            headers["Content-Type"] = content_type
        if body is not None:
            headers["Content-Length"] = str(len(body) if isinstance(body, bytes) else length)
        try:
            sock = self._connect()
            try:
                status, data = exchange(sock, method, url, headers, body, answered=answered)
            finally:
                sock.close()
        except OSError as err:  # refused, gone, timed out, or an answer that is not HTTP
            raise EngineUnavailable(
                f"lost the Docker engine at {self.where}: {err} ({method} {path})") from err
        if status >= 400:
            raise WireError(status, _message(data), f"{method} {path}")
        return data

    def json(self, method: str, path: str, *, query: dict[str, str] | None = None,
             payload: object = None) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        data = self.call(method, path, query=query, body=body,
                         content_type="application/json" if body is not None else None)
        return json.loads(data) if data.strip() else None

    # -- what a launch asks -----------------------------------------------------------

    def version(self) -> dict[str, Any]:
        """``GET /version``; later calls use the engine's own API version."""
        self.prefix = ""
        data: dict[str, Any] = self.json("GET", "/version")
        if data.get("ApiVersion"):
            self.prefix = f"/v{data['ApiVersion']}"
        return data

    def ping(self) -> dict[str, Any]:
        """What :meth:`version` says of the engine that :meth:`DockerEngine.ping
        <srb_tui.runner.engine.DockerEngine.ping>` reports (``Version``, ``ApiVersion``),
        from ``GET /_ping``'s headers: Docker's engine names both there (``Server:
        Docker/VERSION (OS)``, ``Api-Version``), and answers ``/_ping`` in half a
        millisecond where ``/version`` takes over ten (it asks containerd and the
        runtimes theirs). An engine whose headers do not say is asked ``/version``."""
        self.prefix = ""
        answered: dict[str, str] = {}
        self.call("GET", "/_ping", answered=answered)
        server, api = answered.get("server", ""), answered.get("api-version", "")
        product, _, rest = server.partition("/")
        version = rest.split(" ", 1)[0]
        if product != "Docker" or not version or not api:
            return self.version()
        self.prefix = f"/v{api}"
        return {"Version": version, "ApiVersion": api}

    def inspect_image(self, ref: str) -> dict[str, Any] | None:
        """The image's inspect, or None when the engine has no such image."""
        try:
            data: dict[str, Any] = self.json("GET", f"/images/{quote(ref, safe='')}/json")
        except WireError as err:
            if err.status_code == 404:
                return None
            raise
        return data

    def create_container(self, config: dict[str, Any], name: str) -> str:
        made = self.json("POST", "/containers/create", query={"name": name}, payload=config)
        return str(made["Id"])

    def put_archive(self, cid: str, path: str, fh: IO[bytes], length: int) -> None:
        self.call("PUT", f"/containers/{cid}/archive", query={"path": path}, body=fh,
                  content_type="application/x-tar", length=length)

    def start(self, cid: str) -> None:
        self.call("POST", f"/containers/{cid}/start")


def _message(data: bytes) -> str:
    try:
        decoded = json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace").strip()
    if isinstance(decoded, dict) and "message" in decoded:
        return str(decoded["message"])
    return str(decoded)
