"""A task written like the published ones, built and graded on a real engine (issue 11).

The fixture checkout (``fixture/checkout``) has an ``infra/Dockerfile`` whose base is a
digest-pinned reference no engine here has, mapped to srb's base image through
``state/config.toml [images]``; the behavioural image takes the infra image as
``INFRA_IMAGE`` and is tagged by ``[stages.behavioural].image``. Its ``contract`` module is
a pytest file run through srb's ``swerefactor.pytest_module`` inside the image (Debian's
python3-pytest), importing a helper from the suite's ``lib/``; its checks assert, from
inside, the module runtime (PYTHONPATH, image environment, task-declared names), root
grading with every limit kept (capabilities, no-new-privileges, 8 GiB, pids, CPUs, no
network). The images are built once per session of this module.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, ImageBuildError, ImageInfo, RunnerPool, build_image
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.image_plan import INFRA_TAG, load_image_map
from srb_tui.service.grading.stages.behavioural import BEHAVIOURAL
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.service.run.images import build_task_images
from srb_tui.store import Store

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

BASE_IMAGE = "srb/base:bookworm"
FIXTURE = Path(__file__).resolve().parent / "fixture" / "checkout"
TASK_ID = "ca01-contracts-fixture"
PINNED = "python@sha256:5f0e2d7c0a1b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5"


@dataclass
class Built:
    engine: DockerEngine
    store: Store
    task: Task
    root: Path
    images: dict[str, ImageInfo]
    image_map: dict[str, str]


def copy_checkout(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def built(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Built]:
    root = tmp_path_factory.mktemp("contracts")
    checkout = copy_checkout(root / "checkout")
    state = root / "state"
    state.mkdir()
    (state / "config.toml").write_text(f'[images]\n"{PINNED}" = "{BASE_IMAGE}"\n')
    load = load_task(checkout / "tasks" / TASK_ID)
    assert load.task is not None, load.problems
    engine = DockerEngine(RunnerPool(2))
    image_map = load_image_map(state)
    done = await build_task_images(engine, load.task, base_image=BASE_IMAGE,
                                   image_map=image_map)
    store = await Store.open(root / "srb.sqlite3")
    try:
        yield Built(engine, store, load.task, root, dict(done), image_map)
    finally:
        await store.close()
        engine.close()


async def test_images_are_built_as_the_task_writes_them(built: Built) -> None:
    images = built.images
    assert list(images) == ["infra", "env", "audit", "behavioural", "verification"], \
        "dependency order"
    assert images["infra"].tag == INFRA_TAG
    assert images["infra"].substitutions == ((PINNED, BASE_IMAGE),)
    assert images["behavioural"].tag == "srb-fixture/ca01-behavioural:1"
    assert dict(images["behavioural"].buildargs) == {
        "INFRA_IMAGE": INFRA_TAG, "BASE_IMAGE": BASE_IMAGE}
    assert dict(images["env"].buildargs) == {"BASE_IMAGE": BASE_IMAGE}, \
        "only the build args a Dockerfile declares"
    assert images["verification"].tag == "srb-fixture/ca01-verification:1"
    assert dict(images["verification"].buildargs) == {
        "BEHAVIOURAL_IMAGE": "srb-fixture/ca01-behavioural:1"}


async def test_a_missing_pinned_reference_is_named(built: Built, tmp_path: Path) -> None:
    context = tmp_path / "infra"
    shutil.copytree(FIXTURE / "infra", context)
    with pytest.raises(ImageBuildError) as caught:
        await build_image(built.engine, context, "srb-fixture/unmapped:1", base_image=BASE_IMAGE)
    text = str(caught.value)
    assert PINNED in text and "state/config.toml" in text and f'"{PINNED}"' in text


async def test_srb_images_build_names_the_missing_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No image map: the infra build cannot find its digest-pinned base, and the command
    says which reference and how to provide it."""
    import argparse

    from srb_tui.commands.images import cmd_build
    from srb_tui.commands.output import Output
    from srb_tui.config import Settings

    checkout = copy_checkout(tmp_path / "checkout")
    (tmp_path / "state").mkdir()
    settings = Settings(task_roots=(checkout / "tasks",), state_dir=tmp_path / "state")
    args = argparse.Namespace(task_id=TASK_ID, force=False, json=False)
    import asyncio

    from srb_tui.commands import exit_codes as codes

    code = await asyncio.to_thread(cmd_build, args, settings, Output(json_mode=False))
    assert code == codes.INFRA  # a base image no registry serves: srb could not build
    err = capsys.readouterr().err
    assert "infra" in err and PINNED in err and "[images]" in err, err


