"""The one interface every reviewer/adversary driver implements, and srb's neutral messages.

A conversation is a sequence of `UserText`, `AssistantMessage` and `ToolResults`; a driver
turns (system prompt, conversation, tool schemas) into one `ModelTurn`. Vendor drivers
translate to and from their wire formats; the scripted driver feeds a program. Errors leave a
driver only as `DriverError` (with a `retryable` flag); `ModelDriver.complete` retries the
retryable ones with bounded exponential backoff. API keys live only inside a driver object,
are never part of a message, a repr, or an error text (`Redactor`).
"""

from __future__ import annotations

import asyncio
import difflib
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

# --------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class ToolSchema:
    """A tool offered to the model: name, description, JSON-schema of its input object."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model. `error` is set when the arguments could not be
    read (e.g. not JSON); the loop answers such a call with an error result."""

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None


@dataclass(frozen=True)
class UserText:
    """A user (harness) message."""

    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """What the model said: text, tool calls, and an opaque per-vendor `replay` (e.g. the
    thinking blocks Anthropic needs back verbatim) that only the same driver reads."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    replay: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    """The answer to one `ToolCall`. `content` is what a model reads; `payload` is the
    structured reply a scripted program receives (defaults to one built from `content`)."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    payload: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolResults:
    """The harness's answer to one assistant turn: a result per call, then optional text."""

    results: tuple[ToolResult, ...]
    text: str = ""


Message = UserText | AssistantMessage | ToolResults


@dataclass(frozen=True)
class Usage:
    """Token use (input includes cached/cache-written prompt tokens)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


STOP_REASONS = ("end", "tool_use", "max_tokens", "refusal", "exited", "other")
"""Normalised stop reasons; `exited` = a scripted program ended without a final call."""


@dataclass(frozen=True)
class ModelTurn:
    """One model response."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    stop_reason: str
    usage: Usage
    latency_sec: float
    raw_stop_reason: str | None = None
    attempts: int = 1
    replay: Mapping[str, Any] = field(default_factory=dict)

    def as_message(self) -> AssistantMessage:
        """The turn as the next request's assistant message."""
        return AssistantMessage(self.text, self.tool_calls, self.replay)


@dataclass(frozen=True)
class ModelRequest:
    """What one model turn is asked: the same on every attempt of it (see
    `ModelDriver.complete`). `session` groups the turns of one conversation; `context` is
    what a scripted program is told besides (role, gates)."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSchema]
    session: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- errors


class DriverError(Exception):
    """A model call that failed. `retryable`: rate limit, 5xx, timeout, connection refused;
    otherwise fatal (auth, bad request, bad configuration, missing SDK)."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts

    def __str__(self) -> str:
        return self.message


class DriverConfigError(DriverError):
    """Bad driver configuration: unknown driver or option, missing key, missing SDK."""


class Redactor:
    """Replaces secrets in text that may leave a driver (error messages, bodies)."""

    def __init__(self, *secrets: str | None) -> None:
        self._secrets = tuple(s for s in secrets if s and len(s) >= 4)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


# --------------------------------------------------------------------------- options


OptionCheck = Callable[[Any], Any]
"""Validates one option value and returns it normalised; raises ValueError with a reason."""


def parse_options(
    label: str, options: Mapping[str, Any], known: Mapping[str, OptionCheck]
) -> dict[str, Any]:
    """Check `driver_options` against `known`; report every problem at once."""
    problems: list[str] = []
    parsed: dict[str, Any] = {}
    for key, value in options.items():
        check = known.get(key)
        if check is None:
            near = (
                difflib.get_close_matches(key, list(known), n=1)
                or [
                    name for name in sorted(known) if len(key) >= 4 and (key in name or name in key)
                ][:1]
            )
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            problems.append(
                f"unknown option {key!r}{hint}; known: {', '.join(sorted(known)) or 'none'}"
            )
            continue
        try:
            parsed[key] = check(value)
        except (TypeError, ValueError) as exc:
            problems.append(f"option {key!r}: {exc}")
    if problems:
        raise DriverConfigError(f"{label} driver_options: " + "; ".join(problems))
    return parsed


def positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"must be a whole number > 0, got {value!r}")
    return value


def positive_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"must be a number > 0, got {value!r}")
    return float(value)


def float_between(low: float, high: float) -> OptionCheck:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"must be between {low:g} and {high:g}, got {value!r}")
        return float(value)

    return check


def one_of(*choices: str) -> OptionCheck:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {value!r}")
        return str(value)

    return check


# --------------------------------------------------------------------------- retries


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter for retryable errors."""

    max_attempts: int = 5
    base_delay_sec: float = 2.0
    max_delay_sec: float = 60.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Wait before attempt `attempt + 1` (attempt counts from 1)."""
        wait = self.base_delay_sec * self.multiplier ** (attempt - 1)
        wait *= 1.0 + random.uniform(0.0, self.jitter)
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return min(wait, self.max_delay_sec)


Sleeper = Callable[[float], Awaitable[None]]


# --------------------------------------------------------------------------- driver


class ModelDriver(ABC):
    """A model (or a scripted stand-in) behind one async call.

    Subclasses implement `_attempt` (one try, raising `DriverError`); `complete` adds the
    retry policy. Sessions group the turns of one conversation (one review sample, one
    adversary round); stateless vendor drivers ignore them, the scripted driver keeps one
    program per session. Call `end_session` when a conversation is over and `aclose` last.
    """

    name: str = "driver"

    def __init__(
        self, model: str, *, retry: RetryPolicy | None = None, sleep: Sleeper | None = None
    ) -> None:
        self.model = model
        self.retry = retry or RetryPolicy()
        self._sleep: Sleeper = sleep or asyncio.sleep

    def __repr__(self) -> str:
        return f"<{type(self).__name__} model={self.model!r}>"

    @property
    def label(self) -> str:
        """`driver:model`, for messages."""
        return f"{self.name}:{self.model}"

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        session: str = "",
        context: Mapping[str, Any] | None = None,
        timeout_sec: float | None = None,
    ) -> ModelTurn:
        """One model turn, retrying retryable failures within `timeout_sec` (the whole call,
        all attempts and waits included). Raises `DriverError` when it gives up."""
        started = time.monotonic()
        limit = None if timeout_sec is None else started + timeout_sec
        request = ModelRequest(system, messages, tools, session, context or {})
        attempt = 0
        while True:
            attempt += 1
            remaining = None if limit is None else limit - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise DriverError(
                    f"{self.label}: no time left for attempt {attempt}",
                    retryable=True,
                    attempts=attempt - 1,
                )
            try:
                turn = await self._attempt(request, remaining)
            except DriverError as exc:
                exc.attempts = attempt
                if not exc.retryable or attempt >= self.retry.max_attempts:
                    if exc.retryable:
                        exc.message = f"{exc.message} (gave up after {attempt} attempts)"
                    raise
                wait = self.retry.delay(attempt, exc.retry_after)
                if limit is not None and time.monotonic() + wait >= limit:
                    exc.message = f"{exc.message} (gave up: the deadline is before a retry)"
                    raise
                await self._sleep(wait)
                continue
            return turn if attempt == 1 else replace(turn, attempts=attempt)

    @abstractmethod
    async def _attempt(self, request: ModelRequest, timeout_sec: float | None) -> ModelTurn:
        """One try at `request` within `timeout_sec` (None: no limit); raise `DriverError`
        (retryable or not) on failure."""

    async def end_session(self, session: str, farewell: Mapping[str, Any] | None = None) -> None:
        """A conversation is over (`farewell` is the last reply, for scripted programs)."""
        return None

    async def aclose(self) -> None:
        """Release clients and processes."""
        return None


__all__ = [
    "STOP_REASONS",
    "AssistantMessage",
    "DriverConfigError",
    "DriverError",
    "Message",
    "ModelDriver",
    "ModelRequest",
    "ModelTurn",
    "Redactor",
    "RetryPolicy",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSchema",
    "Usage",
    "UserText",
    "parse_options",
]
