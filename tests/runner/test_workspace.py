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
