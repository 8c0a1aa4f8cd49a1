"""Upkeep over a pool, without Docker-in-Docker: node ``n1`` is srb's own engine reached by
its socket (a node engine of its own, as a remote one would be) and ``n2`` an address where
nothing listens (a node that died).

* ``srb gc`` visits n1, names n2 as skipped with its error, and copies no image to any node
  (placement alone brings srb's base image; its message blames srb's engine when that is
  where the fault is);
* recorded containers whose container the engine no longer has are stamped ``removed_at``
  (on the node that answers; the dead node's rows are left, not guessed);
* a stage container replaced when grading resumes has its row stamped at replacement.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.runner import ContainerSpec, DockerEngine, RunnerPool, create, list_managed, remove
from srb_tui.runner.errors import ImageBuildError
from srb_tui.runner.query import image_exists
from srb_tui.service.app import open_service
from srb_tui.service.run.orchestrator import store_label
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS, DEMO_TASK

pytestmark = pytest.mark.docker

LOCAL_URL = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
ABSENT_IMAGE = "srb-test/never-built:absent"
GONE_ID = "f" * 64  # a container id no engine has


def closed_port() -> int:
    """A TCP port on this machine where nothing listens (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pool_settings(tmp_path: Path, *, base_image: str = "srb/base:bookworm") -> Settings:
    state = tmp_path / "state"
    state.mkdir(parents=True)
    (state / "config.toml").write_text(
        '[backend]\nkind = "engines"\n\n'
        f'[engines.n1]\nurl = "{LOCAL_URL}"\n\n'
        f'[engines.n2]\nurl = "tcp://127.0.0.1:{closed_port()}"\n')
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state, base_image=base_image)


async def _run(store: Store, run_id: str, node: str, *, live: bool = False) -> None:
    await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK), agent="untouched",
                                run_id=run_id, extra={"node": node})
    await store.runs.transition(run_id, "preparing")
    if not live:
        await store.runs.transition(run_id, "cancelled", "test")


def test_gc_names_the_dead_node_copies_nothing_and_stamps_gone_rows(tmp_path: Path) -> None:
    # srb's base image named as one no engine has: bringing it anywhere would fail loudly
    settings = pool_settings(tmp_path, base_image=ABSENT_IMAGE)

    async def body() -> None:
        async with open_service(settings) as core:
            svc = await core.runs()
            store = svc.store
            await _run(store, "r-20261205-100000-aa01", "n1")
            await _run(store, "r-20261205-100001-aa02", "n2")
            await _run(store, "r-20261205-100002-aa03", "n1", live=True)
            for run_id in ("r-20261205-100000-aa01", "r-20261205-100001-aa02"):
                await store.infra.record_container(
                    run_id, "agent", container_id=GONE_ID + run_id[-2:], name=f"srb-{run_id}-agent"
                )
            # a live run's container that exists: kept, and its row left present
            spec = ContainerSpec(image="srb/base:bookworm", run_id="r-20261205-100002-aa03",
                                 role="agent", command=("sleep", "60"),
                                 labels={"srb.store": store_label(settings.db_path)})
            handle = await create(svc.engine, spec)
            try:
                await store.infra.record_container(spec.run_id, "agent", container_id=handle.id,
                                                   name=handle.name)
                report, live = await svc.gc()
                assert [c.handle.id for c in await list_managed(svc.engine, spec.run_id)] == \
                    [handle.id]
            finally:
                await remove(svc.engine, handle)
            assert live == {"r-20261205-100002-aa03"}
            assert [e.name for e in report.skipped] == ["n2"]
            assert "127.0.0.1" in report.skipped[0].url and report.skipped[0].error
            assert "systemctl" not in report.skipped[0].error
            assert not report.complete
            assert report.rows_marked_removed == 1  # n1's gone row; n2's is not guessed
            rows = {r.run_id: r.removed_at for r in await store.infra.containers()}
            assert rows["r-20261205-100000-aa01"] is not None
            assert rows["r-20261205-100001-aa02"] is None
            assert rows["r-20261205-100002-aa03"] is None
            # gc brought no image to n1: placement alone does, and says whose fault it is
            n1 = (await core.backend()).nodes["n1"]
            assert not await image_exists(n1.engine, ABSENT_IMAGE)
            with pytest.raises(ImageBuildError, match=r"srb's engine \(.*\) has no "
                                                      r"srb-test/never-built:absent"):
                await svc.on_node(n1)

    asyncio.run(body())


def test_a_stage_container_replaced_at_resume_is_stamped_removed(tmp_path: Path) -> None:
    from srb_tui.schema import load_task
    from srb_tui.service.grading.stages.behavioural import LAYOUT
    from srb_tui.service.grading.stages.common import StageImages
    from srb_tui.service.grading.stages.stage_container import StageContainer

    load = load_task(DEMO_TASK)
    assert load.task is not None
    task = load.task

    async def body() -> None:
        engine = DockerEngine(RunnerPool(2))
        try:
            async with await Store.open(tmp_path / "srb.sqlite3") as store:
                run_id = "r-20261205-110000-bb01"
                await store.runs.create_run(task_id=task.id, task_path=str(DEMO_TASK),
                                            agent="untouched", run_id=run_id)
                info = await StageImages(engine, task, "srb/base:bookworm",
                                         lambda event: None).get("behavioural")

                def stage() -> StageContainer:
                    return StageContainer(engine, run_id, "behavioural", info.tag,
                                          publish=lambda e: None, store=store, layout=LAYOUT,
                                          task=task)

                first = await stage().__aenter__()  # srb stopped here: never left
                old = first.h.id
                async with stage() as second:  # the resumed grading makes it anew
                    new = second.h.id
                    rows = {r.container_id: r.removed_at for r in await store.infra.containers()}
                    assert rows[old] is not None, "the replaced container's row"
                    assert rows[new] is None
                    assert [c.handle.id for c in await list_managed(engine, run_id)] == [new]
                rows = {r.container_id: r.removed_at for r in await store.infra.containers()}
                assert rows[new] is not None
                assert await list_managed(engine, run_id) == []
        finally:
            engine.close()

    asyncio.run(body())
