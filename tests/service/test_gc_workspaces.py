"""``srb gc`` removes the workspace images (State A committed onto an environment image) that
nothing uses any more, through the real command, service and engine: one of this store that
no container and no live run uses goes; one a live run of this store recorded, and another
store's, stay; the count and bytes are in the output (text and ``--json``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool, store_tag, workspace_image
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS, REPO

pytestmark = pytest.mark.docker

BASE_IMAGE = "srb/base:bookworm"


def srb(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    return subprocess.run([sys.executable, "-m", "srb_tui", "--state", str(state), *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)


def exists(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode == 0


def size(ref: str) -> int:
    return int(subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", ref],
                              check=True, capture_output=True, text=True).stdout)


async def make_images(state: Path, tmp: Path) -> dict[str, tuple[str, str]]:
    """Three workspace images (tag, id): this store's unused and live-recorded ones, and
    another store's; the live run's record is written to the store as a launch writes it."""
    db_path = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state).db_path
    mine = store_tag(db_path)
    engine = DockerEngine(RunnerPool(2))
    made: dict[str, tuple[str, str]] = {}
    try:
        for name, tag in (("unused", mine), ("recorded", mine), ("foreign", "not-this-store")):
            tree = tmp / name
            tree.mkdir(parents=True)
            (tree / "state-a.txt").write_text(f"{name} {uuid.uuid4().hex}\n" * 3000)
            image = await workspace_image(engine, BASE_IMAGE, tree, f"gc-{uuid.uuid4().hex}",
                                          uid=1000, gid=1000, store_tag=tag)
            made[name] = (image.tag, image.id)
    finally:
        engine.close()
    async with await Store.open(db_path) as store:
        run = await store.runs.create_run(task_id="demo01-csvtab-python-to-node",
                                          task_path="tasks/demo01", agent="replay")
        await store.runs.transition(run.id, "preparing")
        tag, image_id = made["recorded"]
        await store.infra.record_image(run.id, "workspace", tag=tag, image_id=image_id,
                                       digest=image_id)
    return made


def test_gc_removes_unused_workspace_images_and_reports_them(tmp_path: Path) -> None:
    state = tmp_path / "state"
    made = asyncio.run(make_images(state, tmp_path / "trees"))
    tags = [tag for tag, _ in made.values()]
    try:
        own_layer = size(made["unused"][0]) - size(BASE_IMAGE)
        done = srb(state, "gc", "--json")
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["workspace_images_removed"] >= 1
        assert doc["workspace_image_bytes_reclaimed"] >= own_layer > 0
        assert doc["workspace_images_kept"] >= 2
        assert len(doc["live_runs_kept"]) == 1
        assert not exists(made["unused"][0])
        assert exists(made["recorded"][0]) and exists(made["foreign"][0])

        text = srb(state, "gc")
        assert text.returncode == 0, text.stderr
        assert "removed 0 workspace image(s), 0 bytes" in text.stdout, text.stdout
        assert exists(made["recorded"][0]) and exists(made["foreign"][0])
    finally:
        subprocess.run(["docker", "rmi", "-f", *tags], check=False, capture_output=True)
