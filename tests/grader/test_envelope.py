"""Fingerprint, envelope shape, atomic writes, and the grader running as a standalone copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from srb_tui.grader import envelope as envelope_mod
from srb_tui.grader.envelope import StageEnvelope, atomic_write_json, utc_iso
from srb_tui.grader.fingerprint import compute_fingerprint, fingerprint, source_files

from .helpers import GRADER_DIR


def test_fingerprint_is_12_hex_and_stable() -> None:
    value = fingerprint()
    assert len(value) == 12 and all(c in "0123456789abcdef" for c in value)
    assert fingerprint() == value == compute_fingerprint(GRADER_DIR)


def test_fingerprint_changes_with_source_and_ignores_caches(tmp_path: Path) -> None:
    copy = tmp_path / "g"
    shutil.copytree(GRADER_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = compute_fingerprint(copy)
    assert base == fingerprint()
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.py").write_text("junk")
    (copy / "notes.txt").write_text("not source")
    assert compute_fingerprint(copy) == base
    (copy / "suite" / "run.py").write_text((copy / "suite" / "run.py").read_text() + "\n# edit\n")
    assert compute_fingerprint(copy) != base


def test_the_source_files_are_what_rglob_found(tmp_path: Path) -> None:
    copy = tmp_path / "g"
    shutil.copytree(GRADER_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.py").write_text("junk")
    (copy / "suite" / "__pycache__").mkdir(exist_ok=True)
    (copy / "suite" / "__pycache__" / "y.py").write_text("junk")
    (copy / "dir.py").mkdir()  # a folder named like a module: not a file
    (copy / "dir.py" / "inner.py").write_text("x = 1\n")
    (copy / ".hidden.py").write_text("y = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked.py").write_text("z = 1\n")
    (outside / "behind.py").write_text("w = 1\n")
    (copy / "linked.py").symlink_to(outside / "linked.py")
    (copy / "linked_dir").symlink_to(outside, target_is_directory=True)
    expected = sorted(((p.relative_to(copy).as_posix(), p) for p in copy.rglob("*.py")
                       if "__pycache__" not in p.parts and p.is_file()),
                      key=lambda item: item[0])
    assert source_files(copy) == expected
    assert ("dir.py/inner.py", copy / "dir.py" / "inner.py") in expected
    assert source_files(GRADER_DIR) == sorted(
        ((p.relative_to(GRADER_DIR).as_posix(), p) for p in GRADER_DIR.rglob("*.py")
         if "__pycache__" not in p.parts and p.is_file()), key=lambda item: item[0])


def test_envelope_shape() -> None:
    env = StageEnvelope(stage="audit", task="t1")
    env.units.append({"id": "g"})
    env.finish("ok")
    data = env.to_dict()
    assert list(data) == [
        "schema",
        "stage",
        "task",
        "status",
        "started_at",
        "duration_sec",
        "harness",
        "units",
        "checks",
        "metadata",
        "notes",
    ]
    assert data["schema"] == "swerefactor.stage-result/1"
    assert data["status"] == "ok" and data["harness"] == {"fingerprint": fingerprint()}
    assert data["started_at"].endswith("Z") and data["duration_sec"] >= 0
    with pytest.raises(ValueError):
        env.finish("done")


def test_utc_iso_format() -> None:
    assert utc_iso(0) == "1970-01-01T00:00:00.000Z"


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "r.json"
    atomic_write_json(target, {"a": 1})
    atomic_write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.json"]


def test_failed_write_keeps_the_previous_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.json"
    atomic_write_json(target, {"ok": True})

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk trouble")

    monkeypatch.setattr(envelope_mod.os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write_json(target, {"ok": False})
    assert json.loads(target.read_text()) == {"ok": True}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_standalone_copy_runs_with_stdlib_only(tmp_path: Path) -> None:
    """srb copies grader/ into an image under another name and runs python3 -m <name>."""
    shutil.copytree(
        GRADER_DIR, tmp_path / "srbgrader", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-m", "srbgrader", "fingerprint"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == fingerprint()
