"""The behavioural suite tells the demo submissions apart as the task README says."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .suite_runner import SUBMISSIONS, ModuleRun, run_suite, suite

# Complete trees run every module; the others only the modules their defects reach.
TREES: dict[str, tuple[str, ...]] = {
    "untouched": (), "reference": (), "subtle": (),
    "wrong": ("unicode", "inputs"), "wrapper": ("formats",), "half": ("formats",),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, ModuleRun]]:
    base = tmp_path_factory.mktemp("suite")

    def one(name: str) -> tuple[str, dict[str, ModuleRun]]:
        scratch = base / name
        scratch.mkdir()
        return name, run_suite(SUBMISSIONS / name, scratch, only=TREES[name])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, TREES))


def test_suite_declares_four_modules() -> None:
    modules = suite()["module"]
    assert [m["id"] for m in modules] == ["formats", "unicode", "inputs", "options"]


@pytest.mark.parametrize("name", ["untouched", "reference", "subtle"])
def test_complete_trees_pass_every_check(results: dict[str, dict[str, ModuleRun]],
                                         name: str) -> None:
    for mid, run in results[name].items():
        assert 20 <= len(run.scored()) <= 60, mid
        assert run.rate() == 1.0, f"{name}/{mid} failed: {run.failed_ids()}"
        ledger = [c for c in run.checks if c["id"] == "interpreter-ledger"]
        assert ledger and ledger[0]["verdict"] == "pass"


def test_state_a_is_run_as_the_oracle(results: dict[str, dict[str, ModuleRun]]) -> None:
    assert all("pre-migration" in r.metadata["launcher"] for r in results["untouched"].values())
    assert all(r.metadata["launcher"] == "bin/csvtab" for r in results["reference"].values())


def test_wrong_fails_width_and_parser_cases(results: dict[str, dict[str, ModuleRun]]) -> None:
    runs = results["wrong"]
    assert runs["unicode"].rate() < 1.0
    assert "table-wide" in runs["unicode"].failed_ids()
    assert "unterminated-mid" in runs["inputs"].failed_ids()
    assert "bom" not in runs["inputs"].failed_ids()


@pytest.mark.parametrize("name", ["wrapper", "half"])
def test_trees_needing_python_fail_and_leave_a_ledger(
        results: dict[str, dict[str, ModuleRun]], name: str) -> None:
    runs = results[name]
    assert min(run.rate() for run in runs.values()) < 1.0
    ledgers = [c for run in runs.values() for c in run.checks if c["id"] == "interpreter-ledger"]
    assert any(c["verdict"] == "fail" for c in ledgers)
    if name == "half":
        # JS table output still works; json/markdown went to the missing interpreter.
        assert "table-people" not in runs["formats"].failed_ids()
        assert "json-people" in runs["formats"].failed_ids()


def _run(tree: str, data: bytes, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    entry = SUBMISSIONS / tree / "bin" / "csvtab"
    prefix = [sys.executable] if tree == "untouched" else []
    return subprocess.run([*prefix, str(entry), *argv], input=data, capture_output=True,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin",
                               "PYTHONDONTWRITEBYTECODE": "1"}, check=False)


@pytest.mark.parametrize("argv", [[], ["-f", "markdown"], ["--style", "box"]])
def test_subtle_differs_from_state_a_on_a_control_byte(argv: list[str]) -> None:
    data = b"id,qty\n1,3\x014\n2,\x7f\n"
    state_a = _run("untouched", data, argv)
    subtle = _run("subtle", data, argv)
    reference = _run("reference", data, argv)
    assert state_a.returncode == subtle.returncode == 0
    assert b"^A" in state_a.stdout and b"^?" in state_a.stdout
    assert subtle.stdout != state_a.stdout
    assert reference.stdout == state_a.stdout


def test_no_fixed_case_contains_the_subtle_trigger() -> None:
    trigger = set(range(0x20)) - {0x09, 0x0A, 0x0D} | {0x7F}
    cases_dir = SUBMISSIONS.parent / "tests" / "behavioural" / "data" / "cases"
    for path in sorted((cases_dir / "inputs").iterdir()):
        assert not trigger & set(path.read_bytes()), path.name
    for path in sorted(cases_dir.glob("*.json")):
        assert not trigger & set(path.read_bytes()), path.name


def test_reference_contains_no_python() -> None:
    root = SUBMISSIONS / "reference"
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert path.suffix not in {".py", ".pyc", ".pyi"}, path
        assert b"python" not in path.read_bytes().lower(), path
    head = (root / "bin" / "csvtab").read_bytes().splitlines()[0]
    assert head == b"#!/usr/bin/env node"
    assert Path(root / "bin" / "csvtab").stat().st_mode & 0o111
