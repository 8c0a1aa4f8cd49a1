"""Recording a run's provenance (:mod:`srb_tui.store.provenance`): at launch, then a stamp at
each stage.

:func:`launch_record` is the whole record as the launch knows it (srb's version and source
commit, the grader fingerprint, the task's digest, the agent's client and models); :func:`stamp`
adds one stage's stamp and refreshes what may have changed since (images by role, node, the
real client's installed version, the task digest as the drive loaded it). A failing stamp
never stops a run: provenance is a record, not a gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path

from srb_tui import __version__
from srb_tui.grader.fingerprint import fingerprint, walk_files
from srb_tui.schema import Task
from srb_tui.service.source_commit import SOURCE_DIR
from srb_tui.service.source_commit import source_commit as read_source_commit
from srb_tui.store import RunRecord, Store, utc_now
from srb_tui.store.provenance import (
    NOT_A_CHECKOUT,
    ImageUse,
    ModelRole,
    Provenance,
    StageStamp,
    stamp_changes,
)
from srb_tui.store.run_extra import LOCAL_NODE, ClientRecord, read_node

_SKIP_PARTS = frozenset({"__pycache__", ".git", ".pytest_cache", ".ruff_cache"})


def source_commit(root: Path = SOURCE_DIR) -> str:
    """The git commit srb's source was checked out at (``+dirty`` when tracked files
    changed), else ``not a git checkout`` (an installed wheel, no git); read once a process
    (:mod:`.source_commit`, which ``srb run`` starts reading early)."""
    return read_source_commit(root) or NOT_A_CHECKOUT


def task_digest(task_dir: Path) -> str:
    """``sha256:`` over the task directory as it is on disk: every file (caches and VCS
    folders aside) by relative path, size and bytes, in path order.

    A launch digests its task twice before the agent starts (the launch record, the
    ``preparing`` stamp). The second time the files are not read again when every one of
    them is the same file as the first time, by the same name: same inode, size,
    modification and change times (``st_ctime_ns``, which no write leaves as it was);
    any other difference, a file more or less included, reads them all."""
    files = _task_files(task_dir)
    key = os.path.abspath(task_dir)
    signature = tuple((rel, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                      for rel, _, st in files)  # taken before the files are read
    with _digests_lock:
        kept = _digests.get(key)
    if kept is not None and kept[0] == signature:
        return kept[1]
    digest = hashlib.sha256()
    for rel, path, _ in files:
        with open(path, "rb") as fh:
            data = fh.read()
        digest.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    found = "sha256:" + digest.hexdigest()
    with _digests_lock:
        _digests[key] = (signature, found)
        _digests.move_to_end(key)
        while len(_digests) > _KEEP_DIGESTS:
            _digests.popitem(last=False)
    return found


_KEEP_DIGESTS = 16
_digests: OrderedDict[str, tuple[tuple[tuple[str, int, int, int, int], ...], str]] = \
    OrderedDict()
_digests_lock = threading.Lock()


def _task_files(task_dir: Path) -> list[tuple[str, str, os.stat_result]]:
    """(relative posix path, path, its stat) of every file under ``task_dir``, sorted, none
    under a cache or VCS folder (:func:`walk_files`: the launch digests the task twice
    before the agent starts, and ``rglob`` took twice the time of reading and hashing)."""
    return [(rel, entry.path, entry.stat()) for rel, entry in walk_files(task_dir, _SKIP_PARTS)]


def _effort(options: object) -> str:
    if not hasattr(options, "get"):
        return ""
    value = options.get("effort") or options.get("reasoning_effort")
    return str(value) if value else ""


def model_roles(task: Task) -> tuple[ModelRole | None, tuple[ModelRole, ...]]:
    """The Stage I reviewer (None: no audit stage) and every Stage III adversary, with the
    model, effort and driver the task gives them."""
    reviewer = None
    if task.evaluation is not None and task.evaluation.audit.enabled:
        opts = task.evaluation.audit.options
        reviewer = ModelRole("reviewer", str(opts.get("model") or ""), _effort(opts),
                             str(opts.get("driver") or task.evaluation.audit.runner))
    adversaries = tuple(
        ModelRole(a.id, a.model, _effort(a.driver_options) or _effort(a.metadata), a.driver)
        for a in (task.probe.adversaries if task.probe is not None else ()))
    return reviewer, adversaries


def launch_record(run: RunRecord, task: Task, *, client: str, client_version: str,
                  backend: str) -> Provenance:
    """The provenance of a run as its launch knows it (no stage stamp yet)."""
    reviewer, adversaries = model_roles(task)
    return Provenance(
        srb_version=__version__, source_commit=source_commit(),
        grader_fingerprint=fingerprint(), task_digest=task_digest(task.dir),
        client=client, client_version=client_version,
        agent=ModelRole("agent", run.model or "", run.effort or "", run.agent),
        reviewer=reviewer, adversaries=adversaries, backend=backend,
        node=read_node(run.extra) or LOCAL_NODE,
    )


async def record_launch(store: Store, run: RunRecord, task: Task, *, client: str | None,
                        client_version: str | None, backend: str) -> None:
    """Write the launch record and its ``launch`` stamp (one transaction). ``client``: a
    real client's kind, whose pinned version is resolved as the run will (the launch
    option, the task's pin, srb's); None: a built-in agent, named by its kind at srb's
    version."""
    if client is not None:
        from srb_tui.agents.clients import resolve_pin  # a real client's pins

        version = resolve_pin(client, task.manifest.agent.harness, client_version).version
    else:
        client, version = run.agent.split(":", 1)[0], __version__
    record = launch_record(run, task, client=client, client_version=version,
                           backend=backend)
    stamp_ = StageStamp(utc_now(), {}, record.node, record.grader_fingerprint,
                        record.task_digest)
    await store.runs.merge_extra(run.id, into=stamp_changes("launch", stamp_, record.to_json()))


async def stamp(store: Store, run_id: str, stage: str, *, task_dir: Path | None = None) -> None:
    """Stamp ``stage`` on the run: the images recorded so far, the node, the grader
    fingerprint, the installed client (once known) and, given ``task_dir``, the task's
    digest as loaded now. Runs without a launch record (older runs) are left alone."""
    with contextlib.suppress(Exception):
        run = await store.runs.require_run(run_id)
        if Provenance.read(run.extra) is None:
            return
        images = {i.role: ImageUse(i.tag, i.image_id or "", i.digest or "")
                  for i in await store.infra.images(run_id)}
        node = read_node(run.extra) or LOCAL_NODE
        updates: dict[str, object] = {
            "images": {role: img.to_json() for role, img in sorted(images.items())},
            "node": node, "grader_fingerprint": fingerprint(),
        }
        digest = ""
        if task_dir is not None:
            digest = await asyncio.to_thread(task_digest, task_dir)
            updates["task_digest"] = digest
        installed = ClientRecord.read(run.extra)
        if installed is not None:
            updates["client"], updates["client_version"] = installed.name, installed.version
        stamp_ = StageStamp(utc_now(), {r: i.ident for r, i in sorted(images.items())},
                            node, fingerprint(), digest)
        await store.runs.merge_extra(run_id, into=stamp_changes(stage, stamp_, updates))
