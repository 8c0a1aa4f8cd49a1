"""ui/widgets/log_read.py: the log view's searches, walked page by page over a real store."""

from __future__ import annotations

from pathlib import Path

from srb_tui.store import Store
from srb_tui.ui.widgets import log_read


async def _store_with(tmp_path: Path, rows: list[tuple[str, str, str]]) -> tuple[Store, str]:
    store = await Store.open(tmp_path / "srb.sqlite3")
    run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="command:true")
    await store.logs.append_log_lines(run.id, rows)
    return store, run.id


async def test_next_match_pages_forward_and_back_and_keeps_to_its_stream(tmp_path: Path) -> None:
    ts = "2026-12-01T00:00:00.000000000Z"
    # More matches than one search page, so the walk has to turn pages.
    rows = [(ts, "stdout", f"needle {i}") for i in range(log_read.SEARCH_PAGE + 50)]
    rows.append((ts, "stderr", "needle on stderr"))
    store, run_id = await _store_with(tmp_path, rows)
    try:
        hit = await log_read.next_match(store.logs, run_id, "needle", 10, forward=True)
        assert hit is not None and hit.seq == 11
        back = await log_read.next_match(store.logs, run_id, "needle", 10, forward=False)
        assert back is not None and back.seq == 9
        err = await log_read.next_match(store.logs, run_id, "needle", 0, forward=True,
                                        stream="stderr")
        assert err is not None and err.text == "needle on stderr" and err.seq == len(rows)
        assert await log_read.next_match(store.logs, run_id, "needle", len(rows),
                                         forward=True) is None
    finally:
        await store.close()


async def test_first_error_is_the_earliest_of_stderr_and_error_words(tmp_path: Path) -> None:
    ts = "2026-12-01T00:00:00.000000000Z"
    rows = [(ts, "stdout", "fine"), (ts, "stdout", "terror is not an error word?"),
            (ts, "stdout", "Traceback (most recent call last):"), (ts, "stderr", "warn")]
    store, run_id = await _store_with(tmp_path, rows)
    try:
        first = await log_read.first_error(store.logs, run_id)
        # "terror" contains "error": the pattern matches case-insensitively inside words.
        assert first is not None and first.seq == 2
        clean, clean_id = await _store_with(tmp_path / "b", [(ts, "stdout", "all good")])
        try:
            assert await log_read.first_error(clean.logs, clean_id) is None
        finally:
            await clean.close()
    finally:
        await store.close()
