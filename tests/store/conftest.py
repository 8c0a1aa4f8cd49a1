"""Fixtures for the store tests: a fresh store in a temporary state folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.store import RunRecord, Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "srb.sqlite3"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(db_path)
    try:
        yield opened
    finally:
        await opened.close()


async def make_run(store: Store, task_id: str = "lang03", **kwargs: object) -> RunRecord:
    """A pending run with sensible defaults."""
    fields: dict[str, object] = {
        "task_path": f"tasks/{task_id}",
        "agent": "replay",
    }
    fields.update(kwargs)
    return await store.runs.create_run(task_id=task_id, **fields)  # type: ignore[arg-type]
