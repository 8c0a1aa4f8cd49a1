"""The DinD node fixture itself: nodes answer, take images, form a Swarm, share a registry.

The lean default-tier case makes one node; the three-node cases run under SRB_MULTINODE=1.
"""

from __future__ import annotations

from tests.nodes import dind
from tests.nodes.conftest import multinode


def test_one_node_runs_a_container_and_leaves_nothing(dind_node: dind.Node) -> None:
    dind.load_image(dind_node, dind.BASE_IMAGE)
    out = dind.docker("run", "--rm", "--network", "none", dind.BASE_IMAGE, "cat",
                      "/etc/hostname", host=dind_node.docker_host)
    assert out.stdout.strip()
    # The node's engine is its own: the test engine's containers are not listed there.
    names = dind.docker("ps", "-a", "--format", "{{.Names}}", host=dind_node.docker_host)
    assert dind_node.name.encode() not in names.stdout


@multinode
def test_cluster_teardown_and_kill() -> None:
    with dind.cluster(1, prefix="srbtk") as made:
        node = made.nodes[0]
        dind.kill_node(node)
        gone = dind.docker("version", host=node.docker_host, check=False, timeout=10)
        assert gone.returncode != 0
        name = node.name
    assert not [x for x in dind.leftovers() if name in x or made.network in x]


@multinode
def test_swarm_job_runs_on_every_node(dind_nodes: dind.Cluster, dind_swarm: str) -> None:
    dind.load_images(dind_nodes, [dind.BASE_IMAGE])
    k = len(dind_nodes.nodes)
    dind.docker("service", "create", "--name", "srbt-job", "--mode",
                "replicated-job", "--replicas", str(k), "--max-concurrent", str(k),
                "--reserve-cpu", "0.1", "--restart-condition", "none",
                "--constraint", "node.role!=none", "--placement-pref", "spread=node.id",
                dind.BASE_IMAGE, "true", host=dind_swarm, timeout=300)
    try:
        fmt = "{{.Node}} {{.CurrentState}}"
        rows = dind.docker("service", "ps", "srbt-job", "--format", fmt,
                           host=dind_swarm).stdout.decode().splitlines()
        assert len(rows) == k
        assert all("Complete" in r for r in rows), rows
        assert len({r.split()[0] for r in rows}) == k, rows  # one task on each node
    finally:
        dind.docker("service", "rm", "srbt-job", host=dind_swarm, check=False)


@multinode
def test_registry_shares_an_image(dind_nodes: dind.Cluster, dind_registry: str) -> None:
    ref = dind.push_via_node(dind_nodes, dind.BASE_IMAGE, dind_nodes.nodes[0])
    other = dind_nodes.nodes[-1]
    dind.docker("pull", "-q", ref, host=other.docker_host, timeout=300)
    out = dind.docker("run", "--rm", "--network", "none", ref, "true", host=other.docker_host)
    assert out.returncode == 0
