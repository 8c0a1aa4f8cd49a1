"""The one vendor-SDK driver: construction, the call, its timing and its error mapping.

:class:`SdkDriver` holds what the Anthropic and OpenAI drivers share (a client built with the
SDK's own retries off, the request timeout, SDK exceptions mapped to srb's driver errors with
the key redacted, closing the client). A vendor's driver supplies the specifics as hooks:
``sdk_module``, ``check_options``, ``client_class``, ``request_body`` (srb's conversation in the
vendor's words), ``create(body)`` (the one SDK call) and ``read_turn`` (the vendor's answer
in srb's words).
"""

from __future__ import annotations

import importlib
import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .base import (
    DriverConfigError,
    DriverError,
    Message,
    ModelDriver,
    ModelRequest,
    ModelTurn,
    Redactor,
    RetryPolicy,
    Sleeper,
    ToolSchema,
)
from .sdk_errors import map_sdk_error, request_timeout


def import_sdk(module: str, pin: str) -> Any:
    """The vendor SDK ``module``, or a DriverConfigError naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise DriverConfigError(
            f"the {module} driver needs the official SDK: pip install 'srb-tui[models]' "
            f"(package {module}=={pin})"
        ) from None


_DEFAULT = "default"  # key_env's stand-in for "the vendor's usual variable"


class SdkDriver(ModelDriver):
    """A model behind an official vendor SDK; subclasses name the vendor's specifics."""

    default_key_env: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        options: Mapping[str, Any] | None = None,
        key_env: str | None = _DEFAULT,
        retry: RetryPolicy | None = None,
        sleep: Sleeper | None = None,
    ) -> None:
        super().__init__(model, retry=retry, sleep=sleep)
        self.options = self.check_options(options or {})
        self.base_url = base_url
        self._key_env = self.default_key_env if key_env == _DEFAULT else key_env
        self._redact = Redactor(api_key)
        self._sdk = self.load_sdk()
        self._client: Any = self.open_client(self._sdk, api_key, base_url)

    # ------------------------------------------------------------------ the vendor's hooks

    sdk_module: ClassVar[str]
    """the vendor SDK's module (``anthropic``, ``openai``)"""
    sdk_pin: ClassVar[str]
    """the SDK version srb is tested with, named when it is missing"""

    def load_sdk(self) -> Any:
        """The SDK module, or a DriverConfigError saying how to install it."""
        return import_sdk(self.sdk_module, self.sdk_pin)

    @staticmethod
    @abstractmethod
    def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
        """The vendor's ``driver_options``, validated (every problem at once)."""

    client_class: ClassVar[str]
    """the name of the SDK's async client class (``AsyncAnthropic``, ``AsyncOpenAI``)"""

    def open_client(self, sdk: Any, api_key: str, base_url: str | None) -> Any:
        """The SDK's async client, with the SDK's own retries off (srb retries)."""
        return getattr(sdk, self.client_class)(api_key=api_key, base_url=base_url,
                                               max_retries=0)

    @abstractmethod
    def request_body(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> dict[str, Any]:
        """The keyword arguments of the SDK call (no credentials in here)."""

    @abstractmethod
    async def create(self, body: dict[str, Any]) -> Any:
        """The one SDK call with ``body``; the vendor's response."""

    @abstractmethod
    def read_turn(self, response: Any, latency: float) -> ModelTurn:
        """The vendor's response as srb's turn."""

    # ------------------------------------------------------------------ shared

    async def _attempt(self, request: ModelRequest, timeout_sec: float | None) -> ModelTurn:
        body = self.request_body(request.system, request.messages, request.tools)
        timeout = request_timeout(self.options, timeout_sec)
        if timeout is not None:
            body["timeout"] = timeout
        started = time.monotonic()
        try:
            response = await self.create(body)
        except Exception as exc:
            mapped = map_sdk_error(
                exc, self._sdk, self.label, key_env=self._key_env, redact=self._redact
            )
            if mapped is None:
                raise DriverError(
                    f"{self.label}: unexpected {type(exc).__name__}: {self._redact(str(exc))}"
                ) from None
            raise mapped from None
        return self.read_turn(response, time.monotonic() - started)

    async def aclose(self) -> None:
        await self._client.close()
