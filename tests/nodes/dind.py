"""Docker-in-Docker nodes on the test's engine: a small multi-machine setup on one machine.

Each node is a container of the node image (srb's base image plus Debian's ``docker.io``)
whose own ``dockerd`` listens on ``unix:///var/run/docker.sock`` and on ``tcp://0.0.0.0:2375``.
The nodes sit on a bridge network made for them; srb's host (the test process) reaches each
node's engine at ``tcp://<ip>:2375``, and traffic stays between the host and the nodes.

``--privileged`` is refused on these machines (see ``../shared/NODES.md``); :data:`NODE_FLAGS`
are the flags that work. The node image is built once per engine and cached by content
(its tag is a digest of the Dockerfile and the base image's id), so a second session reuses it.

Everything here is plain functions over the ``docker`` CLI of the engine in ``DOCKER_HOST``
(the test's engine), usable from a pytest fixture (``tests/nodes/conftest.py``) or a bench:

    with cluster(3) as c:
        load_image(c.nodes[0], "srb/base:bookworm")
        manager = join_swarm(c)
        kill_node(c.nodes[2])

Every container, network and volume made here carries the label ``srb.test-node=1`` and
:func:`remove_cluster` removes them all; :func:`leftovers` lists any that remain.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

BASE_IMAGE = os.environ.get("SRB_BASE_IMAGE", "srb/base:bookworm")
NODE_REPO = "srb-test/node"
REGISTRY_REPO = "srb-test/registry"
LABEL = "srb.test-node"
NODE_PORT = 2375
REGISTRY_PORT = 5000
READY_TIMEOUT_SEC = 60.0

NODE_DOCKERFILE = """\
# A Docker-in-Docker test node: srb's base image and Debian's docker engine.
ARG BASE_IMAGE=srb/base:bookworm
FROM ${BASE_IMAGE}
USER root
RUN apt-get update \\
 && apt-get install -y --no-install-recommends docker.io iptables ca-certificates \\
 && rm -rf /var/lib/apt/lists/*
"""

REGISTRY_DOCKERFILE = """\
# A local image registry for the test nodes: Debian's docker-registry.
ARG BASE_IMAGE=srb/base:bookworm
FROM ${BASE_IMAGE}
USER root
RUN apt-get update \\
 && apt-get install -y --no-install-recommends docker-registry \\
 && rm -rf /var/lib/apt/lists/*
"""

REGISTRY_CONFIG = """\
version: 0.1
storage:
  filesystem:
    rootdirectory: /var/lib/docker-registry
http:
  addr: 0.0.0.0:5000
"""

# What replaces --privileged here (NODES.md): every capability but CAP_SYS_RESOURCE, no
# seccomp/apparmor confinement, the host's cgroup tree writable, the node's storage a tmpfs.
NODE_FLAGS: tuple[str, ...] = (
    "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
    "--security-opt", "seccomp=unconfined",
    "--security-opt", "apparmor=unconfined",
    "--security-opt", "systempaths=unconfined",
    "--cgroupns=host",
    "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
    "--tmpfs", "/var/lib/docker:exec",
)

# The nodes trust a registry on any private address over plain HTTP (the test registry).
DOCKERD_COMMAND: tuple[str, ...] = (
    "dockerd",
    "--host=unix:///var/run/docker.sock",
    f"--host=tcp://0.0.0.0:{NODE_PORT}",
    "--insecure-registry=10.0.0.0/8",
    "--insecure-registry=172.16.0.0/12",
    "--insecure-registry=192.168.0.0/16",
)


class NodeError(Exception):
    """A node, its network or its image could not be made (the message says which)."""


@dataclass(frozen=True)
class Node:
    """One DinD node: its container name on the test engine and its address on the network."""

    name: str
    ip: str

    @property
    def docker_host(self) -> str:
        """The value of ``DOCKER_HOST`` that reaches this node's engine from the host."""
        return f"tcp://{self.ip}:{NODE_PORT}"


@dataclass
class Cluster:
    """K nodes on one network; ``host_ip`` is the test host's address on that network."""

    network: str
    host_ip: str
    nodes: list[Node] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # other containers (the registry)
    registry: str | None = None  # "ip:5000" once start_registry ran

    @property
    def hosts(self) -> list[str]:
        return [n.docker_host for n in self.nodes]


def docker(*args: str, input: bytes | None = None, timeout: float = 120,
           host: str | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run the docker CLI against the test engine (or ``host``, a node's engine)."""
    env = dict(os.environ)
    if host is not None:
        env["DOCKER_HOST"] = host
    proc = subprocess.run(["docker", *args], input=input, capture_output=True,
                          timeout=timeout, env=env, check=False)
    if check and proc.returncode != 0:
        raise NodeError(f"docker {' '.join(args[:3])} ...: "
                        f"{proc.stderr.decode(errors='replace').strip()[-400:]}")
    return proc


def _out(*args: str, host: str | None = None, timeout: float = 120) -> str:
    return docker(*args, host=host, timeout=timeout).stdout.decode().strip()


def _image_id(image: str) -> str:
    proc = docker("image", "inspect", "--format", "{{.Id}}", image, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else ""


def _cached_build(repo: str, dockerfile: str, base_image: str = BASE_IMAGE) -> str:
    """Build ``dockerfile`` from ``base_image`` once; the tag is a digest of both."""
    base_id = _image_id(base_image)
    if not base_id:
        raise NodeError(f"the base image {base_image} is not on the test engine; "
                        "build it first (srb's own image build, or the session's cache)")
    digest = hashlib.sha256(f"{dockerfile}\0{base_id}".encode()).hexdigest()[:16]
    tag = f"{repo}:{digest}"
    if not _image_id(tag):
        docker("build", "--build-arg", f"BASE_IMAGE={base_image}", "-t", tag,
               "--label", f"{LABEL}=image", "-", input=dockerfile.encode(), timeout=900)
    return tag


def node_image(base_image: str = BASE_IMAGE) -> str:
    """The node image's tag, built now if this engine does not have it yet."""
    return _cached_build(NODE_REPO, NODE_DOCKERFILE, base_image)


def _container_ip(name: str, network: str) -> str:
    fmt = "{{json .NetworkSettings.Networks}}"
    nets = json.loads(_out("inspect", "--format", fmt, name))
    ip = str(nets.get(network, {}).get("IPAddress") or "")
    if not ip:
        raise NodeError(f"{name} has no address on {network}")
    return ip


def _gateway_ip(network: str) -> str:
    fmt = "{{range .IPAM.Config}}{{.Gateway}} {{end}}"
    for ip in _out("network", "inspect", "--format", fmt, network).split():
        if ":" not in ip:
            return ip
    raise NodeError(f"network {network} has no IPv4 gateway")


def wait_engine(node: Node, timeout: float = READY_TIMEOUT_SEC) -> None:
    """Poll, with a deadline, until the node's engine answers over TCP."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        proc = docker("version", "--format", "{{.Server.Version}}", host=node.docker_host,
                      check=False, timeout=10)
        if proc.returncode == 0:
            return
        last = proc.stderr.decode(errors="replace").strip()[-200:]
        time.sleep(0.2)
    logs = docker("logs", "--tail", "20", node.name, check=False).stderr.decode(errors="replace")
    raise NodeError(f"node {node.name}: engine not up in {timeout:g} s ({last}); logs: {logs}")


def make_cluster(k: int = 3, *, prefix: str = "srbt", base_image: str = BASE_IMAGE,
                 memory: str = "3g") -> Cluster:
    """Create a network and ``k`` nodes on it, each with its engine answering."""
    image = node_image(base_image)
    tag = uuid.uuid4().hex[:8]
    network = f"{prefix}-net-{tag}"
    docker("network", "create", "--label", f"{LABEL}=1", network)
    made = Cluster(network=network, host_ip=_gateway_ip(network))
    try:
        for i in range(1, k + 1):
            name = f"{prefix}-node{i}-{tag}"
            docker("run", "-d", "--name", name, "--hostname", f"node{i}",
                   "--label", f"{LABEL}=1", "--network", network, "--memory", memory,
                   *NODE_FLAGS, image, *DOCKERD_COMMAND)
            made.nodes.append(Node(name=name, ip=_container_ip(name, network)))
        for node in made.nodes:
            wait_engine(node)
    except BaseException:
        remove_cluster(made)
        raise
    return made


def remove_cluster(made: Cluster) -> None:
    """Remove every node (with its anonymous volumes), the registry and the network."""
    names = [n.name for n in made.nodes] + list(made.extra)
    if names:
        docker("rm", "-f", "-v", *names, check=False, timeout=120)
    docker("network", "rm", made.network, check=False)


@contextlib.contextmanager
def cluster(k: int = 3, **kwargs: str) -> Iterator[Cluster]:
    """:func:`make_cluster` for the length of a ``with`` block."""
    made = make_cluster(k, **kwargs)  # type: ignore[arg-type]
    try:
        yield made
    finally:
        remove_cluster(made)


def leftovers(of: Cluster | None = None) -> list[str]:
    """Containers, networks and volumes of test nodes still on the test engine; with
    ``of``, only that cluster's containers and network (another session cluster may still
    be in use when one is torn down)."""
    flt = f"label={LABEL}=1"
    found = _out("ps", "-a", "--filter", flt, "--format", "{{.Names}}").split()
    found += ["network:" + n for n in
              _out("network", "ls", "--filter", flt, "--format", "{{.Name}}").split()]
    if of is not None:
        mine = {n.name for n in of.nodes} | set(of.extra) | {"network:" + of.network}
        return [name for name in found if name in mine]
    found += ["volume:" + n for n in
              _out("volume", "ls", "--filter", flt, "--format", "{{.Name}}").split()]
    return found


def load_image(node: Node, image: str) -> None:
    """Copy ``image`` from the test engine into the node's engine (save | load, no registry)."""
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert save.stdout is not None
    load = subprocess.run(["docker", "exec", "-i", node.name, "docker", "load", "-q"],
                          stdin=save.stdout, capture_output=True, timeout=600, check=False)
    save.stdout.close()
    save_err = save.communicate(timeout=60)[1]
    if save.returncode != 0 or load.returncode != 0:
        raise NodeError(f"copying {image} to {node.name}: "
                        f"{(save_err + load.stderr).decode(errors='replace').strip()[-400:]}")


def load_images(made: Cluster, images: Sequence[str]) -> None:
    """:func:`load_image` of every image into every node."""
    for node in made.nodes:
        for image in images:
            load_image(node, image)


def join_swarm(made: Cluster) -> str:
    """Make node 1 a Swarm manager and the others workers; returns the manager's DOCKER_HOST."""
    first = made.nodes[0]
    docker("swarm", "init", "--advertise-addr", first.ip, host=first.docker_host)
    token = _out("swarm", "join-token", "-q", "worker", host=first.docker_host)
    for node in made.nodes[1:]:
        docker("swarm", "join", "--token", token, f"{first.ip}:2377", host=node.docker_host)
    want = len(made.nodes)
    deadline = time.monotonic() + READY_TIMEOUT_SEC
    while time.monotonic() < deadline:
        ready = _out("node", "ls", "--format", "{{.Status}}", host=first.docker_host).split()
        if ready.count("Ready") == want:
            return first.docker_host
        time.sleep(0.2)
    raise NodeError(f"swarm: {want} nodes not Ready within {READY_TIMEOUT_SEC:g} s")


def kill_node(node: Node) -> None:
    """Kill the node at once (SIGKILL to its dockerd and every container inside): a lost machine.

    The container stays (stopped) until :func:`remove_cluster`, so its name is not reused."""
    docker("kill", node.name, check=False)


def restart_node(node: Node) -> Node:
    """Start a killed node again (its tmpfs storage is empty: images must be loaded anew)."""
    docker("start", node.name)
    made = Node(name=node.name, ip=node.ip)
    wait_engine(made)
    return made


def registry_image(base_image: str = BASE_IMAGE) -> str:
    """The registry image's tag (Debian's docker-registry), built now if absent."""
    return _cached_build(REGISTRY_REPO, REGISTRY_DOCKERFILE, base_image)


def start_registry(made: Cluster, base_image: str = BASE_IMAGE) -> str:
    """Start a plain-HTTP registry on the test network; returns its ``ip:5000``.

    The nodes trust it (their engines run with ``--insecure-registry`` for private ranges);
    the test engine need not: push through a node with :func:`push_via_node`."""
    image = registry_image(base_image)
    name = f"{made.network.replace('-net-', '-registry-')}"
    docker("run", "-d", "--name", name, "--label", f"{LABEL}=1", "--network", made.network,
           "--user", "root", "--entrypoint", "sh", image, "-c",
           f"printf '%s' '{REGISTRY_CONFIG}' > /tmp/registry.yml && "
           "mkdir -p /var/lib/docker-registry && "
           "exec docker-registry serve /tmp/registry.yml")
    made.extra.append(name)
    address = f"{_container_ip(name, made.network)}:{REGISTRY_PORT}"
    probe = made.nodes[0]
    deadline = time.monotonic() + READY_TIMEOUT_SEC
    while time.monotonic() < deadline:
        proc = docker("exec", probe.name, "bash", "-c",
                      f"exec 3<>/dev/tcp/{address.replace(':', '/')}", check=False, timeout=10)
        if proc.returncode == 0:
            made.registry = address
            return address
        time.sleep(0.2)
    raise NodeError(f"registry {name} not listening on {address}")


def push_via_node(made: Cluster, image: str, node: Node | None = None) -> str:
    """Put ``image`` into the test registry (loaded into ``node`` first, pushed from there);
    returns the registry reference other nodes can pull."""
    if made.registry is None:
        raise NodeError("start_registry first")
    via = node or made.nodes[0]
    load_image(via, image)
    ref = f"{made.registry}/{image.split('/', 1)[-1]}"
    docker("tag", image, ref, host=via.docker_host)
    docker("push", ref, host=via.docker_host, timeout=600)
    return ref
