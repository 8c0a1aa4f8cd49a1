"""The node channel (issue 24, item 3): an agent on another engine reaches srb's gateway
only through its run's uplink, over TLS with per-run keys, and its model key stays here.

* default tier: a process on a DinD node that dials the run's listener without the run's
  relay key (plain TCP, TLS without a certificate, TLS with a certificate of its own) is
  refused, and each refusal is recorded and logged; the relay's key is let in.
* ``SRB_MULTINODE=1``: a real ``srb run demo01 --agent claude-code:standin-slow`` (the
  pinned Claude Code against a STAND-IN model server, not Anthropic's API) with
  ``DOCKER_HOST`` at a DinD node finishes with a score through the channel; the ledger holds
  its calls, the agent has loopback only, and the key is nowhere on the node. The same run
  with srb SIGKILLed mid-round goes on after ``srb resume`` through a new channel (new
  port, new keys, the uplink pointed at it) and ends scored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from srb_tui.gateway.channel import NodeChannel
from srb_tui.runner.relay_uplink import engine_is_local, host_address_for, relay_route
from tests.agents.conftest import SENTINEL, gateway_environ, installed_clients, standin
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO
from tests.nodes import dind
from tests.nodes.conftest import multinode
from tests.standin.server import StandIn
from tests.store_reader import store_rows as _q

__all__ = ["installed_clients", "standin"]  # the real-client fixtures, shared with tests/agents

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


def _wait_mid_round(db: Path, proc: subprocess.Popen[str]) -> None:
    """Until srb in ``proc`` has recorded two tool calls of round 1 (the client is mid-round)."""
    deadline = time.monotonic() + 600
    while True:
        calls = _q(db, "SELECT count(*) FROM agent_events WHERE kind = 'tool_call'")
        if calls and int(calls[0][0]) >= 2:  # type: ignore[call-overload]
            return
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "round 1 never got going on the node"
        time.sleep(0.5)  # polling the store of another process


def _key_on_node(node: dind.Node) -> str:
    """Where the key string is on the node: its files, and every container's inspect."""
    files = _on_node(node, f"grep -rlsF {SENTINEL} / --exclude-dir=proc --exclude-dir=sys "
                           "2>/dev/null | head -5")
    ids = dind.docker("ps", "-aq", host=node.docker_host).stdout.decode().split()
    inspect = dind.docker("inspect", *ids, host=node.docker_host).stdout.decode() if ids else ""
    return files.strip() + ("INSPECT" if SENTINEL in inspect else "")


@multinode
def test_claude_code_on_a_node_scores_through_the_channel_and_its_key_stays_here(
        dind_node: dind.Node, tmp_path: Path, standin: StandIn, installed_clients: None) -> None:
    dind.load_image(dind_node, dind.BASE_IMAGE)
    state = tmp_path / "state"
    state.mkdir()
    db = state / "srb.sqlite3"
    env = {**os.environ, **gateway_environ(standin), "PYTHONPATH": str(REPO),
           "DOCKER_HOST": dind_node.docker_host}
    cmd = [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS), "--state",
           str(state), "run", DEMO_TASK.name, "--agent", "claude-code:standin-slow",
           "--budget", "900", "--adversary-budget", "15", "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO, text=True)
    try:
        _wait_mid_round(db, proc)  # the agent container is up on the node
        run_id = str(_q(db, "SELECT id FROM runs")[0][0])
        agent = f"srb-{run_id}-agent"
        probe = (f"grep -rlsF {SENTINEL} / --exclude-dir=proc --exclude-dir=sys | head -3;"
                 f" echo ENV; cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep -c {SENTINEL};"
                 " echo NET; ls /sys/class/net | tr '\\n' ' '; echo;"
                 " (timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8642' && echo GATEWAY-OPEN);"
                 f" (timeout 3 bash -c 'exec 3<>/dev/tcp/{dind_node.ip}/2375' && echo NODE-OPEN"
                 " || echo NODE-SHUT)")
        got = dind.docker("exec", "-u", "0", agent, "bash", "-c", probe,
                          host=dind_node.docker_host, check=False).stdout.decode()
        head, _, rest = got.partition("ENV\n")
        assert head.strip() == "" and rest.split("\n")[0].strip() == "0", got
        assert got.split("NET\n")[1].split("\n")[0].split() == ["lo"], got
        assert "GATEWAY-OPEN" in got and "NODE-SHUT" in got, got
        roles = dind.docker("ps", "--format", "{{.Label \"srb.role\"}}",
                            host=dind_node.docker_host).stdout.decode().split()
        assert {"agent", "relay", "relay-uplink"} <= set(roles), roles
        assert _key_on_node(dind_node) == ""
        out, err = proc.communicate(timeout=1500)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out)  # the run's record, as one JSON document
    status, valid, score, stop = _q(db, "SELECT status, valid, score, stop_reason FROM runs "
                                        f"WHERE id = '{run_id}'")[0]
    assert (status, valid, stop) == ("scored", 1, "completed"), (status, valid, stop, err[-2000:])
    assert score is not None and float(score) > 0, score  # type: ignore[arg-type]
    rows = _q(db, f"SELECT count(*) FROM ledger WHERE run_id = '{run_id}' AND role = 'agent'"
                  " AND status = 200 AND round = 1 AND output_tokens > 0")
    assert int(rows[0][0]) >= 2, rows  # type: ignore[call-overload]
    print(f"remote run {run_id}: {status}, score {score}, {rows[0][0]} agent calls in the ledger")
    assert any(s.auth.endswith(SENTINEL) for s in standin.seen)  # the gateway put it in
    assert _key_on_node(dind_node) == ""
    left = dind.docker("ps", "-aq", "--filter", "label=srb.managed=1",
                       host=dind_node.docker_host).stdout.decode().split()
    vols = dind.docker("volume", "ls", "-q", host=dind_node.docker_host).stdout.decode().split()
    assert left == [] and vols == [], (left, vols)


