"""What every stage shares: container paths, stage images, the stage container, outcomes.

A stage container is started from the stage's image with a long ``sleep`` as its only
process; State A, the submission, the stage's build context (under ``/tests``) and srb's
grader package (``/opt/srb/srb_grader``) are copied in, and the grader runs as
``<interpreter> -m srb_grader ...`` through ``exec`` with ``PYTHONPATH=/opt/srb``. The
interpreter is the image's private ``/opt/srb/python/bin/python3`` when present, else the
first ``python3`` on the PATH. The container is removed when the stage ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui import grader as grader_package
from srb_tui.grader.envelope import StageEnvelope
from srb_tui.runner import (
    ContainerError,
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    ExecResult,
    ImageBuildError,
    ImageInfo,
    RunnerError,
    build_image,
    create,
    exec_run,
    list_managed,
    put_tree,
    remove,
    start,
)
from srb_tui.runner.files import put_readonly_tree, put_symlink
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress
from srb_tui.store import Store, utc_now

ORIGINAL_DIR = "/srb/original"
SUBMISSION_DIR = "/workspace/repo"
TESTS_DIR = "/tests"
GRADER_HOME = "/opt/srb"
GRADER_MODULE = "srb_grader"
SCRATCH = "/tmp/srb"
PRIVATE_PYTHON = "/opt/srb/python/bin/python3"
GRADER_SOURCE = Path(grader_package.__file__).resolve().parent
STAGE_UID = 1000
STAGE_GID = 1000

Publish = Callable[[object], None]
_TAG_UNSAFE = re.compile(r"[^a-z0-9._-]+")


class StageFault(Exception):
    """A stage could not run (image, container, grader): a harness error, never a verdict."""


@dataclass
class StageOutcome:
    """What one stage produced, in the shape the ladder scores from."""

    stage: str
    status: str
    """ok | error (the stage-result status)"""
    envelope: dict[str, Any]
    harness_error: str | None = None
    audit_gate: str | None = None
    behavioural_complete: bool | None = None
    modules: list[dict[str, Any]] = field(default_factory=list)
    adversaries: dict[str, str] = field(default_factory=dict)
    breaks: list[dict[str, Any]] = field(default_factory=list)


def error_envelope(stage: str, task: str, message: str, **metadata: Any) -> dict[str, Any]:
    """A stage result for a stage that could not run at all."""
    envelope = StageEnvelope(stage=stage, task=task)
    envelope.notes.append(message)
    envelope.metadata = dict(metadata)
    envelope.finish("error")
    return envelope.to_dict()


def tests_dir(task: Task) -> Path:
    return task.dir / "tests"


def stage_context(task: Task, spec: StageSpec) -> Path:
    """The stage's build context folder (``context`` option, default the stage name)."""
    return tests_dir(task) / str(spec.options.get("context") or spec.name)


def image_tag(task: Task, stage: str) -> str:
    """``srb-stage/<task>-<stage>:latest``. The image carries its context hash as a label,
    so a changed context is rebuilt and an unchanged one is not."""
    name = _TAG_UNSAFE.sub("-", task.id.lower()).strip("-.") or "task"
    return f"srb-stage/{name}-{stage}:latest"


def container_path(rel: str) -> str:
    """A path relative to ``tests/`` as the stage container sees it."""
    return f"{TESTS_DIR}/{rel.strip('/')}"


def option_str(spec: StageSpec, key: str, default: str) -> str:
    value = spec.options.get(key)
    return value if isinstance(value, str) and value else default


def option_number(spec: StageSpec, key: str, default: float) -> float:
    value = spec.options.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default


def option_strings(spec: StageSpec, key: str) -> list[str]:
    value = spec.options.get(key)
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return []


# --------------------------------------------------------------------------- images


class StageImages:
    """Builds each stage image once per ladder (skipped when unchanged) and records it."""

    def __init__(
        self,
        engine: DockerEngine,
        task: Task,
        base_image: str,
        publish: Publish,
        *,
        store: Store | None = None,
        run_id: str = "",
    ) -> None:
        self.engine = engine
        self.task = task
        self.base_image = base_image
        self.publish = publish
        self.store = store
        self.run_id = run_id
        self._builds: dict[str, asyncio.Task[ImageInfo]] = {}

    def _spec(self, stage: str) -> StageSpec:
        evaluation = self.task.evaluation
        spec = None if evaluation is None else getattr(evaluation, stage, None)
        if not isinstance(spec, StageSpec):
            raise StageFault(f"task {self.task.id} has no [stages.{stage}]")
        return spec

    async def _build(self, stage: str) -> ImageInfo:
        spec = self._spec(stage)
        context = stage_context(self.task, spec)
        tag = image_tag(self.task, stage)
        self.publish(Progress(self.run_id, f"{stage}: building image {tag} from {context}"))
        try:
            info = await build_image(self.engine, context, tag, base_image=self.base_image)
        except ImageBuildError as err:
            tail = "; ".join(line.strip() for line in err.log_tail[-3:] if line.strip())
            raise StageFault(
                f"{stage} image could not be built: {err}" + (f" (log: {tail})" if tail else "")
            ) from err
        except RunnerError as err:
            raise StageFault(f"{stage} image could not be built: {err}") from err
        state = "built" if info.built else "unchanged, not rebuilt"
        self.publish(Progress(self.run_id, f"{stage}: image {tag} {state} ({info.id[:19]})"))
        return info

    def prefetch(self, stages: Sequence[str]) -> None:
        """Start building these stages' images in the background."""
        for stage in stages:
            if stage not in self._builds:
                self._builds[stage] = asyncio.ensure_future(self._build(stage))

    async def get(self, stage: str) -> ImageInfo:
        """The stage's image (built now if it was not prefetched), recorded with the run."""
        self.prefetch([stage])
        info = await self._builds[stage]
        if self.store is not None and self.run_id:
            await self.store.record_image(
                self.run_id, stage, tag=info.tag, image_id=info.id, digest=info.digest
            )
        return info

    async def settle(self) -> None:
        """Wait for every started build (a build the ladder no longer needs included)."""
        for build in self._builds.values():
            with contextlib.suppress(Exception):
                await build


