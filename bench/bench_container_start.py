"""Benchmark: start-to-finish of a short container, srb's runner vs raw ``docker run``.

Both sides run the same image and command with the same lock-down flags (no network,
non-root, limits, no-new-privileges, dropped capabilities, init): srb does create →
start → wait (with budget) → remove through docker-py on its own pool; the raw side
is ``docker run --rm``. Iterations alternate, and the medians are compared.
Usage: python bench/bench_container_start.py [-n 15] [--image srb/base:bookworm]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
import uuid

from srb_tui.runner import (
    ContainerSpec,
    DockerEngine,
    RunnerPool,
    create,
    remove,
    start,
    wait_with_budget,
)

COMMAND = ("true",)


def raw_args(image: str, spec: ContainerSpec) -> list[str]:
    return [
        "docker", "run", "--rm", "--network", "none", "--user", spec.user,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true", "--init",
        "--memory", str(spec.mem_limit), "--memory-swap", str(spec.mem_limit),
        "--pids-limit", str(spec.pids_limit), "--cpus", str(spec.nano_cpus / 1e9),
        "--log-opt", f"max-size={spec.log_max_size}", "--log-opt",
        f"max-file={spec.log_max_files}", "-w", "/", image, *COMMAND,
    ]  # fmt: skip


async def srb_once(engine: DockerEngine, image: str) -> float:
    spec = ContainerSpec(
        image=image,
        run_id=f"bench-{uuid.uuid4().hex[:8]}",
        role="start",
        command=COMMAND,
        workdir="/",
    )
    t0 = time.perf_counter()
    handle = await create(engine, spec)
    try:
        await start(engine, handle)
        info = await wait_with_budget(engine, handle, 60)
    finally:
        await remove(engine, handle)
    took = time.perf_counter() - t0
    assert info.exit_code == 0, info
    return took


def raw_once(image: str) -> float:
    spec = ContainerSpec(image=image, run_id="bench", role="raw")
    t0 = time.perf_counter()
    subprocess.run(raw_args(image, spec), check=True)
    return time.perf_counter() - t0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15)
    parser.add_argument("--image", default="srb/base:bookworm")
    args = parser.parse_args()
    engine = DockerEngine(RunnerPool(1))
    info = await engine.ping()
    if not info.ok:
        raise SystemExit(info.error)
    await srb_once(engine, args.image)  # warm up both paths
    raw_once(args.image)
    srb, raw = [], []
    for i in range(args.n):
        if i % 2:
            srb.append(await srb_once(engine, args.image))
            raw.append(raw_once(args.image))
        else:
            raw.append(raw_once(args.image))
            srb.append(await srb_once(engine, args.image))
    engine.close()
    ms, mr = statistics.median(srb), statistics.median(raw)
    print(f"container start→exit→remove, {args.n} runs each, image {args.image}")
    print(f"  srb runner : median {ms * 1000:7.1f} ms  (min {min(srb) * 1000:.1f})")
    print(f"  docker run : median {mr * 1000:7.1f} ms  (min {min(raw) * 1000:.1f})")
    print(f"  ratio srb/raw = {ms / mr:.2f}  (goal <= 1.15)")


if __name__ == "__main__":
    asyncio.run(main())
