"""Benchmark: the gateway's overhead on streamed responses, through the gateway vs straight
to the upstream, in the same run.

The upstream is the STAND-IN model server of the tests (tests/gateway/standin.py, not a
real vendor) in its own process, streaming Anthropic Messages SSE (11 events, paced by
``--pace`` seconds). The gateway runs in a second process (real store, a real run token),
the load generator in this one. Each round sends ``--streams`` concurrent streams, alternating
direct and gateway rounds; time to the first body byte and to the last byte are collected
per stream and the medians compared. Goal: <= 5 ms added at the median with 50 streams.

Usage: python bench/bench_gateway.py [-n 10] [--streams 50] [--pace 0.002]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
BODY = {"model": "claude-real", "max_tokens": 64, "stream": True, "messages": []}


# ---------------------------------------------------------------------- server processes


async def _serve_standin(pace: float) -> None:
    sys.path.insert(0, str(REPO))
    from tests.gateway.standin import StandIn

    server = await StandIn(delay_per_event=pace).start()
    print(json.dumps({"url": server.url}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.close()


async def _serve_gateway(upstream: str) -> None:
    from srb_tui.gateway import Gateway, load_gateway_config
    from srb_tui.store import Store

    with tempfile.TemporaryDirectory(prefix="srb-bench-gw-") as folder:
        state = Path(folder)
        environ = {"ANTHROPIC_API_KEY": "sk-bench-standin", "SRB_GATEWAY_ANTHROPIC_URL": upstream}
        config = load_gateway_config(state, environ)
        store = await Store.open(state / "srb.sqlite3")
        run = await store.create_run(task_id="bench", task_path=folder, agent="bench")
        gateway = await Gateway.start(config, store, state / "gateway")
        token = await gateway.issue_token(run.id, "agent", 1)
        print(json.dumps({"url": gateway.tcp_url, "token": token}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await gateway.close()
        rows = await store.ledger_rows(run.id, limit=1_000_000)
        await store.close()
        print(json.dumps({"ledger_rows": len(rows)}), flush=True)


def _spawn(*args: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"server {args} did not start")
    return proc, json.loads(line)


# ---------------------------------------------------------------------- load


async def _one(session: aiohttp.ClientSession, url: str, token: str) -> tuple[float, float]:
    headers = {"x-api-key": token, "anthropic-version": "2023-06-01"}
    started = time.perf_counter()
    async with session.post(url + "/v1/messages", json=BODY, headers=headers) as resp:
        if resp.status != 200:
            raise SystemExit(f"{url}: HTTP {resp.status}: {await resp.text()}")
        first = await resp.content.readany()
        ttfb = time.perf_counter() - started
        size = len(first)
        while chunk := await resp.content.readany():
            size += len(chunk)
        ttlb = time.perf_counter() - started
    if size == 0 or ttfb <= 0:
        raise SystemExit(f"{url}: empty stream")
    return ttfb * 1000, ttlb * 1000


async def _round(url: str, token: str, streams: int) -> list[tuple[float, float]]:
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        return list(await asyncio.gather(*(_one(session, url, token) for _ in range(streams))))


def _median(values: list[float]) -> float:
    return statistics.median(values)


async def _bench(args: argparse.Namespace) -> None:
    standin, up = _spawn("--serve", "standin", "--pace", str(args.pace))
    gateway, gw = _spawn("--serve", "gateway", "--upstream", up["url"])
    try:
        results: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
        await _round(up["url"], "warm-up", args.streams)
        await _round(gw["url"], gw["token"], args.streams)
        for _ in range(args.n):
            results["direct"] += await _round(up["url"], "direct-needs-no-token", args.streams)
            results["gateway"] += await _round(gw["url"], gw["token"], args.streams)
    finally:
        for proc in (gateway, standin):
            assert proc.stdin is not None
            proc.stdin.close()
        assert gateway.stdout is not None
        tail = gateway.stdout.read()
        gateway.wait(30)
        standin.wait(30)
    figures = {
        side: (_median([r[0] for r in rows]), _median([r[1] for r in rows]))
        for side, rows in results.items()
    }
    (d_first, d_last), (g_first, g_last) = figures["direct"], figures["gateway"]
    per_side = args.n * args.streams
    print(f"{args.streams} concurrent streams x {args.n} rounds per side ({per_side} streams), "
          f"STAND-IN upstream pacing {args.pace * 1000:g} ms/event")
    print(f"{'':10} {'first byte ms':>14} {'last byte ms':>14}")
    print(f"{'direct':10} {d_first:14.2f} {d_last:14.2f}")
    print(f"{'gateway':10} {g_first:14.2f} {g_last:14.2f}")
    print(f"{'added':10} {g_first - d_first:14.2f} {g_last - d_last:14.2f}   (goal <= 5 ms)")
    print(f"ratio      {g_first / d_first:14.2f} {g_last / d_last:14.2f}")
    if tail.strip():
        rows = json.loads(tail.strip().splitlines()[-1])["ledger_rows"]
        print(f"gateway ledger rows written: {rows} (expected {per_side + args.streams})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="rounds per side")
    parser.add_argument("--streams", type=int, default=50, help="concurrent streams a round")
    parser.add_argument("--pace", type=float, default=0.002, help="seconds between SSE events")
    parser.add_argument("--serve", choices=("standin", "gateway"), help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "standin":
        asyncio.run(_serve_standin(args.pace))
    elif args.serve == "gateway":
        asyncio.run(_serve_gateway(args.upstream))
    else:
        asyncio.run(_bench(args))


if __name__ == "__main__":
    main()
