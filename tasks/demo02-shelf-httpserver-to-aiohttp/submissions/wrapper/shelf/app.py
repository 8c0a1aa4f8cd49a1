"""shelf on aiohttp: an aiohttp front that hands every request to the existing service.

The http.server implementation (shelf/server.py) keeps running in a thread on a private
loopback port; this aiohttp application forwards each request to it unchanged and returns
its answer, so behaviour stays exactly the same while the front end is aiohttp.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import sys
import threading
from http.server import ThreadingHTTPServer

from aiohttp import web

from . import __version__
from .catalog import Catalog
from .server import Handler

PASSED_HEADERS = ("content-type", "location", "allow")


def start_backend() -> int:
    Handler.catalog = Catalog()
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    backend.daemon_threads = True
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    return int(backend.server_address[1])


def forward(port: int, method: str, target: str, headers: dict[str, str],
            body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body or method in ("POST", "PUT", "PATCH"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        reply = conn.getresponse()
        return reply.status, reply.getheaders(), reply.read()
    finally:
        conn.close()


def make_app(port: int) -> web.Application:
    async def proxy(request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in ("content-length", "transfer-encoding", "connection")}
        # HEAD is forwarded as GET: aiohttp drops the body itself and keeps its length.
        method = "GET" if request.method == "HEAD" else request.method
        status, got, data = await asyncio.get_running_loop().run_in_executor(
            None, forward, port, method, request.raw_path, headers, body)
        response = web.Response(status=status, body=data or None)
        for name, value in got:
            if name.lower() in PASSED_HEADERS:
                response.headers[name] = value
        return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy)
    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shelf", description="shelf's JSON catalogue service")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--version", action="version", version=f"shelf {__version__}")
    args = parser.parse_args(argv)
    web.run_app(make_app(start_backend()), host=args.host, port=args.port, print=None,
                access_log=None)
    return 0
