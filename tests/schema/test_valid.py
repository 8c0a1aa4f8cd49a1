"""The minimal valid task loads clean, its models are typed and immutable, and the loader's
entry points (discovery, validate_paths, [srb.state_a]) behave."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from srb_tui.schema import (
    Task,
    discover_tasks,
    load_task,
    validate_paths,
)
from tests.schema.corpus import BROKEN, VALID

MINIMAL = VALID / "minimal"


def copy_minimal(tmp_path: Path, name: str = "minimal") -> Path:
    target = tmp_path / name
    shutil.copytree(MINIMAL, target)
    if name != "minimal":
        for manifest in (target / "tests").rglob("*.toml"):
            text = manifest.read_text()
            manifest.write_text(text.replace('task = "minimal"', f'task = "{name}"'))
    return target


def loaded(path: Path, *, schema_only: bool = False) -> Task:
    load = load_task(path, schema_only=schema_only)
    assert [str(p) for p in load.problems] == []
    assert load.task is not None
    return load.task


def test_minimal_task_has_no_problem_at_all() -> None:
    load = load_task(MINIMAL)
    assert load.problems == ()
    assert load.ok and load.errors == () and load.absent == ()
    assert load.task_id == "minimal"


def test_minimal_task_model() -> None:
    task = loaded(MINIMAL)
    assert task.id == "minimal"
    assert task.instruction == "Replace the Makefile with a CMake build.\n"
    assert task.category == "build-toolchain"
    assert task.state_a_description == "a C program built by make"
    assert task.state_b_description == "the same program built by CMake"
    assert task.budget_sec == 3600.0
    assert (task.gate_count, task.required_gate_count) == (2, 1)
    assert (task.module_count, task.adversary_count) == (2, 2)
    assert task.title == "mini: make to CMake"
    assert task.gate_ids == ("make_retired", "readme_updated")
    assert task.module_ids == ("build", "run")
    assert task.adversary_ids == ("a01-output", "a02-build")

    manifest = task.manifest
    assert manifest.artifacts[0].exclude == ("build", "*.o", "__pycache__")
    assert manifest.agent.network_mode == "no-network"
    assert manifest.verifier_timeout_sec == 4000.0
    assert manifest.environment["cpus"] == 2

    evaluation = task.evaluation
    assert evaluation is not None
    assert [s.name for s in evaluation.enabled_stages] == ["audit", "behavioural", "verification"]
    assert evaluation.stage_budget_sec == 3800.0
    assert evaluation.audit.options["samples"] == 3
    assert evaluation.scoring.points_per_survived_model == 30.0

    suite = task.suite
    assert suite is not None
    build, run = suite.modules
    assert (build.command, build.dir, build.timeout_sec) == (None, "modules/build", 300.0)
    assert (run.command, run.timeout_sec, run.weight) == (("python3", "run.py"), 120.0, 2.0)
    assert suite.env["MINI"] == "1"

    probe = task.probe
    assert probe is not None
    assert probe.adversaries[0].focus == "the program's output"
    assert probe.adversaries[1].focus == ""
    assert probe.scope.reruns == 3


def test_models_are_immutable() -> None:
    task = loaded(MINIMAL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        task.manifest.metadata["category"] = "x"  # type: ignore[index]
    assert task.evaluation is not None
    adjudicator = task.evaluation.verification.options["adjudicator"]  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        adjudicator["model"] = "x"
    assert isinstance(task.manifest.artifacts, tuple)
    assert isinstance(task.manifest.keywords, tuple)


def test_state_a_table_replaces_the_archive(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    (task_dir / "environment/original.tar.gz").unlink()
    (task_dir / "environment/original.sha256").unlink()
    text = (task_dir / "task.toml").read_text()
    text += (
        '\n[srb.state_a]\nkind = "pypi"\nspec = "sqlparse==0.5.3"\nsha256 = "' + "a" * 64 + '"\n'
    )
    (task_dir / "task.toml").write_text(text)
    task = loaded(task_dir)
    assert task.state_a is not None
    assert (task.state_a.kind, task.state_a.spec) == ("pypi", "sqlparse==0.5.3")


def test_without_state_a_table_the_archive_is_reported_absent(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    (task_dir / "environment/original.tar.gz").unlink()
    load = load_task(task_dir)
    assert [str(p) for p in load.problems] == [
        "environment/original.tar.gz: file is absent "
        "(State A, unless task.toml declares [srb.state_a])"
    ]


def test_bad_state_a_table_is_an_error_with_a_line(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    text = (task_dir / "task.toml").read_text() + '\n[srb.state_a]\nkind = "pipy"\n'
    (task_dir / "task.toml").write_text(text)
    load = load_task(task_dir, schema_only=True)
    assert not load.ok
    assert load.task is not None and load.task.state_a is None
    keys = {p.key for p in load.errors}
    assert "srb.state_a.kind" in keys and "srb.state_a.sha256" in keys
    assert all(p.file == "task.toml" and p.line is not None for p in load.errors)


def test_a_copy_under_another_name_must_rename_its_task_fields(tmp_path: Path) -> None:
    renamed = copy_minimal(tmp_path, "renamed-task")
    assert loaded(renamed).id == "renamed-task"
    stale = tmp_path / "stale"
    shutil.copytree(MINIMAL, stale)
    files = {p.file for p in load_task(stale, schema_only=True).errors}
    assert files == {
        "tests/evaluation.toml",
        "tests/behavioural/suite.toml",
        "tests/audit/scan.toml",
        "tests/verification/probe.toml",
    }


def test_missing_task_toml_and_evaluation(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    load = load_task(empty)
    assert load.task is None
    assert [str(p) for p in load.problems] == [
        "task.toml: file is missing: a task directory holds task.toml"
    ]
    task_dir = copy_minimal(tmp_path)
    (task_dir / "tests/evaluation.toml").unlink()
    load = load_task(task_dir, schema_only=True)
    assert load.task is not None and load.task.evaluation is None
    assert [str(p) for p in load.problems] == [
        "tests/evaluation.toml: file is missing: every task needs its stages, scoring and gates"
    ]


def test_missing_suite_is_an_error_missing_scan_is_absent(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    (task_dir / "tests/behavioural/suite.toml").unlink()
    (task_dir / "tests/audit/scan.toml").unlink()
    load = load_task(task_dir)
    assert [(p.kind, p.file) for p in load.problems if p.file.endswith(".toml")] == [
        ("error", "tests/behavioural/suite.toml"),
        ("absent", "tests/audit/scan.toml"),
    ]


def test_not_utf8_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    (task_dir / "task.toml").write_bytes(b'name = "\xff\xfe"\n')
    load = load_task(task_dir)
    assert load.task is None
    assert len(load.problems) == 1
    assert str(load.problems[0]).startswith("task.toml: not UTF-8 text (")


def test_disabled_verification_needs_no_probe(tmp_path: Path) -> None:
    task_dir = copy_minimal(tmp_path)
    evaluation = task_dir / "tests/evaluation.toml"
    evaluation.write_text(
        evaluation.read_text().replace(
            'probe = "verification/probe.toml"',
            'probe = "verification/probe.toml"\nenabled = false',
        )
    )
    shutil.rmtree(task_dir / "tests/verification")
    task = loaded(task_dir)
    assert task.evaluation is not None and task.evaluation.verification is not None
    assert not task.evaluation.verification.enabled
    assert [s.name for s in task.evaluation.enabled_stages] == ["audit", "behavioural"]
    assert task.probe is None


def test_discover_tasks(tmp_path: Path) -> None:
    assert discover_tasks([MINIMAL]) == [MINIMAL]
    found = discover_tasks([BROKEN, BROKEN, BROKEN / "wrong-type"])
    assert len(found) == len({p.name for p in BROKEN.iterdir() if p.is_dir()})
    assert found == sorted(found)
    assert discover_tasks([tmp_path / "nowhere"]) == []


def test_validate_paths_reports_a_path_without_tasks(tmp_path: Path) -> None:
    loads = validate_paths([MINIMAL, tmp_path / "nowhere", MINIMAL], schema_only=True)
    assert [load.ok for load in loads] == [True, False]
    assert loads[1].task is None
    assert "no task here: does not exist" in str(loads[1].problems[0])
