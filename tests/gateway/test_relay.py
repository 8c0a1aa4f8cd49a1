"""The reachability relay on a real Docker engine, in front of a gateway whose upstream is
the STAND-IN server (not the real vendor): a container in the relay's network namespace
reaches the gateway at 127.0.0.1:8642 and nothing else, and keeps reaching it when the
gateway is restarted on the same socket folder."""

from __future__ import annotations

import json
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from srb_tui.gateway import Gateway
from srb_tui.runner import (
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    RunnerPool,
    create,
    exec_run,
    list_managed,
    remove,
    start,
)
from srb_tui.runner.relay import (
    RELAY_PORT,
    agent_network_mode,
    ensure_relay_image,
    start_relay,
)
from srb_tui.store import Store

from .conftest import StartGateway
from .standin import StandIn

pytestmark = pytest.mark.docker
BASE_IMAGE = "srb/base:bookworm"


@pytest.fixture
async def engine() -> AsyncIterator[DockerEngine]:
    eng = DockerEngine(RunnerPool(2))
    yield eng
    eng.close()


def _http_script(port: int, path: str, body: str, token: str) -> str:
    """bash only (the base image has no curl): one HTTP/1.1 request over /dev/tcp."""
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: {token}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body.encode())}\r\n"
        f"Connection: close\r\n\r\n{body}"
    )
    return (
        f"exec 3<>/dev/tcp/127.0.0.1/{port} || exit 7; "
        f"printf %s {shlex.quote(request)} >&3; timeout 20 cat <&3"
    )


async def _ask(engine: DockerEngine, agent: ContainerHandle, token: str) -> tuple[int, str]:
    body = json.dumps({"model": "claude-real", "max_tokens": 5, "messages": []})
    result = await exec_run(
        engine, agent, ["bash", "-c", _http_script(RELAY_PORT, "/v1/messages", body, token)],
        timeout_sec=30,
    )
    return result.exit_code, result.stdout.decode(errors="replace")


async def test_agent_reaches_only_the_gateway_through_the_relay_and_survives_a_restart(
    engine: DockerEngine, standin: StandIn, start_gateway: StartGateway, store: Store,
    run_id: str, gw_state: Path,
) -> None:
    await ensure_relay_image(engine, BASE_IMAGE)
    socket_dir = gw_state / "gateway"
    gateway = await start_gateway(socket_dir=socket_dir)
    token = await gateway.issue_token(run_id, "agent", round=1)
    made: list[ContainerHandle] = []
    try:
        relay = await start_relay(engine, run_id, socket_dir, labels={"srb.store": "gw-test"})
        made.append(relay)
        spec = ContainerSpec(
            image=BASE_IMAGE, run_id=run_id, role="agent", command=("sleep", "600"),
            network_mode=agent_network_mode(relay), workdir="/", mem_limit=256 * 1024**2,
        )
        agent = await create(engine, spec)
        made.append(agent)
        await start(engine, agent)

        code, out = await _ask(engine, agent, token)
        assert code == 0, out
        assert out.startswith("HTTP/1.1 200"), out
        assert "STAND-IN answer" in out
        [row] = await store.ledger.ledger_rows(run_id)
        assert (row.role, row.round, row.status) == ("agent", 1, 200)

        # Nothing else: only loopback, no routes, no DNS, no host ports, no bridge.
        net = await exec_run(engine, agent, ["bash", "-c", "ls /sys/class/net"])
        assert net.stdout.split() == [b"lo"]
        routes = await exec_run(engine, agent, ["bash", "-c", "tail -n +2 /proc/net/route"])
        assert routes.stdout.strip() == b""
        dns = await exec_run(engine, agent, ["getent", "hosts", "deb.debian.org"])
        assert dns.exit_code != 0
        standin_port = standin.url.rsplit(":", 1)[1]
        api = await engine.api()
        bridge = await engine.call(api.inspect_network, "bridge")
        host_ip = _bridge_gateway(bridge)  # the host, as containers see it
        for target in (f"127.0.0.1/{standin_port}", f"{host_ip}/{standin_port}",
                       "8.8.8.8/53", "1.1.1.1/443"):
            probe = await exec_run(
                engine, agent, ["bash", "-c", f"exec 3<>/dev/tcp/{target}"], timeout_sec=10
            )
            assert probe.exit_code != 0, target

        # The gateway goes away: the relay answers nothing useful...
        config = gateway.config
        await gateway.close()
        code, out = await _ask(engine, agent, token)
        assert "HTTP/1.1 200" not in out
        # ...and a new gateway on the same folder is reached by the same relay, same token.
        again = await Gateway.start(config, store, socket_dir)
        try:
            code, out = await _ask(engine, agent, token)
            assert code == 0 and out.startswith("HTTP/1.1 200"), out
            assert len(await store.ledger.ledger_rows(run_id)) == 2
        finally:
            await again.close()
    finally:
        for handle in reversed(made):
            await remove(engine, handle)
    assert await list_managed(engine, run_id) == []


async def test_relay_is_locked_down(
    engine: DockerEngine, store: Store, run_id: str, gw_state: Path
) -> None:
    await ensure_relay_image(engine, BASE_IMAGE)
    relay = await start_relay(engine, run_id, gw_state / "gateway", labels={"srb.store": "t"})
    try:
        api = await engine.api()
        data = await engine.call(api.inspect_container, relay.id)
        host = data["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
        assert "no-new-privileges:true" in host["SecurityOpt"]
        assert host["PidsLimit"] > 0 and host["Memory"] > 0
        assert data["Config"]["User"] == "65534:65534"
        labels = data["Config"]["Labels"]
        assert (labels["srb.managed"], labels["srb.run"], labels["srb.role"],
                labels["srb.store"]) == ("1", run_id, "relay", "t")
        [mount] = data["Mounts"]
        assert mount["Destination"] == "/srb/gateway" and mount["RW"] is False
        assert Path(mount["Source"]) == (gw_state / "gateway").resolve()
    finally:
        await remove(engine, relay)
    assert await list_managed(engine, run_id) == []


def _bridge_gateway(network: dict[str, Any]) -> str:
    """The host's address on Docker's bridge: IPAM's Gateway, or (engines that list only
    the subnet, e.g. a freshly started dockerd) the subnet's first host address."""
    import ipaddress

    config = network["IPAM"]["Config"][0]
    if config.get("Gateway"):
        return str(config["Gateway"])
    return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))
