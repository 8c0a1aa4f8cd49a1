"""The offline reviewer ``srb tasks new`` writes, driven on the host through srb's own
reading tools (``ReviewRoots``, what the audit container runs) over real trees: its notion
of each language is the task's ``tests/audit/data/languages.toml``, not its code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.config import Settings
from srb_tui.grader.audit.files import ReviewRoots, ToolError

from .helpers import roman_argv, run_new
from .roman import NODE_ROMAN, write_port

GATES = ["no-source-files", "no-source-runtime", "target-present", "entry-is-target",
         "no-embedded-original"]


@pytest.fixture
def task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    settings = Settings(task_roots=(tmp_path / "tasks",), state_dir=tmp_path / "state")
    settings.task_roots[0].mkdir()
    code = run_new(settings, *roman_argv(tmp_path, settings.task_roots[0]), json_mode=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == codes.OK, doc
    return Path(doc["path"])


def review(task: Path, submission: Path) -> dict[str, dict[str, Any]]:
    """One review of ``submission`` against the task's State A; verdicts by gate."""
    roots = ReviewRoots(task / "submissions" / "untouched", submission)
    proc = subprocess.Popen(
        [sys.executable, str(task / "tests/audit/lib/scripted_reviewer.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=task / "tests")
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    send({"type": "start", "gates": [{"id": g} for g in GATES]})
    try:
        while True:
            message = json.loads(proc.stdout.readline())
            if "submit_review" in message:
                send({"type": "review_accepted"})
                answers = message["submit_review"]["gates"]
                return {a["id"]: a for a in answers}
            try:
                result = getattr(roots, message["tool"])(**message["args"])
                send({"type": "tool_result", "ok": True, "result": result})
            except ToolError as exc:
                send({"type": "tool_result", "ok": False, "error": str(exc)})
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def verdicts(answers: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {gate: answers[gate]["verdict"] for gate in GATES}


def assert_cited(root: Path, answer: dict[str, Any]) -> None:
    """A fail cites a real line of a real file with a quote found on it."""
    assert answer["evidence"], answer
    for cite in answer["evidence"]:
        where, _, rel = cite["path"].partition(":")
        assert where == "submission"
        lines = (root / rel).read_text(encoding="utf-8").splitlines()
        assert cite["quote"] in lines[cite["line"] - 1], cite


def test_the_honest_port_passes_every_gate(task: Path, tmp_path: Path) -> None:
    port = write_port(tmp_path / "port")
    assert verdicts(review(task, port)) == dict.fromkeys(GATES, "pass")


def test_state_a_handed_back_fails_with_cited_evidence(task: Path) -> None:
    untouched = task / "submissions" / "untouched"
    answers = review(task, untouched)
    assert verdicts(answers) == {
        "no-source-files": "fail", "no-source-runtime": "fail", "target-present": "fail",
        "entry-is-target": "fail", "no-embedded-original": "pass"}
    for gate in ("no-source-files", "no-source-runtime", "entry-is-target"):
        assert_cited(untouched, answers[gate])
    assert answers["no-source-files"]["evidence"][0]["path"] == "submission:bin/roman"


def test_a_node_wrapper_around_python_fails_the_runtime_gate(task: Path, tmp_path: Path) -> None:
    wrapper = tmp_path / "wrapper"
    (wrapper / "bin").mkdir(parents=True)
    entry = wrapper / "bin" / "roman"
    entry.write_text("#!/usr/bin/env node\nconst cp = require('child_process');\n"
                     "cp.spawnSync('python3', ['old/roman'], {stdio: 'inherit'});\n")
    answers = review(task, wrapper)
    assert answers["no-source-runtime"]["verdict"] == "fail"
    assert_cited(wrapper, answers["no-source-runtime"])
    assert answers["entry-is-target"]["verdict"] == "pass"  # the first line alone is node


def test_what_counts_as_the_target_comes_from_the_task(task: Path, tmp_path: Path) -> None:
    port = tmp_path / "port"
    (port / "bin").mkdir(parents=True)
    (port / "lib").mkdir()
    (port / "lib" / "roman.mjs").write_text(NODE_ROMAN.split("\n", 1)[1])
    entry = port / "bin" / "roman"
    entry.write_text("#!/usr/bin/env node\nimport('../lib/roman.mjs');\n")
    entry.chmod(0o755)
    assert verdicts(review(task, port))["target-present"] == "pass"  # *.mjs is Node.js
    config = task / "tests/audit/data/languages.toml"
    text = config.read_text()
    assert 'globs = ["*.js", "*.mjs", "*.cjs"]' in text
    config.write_text(text.replace('globs = ["*.js", "*.mjs", "*.cjs"]', 'globs = ["*.js"]'))
    answers = review(task, port)
    assert answers["target-present"]["verdict"] == "fail"
    assert "only 2 non-test lines of Node.js" in answers["target-present"]["reasoning"]
