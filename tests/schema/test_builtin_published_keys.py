"""The built-in tasks stay readable by the published harness, whose readers refuse a key
they do not read (a gate reads id, title, question, required and metadata; srb's own
additions ride in ``metadata``, which it carries through untouched)."""

from __future__ import annotations

import tomllib

import pytest

from tests.conftest import BUILTIN_TASKS

PUBLISHED_GATE_KEYS = {"id", "title", "question", "required", "metadata"}
PUBLISHED_STAGE_KEYS = {"enabled", "runner", "result", "timeout_sec", "metadata", "gate"}


@pytest.mark.parametrize("task", sorted(p.name for p in BUILTIN_TASKS.iterdir()
                                        if (p / "tests" / "evaluation.toml").is_file()))
def test_gates_use_only_the_published_keys(task: str) -> None:
    doc = tomllib.loads((BUILTIN_TASKS / task / "tests" / "evaluation.toml").read_text())
    audit = doc["stages"]["audit"]
    assert audit.get("gate"), "the audit stage declares gates"
    for gate in audit["gate"]:
        assert set(gate) <= PUBLISHED_GATE_KEYS, (gate["id"], set(gate) - PUBLISHED_GATE_KEYS)