@multinode
def test_claude_code_on_a_node_goes_on_through_a_new_channel_after_srb_is_killed(
        dind_node: dind.Node, tmp_path: Path, standin: StandIn, installed_clients: None) -> None:
    """srb SIGKILLed mid-round: the channel, its port and its keys die with it while the
    client keeps running on the node. ``srb resume`` opens a new channel with new keys,
    points the run's uplink at it, and the same round's calls reach the gateway again."""
    dind.load_image(dind_node, dind.BASE_IMAGE)
    state = tmp_path / "state"
    state.mkdir()
    db = state / "srb.sqlite3"
    env = {**os.environ, **gateway_environ(standin), "PYTHONPATH": str(REPO),
           "DOCKER_HOST": dind_node.docker_host}
    srb = [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS), "--state",
           str(state)]
    proc = subprocess.Popen([*srb, "run", DEMO_TASK.name, "--agent", "claude-code:standin-slow",
                             "--budget", "900", "--adversary-budget", "15", "--json"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=REPO, text=True)
    try:
        _wait_mid_round(db, proc)
        proc.kill()  # SIGKILL: no cleanup of any kind
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    run_id = str(_q(db, "SELECT id FROM runs")[0][0])
    before = int(_q(db, f"SELECT count(*) FROM ledger WHERE run_id = '{run_id}'")[0][0])  # type: ignore[call-overload]
    roles = dind.docker("ps", "--format", "{{.Label \"srb.role\"}}",
                        host=dind_node.docker_host).stdout.decode().split()
    assert {"agent", "relay", "relay-uplink"} <= set(roles), roles  # all outlived srb

    resumed = subprocess.run([*srb, "resume", "--json"], env=env, capture_output=True,
                             text=True, cwd=REPO, timeout=1500)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    status, valid, stop = _q(db, f"SELECT status, valid, stop_reason FROM runs "
                                 f"WHERE id = '{run_id}'")[0]
    assert (status, valid, stop) == ("scored", 1, "completed"), (
        status, valid, stop, resumed.stderr[-3000:])
    after = int(_q(db, f"SELECT count(*) FROM ledger WHERE run_id = '{run_id}' AND "
                       "role = 'agent' AND status = 200")[0][0])  # type: ignore[call-overload]
    assert after > before, (before, after)  # the model was reached again, through the node
    print(f"remote run {run_id}: {before} ledger rows before the kill, {after} agent calls "
          "answered in all")
    assert _key_on_node(dind_node) == ""
    left = dind.docker("ps", "-aq", "--filter", "label=srb.managed=1",
                       host=dind_node.docker_host).stdout.decode().split()
    assert left == [], left
