"""All 20 official task manifests load: no schema problem, and only absent files besides."""

from __future__ import annotations

from pathlib import Path

from srb_tui.schema import discover_tasks, load_task


def test_all_twenty_are_discovered(official_tasks: Path) -> None:
    tasks = discover_tasks([official_tasks])
    assert len(tasks) == 20
    assert tasks == sorted(tasks)
    assert tasks[0].name == "build01-libsodium-autotools-to-cmake"


def test_schema_only_has_no_problems(official_tasks: Path) -> None:
    for task_dir in discover_tasks([official_tasks]):
        load = load_task(task_dir, schema_only=True)
        assert [str(p) for p in load.problems] == [], task_dir.name
        assert load.ok
        assert load.task is not None
        assert load.task.evaluation is not None
        assert load.task.suite is not None
        assert load.task.probe is not None
        assert load.task.scan is not None


def test_full_check_reports_only_absent_files(official_tasks: Path) -> None:
    for task_dir in discover_tasks([official_tasks]):
        load = load_task(task_dir, schema_only=False)
        kinds = {p.kind for p in load.problems}
        assert kinds == {"absent"}, (task_dir.name, [str(p) for p in load.errors])
        assert load.ok
        names = {p.file for p in load.absent}
        # Only manifests were kept, so everything else they refer to is missing.
        assert "instruction.md" in names
        assert "environment/Dockerfile" in names
        assert "tests/audit/prompt.txt" in names
        assert "tests/verification/run-candidate.sh" in names
        assert "environment/original.tar.gz" in names


def test_the_digest_kept_elsewhere_is_found(official_tasks: Path) -> None:
    # fw07 keeps original.sha256 under tests/behavioural/data/ (not copied), build01 in
    # environment/ (copied): only the former is reported absent.
    build01 = load_task(official_tasks / "build01-libsodium-autotools-to-cmake")
    fw07 = load_task(official_tasks / "fw07-graphhopper-dropwizard-to-springboot")
    assert "environment/original.sha256" not in {p.file for p in build01.absent}
    assert "environment/original.sha256" in {p.file for p in fw07.absent}


def test_counts_match_the_index(official_tasks: Path) -> None:
    # Figures from shared/reference/official-tasks/INDEX.md.
    expected = {
        "build01-libsodium-autotools-to-cmake": (6, 15, 3, 6, 21600.0),
        "fw07-graphhopper-dropwizard-to-springboot": (7, 11, 4, 6, 57600.0),
        "lang02-zlib-c-to-java": (10, 18, 3, 6, 72000.0),
        "lang05-goyaml-go-to-zig": (8, 22, 3, 6, 72000.0),
        "pf01-sqlite-wasi-port": (6, 7, 4, 6, 36000.0),
    }
    for name, (gates, modules, scan_modules, adversaries, budget) in expected.items():
        task = load_task(official_tasks / name, schema_only=True).task
        assert task is not None
        assert task.scan is not None
        assert (
            task.gate_count,
            task.module_count,
            len(task.scan.modules),
            task.adversary_count,
            task.budget_sec,
        ) == (gates, modules, scan_modules, adversaries, budget), name


def test_model_values_of_one_official_task(official_tasks: Path) -> None:
    task = load_task(official_tasks / "lang07-jsonata-js-to-typescript", schema_only=True).task
    assert task is not None and task.evaluation is not None and task.probe is not None
    assert task.category == "language-rewrite"
    assert task.state_a_description and task.state_b_description
    evaluation = task.evaluation
    assert evaluation.scoring.verification_models == 6
    assert evaluation.behavioural.options["reference"] is False
    assert evaluation.audit.option_str("prompt") == "audit/prompt.txt"
    assert evaluation.verification is not None
    assert evaluation.verification.options["adjudicator"]["model"] == "claude-opus-5"
    scope = task.probe.scope
    assert "npm install" in scope.deny_commands
    assert scope.network_allowed is False  # not written in this file: the default
    assert scope.fault_exit_codes == tuple(range(64, 79))
    assert all(a.focus for a in task.probe.adversaries)
    assert task.manifest.agent.user == "agent"
    fw01 = load_task(official_tasks / "fw01-httpbin-flask-to-asgi", schema_only=True).task
    assert fw01 is not None
    assert fw01.manifest.agent.user is None  # eight official tasks leave [agent].user out
