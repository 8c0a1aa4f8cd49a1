"""Benchmark: a model call's time through the node channel against a local run's relay.

Same process, same gateway, same STAND-IN upstream (tests/gateway/standin.py, not a real
vendor; non-streamed Messages answers), same caller: a container of the base image with no
network of its own, in the relay's network namespace, sending ``-n`` requests one after
another to ``127.0.0.1:8642`` (bash ``/dev/tcp``, a fresh connection per call, as the clients'
first calls do) and timing each inside the container.

* local: the test engine (``DOCKER_HOST``), the relay bind-mounts the gateway's Unix socket;
* node: a Docker-in-Docker node (tests/nodes/dind.py) as a remote engine, the relay and its
  uplink there, the uplink dialling this host's per-run TLS listener (srb_tui/gateway/channel).

Prints the median and p90 per call on each side, the difference (what the channel adds per
call) and the ratio node/local. Needs the base image on the test engine.

Usage: DOCKER_HOST=unix:///var/run/docker-N.sock python bench/bench_node_channel.py [-n 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from srb_tui.gateway import Gateway, load_gateway_config  # noqa: E402
from srb_tui.gateway.channel import GATEWAY_NAME, NodeChannel  # noqa: E402
from srb_tui.runner import (  # noqa: E402
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    RunnerPool,
    create,
    exec_run,
    remove,
    start,
)
from srb_tui.runner.relay import RELAY_PORT, agent_network_mode, ensure_relay_image, start_relay  # noqa: E402
from srb_tui.runner.relay_uplink import Uplink, remove_remote_relay, start_remote_relay  # noqa: E402
from srb_tui.store import Store  # noqa: E402
from tests.gateway.standin import StandIn  # noqa: E402
from tests.nodes import dind  # noqa: E402

BASE = dind.BASE_IMAGE
KEY = "sk-bench-node-channel-stand-in-key"


def _loop_script(n: int, token: str) -> str:
    body = json.dumps({"model": "claude-bench", "max_tokens": 5, "messages": []})
    request = (f"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: {token}\r\n"
               f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
               f"Connection: close\r\n\r\n{body}")
    return (f"req={shlex.quote(request)}; for i in $(seq {n}); do "
            "t0=$(date +%s%N); exec 3<>/dev/tcp/127.0.0.1/" + str(RELAY_PORT) + " || exit 7; "
            "printf %s \"$req\" >&3; head -c 12 <&3 | grep -q ' 200' || exit 8; cat <&3 >/dev/null;"
            " exec 3<&-; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); done")


async def _caller(engine: DockerEngine, run_id: str, relay: ContainerHandle) -> ContainerHandle:
    spec = ContainerSpec(image=BASE, run_id=run_id, role="bench-caller", command=("sleep", "3600"),
                         network_mode=agent_network_mode(relay), workdir="/",
                         mem_limit=256 * 1024**2)
    handle = await create(engine, spec)
    await start(engine, handle)
    return handle


async def _measure(engine: DockerEngine, caller: ContainerHandle, n: int,
                   token: str) -> list[float]:
    await exec_run(engine, caller, ["bash", "-c", _loop_script(5, token)], timeout_sec=120)  # warm
    got = await exec_run(engine, caller, ["bash", "-c", _loop_script(n, token)],
                         timeout_sec=60 + n)
    if got.exit_code != 0:
        raise SystemExit(f"caller failed ({got.exit_code}): {got.stderr.decode()[-500:]}")
    return [int(x) / 1000.0 for x in got.stdout.split()]  # ms


def _summary(name: str, ms: list[float]) -> float:
    med = statistics.median(ms)
    p90 = statistics.quantiles(ms, n=10)[-1]
    print(f"{name:>6}: {len(ms)} calls, median {med:.2f} ms, p90 {p90:.2f} ms")
    return med


async def main(n: int) -> None:
    standin = await StandIn().start()
    with tempfile.TemporaryDirectory(prefix="srb-bench-") as folder:
        state = Path(folder)
        env = {"ANTHROPIC_API_KEY": KEY, "SRB_GATEWAY_ANTHROPIC_URL": standin.url,
               "SRB_GATEWAY_OPENAI_URL": standin.url + "/v1"}
        store = await Store.open(state / "srb.sqlite3")
        gateway = await Gateway.start(load_gateway_config(state, env), store, state / "gw")
        run = await store.runs.create_run(task_id="bench", task_path="/x", agent="claude-code:x")
        token = await gateway.issue_token(run.id, "agent", round=1)
        local = DockerEngine(RunnerPool(2))
        made: list[tuple[DockerEngine, ContainerHandle]] = []
        cluster = dind.make_cluster(1, prefix="srbtb")
        node = cluster.nodes[0]
        remote = DockerEngine(RunnerPool(2), base_url=node.docker_host)
        channel = None
        try:
            await ensure_relay_image(local, BASE)
            relay = await start_relay(local, run.id, gateway.socket_path.parent,
                                      labels={"srb.store": "bench"})
            made.append((local, relay))
            caller = await _caller(local, run.id, relay)
            made.insert(0, (local, caller))
            local_ms = await _measure(local, caller, n, token)

            dind.load_image(node, BASE)
            await ensure_relay_image(remote, BASE)
            channel = await NodeChannel.open(run.id, cluster.host_ip, gateway.socket_path)
            creds = channel.credentials
            uplink = Uplink(cluster.host_ip, channel.port, creds.relay_pem, creds.gateway_cert,
                            GATEWAY_NAME)
            n_relay, n_up = await start_remote_relay(remote, run.id, uplink,
                                                     labels={"srb.store": "bench"})
            n_caller = await _caller(remote, run.id, n_relay)
            node_ms = await _measure(remote, n_caller, n, token)
            await remove(remote, n_caller)
            await remove_remote_relay(remote, n_relay, n_up)
        finally:
            for eng, handle in made:
                await remove(eng, handle)
            if channel is not None:
                await channel.close()
            dind.remove_cluster(cluster)
            await gateway.close()
            await store.close()
            await standin.close()
            local.close()
            remote.close()
    lm, nm = _summary("local", local_ms), _summary("node", node_ms)
    print(f"added by the node channel: {nm - lm:+.2f} ms per call (median); "
          f"ratio node/local {nm / lm:.2f}")
    print(f"node channel: {channel.accepted} connections accepted, {len(channel.refusals)} refused")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="calls per side")
    asyncio.run(main(parser.parse_args().n))