async def test_behavioural_runtime_and_root_grading(built: Built) -> None:
    run = await built.store.runs.create_run(task_id=TASK_ID, task_path=str(built.task.dir),
                                            agent="replay")
    for status in ("preparing", "agent", "collecting"):
        await built.store.runs.transition(run.id, status)
    tree = built.root / "state-a"
    tree.mkdir()
    (tree / "state-a.txt").write_text("the answer\n")
    from srb_tui.service.grading.stages.common import StageImages

    images = StageImages(built.engine, built.task, BASE_IMAGE, lambda e: None,
                         store=built.store, run_id=run.id, image_map=built.image_map)
    outcome = await BEHAVIOURAL.run(StageContext(
        engine=built.engine, store=built.store, run_id=run.id, task=built.task,
        original=tree, submission=tree, images=images, publish=lambda e: None,
    ))
    units = {u["id"]: u for u in outcome.envelope["units"]}
    checks = {c["id"]: c for c in outcome.envelope["checks"]}
    contract = units["contract"]
    failed = {k: c.get("summary") for k, c in checks.items()
              if c["verdict"] != "pass" and c.get("scored") and c["module"] == "contract"}
    assert contract["status"] == "ok" and failed == {}, (contract, failed)
    assert contract["passed"] == contract["scored"] == 5
    facts = json.loads(checks["check_contract.py::test_facts"]["summary"]
                       .removeprefix("AssertionError: "))
    assert facts["opt_original"] is True and facts["original"], facts
    # State A as a submission is not complete: go-only's Go question is skipped on it (a
    # skip stays in the pool), while the failing weight-0 build module costs nothing.
    assert outcome.behavioural_complete is False
    assert (units["go-only"]["skipped"], units["build"]["failed"]) == (1, 1)
    incomplete = [u["id"] for u in outcome.envelope["units"]
                  if u["weight"] > 0 and u["passed"] != u["scored"]]
    assert incomplete == ["go-only"]
    record = await built.store.runs.get_run(run.id)
    assert record is not None
    grading: dict[str, Any] = record.extra["grading"]["behavioural"]
    assert grading["modules_as_root"] is True
    assert grading["declared_by"] == "task.toml [verifier].user"
    assert (grading["memory_mb"], grading["network"], grading["capabilities"]) == (
        8192, "none", ["SETUID", "SETGID", "KILL", "SYS_PTRACE"])
    builds = record.extra["image_builds"]
    assert builds["behavioural"]["buildargs"]["INFRA_IMAGE"] == INFRA_TAG


async def _identity(built: Built, task: Task) -> dict[str, Any]:
    from srb_tui.service.grading.ladder_identity import record_identity

    tree = built.root / f"state-a-{task.dir.parent.parent.name}"
    tree.mkdir(exist_ok=True)
    (tree / "state-a.txt").write_text("the answer\n")
    result = await record_identity(built.engine, task, tree, base_image=BASE_IMAGE,
                                   image_map=built.image_map)
    return result.to_json() | {"envelope": result.envelope}


async def test_identity_follows_weights_and_the_reference_flag(built: Built) -> None:
    doc = await _identity(built, built.task)
    assert doc["ok"] is True and doc["failing"] == [] and doc["reference"] is True, doc
    rows = {m["id"]: m for m in doc["modules"]}
    assert rows["contract"]["required"] and rows["contract"]["passed_identity"]
    assert rows["contract"]["checked"].startswith("required: no scored check may fail")
    assert rows["go-only"]["passed_identity"] and rows["go-only"]["unchecked"] == 1
    assert "1/2 passed, 1 skipped on State A (cannot run there: not checked)" \
        in rows["go-only"]["checked"]
    assert rows["build"]["required"] is False and rows["build"]["passed_identity"] is False
    assert rows["build"]["checked"].startswith("reported only: weight 0 is not scored")

    # The same task with the stage's published opt-out: State A is not the original.
    other = copy_checkout(built.root / "withheld")
    evaluation = other / "tasks" / TASK_ID / "tests" / "evaluation.toml"
    evaluation.write_text(evaluation.read_text().replace(
        'context = "behavioural"\n', 'context = "behavioural"\nreference = false\n'))
    load = load_task(other / "tasks" / TASK_ID)
    assert load.task is not None, load.problems
    doc = await _identity(built, load.task)
    assert doc["ok"] is True and doc["reference"] is False
    checks = {c["id"]: c for c in doc["envelope"]["checks"]}
    facts = json.loads(checks["check_contract.py::test_facts"]["summary"]
                       .removeprefix("AssertionError: "))
    assert facts == {"opt_original": False, "original": None}
    assert "no /opt/original" in {m["id"]: m for m in doc["modules"]}["contract"]["checked"]
