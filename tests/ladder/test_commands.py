"""``srb tasks record`` (identity run) and ``srb eval`` through their handlers, on a real
engine. The handlers run their own event loop, so these tests are plain functions."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.commands import grading
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.store import Store

from ..conftest import BUILTIN_TASKS, DEMO_TASK

pytestmark = pytest.mark.docker


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="srb")
    sub = parser.add_subparsers(dest="command")
    grading.add_eval_parser(sub)
    tasks = sub.add_parser("tasks").add_subparsers(dest="tasks_command")
    grading.add_record_parser(tasks)
    return parser.parse_args(list(argv))


def run_handler(args: argparse.Namespace, settings: Settings) -> int:
    code: int = args.handler(args, settings, Output(json_mode=getattr(args, "json", False)))
    return code


def test_identity_run_scores_state_a_one_on_every_module(
    builtin_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_handler(
        parse("tasks", "record", "demo01-csvtab-python-to-node", "--json"), builtin_settings
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    assert doc["ok"] is True and doc["failing"] == []
    assert [(m["id"], m["status"], m["rate"]) for m in doc["modules"]] == [
        ("formats", "ok", 1.0), ("unicode", "ok", 1.0), ("inputs", "ok", 1.0),
        ("options", "ok", 1.0),
    ]  # fmt: skip
    assert all(m["scored"] > 0 and m["passed"] == m["scored"] for m in doc["modules"])
    assert doc["image"].endswith("-verification:latest")
    assert Path(doc["record"]).is_file()


def test_record_refuses_a_task_whose_expectations_are_wrong(
    tmp_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_dir = tmp_path / "tasks" / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task_dir, ignore=shutil.ignore_patterns("submissions"))
    expected = task_dir / "tests" / "behavioural" / "data" / "expected" / "formats.json"
    data = json.loads(expected.read_text())
    first = next(iter(data["cases"]))
    data["cases"][first]["stdout"] += "a line State A never prints\n"
    expected.write_text(json.dumps(data))
    settings = Settings(task_roots=(tmp_path / "tasks",), state_dir=state_dir)
    code = run_handler(parse("tasks", "record", DEMO_TASK.name, "--json"), settings)
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["ok"] is False and doc["failing"] == ["formats"]
    rates = {m["id"]: m["rate"] for m in doc["modules"]}
    assert rates["formats"] < 1.0 and rates["options"] == 1.0


async def _stored_run(settings: Settings, submission: str) -> str:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(
            task_id=DEMO_TASK.name, task_path=str(DEMO_TASK), agent="replay"
        )
        for status in ("preparing", "agent", "collecting"):
            await store.runs.transition(run.id, status)
    shutil.copytree(
        DEMO_TASK / "submissions" / submission, settings.runs_dir / run.id / "submission"
    )
    return run.id


def test_eval_grades_then_regrades_one_stage(
    builtin_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert BUILTIN_TASKS in builtin_settings.task_roots
    run_id = asyncio.run(_stored_run(builtin_settings, "untouched"))
    code = run_handler(parse("eval", run_id, "--json"), builtin_settings)
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["run"] == run_id and doc["score"] == 0.0 and doc["valid"] is True
    assert doc["audit_gate"] == "fail" and doc["behavioural"]["complete"] is True
    run_dir = builtin_settings.runs_dir / run_id
    assert (run_dir / "reward.json").is_file()
    first_audit = json.loads((run_dir / "audit.json").read_text())

    code = run_handler(parse("eval", run_id, "--stage", "audit", "--json"), builtin_settings)
    again = json.loads(capsys.readouterr().out)
    assert code == 0 and again["score"] == 0.0 and again["audit_gate"] == "fail"
    second_audit = json.loads((run_dir / "audit.json").read_text())
    assert second_audit["started_at"] != first_audit["started_at"]  # re-run, not re-read

    async def transitions() -> list[str]:
        async with await Store.open(builtin_settings.db_path) as store:
            return [t.to_status for t in await store.runs.transitions(run_id)]

    assert asyncio.run(transitions())[4:] == [
        "audit", "behavioural", "scored", "audit", "scored",
    ]  # fmt: skip


def test_eval_names_what_is_missing(
    builtin_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_handler(parse("eval", "r-20260101-000000-abcd"), builtin_settings)
    assert code == codes.NOT_FOUND
    assert "no store" in capsys.readouterr().err
    run_id = asyncio.run(_stored_run(builtin_settings, "untouched"))
    shutil.rmtree(builtin_settings.runs_dir / run_id / "submission")
    code = run_handler(parse("eval", run_id), builtin_settings)
    err = capsys.readouterr().err
    assert code == codes.NOT_FOUND and "no collected submission" in err and run_id in err
