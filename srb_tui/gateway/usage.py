"""Read token usage from a response as it passes: JSON bodies and SSE streams.

Usage is normalised to the ledger's five counts:

* ``input_tokens``       uncached input (Anthropic ``input_tokens``; OpenAI input minus cached)
* ``cache_read_tokens``  Anthropic ``cache_read_input_tokens``; OpenAI ``cached_tokens``
* ``cache_write_tokens`` Anthropic ``cache_creation_input_tokens``
* ``output_tokens``      all output, reasoning included
* ``reasoning_tokens``   OpenAI ``reasoning_tokens`` (a part of output)

A stream is inspected chunk by chunk (:meth:`UsageMeter.feed`) without holding the client
up: only the event being assembled is kept, and only events that mention ``usage``,
``model`` or ``error`` are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_EVENT_BYTES = 8 * 1024 * 1024
_INTERESTING = (b'"usage"', b"error")
_END_EVENTS = frozenset(
    {"message_stop", "response.completed", "response.incomplete", "response.failed"}
)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)


def _sub(doc: Any, key: str) -> Mapping[str, Any]:
    value = doc.get(key) if isinstance(doc, Mapping) else None
    return value if isinstance(value, Mapping) else {}


class UsageMeter:
    """Collects usage, the reported model and any error of one response."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.usage: dict[str, int] = {}
        self.model: str | None = None
        self.error: str | None = None
        self.completed = False
        """The stream's end marker was seen (message_stop, response.completed, [DONE])."""
        self._buffer = b""
        self._blind = False

    # ------------------------------------------------------------------ JSON bodies

    def read_json(self, body: bytes) -> None:
        """A whole (non-streamed) JSON response."""
        try:
            doc = json.loads(body)
        except ValueError:
            return
        if not isinstance(doc, Mapping):
            return
        self._model_of(doc)
        if self.kind == "count_tokens":
            return
        usage = _sub(doc, "usage")
        if usage:
            self._take(usage)
        if isinstance(doc.get("error"), Mapping):
            self.error = str(_sub(doc, "error").get("message") or "error")[:500]

    # ------------------------------------------------------------------ streams

    def feed(self, chunk: bytes) -> None:
        """The next chunk of an SSE stream, exactly as it goes to the client."""
        if self._blind:
            return
        self._buffer += chunk
        while True:
            cut, width = _boundary(self._buffer)
            if cut < 0:
                break
            event, self._buffer = self._buffer[:cut], self._buffer[cut + width :]
            self._event(event)
        if len(self._buffer) > MAX_EVENT_BYTES:
            # An event this large is no usage event; stop inspecting rather than hoard it.
            self._buffer, self._blind = b"", True

    def finish(self) -> None:
        """The stream ended: read a last event that had no blank line after it."""
        if self._buffer.strip() and not self._blind:
            self._event(self._buffer)
        self._buffer = b""

    def _event(self, raw: bytes) -> None:
        name = ""
        data: list[bytes] = []
        for line in raw.splitlines():
            if line.startswith(b"event:"):
                name = line[6:].strip().decode("utf-8", "replace")
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
        payload = b"\n".join(data)
        if payload.strip() == b"[DONE]":
            self.completed = True
            return
        if name in _END_EVENTS:
            self.completed = True
        if not (
            any(marker in payload for marker in _INTERESTING)
            or (self.model is None and b'"model"' in payload)
        ):
            return
        try:
            doc = json.loads(payload)
        except ValueError:
            return
        if isinstance(doc, Mapping):
            self._stream_doc(name or str(doc.get("type") or ""), doc)

    def _stream_doc(self, name: str, doc: Mapping[str, Any]) -> None:
        if self.kind == "messages":
            if name == "message_start":
                message = _sub(doc, "message")
                self._model_of(message)
                self._take(_sub(message, "usage"))
            elif name == "message_delta":
                self._take(_sub(doc, "usage"))
            elif name == "error":
                self.error = str(_sub(doc, "error").get("message") or "stream error")[:500]
        elif self.kind == "responses":
            response = _sub(doc, "response")
            if response:
                self._model_of(response)
            if name in ("response.completed", "response.incomplete", "response.failed"):
                self._take(_sub(response, "usage"))
                if name == "response.failed":
                    err = _sub(response, "error")
                    self.error = str(err.get("message") or "response failed")[:500]
            elif name == "error":
                self.error = str(doc.get("message") or "stream error")[:500]
        else:  # chat completions chunks
            self._model_of(doc)
            usage = _sub(doc, "usage")
            if usage:
                self._take(usage)
            if isinstance(doc.get("error"), Mapping):
                self.error = str(_sub(doc, "error").get("message") or "stream error")[:500]

    # ------------------------------------------------------------------ normalising

    def _model_of(self, doc: Mapping[str, Any]) -> None:
        model = doc.get("model")
        if isinstance(model, str) and model:
            self.model = model

    def _take(self, usage: Mapping[str, Any]) -> None:
        """Merge one usage object (later values win: message_delta's are cumulative)."""
        if not usage:
            return
        if self.kind in ("messages", "count_tokens"):
            names = {
                "input_tokens": "input_tokens",
                "output_tokens": "output_tokens",
                "cache_read_input_tokens": "cache_read_tokens",
                "cache_creation_input_tokens": "cache_write_tokens",
            }
            for wire, ours in names.items():
                if wire in usage and usage[wire] is not None:
                    self.usage[ours] = _int(usage[wire])
            return
        if self.kind == "responses":
            total_in = _int(usage.get("input_tokens"))
            cached = _int(_sub(usage, "input_tokens_details").get("cached_tokens"))
            output = _int(usage.get("output_tokens"))
            reasoning = _int(_sub(usage, "output_tokens_details").get("reasoning_tokens"))
        else:
            total_in = _int(usage.get("prompt_tokens"))
            cached = _int(_sub(usage, "prompt_tokens_details").get("cached_tokens"))
            output = _int(usage.get("completion_tokens"))
            reasoning = _int(_sub(usage, "completion_tokens_details").get("reasoning_tokens"))
        self.usage.update(
            input_tokens=max(0, total_in - cached),
            cache_read_tokens=min(cached, total_in) if total_in else cached,
            output_tokens=output,
            reasoning_tokens=reasoning,
        )


def _boundary(buffer: bytes) -> tuple[int, int]:
    """The first blank-line event boundary in ``buffer``: (index, width) or (-1, 0)."""
    best, width = -1, 0
    for sep in (b"\n\n", b"\r\n\r\n", b"\r\r"):
        at = buffer.find(sep)
        if at >= 0 and (best < 0 or at < best):
            best, width = at, len(sep)
    return best, width
