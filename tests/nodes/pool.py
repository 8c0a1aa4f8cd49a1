"""Helpers of the pool tests and the bench: a pool config over DinD nodes, srb's containers
on a node, the score of each demo submission."""

from __future__ import annotations

from pathlib import Path

from tests.nodes import dind


def write_pool_config(state: Path, hosts: list[str], *, cpus: float | None = None) -> None:
    """``state/config.toml`` with ``kind = "engines"`` over ``hosts`` (n1, n2, ...)."""
    state.mkdir(parents=True, exist_ok=True)
    extra = f"cpus = {cpus}\n" if cpus is not None else ""
    (state / "config.toml").write_text(
        '[backend]\nkind = "engines"\n\n' + "".join(
            f'[engines.n{i + 1}]\nurl = "{h}"\n{extra}\n' for i, h in enumerate(hosts)))


def srb_containers(host: str) -> list[str]:
    """Every container with srb's run label on the engine at ``host`` (running or not)."""
    out = dind.docker("ps", "-a", "--filter", "label=srb.run", "--format", "{{.Names}}",
                      host=host, check=False, timeout=30)
    return out.stdout.decode().split()


def srb_workspace_images(host: str) -> list[str]:
    out = dind.docker("images", "--format", "{{.Repository}}:{{.Tag}}", host=host,
                      check=False, timeout=30)
    return [i for i in out.stdout.decode().split() if i.startswith("srb-workspace")]


def write_swarm_config(state: Path, manager: str) -> None:
    """``state/config.toml`` with ``kind = "swarm"`` over the manager at ``manager``."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.toml").write_text(
        f'[backend]\nkind = "swarm"\nmanager = "{manager}"\nengine_port = {dind.NODE_PORT}\n')
