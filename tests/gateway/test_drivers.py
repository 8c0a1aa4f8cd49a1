"""The Stage I/III SDK drivers (official anthropic/openai SDKs) pointed at the gateway, whose
upstream is the STAND-IN server (not the real vendors): their requests land in the run's
ledger with the reviewer/adversary role, and no vendor key is needed by the driver."""

from __future__ import annotations

import pytest

from srb_tui.drivers import DriverError, UserText, make_driver
from srb_tui.gateway import driver_endpoint
from srb_tui.store import Store

from .conftest import SENTINEL_KEY, StartGateway
from .standin import StandIn


async def test_standin_anthropic_and_openai_drivers_go_through_the_gateway(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    reviewer = await driver_endpoint(gateway, run_id, "reviewer", "anthropic")
    adversary = await driver_endpoint(gateway, run_id, "adversary", "openai")
    assert reviewer is not None and adversary is not None
    assert SENTINEL_KEY not in (reviewer.api_key + adversary.api_key)
    # No key anywhere in the driver's environment: the token is its only credential.
    claude = make_driver("anthropic", "claude-alias", {}, environ={}, endpoint=reviewer)
    gpt = make_driver("openai", "gpt-real", {}, environ={}, endpoint=adversary)
    try:
        turn = await claude.complete("sys", [UserText("hi")], [])
        assert turn.text == "STAND-IN answer"
        turn = await gpt.complete("sys", [UserText("hi")], [])
        assert turn.text == "STAND-IN"
    finally:
        await claude.aclose()
        await gpt.aclose()
    assert [s.path for s in standin.seen] == ["/v1/messages", "/v1/chat/completions"]
    assert standin.seen[0].headers["x-api-key"] == SENTINEL_KEY
    totals = await store.ledger.ledger_totals(run_id)
    assert set(totals.by_role) == {"reviewer", "adversary"}
    assert totals.by_role["reviewer"].total_tokens == 4700
    assert totals.by_role["adversary"].total_tokens == 1600


async def test_a_budget_refusal_is_not_retried_by_the_driver(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    gateway = await start_gateway()
    gateway.set_budget(run_id, max_cost_usd=0.0, max_tokens=None)
    endpoint = await driver_endpoint(gateway, run_id, "adversary", "openai")
    gpt = make_driver("openai", "gpt-real", {}, environ={}, endpoint=endpoint)
    try:
        with pytest.raises(DriverError) as caught:
            await gpt.complete("sys", [UserText("hi")], [])
    finally:
        await gpt.aclose()
    assert caught.value.status == 429 and not caught.value.retryable
    assert caught.value.attempts == 1 and "quota" in str(caught.value)
    assert standin.seen == []


async def test_no_gateway_or_scripted_driver_means_no_endpoint(
    start_gateway: StartGateway, run_id: str
) -> None:
    assert await driver_endpoint(None, run_id, "reviewer", "anthropic") is None
    gateway = await start_gateway()
    assert await driver_endpoint(gateway, run_id, "reviewer", "scripted") is None


async def test_standin_official_sdks_stream_through_the_gateway(
    standin: StandIn, start_gateway: StartGateway, run_id: str, store: Store
) -> None:
    import anthropic
    import openai

    gateway = await start_gateway()
    token = await gateway.issue_token(run_id, "agent")
    claude = anthropic.AsyncAnthropic(api_key=token, base_url=gateway.tcp_url, max_retries=0)
    gpt = openai.AsyncOpenAI(api_key=token, base_url=gateway.tcp_url + "/v1", max_retries=0)
    try:
        async with claude.messages.stream(
            model="claude-alias", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
        assert text == "".join(f"part {i} " for i in range(6))
        assert final.usage.output_tokens == 500
        events = await gpt.responses.create(model="gpt-real", input="hi", stream=True)
        kinds = [event.type async for event in events]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        chunks = await gpt.chat.completions.create(
            model="gpt-real", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        usage = [c.usage async for c in chunks if c.usage is not None]
        assert [u.total_tokens for u in usage] == [1600]
    finally:
        await claude.close()
        await gpt.close()
    await gateway.settle(run_id)
    rows = await store.ledger.ledger_rows(run_id)
    assert [r.route for r in rows] == ["/v1/messages", "/v1/responses", "/v1/chat/completions"]
    assert all(r.streamed and r.error is None and r.cost_usd is not None for r in rows)
