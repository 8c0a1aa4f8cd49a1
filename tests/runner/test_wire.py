"""runner/wire.py over runner/http1.py against the real engine: the five calls of a launch.

Each answer is checked against what the engine itself says through docker-py (the other
transport srb has), so the hand-written HTTP/1.1 cannot drift from the engine unnoticed.
"""

from __future__ import annotations

import asyncio
import io
import tarfile
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
