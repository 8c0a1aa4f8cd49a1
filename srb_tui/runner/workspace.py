"""An agent's starting image: the task's environment image with State A already in it.

Copying State A into a created container costs the engine an archive extraction (a
helper process and a mount) on every launch. A tree the cache has sealed does not
change, so it is copied once per (environment image, tree content, destination, owner)
into a container that is committed as ``srb-workspace:<key>`` and removed; an agent
container created from that image starts with exactly the files, modes and ownership
the copy would have given it. The key hashes the environment image's id, the tree's
content digest, the destination and the uid/gid, so a rebuilt environment or another
State A is another image; the image carries the key as label ``srb.workspace`` and is
used only when the label agrees.

The image also carries ``srb.store`` of the store whose launch made it (any store may start
from it: the key says nothing about stores). ``srb gc`` (:func:`prune_workspaces`) removes
the workspace images of its own store, and unlabelled ones made before images carried the
label, that no container on the engine uses (of any store, running or not) and that no
live run of its store recorded; another store's images are left alone, as its containers
are. The engine itself refuses to remove an image a container made meanwhile uses.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import ContainerHandle, create, put_tree, remove
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.images import inspect_image
from srb_tui.runner.spec import LABEL_STORE, REPO_DIR, ContainerSpec

WORKSPACE_REPO = "srb-workspace"
BUILDER_ROLE = "workspace"
LABEL_WORKSPACE = "srb.workspace"
FORMAT = "1"  # bump when what a copy puts in the container changes


@dataclass(frozen=True)
class WorkspaceImage:
    """The image an agent container starts from, and whether it was made just now."""

    tag: str
    id: str
    key: str
    made: bool


def workspace_key(base_id: str, tree_digest: str, dest: str, uid: int, gid: int) -> str:
    parts = (FORMAT, base_id, tree_digest, dest, str(uid), str(gid))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _commit(engine: DockerEngine, api: Any, cid: str, tag: str) -> str:
    repo, _, name = tag.partition(":")
    if engine.wire is not None:
        made = engine.wire.json("POST", "/commit", query={
            "container": cid, "repo": repo, "tag": name, "pause": "false"})
        return str(made["Id"])
    return str(api.commit(cid, repository=repo, tag=name)["Id"])


async def workspace_image(
    engine: DockerEngine, base_image: str, tree: Path, tree_digest: str, *,
    dest: str = REPO_DIR, uid: int, gid: int, store_tag: str | None = None,
    for_run: str | None = None,
) -> WorkspaceImage:
    """``base_image`` with ``tree`` at ``dest`` owned by ``uid:gid`` (made on first need,
    labelled ``srb.store=<store_tag>`` when given). The builder container is the run's
    (``for_run``: named and labelled for it, so a reap of a finished run or a cancel takes
    it, and one a dead srb left is removed here, the run's driver lease being the caller's)."""
    base = await inspect_image(engine, base_image)
    if base is None:
        raise ContainerError(f"image {base_image!r} not found; build it first")
    key = workspace_key(str(base["Id"]), tree_digest, dest, uid, gid)
    tag = f"{WORKSPACE_REPO}:{key[:40]}"
    found = await inspect_image(engine, tag)
    if found is not None and ((found.get("Config") or {}).get("Labels") or {}).get(
            LABEL_WORKSPACE) == key:
        return WorkspaceImage(tag=tag, id=str(found["Id"]), key=key, made=False)
    # The image's own command, entrypoint and environment are kept (no command given);
    # the run, role and managed labels are overwritten by every container made from it.
    spec = ContainerSpec(image=str(base["Id"]),
                         run_id=for_run or f"workspace-{secrets.token_hex(6)}",
                         role=BUILDER_ROLE, user=f"{uid}:{gid}", workdir=dest,
                         labels={LABEL_WORKSPACE: key,
                                 **({LABEL_STORE: store_tag} if store_tag else {})})
    if for_run is not None:  # a builder a killed srb left for this run: gone already is fine
        await remove(engine, ContainerHandle(id=spec.name, name=spec.name, run_id=for_run,
                                             role=BUILDER_ROLE))
    handle = await create(engine, spec)
    try:
        await put_tree(engine, handle, tree, dest=dest, uid=uid, gid=gid)
        api = None if engine.wire is not None else await engine.api()
        image_id = await engine.call(_commit, engine, api, handle.id, tag)
    finally:
        await remove(engine, handle)
    return WorkspaceImage(tag=tag, id=image_id, key=key, made=True)


@dataclass(frozen=True)
class WorkspacePrune:
    """What :func:`prune_workspaces` did: the images removed (tags, else ids), the bytes
    of their own layers, and how many it kept because a container or a live run uses them
    or another store made them."""

    removed: tuple[str, ...] = ()
    bytes_reclaimed: int = 0
    in_use_kept: int = 0
    foreign_kept: int = 0


def _own_layer_bytes(api: Any, image_id: str) -> int:
    """The size of the layer the commit added (the newest history entry): what removing
    the image frees; the environment image's layers stay."""
    try:
        history = api.history(image_id)
    except sdk.NotFound:
        return 0
    return int((history[0] if history else {}).get("Size") or 0)


def _listed(api: Any, store_tag: str) -> tuple[list[dict[str, Any]], set[str], int]:
    """This store's (and unlabelled) workspace images, the ids containers use, and how
    many workspace images are another store's."""
    used = {str(c.get("ImageID")) for c in api.containers(all=True)}
    mine: list[dict[str, Any]] = []
    foreign = 0
    for row in api.images(filters={"label": LABEL_WORKSPACE}):
        owner = (row.get("Labels") or {}).get(LABEL_STORE)
        if owner is not None and owner != store_tag:
            foreign += 1
        else:
            mine.append(row)
    return mine, used, foreign


def _prune(api: Any, rows: list[dict[str, Any]], used: set[str], keep_ids: Collection[str],
           foreign: int) -> WorkspacePrune:
    removed: list[str] = []
    reclaimed = in_use = 0
    for row in rows:
        image_id = str(row["Id"])
        if image_id in used or image_id in keep_ids:
            in_use += 1
            continue
        size = _own_layer_bytes(api, image_id)
        tags = [t for t in row.get("RepoTags") or [] if t != "<none>:<none>"]
        try:
            api.remove_image(image_id)
        except sdk.NotFound:
            continue  # removed meanwhile
        except sdk.APIError:
            in_use += 1  # a container made meanwhile uses it (the engine refuses)
            continue
        removed.append(tags[0] if tags else image_id)
        reclaimed += size
    return WorkspacePrune(tuple(removed), reclaimed, in_use, foreign)


async def prune_workspaces(
    engine: DockerEngine, *, store_tag: str,
    keep_ids: Collection[str] | Callable[[], Awaitable[Collection[str]]] = (),
) -> WorkspacePrune:
    """Remove this store's (and unlabelled) ``srb-workspace`` images that no container on
    the engine uses and whose id is not in ``keep_ids`` (the live runs' recorded images;
    a call is read after the images are listed, so that a run recorded meanwhile keeps
    its image). A run that still loses its image between finding it and making its
    container makes it again (:meth:`.AgentPhase.start_builtin`)."""
    api = await engine.api()
    rows, used, foreign = await engine.call(_listed, api, store_tag)
    keep = set(await keep_ids() if callable(keep_ids) else keep_ids)
    return await engine.call(_prune, api, rows, used, keep, foreign)
