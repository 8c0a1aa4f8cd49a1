"""Fixtures over :mod:`tests.nodes.dind`: K Docker-in-Docker nodes on a network of their own.

``dind_nodes`` (session) makes ``SRB_NODES`` nodes (default 3) once; tests that want another
count use :func:`tests.nodes.dind.cluster` directly. ``dind_swarm`` joins them as a Swarm,
``dind_registry`` adds a local registry. Slow multi-node cases are marked with
:data:`multinode` and run only under ``SRB_MULTINODE=1``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.nodes import dind

NODES_K = int(os.environ.get("SRB_NODES", "3"))

multinode = pytest.mark.skipif(
    os.environ.get("SRB_MULTINODE") != "1",
    reason="multi-node case: set SRB_MULTINODE=1 (makes Docker-in-Docker nodes, slow)",
)


def _need_docker() -> None:
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI")
    if dind.docker("version", check=False, timeout=20).returncode != 0:
        pytest.skip("no Docker engine in DOCKER_HOST")


@pytest.fixture(scope="session")
def dind_nodes() -> Iterator[dind.Cluster]:
    """``SRB_NODES`` (default 3) DinD nodes, removed with their network at the session's end."""
    _need_docker()
    made = dind.make_cluster(NODES_K)
    try:
        yield made
    finally:
        dind.remove_cluster(made)
        left = dind.leftovers(made)
        assert not left, f"test nodes left behind: {left}"


@pytest.fixture(scope="session")
def dind_node() -> Iterator[dind.Node]:
    """One DinD node of its own (for single-remote-engine tests), removed at the end."""
    _need_docker()
    made = dind.make_cluster(1, prefix="srbt1")
    try:
        yield made.nodes[0]
    finally:
        dind.remove_cluster(made)
        left = dind.leftovers(made)
        assert not left, f"test node left behind: {left}"


@pytest.fixture(scope="session")
def dind_swarm(dind_nodes: dind.Cluster) -> str:
    """The session's nodes joined as a Swarm; the manager's ``DOCKER_HOST``."""
    return dind.join_swarm(dind_nodes)


@pytest.fixture(scope="session")
def dind_registry(dind_nodes: dind.Cluster) -> str:
    """A local registry (Debian's docker-registry) on the nodes' network: its ``ip:5000``."""
    return dind.start_registry(dind_nodes)
