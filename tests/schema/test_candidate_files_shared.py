"""`srb tasks validate` names a candidate command that writes where the program under test
can read it (issue 21: Stage III keeps the candidate apart from its programs, not what it
puts in shared folders)."""

from __future__ import annotations

import shutil
from pathlib import Path

from srb_tui.schema.published import validate_task
from tests.conftest import DEMO_TASK

RUNNER = "tests/verification/run-candidate.sh"


def _copy(tmp_path: Path, extra: str) -> Path:
    task = tmp_path / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task, ignore=shutil.ignore_patterns("submissions"))
    script = task / RUNNER
    text = script.read_text(encoding="utf-8")
    script.write_text(text.replace('exec bash "$CANDIDATE"', f'{extra}\nexec bash "$CANDIDATE"'),
                      encoding="utf-8")
    return task


def _shared(task: Path) -> list[str]:
    load = validate_task(task)
    return [p.message for p in load.problems if p.key == "candidate_command"]


def test_the_demo_runner_shares_nothing(tmp_path: Path) -> None:
    assert _shared(_copy(tmp_path, "true")) == []


def test_a_runner_writing_into_tmp_or_the_work_folder_is_named(tmp_path: Path) -> None:
    for line in ('echo "$ROLE" > /tmp/role', 'printf x >> "$SRB_WORK/expected"'):
        found = _shared(_copy(tmp_path / str(abs(hash(line))), line))
        assert len(found) == 1 and "program under test can read" in found[0], (line, found)


def test_a_comment_is_not_a_write(tmp_path: Path) -> None:
    assert _shared(_copy(tmp_path, "# echo x > /tmp/role")) == []
