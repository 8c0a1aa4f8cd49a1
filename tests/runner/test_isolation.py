"""A container srb creates has no network, no privileges, no socket and no host paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.runner import (
    DockerEngine,
    exec_run,
    put_tree,
    start,
)
from tests.runner.conftest import MakeContainer

pytestmark = pytest.mark.docker

SLEEPER = ("sleep", "infinity")


async def test_network_is_off(engine: DockerEngine, make_container: MakeContainer) -> None:
    handle, _ = await make_container(command=SLEEPER)
    await start(engine, handle)
    tcp = await exec_run(
        engine, handle, ["bash", "-c", "echo > /dev/tcp/1.1.1.1/53"], timeout_sec=10
    )
    assert tcp.exit_code != 0 and not tcp.timed_out
    dns = await exec_run(
        engine, handle, ["bash", "-c", "echo > /dev/tcp/deb.debian.org/80"], timeout_sec=10
    )
    assert dns.exit_code != 0 and not dns.timed_out
    nets = await exec_run(engine, handle, ["ls", "/sys/class/net"])
    assert nets.stdout.split() == [b"lo"]


async def test_locked_down(engine: DockerEngine, make_container: MakeContainer) -> None:
    handle, spec = await make_container(
        command=SLEEPER, mem_limit=256 * 1024**2, pids_limit=77, nano_cpus=500_000_000
    )
    await start(engine, handle)
    api = await engine.api()
    data = await engine.call(api.inspect_container, handle.id)
    host = data["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"]
    assert any(opt.startswith("no-new-privileges") for opt in host["SecurityOpt"])
    assert host["Memory"] == 256 * 1024**2 and host["MemorySwap"] == 256 * 1024**2
    assert host["PidsLimit"] == 77 and host["NanoCpus"] == 500_000_000
    assert host["LogConfig"]["Type"] == "json-file"
    assert host["LogConfig"]["Config"]["max-size"] == spec.log_max_size
    assert host["Privileged"] is False
    assert data["Config"]["Labels"]["srb.managed"] == "1"
    assert data["Config"]["Labels"]["srb.run"] == spec.run_id
    assert data["Config"]["Labels"]["srb.role"] == "agent"
    assert data["Name"] == f"/{spec.name}"
    who = await exec_run(engine, handle, ["id", "-u"])
    assert who.stdout.strip() == b"1000"
    status = (await exec_run(engine, handle, ["cat", "/proc/self/status"])).stdout.decode()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    assert fields["NoNewPrivs"].strip() == "1"
    assert int(fields["CapEff"].strip(), 16) == 0
    assert int(fields["CapBnd"].strip(), 16) == 0


async def test_no_socket_no_host_paths(engine: DockerEngine, make_container: MakeContainer) -> None:
    handle, _ = await make_container(command=SLEEPER)
    await start(engine, handle)
    api = await engine.api()
    data = await engine.call(api.inspect_container, handle.id)
    assert data["Mounts"] == []
    assert not data["HostConfig"]["Binds"]
    found = await exec_run(
        engine, handle, ["bash", "-c", "find / -xdev -type s 2>/dev/null; ls /run /var/run"]
    )
    assert b"docker.sock" not in found.stdout
    mounts = (await exec_run(engine, handle, ["cat", "/proc/mounts"])).stdout.decode()
    options = {line.split()[1]: line.split()[3] for line in mounts.splitlines()}
    targets = set(options)
    # Docker's own: three generated /etc files and its init binary (read-only).
    docker_own = {"/etc/resolv.conf", "/etc/hostname", "/etc/hosts"}
    for init in ("/sbin/docker-init", "/usr/sbin/docker-init"):
        if init in options:
            assert options[init].split(",")[0] == "ro"
            docker_own.add(init)
    allowed_roots = ("/proc", "/dev", "/sys")
    extra = {t for t in targets - docker_own - {"/"} if not t.startswith(allowed_roots)}
    assert extra == set(), f"unexpected mounts in the container: {extra}"


async def test_only_state_a_enters(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    sentinel = "SRB-SENTINEL-" + tmp_path.name.upper() + "-7f3a9c"
    task = tmp_path / "task"
    (task / "environment" / "repo" / "src").mkdir(parents=True)
    (task / "environment" / "repo" / "src" / "main.c").write_text("int main(){return 0;}\n")
    (task / "tests").mkdir()
    (task / "tests" / "secret.txt").write_text(f"expected answer {sentinel}\n")
    handle, spec = await make_container(command=SLEEPER)
    await put_tree(engine, handle, task / "environment" / "repo", uid=spec.uid, gid=spec.gid)
    await start(engine, handle)
    # The pattern travels split in two env vars so no file or cmdline holds it whole.
    halves = {"A": sentinel[:8], "B": sentinel[8:]}
    grep_cmd = (
        "grep -rlsF -D skip --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
        '-e "$A$B" / ; echo done'
    )
    grep = await exec_run(
        engine, handle, ["bash", "-c", grep_cmd], user="0:0", env=halves, timeout_sec=120
    )
    assert not grep.timed_out
    assert grep.stdout.split() == [b"done"], grep.stdout[:500]
    # Positive control: the same grep does find the string once it is there.
    await exec_run(engine, handle, ["bash", "-c", 'printf "%s%s" "$A" "$B" > /tmp/c'], env=halves)
    found = await exec_run(
        engine, handle, ["bash", "-c", grep_cmd], user="0:0", env=halves, timeout_sec=120
    )
    assert found.stdout.split() == [b"/tmp/c", b"done"]
    listed = await exec_run(engine, handle, ["find", "/workspace", "-type", "f"])
    assert listed.stdout.split() == [b"/workspace/repo/src/main.c"]
