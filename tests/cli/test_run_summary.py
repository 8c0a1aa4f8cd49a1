"""``srb run``'s closing summary stands on a line of its own when output is piped (the live
display's last log line used to run straight into it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_leave_going import TASK, _base, _env
from tests.conftest import REPO


def test_the_summary_is_its_own_line_when_piped(tmp_path: Path) -> None:
    done = subprocess.run(
        f"{' '.join(_base(tmp_path / 'state'))} run {TASK} --agent replay:reference "
        "--no-grade 2>&1 | cat", shell=True, cwd=REPO, env=_env(), capture_output=True,
        text=True, timeout=600)
    lines = done.stdout.splitlines()
    summary = [line for line in lines if " collecting: score " in line]
    assert len(summary) == 1, done.stdout[-2000:]
    assert summary[0].startswith("r-"), summary
    assert "valid —" in summary[0]
    assert any(line.strip() == "files in the workspace: 10" for line in lines), lines[-5:]
