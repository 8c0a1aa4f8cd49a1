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
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.runner.containers import create, put_tree, remove
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.images import inspect_image
from srb_tui.runner.spec import REPO_DIR, ContainerSpec

WORKSPACE_REPO = "srb-workspace"
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
    dest: str = REPO_DIR, uid: int, gid: int,
) -> WorkspaceImage:
    """``base_image`` with ``tree`` at ``dest`` owned by ``uid:gid`` (made on first need)."""
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
    spec = ContainerSpec(image=str(base["Id"]), run_id=f"workspace-{secrets.token_hex(6)}",
                         role="workspace", user=f"{uid}:{gid}", workdir=dest,
                         labels={LABEL_WORKSPACE: key})
    handle = await create(engine, spec)
    try:
        await put_tree(engine, handle, tree, dest=dest, uid=uid, gid=gid)
        api = None if engine.wire is not None else await engine.api()
        image_id = await engine.call(_commit, engine, api, handle.id, tag)
    finally:
        await remove(engine, handle)
    return WorkspaceImage(tag=tag, id=image_id, key=key, made=True)
