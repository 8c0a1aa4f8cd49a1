"""Helpers for State A tests: a local HTTP server on 127.0.0.1, tiny archives, digests."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def make_tarball(files: dict[str, bytes], prefix: str = "", mode: str = "w:gz") -> bytes:
    """A tar archive of ``files`` (relative path -> bytes) under an optional prefix dir."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:  # type: ignore[call-overload]
        if prefix:
            info = tarfile.TarInfo(prefix)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(f"{prefix}/{name}" if prefix else name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_files(cache_dir: Path) -> list[str]:
    """Every path under the cache directory (empty list when it is empty or absent)."""
    if not cache_dir.exists():
        return []
    return sorted(p.relative_to(cache_dir).as_posix() for p in cache_dir.rglob("*"))


SAMPLE = {
    "README.md": b"# sample\n",
    "pkg/__init__.py": b"VERSION = '1.0'\n",
    "pkg/core.py": b"def f():\n    return 42\n",
    "run.sh": b"#!/bin/sh\necho hi\n",
}


@dataclass
class LocalServer:
    """Serves fixed bodies by path and records every request path it receives."""

    routes: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    base: str = ""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def add(self, path: str, body: bytes, status: int = 200) -> str:
        self.routes[path] = (status, body)
        return self.base + path

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


def start_server(state: LocalServer) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            status, body = state.routes.get(self.path, (404, b"not found"))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state._server = server
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    state._thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    state._thread.start()
