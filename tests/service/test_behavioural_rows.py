"""Stage II's check rows written while the suite runs (issue 38 item 2): what the store holds
once the stage has ended is exactly the stage result's, whatever was streamed before (the
same rows, other rows, a module never streamed, one the result does not have), and a stage
without a result leaves none of what was streamed. Real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srb_tui.service.grading.stages.behavioural_rows import (
    CHECKS_MARK,
    StreamedChecks,
    checks_by_module,
)
from srb_tui.store import Store


def _line(module: str, checks: list[dict[str, Any]]) -> bytes:
    return CHECKS_MARK + json.dumps({"module": module, "checks": checks}).encode()


def _check(module: str, cid: str, verdict: str = "pass", **more: Any) -> dict[str, Any]:
    return {"module": module, "id": cid, "verdict": verdict, "weight": 1.0, "scored": True,
            **more}


def _doc(checks: list[dict[str, Any]], modules: list[str]) -> dict[str, Any]:
    units = [{"id": m, "title": m, "weight": 1.0, "status": "ok", "rate": 1.0, "passed": 0,
              "failed": 0, "skipped": 0, "errored": 0, "scored": 0} for m in modules]
    return {"units": units, "checks": checks}


async def _held(store: Store, run_id: str) -> dict[str, list[tuple[str, str, str | None]]]:
    found: dict[str, list[tuple[str, str, str | None]]] = {}
    for rec in await store.grading.checks(run_id, "behavioural"):
        found.setdefault(rec.module_id, []).append((rec.check_id, rec.verdict, rec.summary))
    return found


def _want(doc: dict[str, Any]) -> dict[str, list[tuple[str, str, str | None]]]:
    return {m: [(r["id"], r["verdict"], r.get("summary")) for r in rows]
            for m, rows in checks_by_module(doc).items() if rows}


async def test_the_store_ends_holding_exactly_the_stage_result(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="/t", agent="untouched")
        # an earlier attempt left rows of a module this attempt never reaches
        await store.grading.record_checks(run.id, "behavioural", [{"id": "old", "verdict": "pass"}],
                                          module_id="m4")
        rows = StreamedChecks(store, run.id)
        rows.on_line(b"a line of the grader that is nothing of this")
        rows.on_line(CHECKS_MARK + b"{not json")
        rows.on_line(_line("m1", [_check("m1", "a"), _check("m1", "b", "fail", summary=7)]))
        rows.on_line(_line("m2", [_check("m2", "c")]))
        rows.on_line(_line("gone", [_check("gone", "z")]))  # not in the result
        await rows.drain()
        # the streamed rows are in the store while the suite would still run
        assert (await _held(store, run.id))["m1"] == [("a", "pass", None), ("b", "fail", "7")]
        doc = _doc([_check("m1", "a"), _check("m1", "b", "fail", summary=7),
                    _check("m2", "c", "fail", summary="changed"), _check("m3", "d")],
                   ["m1", "m2", "m3", "m4"])
        await rows.finish(doc)
        assert await _held(store, run.id) == _want(doc)
        modules = await store.grading.module_results(run.id, "behavioural")
        assert [m.module_id for m in modules] == ["m1", "m2", "m3", "m4"]


async def test_the_unchanged_modules_are_not_written_again(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="/t", agent="untouched")
        rows = StreamedChecks(store, run.id)
        rows.on_line(_line("m1", [_check("m1", "a")]))
        rows.on_line(_line("m2", [_check("m2", "b")]))
        await rows.drain()
        doc = _doc([_check("m1", "a"), _check("m2", "b", "fail")], ["m1", "m2"])
        written: list[str] = []
        record = store.grading.record_checks

        async def spy(run_id: str, stage: str, checks: Any, *, module_id: str = "") -> Any:
            written.append(module_id)
            return await record(run_id, stage, checks, module_id=module_id)

        store.grading.record_checks = spy  # type: ignore[method-assign]
        await rows.finish(doc)
        assert written == ["m2"]
        assert await _held(store, run.id) == _want(doc)


async def test_a_stage_without_result_leaves_no_streamed_row(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="/t", agent="untouched")
        rows = StreamedChecks(store, run.id)
        rows.on_line(_line("m1", [_check("m1", "a")]))
        await rows.drain()
        assert await _held(store, run.id)
        await rows.abandon()
        assert await _held(store, run.id) == {}


async def test_without_a_store_nothing_is_scheduled() -> None:
    rows = StreamedChecks(None, "r")
    rows.on_line(_line("m1", [_check("m1", "a")]))  # no running loop needed: ignored
    await rows.drain()
    await rows.abandon()
    assert rows.written == {}
