"""``srb import DIR`` over job directories written in the published harness's file shapes
(score.json / reward.json / stage results / telemetry.json, Harbor's config.json and
result.json), then reported beside srb's own runs; bad and partial files change nothing."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from srb_tui.store import Store

from .synth import Spec, add_run

TASK = "demo01-csvtab-python-to-node"


def _score(gate: str, modules: list[dict[str, Any]], *, stages: list[str], survived: int = 0,
           rounds: list[dict[str, Any]] | None = None, unscored: Any = None,
           score: float = 0.0, blocked: str = "") -> dict[str, Any]:
    return {
        "schema": "swerefactor.score/1", "task": TASK, "reward": score / 100, "score": score,
        "max_score": 100.0, "valid": True, "audit_gate": gate,
        "behavioural": {"points": 40.0 if score else 0.0, "rate": 1.0, "modules": modules},
        "verification": {"points": survived * 10.0, "models_total": 6,
                         "models_survived": survived, "breaks": []},
        "stages_run": stages, "blocked_by": blocked, "harness_error": "",
        "unscored": unscored or {}, "metadata": {"verification": {"rounds": rounds or []}},
    }


def _module(passed: int, total: int) -> dict[str, Any]:
    return {"id": "cli", "title": "CLI", "weight": 1.0, "rate": passed / total,
            "complete": passed == total, "status": "ok", "scored_weight": float(total),
            "checks": {"passed": passed, "failed": total - passed, "errored": 0, "skipped": 0}}


def _rounds(broken: int) -> list[dict[str, Any]]:
    return [{"adversary": f"a0{i + 1}", "outcome": "broken" if i < broken else "survived",
             "elapsed_sec": 600.0, "usage": {"model": "opus"}} for i in range(6)]


def _write(folder: Path, name: str, doc: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc) if not isinstance(doc, str) else doc)


def _job(root: Path) -> Path:
    job = root / "job-0807"
    for trial, score in (
        ("t-accepted", _score("pass", [_module(10, 10)], stages=["audit", "behavioural",
                              "verification"], survived=6, rounds=_rounds(0), score=100.0)),
        ("t-blind", _score("fail", [], stages=["audit"], blocked="audit-gate",
                           unscored={"behavioural": {"modules": [_module(10, 10)]}})),
        ("t-broken", _score("pass", [_module(10, 10)], stages=["audit", "behavioural",
                            "verification"], survived=4, rounds=_rounds(2), score=80.0)),
    ):
        _write(job / trial, "config.json", {"agent": {"name": "codex", "model_name": "gpt-x",
                                                      "kwargs": {"reasoning_effort": "high"}}})
        _write(job / trial, "result.json", {"agent_result": {"cost_usd": 1.5}})
        verifier = job / trial / "verifier"
        _write(verifier, "score.json", score)
        _write(verifier, "reward.json", {"reward": score["reward"], "score": score["score"]})
        _write(verifier, "audit.json", {"schema": "swerefactor.stage-result/1",
                                        "stage": "audit", "status": "ok"})
        _write(verifier, "telemetry.json", {"schema": "swerefactor.telemetry/1", "stage1": []})
    return job


def _count_runs(state: Path) -> int:
    async def body() -> int:
        async with await Store.open(state / "srb.sqlite3") as store:
            return await store.runs.count_runs()

    return asyncio.run(body())


def test_import_then_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    state.mkdir()

    async def own() -> None:
        async with await Store.open(state / "srb.sqlite3") as store:
            await add_run(store, Spec(TASK, "replay:reference"))

    asyncio.run(own())
    job = _job(tmp_path)
    tasks = str(Path(__file__).resolve().parents[2] / "tasks")
    assert main(["--tasks", tasks, "--state", str(state), "import", str(job)]) == 0
    assert "imported 3 run(s)" in capsys.readouterr().out
    assert _count_runs(state) == 4

    assert main(["--tasks", tasks, "--state", str(state), "report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["imported"] == 3
    funnel = {r["config"]: r for r in next(t for t in doc["tables"]
                                           if t["id"] == "table2")["rows"]}
    imported = funnel["imported:codex · gpt-x · high"]
    assert (imported["blindness"], imported["counterexample"], imported["accepted"]) == (1, 1, 1)
    assert funnel["replay:reference"]["accepted"] == 1
    board = {r["config"]: r for r in next(t for t in doc["tables"]
                                          if t["id"] == "table3")["rows"]}
    assert board["imported:codex · gpt-x · high"]["cost"] == pytest.approx(1.5)
    assert board["imported:codex · gpt-x · high"]["score"] == pytest.approx(60.0)
    classes = next(t for t in doc["tables"] if t["id"] == "table4")["rows"]
    assert [c["class"] for c in classes] == ["language-rewrite"]
    verifiers = {r["slot"]: r for r in next(t for t in doc["tables"]
                                            if t["id"] == "figure6")["rows"]}
    assert verifiers["a01"]["broken"] == 1 and verifiers["a01"]["rounds"] == 3

    # the same folders again: refused, nothing added
    assert main(["--state", str(state), "import", str(job)]) == codes.FAILED
    assert "already imported" in capsys.readouterr().err
    assert _count_runs(state) == 4


def test_bad_and_partial_files_change_nothing(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    job = _job(tmp_path)
    broken = job / "t-broken" / "verifier" / "score.json"
    doc = json.loads(broken.read_text())
    doc["valid"] = "yes"
    doc["audit_gate"] = "maybe"
    broken.write_text(json.dumps(doc))
    (job / "t-blind" / "verifier" / "reward.json").write_text('{"reward": 0.0, "score": 12}')
    (job / "t-accepted" / "result.json").write_text("{not json")
    assert main(["--state", str(state), "import", str(job)]) == codes.FAILED
    err = capsys.readouterr().err
    assert f"{broken}: key 'valid': expected a boolean, got str" in err
    assert f"{broken}: key 'audit_gate': 'maybe' is not pass, fail or not-run" in err
    assert "reward.json: key 'score': 12 disagrees with score.json's 0.0" in err
    assert f"{job / 't-accepted' / 'result.json'}: not JSON" in err
    assert "nothing imported (4 problem(s))" in err
    assert _count_runs(state) == 0

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--state", str(state), "import", str(empty)]) == codes.FAILED
    assert "no score.json anywhere below it" in capsys.readouterr().err


# Stage I votes: (gate id, required, votes pass, votes fail, samples run, samples usable)
SPLIT_VOTES = {
    "t-accepted": [("g1", True, 3, 0, 3, 3), ("g2", True, 2, 1, 3, 3), ("g3", False, 1, 2, 3, 3)],
    "t-blind": [("g1", True, 1, 2, 3, 3), ("g2", True, 3, 0, 3, 3)],
    "t-broken": [("g1", True, 3, 0, 3, 3), ("g2", True, 1, 1, 3, 2)],
}


def _audit_json(votes: list[tuple[str, bool, int, int, int, int]]) -> dict[str, Any]:
    """audit.json as the published harness writes it (a stage result whose checks carry the
    sample tally in metadata.votes)."""
    checks = []
    for gate, required, p, f, run, usable in votes:
        meta: dict[str, Any] = {"votes": {"pass": p, "fail": f}, "samples_usable": usable,
                                "samples_run": run, "title": f"gate {gate}"}
        if p == f:
            meta["tie_broken_to_pass"] = True
        check: dict[str, Any] = {"id": gate, "verdict": "fail" if f > p else "pass",
                                 "summary": "", "weight": 1.0, "metadata": meta}
        if required:
            check["required"] = True
        checks.append(check)
    return {"schema": "swerefactor.stage-result/1", "stage": "audit", "task": TASK,
            "status": "ok", "units": [], "checks": checks, "metadata": {}, "notes": []}


def _stage1(state: Path, tasks: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["--tasks", tasks, "--state", str(state), "report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = next(t for t in doc["tables"] if t["id"] == "stage1")
    return {r["measure"]: r["n"] for r in table["rows"]}


def test_imported_votes_give_the_native_stage1_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = str(Path(__file__).resolve().parents[2] / "tasks")
    job = _job(tmp_path)
    for trial, votes in SPLIT_VOTES.items():
        _write(job / trial / "verifier", "audit.json", _audit_json(votes))
    imported = tmp_path / "imported"
    imported.mkdir()
    assert main(["--tasks", tasks, "--state", str(imported), "import", str(job)]) == 0
    capsys.readouterr()

    native = tmp_path / "native"
    native.mkdir()
    audits = {"t-accepted": "pass", "t-blind": "fail", "t-broken": "pass"}

    async def own() -> None:
        async with await Store.open(native / "srb.sqlite3") as store:
            for trial, votes in SPLIT_VOTES.items():
                await add_run(store, Spec(TASK, "replay:x", audit=audits[trial],
                                          gates=[(g, p, f) for g, _r, p, f, _n, _u in votes]))

    asyncio.run(own())
    got = _stage1(imported, tasks, capsys)
    assert got == _stage1(native, tasks, capsys)
    # 7 verdicts: 3 unanimous, 1 tie (t-broken g2: 1–1, a review lost), 3 split 2:1;
    # both Stage I passes had a required gate with a dissenting sample
    assert got == {"gate verdicts": 7, "unanimous": 3, "split (majority)": 3,
                   "tied (counted pass)": 1, "runs passing Stage I": 2,
                   "passed only by majority": 2, "would pass if any dissent counted": 0,
                   "submissions that addressed the judge": 0}

    async def rows() -> list[tuple[Any, ...]]:
        async with await Store.open(imported / "srb.sqlite3") as store:
            runs = await store.runs.list_runs(limit=None)
            broken = next(r for r in runs if r.task_path.endswith("t-broken/verifier"))
            return [(o.gate_id, o.required, o.verdict, o.votes_pass, o.votes_fail,
                     o.votes_error, o.tie) for o in await store.grading.gate_outcomes(broken.id)]

    assert asyncio.run(rows()) == [("g1", True, "pass", 3, 0, 0, False),
                                   ("g2", True, "pass", 1, 1, 1, True)]


def test_a_bad_vote_tally_is_named_and_nothing_is_imported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    job = _job(tmp_path)
    audit = _audit_json(SPLIT_VOTES["t-accepted"])
    audit["checks"][1]["metadata"]["votes"]["fail"] = "one"
    audit["checks"][2]["verdict"] = "maybe"
    path = job / "t-accepted" / "verifier" / "audit.json"
    _write(path.parent, "audit.json", audit)
    assert main(["--state", str(state), "import", str(job)]) == codes.FAILED
    err = capsys.readouterr().err
    assert f"{path}: key 'checks[1].metadata.votes.fail': expected a count" in err
    assert f"{path}: key 'checks[2].verdict': 'maybe' is not pass, fail or error" in err
    assert _count_runs(state) == 0


def _slot_rounds(task: str, broken: set[str], errored: set[str] = frozenset()  # type: ignore[assignment]
                 ) -> list[dict[str, Any]]:
    """Six rounds whose ids are task-specific (``a05-<task>``) as in the published probes;
    a05 and a06 hold the same model at different efforts."""
    slots = (("a01", "gpt-5.6-sol", "high"), ("a02", "gpt-5.6-terra", "high"),
             ("a03", "gpt-5.6-luna", "max"), ("a04", "claude-sonnet-5", "high"),
             ("a05", "claude-opus-5", "medium"), ("a06", "claude-opus-5", "high"))
    return [{"adversary": f"{slot}-{task}-focus", "elapsed_sec": 60.0,
             "outcome": "broken" if slot in broken else "error" if slot in errored
             else "survived", "usage": {"model": model, "reasoning_effort": effort}}
            for slot, model, effort in slots]


def test_figure6_pools_slots_over_tasks_and_keeps_efforts_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job-slots"
    trials = (  # (trial, task, author model, breakers, errored)
        ("t1", "lang01-cmark", "claude-opus-5", {"a05", "a06"}, set()),
        ("t2", "fw01-httpbin", "claude-opus-5", {"a06"}, {"a02"}),
        ("t3", "lang01-cmark", "gpt-5.5", {"a04", "a05", "a01"}, set()),
        ("t4", "fw01-httpbin", "gpt-5.5", set(), set()),
    )
    for trial, task, author, broken, errored in trials:
        survived = 6 - len(broken) - len(errored)
        doc = _score("pass", [_module(10, 10)], stages=["audit", "behavioural", "verification"],
                     survived=survived, rounds=_slot_rounds(task, broken, errored),
                     score=40.0 + 10 * survived)
        doc["task"] = task
        _write(job / trial, "config.json", {"agent": {"name": "claude-code" if "claude"
                                                      in author else "codex",
                                                      "model_name": author}})
        _write(job / trial / "verifier", "score.json", doc)
    state = tmp_path / "state"
    state.mkdir()
    assert main(["--state", str(state), "import", str(job)]) == 0
    capsys.readouterr()
    assert main(["--state", str(state), "report", "--json"]) == 0
    tables = {t["id"]: t for t in json.loads(capsys.readouterr().out)["tables"]}

    slots = {(r["slot"], r["model"], r["effort"]): r for r in tables["figure6"]["rows"]}
    assert len(slots) == 6  # one bar per slot, not one per task-specific id
    a05 = slots[("a05", "claude-opus-5", "medium")]
    a06 = slots[("a06", "claude-opus-5", "high")]  # same model, other effort: its own bar
    assert (a05["rounds"], a05["broken"], a05["exclusive"]) == (4, 2, 0)
    assert (a06["rounds"], a06["broken"], a06["exclusive"]) == (4, 2, 1)  # t2 alone
    assert a06["rate"] == pytest.approx(50.0)
    a02 = slots[("a02", "gpt-5.6-terra", "high")]
    assert (a02["rounds"], a02["errors"]) == (3, 1)
    assert a05["verifier"] == "a05 · claude-opus-5 · medium"

    per_task = tables["figure6_adversaries"]["rows"]
    assert len(per_task) == 12  # 6 slots × 2 tasks
    cmark_a05 = next(r for r in per_task if r["adversary"] == "a05-lang01-cmark-focus")
    assert (cmark_a05["task"], cmark_a05["rounds"], cmark_a05["broken"]) == \
        ("lang01-cmark", 2, 2)

    family = {(r["verifiers"], r["authors"]): r for r in tables["figure6_family"]["rows"]}
    # own: t1 3 rounds/2 breaks, t2 3/1, t3 3/1, t4 3/0 = 12/4; other: t1 3/0, t2 2/0 (a02
    # errored, not judged), t3 3/2, t4 3/0 = 11/2
    own, other = family[("all", "their own family")], family[("all", "other families")]
    assert (own["rounds"], own["broken"]) == (12, 4)
    assert (other["rounds"], other["broken"]) == (11, 2)
    assert own["rate"] == pytest.approx(100 / 3)
    assert family[("anthropic", "its own family")]["broken"] == 3
    assert family[("anthropic", "other families")]["broken"] == 2


def test_a_problem_after_stored_batches_rolls_the_whole_import_back(tmp_path: Path) -> None:
    """Batches of one trial: the first two are written before the reader meets the third's
    problem; the one transaction is rolled back and the store holds no run."""
    from srb_tui.reports.import_job import iter_job
    from srb_tui.store.imports import ImportProblems

    job = _job(tmp_path)
    broken = job / "t-broken" / "verifier" / "score.json"  # sorted last
    doc = json.loads(broken.read_text())
    doc["valid"] = "yes"
    broken.write_text(json.dumps(doc))
    problems: list[str] = []
    yielded: list[str] = []

    def docs() -> Any:
        for trial in iter_job(job, problems):
            yielded.append(trial.source_dir)
            yield {**vars(trial), "job": "j"}

    async def body() -> tuple[str, int]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            try:
                await store.imports.import_runs(docs(), problems=problems, batch=1)
            except ImportProblems as exc:
                return str(exc.problems), await store.runs.count_runs()
            return "", await store.runs.count_runs()

    message, count = asyncio.run(body())
    assert len(yielded) == 2  # two trials were read (and stored) before the bad one
    assert "key 'valid': expected a boolean" in message and count == 0


def _long_audit(job: Path) -> dict[str, Any]:
    """Give every trial an audit.json with a 40 KB transcript (kept as a file on import)."""
    doc = {"schema": "swerefactor.stage-result/1", "stage": "audit", "status": "ok",
           "transcript": "the reviewer reads the tree " * 1500}
    for audit in job.glob("*/verifier/audit.json"):
        audit.write_text(json.dumps(doc))
    return doc


def test_a_long_stage_result_is_kept_beside_the_store_and_reads_back(tmp_path: Path) -> None:
    """Issue 23 item 6: the long text goes to a file written once (not through the WAL),
    the row names it, and every reader gets the published JSON back unchanged."""
    from srb_tui.reports.import_job import iter_job
    from srb_tui.store.grading_records import IMPORTED_FILE

    job = _job(tmp_path)
    doc = _long_audit(job)

    async def body() -> tuple[list[Any], list[Any], list[str]]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            ids = await store.imports.import_runs(
                {**vars(t), "job": "j"} for t in iter_job(job, [])
            )
            results = [
                r.result for r in await store.grading.stage_results(ids[0]) if r.stage == "audit"
            ]
            detail = await store.run_detail(ids[0])
            shown = [r.result for r in detail.stage_results if r.stage == "audit"]
            raw = [row[0] for row in await store._core.readers.fetchall(
                "SELECT result FROM stage_results WHERE stage = 'audit'")]
            return results, shown, raw

    results, shown, raw = asyncio.run(body())
    assert results == [doc] and shown == [doc]
    names = [json.loads(text)[IMPORTED_FILE] for text in raw]
    assert len(names) == 3 and all((tmp_path / name).is_file() for name in names)
    assert not list((tmp_path / "imports").glob(".staging-*"))


def test_a_rolled_back_import_leaves_no_result_files(tmp_path: Path) -> None:
    from srb_tui.reports.import_job import iter_job
    from srb_tui.store.imports import ImportProblems

    job = _job(tmp_path)
    _long_audit(job)
    broken = job / "t-broken" / "verifier" / "score.json"  # sorted last
    broken.write_text(broken.read_text().replace('"valid": true', '"valid": "yes"'))
    problems: list[str] = []

    async def body() -> int:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            with pytest.raises(ImportProblems):
                await store.imports.import_runs(
                    ({**vars(t), "job": "j"} for t in iter_job(job, problems)),
                    problems=problems,
                    batch=1,
                )
            return await store.runs.count_runs()

    assert asyncio.run(body()) == 0
    assert not [p for p in (tmp_path / "imports").rglob("*") if p.is_file()]


def test_a_long_result_is_a_link_to_the_published_file_and_outlives_it(tmp_path: Path) -> None:
    """The kept file is the published file hard-linked (same inode: its bytes are not
    written again); the job folder can go and the run still reads back; a published file
    that changed after it was read is written from the text read, not linked."""
    import os
    import shutil

    from srb_tui.reports.import_job import iter_job
    from srb_tui.store.grading_records import IMPORTED_FILE
    from srb_tui.store.imports import ResultFiles

    job = _job(tmp_path)
    doc = _long_audit(job)
    published = {(p.stat().st_ino, p.stat().st_dev) for p in job.glob("*/verifier/audit.json")}

    async def imported() -> tuple[list[str], list[str]]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            ids = await store.imports.import_runs(
                {**vars(t), "job": "j"} for t in iter_job(job, [])
            )
            raw = [row[0] for row in await store._core.readers.fetchall(
                "SELECT result FROM stage_results WHERE stage = 'audit'")]
            return ids, raw

    ids, raw = asyncio.run(imported())
    kept = [tmp_path / json.loads(text)[IMPORTED_FILE] for text in raw]
    assert {(p.stat().st_ino, p.stat().st_dev) for p in kept} == published
    shutil.rmtree(job)

    async def read_back() -> list[Any]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            return [
                r.result for r in await store.grading.stage_results(ids[0]) if r.stage == "audit"
            ]

    assert asyncio.run(read_back()) == [doc]

    # changed after it was read: the text read is written, the changed file not linked
    job = _job(tmp_path / "again")
    _long_audit(job)
    trial = next(iter_job(job, []))
    status, text, source = trial.stage_results["audit"]
    Path(source.path).write_text("{}")
    files = ResultFiles(tmp_path / "again")
    ref = files.keep("r-x", "audit", text, source)
    dest = files.staging / "r-x.audit.json"
    assert json.loads(ref)[IMPORTED_FILE].endswith("/r-x.audit.json")
    assert dest.read_text() == text and os.stat(dest).st_ino != os.stat(source.path).st_ino
    assert status == "ok"


def test_gc_sweeps_import_folders_no_row_names_and_keeps_the_named(tmp_path: Path) -> None:
    """A crash between the rename and the commit leaves a folder no row names; a died
    import leaves its staging folder: the sweep removes both once they are old enough and
    never a folder a run reads (nor a young one, which may be an import committing now)."""
    from srb_tui.reports.import_job import iter_job

    job = _job(tmp_path)
    doc = _long_audit(job)
    imports = tmp_path / "imports"

    async def body() -> tuple[list[str], list[str], list[Any]]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            ids = await store.imports.import_runs(
                {**vars(t), "job": "j"} for t in iter_job(job, [])
            )
            (named,) = [p.name for p in imports.iterdir()]
            for orphan in ("2026-01-01-deadbeef0000", ".staging-2026-01-01-0123456789ab"):
                (imports / orphan / "r-x").mkdir(parents=True)
                (imports / orphan / "r-x" / "audit.json").write_text("{}")
            young = await store.imports.sweep_import_files(older_than_sec=3600)
            old = await store.imports.sweep_import_files(older_than_sec=0)
            read = [
                r.result for r in await store.grading.stage_results(ids[0]) if r.stage == "audit"
            ]
            assert sorted(p.name for p in imports.iterdir()) == [named]
            return young, old, read

    young, old, read = asyncio.run(body())
    assert young == [] and sorted(old) == [".staging-2026-01-01-0123456789ab",
                                           "2026-01-01-deadbeef0000"]
    assert read == [doc]


def test_an_atif_trajectory_beside_the_trial_gives_the_agents_cost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``srb import`` reads an exported trial's ATIF trajectory back where it can: the
    agent's cost when result.json names none; a mistyped cost is a named problem."""
    job = tmp_path / "job"
    score = _score("pass", [_module(10, 10)], stages=["audit", "behavioural", "verification"],
                   survived=6, rounds=_rounds(0), score=100.0)
    for trial, cost in (("t1", 2.25), ("t2", "lots")):
        _write(job / trial, "config.json", {"agent": {"name": "claude-code",
                                                      "model_name": "opus"}})
        _write(job / trial, "result.json", {"agent_result": {"cost_usd": None}})
        _write(job / trial / "agent", "trajectory.json", {
            "schema_version": "ATIF-v1.8", "agent": {"name": "claude-code", "version": "2"},
            "steps": [{"step_id": 1, "source": "user", "message": "port it"}],
            "final_metrics": {"total_cost_usd": cost}})
        _write(job / trial / "verifier", "score.json", score)
    state = tmp_path / "state"
    assert main(["--state", str(state), "import", str(job)]) == codes.FAILED
    assert "final_metrics.total_cost_usd': expected a number" in capsys.readouterr().err
    shutil.rmtree(job / "t2")
    assert main(["--state", str(state), "import", str(job)]) == codes.OK
    capsys.readouterr()
    assert main(["--state", str(state), "report", "--json", "--table", "table3"]) == codes.OK
    row = json.loads(capsys.readouterr().out)["tables"][0]["rows"][0]
    assert row["cost"] == pytest.approx(2.25)


