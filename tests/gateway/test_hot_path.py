"""The gateway's short hot path (issue 8's benchmark): a body goes upstream unparsed unless
a rewrite may apply, its model is read for the ledger afterwards, and the upstream proxy is
resolved once. Against the STAND-IN upstream (tests/gateway/standin.py), not a vendor."""

from __future__ import annotations

import json

import pytest

from srb_tui.gateway.forward import may_need_rewrite, model_of, upstream_proxy
from srb_tui.gateway.vendor import ROUTES
from srb_tui.store import Store

from .conftest import StartGateway
from .standin import StandIn
from .test_gateway import post

MESSAGES = ROUTES["/v1/messages"]
CHAT = ROUTES["/v1/chat/completions"]


def test_only_a_body_that_may_change_is_parsed_first() -> None:
    body = json.dumps({"model": "claude-x", "messages": []}).encode()
    assert not may_need_rewrite(body, MESSAGES, {})
    assert may_need_rewrite(body, MESSAGES, {"claude-x": "claude-x-2026"})
    assert not may_need_rewrite(body, MESSAGES, {"other": "other-2026"})
    # a streamed chat completion may need include_usage added
    assert may_need_rewrite(b'{"model": "g", "stream": true}', CHAT, {})
    assert not may_need_rewrite(b'{"model": "g"}', CHAT, {})


def test_the_ledger_model_is_the_top_level_one_wherever_it_is() -> None:
    assert model_of(b'{"model": "claude-x", "messages": []}') == "claude-x"
    nested_first = {"messages": [{"content": '"model": "decoy"', "model": "decoy"}],
                    "model": "claude-y"}
    assert model_of(json.dumps(nested_first).encode()) == "claude-y"
    assert model_of(b'{"model": "we\\"ird"}') == 'we"ird'
    assert model_of(b"not json") is None
    assert model_of(b'["model"]') is None


def test_the_proxy_comes_from_the_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "no_proxy",
                 "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert upstream_proxy("https://api.anthropic.com") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert upstream_proxy("https://api.anthropic.com") == "http://proxy.example:3128"
    assert upstream_proxy("http://127.0.0.1:8080") is None  # no https proxy for http
    monkeypatch.setenv("NO_PROXY", "anthropic.com")
    assert upstream_proxy("https://api.anthropic.com") is None


async def test_an_unparsed_body_still_gets_its_model_in_the_ledger(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    body = {"max_tokens": 5, "messages": [], "model": "claude-real"}
    status, _, _ = await post(gateway.tcp_url + "/v1/messages", body, token=token)
    assert status == 200
    await gateway.settle(run_id)
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.model == "claude-real" and row.upstream_model is None
    assert standin.seen[-1].body == body  # forwarded exactly as sent
