"""srb runs on a pool of Docker engines (DinD nodes made by the test, see ``dind.py``).

Default tier (the one lean multi-node case): two demo runs driven at once on a two-node
pool, ungraded: each run goes to its own node (the demo task declares 2 CPUs, each node
has 2), the node is in the store, the collected submission is the replayed tree, and
``srb gc`` leaves no srb container on either node.

``SRB_MULTINODE=1``: the demo's submissions across three nodes score exactly as the
task's expected outcomes say they do locally; a node killed under a running agent gives
an invalid run in ``infra_error`` (never a zero) and the pool goes on with the others.
"""

from __future__ import annotations

import asyncio
import filecmp
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.service.app import open_service
from srb_tui.service.run.run_node import run_node
from tests.conftest import BUILTIN_TASKS, DEMO_TASK
from tests.nodes import dind
from tests.nodes.conftest import multinode
from tests.nodes.pool import srb_containers, write_pool_config

pytestmark = pytest.mark.docker


def _same_tree(left: Path, right: Path) -> bool:
    cmp = filecmp.dircmp(left, right, ignore=["__pycache__"])
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.diff_files or c.funny_files:
            return False
        stack.extend(c.subdirs.values())
    return True


def test_two_runs_fill_a_two_node_pool_and_gc_leaves_nothing(tmp_path: Path) -> None:
    with dind.cluster(2, prefix="srbtp") as made:
        state = tmp_path / "state"
        write_pool_config(state, made.hosts)
        settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)

        async def body() -> list[tuple[str, str | None, str]]:
            async with open_service(settings) as core:
                svc = await core.runs()
                runs = [await svc.launch(str(DEMO_TASK), "replay:reference") for _ in (1, 2)]
                done = await asyncio.gather(*(svc.drive(r.id, grade=False) for r in runs))
                report, _live = await svc.gc()
                assert report.foreign_kept == 0
                return [(r.id, run_node(r), r.status) for r in done]

        placed = asyncio.run(body())
        assert {node for _, node, _ in placed} == {"n1", "n2"}, placed
        assert all(status == "collecting" for *_, status in placed), placed
        for run_id, _, _ in placed:
            assert _same_tree(state / "runs" / run_id / "submission",
                              DEMO_TASK / "submissions" / "reference")
        for host in made.hosts:
            assert srb_containers(host) == [], host


EXPECTED = {"reference": ("accepted", True), "subtle": ("counterexample", True),
            "untouched": ("blindness", True), "wrong": ("behavioural_fail", True)}


@multinode
def test_demo_submissions_across_three_nodes_score_as_locally(tmp_path: Path) -> None:
    with dind.cluster(3, prefix="srbtd") as made:
        state = tmp_path / "state"
        write_pool_config(state, made.hosts)
        settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)

        async def body() -> dict[str, tuple[str | None, str | None, bool | None, str | None]]:
            async with open_service(settings) as core:
                svc = await core.runs()
                runs = {name: await svc.launch(str(DEMO_TASK), f"replay:{name}")
                        for name in EXPECTED}
                done = await asyncio.gather(*(svc.drive(r.id, adversary_budget_sec=15)
                                              for r in runs.values()))
                await svc.gc()
                out = {}
                for name, run in zip(runs, done, strict=True):
                    score = await svc.store.score_envelope(run.id) if hasattr(
                        svc.store, "score_envelope") else None
                    outcome = (score or {}).get("outcome") if isinstance(score, dict) else None
                    out[name] = (run_node(run), run.status, run.valid, outcome)
                return out

        got = asyncio.run(body())
        assert len({node for node, *_ in got.values()}) == 3, got
        for name, (_node, status, valid, _outcome) in got.items():
            assert status == "scored" and valid is EXPECTED[name][1], (name, got)
        for host in made.hosts:
            assert srb_containers(host) == [], host


@multinode
def test_a_node_killed_under_its_agent_gives_an_invalid_run(tmp_path: Path) -> None:
    with dind.cluster(2, prefix="srbtk") as made:
        state = tmp_path / "state"
        write_pool_config(state, made.hosts)
        settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)

        async def body() -> tuple[str, str | None, bool | None, str | None]:
            async with open_service(settings) as core:
                svc = await core.runs()
                run = await svc.launch(str(DEMO_TASK), "command:sleep 600", budget_sec=900)
                driving = asyncio.ensure_future(svc.drive(run.id, grade=False))
                while True:  # the agent is up on its node: kill that node
                    now = await svc.store.runs.require_run(run.id)
                    if now.status == "agent" and run_node(now):
                        break
                    await asyncio.sleep(0.5)
                node = made.nodes[int(run_node(now)[1:]) - 1]  # type: ignore[index]
                dind.kill_node(node)
                end = await asyncio.wait_for(driving, 600)
                # the pool goes on: the next run goes to the node that is left
                other = await svc.launch(str(DEMO_TASK), "replay:reference")
                after = await svc.drive(other.id, grade=False)
                assert run_node(after) != run_node(end) and after.status == "collecting"
                return end.status, run_node(end), end.valid, end.harness_error

        status, _node, valid, error = asyncio.run(body())
        assert status == "infra_error" and valid is False and error, (status, error)
