"""Where things are in a stage container and how big its writable mounts are.

The container paths every stage and the grader agree on (State A at ``/srb/original``,
linked at ``/opt/original`` where the published images read it; the submission at
``/workspace/repo``, or at ``/srb/submission`` for Stage II's private copy; the stage's
build context under ``/tests``; the grader's results under ``/srb/grader``; Stage III's
slot views under ``/srb/stage`` and candidates under ``/srb/cand``), the verifier's limits
(memory and CPUs from ``[verifier.environment]``, CPUs capped at the host's), who grades
(:func:`grading_user`), and the layout of one container's identities and tmpfs mounts
(:class:`StageLayout`, :func:`stage_mounts`): everything submission code may write is one
of those size-limited mounts. :mod:`.stage_container` starts containers this way.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from srb_tui.grader.boundary.sandbox import MAX_SLOTS, TMP_GROUP_OFFSET
from srb_tui.grader.contract import slot_uid
from srb_tui.schema import Task

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

MIB = 1024**2
DEFAULT_MEMORY_MB = 4096
DEFAULT_CPUS = 2.0
DEFAULT_STORAGE_MB = 4096
STAGE_PIDS = 4096
SLOT_NPROC = 512


def boundary_wanted() -> bool:
    """False only when ``SRB_STAGE3_BOUNDARY=off`` (a measurement knob, recorded per run)."""
    return os.environ.get("SRB_STAGE3_BOUNDARY", "on").strip().lower() != "off"


def container_path(rel: str) -> str:
    """A path relative to ``tests/`` as the stage container sees it."""
    return f"{TESTS_DIR}/{rel.strip('/')}"


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
    shares += 1 if layout.workspace else 0
    each = max(16, budget // max(1, shares))
    if layout.workspace:
        # Stage II's $SRB_WORK / $SRB_SUITE_WORK: the programs a module starts (a build's
        # install prefix) write there as the slot, so it is sized like the rest.
        mounts[SHARED_WORK] = f"size={each}m,mode=0755,uid=0,gid=0,exec"
    scratch_mode = "0770" if layout.candidate_tmp else "0700"  # group: the slot's own gid
    for slot in range(layout.slots):
        uid = slot_uid(uid_base, slot)
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
