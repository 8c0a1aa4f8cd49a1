"""The gateway's configuration: ``state/config.toml`` tables ``[gateway.*]`` and two env vars.

```toml
[gateway.anthropic]                    # the Anthropic Messages upstream
base_url = "https://api.anthropic.com" # a trailing /v1 is accepted either way
key_env  = "ANTHROPIC_API_KEY"         # the host variable holding the key (read per request)
models   = { "claude-x" = "claude-x-20260101" }   # optional rewrite of the body's "model"

[gateway.openai]                       # the OpenAI Responses + Chat Completions upstream
base_url = "https://api.openai.com/v1"
key_env  = "OPENAI_API_KEY"

[gateway.prices."claude-x-20260101"]   # USD per million tokens
input = 3.0
output = 15.0
cache_read = 0.3                       # optional, default: the input price
cache_write = 3.75                     # optional, default: the input price
```

``SRB_GATEWAY_ANTHROPIC_URL`` / ``SRB_GATEWAY_OPENAI_URL`` override ``base_url``. The file
and every table are optional. Tables outside ``[gateway]`` belong to other parts of srb and
are not read here. A mistake is a :class:`GatewayConfigError` naming the file and the key.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from srb_tui.config_file import CONFIG_FILE, TABLES
from srb_tui.schema.suggest import suggest

CONFIG_TABLES = tuple(TABLES)  # every top-level table config.toml may hold
URL_ENV = {"anthropic": "SRB_GATEWAY_ANTHROPIC_URL", "openai": "SRB_GATEWAY_OPENAI_URL"}
DEFAULT_URL = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_UPSTREAM_KEYS = ("base_url", "key_env", "models")
_PRICE_KEYS = ("input", "output", "cache_read", "cache_write")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class GatewayConfigError(Exception):
    """The gateway configuration cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Mapping[str, int]) -> float:
        """The cost in USD of a response's normalised usage (see ``usage.Usage``)."""
        return (
            usage.get("input_tokens", 0) * self.input
            + usage.get("output_tokens", 0) * self.output
            + usage.get("cache_read_tokens", 0) * self.cache_read
            + usage.get("cache_write_tokens", 0) * self.cache_write
        ) / 1_000_000


@dataclass(frozen=True)
class UpstreamConfig:
    """One vendor upstream: where it is, which host variable holds its key, model rewrites."""

    base_url: str
    key_env: str
    models: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def root(self) -> str:
        """``base_url`` without a trailing ``/`` or ``/v1``: request paths start with /v1."""
        root = self.base_url.rstrip("/")
        return root[: -len("/v1")] if root.endswith("/v1") else root


@dataclass(frozen=True)
class GatewayConfig:
    """The gateway's upstreams, prices and the environment its keys are read from."""

    anthropic: UpstreamConfig
    openai: UpstreamConfig
    prices: Mapping[str, Price] = field(default_factory=lambda: MappingProxyType({}))
    environ: Mapping[str, str] = field(
        default_factory=lambda: os.environ, repr=False, compare=False
    )
    """Where keys are read, at request time (default ``os.environ``)."""

    def upstream(self, vendor: str) -> UpstreamConfig:
        return self.anthropic if vendor == "anthropic" else self.openai

    def summary(self) -> list[dict[str, object]]:
        """What ``srb doctor`` shows per upstream: URL, key variable, whether it is set
        (never its value), model rewrites and priced models."""
        rows: list[dict[str, object]] = [
            {
                "vendor": vendor,
                "base_url": self.upstream(vendor).base_url,
                "key_env": self.upstream(vendor).key_env,
                "key_set": self.key_for(vendor) is not None,
                "models": dict(self.upstream(vendor).models),
            }
            for vendor in ("anthropic", "openai")
        ]
        return [*rows, {"priced_models": sorted(self.prices)}]

    def key_for(self, vendor: str) -> str | None:
        """The vendor key from the host environment now, or None when it is not set."""
        value = self.environ.get(self.upstream(vendor).key_env, "").strip()
        return value or None


def default_config(environ: Mapping[str, str] | None = None) -> GatewayConfig:
    """The configuration with no file: vendor URLs (or the env overrides), default key vars."""
    env = os.environ if environ is None else environ
    return GatewayConfig(
        anthropic=UpstreamConfig(_url_override("anthropic", env), DEFAULT_KEY_ENV["anthropic"]),
        openai=UpstreamConfig(_url_override("openai", env), DEFAULT_KEY_ENV["openai"]),
        environ=env,
    )


def _url_override(vendor: str, env: Mapping[str, str], fallback: str | None = None) -> str:
    value = env.get(URL_ENV[vendor], "").strip()
    if value:
        _check_url(value, f"${URL_ENV[vendor]}")
        return value
    return fallback or DEFAULT_URL[vendor]


def _check_url(value: str, where: str) -> None:
    if not re.match(r"^https?://[^/\s]+", value):
        raise GatewayConfigError(f"{where}: {value!r} is not an http(s):// URL")


