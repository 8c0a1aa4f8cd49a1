"""Fixtures for the real-client tests: the pinned clients installed into the cache, a
STAND-IN model server (not a vendor API) behind srb's real gateway, and a run service.

The clients are the real npm packages at their pinned versions (installed once into
``~/.cache/srb/clients`` by :func:`installed_clients`, or ``scripts/install_clients.py``);
they run inside the demo task's agent container and reach the gateway through the relay.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from srb_tui.agents.clients import ensure_installed, resolve_pin
from srb_tui.config import Settings
from srb_tui.gateway import Gateway, load_gateway_config
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.service.events import EventBus
from srb_tui.service.run.orchestrator import RunService
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS
from tests.standin.server import StandIn

SENTINEL = "sk-sentinel-0d1e2f3a-agent-tests-never-leaves-the-host"
PRICES = """
[gateway.prices."standin-overspend"]
input = 10.0
output = 10.0
"""


@pytest.fixture(scope="session")
def installed_clients() -> None:
    """Both npm clients at srb's pins in the cache (a no-op when already there)."""
    for name in ("claude-code", "codex"):
        ensure_installed(resolve_pin(name, None))


@pytest.fixture(scope="session")
def standin() -> Iterator[StandIn]:
    with StandIn() as server:
        yield server


def gateway_environ(standin: StandIn) -> dict[str, str]:
    return {
        "SRB_GATEWAY_ANTHROPIC_URL": standin.url,
        "SRB_GATEWAY_OPENAI_URL": standin.url + "/v1",
        "ANTHROPIC_API_KEY": SENTINEL,
        "OPENAI_API_KEY": SENTINEL,
    }


@dataclass
class Harness:
    service: RunService
    gateway: Gateway
    state: Path
    standin: StandIn


@pytest.fixture
async def harness(tmp_path: Path, standin: StandIn, installed_clients: None
                  ) -> AsyncIterator[Harness]:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(PRICES, encoding="utf-8")
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)
    engine = DockerEngine(RunnerPool(4))
    async with await Store.open(settings.db_path) as store:
        config = load_gateway_config(state, environ=gateway_environ(standin))
        gateway = await Gateway.start(config, store, state / "gateway")
        service = RunService(settings, store, engine, EventBus())
        service.gateway = gateway
        try:
            yield Harness(service, gateway, state, standin)
        finally:
            await gateway.close()
    engine.close()
    engine.pool.shutdown()
