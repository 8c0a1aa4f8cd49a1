"""The workspace image: State A committed once onto the environment image, so an agent
container starts with the tree instead of receiving an archive copy on every launch."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from srb_tui.runner import DockerEngine, exec_run, start, workspace_image
from srb_tui.runner.workspace import LABEL_WORKSPACE
from tests.runner.conftest import BASE_IMAGE, MakeContainer

pytestmark = pytest.mark.docker


def _tree(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "util.py").write_text("x = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (root / "run.sh").chmod(0o755)
    return root


def _containers(label: str) -> list[str]:
    return subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"],
                          check=True, capture_output=True, text=True).stdout.split()


async def test_made_once_then_reused_and_starts_with_the_tree_owned_by_the_agent(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    tree = _tree(tmp_path / "tree")
    digest = f"test-{uuid.uuid4().hex}"
    tags: list[str] = []
    try:
        first = await workspace_image(engine, BASE_IMAGE, tree, digest, uid=1000, gid=1000)
        tags.append(first.tag)
        again = await workspace_image(engine, BASE_IMAGE, tree, digest, uid=1000, gid=1000)
        other = await workspace_image(engine, BASE_IMAGE, tree, digest + "-other",
                                      uid=1000, gid=1000)
        tags.append(other.tag)
        assert first.made and not again.made and other.made
        assert (again.tag, again.id) == (first.tag, first.id)
        assert other.tag != first.tag and other.key != first.key
        # the container the copy was made in is gone
        assert _containers(f"{LABEL_WORKSPACE}={first.key}") == []

        handle, spec = await make_container(image=first.tag, command=("sleep", "infinity"))
        await start(engine, handle)
        ls = await exec_run(engine, handle, [
            "bash", "-c", "stat -c '%u:%g %a %n' /workspace /workspace/repo "
            "/workspace/repo/lib/util.py /workspace/repo/run.sh && ./run.sh && touch new "
            "&& echo $HOME && id -u"])
        assert ls.exit_code == 0, ls.stderr
        assert ls.stdout.decode().split("\n") == [
            "1000:1000 755 /workspace",
            "1000:1000 755 /workspace/repo",
            "1000:1000 644 /workspace/repo/lib/util.py",
            "1000:1000 755 /workspace/repo/run.sh",
            "ran", "/workspace", "1000", "",
        ]
        # the container's own labels win over the ones the image was committed with
        inspect = subprocess.run(
            ["docker", "inspect", "-f",
             '{{index .Config.Labels "srb.run"}} {{index .Config.Labels "srb.role"}} '
             f'{{{{index .Config.Labels "{LABEL_WORKSPACE}"}}}}', handle.id],
            check=True, capture_output=True, text=True).stdout.split()
        assert inspect == [spec.run_id, "agent", first.key]
    finally:
        subprocess.run(["docker", "rmi", "-f", *tags], check=False, capture_output=True)


async def test_an_image_the_engine_lacks_is_named(engine: DockerEngine, tmp_path: Path) -> None:
    from srb_tui.runner import ContainerError

    with pytest.raises(ContainerError, match="no-such/image:x"):
        await workspace_image(engine, "no-such/image:x", _tree(tmp_path / "t"), "d",
                              uid=1000, gid=1000)



async def test_a_builder_a_killed_srb_left_for_the_run_is_replaced(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    """The builder is the run's (``srb-RUN-workspace``): one a dead srb left mid-build (on a
    node after a SIGKILL mid-campaign) is removed when the run's driver builds again, and
    the new builder is gone once the image is committed."""
    from tests.runner.conftest import new_run_id

    run_id = new_run_id()
    left, _ = await make_container(command=("true",), run_id=run_id, role="workspace")
    assert left.name == f"srb-{run_id}-workspace"
    made = await workspace_image(engine, BASE_IMAGE, _tree(tmp_path / "t"),
                                 f"test-{uuid.uuid4().hex}", uid=1000, gid=1000, for_run=run_id)
    try:
        assert made.made
        assert _containers(f"srb.run={run_id}") == []  # the leftover and the new one: gone
    finally:
        subprocess.run(["docker", "rmi", "-f", made.tag], check=False, capture_output=True)


def _image_size(ref: str) -> int:
    return int(subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", ref],
                              check=True, capture_output=True, text=True).stdout)


def _image_exists(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref],
                          capture_output=True).returncode == 0


async def test_gc_removes_the_workspace_images_nothing_uses(
    engine: DockerEngine, tmp_path: Path
) -> None:
    """``gc`` of store ``mine`` removes its unused workspace images and unlabelled ones;
    it keeps one a live run's container uses, one a live run recorded (``keep_image_ids``)
    and another store's; once the run is over, its container and image go too."""
    from srb_tui.runner import gc

    mine, other = f"test-{uuid.uuid4().hex[:10]}", f"test-{uuid.uuid4().hex[:10]}"
    digest = f"test-{uuid.uuid4().hex}"
    made = {}
    for name, store in (("unused", mine), ("unlabelled", None), ("used", mine),
                        ("recorded", mine), ("foreign", other)):
        tree = _tree(tmp_path / name)  # a State A of its own: a layer of its own
        (tree / "which").write_text(f"{name} {digest}\n" * 2000)
        made[name] = await workspace_image(engine, BASE_IMAGE, tree, f"{digest}-{name}",
                                           uid=1000, gid=1000, store_tag=store)
    tags = [m.tag for m in made.values()]
    # a live run's agent container (a container inherits the image's labels; its own win)
    live = f"rt-live-{uuid.uuid4().hex[:8]}"
    user = subprocess.run(["docker", "create", "--label", f"srb.run={live}", "--label",
                           "srb.role=agent", made["used"].tag, "true"], check=True,
                          capture_output=True, text=True).stdout.strip()
    try:
        labels = subprocess.run(
            ["docker", "image", "inspect", "-f", '{{index .Config.Labels "srb.store"}}',
             made["foreign"].tag, made["unlabelled"].tag],
            check=True, capture_output=True, text=True).stdout.split("\n")
        assert labels[:2] == [other, ""]
        base = _image_size(BASE_IMAGE)
        expected = sum(_image_size(made[n].tag) - base for n in ("unused", "unlabelled"))
        assert expected > 0

        report = await gc(engine, {live}, store_tag=mine, keep_image_ids={made["recorded"].id})
        assert report.containers_removed == 0  # the live run's container stays
        removed = set(report.workspace_images_removed)
        assert {made["unused"].tag, made["unlabelled"].tag} <= removed
        assert not removed & {made[n].tag for n in ("used", "recorded", "foreign")}
        assert report.workspace_bytes_reclaimed >= expected
        assert report.workspace_images_kept >= 3
        assert not _image_exists(made["unused"].tag) and not _image_exists(made["unlabelled"].tag)
        assert all(_image_exists(made[n].tag) for n in ("used", "recorded", "foreign"))

        # the run is over: gc reaps its container, then nothing uses the image
        again = await gc(engine, (), store_tag=mine)
        assert again.containers_removed == 1
        assert {made["used"].tag, made["recorded"].tag} <= set(again.workspace_images_removed)
        assert made["foreign"].tag not in again.workspace_images_removed
        assert _image_exists(made["foreign"].tag)
    finally:
        subprocess.run(["docker", "rm", "-f", user], check=False, capture_output=True)
        subprocess.run(["docker", "rmi", "-f", *tags], check=False, capture_output=True)
