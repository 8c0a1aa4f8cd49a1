"""Streams pass through the gateway as they arrive (STAND-IN upstream, not the real vendor):
the client holds the first event while the upstream has not yet sent its last one."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from srb_tui.store import Store

from .conftest import StartGateway
from .standin import StandIn

DEADLINE = 10.0


@pytest.mark.parametrize(
    ("path", "first", "last"),
    [
        ("/v1/messages", b"event: message_start", b"event: message_stop"),
        ("/v1/responses", b"event: response.created", b"event: response.completed"),
        ("/v1/chat/completions", b"data: {", b"data: [DONE]"),
    ],
)
async def test_standin_stream_reaches_the_client_before_the_upstream_finishes(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store,
    path: str, first: bytes, last: bytes,
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as session, session.post(
        gateway.tcp_url + path, json={"model": "gated", "stream": True}, headers=headers
    ) as resp:
        assert resp.status == 200
        received = b""

        async def until(marker: bytes) -> None:
            nonlocal received
            while marker not in received:
                chunk = await resp.content.readany()
                assert chunk, f"stream ended before {marker!r}"
                received += chunk

        await asyncio.wait_for(until(first), DEADLINE)
        await asyncio.wait_for(standin.first_sent.wait(), DEADLINE)
        # The client has the first event; the upstream is still holding back the rest.
        assert not standin.last_sent.is_set()
        assert last not in received
        standin.release.set()
        await asyncio.wait_for(until(last), DEADLINE)
        assert standin.last_sent.is_set()
    await gateway.settle(run_id)
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.streamed and row.status == 200 and row.error is None and row.total_tokens > 0
