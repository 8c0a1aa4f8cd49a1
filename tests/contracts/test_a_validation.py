"""`srb tasks validate` makes the published tool's checks, each naming file and key
(issue 11 point 8; the probe's fuzz_entry is issue 10's leftover)."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from srb_tui.schema.problems import Problem
from srb_tui.schema.published import validate_task

FIXTURE = Path(__file__).resolve().parent / "fixture" / "checkout" / "tasks"
TASK = "ca01-contracts-fixture"

PROBE = """schema = "swerefactor.verification-probe/1"
task = "ca01-contracts-fixture"
prompt = "{prompt}"
candidate_command = ["bash", "/tests/verification/run-candidate.sh"]

[scope]
allow = ["what the program prints"]

[metadata]
fuzz_seeds = "data/seeds"
fuzz_entry = "{entry}"
"""
ADVERSARY = """
[[adversary]]
id = "a0{n}"
model = "{model}"
driver = "{driver}"
budget_sec = 60
"""


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    dest = tmp_path / TASK
    shutil.copytree(FIXTURE / TASK, dest)
    return dest


def found(task_dir: Path) -> list[tuple[str, str, str, str]]:
    """The problems, but the one warning the fixture carries by design: its build modules
    start submission code themselves (issue 21; test_the_fixture_is_clean sees it)."""
    load = validate_task(task_dir)
    assert load.task is not None
    return [(p.kind, p.file, p.key, p.message) for p in load.problems
            if not p.file.startswith("environment/original") and not _outside_sandbox(p)]


def _outside_sandbox(problem: Problem) -> bool:
    return problem.kind == "warning" and problem.key == "module" \
        and "start submission code themselves" in problem.message


def test_the_fixture_is_clean(task_dir: Path) -> None:
    assert found(task_dir) == []
    load = validate_task(task_dir)
    [warning] = [p for p in load.problems if _outside_sandbox(p)]
    assert "build, go-only" in warning.message


def test_dockerignore_and_score_py(task_dir: Path) -> None:
    (task_dir / "tests" / "behavioural" / ".dockerignore").unlink()
    (task_dir / "score.py").unlink()
    got = {(kind, file, key) for kind, file, key, _ in found(task_dir)}
    assert got == {("absent", "tests/behavioural/.dockerignore", "stages.behavioural.context"),
                   ("absent", "score.py", "")}


def test_gates_must_reach_the_prompt(task_dir: Path) -> None:
    prompt = task_dir / "tests" / "audit" / "prompt.txt"
    prompt.write_text("Review {{task}}.\n")
    [(kind, file, key, message)] = found(task_dir)
    assert (kind, file, key) == ("error", "tests/audit/prompt.txt", "stages.audit.prompt")
    assert "no {{gates}}" in message and "migrated" in message
    prompt.write_text("Review {{task}}: answer `migrated`.\n")
    assert found(task_dir) == [], "naming every gate id is enough"


def test_a_declared_scan_needs_findings(task_dir: Path) -> None:
    evaluation = task_dir / "tests" / "evaluation.toml"
    evaluation.write_text(evaluation.read_text().replace(
        'context = "audit"\n', 'context = "audit"\nscan = "audit/scan.toml"\n'))
    (task_dir / "tests" / "audit" / "lib").mkdir()
    (task_dir / "tests" / "audit" / "modules" / "s").mkdir(parents=True)
    (task_dir / "tests" / "audit" / "modules" / "s" / "run.sh").write_text("true\n")
    (task_dir / "tests" / "audit" / "scan.toml").write_text(
        'schema = "swerefactor.scan-suite/1"\ntask = "ca01-contracts-fixture"\n'
        '[[module]]\nid = "s"\n')
    [(kind, file, key, message)] = found(task_dir)
    assert (kind, file, key) == ("error", "tests/audit/prompt.txt", "stages.audit.scan")
    assert "{{findings}}" in message
    prompt = task_dir / "tests" / "audit" / "prompt.txt"
    prompt.write_text(prompt.read_text() + "{{findings}}\n")
    assert found(task_dir) == []


def _verification(task_dir: Path, *, prompt: str, entry: str, pairs: list[tuple[str, str]],
                  archive: dict[str, bytes]) -> None:
    folder = task_dir / "tests" / "verification"
    (folder / "data" / "seeds").mkdir(parents=True)
    (folder / "prompt.txt").unlink()
    (task_dir / "tests" / "verification.txt").write_text("find a difference\n")
    body = PROBE.format(prompt=prompt, entry=entry) + "".join(
        ADVERSARY.format(n=n, model=m, driver=d) for n, (m, d) in enumerate(pairs))
    (folder / "probe.toml").write_text(body)
    with tarfile.open(task_dir / "environment" / "original.tar.gz", "w:gz") as tar:
        for name, data in archive.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_models_drivers_probe_prompt_and_fuzz_entry(task_dir: Path) -> None:
    pairs = [("claude-opus-5", "anthropic"), ("gpt-5.6-sol", "openai"),
             ("gpt-5.6-luna", "anthropic"), ("claude-sonnet-5", "openai"),
             ("", "openai"), ("scripted", "scripted")]
    _verification(task_dir, prompt="verification.txt", entry="bin/missing", pairs=pairs,
                  archive={"bin/tool": b"#!/bin/sh\n"})
    got = [(kind, file, key, message) for kind, file, key, message in found(task_dir)
           if file.startswith("tests/verification")]
    keys = {(kind, key): message for kind, _file, key, message in got}
    assert set(keys) == {("error", "adversary[2] a02"), ("error", "adversary[3] a03"),
                         ("error", "adversary[4] a04"), ("warning", "prompt"),
                         ("error", "metadata.fuzz_entry")}, got
    assert "is a openai model but the driver is 'anthropic'" in keys[("error", "adversary[2] a02")]
    assert "needs a model" in keys[("error", "adversary[4] a04")]
    assert "relative to the probe's own folder" in keys[("warning", "prompt")]
    assert "'bin/missing' is not a file of State A" in keys[("error", "metadata.fuzz_entry")]
    assert all(file == "tests/verification/probe.toml" for _k, file, _key, _m in got)


def test_an_adversary_driver_srb_cannot_run_is_named(task_dir: Path) -> None:
    """issue 25: any driver string used to validate and the run then ended invalid at
    Stage III; validate names a driver srb cannot run, with the ones it can (the real
    clients claude-code and codex among them)."""
    pairs = [("gemini-3", "gemini-cli"), ("gpt-5.6-sol", "mini-swe-agent"),
             ("claude-opus-5", "antropic"), ("gpt-5.6-sol", "openai"), ("fuzz", "fuzz"),
             ("claude-opus-5", "claude-code")]
    _verification(task_dir, prompt="prompt.txt", entry="bin/tool", pairs=pairs,
                  archive={"bin/tool": b"#!/bin/sh\n"})
    keys = {(kind, key): message for kind, file, key, message in found(task_dir)
            if file == "tests/verification/probe.toml"}
    assert set(keys) == {("error", "adversary[0] a00"), ("error", "adversary[1] a01"),
                         ("error", "adversary[2] a02")}, keys
    assert keys[("error", "adversary[0] a00")] == (
        "driver 'gemini-cli' is not one this srb can run as a Stage III adversary; "
        "choose one of fuzz, anthropic, openai, scripted, claude-code, codex")
    assert "'mini-swe-agent'" in keys[("error", "adversary[1] a01")]
    assert "'antropic'" in keys[("error", "adversary[2] a02")]


def test_the_runnable_drivers_are_the_drivers_srb_has() -> None:
    from srb_tui.drivers.registry import DRIVERS
    from srb_tui.schema.published import ADVERSARY_DRIVERS
    from srb_tui.service.grading.stages.client_lane import CLIENT_DRIVERS

    assert set(ADVERSARY_DRIVERS) == {"fuzz", *DRIVERS, *CLIENT_DRIVERS}


def test_fuzz_entry_outside_the_tree(task_dir: Path) -> None:
    _verification(task_dir, prompt="prompt.txt", entry="../escape",
                  pairs=[("scripted", "scripted")] * 6, archive={"bin/tool": b"x"})
    (task_dir / "tests" / "verification" / "prompt.txt").write_text("find it\n")
    got = [(kind, key, message) for kind, file, key, message in found(task_dir)
           if file == "tests/verification/probe.toml"]
    assert got == [("error", "metadata.fuzz_entry",
                    "'../escape' must be a path inside the tree (e.g. bin/tool) or under "
                    "/workspace/repo/")]
    probe = task_dir / "tests" / "verification" / "probe.toml"
    probe.write_text(probe.read_text().replace("../escape", "/workspace/repo/bin/tool"))
    assert [p for p in found(task_dir) if p[1] == "tests/verification/probe.toml"] == []


@pytest.mark.parametrize(("build", "script", "expected"), [
    ('"fuzz-build.sh"', True, []),
    ('"fuzz-build.sh"', False, [("absent", "tests/verification/fuzz-build.sh",
                                 "metadata.fuzz_build"),
                                ("error", "tests/verification/probe.toml", "metadata.fuzz_entry")]),
    ('["sh", "build.sh", "stage"]', True, [("error", "tests/verification/probe.toml",
                                            "metadata.fuzz_build"),
                                           ("error", "tests/verification/probe.toml",
                                            "metadata.fuzz_entry")]),
    (None, True, [("error", "tests/verification/probe.toml", "metadata.fuzz_entry")]),
], ids=["script", "script-missing", "command-list", "no-build"])
def test_fuzz_entry_a_fuzz_build_makes(
    task_dir: Path, build: str | None, script: bool, expected: list[tuple[str, str, str]]
) -> None:
    """A fuzz_entry that only a build creates is accepted when fuzz_build names a script
    under the probe's folder (issue 23 item 4); the list form and a missing script are not."""
    _verification(task_dir, prompt="prompt.txt", entry="stage/bin/tool",
                  pairs=[("scripted", "scripted")] * 6, archive={"build.sh": b"#!/bin/sh\n"})
    folder = task_dir / "tests" / "verification"
    (folder / "prompt.txt").write_text("find it\n")
    if script:
        (folder / "fuzz-build.sh").write_text("sh build.sh stage\n")
    if build is not None:
        probe = folder / "probe.toml"
        text = probe.read_text()
        probe.write_text(text.replace('fuzz_entry = "stage/bin/tool"\n',
                                      f'fuzz_entry = "stage/bin/tool"\nfuzz_build = {build}\n'))
    got = [(kind, file, key) for kind, file, key, _message in found(task_dir)
           if file.startswith("tests/verification")]
    assert got == expected
