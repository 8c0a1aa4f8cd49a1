# ruff: noqa: E501  (the table holds exact, long problem lines)
"""The broken corpus: each case under broken/ reports exactly the expected problems.

Every case is the minimal valid task (valid/minimal) with one thing broken
(``several-problems`` breaks many at once); ``corpus.py`` builds them.  The table
holds the exact ``str(Problem)`` lines, in the order the loader reports them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.schema import load_task
from tests.schema.corpus import BROKEN, CASES, case_files

EXPECTED: dict[str, list[str]] = {
    "absent-files": [
        "instruction.md: file is absent (what the agent is told)",
        "tests/behavioural/modules/build/run.sh: file is absent (module `build` of tests/behavioural/suite.toml declares no command, so it needs run.sh or run.py)",
        "tests/verification/run-candidate.sh: file is absent (named by candidate_command of tests/verification/probe.toml)",
    ],
    "adversary-count": [
        "tests/verification/probe.toml:13 [adversary]: 2 [[adversary]] rounds, but tests/evaluation.toml scoring.verification_models is 3",
    ],
    "adversary-id-not-token": [
        "tests/verification/probe.toml:22 [adversary[1].id]: adversary id `a02 build!` is not a token (letters, digits, `.`, `_`, `-`; at most 64; starting with a letter or digit)",
    ],
    "agent-extra-key": [
        "task.toml:27 [agent.model]: unknown key `model`",
    ],
    "agent-timeout-typo": [
        "task.toml:22 [agent.timeout_sec]: required key is missing",
        "task.toml:24 [agent.timeout]: unknown key `timeout`; did you mean `timeout_sec`?",
    ],
    "agent-timeout-zero": [
        "task.toml:24 [agent.timeout_sec]: must be greater than 0 (found 0)",
    ],
    "boolean-as-number": [
        "tests/evaluation.toml:7 [scoring.max_score]: expected a number, found the boolean true (a boolean is not a number)",
    ],
    "duplicate-gate-id": [
        "tests/evaluation.toml:31 [stages.audit.gate[1].id]: duplicate gate id `make_retired`",
    ],
    "duplicate-module-id": [
        "tests/behavioural/suite.toml:16 [module[1].id]: duplicate module id `build`",
    ],
    "exclude-drops-state-a": [
        "task.toml:6 [artifacts[0].exclude[0]]: exclude `build*` drops 1 file State A ships (e.g. `repo/build-aux/install-sh`); the grader would never see them",
    ],
    "fault-exit-codes": [
        "tests/verification/probe.toml:12 [scope.fault_exit_codes[1]]: exit code 0 is outside 1..255 (0 is a pass and cannot be a fault)",
        "tests/verification/probe.toml:12 [scope.fault_exit_codes[2]]: exit code 64 is listed twice",
        'tests/verification/probe.toml:12 [scope.fault_exit_codes[3]]: expected an integer, found the string "70"',
    ],
    "gate-outside-audit": [
        "tests/evaluation.toml:43 [stages.behavioural.gate]: gates belong to [stages.audit]",
    ],
    "invalid-toml": [
        "task.toml:30: invalid TOML: Invalid value (column 8)",
    ],
    "missing-required": [
        "tests/verification/probe.toml [candidate_command]: required key is missing",
    ],
    "missing-stage": [
        "tests/evaluation.toml:13 [stages.behavioural]: required stage [stages.behavioural] is missing",
    ],
    "negative-weight": [
        "tests/behavioural/suite.toml:18 [module[1].weight]: must be at least 0 (found -1)",
    ],
    "no-artifacts": [
        "task.toml [artifacts]: at least one [[artifacts]] table is required (what to collect from the agent container)",
    ],
    "no-required-gate": [
        "tests/evaluation.toml:24 [stages.audit.gate]: no required gate (at least one [[stages.audit.gate]] with required = true is needed)",
    ],
    "path-escapes": [
        "tests/evaluation.toml:16 [stages.audit.prompt]: `../prompt.txt` must be a relative path inside tests/",
    ],
    "quoted-boolean": [
        'tests/evaluation.toml:28 [stages.audit.gate[0].required]: expected a boolean, found the string "true" (write true without quotes)',
    ],
    "quoted-number": [
        'tests/verification/probe.toml:9 [scope.reruns]: expected an integer, found the string "3" (write 3 without quotes)',
    ],
    "reruns-zero": [
        "tests/verification/probe.toml:9 [scope.reruns]: must be at least 1 (found 0)",
    ],
    "scope-key-typo": [
        "tests/verification/probe.toml:9 [scope.rerun]: unknown key `rerun`; did you mean `reruns`?",
    ],
    "scoring-behavioural-zero": [
        "tests/evaluation.toml:8 [scoring.behavioural_points]: must be greater than 0 (found 0)",
    ],
    "scoring-models-fraction": [
        "tests/evaluation.toml:10 [scoring.verification_models]: must be a whole number (found 2.5)",
    ],
    "scoring-product": [
        "tests/evaluation.toml:9 [scoring.verification_points]: verification_points (60) must equal points_per_survived_model × verification_models (25 × 2 = 50)",
    ],
    "scoring-sum": [
        "tests/evaluation.toml:7 [scoring.max_score]: max_score (90) must equal behavioural_points + verification_points (40 + 60 = 100)",
    ],
    "several-problems": [
        'task.toml:24 [agent.timeout_sec]: expected a number, found the string "3600" (write 3600 without quotes)',
        "task.toml:26 [agent.usr]: unknown key `usr`; did you mean `user`?",
        "tests/evaluation.toml:9 [scoring.verification_points]: verification_points (60) must equal points_per_survived_model × verification_models (20 × 2 = 40)",
        "tests/evaluation.toml:22 [stages.audit.enabeld]: unknown stage key `enabeld`; did you mean `enabled`?",
        "tests/behavioural/suite.toml:16 [module[1].id]: duplicate module id `build`",
        "tests/behavioural/suite.toml:19 [module[1].weight]: expected a number, found the boolean false (a boolean is not a number)",
        'tests/verification/probe.toml:10 [scope.require_deterministic]: expected a boolean, found the string "yes"',
        "tests/verification/probe.toml:17 [adversary[0].budget_sec]: must be greater than 0 (found -5)",
        "tests/audit/scan.toml:1 [schema]: expected `swerefactor.scan-suite/1`, found `swerefactor.scan/1`",
    ],
    "sha-mismatch": [
        "environment/original.sha256:1: environment/original.tar.gz has sha256 2e7cad19100851de560e0bae804aa79932fe60c110a2d94433e9298d6caeec65, not 0000000000000000000000000000000000000000000000000000000000000000",
    ],
    "srb-unknown-key": [
        "task.toml:34 [srb.state_b]: unknown [srb] key `state_b`; did you mean `state_a`?",
    ],
    "stage-key-typo": [
        "tests/evaluation.toml:18 [stages.audit.timout_sec]: unknown stage key `timout_sec`; did you mean `timeout_sec`?",
    ],
    "stage-layout": [
        "tests/behavioural/fixtures: unexpected folder: a stage folder may hold only lib/, modules/ and data/",
    ],
    "task-mismatch": [
        "tests/evaluation.toml:2 [task]: task `some-other-task` does not match the task directory `task-mismatch`",
    ],
    "top-key-typo": [
        "tests/evaluation.toml:3 [titel]: unknown key `titel`; did you mean `title`?",
    ],
    "unknown-runner": [
        "tests/evaluation.toml:37 [stages.behavioural.runner]: unknown runner `pytest`; srb runs audit, behavioural and verification",
    ],
    "unknown-stage": [
        "tests/evaluation.toml:50 [stages.review]: unknown stage `review`; stages are audit, behavioural and verification",
    ],
    "unknown-top-key": [
        "tests/evaluation.toml:5 [colour]: unknown key `colour`",
    ],
    "verifier-budget": [
        "task.toml:34 [verifier.timeout_sec]: verifier timeout_sec (3000) is less than the sum of the enabled stages' timeout_sec (600 + 1200 + 2000 = 3800)",
    ],
    "wrong-schema": [
        "tests/behavioural/suite.toml:1 [schema]: expected `swerefactor.behavioural-suite/1`, found `swerefactor.behavioural-suite/2`",
    ],
    "wrong-type": [
        'tests/behavioural/suite.toml:11 [module[0].command]: expected an array of strings, found the string "bash run.sh"',
    ],
}

#: Cases whose problems are all of kind "absent" (the task still loads ok).
ONLY_ABSENT = {"absent-files"}


def test_table_and_corpus_agree() -> None:
    on_disk = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())
    assert on_disk == sorted(EXPECTED)
    assert sorted(c.name for c in CASES) == sorted(EXPECTED)
    assert len(on_disk) >= 24


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_broken_case(case: str) -> None:
    load = load_task(BROKEN / case)
    assert [str(p) for p in load.problems] == EXPECTED[case]
    if case in ONLY_ABSENT:
        assert load.ok
        assert {p.kind for p in load.problems} == {"absent"}
    else:
        assert not load.ok
        assert load.errors


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_corpus_files_match_the_builder(case: str) -> None:
    """The committed corpus is what corpus.py builds (so the table documents real edits)."""
    spec = next(c for c in CASES if c.name == case)
    expected = case_files(spec)
    root = BROKEN / case
    found = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert found == set(expected)
    for name, content in expected.items():
        data = (root / name).read_bytes()
        assert data == (content if isinstance(content, bytes) else content.encode()), name


def test_several_problems_span_every_manifest() -> None:
    load = load_task(BROKEN / "several-problems")
    files = {p.file for p in load.problems}
    assert files == {
        "task.toml",
        "tests/evaluation.toml",
        "tests/behavioural/suite.toml",
        "tests/verification/probe.toml",
        "tests/audit/scan.toml",
    }
    assert all(p.line is not None for p in load.problems)


def test_schema_only_skips_disk_checks() -> None:
    assert load_task(BROKEN / "absent-files", schema_only=True).problems == ()
    assert load_task(BROKEN / "sha-mismatch", schema_only=True).problems == ()
    assert load_task(BROKEN / "exclude-drops-state-a", schema_only=True).problems == ()


def test_an_unreadable_case_still_names_its_task(tmp_path: Path) -> None:
    load = load_task(BROKEN / "invalid-toml")
    assert load.task is None
    assert load.task_id == "invalid-toml"