def test_exported_trials_keep_their_configurations_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trials srb exported name the run's agent spec (config.json ``srb.agent``): two
    configurations of one harness import as two Table 2 rows, not one pooled row."""
    job = tmp_path / "job"
    accepted = _score("pass", [_module(10, 10)], stages=["audit", "behavioural",
                                                         "verification"],
                      survived=6, rounds=_rounds(0), score=100.0)
    broken = _score("pass", [_module(10, 10)], stages=["audit", "behavioural",
                                                       "verification"],
                    survived=4, rounds=_rounds(2), score=80.0)
    for trial, spec, score in (("r1", "replay:reference", accepted),
                               ("r2", "replay:subtle", broken),
                               ("r3", None, accepted)):
        config: dict[str, Any] = {"agent": {"name": "replay", "model_name": None}}
        if spec:
            config["srb"] = {"agent": spec}
        _write(job / trial, "config.json", config)
        _write(job / trial / "verifier", "score.json", score)
    state = tmp_path / "state"
    assert main(["--state", str(state), "import", str(job)]) == codes.OK
    capsys.readouterr()
    assert main(["--state", str(state), "report", "--json", "--table", "table2"]) == codes.OK
    rows = {r["config"]: r for r in json.loads(capsys.readouterr().out)["tables"][0]["rows"]}
    assert set(rows) == {"imported:replay:reference", "imported:replay:subtle",
                         "imported:replay"}
    assert rows["imported:replay:reference"]["accepted"] == 1
    assert rows["imported:replay:subtle"]["counterexample"] == 1
