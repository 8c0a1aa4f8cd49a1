"""``fuzz_build`` on the host (sandbox off): each tree content is built once, a failure is
kept as one, what a build leaves comes back as plain files only, and the fuzz candidate
builds its tree the same way before it runs the entry (issue 23 item 4)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from srb_tui.grader.fuzzing.argv import candidate_script
from srb_tui.grader.fuzzing.build import BuildSpec, build_tree
from srb_tui.grader.fuzzing.observed import Observation

BUILD = """set -eu
cd "$1"
echo run >> "$COUNT"
mkdir -p stage/bin
printf '#!/bin/sh\\necho built from %s\\n' "$(cat name)" > stage/bin/tool
chmod +x stage/bin/tool
"""


def _tree(root: Path, name: str) -> Path:
    tree = root / name
    tree.mkdir()
    (tree / "name").write_text(name)
    return tree


def _spec(tmp_path: Path, body: str = BUILD) -> BuildSpec:
    script = tmp_path / "fuzz-build.sh"
    script.write_text(body)
    return BuildSpec(script, timeout_sec=30)


def test_one_build_per_tree_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = tmp_path / "count"
    monkeypatch.setenv("COUNT", str(count))
    spec, cache, rooms = _spec(tmp_path), tmp_path / "cache", tmp_path / "rooms"
    first = build_tree(spec, _tree(tmp_path, "a"), 0, cache, rooms)
    twin = tmp_path / "twin"
    shutil.copytree(tmp_path / "a", twin)
    again = build_tree(spec, twin, 0, cache, rooms)
    other = build_tree(spec, _tree(tmp_path, "b"), 0, cache, rooms)
    assert first.error is None and not first.cached and first.tree is not None
    assert again.cached and again.tree == first.tree
    assert other.tree is not None and not other.cached
    assert count.read_text().count("run") == 2
    out = subprocess.run([str(first.tree / "stage/bin/tool")], capture_output=True, text=True)
    assert out.stdout == "built from a\n"
    assert not (tmp_path / "a" / "stage").exists()  # the source tree is never built in place
    assert list(rooms.iterdir()) == []


def test_a_failed_build_is_kept_as_a_failure(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "echo 'cc: not found' >&2\nexit 3\n")
    tree = _tree(tmp_path, "a")
    first = build_tree(spec, tree, 0, tmp_path / "cache", tmp_path / "rooms")
    second = build_tree(spec, tree, 0, tmp_path / "cache", tmp_path / "rooms")
    assert first.tree is None and "exited 3" in (first.error or "")
    assert "cc: not found" in first.log_tail
    assert second.cached and second.error == first.error


def test_a_fifo_left_by_the_build_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path, 'mkfifo "$1/pipe"\n')
    got = build_tree(spec, _tree(tmp_path, "a"), 0, tmp_path / "cache", tmp_path / "rooms")
    assert got.tree is None and "not regular files" in (got.error or "")


def test_the_candidate_builds_its_tree_first(tmp_path: Path) -> None:
    spec = _spec(tmp_path, BUILD.replace('echo run >> "$COUNT"\n', ""))
    script = candidate_script(
        adversary="f01", seed=1, entry="stage/bin/tool", argv=[], data=b"", original_len=0,
        expected=Observation(0, b"built from a\n", b"", False, 0.0), build=str(spec.script),
    )
    (tmp_path / "candidate.sh").write_text(script)
    verdicts = {}
    for name in ("a", "b"):
        tree = _tree(tmp_path, name)
        env = {**os.environ, "SRB_TARGET": str(tree), "TMPDIR": str(tmp_path)}
        verdicts[name] = subprocess.run(["bash", str(tmp_path / "candidate.sh")], env=env,
                                        cwd=tree, capture_output=True, text=True)
    assert verdicts["a"].returncode == 0, verdicts["a"].stderr
    assert verdicts["b"].returncode == 1 and "stdout differs" in verdicts["b"].stderr
    spec.script.write_text("exit 9\n")
    tree = _tree(tmp_path, "c")
    env = {**os.environ, "SRB_TARGET": str(tree), "TMPDIR": str(tmp_path)}
    failed = subprocess.run(["bash", str(tmp_path / "candidate.sh")], env=env, cwd=tree,
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "fuzz_build exits 9" in failed.stderr