# --------------------------------------------------------------------------- container


class StageContainer:
    """One stage container, from creation to removal (use ``async with``)."""

    def __init__(
        self,
        engine: DockerEngine,
        run_id: str,
        role: str,
        image: str,
        *,
        publish: Publish,
        store: Store | None = None,
    ) -> None:
        self.engine = engine
        self.run_id = run_id
        self.role = role
        self.image = image
        self.publish = publish
        self.store = store
        self.handle: ContainerHandle | None = None
        self.python = "python3"
        self.spec = ContainerSpec(
            image=image,
            run_id=run_id,
            role=role,
            command=("sleep", "infinity"),
            env={"HOME": "/tmp", "PYTHONPATH": GRADER_HOME, "PYTHONDONTWRITEBYTECODE": "1"},
            workdir="/tmp",
            labels={"srb.stage": role},
        )

    @property
    def h(self) -> ContainerHandle:
        if self.handle is None:
            raise StageFault(f"the {self.role} container is not running")
        return self.handle

    async def __aenter__(self) -> StageContainer:
        for old in await list_managed(self.engine, self.run_id):
            if old.handle.role == self.role:  # left over from an interrupted grading
                await remove(self.engine, old.handle)
        self.handle = await create(self.engine, self.spec)
        if self.store is not None:
            await self.store.record_container(
                self.run_id, self.role, container_id=self.handle.id, name=self.handle.name
            )
        try:
            await put_readonly_tree(
                self.engine, self.handle, GRADER_SOURCE, f"{GRADER_HOME}/{GRADER_MODULE}"
            )
            await start(self.engine, self.handle)
            self.python = await self._interpreter()
        except BaseException:
            await self._remove()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._remove()

    async def _remove(self) -> None:
        if self.handle is None:
            return
        handle, self.handle = self.handle, None
        with contextlib.suppress(RunnerError):
            await remove(self.engine, handle)
        if self.store is not None:
            with contextlib.suppress(Exception):
                await self.store.update_container(handle.id, removed_at=utc_now())

    async def _interpreter(self) -> str:
        probe = (
            f"if [ -x {PRIVATE_PYTHON} ]; then echo {PRIVATE_PYTHON}; "
            "else command -v python3 || true; fi"
        )
        res = await exec_run(self.engine, self.h, ["sh", "-c", probe], timeout_sec=30)
        found = res.stdout.decode("utf-8", "replace").strip()
        if res.exit_code != 0 or not found:
            raise StageFault(
                f"the {self.role} image ({self.image}) has no python3 for srb's grader "
                f"(neither {PRIVATE_PYTHON} nor python3 on the PATH)"
            )
        return found.splitlines()[-1]

    async def alias_private_python(self) -> None:
        """Make ``/opt/srb/python/bin/python3`` name this image's python3 when it is absent
        (suites written for an image with a private interpreter then run here too)."""
        if self.python != PRIVATE_PYTHON:
            await put_symlink(self.engine, self.h, PRIVATE_PYTHON, self.python)

    async def put_trees(
        self, original: Path, submission: Path, *, writable_submission: bool = False
    ) -> None:
        """State A read-only at /srb/original; the submission at /workspace/repo (read-only
        unless ``writable_submission``, then owned by the stage user)."""
        await put_readonly_tree(self.engine, self.h, original, ORIGINAL_DIR)
        if writable_submission:
            await put_tree(
                self.engine, self.h, submission, dest=SUBMISSION_DIR, uid=STAGE_UID, gid=STAGE_GID
            )
        else:
            await put_readonly_tree(self.engine, self.h, submission, SUBMISSION_DIR)

    async def put_context(self, task: Task, folders: Sequence[str]) -> None:
        """Copy ``tests/<folder>`` for each folder to ``/tests/<folder>``, read-only."""
        root = tests_dir(task)
        for folder in dict.fromkeys(folders):
            source = root / folder
            if source.is_dir():
                await put_readonly_tree(self.engine, self.h, source, container_path(folder))

    async def grader(
        self,
        args: Sequence[str],
        *,
        timeout_sec: float,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run ``<python> -m srb_grader ARGS`` in the container under a time budget."""
        argv = [self.python, "-m", GRADER_MODULE, *args]
        try:
            return await exec_run(
                self.engine, self.h, argv, timeout_sec=timeout_sec, env=env, workdir="/tmp"
            )
        except ContainerError as err:
            raise StageFault(f"{self.role}: grader exec failed: {err}") from err


async def with_fault(
    stage: str, task: str, body: Callable[[], Awaitable[StageOutcome]]
) -> StageOutcome:
    """Run a stage body; a harness failure becomes an ``error`` outcome naming the stage."""
    try:
        return await body()
    except StageFault as err:
        message = str(err)
    except RunnerError as err:
        message = f"{stage}: {err}"
    except (OSError, ValueError) as err:
        message = f"{stage}: {type(err).__name__}: {err}"
    if not message.startswith(stage):
        message = f"{stage}: {message}"
    return StageOutcome(
        stage=stage,
        status="error",
        envelope=error_envelope(stage, task, message),
        harness_error=message,
    )
