"""What the vendor SDK drivers (:mod:`.sdk_driver`) make of their SDKs' failures: an HTTP
status, a timeout or a lost connection as a :class:`~.base.DriverError` (retryable or not,
with the server's retry-after), and the timeout a request may take. Key text never reaches
an error (:class:`~.base.Redactor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import DriverError, Redactor

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def status_error(
    label: str, status: int, detail: str, *, key_env: str | None, retry_after: float | None
) -> DriverError:
    """A DriverError for an HTTP status from a vendor API."""
    detail = detail.strip()[:300]
    if status in (401, 403):
        where = f" ${key_env}" if key_env else ""
        return DriverError(
            f"{label}: the API refused the credentials (HTTP {status}); check the key in"
            f"{where or ' the environment'} and that it may use this model. {detail}".rstrip(),
            status=status,
        )
    if status in RETRYABLE_STATUS or status >= 500:
        kind = "rate limited" if status == 429 else "server unavailable"
        return DriverError(
            f"{label}: {kind} (HTTP {status}). {detail}".rstrip(),
            retryable=True,
            status=status,
            retry_after=retry_after,
        )
    return DriverError(
        f"{label}: request rejected (HTTP {status}). {detail}".rstrip(), status=status
    )


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` / `retry-after` headers, when numeric."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            continue
        if seconds >= 0:
            return seconds
    return None


def map_sdk_error(
    exc: BaseException, sdk: Any, label: str, *, key_env: str | None, redact: Redactor
) -> DriverError | None:
    """Map an exception of the anthropic/openai SDKs (same class names) to a DriverError;
    None if it is not one of theirs."""
    status_cls = getattr(sdk, "APIStatusError", None)
    conn_cls = getattr(sdk, "APIConnectionError", None)
    timeout_cls = getattr(sdk, "APITimeoutError", None)
    base_cls = getattr(sdk, "APIError", None)
    if status_cls is not None and isinstance(exc, status_cls):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        body = getattr(exc, "body", None)
        detail = _error_detail(body) or str(getattr(exc, "message", "") or "")
        error = status_error(
            label,
            int(getattr(exc, "status_code", 0) or 0),
            redact(detail),
            key_env=key_env,
            retry_after=parse_retry_after(headers),
        )
        if headers is not None and str(headers.get("x-should-retry", "")).lower() == "false":
            error.retryable = False  # the server says a retry cannot help (e.g. a budget)
        return error
    if timeout_cls is not None and isinstance(exc, timeout_cls):
        return DriverError(f"{label}: the request timed out", retryable=True)
    if conn_cls is not None and isinstance(exc, conn_cls):
        cause = exc.__cause__ or exc.__context__
        reason = f": {redact(str(cause))}" if cause is not None and str(cause) else ""
        return DriverError(f"{label}: cannot reach the API{reason}", retryable=True)
    if base_cls is not None and isinstance(exc, base_cls):
        return DriverError(f"{label}: {redact(str(exc))}")
    return None


def _error_detail(body: object) -> str:
    """The human part of a vendor error body ({"error": {"message": ...}})."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message")
            if isinstance(message, str):
                return message
        elif isinstance(inner, str):
            return inner
    return ""


def request_timeout(options: Mapping[str, Any], timeout_sec: float | None) -> float | None:
    """The tighter of a driver's ``timeout_sec`` option and the caller's limit."""
    option = options.get("timeout_sec")
    if timeout_sec is None:
        return None if option is None else float(option)
    return timeout_sec if option is None else min(float(option), timeout_sec)
