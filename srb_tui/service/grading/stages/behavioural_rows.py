"""Stage II's store rows: the module rows and the check rows of a stage result, and the
check rows written while the suite still runs (:class:`StreamedChecks`).

The grader prints each ended module's checks on its stdout (``@srb-checks {json}``,
``grader/suite/lines_out.py``) as the next module starts, so the host writes that module's
check rows while later modules run instead of all 25,000 after the suite. What the store holds
once the stage has ended is still exactly the stage result's: :meth:`StreamedChecks.finish`
compares every module's streamed rows with the rows of the fetched, host-checked document
and writes again (or clears) each module that differs or was never streamed;
:meth:`StreamedChecks.abandon` clears what was streamed when the stage has no result at all.
A row written is committed at once (nothing recorded is lost by a crash afterwards); a
stage interrupted mid-way is graded again, which replaces every module's rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from srb_tui.grader.contract import MODULE_STATUSES, SUITE_CHECKS_MARK
from srb_tui.store import Store, StoreError

STAGE = "behavioural"
CHECKS_MARK = SUITE_CHECKS_MARK.encode()  # the grader prints it (the contract leaf)
CHECK_KEYS = ("id", "verdict", "weight", "summary", "detail", "evidence")


def module_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Stage-result units as store module rows."""
    rows = []
    for unit in doc.get("units", []):
        if not isinstance(unit, dict) or not isinstance(unit.get("id"), str):
            continue
        status = unit.get("status")
        rows.append(
            {
                "id": unit["id"],
                "title": str(unit.get("title") or "") or None,
                "weight": float(unit.get("weight", 0.0)),
                "status": status if status in MODULE_STATUSES else "error",
                "rate": float(unit.get("rate", 0.0)),
                "passed": int(unit.get("passed", 0)),
                "failed": int(unit.get("failed", 0)),
                "skipped": int(unit.get("skipped", 0)),
                "errors": int(unit.get("errored", 0)),
                "scored": int(unit.get("scored", 0)),
                "duration_sec": unit.get("duration_sec"),
                "detail": {
                    key: unit[key]
                    for key in ("message", "exit_code", "timed_out", "stderr_tail",
                                "sandbox_hint", "boundary", "tampering", "exec_boundary")
                    if key in unit
                },
            }
        )
    return rows


def check_row(check: dict[str, Any]) -> dict[str, Any]:
    """One stage-result check as a store row: only the keys the store takes."""
    row = {key: check[key] for key in CHECK_KEYS if key in check}
    if row.get("summary") is not None and not isinstance(row["summary"], str):
        row["summary"] = str(row["summary"])
    return row


def checks_by_module(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Checks grouped by module, keeping only the keys the store takes."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for unit in doc.get("units", []):
        if isinstance(unit, dict) and isinstance(unit.get("id"), str):
            grouped.setdefault(unit["id"], [])
    for check in doc.get("checks", []):
        if not isinstance(check, dict):
            continue
        grouped.setdefault(str(check.get("module", "")), []).append(check_row(check))
    return grouped


class StreamedChecks:
    """An ``on_line`` for the grader's ``@srb-checks`` lines: each module's check rows
    written as they come (one write after the other), then made the stage result's."""

    def __init__(self, store: Store | None, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.written: dict[str, list[dict[str, Any]]] = {}
        self._last: asyncio.Task[None] | None = None

    def on_line(self, raw: bytes) -> None:
        if self.store is None or not raw.startswith(CHECKS_MARK):
            return
        try:
            doc = json.loads(raw[len(CHECKS_MARK):])
        except ValueError:
            return  # written at the end from the stage result instead
        module = doc.get("module") if isinstance(doc, dict) else None
        checks = doc.get("checks") if isinstance(doc, dict) else None
        if not isinstance(module, str) or not isinstance(checks, list):
            return
        self.on_checks(module, checks)

    def on_checks(self, module: str, checks: list[Any]) -> None:
        """:meth:`on_line` of a line already parsed: the module's checks."""
        if self.store is None:
            return
        rows = [check_row(check) for check in checks if isinstance(check, dict)]
        self._last = asyncio.get_running_loop().create_task(
            self._write(module, rows, self._last))

    async def _write(self, module: str, rows: list[dict[str, Any]],
                     before: asyncio.Task[None] | None) -> None:
        if before is not None:
            await before
        assert self.store is not None
        self.written.pop(module, None)  # not known to be in the store until it is
        with contextlib.suppress(StoreError):  # rewritten by finish() from the result
            await self.store.grading.record_checks(self.run_id, STAGE, rows, module_id=module)
            self.written[module] = rows

    async def drain(self) -> None:
        """Wait for the writes started so far."""
        if self._last is not None:
            await self._last

    async def finish(self, doc: dict[str, Any]) -> None:
        """Make the store hold the stage result ``doc``: its module rows, and every
        module's check rows (those streamed and equal to the result's stay as written)."""
        assert self.store is not None
        await self.drain()
        await self.store.grading.record_module_results(self.run_id, STAGE, module_rows(doc))
        final = checks_by_module(doc)
        for module, rows in final.items():
            if self.written.get(module) != rows:
                await self.store.grading.record_checks(self.run_id, STAGE, rows, module_id=module)
        for module in self.written.keys() - final.keys():
            await self.store.grading.record_checks(self.run_id, STAGE, [], module_id=module)

    async def abandon(self) -> None:
        """The stage has no result: clear what was streamed (the store holds no check of
        this attempt, as when nothing was streamed)."""
        if self.store is None:
            return
        with contextlib.suppress(StoreError):
            await self.drain()
            for module in list(self.written):
                await self.store.grading.record_checks(self.run_id, STAGE, [], module_id=module)