def _unknown(table: Mapping[str, Any], known: tuple[str, ...], where: str) -> list[str]:
    problems = []
    for key in table:
        if key not in known:
            hint = suggest(str(key), known)
            problems.append(
                f"{where}.{key}: unknown key"
                + (f" (did you mean {hint!r}?)" if hint else f"; known: {', '.join(known)}")
            )
    return problems


def _upstream(
    vendor: str, table: Any, env: Mapping[str, str], where: str, problems: list[str]
) -> UpstreamConfig:
    if table is None:
        table = {}
    if not isinstance(table, Mapping):
        problems.append(f"{where}: must be a table")
        table = {}
    problems.extend(_unknown(table, _UPSTREAM_KEYS, where))
    base = table.get("base_url", DEFAULT_URL[vendor])
    if not isinstance(base, str):
        problems.append(f"{where}.base_url: must be a string")
        base = DEFAULT_URL[vendor]
    else:
        try:
            _check_url(base, f"{where}.base_url")
        except GatewayConfigError as err:
            problems.append(str(err))
    key_env = table.get("key_env", DEFAULT_KEY_ENV[vendor])
    if not isinstance(key_env, str) or not _ENV_NAME.match(key_env):
        problems.append(f"{where}.key_env: must name an environment variable, got {key_env!r}")
        key_env = DEFAULT_KEY_ENV[vendor]
    models_raw = table.get("models", {})
    models: dict[str, str] = {}
    if not isinstance(models_raw, Mapping):
        problems.append(f"{where}.models: must be a table of \"client model\" = \"upstream model\"")
    else:
        for name, target in models_raw.items():
            if not isinstance(target, str) or not target.strip():
                problems.append(f"{where}.models.{name}: must be a non-empty string")
            else:
                models[str(name)] = target.strip()
    try:
        url = _url_override(vendor, env, base)
    except GatewayConfigError as err:
        problems.append(str(err))
        url = base
    return UpstreamConfig(url, key_env, MappingProxyType(models))


def _price(name: str, table: Any, where: str, problems: list[str]) -> Price | None:
    if not isinstance(table, Mapping):
        problems.append(f"{where}: must be a table with input and output (USD per million)")
        return None
    problems.extend(_unknown(table, _PRICE_KEYS, where))
    values: dict[str, float] = {}
    for key in _PRICE_KEYS:
        value = table.get(key)
        if value is None:
            if key in ("input", "output"):
                problems.append(f"{where}.{key}: missing (USD per million tokens)")
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value >= 0
        ):
            problems.append(f"{where}.{key}: must be a number >= 0, got {value!r}")
            continue
        values[key] = float(value)
    if "input" not in values or "output" not in values:
        return None
    return Price(
        values["input"],
        values["output"],
        values.get("cache_read", values["input"]),
        values.get("cache_write", values["input"]),
    )


def load_gateway_config(
    state_dir: Path, environ: Mapping[str, str] | None = None
) -> GatewayConfig:
    """Read ``state_dir/config.toml`` (absent: defaults) and the URL overrides.

    Every problem of the file is reported at once in one GatewayConfigError.
    """
    env = os.environ if environ is None else environ
    path = Path(state_dir) / CONFIG_FILE
    if not path.exists():
        return default_config(env)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise GatewayConfigError(f"{path}: cannot read ({err.strerror or err})") from err
    except UnicodeDecodeError as err:
        raise GatewayConfigError(f"{path}: not UTF-8 text ({err})") from err
    except tomllib.TOMLDecodeError as err:
        raise GatewayConfigError(f"{path}: not valid TOML ({err})") from err
    gateway = doc.get("gateway", {})
    problems: list[str] = []
    for key in doc:  # a typo of a table name would otherwise fall back to the defaults
        if key not in CONFIG_TABLES:
            hint = suggest(str(key), CONFIG_TABLES)
            problems.append(f"[{key}]: unknown table" + (f" (did you mean [{hint}]?)" if hint
                            else f"; known: {', '.join(f'[{t}]' for t in CONFIG_TABLES)}"))
    if not isinstance(gateway, Mapping):
        raise GatewayConfigError(f"{path}: gateway: must be a table")
    problems.extend(_unknown(gateway, ("anthropic", "openai", "prices"), "gateway"))
    anthropic = _upstream("anthropic", gateway.get("anthropic"), env, "gateway.anthropic",
                          problems)
    openai = _upstream("openai", gateway.get("openai"), env, "gateway.openai", problems)
    prices: dict[str, Price] = {}
    raw_prices = gateway.get("prices", {})
    if not isinstance(raw_prices, Mapping):
        problems.append("gateway.prices: must be a table of model tables")
    else:
        for model, table in raw_prices.items():
            price = _price(str(model), table, f'gateway.prices."{model}"', problems)
            if price is not None:
                prices[str(model)] = price
    if problems:
        raise GatewayConfigError(f"{path}: " + "; ".join(problems))
    return GatewayConfig(anthropic, openai, MappingProxyType(prices), env)
