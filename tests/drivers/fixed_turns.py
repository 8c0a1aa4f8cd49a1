"""A model-shaped test driver that replays fixed turns (no network, no program)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srb_tui.drivers.base import (
    DriverError,
    Message,
    ModelDriver,
    ModelRequest,
    ModelTurn,
    ToolCall,
    Usage,
)


def turn(*calls: ToolCall, text: str = "", stop: str = "tool_use") -> ModelTurn:
    return ModelTurn(text, tuple(calls), stop, Usage(10, 5), 0.01)


class TurnsDriver(ModelDriver):
    """Replays `turns` (a DriverError in the list is raised) and records every request."""

    name = "turns"

    def __init__(self, turns: Sequence[ModelTurn | DriverError]) -> None:
        super().__init__("fixed")
        self.turns = list(turns)
        self.requests: list[list[Message]] = []
        self.ended: list[tuple[str, Mapping[str, Any] | None]] = []

    async def _attempt(self, request: ModelRequest, timeout_sec: float | None) -> ModelTurn:
        self.requests.append(list(request.messages))
        item = self.turns.pop(0)
        if isinstance(item, DriverError):
            raise item
        return item

    async def end_session(self, session: str, farewell: Mapping[str, Any] | None = None) -> None:
        self.ended.append((session, farewell))
