"""The gateway against a STAND-IN upstream (tests/gateway/standin.py, not the real vendors):
routes, key substitution, tokens, probes, the ledger, budgets, upstream failures."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from srb_tui.gateway import Gateway, GatewayConfig
from srb_tui.store import Store

from .conftest import SENTINEL_KEY, StartGateway
from .standin import StandIn

ANTHROPIC_COST = (1000 * 3 + 500 * 15 + 3000 * 0.3 + 200 * 3.75) / 1e6
RESPONSES_COST = (1500 * 1.25 + 800 * 10 + 500 * 0.125) / 1e6
CHAT_COST = (1000 * 1.25 + 400 * 10 + 200 * 0.125) / 1e6


async def post(
    url: str, body: dict[str, Any], *, token: str | None, bearer: bool = False,
    connector: aiohttp.BaseConnector | None = None,
) -> tuple[int, dict[str, str], bytes]:
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    if token is not None:
        if bearer:
            headers["Authorization"] = f"Bearer {token}"
        else:
            headers["x-api-key"] = token
    async with aiohttp.ClientSession(connector=connector) as session, session.post(
        url, json=body, headers=headers
    ) as resp:
        return resp.status, dict(resp.headers), await resp.read()


async def test_standin_anthropic_json_is_forwarded_with_the_real_key(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent", round=1)
    status, _, body = await post(
        gateway.tcp_url + "/v1/messages?beta=true",
        {"model": "claude-alias", "max_tokens": 10, "messages": []},
        token=token,
    )
    assert status == 200
    assert json.loads(body)["content"][0]["text"] == "STAND-IN answer"
    [seen] = standin.seen
    assert seen.path == "/v1/messages?beta=true"
    assert seen.headers["x-api-key"] == SENTINEL_KEY
    assert token not in json.dumps(seen.headers)
    assert seen.body["model"] == "claude-real"  # the rewrite table
    [row] = await store.ledger.ledger_rows(run_id)
    assert (row.role, row.round, row.route, row.status) == ("agent", 1, "/v1/messages", 200)
    assert (row.model, row.upstream_model, row.streamed) == ("claude-alias", "claude-real", False)
    assert (row.input_tokens, row.output_tokens, row.cache_read_tokens,
            row.cache_write_tokens) == (1000, 500, 3000, 200)
    assert row.cost_usd == pytest.approx(ANTHROPIC_COST)
    assert row.error is None and row.latency_ms > 0


async def test_standin_openai_routes_use_bearer_key_and_are_priced(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "adversary")
    base = gateway.tcp_url + "/v1"
    s1, _, _ = await post(base + "/responses", {"model": "gpt-real", "input": "hi"},
                          token=token, bearer=True)
    s2, _, _ = await post(base + "/chat/completions", {"model": "gpt-real", "messages": []},
                          token=token, bearer=True)
    assert (s1, s2) == (200, 200)
    assert [s.headers["Authorization"] for s in standin.seen] == [f"Bearer {SENTINEL_KEY}"] * 2
    responses, chat = await store.ledger.ledger_rows(run_id)
    assert (responses.input_tokens, responses.cache_read_tokens, responses.output_tokens,
            responses.reasoning_tokens) == (1500, 500, 800, 300)
    assert responses.cost_usd == pytest.approx(RESPONSES_COST)
    assert (chat.input_tokens, chat.cache_read_tokens, chat.output_tokens,
            chat.reasoning_tokens) == (1000, 200, 400, 100)
    assert chat.cost_usd == pytest.approx(CHAT_COST)
    totals = await store.ledger.ledger_totals(run_id)
    assert totals.total.requests == 2
    assert totals.total.cost_usd == pytest.approx(RESPONSES_COST + CHAT_COST)
    assert totals.by_role["adversary"].total_tokens == 2800 + 1600


async def test_standin_streams_give_the_same_usage_as_json(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    url = gateway.tcp_url
    _, headers, body = await post(url + "/v1/messages", {"model": "claude-real", "stream": True},
                                  token=token)
    assert headers["Content-Type"].startswith("text/event-stream")
    assert body.count(b"event: content_block_delta") == 6 and b"message_stop" in body
    await post(url + "/v1/responses", {"model": "gpt-real", "stream": True}, token=token,
               bearer=True)
    # The client did not ask for the usage chunk; the gateway asks for it (ledger needs it).
    _, _, chat_body = await post(url + "/v1/chat/completions",
                                 {"model": "gpt-real", "stream": True}, token=token, bearer=True)
    assert standin.seen[2].body["stream_options"] == {"include_usage": True}
    assert chat_body.rstrip().endswith(b"data: [DONE]")
    await gateway.settle(run_id)  # a stream's row is written just after its last byte
    rows = await store.ledger.ledger_rows(run_id)
    assert [r.streamed for r in rows] == [True, True, True]
    assert [r.cost_usd for r in rows] == pytest.approx([ANTHROPIC_COST, RESPONSES_COST,
                                                        CHAT_COST])
    assert all(r.error is None for r in rows)


async def test_standin_count_tokens_is_forwarded_and_costs_nothing(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    status, _, body = await post(gateway.tcp_url + "/v1/messages/count_tokens",
                                 {"model": "claude-real", "messages": []}, token=token)
    assert (status, json.loads(body)) == (200, {"input_tokens": 42})
    [row] = await store.ledger.ledger_rows(run_id)
    assert (row.route, row.total_tokens, row.cost_usd) == ("/v1/messages/count_tokens", 0, 0.0)


async def test_unpriced_model_has_tokens_and_no_cost(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "reviewer")
    await post(gateway.tcp_url + "/v1/messages", {"model": "mystery-model"}, token=token)
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.cost_usd is None and not row.priced
    assert row.total_tokens == 1000 + 500 + 3000 + 200
    totals = await store.ledger.ledger_totals(run_id)
    assert (totals.total.unpriced_requests, totals.total.cost_usd) == (1, 0.0)


@pytest.mark.parametrize(
    ("path", "vendor_key"),
    [("/v1/messages", "type"), ("/v1/responses", "error"), ("/v1/chat/completions", "error")],
)
async def test_bad_token_gets_a_vendor_shaped_401_and_nothing_is_forwarded(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store,
    path: str, vendor_key: str,
) -> None:
    gateway = await start_gateway()
    await gateway.issue_token(run_id, "agent")
    for token in ("srb-gw-not-a-real-token", None):
        status, headers, body = await post(gateway.tcp_url + path, {"model": "m"}, token=token,
                                           bearer=True)
        doc = json.loads(body)
        assert status == 401 and vendor_key in doc
        assert headers["x-should-retry"] == "false"
        if path == "/v1/messages":
            assert doc["error"]["type"] == "authentication_error"
        else:
            assert doc["error"]["code"] == "invalid_api_key"
    assert standin.seen == []
    assert await store.ledger.ledger_rows(run_id) == []
    [probe] = await store.ledger.gateway_probes("")
    assert (probe.path, probe.status, probe.count) == (path, 401, 2)


async def test_revoked_token_is_refused(
    standin: StandIn, start_gateway: StartGateway, run_id: str
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    await gateway.revoke_run(run_id)
    status, _, _ = await post(gateway.tcp_url + "/v1/messages", {"model": "m"}, token=token)
    assert status == 401 and standin.seen == []


async def test_probes_are_answered_locally_recorded_and_never_forwarded(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    auth = {"x-api-key": token}
    async with aiohttp.ClientSession() as session:
        async with session.head(gateway.tcp_url + "/api/hello") as resp:
            assert resp.status == 200
        async with session.head(gateway.tcp_url + "/api/hello", headers=auth) as resp:
            assert resp.status == 200
        async with session.post(gateway.tcp_url + "/api/event_logging/batch", json={"e": 1},
                                headers=auth) as resp:
            assert resp.status == 200
        async with session.get(gateway.tcp_url + "/v1/models", headers=auth) as resp:
            assert resp.status == 200 and (await resp.json())["data"] == []
        async with session.get(gateway.tcp_url + "/v1/messages", headers=auth) as resp:
            assert resp.status == 404
            assert (await resp.json())["error"]["type"] == "not_found_error"
        async with session.post(gateway.tcp_url + "/v2/elsewhere", headers=auth) as resp:
            assert resp.status == 404
    assert standin.seen == []
    assert await store.ledger.ledger_rows(run_id) == []
    probes = {
        (p.method, p.path): (p.status, p.count) for p in await store.ledger.gateway_probes(run_id)
    }
    assert probes == {
        ("HEAD", "/api/hello"): (200, 1),
        ("POST", "/api/event_logging/batch"): (200, 1),
        ("GET", "/v1/models"): (200, 1),
        ("GET", "/v1/messages"): (404, 1),
        ("POST", "/v2/elsewhere"): (404, 1),
    }
    [anonymous] = await store.ledger.gateway_probes("")
    assert (anonymous.method, anonymous.path, anonymous.count) == ("HEAD", "/api/hello", 1)


async def test_budget_exceeded_gets_the_vendor_error_and_over_budget_says_why(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    gateway.set_budget(run_id, max_cost_usd=0.02, max_tokens=None)
    assert await gateway.over_budget(run_id) is None
    url = gateway.tcp_url
    assert (await post(url + "/v1/messages", {"model": "claude-real"}, token=token))[0] == 200
    assert await gateway.over_budget(run_id) is None  # 0.01215 of 0.02
    assert (await post(url + "/v1/messages", {"model": "claude-real"}, token=token))[0] == 200
    reason = await gateway.over_budget(run_id)
    assert reason is not None and reason.startswith("budget:") and "0.0243" in reason
    status, headers, body = await post(url + "/v1/messages", {"model": "claude-real"},
                                       token=token)
    doc = json.loads(body)
    assert (status, doc["type"], doc["error"]["type"]) == (400, "error", "invalid_request_error")
    assert "usage limits" in doc["error"]["message"] and headers["x-should-retry"] == "false"
    status, _, body = await post(url + "/v1/responses", {"model": "gpt-real"}, token=token,
                                 bearer=True)
    doc = json.loads(body)
    assert (status, doc["error"]["type"], doc["error"]["code"]) == (
        429, "insufficient_quota", "insufficient_quota")
    assert len(standin.seen) == 2  # the refused requests never left the gateway
    assert len(await store.ledger.ledger_rows(run_id)) == 2


async def test_token_budget_persists_across_a_gateway_restart(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store,
    gw_config: GatewayConfig, gw_state: Path,
) -> None:
    first = await start_gateway()
    token = await first.issue_token(run_id, "agent")
    first.set_budget(run_id, max_cost_usd=None, max_tokens=4000)
    await post(first.tcp_url + "/v1/messages", {"model": "claude-real"}, token=token)
    await first.close()
    second = await start_gateway()
    reason = await second.over_budget(run_id)
    assert reason is not None and "4700 tokens of its 4000" in reason
    status, _, _ = await post(second.tcp_url + "/v1/messages", {"model": "claude-real"},
                              token=token)
    assert status == 400 and len(standin.seen) == 1


async def test_token_survives_a_gateway_restart_with_the_same_store(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store, gw_state: Path,
) -> None:
    first = await start_gateway()
    token = await first.issue_token(run_id, "agent", round=2)
    await first.close()
    # A fresh store connection too, as a restarted srb would have.
    await store.close()
    reopened = await Store.open(gw_state / "srb.sqlite3")
    try:
        second = await Gateway.start(first.config, reopened, gw_state / "gateway")
        try:
            status, _, _ = await post(second.tcp_url + "/v1/messages", {"model": "claude-real"},
                                      token=token)
            assert status == 200
            [row] = await reopened.ledger.ledger_rows(run_id)
            assert (row.role, row.round) == ("agent", 2)
            await second.set_round(token, 3)
            await post(second.tcp_url + "/v1/messages", {"model": "claude-real"}, token=token)
            assert [r.round for r in await reopened.ledger.ledger_rows(run_id)] == [2, 3]
        finally:
            await second.close()
    finally:
        await reopened.close()


async def test_standin_500_is_passed_on_and_recorded(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    status, _, body = await post(gateway.tcp_url + "/v1/messages", {"model": "fail-500"},
                                 token=token)
    assert status == 500 and json.loads(body)["error"]["message"] == "STAND-IN internal error"
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.status == 500 and row.error == "upstream answered 500"
    assert (await store.ledger.ledger_totals(run_id)).total.errors == 1


async def test_standin_dropped_stream_ends_with_an_error_event_and_is_recorded(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    status, _, body = await post(gateway.tcp_url + "/v1/messages",
                                 {"model": "drop", "stream": True}, token=token)
    assert status == 200  # the headers had gone out before the upstream broke off
    assert body.startswith(b"event: message_start")
    assert b"event: error" in body and b"message_stop" not in body
    await gateway.settle(run_id)
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.streamed and row.error is not None and row.error.startswith("upstream stream")


async def test_unreachable_upstream_is_a_vendor_shaped_502(
    start_gateway: StartGateway, run_id: str, store: Store, gw_config: GatewayConfig
) -> None:
    import dataclasses
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = dataclasses.replace(
        gw_config, openai=dataclasses.replace(gw_config.openai, base_url=dead + "/v1")
    )
    gateway = await start_gateway(config)
    token = await gateway.issue_token(run_id, "agent")
    status, _, body = await post(gateway.tcp_url + "/v1/responses", {"model": "gpt-real"},
                                 token=token, bearer=True)
    doc = json.loads(body)
    assert status == 502 and doc["error"]["type"] == "server_error"
    [row] = await store.ledger.ledger_rows(run_id)
    assert row.status == 502 and row.error is not None and "unreachable" in row.error


async def test_unix_socket_serves_the_same_routes(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    assert gateway.socket_path.is_socket()
    status, _, _ = await post(
        "http://gateway/v1/messages", {"model": "claude-real"}, token=token,
        connector=aiohttp.UnixConnector(path=str(gateway.socket_path)),
    )
    assert status == 200 and len(await store.ledger.ledger_rows(run_id)) == 1


async def test_a_stale_socket_is_replaced_and_a_live_one_refused(
    start_gateway: StartGateway, gw_state: Path
) -> None:
    import socket

    from srb_tui.gateway import GatewayError

    folder = gw_state / "gateway"
    folder.mkdir()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(folder / "gateway.sock"))
    stale.close()  # the file stays, nobody listens: what a killed srb leaves
    gateway = await start_gateway()
    assert gateway.socket_path.is_socket()
    with pytest.raises(GatewayError, match="already listening"):
        await start_gateway()
    await gateway.close()
    assert not gateway.socket_path.exists() and folder.is_dir()


async def test_the_sentinel_key_appears_nowhere_srb_keeps(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store, gw_state: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    bodies: list[bytes] = []
    for path, model, stream in [
        ("/v1/messages", "claude-real", False), ("/v1/messages", "claude-real", True),
        ("/v1/messages", "echo-key", False), ("/v1/responses", "echo-key", False),
        ("/v1/responses", "gpt-real", True), ("/v1/chat/completions", "drop", True),
        ("/v1/messages", "fail-500", False),
    ]:
        _status, headers, body = await post(gateway.tcp_url + path,
                                           {"model": model, "stream": stream}, token=token,
                                           bearer=True)
        bodies.append(body + json.dumps(headers).encode())
    assert any(b"[redacted]" in b for b in bodies)  # the echoing stand-in was redacted
    assert all(SENTINEL_KEY.encode() not in b for b in bodies)
    assert SENTINEL_KEY in json.dumps([s.headers for s in standin.seen])  # it did go upstream
    await gateway.close()
    await store.close()
    for file in gw_state.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert SENTINEL_KEY.encode() not in data, file
            assert token.encode() not in data, file  # tokens are kept as hashes only
    assert SENTINEL_KEY not in caplog.text


async def test_a_ledger_failure_does_not_hold_up_the_answer(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    await post(gateway.tcp_url + "/v1/messages", {"model": "claude-real"}, token=token)
    assert await store.runs.delete_run(run_id)  # the run vanishes while its token is cached
    status, _, body = await post(gateway.tcp_url + "/v1/messages", {"model": "claude-real"},
                                 token=token)
    assert status == 200 and b"STAND-IN answer" in body
    assert await store.ledger.ledger_rows(run_id) == []
