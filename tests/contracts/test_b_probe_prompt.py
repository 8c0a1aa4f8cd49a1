"""Stage III's opening message as the published harness renders it (issue 11 point 5a/b/d):
the prompt beside probe.toml, every placeholder filled, scope/focus/budget/rerun rules
appended, and ``[metadata].candidate_timeout_sec`` bounding a candidate run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from srb_tui.schema import Adversary, Scope, load_task
from srb_tui.service.grading.stages.probe_prompt import (
    PromptMissing,
    opening,
    probe_prompt_path,
    read_probe_prompt,
)
from srb_tui.service.grading.stages.stage_layout import ORIGINAL_DIR, SUBMISSION_DIR
from srb_tui.service.grading.stages.verification_setup import candidate_timeout, probe_setup

from ..conftest import DEMO_TASK

TEMPLATE = (
    "Task {{task}}. Focus: {{focus}}. A at {{original}}, B at {{submission}}.\n"
    "Roots: {{roots}}. Commands: {{commands}}. Unknown: {{nonsense}}.\n"
)


def _task():
    load = load_task(DEMO_TASK)
    assert load.task is not None and load.task.probe is not None
    return load.task


def test_every_placeholder_is_filled_and_the_rules_follow() -> None:
    task = _task()
    assert task.probe is not None
    probe = dataclasses.replace(
        task.probe,
        scope=Scope(allow=("stdout bytes",), deny=("stderr wording",), reruns=3,
                    deny_commands=("curl",)),
    )  # fmt: skip
    adversary = Adversary(id="a1", model="m", driver="scripted", focus="quoting rules")
    text = opening(
        TEMPLATE, task=task, probe=probe, adversary=adversary, budget_sec=900,
        commands=("node", "python3"),
    )  # fmt: skip
    first = text.splitlines()[0]
    assert first == (
        f"Task {task.id}. Focus: quoting rules. A at {ORIGINAL_DIR}, B at {SUBMISSION_DIR}."
    )
    assert f"Roots: original = {ORIGINAL_DIR}, submission = {SUBMISSION_DIR}." in text
    assert "Commands: node, python3." in text
    assert "{{nonsense}}" in text, "an unknown placeholder stays visible"
    rules = text.split("SCOPE", 1)[1]
    assert "  - stdout bytes" in rules and "  - stderr wording" in rules
    assert rules.index("IN SCOPE") < rules.index("OUT OF SCOPE") < rules.index("FOCUS")
    assert "curl" in rules and "900 seconds" in rules and "3 times" in rules


def test_the_prompt_is_read_beside_the_probe(tmp_path: Path) -> None:
    task = dataclasses.replace(_task(), dir=tmp_path)
    (tmp_path / "tests" / "verification").mkdir(parents=True)
    with pytest.raises(PromptMissing, match=r"tests/verification/prompt\.txt"):
        read_probe_prompt(task, "verification", "prompt.txt")
    beside = tmp_path / "tests" / "verification" / "prompt.txt"
    beside.write_text("beside the probe\n")
    (tmp_path / "tests" / "prompt.txt").write_text("tests-relative\n")
    assert probe_prompt_path(task, "verification", "prompt.txt") == beside
    assert read_probe_prompt(task, "verification", "prompt.txt") == "beside the probe\n"


def test_candidate_timeout_sec_bounds_a_candidate_run() -> None:
    meta = {"candidate_timeout_sec": 1200.0, "run_timeout_sec": 300.0}
    assert candidate_timeout(meta, {"timeout_sec": 50}) == 1200.0
    assert candidate_timeout({"run_timeout_sec": 20}, None) == 20.0
    assert candidate_timeout({}, None) == 300.0
    task = _task()
    assert task.probe is not None and task.evaluation is not None
    spec = task.evaluation.verification
    assert spec is not None
    probe = dataclasses.replace(
        task.probe, metadata={**task.probe.metadata, "candidate_timeout_sec": 1200.0}
    )
    setup = probe_setup(dataclasses.replace(task, probe=probe), spec)
    assert setup.candidates.timeout_sec == 1200.0
    assert setup.run_timeout_sec == float(task.probe.metadata["run_timeout_sec"])  # type: ignore[arg-type]


def test_every_model_adversary_is_told_where_expectations_belong() -> None:
    """issue 25: the system prompt every model adversary gets (anthropic, openai, scripted;
    `_model_round` passes no other) says expectations live in the candidate and
    comparisons happen outside the trees."""
    from srb_tui.service.grading.stages.verification import ADVERSARY_EXPECTATIONS, ADVERSARY_SYSTEM

    assert ADVERSARY_SYSTEM.endswith(ADVERSARY_EXPECTATIONS)
    assert "Expectations belong in the candidate" in ADVERSARY_SYSTEM
    assert "outside the tree under test" in ADVERSARY_SYSTEM
