"""Build a driver from a stage's settings (`driver`, `model`, `driver_options`, `api_key_env`).

Keys come only from the environment: `$ANTHROPIC_API_KEY` / `$OPENAI_API_KEY` or the stage's
`api_key_env`. Base URLs: explicit, else `$ANTHROPIC_BASE_URL` / `$OPENAI_BASE_URL`, else the
vendor default. With an `endpoint` (srb's model gateway: its address and a run token), the SDK
drivers send every request there with the token instead of a key, and no key is needed.
Every mistake is a `DriverConfigError` whose message names what to fix (and never contains
a key).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .base import DriverConfigError, ModelDriver, RetryPolicy, Sleeper

if TYPE_CHECKING:
    from .sdk_driver import SdkDriver

DRIVERS = ("anthropic", "openai", "scripted")
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
DEFAULT_BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Endpoint(Protocol):
    """Where an SDK driver sends requests instead of the vendor (e.g. the srb gateway)."""

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...


def make_driver(
    driver: str,
    model: str,
    options: Mapping[str, Any] | None = None,
    *,
    api_key_env: str | None = None,
    base_url: str | None = None,
    program: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    retry: RetryPolicy | None = None,
    sleep: Sleeper | None = None,
    cwd: str | None = None,
    endpoint: Endpoint | None = None,
) -> ModelDriver:
    """A ready driver for "anthropic" | "openai" | "scripted".

    `program` is the scripted driver's argv; `environ` (default `os.environ`) is where keys
    and base URLs are looked up and, for scripted programs, their environment (with every
    `*_API_KEY` / `*_AUTH_TOKEN` variable and `api_key_env` removed). `endpoint` replaces
    both the key and the base URL of the anthropic/openai drivers (the scripted driver makes no
    model requests and ignores it).
    """
    env = os.environ if environ is None else environ
    options = dict(options or {})
    if driver not in DRIVERS:
        raise DriverConfigError(f"unknown driver {driver!r}; choose one of {', '.join(DRIVERS)}")
    if driver == "scripted":
        if not program:
            raise DriverConfigError(
                "the scripted driver needs a program (argv of the reviewer/adversary to run)"
            )
        from .scripted import ScriptedDriver

        secret = {api_key_env, *DEFAULT_KEY_ENV.values()}
        clean = {
            name: value
            for name, value in env.items()
            if name not in secret and not name.endswith(_SECRET_SUFFIXES)
        }
        return ScriptedDriver(program, model=model, options=options, cwd=cwd, env=clean)
    if program:
        raise DriverConfigError(f"the {driver} driver takes no program; did you mean 'scripted'?")
    if not isinstance(model, str) or not model.strip():
        raise DriverConfigError(f"the {driver} driver needs a model name")
    key_env: str | None
    url: str | None
    if endpoint is not None:
        key_env, api_key, url = None, endpoint.api_key, endpoint.base_url
    else:
        key_env = api_key_env or DEFAULT_KEY_ENV[driver]
        if not _ENV_NAME.match(key_env):
            raise DriverConfigError(
                f"api_key_env {key_env!r} is not an environment variable name"
            )
        api_key = env.get(key_env, "")
        if not api_key.strip():
            raise DriverConfigError(
                f"the {driver} driver ({model}) needs an API key in ${key_env}, which is not set"
            )
        url = base_url or env.get(DEFAULT_BASE_URL_ENV[driver]) or None
    if url is not None and not re.match(r"^https?://", url):
        raise DriverConfigError(f"base URL {url!r} for the {driver} driver must be http(s)://...")
    if driver == "anthropic":
        from .anthropic_driver import AnthropicDriver

        vendor: type[SdkDriver] = AnthropicDriver
    else:
        from .openai_driver import OpenAIDriver

        vendor = OpenAIDriver
    return vendor(model, api_key=api_key.strip(), base_url=url, options=options,
                  key_env=key_env, retry=retry, sleep=sleep)
