"""Fixtures for the gateway tests: a STAND-IN upstream (not the real vendors), a real store
with one run, and gateways started on the stand-in with a sentinel key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from srb_tui.gateway import Gateway, GatewayConfig, load_gateway_config
from srb_tui.store import Store

from .standin import StandIn

SENTINEL_KEY = "sk-SENTINEL-7f3a9c0e-never-leaves-the-host"
KEY_ENV = "SRB_TEST_VENDOR_KEY"
CONFIG = """
[gateway.anthropic]
base_url = "http://placeholder.invalid"
key_env = "SRB_TEST_VENDOR_KEY"
[gateway.anthropic.models]
"claude-alias" = "claude-real"

[gateway.openai]
base_url = "http://placeholder.invalid/v1"
key_env = "SRB_TEST_VENDOR_KEY"

[gateway.prices."claude-real"]
input = 3.0
output = 15.0
cache_read = 0.3
cache_write = 3.75

[gateway.prices."gpt-real"]
input = 1.25
output = 10.0
cache_read = 0.125
"""

StartGateway = Callable[..., Awaitable[Gateway]]


@pytest.fixture
async def standin() -> AsyncIterator[StandIn]:
    server = await StandIn().start()
    yield server
    await server.close()


@pytest.fixture
def gw_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(CONFIG, encoding="utf-8")
    return state


@pytest.fixture
def gw_config(gw_state: Path, standin: StandIn) -> GatewayConfig:
    environ = {
        KEY_ENV: SENTINEL_KEY,
        "SRB_GATEWAY_ANTHROPIC_URL": standin.url,
        "SRB_GATEWAY_OPENAI_URL": standin.url + "/v1",
    }
    return load_gateway_config(gw_state, environ)


@pytest.fixture
async def store(gw_state: Path) -> AsyncIterator[Store]:
    db = await Store.open(gw_state / "srb.sqlite3")
    yield db
    await db.close()


@pytest.fixture
async def run_id(store: Store) -> str:
    run = await store.runs.create_run(
        task_id="demo", task_path="/tasks/demo", agent="claude-code:x"
    )
    return run.id


@pytest.fixture
async def start_gateway(
    store: Store, gw_config: GatewayConfig, gw_state: Path
) -> AsyncIterator[StartGateway]:
    started: list[Gateway] = []

    async def start(config: GatewayConfig | None = None, socket_dir: Path | None = None) -> Gateway:
        gateway = await Gateway.start(
            config or gw_config, store, socket_dir or gw_state / "gateway"
        )
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        await gateway.close()
