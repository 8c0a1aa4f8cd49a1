"""Benchmark: launch to agent start, ``srb run`` vs a bare ``docker run`` of the same image.

The demo task's images and State A are cached first (one warm-up run, which also makes
the workspace image: the environment image with State A in it). Then, alternating:

* srb: ``srb run demo01 --agent "command:echo started" --no-grade`` as a fresh process
  (interpreter start, store open, task load, State A check, image checks, run record,
  lease, container create from the workspace image, start);
* raw: ``docker run -d --network none <agent image> sh -c 'echo started'``;
* docker-py: a fresh Python process that imports docker-py and creates and starts the same
  container (the floor for any Python launcher: interpreter start, docker-py and requests
  imports, the same API calls); shown for context, the goal is against raw.

srb's bytecode is compiled first, as an installed package's is. The end point of both is
Docker's own timestamp of the line ``started`` (``docker logs -t`` for raw, the stored log
line's timestamp for srb), so neither side pays for polling.
Reported: medians and the ratio srb/raw (goal <= 1.5).

    .venv/bin/python bench/bench_launch.py [-n 7]
"""

from __future__ import annotations

import argparse
import compileall
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from srb_tui.service.run.orchestrator import env_image_tag
from srb_tui.timestamps import ts_epoch

REPO = Path(__file__).resolve().parents[1]
TASK = "demo01-csvtab-python-to-node"
AGENT = "command:echo started"


def srb_once(state: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    t0 = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "srb_tui", "--tasks", str(REPO / "tasks"), "--state",
         str(state), "run", TASK, "--agent", AGENT, "--budget", "120", "--no-grade",
         "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(f"file:{state / 'srb.sqlite3'}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT l.ts FROM log_lines l JOIN runs r ON r.id = l.run_id "
            "WHERE l.text = 'started' ORDER BY r.created_at DESC, l.seq LIMIT 1"
        ).fetchone()
    assert row is not None, "the agent's line was not stored"
    return ts_epoch(row[0]) - t0


def raw_once(image: str) -> float:
    name = f"srb-bench-{uuid.uuid4().hex[:8]}"
    t0 = time.time()
    subprocess.run(["docker", "run", "-d", "--name", name, "--network", "none", image,
                    "sh", "-c", "echo started"], check=True, capture_output=True)
    try:
        subprocess.run(["docker", "wait", name], check=True, capture_output=True)
        logs = subprocess.run(["docker", "logs", "-t", name], check=True, capture_output=True,
                              text=True).stdout.split()
    finally:
        subprocess.run(["docker", "rm", "-f", name], check=False, capture_output=True)
    assert logs and logs[1] == "started", logs
    return ts_epoch(logs[0]) - t0


DOCKER_PY = """
import sys, time
t0 = float(sys.argv[2])
import docker
client = docker.from_env()
c = client.containers.create(sys.argv[1], ["sh", "-c", "echo started"], network_mode="none")
c.start()
c.wait()
line = c.logs(timestamps=True).decode().split()
c.remove(force=True)
print(line[0])
"""


def docker_py_once(image: str) -> float:
    t0 = time.time()
    done = subprocess.run([sys.executable, "-c", DOCKER_PY, image, str(t0)], check=True,
                          capture_output=True, text=True)
    return ts_epoch(done.stdout.strip()) - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7)
    args = parser.parse_args()
    image = env_image_tag(TASK)
    # An installed srb has its bytecode; this checkout may run with PYTHONDONTWRITEBYTECODE
    # (then every `srb run` would compile ~190 modules first): compile them once.
    compileall.compile_dir(str(REPO / "srb_tui"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="srb-bench-launch-") as tmp:
        state = Path(tmp) / "state"
        srb_once(state)  # builds/checks the agent image, caches State A
        raw_once(image)
        docker_py_once(image)
        loads = [os.getloadavg()[0]]
        srb, raw, dpy = [], [], []
        for i in range(args.n):
            loads.append(os.getloadavg()[0])
            if i % 2:
                srb.append(srb_once(state))
                raw.append(raw_once(image))
                dpy.append(docker_py_once(image))
            else:
                dpy.append(docker_py_once(image))
                raw.append(raw_once(image))
                srb.append(srb_once(state))
        loads.append(os.getloadavg()[0])
    ms, mr, md = statistics.median(srb), statistics.median(raw), statistics.median(dpy)
    print(f"launch → agent's first line, {args.n} runs each, image {image} (cached); "
          f"1-min load average {min(loads):.2f}..{max(loads):.2f} (median "
          f"{statistics.median(loads):.2f}) on {os.cpu_count()} CPUs")
    print(f"  srb run    : median {ms * 1000:7.0f} ms  (min {min(srb) * 1000:.0f})")
    print(f"  docker run : median {mr * 1000:7.0f} ms  (min {min(raw) * 1000:.0f})")
    print(f"  docker-py  : median {md * 1000:7.0f} ms  (min {min(dpy) * 1000:.0f})"
          "  (bare Python launcher, for context)")
    print(f"  ratio srb/raw = {ms / mr:.2f}  (goal <= 1.5); srb/docker-py = {ms / md:.2f}")


if __name__ == "__main__":
    main()
