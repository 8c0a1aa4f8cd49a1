"""runner/wire.py over runner/http1.py against the real engine: the five calls of a launch.

Each answer is checked against what the engine itself says through docker-py (the other
transport srb has), so the hand-written HTTP/1.1 cannot drift from the engine unnoticed.
"""

from __future__ import annotations

import asyncio
import io
import socket
import tarfile
import threading
from pathlib import Path

import pytest

from srb_tui.runner import ContainerHandle, ContainerSpec, DockerEngine, EngineUnavailable, remove
from srb_tui.runner.wire import Wire, WireError
from tests.runner.conftest import BASE_IMAGE, new_run_id


def _wire(engine: DockerEngine) -> Wire:
    assert engine.wire is not None, f"no wire to {engine.base_url}"
    return engine.wire


async def test_version_and_inspect_agree_with_docker_py(engine: DockerEngine) -> None:
    wire = _wire(engine)
    version = await engine.call(wire.version)
    api = await engine.api()
    assert version["ApiVersion"] == (await engine.call(api.version))["ApiVersion"]
    assert wire.prefix == f"/v{version['ApiVersion']}"
    image = await engine.call(wire.inspect_image, BASE_IMAGE)
    assert image is not None and image["Id"] == (await engine.call(api.inspect_image,
                                                                   BASE_IMAGE))["Id"]
    assert await engine.call(wire.inspect_image, "srb-test/no-such-image:nope") is None


async def test_create_upload_start_a_container_end_to_end(engine: DockerEngine) -> None:
    wire = _wire(engine)
    await engine.call(wire.version)
    spec = ContainerSpec(image=BASE_IMAGE, run_id=new_run_id(), role="agent",
                         command=("sh", "-c", "cat /workspace/hello.txt"))
    cid = await engine.call(wire.create_container, spec.engine_config(), spec.name)
    handle = ContainerHandle(id=cid, name=spec.name, run_id=spec.run_id, role="agent")
    try:
        blob = io.BytesIO()
        with tarfile.open(fileobj=blob, mode="w") as tar:
            data = b"over the wire\n"
            info = tarfile.TarInfo("workspace/hello.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        length = blob.tell()
        blob.seek(0)
        await engine.call(wire.put_archive, cid, "/", blob, length)
        await engine.call(wire.start, cid)
        api = await engine.api()
        result = await engine.call(api.wait, cid, timeout=60)
        assert result["StatusCode"] == 0
        logs = await engine.call(api.logs, cid, stdout=True, stderr=True)
        assert logs == b"over the wire\n"
        with pytest.raises(WireError) as refused:  # a second create under the same name
            await engine.call(wire.create_container, spec.engine_config(), spec.name)
        assert refused.value.status_code == 409 and spec.name in refused.value.explanation
    finally:
        await remove(engine, handle)


async def test_an_engine_that_is_not_there_is_engine_unavailable(tmp_path: Path) -> None:
    wire = Wire(socket_path=str(tmp_path / "nothing.sock"), timeout=5)
    with pytest.raises(EngineUnavailable, match=r"nothing\.sock"):
        await asyncio.to_thread(wire.version)


async def test_ping_says_what_version_says(engine: DockerEngine) -> None:
    wire = _wire(engine)
    pinged = await engine.call(wire.ping)
    prefix = wire.prefix
    version = await engine.call(wire.version)
    assert pinged == {"Version": version["Version"], "ApiVersion": version["ApiVersion"]}
    assert prefix == wire.prefix == f"/v{version['ApiVersion']}"
    info = await engine.ping()
    assert (info.ok, info.version, info.api_version) == (True, version["Version"],
                                                         version["ApiVersion"])


def _fake_engine(path: Path, answers: list[bytes]) -> tuple[list[str], threading.Thread]:
    """A Unix socket answering one connection per answer; the request lines it read."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    asked: list[str] = []

    def serve() -> None:
        with listener:
            for answer in answers:
                conn, _ = listener.accept()
                with conn:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += conn.recv(65536)
                    asked.append(data.split(b"\r\n", 1)[0].decode())
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return asked, thread


def test_an_engine_whose_ping_names_no_docker_version_is_asked_its_version(
        tmp_path: Path) -> None:
    body = b'{"Version":"4.3.1","ApiVersion":"1.40"}'
    asked, thread = _fake_engine(tmp_path / "e.sock", [
        b"HTTP/1.1 200 OK\r\nServer: Libpod/4.3.1 (linux)\r\nApi-Version: 1.40\r\n"
        b"Content-Length: 2\r\n\r\nOK",
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)])
    wire = Wire(socket_path=str(tmp_path / "e.sock"), timeout=5)
    assert wire.ping() == {"Version": "4.3.1", "ApiVersion": "1.40"}
    thread.join(10)
    assert asked == ["GET /_ping HTTP/1.1", "GET /version HTTP/1.1"]
    assert wire.prefix == "/v1.40"


def test_a_docker_engines_ping_is_all_it_is_asked(tmp_path: Path) -> None:
    asked, thread = _fake_engine(tmp_path / "e.sock", [
        b"HTTP/1.1 200 OK\r\nServer: Docker/20.10.24+dfsg1 (linux)\r\n"
        b"Api-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK"])
    wire = Wire(socket_path=str(tmp_path / "e.sock"), timeout=5)
    assert wire.ping() == {"Version": "20.10.24+dfsg1", "ApiVersion": "1.41"}
    thread.join(10)
    assert asked == ["GET /_ping HTTP/1.1"] and wire.prefix == "/v1.41"
