"""A read cancelled at any point hands its connection back clean (issue 26, point 2).

The console cancels reads when the user moves on (``b``, ``r``, ``Enter`` in quick
succession). A snapshot cancelled while its ``BEGIN`` was queued on the connection's thread
used to return the connection to the pool inside a transaction, and every later snapshot on
it failed with "cannot start a transaction within a transaction" until restart.
"""

from __future__ import annotations

import asyncio
import random

from srb_tui.store import Store

from .conftest import make_run

TRIES = 300


async def _yield_times(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_reads_cancelled_at_random_points_leave_every_connection_clean(
    store: Store,
) -> None:
    runs = [await make_run(store), await make_run(store, task_id="build03")]
    chooser = random.Random(26)
    for _ in range(TRIES):
        reads = [
            asyncio.create_task(store.run_detail(chooser.choice(runs).id))
            for _ in range(chooser.randint(1, 6))
        ]
        # Cancel after a random number of event-loop turns: before the borrow, while BEGIN
        # is queued, between queries, or while COMMIT is queued.
        await _yield_times(chooser.randint(0, 12))
        for task in reads:
            task.cancel()
        await asyncio.gather(*reads, return_exceptions=True)

    # Afterwards every pooled connection serves a snapshot read and a plain read.
    pooled = len(store._core.readers._conns)
    details = await asyncio.gather(*(store.run_detail(runs[0].id) for _ in range(pooled * 3)))
    assert {d.run.id for d in details} == {runs[0].id}
    listed = await asyncio.gather(*(store.runs.list_runs() for _ in range(pooled * 3)))
    assert all(len(rows) == 2 for rows in listed)
    for conn in store._core.readers._conns:
        assert not conn.in_transaction
