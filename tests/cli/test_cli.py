"""The headless CLI, run as a real subprocess (``python -m srb_tui``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DEMO02_TASK, DEMO03_TASK, DEMO_TASK, REPO

BROKEN = REPO / "tests" / "schema" / "broken"


def srb(*args: str, state: Path, env: dict[str, str] | None = None,
        cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "srb_tui", "--state", str(state), *args],
        capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120,
    )


def test_version_and_help(tmp_path: Path) -> None:
    out = srb("--version", state=tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("srb ")
    out = srb("--help", state=tmp_path)
    assert "tasks" in out.stdout and "runs" in out.stdout and "doctor" in out.stdout


def test_tasks_list_json_is_one_document(tmp_path: Path) -> None:
    out = srb("--tasks", str(REPO / "tasks"), "tasks", "list", "--json", state=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    ids = [t["id"] for t in doc["tasks"]]
    assert DEMO_TASK.name in ids
    demo = doc["tasks"][ids.index(DEMO_TASK.name)]
    assert demo["status"] == "ok"
    assert (demo["gates"], demo["adversaries"]) == (5, 6)
    assert demo["stacks"] == "python → node"
    demo02 = doc["tasks"][ids.index(DEMO02_TASK.name)]
    assert demo02["status"] == "ok", demo02
    assert (demo02["gates"], demo02["adversaries"]) == (4, 6)


def test_srb_tasks_env_is_colon_separated(tmp_path: Path) -> None:
    roots = f"{REPO / 'tasks'}:{REPO / 'tests' / 'schema' / 'valid'}"
    out = srb("tasks", "list", "--json", state=tmp_path, env={"SRB_TASKS": roots})
    assert out.returncode == 0, out.stderr
    ids = sorted(t["id"] for t in json.loads(out.stdout)["tasks"])
    assert ids == sorted([DEMO_TASK.name, DEMO02_TASK.name, DEMO03_TASK.name, "minimal"])


def test_official_manifests_validate_schema_only(tmp_path: Path, official_tasks: Path) -> None:
    paths = sorted(str(p) for p in official_tasks.iterdir() if p.is_dir())
    assert len(paths) == 20
    out = srb("tasks", "validate", "--schema-only", *paths, state=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "20 task(s): 0 error(s)" in out.stdout


def test_official_manifests_full_validate_lists_absent_files(tmp_path: Path,
                                                             official_tasks: Path) -> None:
    out = srb("tasks", "validate", "--json", str(official_tasks), state=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # manifests only: a run needs more
    doc = json.loads(out.stdout)
    assert doc["errors"] == 0
    assert doc["absent"] > 20
    assert 0 < doc["missing"] < doc["absent"]
    lang03 = next(t for t in doc["tasks"] if t["id"] == "lang03-sqlparse-python-to-go")
    absent_files = {p["file"] for p in lang03["problems"] if p["kind"] == "absent"}
    assert "instruction.md" in absent_files
    out = srb("tasks", "validate", "--strict", str(official_tasks), state=tmp_path)
    assert out.returncode == 1


def test_broken_corpus_fails_with_messages(tmp_path: Path) -> None:
    out = srb("tasks", "validate", "--schema-only", str(BROKEN), state=tmp_path)
    assert out.returncode == 1
    assert "did you mean" in out.stdout
    assert "error" in out.stdout


def test_missing_path_is_named(tmp_path: Path) -> None:
    out = srb("tasks", "validate", str(tmp_path / "nowhere"), state=tmp_path)
    assert out.returncode == 3
    assert "nowhere" in out.stderr + out.stdout


def test_show_demo_json(tmp_path: Path) -> None:
    out = srb("--tasks", str(REPO / "tasks"), "tasks", "show", DEMO_TASK.name, "--json",
              state=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert "no-python-sources" in doc["gates"]
    assert len(doc["modules"]) >= 3
    assert doc["instruction"]
    out = srb("--tasks", str(REPO / "tasks"), "tasks", "show", "nope", state=tmp_path)
    assert out.returncode == 3
    assert "nope" in out.stderr


def test_prepare_demo_uses_shipped_archive_and_verifies_trees(tmp_path: Path) -> None:
    base = ("--tasks", str(REPO / "tasks"), "tasks", "prepare", DEMO_TASK.name)
    out = srb(*base, "--offline", "--json", "--verify-tree",
              str(DEMO_TASK / "submissions" / "untouched"), state=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["verify_tree"]["identical"] is True
    assert doc["file_count"] > 5
    assert Path(doc["tree"]).is_relative_to(tmp_path)
    out = srb(*base, "--offline", "--json", "--verify-tree",
              str(DEMO_TASK / "submissions" / "reference"), state=tmp_path)
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["from_cache"] is True
    assert doc["verify_tree"]["identical"] is False
    assert doc["verify_tree"]["removed"]


def test_runs_list_and_show_on_empty_store(tmp_path: Path) -> None:
    out = srb("runs", "list", "--json", state=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["runs"] == []
    out = srb("runs", "show", "r-nope", state=tmp_path)
    assert out.returncode == 3
    assert "r-nope" in out.stderr


def test_corrupt_store_gives_message_not_traceback(tmp_path: Path) -> None:
    (tmp_path / "srb.sqlite3").write_bytes(b"garbage" * 1000)
    out = srb("runs", "list", state=tmp_path)
    assert out.returncode == 4  # INFRA: the store cannot be read
    assert "srb.sqlite3" in out.stderr
    assert "Traceback" not in out.stderr


def test_doctor_reports_a_ready_machine(tmp_path: Path) -> None:
    out = srb("--tasks", str(REPO / "tasks"), "doctor", "--json", state=tmp_path)
    doc = json.loads(out.stdout)
    checks = {c["name"]: c for c in doc["checks"]}
    assert checks["docker engine"]["ok"], checks["docker engine"]
    assert checks["base image"]["ok"], checks["base image"]
    assert checks["state directory"]["ok"]
    assert doc["versions"]["textual"] == "8.2.8"
    assert out.returncode == 0


def test_doctor_says_how_to_fix_an_unreachable_engine(tmp_path: Path) -> None:
    out = srb("doctor", state=tmp_path,
              env={"DOCKER_HOST": f"unix://{tmp_path}/no-such.sock"})
    assert out.returncode == 1
    assert "docker engine" in out.stdout
    assert "ensure-docker" in out.stdout
    assert "Traceback" not in out.stderr
