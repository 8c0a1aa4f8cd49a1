"""Benchmark: collecting a >= 20k-file tree, srb's ``collect_submission`` vs ``docker cp``.

One stopped container holds the tree (200 folders × 100 files of a few bytes by
default). srb streams ``get_archive`` and extracts safely with excludes and caps on;
the raw side is ``docker cp container:/workspace/repo <dir>``. Iterations alternate;
medians are compared. Usage: python bench/bench_collect.py [-n 5] [--files 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from srb_tui.runner import (
    ContainerHandle,
    ContainerSpec,
    DockerEngine,
    RunnerPool,
    collect_submission,
    create,
    put_tree,
    remove,
    start,
    wait_with_budget,
)

MAKE_TREE = (
    "cd /workspace/repo && for d in $(seq -w 0 {dirs}); do mkdir d$d; "
    "for f in $(seq 0 {per}); do echo line $d $f > d$d/f$f.txt; done; done"
)


def count_files(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file())


async def srb_once(engine: DockerEngine, handle: ContainerHandle, work: Path) -> tuple[float, int]:
    dest = work / f"srb-{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    res = await collect_submission(engine, handle, dest, excludes=["node_modules", "*.pyc"])
    took = time.perf_counter() - t0
    assert res.ok and not res.rejected, res
    n = count_files(dest)
    shutil.rmtree(dest)
    return took, n


def raw_once(handle: ContainerHandle, work: Path) -> tuple[float, int]:
    dest = work / f"raw-{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    subprocess.run(["docker", "cp", f"{handle.id}:/workspace/repo", str(dest)], check=True)
    took = time.perf_counter() - t0
    n = count_files(dest)
    shutil.rmtree(dest)
    return took, n


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--image", default="srb/base:bookworm")
    args = parser.parse_args()
    dirs = 200
    per = max(1, args.files // dirs)
    engine = DockerEngine(RunnerPool(1))
    info = await engine.ping()
    if not info.ok:
        raise SystemExit(info.error)
    script = MAKE_TREE.format(dirs=f"{dirs - 1:03d}", per=per - 1)
    spec = ContainerSpec(
        image=args.image,
        run_id=f"bench-{uuid.uuid4().hex[:8]}",
        role="collect",
        command=("bash", "-c", script),
    )
    handle = await create(engine, spec)
    try:
        with tempfile.TemporaryDirectory(prefix="srb-bench-") as tmp:
            work = Path(tmp)
            (work / "empty").mkdir()
            await put_tree(engine, handle, work / "empty", uid=spec.uid, gid=spec.gid)
            await start(engine, handle)
            made = await wait_with_budget(engine, handle, 1800)
            assert made.exit_code == 0, made
            await srb_once(engine, handle, work)  # warm the page cache for both
            srb: list[float] = []
            raw: list[float] = []
            files = 0
            for i in range(args.n):
                order = [True, False] if i % 2 else [False, True]
                for use_srb in order:
                    took, files = (
                        await srb_once(engine, handle, work) if use_srb else raw_once(handle, work)
                    )
                    (srb if use_srb else raw).append(took)
    finally:
        await remove(engine, handle)
        engine.close()
    ms, mr = statistics.median(srb), statistics.median(raw)
    print(f"collect of {files} files ({dirs} folders), {args.n} runs each")
    print(f"  srb collect : median {ms:6.2f} s  (min {min(srb):.2f})")
    print(f"  docker cp   : median {mr:6.2f} s  (min {min(raw):.2f})")
    print(f"  ratio srb/raw = {ms / mr:.2f}  (goal <= 1.1)")


if __name__ == "__main__":
    asyncio.run(main())
