"""One stage container, from creation to removal: :class:`StageContainer`.

A stage container is started from the stage's image with a long ``sleep`` as its only process,
as uid 0 with every capability dropped but SETUID, SETGID and KILL (so the grader can become
the submission's uid and end its processes, and nothing more: no DAC_OVERRIDE, FOWNER, CHOWN
or SYS_PTRACE), ``no-new-privileges``, no network. srb's grader package goes to
``/opt/srb/srb_grader`` (mode 0700), State A to ``/srb/original`` (0700, linked at
``/opt/original`` where the published images read it, unless the image has that path), the
stage's build context under ``/tests`` (0700 where it holds answers: audit and behavioural),
the grader's results under ``/srb/grader`` (0700). Submission code runs as a slot uid
(:mod:`srb_tui.grader.boundary.sandbox`), which can write only size-limited tmpfs mounts: its slot
scratch ``/srb/run/<slot>``, ``/tmp`` and, in Stage II, the ``/workspace`` holding its private
copy of the tree. In Stage III (:func:`.stage_layout.candidate_layout`) /tmp and /dev/shm
are 1770 root and the candidate-tmp group, which a candidate run has only while it holds the
container's run lease (:mod:`srb_tui.grader.candidates.scratch`), so concurrent rounds never
share them. The grader runs as ``<interpreter> -I -c <boot> ...`` with its own folder as
cwd; before anything else it runs ``lockdown`` (grader folders private, the private
interpreter hidden, world-writable paths of the image closed) and the host checks the
capability set it reports. The interpreter is the image's private
``/opt/srb/python/bin/python3`` when present, else the first ``python3`` on the PATH. Memory
and CPUs are the verifier's; a task that declares root grading has that recorded per stage
in ``runs.extra.grading``. Paths, limits, mounts and who grades are :mod:`.stage_layout`'s.
The container is removed when the stage ends.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from srb_tui import grader as grader_package
from srb_tui.grader.boundary.exec_broker import STUB
from srb_tui.grader.boundary.launch import script_text
from srb_tui.grader.boundary.sandbox import TMP_GROUP_OFFSET
from srb_tui.grader.boundary.submission import LIBRARY_DIR, library_text
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
from srb_tui.runner.exec_session import exec_streamed
from srb_tui.runner.files import put_files, put_readonly_tree, put_symlink
from srb_tui.schema import Task
from srb_tui.service.events import Progress
from srb_tui.store import Store, StoreError, utc_now

from .base import Publish, StageFault, note_run_extra, tests_dir
from .exec_stub import StubUnavailable, stub_binary
from .stage_layout import (
    GRADER_HOME,
    GRADER_MODULE,
    MIB,
    ORIGINAL_DIR,
    PRIVATE_PYTHON,
    PUBLISHED_ORIGINAL,
    SCRATCH,
    SLOT_NPROC,
    STAGE_PIDS,
    SUBMISSION_DIR,
    SUBMISSION_SOURCE,
    TESTS_DIR,
    StageLayout,
    boundary_wanted,
    container_path,
    draw_uid_base,
    grading_user,
    stage_mounts,
    task_cpus,
    task_resources,
)

GRADER_SOURCE = Path(grader_package.__file__).resolve().parent
GRADER_CAPS = ("SETUID", "SETGID", "KILL", "SYS_PTRACE")
GRADER_CAP_MASK = (1 << 5) | (1 << 6) | (1 << 7) | (1 << 19)  # KILL, SETGID, SETUID, SYS_PTRACE
BOOT = (
    "import sys; sys.path.insert(0, '/opt/srb'); "
    "from srb_grader.cli import main; sys.exit(main(sys.argv[1:]))"
)


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
        if self.layout.candidate_tmp:
            self.grading["candidate_boundary"] = (
                "candidates as their own uid, programs as the slot uid (exec broker)"
                if boundary_wanted() else "off: SRB_STAGE3_BOUNDARY=off (one uid for both)"
            )
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
                if self.store is not None:  # replaced: its row says so
                    with contextlib.suppress(StoreError):
                        await self.store.infra.mark_container_removed(old.handle.id)
        self.handle = await create(self.engine, self.spec)
        if self.store is not None:
            await self.store.infra.record_container(
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
            await self._put_stub()
            await start(self.engine, self.handle)
            self.python = await self._interpreter()
            if self.alias_python and self.python != PRIVATE_PYTHON:
                # Suites written for an image with a private interpreter run here too.
                await put_symlink(self.engine, self.handle, PRIVATE_PYTHON, self.python)
            await put_files(
                self.engine, self.handle, f"{GRADER_HOME}/bin",
                {"srb-submission": script_text(self.python).encode()}, uid=0, gid=0, mode=0o700,
            )
            await put_files(
                self.engine, self.handle, LIBRARY_DIR,
                {"srb_submission.py": library_text().encode()}, uid=0, gid=0, mode=0o600,
            )
            await self._lockdown()
            if self.layout.candidate_tmp:
                await self._candidate_tmp()
        except BaseException:
            await self._remove()
            raise
        return self

    async def _put_stub(self) -> None:
        """The exec stub at /@ (every stage: its presence says nothing about the stage)."""
        try:
            stub = stub_binary()
        except (StubUnavailable, OSError) as exc:
            if self.layout.candidate_tmp or self.layout.workspace:
                raise StageFault(f"{self.role}: {exc}") from None
            return  # Stage I does not use it
        await put_files(self.engine, self.h, "/srb", {"exec-stub": stub}, uid=0, gid=0, mode=0o755)
        await put_symlink(self.engine, self.h, STUB, "/srb/exec-stub")

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
                await self.store.infra.update_container(handle.id, removed_at=utc_now())

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
                f"{effective:#x}; srb needs uid 0 with exactly SETUID, SETGID, KILL and "
                "SYS_PTRACE"
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

    async def grader_streamed(
        self,
        args: Sequence[str],
        *,
        timeout_sec: float,
        on_line: Callable[[bytes], None],
    ) -> ExecResult:
        """:meth:`grader`, each line the grader prints handed to ``on_line`` as it comes
        (its stdout is not kept; its stderr's tail is)."""
        try:
            return await exec_streamed(
                self.engine, self.h, self.grader_argv(args), timeout_sec=timeout_sec,
                on_line=on_line, workdir=GRADER_HOME,
            )
        except ContainerError as err:
            raise StageFault(f"{self.role}: grader exec failed: {err}") from err
