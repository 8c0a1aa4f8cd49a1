"""The node channel (issue 24, item 3): an agent on another engine reaches srb's gateway
only through its run's uplink, over TLS with per-run keys, and its model key stays here.

* default tier: a process on a DinD node that dials the run's listener without the run's
  relay key (plain TCP, TLS without a certificate, TLS with a certificate of its own) is
  refused, and each refusal is recorded and logged; the relay's key is let in.
* ``SRB_MULTINODE=1``: a real ``srb run demo01 --agent claude-code:standin-slow`` (the
  pinned Claude Code against a STAND-IN model server, not Anthropic's API) with
  ``DOCKER_HOST`` at a DinD node finishes with a score through the channel; the ledger holds
  its calls, the agent has loopback only, and the key is nowhere on the node.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from srb_tui.gateway.channel import NodeChannel
from srb_tui.runner.relay_uplink import engine_is_local, host_address_for, relay_route
from tests.nodes import dind

pytestmark = pytest.mark.docker


def test_the_route_is_local_only_for_this_machines_engines() -> None:
    assert engine_is_local("unix:///var/run/docker.sock")
    assert engine_is_local("tcp://127.0.0.1:2375") and engine_is_local("tcp://localhost:2375")
    assert not engine_is_local("tcp://10.1.2.3:2376")
    assert not engine_is_local("ssh://ops@node7.example")
    assert relay_route("unix:///x.sock").local
    remote = relay_route("tcp://10.1.2.3:2376", "10.9.9.9")
    assert not remote.local and remote.host_address == "10.9.9.9"


def _on_node(node: dind.Node, script: str) -> str:
    proc = dind.docker("exec", node.name, "bash", "-c", script, check=False, timeout=60)
    return (proc.stdout + proc.stderr).decode(errors="replace")


async def _echo_socket(path: Path) -> asyncio.Server:
    """A Unix socket that answers every line with 'ok' (in place of the gateway's)."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(b"ok\n")
        await writer.drain()
        writer.close()
    return await asyncio.start_unix_server(answer, str(path))


async def test_a_node_process_without_the_run_key_is_refused_and_logged(
        dind_node: dind.Node, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    host = host_address_for(dind_node.docker_host)
    sock = tmp_path / "gw.sock"
    server = await _echo_socket(sock)
    seen: list[str] = []
    channel = await NodeChannel.open("run-x", host, sock, on_refused=lambda r: seen.append(r.peer))
    creds = channel.credentials
    target = f"{host}:{channel.port}"
    caplog.set_level(logging.WARNING, logger="srb.gateway.channel")
    try:
        # 1. plain TCP, 2. TLS with no certificate, 3. TLS with a certificate of its own.
        plain = (f"exec 3<>/dev/tcp/{host}/{channel.port}; echo GET / >&3; "
                 "timeout 5 cat <&3; echo plain-done")
        own = ("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
               "-keyout /tmp/k -out /tmp/c -days 1 -subj /CN=intruder 2>/dev/null; ")
        tls = (f"echo hello | timeout 10 openssl s_client -quiet -ign_eof -connect {target} "
               "2>&1 | tail -3")
        tls_own = (f"echo hello | timeout 10 openssl s_client -quiet -ign_eof -connect {target} "
                   "-cert /tmp/c -key /tmp/k 2>&1 | tail -3")
        out_plain = await asyncio.to_thread(_on_node, dind_node, plain)
        out_tls = await asyncio.to_thread(_on_node, dind_node, tls)
        out_own = await asyncio.to_thread(_on_node, dind_node, own + tls_own)
        for out in (out_plain, out_tls, out_own):
            assert "ok" not in out.split(), out
        assert len(channel.refusals) == 3 and len(seen) == 3, channel.refusals
        assert channel.accepted == 0
        assert all(r.peer.split(":")[0] == dind_node.ip for r in channel.refusals)
        logged = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(logged) == 3
        # The run's relay key is let in and reaches the gateway's socket.
        for name, data in (("r.pem", creds.relay_pem), ("g.crt", creds.gateway_cert)):
            (tmp_path / name).write_bytes(data)
            dind.docker("cp", str(tmp_path / name), f"{dind_node.name}:/tmp/{name}")
        # stdin stays open a moment so the answer can come back before s_client quits.
        good = (f"(echo hello; sleep 3) | timeout 10 openssl s_client -quiet "
                f"-connect {target} -cert /tmp/r.pem -CAfile /tmp/g.crt -verify_return_error "
                "-verify_hostname srb-gateway-channel 2>/dev/null")
        out_good = await asyncio.to_thread(_on_node, dind_node, good)
        assert "ok" in out_good.split(), out_good
        assert channel.accepted == 1 and len(channel.refusals) == 3
    finally:
        await channel.close()
        server.close()
