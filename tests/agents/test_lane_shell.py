"""The lane shell's rule (issue 25 item 3): which commands a Stage III client runs as
itself (one plain call of srb's try_test/report) and which go to the desk to run as the
runner (everything else), and the desk's choice of working folder. Unit level: the
end-to-end check is tests/agents/test_stage3_clients.py with the real clients."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from srb_tui.service.grading.stages.client_lane import FILES


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"lane_{name}", FILES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shell = _load("shell")
desk = _load("desk")


def claude_wrapped(command: str) -> str:
    """The script Claude Code 2.1 hands its shell prefix for one Bash tool command."""
    quoted = "'" + command.replace("'", "'\"'\"'") + "'"
    return ("source /srb/lane/home/agent/claude/shell-snapshots/s.sh 2>/dev/null || true && "
            "{ shopt -u extglob || setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null "
            "2>&1 || true && { \\builtin unalias -- 'unsetenv'; } >/dev/null 2>&1 || true && "
            f"eval {quoted} < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd")


CASES = [
    ("try_test caret.sh", True),
    ("report --claim 'cells lose their caret (^A) notation' caret.sh", True),
    ('report --claim "a plain claim" a.sh b.sh', True),
    ("try_test candidates/", True),
    ("python3 -m csvtab < in.csv", False),
    ("try_test a.sh; cat /etc/passwd", False),
    ("try_test a.sh && ./bin/csvtab", False),
    ("try_test $(./bin/csvtab)", False),
    ('report --claim "$(cat secret)" a.sh', False),
    ("try_test `id`", False),
    ("FOO=1 try_test a.sh", False),
    ("bash -c 'report --claim forged a.sh'", False),
    ("cd /srb/original && try_test a.sh", False),
    ("try_test a.sh > out.txt", False),
    ("try_test 'unclosed", False),
    ("", False),
]


@pytest.mark.parametrize(("command", "own"), CASES)
def test_only_a_plain_call_of_srbs_commands_runs_as_the_client(command: str, own: bool) -> None:
    assert shell._own_call(claude_wrapped(command)) is own  # Claude Code's prefix
    assert shell._own_call(command) is own  # Codex's `bash -lc COMMAND`


def test_the_shell_reads_both_ways_of_being_called() -> None:
    assert shell._parse(["/srb/desk/bin/srb-run", "echo hi"]) == ("echo hi", False)
    assert shell._parse(["/srb/desk/shim/bash", "-lc", "echo hi"]) == ("echo hi", True)
    assert shell._parse(["bash", "-c", "echo hi"]) == ("echo hi", False)
    assert shell._parse(["bash", "-l", "-c", "ls"]) == ("ls", True)
    assert shell._parse(["bash", "script.sh", "x"]) == (None, False)  # sent to the desk too


def test_the_desk_never_enters_a_folder_outside_the_allowed_ones(tmp_path: Path) -> None:
    scratch, trees, home = tmp_path / "scratch", tmp_path / "trees", tmp_path / "home"
    for folder in (scratch, trees / "a", home / "agent"):
        folder.mkdir(parents=True)
    (scratch / "out").symlink_to(home / "agent")
    desk.SETTINGS["dirs"] = [str(scratch), str(trees)]
    assert desk._working_folder(str(trees / "a")) == str(trees / "a")
    assert desk._working_folder(str(home / "agent")) == str(scratch)
    assert desk._working_folder(str(scratch / "out")) == str(scratch)  # a link out of it
    assert desk._working_folder(str(tmp_path / "scratch-not")) == str(scratch)
    assert desk._working_folder(None) == str(scratch)
