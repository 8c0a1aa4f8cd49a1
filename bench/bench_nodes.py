"""Benchmark: N runs of the demo on a pool of K Docker-in-Docker nodes against one node, in
the same invocation (same machine, same load).

Each round makes a pool config over the first K nodes (``kind = "engines"``) in a fresh
state directory and drives N runs at once through srb's run service, which places them by
the task's declared CPUs and memory (demo01 declares 2, so a 2-CPU node takes one run at a
time). Two agents:

* ``replay:reference`` graded (Stage III budgets 15 s): CPU-bound on shared cores, so the
  ratio shows how far the machine, not srb, limits the pool;
* ``command:sleep 20`` with ``--no-grade``: CPU-light, the ratio is srb's placement and
  per-node overhead; ideally wall(1 node) / wall(K nodes) ≈ K.

The nodes are made by ``tests/nodes/dind.py`` on the engine in ``DOCKER_HOST`` and removed
at the end. Printed: wall time per (agent, K) and the ratio one node / K nodes.

    DOCKER_HOST=... .venv/bin/python bench/bench_nodes.py [-n 3] [-k 3] [--light-only]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from srb_tui.config import Settings  # noqa: E402
from srb_tui.service.app import open_service  # noqa: E402
from srb_tui.service.run.run_node import run_node  # noqa: E402
from tests.nodes import dind  # noqa: E402
from tests.nodes.pool import write_pool_config  # noqa: E402

TASKS = REPO / "tasks"
DEMO = TASKS / "demo01-csvtab-python-to-node"


async def _round(hosts: list[str], n: int, agent: str, grade: bool) -> tuple[float, set[str]]:
    with tempfile.TemporaryDirectory(prefix="srb-bench-nodes-") as tmp:
        state = Path(tmp) / "state"
        write_pool_config(state, hosts)
        settings = Settings(task_roots=(TASKS,), state_dir=state)
        async with open_service(settings) as core:
            svc = await core.runs()
            runs = [await svc.launch(str(DEMO), agent, budget_sec=600) for _ in range(n)]
            started = time.monotonic()
            done = await asyncio.gather(*(
                svc.drive(r.id, grade=grade, adversary_budget_sec=15) for r in runs))
            wall = time.monotonic() - started
            await svc.gc()
        bad = [r for r in done if r.status not in ("scored", "collecting")]
        if bad:
            said = [(r.id, r.status, r.harness_error) for r in bad]
            raise SystemExit(f"runs did not finish: {said}")
        return wall, {run_node(r) or "?" for r in done}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=3, help="runs per round")
    ap.add_argument("-k", type=int, default=3, help="nodes of the pool")
    ap.add_argument("--light-only", action="store_true", help="only the sleep agent")
    args = ap.parse_args()
    agents = [("command:sleep 20", False)]
    if not args.light_only:
        agents.append(("replay:reference", True))
    with dind.cluster(args.k, prefix="srbb") as made:
        # warm every node once (base image copy, task image build, workspace cache)
        warm = asyncio.run(_round(made.hosts, args.k, "command:true", False))
        print(f"warm-up: {warm[0]:.1f} s on {sorted(warm[1])}")
        for agent, grade in agents:
            walls = {}
            for k in (args.k, 1):
                wall, nodes = asyncio.run(_round(made.hosts[:k], args.n, agent, grade))
                walls[k] = wall
                print(f"{agent:<20} grade={grade!s:<5} N={args.n} K={k}: {wall:7.1f} s "
                      f"on {sorted(nodes)}")
            print(f"{agent:<20} ratio wall(K=1)/wall(K={args.k}) = "
                  f"{walls[1] / walls[args.k]:.2f} (ideal {min(args.n, args.k)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
