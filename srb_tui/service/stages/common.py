"""What every stage shares: container paths, stage images, the stage container, outcomes.

A stage container is started from the stage's image with a long ``sleep`` as its only process,
as uid 0 with every capability dropped but SETUID, SETGID and KILL (so the grader can become
the submission's uid and end its processes, and nothing more: no DAC_OVERRIDE, FOWNER, CHOWN
or SYS_PTRACE), ``no-new-privileges``, no network. srb's grader package goes to
``/opt/srb/srb_grader`` (mode 0700), State A to ``/srb/original`` (0700, linked at
``/opt/original`` where the published images read it, unless the image has that path), the
stage's build context under ``/tests`` (0700 where it holds answers: audit and behavioural),
the grader's results under ``/srb/grader`` (0700). Submission code runs as a slot uid
(:mod:`srb_tui.grader.sandbox`), which can write only size-limited tmpfs mounts: its slot
scratch ``/srb/run/<slot>``, ``/tmp`` and, in Stage II, the ``/workspace`` holding its private
copy of the tree. In Stage III (:func:`candidate_layout`) /tmp and /dev/shm are 1770 root and
the candidate-tmp group, which a candidate run has only while it holds the container's run
lease (:mod:`srb_tui.grader.candidate_scratch`), so concurrent rounds never share them. The
grader runs as ``<interpreter> -I -c <boot> ...`` with its own folder as cwd; before anything
else it runs ``lockdown`` (grader folders private, the private interpreter hidden,
world-writable paths of the image closed) and the host checks the capability set it reports.
The interpreter is the image's private ``/opt/srb/python/bin/python3`` when present, else the
first ``python3`` on the PATH. Memory and CPUs are the verifier's (``[verifier.environment]``,
CPUs capped at the host's); a task that declares root grading has that recorded per stage in
``runs.extra.grading`` (:func:`grading_user`). The container is removed when the stage ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui import grader as grader_package
from srb_tui.grader.envelope import StageEnvelope
from srb_tui.grader.launch import script_text
from srb_tui.grader.sandbox import MAX_SLOTS, TMP_GROUP_OFFSET
from srb_tui.runner import (
    LABEL_STORE,
    ContainerError,
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    ExecResult,
    RunnerError,
    create,
    exec_run,
    list_managed,
    remove,
    start,
    store_tag,
)
from srb_tui.runner.files import put_files, put_readonly_tree, put_symlink
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress
from srb_tui.store import Store, utc_now

from .base import Publish as Publish
from .base import StageFault as StageFault
from .base import image_tag as image_tag
from .base import note_run_extra
from .base import stage_context as stage_context
from .base import tests_dir as tests_dir
from .stage_images import StageImages as StageImages

ORIGINAL_DIR = "/srb/original"
PUBLISHED_ORIGINAL = "/opt/original"
"""Where the published stage images read State A; srb links it to ORIGINAL_DIR."""
SUBMISSION_DIR = "/workspace/repo"
SUBMISSION_SOURCE = "/srb/submission"
TESTS_DIR = "/tests"
GRADER_HOME = "/opt/srb"
GRADER_MODULE = "srb_grader"
SCRATCH = "/srb/grader"
SHARED_WORK = "/srb/work"
STAGE_BASE = "/srb/stage"
CANDIDATES = "/srb/cand"
LAUNCHER = f"{GRADER_HOME}/bin/srb-submission"
PRIVATE_PYTHON = "/opt/srb/python/bin/python3"
GRADER_SOURCE = Path(grader_package.__file__).resolve().parent
GRADER_CAPS = ("SETUID", "SETGID", "KILL")
GRADER_CAP_MASK = (1 << 5) | (1 << 6) | (1 << 7)  # KILL, SETGID, SETUID
BOOT = (
    "import sys; sys.path.insert(0, '/opt/srb'); "
    "from srb_grader.cli import main; sys.exit(main(sys.argv[1:]))"
)
MIB = 1024**2
DEFAULT_MEMORY_MB = 4096
DEFAULT_CPUS = 2.0
DEFAULT_STORAGE_MB = 4096
STAGE_PIDS = 4096
SLOT_NPROC = 512



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


# --------------------------------------------------------------------------- container


@dataclass(frozen=True)
class StageLayout:
    """Which identities and writable mounts one stage container gets.

    ``slots``: concurrent submission identities (Stage III: one per adversary);
    ``workspace``: a writable /workspace for the submission's private copy (Stage II);
    ``shared_tmp``: /tmp writable by submission code (not in Stage III, where rounds share
    the container); ``private_tests``: /tests unreadable by submission code;
    ``candidate_tmp``: Stage III's /tmp and /dev/shm, usable only by the candidate run that
    holds the run lease (group :data:`TMP_GROUP_OFFSET` above the uid base), and slot
    scratches the grader may rename in (it parks each role's SRB_WORK there)."""

    slots: int = 1
    workspace: bool = False
    shared_tmp: bool = True
    private_tests: bool = True
    candidate_tmp: bool = False


def candidate_layout(slots: int) -> StageLayout:
    """The layout of a container that runs Stage III candidates (verification, reruns)."""
    return StageLayout(
        slots=max(1, slots), workspace=False, shared_tmp=False, private_tests=False,
        candidate_tmp=True,
    )  # fmt: skip


def _number(table: object, key: str) -> float | None:
    if isinstance(table, Mapping):
        value = table.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def task_resources(task: Task | None) -> tuple[int, int]:
    """(memory MiB, storage MiB) of the verifier environment ([verifier.environment], else
    [environment]), with srb's defaults."""
    memory = storage = None
    if task is not None:
        for table in (task.manifest.verifier.get("environment"), task.manifest.environment):
            memory = memory or _number(table, "memory_mb")
            storage = storage or _number(table, "storage_mb")
    return int(memory or DEFAULT_MEMORY_MB), int(storage or DEFAULT_STORAGE_MB)


def task_cpus(task: Task | None) -> float:
    """CPUs of the verifier environment (``cpus``), default 2, capped at this host's count
    (the engine refuses a limit above it)."""
    cpus = None
    if task is not None:
        for table in (task.manifest.verifier.get("environment"), task.manifest.environment):
            cpus = cpus or _number(table, "cpus")
    return min(float(cpus or DEFAULT_CPUS), float(os.cpu_count() or 1))


ROOT_NAMES = ("root", "0", "0:0")


def grading_user(task: Task | None) -> dict[str, Any]:
    """Who runs the stage container's grading processes, and which declaration says so.

    The grader always runs as uid 0 (with SETUID, SETGID and KILL only); what a task's
    ``[verifier] user = "root"`` (or ``[agent] user = "root"``) adds is the record that its
    modules are meant to run as root, as the published ladder runs every stage (``0:0``):
    module processes, and the submission code they start themselves, run as uid 0 and may
    install into root-owned prefixes. Code started through ``$SRB_SUBMISSION_RUN`` still
    runs as the slot uid."""
    declared = ""
    if task is not None:
        verifier_user = task.manifest.verifier.get("user")
        agent_user = task.manifest.agent.user
        if isinstance(verifier_user, str) and verifier_user in ROOT_NAMES:
            declared = "task.toml [verifier].user"
        elif isinstance(agent_user, str) and agent_user in ROOT_NAMES:
            declared = "task.toml [agent].user"
    return {
        "uid": 0,
        "modules_as_root": bool(declared),
        "declared_by": declared or None,
        "submission_launcher_uid": "slot",
    }


def draw_uid_base(name: str) -> int:
    """A first slot uid for one container, drawn from its name and a random salt: far from
    the uids of images and agents (100000 up), MAX_SLOTS apart."""
    salt = secrets.token_bytes(8) + name.encode()
    block = int.from_bytes(hashlib.sha256(salt).digest()[:4], "big") % 1_000_000
    return 100_000 + block * MAX_SLOTS


def stage_mounts(
    layout: StageLayout, memory_mb: int, storage_mb: int, uid_base: int = 61000
) -> tuple[dict[str, str], int]:
    """The tmpfs mounts (target -> options) and the per-file size cap in bytes.

    Everything submission code may write is one of these, so filling it is a measured fail
    of the submission, never a full host disk or a lost checkpoint. Their sum stays under
    half the memory limit (tmpfs pages are memory) so the OOM killer, which takes
    submission processes first, always frees enough."""
    budget = max(64, min(storage_mb, memory_mb // 2))
    mounts: dict[str, str] = {}
    if layout.slots > TMP_GROUP_OFFSET:
        raise ValueError(f"{layout.slots} submission slots: at most {TMP_GROUP_OFFSET}")
    if layout.workspace:
        workspace = budget // 2
        uid = uid_base
        mounts["/workspace"] = f"size={workspace}m,mode=0755,uid={uid},gid={uid},exec"
        budget -= workspace
    if layout.candidate_tmp:
        shm = min(64, budget // 8)
        budget -= shm
        tmp_group = uid_base + TMP_GROUP_OFFSET
        mounts["/dev/shm"] = f"size={shm}m,mode=1770,uid=0,gid={tmp_group}"
    shares = layout.slots + (1 if layout.shared_tmp or layout.candidate_tmp else 0)
    each = max(16, budget // max(1, shares))
    scratch_mode = "0770" if layout.candidate_tmp else "0700"  # group: the slot's own gid
    for slot in range(layout.slots):
        uid = uid_base + slot
        mounts[f"/srb/run/{slot}"] = f"size={each}m,mode={scratch_mode},uid={uid},gid={uid},exec"
    if layout.candidate_tmp:
        # (the engine copies the image's /tmp mode in; the grader sets 1770 after start)
        mounts["/tmp"] = f"size={each}m,mode=1770,uid=0,gid={tmp_group},exec"
    elif layout.shared_tmp:
        mounts["/tmp"] = f"size={each}m,mode=1777,exec"
    else:
        mounts["/tmp"] = "size=64m,mode=0755"
    largest = max(int(opt.split(",")[0].removeprefix("size=").removesuffix("m"))
                  for opt in mounts.values())
    return mounts, largest * MIB


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
        layout: StageLayout | None = None,
        task: Task | None = None,
        alias_python: bool = False,
        image_env: Sequence[str] = (),
    ) -> None:
        self.engine = engine
        self.run_id = run_id
        self.role = role
        self.image = image
        self.publish = publish
        self.store = store
        self.layout = layout or StageLayout()
        self.alias_python = alias_python
        self.handle: ContainerHandle | None = None
        self.python = "python3"
        self.lockdown_report: dict[str, Any] = {}
        self.image_env = tuple(image_env)
        self.original_alias = ""
        memory_mb, storage_mb = task_resources(task)
        cpus = task_cpus(task)
        self.grading = {
            **grading_user(task),
            "memory_mb": memory_mb,
            "cpus": cpus,
            "pids": STAGE_PIDS,
            "capabilities": list(GRADER_CAPS),
            "network": "none",
            "no_new_privileges": True,
        }
        self.uid_base = draw_uid_base(f"{run_id}/{role}")
        self.tmpfs, self.max_file_bytes = stage_mounts(
            self.layout, memory_mb, storage_mb, self.uid_base
        )
        self.spec = ContainerSpec(
            image=image,
            run_id=run_id,
            role=role,
            command=("sleep", "infinity"),
            user="0:0",
            allow_root=True,
            cap_add=GRADER_CAPS,
            env={"HOME": GRADER_HOME, "PYTHONDONTWRITEBYTECODE": "1", "SRB_SANDBOX": "on"},
            workdir=GRADER_HOME,
            labels={"srb.stage": role, **({LABEL_STORE: store_tag(store.path)} if store else {})},
            mem_limit=memory_mb * MIB,
            pids_limit=STAGE_PIDS,
            nano_cpus=int(cpus * 1_000_000_000),
            tmpfs=self.tmpfs,
        )

    @property
    def h(self) -> ContainerHandle:
        if self.handle is None:
            raise StageFault(f"the {self.role} container is not running")
        return self.handle

    async def __aenter__(self) -> StageContainer:
        mine = self.spec.labels.get(LABEL_STORE)
        for old in await list_managed(self.engine, self.run_id, store_tag=mine):
            if old.handle.role == self.role:  # left over from an interrupted grading
                await remove(self.engine, old.handle)
        self.handle = await create(self.engine, self.spec)
        if self.store is not None:
            await self.store.record_container(
                self.run_id, self.role, container_id=self.handle.id, name=self.handle.name
            )
            await self._record_grading()
        try:
            await put_readonly_tree(
                self.engine,
                self.handle,
                GRADER_SOURCE,
                f"{GRADER_HOME}/{GRADER_MODULE}",
                private=True,
            )
            limits = {
                "fsize_bytes": self.max_file_bytes,
                "nproc": SLOT_NPROC,
                "uid_base": self.uid_base,
            }
            await put_files(
                self.engine, self.handle, GRADER_HOME,
                {"sandbox.json": json.dumps(limits).encode()}, uid=0, gid=0, mode=0o600,
            )
            await start(self.engine, self.handle)
            self.python = await self._interpreter()
            if self.alias_python and self.python != PRIVATE_PYTHON:
                # Suites written for an image with a private interpreter run here too.
                await put_symlink(self.engine, self.handle, PRIVATE_PYTHON, self.python)
            await put_files(
                self.engine, self.handle, f"{GRADER_HOME}/bin",
                {"srb-submission": script_text(self.python).encode()}, uid=0, gid=0, mode=0o700,
            )
            await self._lockdown()
            if self.layout.candidate_tmp:
                await self._candidate_tmp()
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

    async def _record_grading(self) -> None:
        """Keep who graded and under which limits with the run (``runs.extra.grading``)."""
        assert self.store is not None
        await note_run_extra(self.store, self.run_id, "grading", self.role, dict(self.grading))

    def keep_env(self) -> list[str]:
        """The ``SRB_*`` names the stage image itself declares (``ENV`` lines): a task's own
        inputs, passed on to its modules."""
        names = [item.split("=", 1)[0] for item in self.image_env]
        return sorted({name for name in names if name.startswith("SRB_")})

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

    async def _lockdown(self) -> None:
        private = [GRADER_HOME, ORIGINAL_DIR, SCRATCH]
        if self.layout.private_tests:
            private.append(TESTS_DIR)
        res = await self.grader(["lockdown", "--private", *private], timeout_sec=120)
        try:
            report = json.loads(res.stdout.decode("utf-8").strip().splitlines()[-1])
        except (ValueError, IndexError):
            report = None
        if res.exit_code != 0 or not isinstance(report, dict):
            tail = res.stderr.decode("utf-8", "replace").strip()[-300:]
            raise StageFault(
                f"{self.role}: the grader's lockdown failed ({res.describe()}): {tail}"
            )
        self.lockdown_report = report
        caps = report.get("capabilities") or {}
        effective = int(str(caps.get("CapEff", "0")), 16)
        if report.get("uid") != 0 or effective != GRADER_CAP_MASK:
            raise StageFault(
                f"{self.role}: the grader runs as uid {report.get('uid')!r} with capabilities "
                f"{effective:#x}; srb needs uid 0 with exactly SETUID, SETGID and KILL"
            )
        if caps.get("NoNewPrivs") != "1":
            raise StageFault(f"{self.role}: the grader runs without no-new-privileges")

    async def _candidate_tmp(self) -> None:
        """/tmp and /dev/shm 1770, root and the candidate-tmp group (checked)."""
        group = self.uid_base + TMP_GROUP_OFFSET
        script = "chmod 1770 /tmp /dev/shm && stat -c '%a %u %g' /tmp /dev/shm"
        res = await exec_run(self.engine, self.h, ["sh", "-c", script], timeout_sec=30)
        seen = res.stdout.decode("utf-8", "replace").split("\n")[:2]
        if res.exit_code != 0 or seen != [f"1770 0 {group}"] * 2:
            raise StageFault(
                f"{self.role}: cannot make /tmp and /dev/shm private to candidate runs "
                f"({res.describe()}): {' / '.join(seen)}"
            )

    async def put_trees(
        self, original: Path | None, submission: Path, *, workspace: bool = False
    ) -> None:
        """State A (when given) private at /srb/original; the submission read-only at
        /workspace/repo, or with ``workspace`` at /srb/submission, from where the suite
        copies it into the submission's own writable /workspace/repo."""
        if original is not None:
            await put_readonly_tree(self.engine, self.h, original, ORIGINAL_DIR, private=True)
            await self._alias_original()
        dest = SUBMISSION_SOURCE if workspace else SUBMISSION_DIR
        await put_readonly_tree(self.engine, self.h, submission, dest)

    async def _alias_original(self) -> None:
        """``/opt/original`` -> State A, where the published images read it. An image that
        only made the mount point (an empty folder, as lang03's do) gets it replaced by the
        link; an image with something of its own there is left alone (and noted)."""
        p = PUBLISHED_ORIGINAL
        probe = (f'if [ -L {p} ]; then echo link; elif [ -d {p} ] && [ -z "$(ls -A {p})" ]; '
                 f"then echo empty; elif [ -e {p} ]; then echo other; else echo none; fi")
        res = await exec_run(self.engine, self.h, ["sh", "-c", probe], timeout_sec=30)
        found = res.stdout.decode("utf-8", "replace").strip()
        if found not in ("none", "empty"):
            self.publish(Progress(self.run_id, f"{self.role}: the image has its own {p} "
                                  f"({found or 'unreadable'}); State A stays at {ORIGINAL_DIR}"))
            return
        await put_symlink(self.engine, self.h, p, ORIGINAL_DIR)
        self.original_alias = p

    async def put_context(self, task: Task, folders: Sequence[str]) -> None:
        """Copy ``tests/<folder>`` for each folder to ``/tests/<folder>``, read-only (and
        unreadable for submission code when the layout says so)."""
        root = tests_dir(task)
        for folder in dict.fromkeys(folders):
            source = root / folder
            if source.is_dir():
                await put_readonly_tree(
                    self.engine, self.h, source, container_path(folder),
                    private=self.layout.private_tests,
                )

    def grader_argv(self, args: Sequence[str]) -> list[str]:
        """``<python> -I -c <boot> ARGS``: isolated mode, no cwd or user site on sys.path."""
        return [self.python, "-I", "-c", BOOT, *args]

    async def grader(
        self,
        args: Sequence[str],
        *,
        timeout_sec: float,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run the grader with ARGS in the container under a time budget."""
        try:
            return await exec_run(
                self.engine,
                self.h,
                self.grader_argv(args),
                timeout_sec=timeout_sec,
                env=env,
                workdir=GRADER_HOME,
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
