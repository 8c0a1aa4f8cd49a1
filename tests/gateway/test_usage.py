"""Usage read from chunks as they pass, however the stream is cut into chunks."""

from __future__ import annotations

import json

from srb_tui.gateway.usage import UsageMeter

from .standin import _anthropic_events, _chat_events, _responses_events


def _feed(kind: str, events: list[bytes], size: int) -> UsageMeter:
    meter = UsageMeter(kind)
    data = b"".join(events)
    for at in range(0, len(data), size):
        meter.feed(data[at : at + size])
    meter.finish()
    return meter


def test_any_chunking_gives_the_same_usage() -> None:
    for size in (1, 7, 64, 100_000):
        anthropic = _feed("messages", _anthropic_events("claude-real"), size)
        assert anthropic.usage == {"input_tokens": 1000, "output_tokens": 500,
                                   "cache_read_tokens": 3000, "cache_write_tokens": 200}
        assert anthropic.model == "claude-real" and anthropic.completed
        responses = _feed("responses", _responses_events("gpt-real"), size)
        assert responses.usage == {"input_tokens": 1500, "cache_read_tokens": 500,
                                   "output_tokens": 800, "reasoning_tokens": 300}
        chat = _feed("chat", _chat_events("gpt-real", True), size)
        assert chat.usage["input_tokens"] == 1000 and chat.completed


def test_crlf_events_and_a_missing_final_blank_line() -> None:
    meter = UsageMeter("messages")
    delta = json.dumps({"type": "message_delta", "usage": {"output_tokens": 9}})
    meter.feed(f"event: message_delta\r\ndata: {delta}".encode())
    meter.finish()
    assert meter.usage == {"output_tokens": 9} and not meter.completed


def test_error_events_are_noticed() -> None:
    meter = UsageMeter("messages")
    meter.feed(b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
               b'"message":"Overloaded"}}\n\n')
    assert meter.error == "Overloaded"
    failed = UsageMeter("responses")
    failed.read_json(b'{"error": {"message": "bad"}}')
    assert failed.error == "bad"
