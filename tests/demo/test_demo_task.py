"""The demo task's files: State A archive, manifests and stage directories."""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

from .suite_runner import SUBMISSIONS, TASK_DIR

GATES = ["no-python-sources", "no-interpreter-dependency", "node-present", "node-is-primary",
         "no-embedded-reference"]


def _toml(rel: str) -> dict[str, Any]:
    with open(TASK_DIR / rel, "rb") as handle:
        return tomllib.load(handle)


def _state_a_files() -> dict[str, Path]:
    root = SUBMISSIONS / "untouched"
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_archive_matches_its_digest_and_the_untouched_tree() -> None:
    archive = TASK_DIR / "environment" / "original.tar.gz"
    data = archive.read_bytes()
    digest, name = (TASK_DIR / "environment" / "original.sha256").read_text().split()
    assert name == "original.tar.gz"
    assert hashlib.sha256(data).hexdigest() == digest
    files = _state_a_files()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        assert names == sorted(names)
        assert all(not n.startswith(("/", "./")) and ".." not in n.split("/") for n in names)
        assert {n.split("/")[0] for n in names} == {"README.md", "bin", "csvtab", "pyproject.toml",
                                                    "tests"}
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members)
        packed = {m.name: m for m in members if m.isfile()}
        assert sorted(packed) == sorted(files)
        for rel, member in packed.items():
            extracted = tar.extractfile(member)
            assert extracted is not None
            assert extracted.read() == files[rel].read_bytes(), rel
            assert bool(member.mode & 0o111) == os.access(files[rel], os.X_OK), rel


def test_make_archive_is_deterministic(tmp_path: Path) -> None:
    outputs = []
    for run in ("one", "two"):
        out = tmp_path / run / "original.tar.gz"
        out.parent.mkdir()
        subprocess.run([sys.executable, str(TASK_DIR / "make_archive.py"), "--out", str(out)],
                       check=True, capture_output=True)
        outputs.append(out.read_bytes())
        assert (out.parent / "original.sha256").read_text().split()[0] == \
            hashlib.sha256(outputs[-1]).hexdigest()
    assert outputs[0] == outputs[1]
    assert outputs[0] == (TASK_DIR / "environment" / "original.tar.gz").read_bytes()


def test_state_a_is_a_python_program_of_the_promised_size() -> None:
    files = _state_a_files()
    package = [p for rel, p in files.items() if rel.startswith("csvtab/")]
    lines = sum(len(p.read_text().splitlines()) for p in package)
    assert 400 <= lines <= 750
    assert files["bin/csvtab"].read_text().startswith("#!/usr/bin/env python3\n")


def test_task_toml_agent_artifacts_and_budget() -> None:
    task = _toml("task.toml")
    assert task["agent"] == {"harness": "srb-builtin", "timeout_sec": 1800,
                             "network_mode": "no-network", "user": "agent"}
    assert task["metadata"]["category"] == "language-rewrite"
    (artifact,) = task["artifacts"]
    assert artifact["source"] == "/workspace/repo"
    for rel in _state_a_files():
        for segment in rel.split("/"):
            hits = [pat for pat in artifact["exclude"] if fnmatch.fnmatchcase(segment, pat)]
            assert not hits, f"exclude {hits} would drop State A's {rel}"
    stages = _toml("tests/evaluation.toml")["stages"]
    total = sum(stage["timeout_sec"] for stage in stages.values())
    assert task["verifier"]["timeout_sec"] >= total


def test_evaluation_declares_the_five_gates_and_the_stages() -> None:
    ev = _toml("tests/evaluation.toml")
    assert ev["schema"] == "swerefactor.evaluation/1"
    assert ev["scoring"] == {"max_score": 100.0, "behavioural_points": 40.0,
                             "verification_points": 60.0, "verification_models": 6,
                             "points_per_survived_model": 10.0}
    audit = ev["stages"]["audit"]
    assert [g["id"] for g in audit["gate"]] == GATES
    assert all(g["required"] is True for g in audit["gate"])
    assert (audit["runner"], audit["driver"], audit["model"], audit["samples"]) == \
        ("audit", "scripted", "scripted", 3)
    assert (TASK_DIR / "tests" / audit["prompt"]).is_file()
    assert (TASK_DIR / "tests" / ev["stages"]["behavioural"]["suite"]).is_file()
    assert (TASK_DIR / "tests" / ev["stages"]["verification"]["probe"]).is_file()


def test_probe_has_six_distinct_adversaries_and_seeds() -> None:
    probe = _toml("tests/verification/probe.toml")
    assert probe["schema"] == "swerefactor.verification-probe/1"
    assert probe["candidate_command"] == ["bash", "run-candidate.sh"]
    scope = probe["scope"]
    assert scope["reruns"] == 3 and scope["require_deterministic"] is True
    assert scope["network_allowed"] is False
    adversaries = probe["adversary"]
    assert len(adversaries) == 6 and len({a["id"] for a in adversaries}) == 6
    assert sum(a["driver"] == "fuzz" and a["model"] == "fuzz" for a in adversaries) >= 4
    assert all(a["metadata"]["focus"] and a["budget_sec"] == 120 for a in adversaries)
    seeds = TASK_DIR / "tests" / "verification" / probe["metadata"]["fuzz_seeds"]
    assert len(list(seeds.glob("*.csv"))) >= 5
    argv = json.loads((seeds / "argv.json").read_text())["argv"]
    assert [] in argv and all(isinstance(a, list) for a in argv)


def test_stage_directories_and_dockerfiles() -> None:
    tests = TASK_DIR / "tests"
    for stage in ("audit", "behavioural", "verification"):
        subdirs = {p.name for p in (tests / stage).iterdir() if p.is_dir()}
        assert subdirs <= {"lib", "modules", "data"}, stage
    dockerfiles = [tests / s / "Dockerfile" for s in ("audit", "behavioural", "verification")]
    for path in [*dockerfiles, TASK_DIR / "environment" / "Dockerfile"]:
        lines = [ln.strip() for ln in path.read_text().splitlines()
                 if ln.strip() and not ln.startswith("#")]
        assert lines[:2] == ["ARG BASE_IMAGE=srb/base:bookworm", "FROM ${BASE_IMAGE}"], path
        assert not any(ln.upper().startswith(("COPY", "ADD")) for ln in lines), path


def test_case_lists_and_expectations_line_up() -> None:
    data = TASK_DIR / "tests" / "behavioural" / "data"
    for module in ("formats", "unicode", "inputs", "options"):
        cases = json.loads((data / "cases" / f"{module}.json").read_text())["cases"]
        expected = json.loads((data / "expected" / f"{module}.json").read_text())["cases"]
        assert [c["id"] for c in cases] == sorted(expected, key=[c["id"] for c in cases].index)
        assert set(expected) == {c["id"] for c in cases}
        assert 20 <= len(cases) <= 60
        assert any(v["exit"] != 0 for v in expected.values()) or module in ("formats", "unicode")


def test_srb_schema_loader_accepts_the_task() -> None:
    from srb_tui.schema.loader import load_task

    result = load_task(TASK_DIR)
    assert result.ok, [str(p) for p in result.problems]
    assert not result.warnings
