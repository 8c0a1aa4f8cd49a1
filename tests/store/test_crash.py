"""Acknowledged writes survive a crash: a writer process is SIGKILLed mid-ingest."""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
from pathlib import Path

from srb_tui.store import Store

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from srb_tui.store import Store

    async def main(path):
        store = await Store.open(path)
        run = await store.runs.create_run(
            task_id="lang03", task_path="tasks/lang03", agent="replay")
        await store.runs.transition(run.id, "preparing")
        print("RUN", run.id, flush=True)
        batch = 0
        while True:
            lines = [("2026-11-29T16:40:13Z", "stdout", f"{batch}:{i}") for i in range(500)]
            seq = await store.logs.append_log_lines(run.id, lines)
            print("ACK", seq, flush=True)
            batch += 1

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_acknowledged_lines_survive_sigkill(db_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(db_path), stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    run_id = ""
    acked = 0
    try:
        async with asyncio.timeout(60):
            while acked < 20_000:
                words = (await proc.stdout.readline()).decode().split()
                assert words, "child exited early"
                if words[0] == "RUN":
                    run_id = words[1]
                else:
                    acked = int(words[1])
            proc.send_signal(signal.SIGKILL)
            rest = await proc.stdout.read()
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    for line in rest.decode().splitlines():
        acked = max(acked, int(line.split()[1]))
    async with await Store.open(db_path) as store:
        run = await store.runs.require_run(run_id)
        assert run.status == "preparing"
        stored = await store.logs.max_log_seq(run_id)
        assert stored >= acked
        assert stored % 500 == 0  # whole batches only
        lines = await store.logs.read_log_lines(run_id, offset=acked - 1, limit=1)
        assert lines[0].seq == acked
