"""Benchmark: the gateway's overhead on streamed responses, through the gateway vs straight
to the upstream, in the same run.

The upstream is the STAND-IN model server of the tests (tests/gateway/standin.py, not a
real vendor) in its own process, streaming Anthropic Messages SSE: ``--deltas`` text deltas
(50 by default) plus 5 framing events, ``--pace`` seconds apart (20 ms by default, about a
model's token rate). The gateway runs in a second process (real store, a real run token),
the load generator in this one. Rounds alternate direct and gateway. ``steady`` (default):
``--streams`` workers each run 4 streams back to back, their starts spread over one
stream's duration, so 50 streams are in flight at once; ``burst``: ``--streams`` streams
start at the same instant. Time to the first body byte and to the last byte are collected
per stream and the medians compared. Goal: <= 5 ms added at the median with 50 concurrent
streams.

Usage: python bench/bench_gateway.py [-n 5] [--streams 50] [--pace 0.02] [--mode steady|burst]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
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


async def _serve_standin(pace: float, deltas: int) -> None:
    sys.path.insert(0, str(REPO))
    from tests.gateway.standin import StandIn

    server = await StandIn(delay_per_event=pace, deltas=deltas).start()
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
    """Burst: ``streams`` streams started at the same instant."""
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        return list(await asyncio.gather(*(_one(session, url, token) for _ in range(streams))))


async def _steady(
    url: str, token: str, streams: int, per_worker: int, spread: float, seed: int
) -> list[tuple[float, float]]:
    """Steady: ``streams`` workers keep one stream each in flight, one after another; their
    starts are spread over ``spread`` seconds, so 50 streams overlap without arriving in
    the same millisecond (as 50 agents' requests do)."""
    rng = random.Random(seed)
    offsets = [rng.uniform(0, spread) for _ in range(streams)]
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker(offset: float) -> list[tuple[float, float]]:
            await asyncio.sleep(offset)  # load shaping, not synchronisation
            return [await _one(session, url, token) for _ in range(per_worker)]

        done = await asyncio.gather(*(worker(o) for o in offsets))
    return [r for rows in done for r in rows]


def _median(values: list[float]) -> float:
    return statistics.median(values)


async def _bench(args: argparse.Namespace) -> None:
    standin, up = _spawn("--serve", "standin", "--pace", str(args.pace), "--deltas",
                         str(args.deltas))
    gateway, gw = _spawn("--serve", "gateway", "--upstream", up["url"])
    try:
        results: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
        await _round(up["url"], "warm-up", args.streams)
        await _round(gw["url"], gw["token"], args.streams)
        spread = (args.deltas + 5) * args.pace  # about one stream's duration
        for index in range(args.n):
            for side, url, token in (("direct", up["url"], "direct-needs-no-token"),
                                     ("gateway", gw["url"], gw["token"])):
                if args.mode == "burst":
                    results[side] += await _round(url, token, args.streams)
                else:
                    results[side] += await _steady(url, token, args.streams, 4, spread, index)
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
    per_side = len(results["direct"])
    print(f"{args.mode}: {args.streams} concurrent streams, {args.n} rounds per side "
          f"({per_side} streams a side), STAND-IN upstream: {args.deltas + 5} events a stream, "
          f"{args.pace * 1000:g} ms apart")
    print(f"{'':10} {'first byte ms':>14} {'last byte ms':>14}")
    print(f"{'direct':10} {d_first:14.2f} {d_last:14.2f}")
    print(f"{'gateway':10} {g_first:14.2f} {g_last:14.2f}")
    print(f"{'added':10} {g_first - d_first:14.2f} {g_last - d_last:14.2f}   (goal <= 5 ms)")
    print(f"ratio      {g_first / d_first:14.2f} {g_last / d_last:14.2f}")
    if tail.strip():
        rows = json.loads(tail.strip().splitlines()[-1])["ledger_rows"]
        print(f"gateway ledger rows written: {rows} (expected {per_side + args.streams})")
    if g_first - d_first > 5:
        print("NOTE: more than 5 ms added at the median first byte")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="rounds per side")
    parser.add_argument("--streams", type=int, default=50, help="concurrent streams a round")
    parser.add_argument("--pace", type=float, default=0.02, help="seconds between SSE events")
    parser.add_argument("--deltas", type=int, default=50, help="text deltas a stream")
    parser.add_argument("--mode", choices=("steady", "burst"), default="steady",
                        help="steady: 50 overlapping workers; burst: 50 at the same instant")
    parser.add_argument("--serve", choices=("standin", "gateway"), help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "standin":
        asyncio.run(_serve_standin(args.pace, args.deltas))
    elif args.serve == "gateway":
        asyncio.run(_serve_gateway(args.upstream))
    else:
        asyncio.run(_bench(args))


if __name__ == "__main__":
    main()
