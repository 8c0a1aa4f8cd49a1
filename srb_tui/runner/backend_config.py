"""Where runs execute: the ``[backend]`` and ``[engines.*]`` tables of ``state/config.toml``.

```toml
[backend]
kind = "engines"                 # "local" (the default), "engines" or "swarm"
registry = "10.0.0.5:5000"       # optional: task images are pushed here and pulled by nodes

[engines.n1]                     # one table per engine of the pool (kind = "engines")
url = "tcp://10.0.0.2:2375"      # tcp://, ssh://user@host or unix:///path, as Docker names them
cpus = 2                         # optional; default: what the engine reports (NCPU)
memory_mb = 4096                 # optional; default: what the engine reports (MemTotal)
tls_ca = "/etc/srb/ca.pem"       # optional, tcp:// with TLS: all three files
tls_cert = "/etc/srb/cert.pem"
tls_key = "/etc/srb/key.pem"

# kind = "swarm": the manager's engine, and how srb reaches each node's engine
# manager = "tcp://10.0.0.2:2375"
# engine_port = 2375             # a node's engine is tcp://<its swarm address>:<port>
```

No file, or no ``[backend]`` table: ``local``, today's single engine from ``DOCKER_HOST``
(or the default socket), unchanged. A mistake is a :class:`BackendConfigError` naming the
file and the key. Parsing touches no engine (docker-py is not imported here).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.config_file import CONFIG_FILE

KINDS = ("local", "engines", "swarm")
SCHEMES = ("tcp", "ssh", "unix", "http")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
_ENGINE_KEYS = ("url", "cpus", "memory_mb", "tls_ca", "tls_cert", "tls_key")
_BACKEND_KEYS = ("kind", "registry", "manager", "engine_port")
LOCAL_NAME = "local"


class BackendConfigError(Exception):
    """The backend configuration cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class Tls:
    """Client certificate files for a ``tcp://`` engine with TLS."""

    ca: str
    cert: str
    key: str


@dataclass(frozen=True)
class EngineSpec:
    """One engine of the pool as configured (capacity None: ask the engine)."""

    name: str
    url: str | None  # None: DOCKER_HOST or the default socket (the local backend)
    cpus: float | None = None
    memory_mb: int | None = None
    tls: Tls | None = None


@dataclass(frozen=True)
class BackendConfig:
    """The execution backend and its engines."""

    kind: str = "local"
    engines: tuple[EngineSpec, ...] = (EngineSpec(LOCAL_NAME, None),)
    registry: str | None = None
    manager: str | None = None
    engine_port: int = 2375

    @property
    def local(self) -> bool:
        return self.kind == "local"


def _url(where: str, value: object) -> str:
    if not isinstance(value, str) or "://" not in value:
        raise BackendConfigError(f"{where}: url must be a string like tcp://HOST:2375, "
                                 "ssh://USER@HOST or unix:///PATH")
    scheme = value.split("://", 1)[0]
    if scheme not in SCHEMES:
        raise BackendConfigError(f"{where}: url scheme {scheme!r} is not one of "
                                 f"{', '.join(SCHEMES)}")
    return value


def _positive(where: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise BackendConfigError(f"{where}: must be a positive number")
    return float(value)


def _known_table(label: str, table: object, known: Sequence[str]) -> dict[str, Any]:
    """``table`` when it is a table of ``known`` keys only; else a BackendConfigError that
    starts with ``label``."""
    if not isinstance(table, dict):
        raise BackendConfigError(f"{label} must be a table")
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise BackendConfigError(f"{label} unknown key {unknown[0]!r} (known: "
                                 f"{', '.join(known)})")
    return table


def _engine(path: Path, name: str, table: object) -> EngineSpec:
    where = f"{path}: [engines.{name}]"
    if not _NAME.match(name):
        raise BackendConfigError(f"{where}: an engine's name is lowercase letters, digits, "
                                 "'.', '_' or '-' (at most 40)")
    table = _known_table(f"{where}:", table, _ENGINE_KEYS)
    tls_keys = [table.get(k) for k in ("tls_ca", "tls_cert", "tls_key")]
    tls = None
    if any(tls_keys):
        if not all(isinstance(v, str) and v for v in tls_keys):
            raise BackendConfigError(f"{where}: TLS needs tls_ca, tls_cert and tls_key")
        tls = Tls(*(str(v) for v in tls_keys))
    memory = _positive(f"{where} memory_mb", table.get("memory_mb"))
    return EngineSpec(name=name, url=_url(f"{where} url", table.get("url")),
                      cpus=_positive(f"{where} cpus", table.get("cpus")),
                      memory_mb=int(memory) if memory is not None else None, tls=tls)


def parse_backend(data: dict[str, Any], path: Path) -> BackendConfig:
    """The backend of a parsed config file (``path`` only names it in messages)."""
    backend = data.get("backend", {})
    backend = _known_table(f"{path}: [backend]", backend, _BACKEND_KEYS)
    kind = backend.get("kind", "local")
    if kind not in KINDS:
        raise BackendConfigError(f"{path}: [backend] kind {kind!r} is not one of "
                                 f"{', '.join(KINDS)}")
    registry = backend.get("registry")
    if registry is not None and (not isinstance(registry, str) or not registry):
        raise BackendConfigError(f"{path}: [backend] registry must be HOST:PORT")
    if kind == "local":
        return BackendConfig(registry=registry)
    if kind == "swarm":
        port = backend.get("engine_port", 2375)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise BackendConfigError(f"{path}: [backend] engine_port must be a port number")
        return BackendConfig(kind="swarm", engines=(), registry=registry,
                             manager=_url(f"{path}: [backend] manager",
                                          backend.get("manager")),
                             engine_port=port)
    tables = data.get("engines", {})
    if not isinstance(tables, dict) or not tables:
        raise BackendConfigError(f"{path}: kind = \"engines\" needs at least one "
                                 "[engines.NAME] table with a url")
    engines = tuple(_engine(path, name, t) for name, t in sorted(tables.items()))
    return BackendConfig(kind="engines", engines=engines, registry=registry)


def load_backend(state_dir: Path) -> BackendConfig:
    """The backend configured in ``state_dir/config.toml`` (local when there is none)."""
    path = state_dir / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return BackendConfig()
    except OSError as exc:
        raise BackendConfigError(f"{path}: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BackendConfigError(f"{path}: {exc}") from exc
    return parse_backend(data, path)


__all__ = ["LOCAL_NAME", "BackendConfig", "BackendConfigError", "EngineSpec", "Tls",
           "load_backend", "parse_backend"]
