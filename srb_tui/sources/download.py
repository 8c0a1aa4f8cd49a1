"""HTTP(S) access for State A: JSON documents from package indexes and archive downloads.

Stdlib ``urllib`` only. Every failure becomes a :class:`StateAError` naming the URL;
a download is hashed while it streams so the caller can verify it before keeping it.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from http.client import HTTPResponse
from pathlib import Path
from typing import cast

from srb_tui.sources.errors import StateAError

USER_AGENT = "srb/0.1 (+state-a)"
TIMEOUT_SEC = 60.0
MAX_DOWNLOAD_BYTES = 4 << 30
_CHUNK = 1 << 20

Progress = Callable[[str], None]


class NotFound(StateAError):
    """The server answered 404 for a URL."""


def _open(url: str, accept: str, timeout: float) -> HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": accept})
    try:
        return cast(HTTPResponse, urllib.request.urlopen(request, timeout=timeout))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise NotFound(f"{url}: not found (HTTP 404)") from exc
        raise StateAError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise StateAError(
            f"{url}: cannot connect ({exc.reason}); the network or the server is unavailable"
        ) from exc
    except (TimeoutError, OSError) as exc:
        raise StateAError(f"{url}: cannot connect ({exc})") from exc


def fetch_json(url: str, *, timeout: float = TIMEOUT_SEC) -> dict[str, object]:
    """GET a JSON object."""
    with _open(url, "application/json", timeout) as response:
        try:
            raw = response.read(64 << 20)
        except OSError as exc:
            raise StateAError(f"{url}: connection lost while reading ({exc})") from exc
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise StateAError(f"{url}: the answer is not JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise StateAError(f"{url}: the answer is not a JSON object")
    return document


def download(
    url: str, dest: Path, *, timeout: float = TIMEOUT_SEC, progress: Progress | None = None
) -> tuple[str, int]:
    """Stream ``url`` into the new file ``dest``; return its (sha256 hex, size)."""
    digest = hashlib.sha256()
    size = 0
    with _open(url, "*/*", timeout) as response, dest.open("xb") as out:
        length = response.headers.get("Content-Length")
        if progress is not None:
            progress(f"downloading {url}" + (f" ({length} bytes)" if length else ""))
        try:
            while chunk := response.read(_CHUNK):
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise StateAError(f"{url}: larger than {MAX_DOWNLOAD_BYTES} bytes")
                digest.update(chunk)
                out.write(chunk)
        except OSError as exc:
            raise StateAError(f"{url}: download interrupted ({exc})") from exc
    if length is not None and length.isdigit() and int(length) != size:
        raise StateAError(f"{url}: download truncated ({size} of {length} bytes)")
    return digest.hexdigest(), size
