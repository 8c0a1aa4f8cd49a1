"""Collecting a hostile submission from a real container: rejected with reasons,
nothing written outside dest, caps enforced with a clear reason."""

from __future__ import annotations

import tarfile
import time
from pathlib import Path

import pytest

from srb_tui.runner import (
    CollectError,
    ContainerHandle,
    DockerEngine,
    ExtractLimits,
    collect_submission,
    put_tree,
    start,
    wait_with_budget,
)
from tests.runner.conftest import MakeContainer

pytestmark = pytest.mark.docker

HOSTILE = """
set -e
cd /workspace/repo
echo changed > src/main.c
ln -s /etc/passwd passwd_link
ln -s ../../../etc escape_dir
mkfifo pipe
head -c 3M /dev/urandom > big.bin
mkdir -p web/node_modules/lib build
echo junk > web/node_modules/lib/index.js
echo obj > build/out.o
echo cache > src/mod.pyc
echo done
"""


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


async def run_script(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path, script: str
) -> tuple[ContainerHandle, Path]:
    state_a = tmp_path / "state-a"
    (state_a / "src").mkdir(parents=True)
    (state_a / "src" / "main.c").write_text("int main(void){return 0;}\n")
    handle, spec = await make_container(command=("bash", "-c", script))
    await put_tree(engine, handle, state_a, uid=spec.uid, gid=spec.gid)
    await start(engine, handle)
    info = await wait_with_budget(engine, handle, 600)
    assert (info.reason, info.exit_code) == ("exited", 0)
    return handle, tmp_path / "out" / "dest"


async def test_hostile_submission(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    handle, dest = await run_script(engine, make_container, tmp_path, HOSTILE)
    before = tree(tmp_path)
    kept = tmp_path / "submission.tar"
    res = await collect_submission(
        engine,
        handle,
        dest,
        excludes=["node_modules", "/build", "*.pyc"],
        limits=ExtractLimits(max_file_bytes=1024**2),
        keep_archive=kept,
    )
    assert res.ok, res.aborted_reason
    reasons = dict(res.rejected)
    assert reasons == {
        "repo/passwd_link": "symbolic link to absolute path /etc/passwd",
        "repo/escape_dir": "symbolic link points outside the tree (../../../etc)",
        "repo/pipe": "FIFO (named pipe)",
        "repo/big.bin": "file of 3.0 MiB exceeds the per-file cap of 1.0 MiB",
    }
    assert tree(dest) == {"src", "src/main.c", "web"}
    assert (dest / "src" / "main.c").read_text() == "changed\n"
    # node_modules, its lib/ and index.js; build and out.o; mod.pyc
    assert res.excluded == 6
    new_outside = tree(tmp_path) - before - {str(p.relative_to(tmp_path)) for p in dest.rglob("*")}
    assert new_outside <= {"out", "out/dest", "submission.tar"}
    with tarfile.open(kept) as tar:
        assert "repo/big.bin" in tar.getnames()  # the raw archive is kept as fetched


async def test_file_count_cap_on_200k_files(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    # 200 folders of 1000 empty files, made by a handful of processes.
    script = (
        "mkdir /workspace/repo/many && cd /workspace/repo/many && seq -w 0 199 | xargs mkdir"
        " && seq -f %06g 0 199999 | sed -E 's#^(...)(...)$#\\1/\\2#' | xargs touch"
        " && find . -type f | wc -l"
    )
    handle, dest = await run_script(engine, make_container, tmp_path, script)
    t0 = time.monotonic()
    res = await collect_submission(
        engine,
        handle,
        dest,
        limits=ExtractLimits(max_files=20_000),
    )
    took = time.monotonic() - t0
    assert res.aborted_reason is not None
    assert "more than 20000 files (file-count cap)" in res.aborted_reason
    assert res.files == 20_000
    on_disk = [p for p in dest.rglob("*") if p.is_file()]
    assert len(on_disk) == 20_000
    # extraction stopped the download early: far less than the whole archive was read
    assert res.archive_bytes < 40 * 1024**2
    assert took < 120


async def test_total_and_download_caps(
    engine: DockerEngine, make_container: MakeContainer, tmp_path: Path
) -> None:
    script = "cd /workspace/repo && for i in 1 2 3 4; do head -c 2M /dev/zero > f$i; done"
    handle, dest = await run_script(engine, make_container, tmp_path, script)
    res = await collect_submission(
        engine,
        handle,
        dest,
        limits=ExtractLimits(max_total_bytes=5 * 1024**2),
    )
    assert res.aborted_reason is not None and "total size cap" in res.aborted_reason
    assert res.bytes <= 5 * 1024**2
    res = await collect_submission(
        engine,
        handle,
        tmp_path / "d2",
        limits=ExtractLimits(max_archive_bytes=1024**2),
    )
    assert res.aborted_reason is not None and "download cap" in res.aborted_reason
    assert res.files == 0 and list((tmp_path / "d2").iterdir()) == []  # no half-written f1
    with pytest.raises(CollectError, match="/nowhere not found"):
        await collect_submission(engine, handle, tmp_path / "d3", source="/nowhere")
