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

A third side, ``relay``, sends the same streams through a bare TCP byte relay (asyncio
streams, no HTTP) in its own process: the floor any extra process hop costs on this machine
under its current load, so the gateway's own share can be told from the hop's. The whole
measurement is repeated ``--repeat`` times (3 by default) with fresh server processes; each
repeat prints its medians, the 1-minute load average and the CPU time the gateway and the
relay processes spent per stream, and the last lines give the median over the repeats.

Usage: python bench/bench_gateway.py [-n 3] [--repeat 3] [--streams 50] [--pace 0.02]
       [--mode steady|burst] [--budget]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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


async def _serve_relay(upstream: str) -> None:
    """A bare TCP relay to ``upstream``: bytes in, bytes out, nothing parsed."""
    host, port = upstream.removeprefix("http://").rsplit(":", 1)

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    listen_port = server.sockets[0].getsockname()[1]
    print(json.dumps({"url": f"http://127.0.0.1:{listen_port}"}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.close()


async def _serve_gateway(upstream: str, budget: bool = False) -> None:
    from srb_tui.gateway import Gateway, load_gateway_config
    from srb_tui.store import Store

    with tempfile.TemporaryDirectory(prefix="srb-bench-gw-") as folder:
        state = Path(folder)
        environ = {"ANTHROPIC_API_KEY": "sk-bench-standin", "SRB_GATEWAY_ANTHROPIC_URL": upstream}
        config = load_gateway_config(state, environ)
        store = await Store.open(state / "srb.sqlite3")
        run = await store.runs.create_run(task_id="bench", task_path=folder, agent="bench")
        gateway = await Gateway.start(config, store, state / "gateway")
        token = await gateway.issue_token(run.id, "agent", 1)
        if budget:  # a budget never reached: the check runs on every request, as in a campaign
            gateway.set_budget(run.id, max_cost_usd=1e9, max_tokens=10**15)
        print(json.dumps({"url": gateway.tcp_url, "token": token}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await gateway.close()
        rows = await store.ledger.ledger_rows(run.id, limit=1_000_000)
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


def _cpu_sec(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SIDES = ("direct", "relay", "gateway")


async def _repeat(args: argparse.Namespace, seed: int) -> dict[str, object]:
    """One whole measurement with fresh server processes; medians per side."""
    standin, up = _spawn("--serve", "standin", "--pace", str(args.pace), "--deltas",
                         str(args.deltas))
    relay, rl = _spawn("--serve", "relay", "--upstream", up["url"])
    gw_args = ["--serve", "gateway", "--upstream", up["url"]] + (["--budget"] if args.budget
                                                                  else [])
    gateway, gw = _spawn(*gw_args)
    urls = {"direct": (up["url"], "direct-needs-no-token"),
            "relay": (rl["url"], "relay-needs-no-token"),
            "gateway": (gw["url"], gw["token"])}
    pids = {"relay": relay.pid, "gateway": gateway.pid}
    load = os.getloadavg()[0]
    try:
        results: dict[str, list[tuple[float, float]]] = {side: [] for side in SIDES}
        cpu = dict.fromkeys(pids, 0.0)
        for side in SIDES:
            await _round(*urls[side], args.streams)  # warm-up
        spread = (args.deltas + 5) * args.pace  # about one stream's duration
        for index in range(args.n):
            for side in SIDES:
                before = _cpu_sec(pids[side]) if side in pids else 0.0
                if args.mode == "burst":
                    results[side] += await _round(*urls[side], args.streams)
                else:
                    results[side] += await _steady(*urls[side], args.streams, 4, spread,
                                                   seed * 100 + index)
                if side in pids:
                    cpu[side] += _cpu_sec(pids[side]) - before
    finally:
        for proc in (gateway, relay, standin):
            assert proc.stdin is not None
            proc.stdin.close()
        assert gateway.stdout is not None
        tail = gateway.stdout.read()
        for proc in (gateway, relay, standin):
            proc.wait(30)
    load = max(load, os.getloadavg()[0])
    per_side = len(results["direct"])
    rows = json.loads(tail.strip().splitlines()[-1])["ledger_rows"] if tail.strip() else -1
    if rows != per_side + args.streams:
        raise SystemExit(f"gateway wrote {rows} ledger rows, expected {per_side + args.streams}")
    figures: dict[str, object] = {"load": load, "streams": per_side}
    for side in SIDES:
        figures[side] = (_median([r[0] for r in results[side]]),
                         _median([r[1] for r in results[side]]))
    figures["cpu_ms"] = {side: cpu[side] * 1000 / per_side for side in pids}
    return figures


def _show(label: str, fig: dict[str, object]) -> None:
    (d1, dn), (r1, rn), (g1, gn) = (fig[side] for side in SIDES)  # type: ignore[misc]
    cpu = fig["cpu_ms"]
    assert isinstance(cpu, dict)
    print(f"{label:>8} load {fig['load']:5.2f} | first byte: direct {d1:6.2f}  relay "
          f"{r1:6.2f} (+{r1 - d1:5.2f})  gateway {g1:6.2f} (+{g1 - d1:5.2f}, x{g1 / d1:4.2f})"
          f" | last byte added: relay {rn - dn:+7.2f}  gateway {gn - dn:+7.2f}"
          f" | CPU ms/stream: relay {cpu['relay']:.2f} gateway {cpu['gateway']:.2f}")


async def _bench(args: argparse.Namespace) -> None:
    print(f"{args.mode}: {args.streams} concurrent streams, {args.n} rounds per side per repeat,"
          f" {args.repeat} repeats; STAND-IN upstream: {args.deltas + 5} events a stream, "
          f"{args.pace * 1000:g} ms apart; {os.cpu_count()} CPUs"
          + ("; a budget is set (checked on every request)" if args.budget else ""))
    print("(ms; 'relay' is a bare TCP byte relay process: the floor of one extra hop)")
    repeats = []
    for index in range(args.repeat):
        fig = await _repeat(args, index)
        repeats.append(fig)
        _show(f"#{index + 1}", fig)
    added = [fig["gateway"][0] - fig["direct"][0] for fig in repeats]  # type: ignore[index]
    relay_added = [fig["relay"][0] - fig["direct"][0] for fig in repeats]  # type: ignore[index]
    last_added = [fig["gateway"][1] - fig["direct"][1] for fig in repeats]  # type: ignore[index]
    ratio = [fig["gateway"][0] / fig["direct"][0] for fig in repeats]  # type: ignore[index]
    loads = [float(fig["load"]) for fig in repeats]  # type: ignore[arg-type]
    print(f"median over {args.repeat} repeats (load {min(loads):.2f}-{max(loads):.2f}): "
          f"first byte added by the gateway {_median(added):.2f} ms (x{_median(ratio):.2f} "
          f"direct; goal <= 5 ms), by a bare relay {_median(relay_added):.2f} ms; last byte "
          f"added {_median(last_added):.2f} ms")
    verdict = "met" if _median(added) <= 5 else "NOT met"
    print(f"goal {verdict} at this load")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="rounds per side per repeat")
    parser.add_argument("--repeat", type=int, default=3, help="whole measurements")
    parser.add_argument("--budget", action="store_true",
                        help="give the run a (never reached) budget, as campaigns do")
    parser.add_argument("--streams", type=int, default=50, help="concurrent streams a round")
    parser.add_argument("--pace", type=float, default=0.02, help="seconds between SSE events")
    parser.add_argument("--deltas", type=int, default=50, help="text deltas a stream")
    parser.add_argument("--mode", choices=("steady", "burst"), default="steady",
                        help="steady: 50 overlapping workers; burst: 50 at the same instant")
    parser.add_argument("--serve", choices=("standin", "gateway", "relay"), help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "standin":
        asyncio.run(_serve_standin(args.pace, args.deltas))
    elif args.serve == "gateway":
        asyncio.run(_serve_gateway(args.upstream, args.budget))
    elif args.serve == "relay":
        asyncio.run(_serve_relay(args.upstream))
    else:
        asyncio.run(_bench(args))


if __name__ == "__main__":
    main()
