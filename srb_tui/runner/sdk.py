"""docker-py's (and its HTTP stack's) exception types, loaded with docker-py on first use.

Importing ``docker`` pulls in requests and urllib3: most of what a launch spent before
the agent started. The runner's modules name those types as ``sdk.NotFound`` and so on;
the name is looked up when an ``except`` clause is matched, so docker-py loads only
once something has used it (or failed near it), never at srb's start-up.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE: dict[str, tuple[str, str]] = {
    "APIError": ("docker.errors", "APIError"),
    "DockerException": ("docker.errors", "DockerException"),
    "ImageNotFound": ("docker.errors", "ImageNotFound"),
    "NotFound": ("docker.errors", "NotFound"),
    "ReadTimeout": ("requests.exceptions", "ReadTimeout"),
    "RequestsConnectionError": ("requests.exceptions", "ConnectionError"),
    "ReadTimeoutError": ("urllib3.exceptions", "ReadTimeoutError"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where[0]), where[1])


def docker() -> Any:
    """The ``docker`` package itself."""
    return importlib.import_module("docker")
