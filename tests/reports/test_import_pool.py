"""``srb import`` with reader processes (issue 23 item 6): the trials are parsed in forked
readers while the importing process stores them; what is stored is what one reader stores,
a long stage result still links the published file, and a published file replaced between
its read and its link is refused with nothing stored."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from srb_tui.reports.import_job import POOL_MIN, iter_job, reader_pool
from srb_tui.store import Store
from srb_tui.store.grading_records import IMPORTED_FILE
from srb_tui.store.imports import ImportProblems

from .test_import import _job, _long_audit

TRIALS = POOL_MIN + 4


def _big_job(root: Path) -> tuple[Path, dict[str, Any]]:
    """``TRIALS`` trials (the three of test_import's job, copied under other names), each
    with a 40 KB audit.json (long: kept as a file)."""
    seed = _job(root / "seed")
    doc = _long_audit(seed)
    job = root / "job-pool"
    names = sorted(p.name for p in seed.iterdir())
    for n in range(TRIALS):
        shutil.copytree(seed / names[n % len(names)], job / f"trial-{n:03d}-{names[n % 3]}")
    return job, doc


def _stored(state: Path) -> list[tuple[Any, ...]]:
    """Per imported trial in source order: its score, validity, gate tallies, stage
    results read back, rounds and the published inode its audit file is."""
    async def body() -> list[tuple[Any, ...]]:
        async with await Store.open(state / "srb.sqlite3") as store:
            rows = await store._core.readers.fetchall(
                "SELECT r.id, i.source_dir, r.score, r.valid FROM runs r JOIN imported_runs i"
                " ON i.run_id = r.id ORDER BY i.source_dir")
            out = []
            for rid, source, score, valid in rows:
                results = {r.stage: r.result for r in await store.grading.stage_results(rid)}
                raw = await store._core.readers.fetchall(
                    "SELECT result FROM stage_results WHERE run_id = ? AND stage = 'audit'", (rid,)
                )
                kept = state / json.loads(raw[0][0])[IMPORTED_FILE]
                rounds = await store._core.readers.fetchall(
                    "SELECT adversary_id, status FROM adversary_rounds"
                    " WHERE run_id = ? ORDER BY adversary_id",
                    (rid,),
                )
                out.append((Path(source).parent.name, score, valid, results,
                            [tuple(r) for r in rounds], kept.stat().st_ino))
            return out

    return asyncio.run(body())


def test_reader_processes_store_what_one_reader_stores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job, doc = _big_job(tmp_path)
    published = {p.parent.parent.name: p.stat().st_ino for p in job.glob("*/verifier/audit.json")}
    stored = {}
    for jobs in (1, 3):
        state = tmp_path / f"state-{jobs}"
        assert main(["--state", str(state), "import", "--jobs", str(jobs), str(job)]) == 0
        assert f"imported {TRIALS} run(s)" in capsys.readouterr().out
        stored[jobs] = _stored(state)
    one, pooled = stored[1], stored[3]
    assert len(pooled) == TRIALS
    strip = [row[:-1] for row in one]
    assert [row[:-1] for row in pooled] == strip
    assert all(row[3]["audit"] == doc for row in pooled)
    # the long audit result is the published file itself in both stores
    assert [row[-1] for row in pooled] == [published[row[0]] for row in pooled]
    assert [row[-1] for row in one] == [row[-1] for row in pooled]


def test_the_readers_do_not_send_the_long_texts_back(tmp_path: Path) -> None:
    """With a pool, a long stage result comes back as None (the file is linked, not its
    text shipped between processes); short ones come back as read."""
    job, _doc = _big_job(tmp_path)
    problems: list[str] = []
    with reader_pool(2) as pool:
        assert pool is not None
        trials = list(iter_job(job, problems, pool=pool))
    assert not problems and len(trials) == TRIALS
    assert {t.stage_results["audit"][1] for t in trials} == {None}
    assert all(t.telemetry and json.loads(t.telemetry)["stage1"] == [] for t in trials)
    # the same job read in this process carries the texts
    alone = list(iter_job(job, []))
    assert all(json.loads(t.stage_results["audit"][1] or "")["stage"] == "audit"
               for t in alone)


def test_a_file_replaced_after_its_read_is_refused_and_nothing_is_stored(
        tmp_path: Path) -> None:
    job, _doc = _big_job(tmp_path)
    problems: list[str] = []
    replaced: list[str] = []

    def docs(pool: Any) -> Iterator[dict[str, Any]]:
        for n, trial in enumerate(iter_job(job, problems, pool=pool)):
            if n == TRIALS - 2:  # read by a reader; replaced (by rename) before its link
                path = trial.stage_results["audit"][2].path
                Path(path + ".new").write_text(json.dumps({"stage": "audit", "forged": 1}))
                os.replace(path + ".new", path)
                replaced.append(path)
            yield {**vars(trial), "job": "j"}

    async def body(pool: Any) -> tuple[str, int]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            try:
                await store.imports.import_runs(docs(pool), problems=problems, batch=4)
            except ImportProblems as exc:
                return "; ".join(exc.problems), await store.runs.count_runs()
            return "", await store.runs.count_runs()

    with reader_pool(2) as pool:
        message, count = asyncio.run(body(pool))
    assert replaced and message == f"{replaced[0]}: changed while it was imported"
    assert count == 0
    assert not [p for p in (tmp_path / "imports").rglob("*") if p.is_file()]


def test_a_negative_jobs_count_is_a_usage_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    job = _job(tmp_path)
    assert main(["--state", str(tmp_path / "s"), "import", "--jobs", "-2", str(job)]) == \
        codes.USAGE
    assert "--jobs -2" in capsys.readouterr().err
    assert not (tmp_path / "s" / "srb.sqlite3").exists()


def test_a_reader_that_dies_is_named_and_nothing_is_imported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader process killed mid-job (out of memory, a signal) fails the import with a
    message naming the directory, rather than hanging; the store gets no run."""
    from srb_tui.reports import importer

    job, _doc = _big_job(tmp_path)
    victim = sorted(job.rglob("score.json"))[7]
    real = importer.read_trial

    def dies_on_the_victim(path: Path, root: Path, problems: list[str]) -> Any:
        if path == victim:
            os._exit(9)  # in the forked reader: as a kill would end it
        return real(path, root, problems)

    monkeypatch.setattr(importer, "read_trial", dies_on_the_victim)  # inherited by the fork
    state = tmp_path / "state"
    assert main(["--state", str(state), "import", "--jobs", "2", str(job)]) == codes.INFRA
    err = capsys.readouterr().err
    assert f"{job}: a reader process died" in err and "nothing imported" in err

    async def count() -> int:
        async with await Store.open(state / "srb.sqlite3") as store:
            return await store.runs.count_runs()

    assert asyncio.run(count()) == 0


def test_the_readers_run_a_bounded_window_ahead_of_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However slow the consumer, no more than POOL_AHEAD chunks are parsed and waiting:
    memory is bounded by the window, not by the job."""
    from srb_tui.reports import import_job

    monkeypatch.setattr(import_job, "POOL_CHUNK", 1)
    monkeypatch.setattr(import_job, "POOL_AHEAD", 3)
    job, _doc = _big_job(tmp_path)
    submitted: list[int] = []
    worst = 0
    with reader_pool(2) as pool:
        assert pool is not None
        real_submit = pool.submit

        def counting(fn: Any, *args: Any) -> Any:
            submitted.append(1)
            return real_submit(fn, *args)

        monkeypatch.setattr(pool, "submit", counting)
        for taken, _trial in enumerate(iter_job(job, [], pool=pool), start=1):
            worst = max(worst, len(submitted) - taken)
    assert len(submitted) == TRIALS
    assert worst == 2  # the trial being handed over plus two more in flight, never more
